//! What this tool did to a worker: `<dataRoot>/events/<sessionId>.jsonl`, one line per spawn,
//! close, resume or restore that reached the worker (started a pi, ran a close job), with when,
//! who asked (the command line, the sidebar, the coordinator's tool) and how it ended; a close
//! says where the worker's handoff went. `log NAME`, `intercom_log` and the sidebar's `l` panel
//! put these among the transcript's entries.
//!
//! Why a record of our own: the roster keeps only the newest close job and handoff, and launch
//! specs only the last start; neither says who asked. Why keyed by session id: a worker's
//! timeline is its session's, and a resumed or restored worker keeps its session. Recording
//! never fails the action it records (a record that cannot be written is skipped); each file
//! rotates at a cap and reading is bounded; a line that is not one of ours is ignored.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::actions::session_log::SessionLog;
use crate::clock::Ms;
use crate::evidence::sessions::timeline::{Actor, EventKind};

/// A session's record rotates at this size (the previous one is kept as `.1`).
const CAP: u64 = 64 * 1024;
/// Longest detail kept.
const DETAIL_BYTES: usize = 1024;

/// One action on a worker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WorkerEvent {
    pub version: u32,
    #[serde(with = "crate::clock::iso_ms")]
    pub at: Ms,
    pub event: EventKind,
    pub by: Actor,
    /// How it ended, in the action's report's word (`registered`, `closed`, `restored`, …).
    pub outcome: String,
    /// What it did, one line (the pane, the handoff's place, why not).
    pub detail: String,
    /// The close job it ran, when it ran one (the roster's `closeJob` says the same).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_id: Option<String>,
}

/// `<dataRoot>/events/<sessionId>.jsonl`.
const LOG: SessionLog = SessionLog {
    folder: "events",
    cap: CAP,
};

/// Append one event (best effort: never fails the action it records).
pub(crate) fn record(data_root: &Path, session_id: &str, ev: &WorkerEvent) {
    let mut ev = ev.clone();
    ev.detail = crate::text::one_line(&ev.detail, DETAIL_BYTES);
    LOG.append(data_root, session_id, &ev);
}

/// A new event now.
pub(crate) fn now(
    at: Ms,
    event: EventKind,
    by: Actor,
    outcome: &str,
    detail: String,
) -> WorkerEvent {
    WorkerEvent {
        version: 1,
        at,
        event,
        by,
        outcome: outcome.to_string(),
        detail,
        job_id: None,
    }
}

/// The events of a session, oldest first.
pub(crate) fn read(data_root: &Path, session_id: &str) -> Vec<WorkerEvent> {
    let mut out: Vec<WorkerEvent> = LOG.read(data_root, session_id);
    out.retain(|e| e.version == 1);
    out.sort_by_key(|e| e.at);
    out
}

/// The `--model` a launch's arguments name, if any.
fn model_of(argv: &[String]) -> Option<&str> {
    let mut it = argv.iter();
    while let Some(a) = it.next() {
        if a == "--model" {
            return it.next().map(String::as_str);
        }
        if let Some(m) = a.strip_prefix("--model=") {
            return Some(m);
        }
    }
    None
}

/// Where a start put the pi, in words: its pane, folder and model.
fn start_detail(pane: Option<&str>, cwd: Option<&str>, argv: &[String]) -> String {
    let mut d = match pane {
        Some(p) => format!("pi in {p}"),
        None => "no pane".to_string(),
    };
    if let Some(c) = cwd {
        d.push_str(&format!(", folder {c}"));
    }
    if let Some(m) = model_of(argv) {
        d.push_str(&format!(", model {m}"));
    }
    d
}

/// A spawn that opened a window (a refusal or a spawn stopped before its window is not an event
/// of the worker: nothing of it runs).
pub(crate) fn spawned(
    data_root: &Path,
    at: Ms,
    by: Actor,
    report: &crate::owned::spawn_report::SpawnReport,
) {
    let (Some(r), Some(pane)) = (&report.receipt, &report.pane) else {
        return;
    };
    let detail = start_detail(Some(pane), Some(&r.cwd), &r.argv);
    let ev = now(at, EventKind::Spawn, by, report.result.as_str(), detail);
    record(data_root, &r.session_id, &ev);
}

/// A resume that launched (or failed launching).
pub(crate) fn resumed(
    data_root: &Path,
    at: Ms,
    by: Actor,
    report: &crate::owned::resume_report::ResumeReport,
) {
    use crate::owned::resume_report::{Launch, ResumeResult};
    let launched = matches!(
        report.result,
        ResumeResult::Resumed | ResumeResult::LaunchedUnconfirmed | ResumeResult::Failed
    );
    let Some(sid) = report.session_id.as_deref().filter(|_| launched) else {
        return;
    };
    let argv = match &report.argv {
        Some(Launch::Argv(a)) => a.clone(),
        _ => Vec::new(),
    };
    let mut detail = start_detail(report.pane.as_deref(), report.cwd.as_deref(), &argv);
    if let Some(f) = &report.session_file {
        detail.push_str(&format!(", on {f}"));
    }
    if let Some(why) = &report.reason {
        detail.push_str(&format!(": {why}"));
    }
    let ev = now(at, EventKind::Resume, by, report.result.as_str(), detail);
    record(data_root, sid, &ev);
}

