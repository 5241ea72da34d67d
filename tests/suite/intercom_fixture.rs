//! The real Intercom root fixture (fixtures/intercom-root) read and projected end to end.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::intercom_support;

use intercom_support::listing;

use std::path::{Path, PathBuf};

use intercom_pane::seam::board::intercom::{
    project_worker, worker_status_json, EventIndex, Evidence, ObservedStatus,
};
use intercom_pane::seam::clock::parse_strict;
use intercom_pane::seam::evidence::config::{self};
use intercom_pane::seam::evidence::observations::read_logs;
use intercom_pane::seam::evidence::reports::read_reports;
use intercom_pane::seam::states::{CloseState, ReportStatus};
use serde_json::{json, Value};

/// The fixtures, copied into the repo from the project's shared folder.
fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

const NOW: &str = "2026-11-29T10:00:13.000Z";

#[test]
fn fixture_root_projects_exactly() {
    let root = fixtures().join("intercom-root");
    let before = listing(&root);
    let now = parse_strict(NOW).unwrap();

    // Discovery from inside the state folder climbs to the root.
    let found = config::discover_root(&root.join(".pi-intercom/logs")).unwrap();
    assert_eq!(found.as_deref(), Some(root.as_path()));

    let cfg = config::load(&root).unwrap();
    assert_eq!(cfg.multiplexer.map(|m| m.as_str()), Some("tmux"));
    assert_eq!(cfg.coordinator().unwrap().name, "Coordinator");
    let names: Vec<&str> = cfg.workers().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["Builder", "Reviewer", "Docs"]);
    // Unknown keys survive in `raw` only.
    assert_eq!(cfg.raw["futureTopLevelKey"]["kept"], true);
    assert_eq!(cfg.raw["agents"][1]["extraAgentKey"], "kept on rewrite");
    assert_eq!(cfg.raw["agents"][0]["dashboardPort"], 41999);

    let logs = read_logs(&root);
    assert!(logs.errors.is_empty(), "{:?}", logs.errors);
    assert!(!logs.truncated);
    // 12 complete lines minus one bad timestamp and one non-JSON line; the unterminated last
    // line of writer 1 is dropped.
    assert_eq!(logs.events.len(), 11);
    assert!(logs
        .events
        .windows(2)
        .all(|w| w[0].timestamp <= w[1].timestamp));
    assert_eq!(
        logs.closed_writers,
        ["0190aaaa-0000-7000-8000-000000000004"]
    );
    assert!(logs
        .events
        .iter()
        .filter(|e| e.writer_closed)
        .all(|e| e.writer_id.ends_with("0004")));

    let ids: Vec<&str> = cfg.workers().map(|a| a.session_id.as_str()).collect();
    let reports = read_reports(&root, &ids, None);
    assert!(reports.errors.is_empty(), "{:?}", reports.errors);
    // The tombstone is read (as `clear`) but is not an active report.
    let docs_id = "01a2f000-0000-7000-8000-0000000000b3";
    assert_eq!(reports.reports[docs_id].status, ReportStatus::Clear);
    assert!(reports.active(docs_id).is_none());

    let obs: Vec<_> = cfg
        .workers()
        .map(|a| project_worker(a, &EventIndex::new(&logs.events), &reports, now))
        .collect();

    let builder = &obs[0];
    assert_eq!(builder.observed_status, ObservedStatus::Thinking);
    assert_eq!(builder.last_activity, "Thinking");
    assert_eq!(builder.evidence, Evidence::Recent);
    assert_eq!(builder.observation_age_seconds, Some(3));
    assert!(builder.report.is_none());

    let reviewer = &obs[1];
    assert_eq!(reviewer.observed_status, ObservedStatus::Idle);
    assert_eq!(reviewer.last_activity, "Turn settled");
    assert_eq!(reviewer.evidence, Evidence::Stale);
    assert!(reviewer.stale);
    let r = reviewer.report.as_ref().unwrap();
    assert_eq!(r.status, ReportStatus::NeedsDecision);
    assert_eq!(r.age_seconds, 523);

    let docs = &obs[2];
    assert_eq!(docs.observed_status, ObservedStatus::Closed);
    assert_eq!(docs.last_activity, "Runtime closed");
    assert!(docs.report.is_none());
    assert_eq!(docs.handoff.as_ref().unwrap().age_seconds, 133);
    let job = docs.close_job.as_ref().unwrap();
    assert_eq!(job.state, CloseState::Closed);
    assert_eq!(job.age_seconds, 103);

    let not_checked = |id: &str| json!({"sessionId": id, "state": "unknown", "checkedAt": null, "reason": "not_checked"});
    let workers: Vec<Value> = obs
        .iter()
        .map(|o| worker_status_json(o, not_checked(&o.session_id)))
        .collect();
    assert_eq!(
        workers[0],
        json!({"sessionId": "01a2f000-0000-7000-8000-0000000000b1", "name": "Builder",
            "observedStatus": "thinking", "lastActivity": "Thinking",
            "observedAt": "2026-11-29T10:00:10.000Z", "observationAgeSeconds": 3, "stale": false,
            "evidence": "recent", "connection": not_checked("01a2f000-0000-7000-8000-0000000000b1"),
            "handoff": null, "closeJob": null, "report": null})
    );
    assert_eq!(
        workers[1],
        json!({"sessionId": "01a2f000-0000-7000-8000-0000000000b2", "name": "Reviewer",
            "observedStatus": "idle", "lastActivity": "Turn settled",
            "observedAt": "2026-11-29T09:51:00.000Z", "observationAgeSeconds": 553, "stale": true,
            "evidence": "stale", "connection": not_checked("01a2f000-0000-7000-8000-0000000000b2"),
            "handoff": null, "closeJob": null,
            "report": {"status": "needs_decision",
                "summary": "Two designs are viable; pick one before I continue.",
                "updatedAt": "2026-11-29T09:51:30.000Z", "ageSeconds": 523, "selfReported": true}})
    );
    assert_eq!(
        workers[2],
        json!({"sessionId": "01a2f000-0000-7000-8000-0000000000b3", "name": "Docs",
            "observedStatus": "closed", "lastActivity": "Runtime closed",
            "observedAt": "2026-11-29T09:58:40.000Z", "observationAgeSeconds": 93, "stale": true,
            "evidence": "stale", "connection": not_checked("01a2f000-0000-7000-8000-0000000000b3"),
            "handoff": {"version": 1, "jobId": "5d1c0b7e-3c1f-4b1e-9c55-0d8f0e1a2b3c",
                "summary": "Docs for 2.1 merged; release notes pending review.",
                "updatedAt": "2026-11-29T09:58:00.000Z", "ageSeconds": 133, "selfReported": true},
            "closeJob": {"jobId": "5d1c0b7e-3c1f-4b1e-9c55-0d8f0e1a2b3c", "state": "closed",
                "createdAt": "2026-11-29T09:57:00.000Z", "updatedAt": "2026-11-29T09:58:30.000Z",
                "deadlineAt": "2026-11-29T09:59:00.000Z", "reason": null, "ageSeconds": 103},
            "report": null})
    );
    // Field order matters to people reading the JSON: exactly the §4 order.
    let keys: Vec<&String> = workers[0].as_object().unwrap().keys().collect();
    assert_eq!(keys[0], "sessionId");
    assert_eq!(keys[11], "report");

    // Nothing outside the allowlists reaches any output, and unknown config keys are not
    // projected by anything but `raw`.
    let everything = format!(
        "{}\n{}\n{}\n{}\n{:?}\n{:?}\n{:?}",
        serde_json::to_string(&*logs).unwrap(),
        serde_json::to_string(&reports).unwrap(),
        serde_json::to_string(&obs).unwrap(),
        serde_json::to_string(&workers).unwrap(),
        logs,
        obs,
        cfg.agents
    );
    for secret in [
        "secretField",
        "must never be shown",
        "extraAgentKey",
        "dashboardPort",
        "41999",
        "futureTopLevelKey",
    ] {
        assert!(!everything.contains(secret), "{secret} leaked");
    }

    // The coordinator is configured but never a worker row.
    assert!(obs.iter().all(|o| o.name != "Coordinator"));
    assert_eq!(listing(&root), before, "a reader wrote something");
}