/// Each agent `restore` started (or whose start failed); those it left alone are not events.
pub(crate) fn restored(
    data_root: &Path,
    at: Ms,
    by: Actor,
    report: &crate::owned::restore_report::RestoreReport,
) {
    use crate::owned::restore_report::RestoreOutcome as O;
    for a in &report.agents {
        if !matches!(a.outcome, O::Restored | O::LaunchedUnconfirmed | O::Failed) {
            continue;
        }
        let argv = a.argv.clone().unwrap_or_default();
        let mut detail = start_detail(a.pane.as_deref(), a.cwd.as_deref(), &argv);
        if let Some(f) = &a.session_file {
            detail.push_str(&format!(", on {f}"));
        }
        if a.cut_off {
            detail.push_str(", cut off mid-turn");
        }
        if let Some(c) = &a.continued {
            detail.push_str(if c.delivered {
                ", sent \"continue\""
            } else {
                ", \"continue\" not delivered"
            });
        }
        if let Some(why) = &a.reason {
            detail.push_str(&format!(": {why}"));
        }
        let ev = now(at, EventKind::Restore, by, a.outcome.as_str(), detail);
        record(data_root, &a.session_id, &ev);
    }
}

/// A close job that ran: its end and where the worker's handoff went (the roster entry's
/// `handoff`, when one was saved for this job).
pub(crate) fn closed(
    data_root: &Path,
    at: Ms,
    by: Actor,
    session_id: &str,
    handoff: Option<(&Path, &crate::evidence::config::Handoff)>,
    report: &crate::owned::close_report::CloseReport,
) {
    use crate::owned::close_report::CloseReport;
    let CloseReport::Ended(e) = report else {
        return;
    };
    let mut detail = format!("job {}", e.job_id);
    if let Some(r) = e.reason {
        detail.push_str(&format!(" ({})", r.as_str()));
    }
    match handoff.filter(|(_, h)| h.job_id == e.job_id) {
        Some((roster, h)) => detail.push_str(&format!(
            "; handoff saved to the roster entry {:?} in {}: {}",
            e.worker,
            roster.display(),
            h.summary
        )),
        None => detail.push_str("; no handoff saved"),
    }
    let mut ev = now(at, EventKind::Close, by, e.state.as_str(), detail);
    ev.job_id = Some(e.job_id.clone());
    record(data_root, session_id, &ev);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_read_back_oldest_first_and_foreign_lines_are_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let ev = |at: Ms, event: EventKind| now(at, event, Actor::Cli, "ok", "d\nx".into());
        record(root, "s-1", &ev(2_000, EventKind::Close));
        record(root, "s-1", &ev(1_000, EventKind::Spawn));
        // Ids that are no plain name are never a path.
        record(root, "../x", &ev(1, EventKind::Spawn));
        record(root, "-x", &ev(1, EventKind::Spawn));
        assert!(!root.join("x.jsonl").exists() && !root.join("events/-x.jsonl").exists());
        std::fs::write(
            root.join("events/s-1.jsonl.1"),
            "garbage\n{\"version\":1}\n{\"version\":2,\"at\":\"2026-01-01T00:00:00.000Z\",\"event\":\"spawn\",\"by\":\"cli\",\"outcome\":\"\",\"detail\":\"\"}\n",
        )
        .unwrap();
        let got = read(root, "s-1");
        assert_eq!(
            got.iter().map(|e| (e.at, e.event)).collect::<Vec<_>>(),
            vec![(1_000, EventKind::Spawn), (2_000, EventKind::Close)]
        );
        // One line each, whatever the detail held.
        assert!(!got[0].detail.contains('\n'), "{:?}", got[0].detail);
    }

    #[test]
    fn a_full_record_rotates_and_keeps_reading_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let big = "x".repeat(900);
        for i in 0..400 {
            record(
                root,
                "s-2",
                &now(i, EventKind::Resume, Actor::Sidebar, "resumed", big.clone()),
            );
        }
        let cur = std::fs::metadata(root.join("events/s-2.jsonl"))
            .unwrap()
            .len();
        assert!(cur <= CAP, "{cur}");
        assert!(root.join("events/s-2.jsonl.1").exists());
        let got = read(root, "s-2");
        assert!(!got.is_empty() && got.len() < 400);
        assert_eq!(got.last().unwrap().at, 399);
    }
}
