//! Building one seat's record (the board file) and row (what the sidebar shows) from its evidence.

use std::path::{Path, PathBuf};

use super::seats::{ReplyTarget, ReplyUnavailable, SeatSource, SessionRead};
use crate::board::intercom::WorkerObservation;
use crate::board::provenance::{ProjectSource, TaskSource, WorkspaceSource};
use crate::board::reason::{StateReason, StateSource};
use crate::board::record::{
    ConnectorExtra, PaneExtra, PiExtra, RecordIntercom, RegisteredView, ReplyExtra,
    RunningToolExtra, SeatExtra, SeatKey, SeatRecord, TmuxRef,
};
use crate::board::verdict::{self, SeatFacts, Verdict};
use crate::clock::{age_seconds, format_iso, Ms};
use crate::evidence::config::Agent;
use crate::evidence::registrations::{ContextFill, Registration};
use crate::evidence::seen::{self, SeenMarks};
use crate::evidence::sessions::usage::UsageView;
use crate::fsguard::{self, Kind};
use crate::liveness::SeatLiveness;
use crate::mux::{Liveness, MuxKind};
use crate::probe::Connection;
use crate::snapshot::{
    ActivityView, ConnectionView, ReplyPath, Row, RowCloseJob, RowHandoff, RowReport, RowRole,
    SeatPane,
};
use crate::states::BoardState;

/// Most folder levels the `.git` walk climbs.
const GIT_WALK_LEVELS: usize = 32;

/// Most folders remembered by one pass's `GitRoots` (one per seat at most in practice).
const GIT_MEMO_CAP: usize = 4096;

/// The `.git` lookups of one pass: one walk per distinct folder, however many seats share it.
#[derive(Default)]
pub(super) struct GitRoots(std::collections::HashMap<PathBuf, Option<String>>);

impl GitRoots {
    /// Every folder looked up, with what was found.
    pub(super) fn into_lookups(self) -> Vec<(PathBuf, Option<String>)> {
        self.0.into_iter().collect()
    }

    pub(super) fn project(&mut self, dir: &Path) -> Option<String> {
        if let Some(p) = self.0.get(dir) {
            return p.clone();
        }
        let p = git_project(dir);
        if self.0.len() < GIT_MEMO_CAP {
            self.0.insert(dir.to_path_buf(), p.clone());
        }
        p
    }
}

/// Basename of the nearest git checkout (a `.git` folder or worktree file) at or above `dir`.
pub(super) fn git_project(dir: &Path) -> Option<String> {
    let mut cur = Some(dir);
    for _ in 0..GIT_WALK_LEVELS {
        let d = cur?;
        if matches!(
            fsguard::kind(&d.join(".git")),
            Ok(Kind::Dir) | Ok(Kind::File)
        ) {
            return Some(super::base_name(d));
        }
        cur = d.parent();
    }
    None
}

/// One seat and the evidence joined to it: what its record and row are built from.
pub(super) struct SeatEvidence<'a> {
    pub(super) seat: &'a SeatSource,
    pub(super) session: &'a SessionRead,
    /// The matching registration, live or stale.
    pub(super) reg: Option<&'a Registration>,
    /// Whether the registration's process is verifiably the one that wrote it.
    pub(super) reg_alive: Option<bool>,
    pub(super) live: &'a SeatLiveness,
    pub(super) obs: Option<&'a WorkerObservation>,
    pub(super) connection: Option<&'a Connection>,
    /// The seat's pane runs another seat's session (and why that is known).
    pub(super) other_session: Option<StateSource>,
    /// Tokens and cost of its session file.
    pub(super) usage: Option<UsageView>,
}

impl SeatEvidence<'_> {
    /// A registration is trusted only while its process is verifiably the one that wrote it.
    fn live_reg(&self) -> Option<&Registration> {
        self.reg.filter(|_| self.reg_alive != Some(false))
    }

    fn alive(&self) -> bool {
        self.live.liveness == Liveness::Alive
    }
}

/// The facts the state rules read (`board::verdict`).
fn facts<'a>(ev: &'a SeatEvidence) -> SeatFacts<'a> {
    let live_reg = ev.live_reg();
    SeatFacts {
        session: ev.session.summary(),
        at_leaf: matches!(ev.session, SessionRead::AtLeaf(_)),
        unusable: match ev.session {
            SessionRead::Unusable(code) => Some(*code),
            _ => None,
        },
        liveness: ev.live.liveness,
        liveness_reason: ev.live.reason,
        liveness_source: &ev.live.source,
        run: live_reg.and_then(|r| r.run_state.as_ref()),
        session_closed: ev.reg_alive == Some(true)
            && live_reg.is_some_and(Registration::session_closed),
        pane_runs_other_session: ev.other_session.clone(),
        // What pi told its extension: from a verifiably live registration only.
        pi: live_reg
            .filter(|_| ev.reg_alive == Some(true))
            .and_then(|r| r.pi.as_ref()),
    }
}

/// The seat's task and where it came from: a connector's fixed task, the registration's (and
/// who set it), else the session's first user message.
fn task_of(ev: &SeatEvidence) -> (Option<String>, Option<TaskSource>, Option<String>) {
    let live_reg = ev.live_reg();
    if ev.seat.role == RowRole::Connector {
        (
            Some("Discord connector".to_string()),
            Some(TaskSource::Connector),
            None,
        )
    } else if let Some(t) = live_reg.and_then(|r| r.task.clone()) {
        let by = live_reg
            .and_then(|r| r.task_set_by.clone())
            .unwrap_or_else(|| "unknown".into());
        (Some(t), Some(TaskSource::Registration), Some(by))
    } else if let Some(t) = ev.session.summary().and_then(|s| s.task.clone()) {
        (Some(t), Some(TaskSource::FirstUserMessage), None)
    } else {
        (None, None, None)
    }
}

/// The seat's workspace: the registration's, the live pane's cwd, else the session's cwd.
fn workspace_of(ev: &SeatEvidence) -> (Option<String>, Option<WorkspaceSource>) {
    if let Some(w) = ev.live_reg().and_then(|r| r.workspace.clone()) {
        (Some(w), Some(WorkspaceSource::Registration))
    } else if let Some((w, kind)) = ev.live.pane_cwd.clone() {
        (Some(w), Some(WorkspaceSource::Pane(kind)))
    } else if let Some(c) = ev.session.summary().map(|s| s.cwd.clone()) {
        (Some(c), Some(WorkspaceSource::SessionCwd))
    } else {
        (None, None)
    }
}

/// The project the seat works on: the registration's, else the git checkout of its workspace.
fn active_project_of(
    ev: &SeatEvidence,
    workspace: Option<&str>,
    git: &mut GitRoots,
) -> (Option<String>, Option<ProjectSource>) {
    if let Some(p) = ev.live_reg().and_then(|r| r.project.clone()) {
        return (Some(p), Some(ProjectSource::Registration));
    }
    match workspace.and_then(|w| git.project(Path::new(w))) {
        Some(p) => (Some(p), Some(ProjectSource::WorkspaceGitRoot)),
        None => (None, None),
    }
}

/// When a live registered pi started after the session's last entry: it was relaunched.
fn relaunched_at(ev: &SeatEvidence) -> Option<Ms> {
    let last = ev.session.summary().and_then(|s| s.last_activity)?;
    let r = ev.live_reg()?;
    if ev.reg_alive != Some(true) || !ev.alive() {
        return None;
    }
    r.started_at.filter(|st| *st > last)
}

fn registered_view(r: &Registration, alive: Option<bool>) -> RegisteredView {
    RegisteredView {
        started_at: r.started_at,
        harness: r.harness.clone(),
        pid: r.pid,
        tmux_session: r.mux.as_ref().and_then(|m| m.session.clone()),
        alive,
        run_state: r.run_state.as_ref().map(|rs| rs.state),
        path: r.path.display().to_string(),
    }
}

/// The tmux server and session: the registration's when it is in tmux, else discovery's.
fn tmux_of(ev: &SeatEvidence) -> TmuxRef {
    match ev
        .reg
        .and_then(|r| r.mux.as_ref())
        .filter(|m| m.kind == Some(MuxKind::ROSTER))
    {
        Some(m) => TmuxRef {
            socket: m.socket.clone(),
            session: m.session.clone(),
        },
        None => ev.seat.tmux.clone(),
    }
}

/// The seat's board record.
pub(super) fn build_record(
    ev: &SeatEvidence,
    marks: &SeenMarks,
    git: &mut GitRoots,
    now: Ms,
) -> SeatRecord {
    let s = ev.session.summary();
    let v: Verdict = verdict::verdict(&facts(ev), now);
    let state = v.state;
    let last_activity = s.and_then(|s| s.last_activity);
    let key = SeatKey::new(&ev.seat.project, &ev.seat.agent);
    // seen.json keeps the mark as the ISO text of the activity it saw.
    let seen_iso = last_activity.map(format_iso);
    let seen = seen::is_seen(marks, key.as_str(), seen_iso.as_deref());
    let (task, task_source, task_set_by) = task_of(ev);
    let (workspace, workspace_source) = workspace_of(ev);
    let (active_project, active_project_source) = active_project_of(ev, workspace.as_deref(), git);
    SeatRecord {
        agent: ev.seat.agent.clone(),
        project: ev.seat.project.clone(),
        state,
        state_reason: v.reason,
        state_source: v.source,
        waiting_on_you: verdict::waiting_on_you(state, seen),
        seen,
        alive: verdict::alive(ev.live.liveness, state),
        tmux: tmux_of(ev),
        session_file: s.map(|s| s.path.display().to_string()),
        session_id: s
            .map(|s| s.session_id.clone())
            .or_else(|| ev.seat.session_id.clone()),
        cwd: s.map(|s| s.cwd.clone()),
        task,
        task_source,
        task_set_by,
        workspace,
        workspace_source,
        active_project,
        active_project_source,
        registered: ev.reg.map(|r| registered_view(r, ev.reg_alive)),
        relaunched_at: relaunched_at(ev),
        age_seconds: last_activity.map(|a| age_seconds(now, a)),
        last_activity,
        model: s.and_then(|s| s.model.clone()),
        provider: s.and_then(|s| s.provider.clone()),
        last_assistant_text: s.and_then(|s| s.last_assistant_text.clone()),
        // pi's own error for an error it reported (a failed compaction), else the file's.
        last_error: v
            .error
            .clone()
            .or_else(|| s.and_then(|s| s.last_error.clone())),
        // A dialog's title when pi waits on a dialog, else what the waiting reply asks.
        question: match v.reason {
            StateReason::Dialog => v.question,
            _ => s.and_then(|s| s.question.clone()),
        }
        .filter(|_| state == BoardState::Waiting),
        skipped_lines: s.map(|s| s.skipped_lines).unwrap_or(0),
        state_at: v.at,
        usage: ev.usage,
        context: context_of(ev),
        budget: None,
        scanned_at: now,
        intercom: intercom_of(ev),
        connector: connector_of(ev),
        found_by: ev.seat.found_by,
        session_tie: ev.seat.tie,
        session_candidates: ev
            .seat
            .candidates
            .iter()
            .map(|p| p.display().to_string())
            .collect(),
        seat: None,
    }
}

/// The model's context fill as pi reports it, from a verifiably live registration only.
fn context_of(ev: &SeatEvidence) -> Option<ContextFill> {
    ev.live_reg()
        .filter(|_| ev.reg_alive == Some(true))
        .and_then(|r| r.pi.as_ref())
        .and_then(|p| p.state.context.clone())
}

/// The worker's own budget standing, and what its extension reports (the fleet's is added
/// over all rows in `scan::assemble`). `None` when no limit applies and no budget-aware
/// extension reports.
fn budget_of(
    ev: &SeatEvidence,
    rec: &SeatRecord,
    agent: Option<&Agent>,
) -> Option<crate::budget::BudgetView> {
    let ext = ev
        .live_reg()
        .filter(|_| ev.reg_alive == Some(true))
        .and_then(|r| r.pi.as_ref())
        .and_then(|p| p.state.budget.clone());
    let figures = crate::budget::eval::Figures::of(rec.usage.as_ref());
    let own = agent
        .filter(|a| !a.coordinator)
        .and_then(|a| a.budget.as_ref());
    let v = crate::budget::BudgetView::of(own, &figures, rec.context.as_ref(), ext.as_ref());
    // Kept when only its extension speaks: a fleet budget added over all rows is enforced too.
    (!v.is_empty() || v.enforced).then_some(v)
}

/// A configured worker's Intercom evidence and connection check.
fn intercom_of(ev: &SeatEvidence) -> Option<RecordIntercom> {
    ev.obs.map(|o| RecordIntercom {
        obs: o.clone(),
        connection: ev
            .connection
            .cloned()
            .unwrap_or_else(|| Connection::not_checked(&o.session_id)),
    })
}

/// A connector seat's binding, as the record shows it.
fn connector_of(ev: &SeatEvidence) -> Option<ConnectorExtra> {
    ev.seat.binding.as_ref().map(|b| ConnectorExtra {
        binding: b.name.clone(),
        alive: ev.alive(),
        owner_state: ev.live.reason,
        braked: None,
    })
}

/// The seat's sidebar row, from its record and evidence.
pub(super) fn build_row(
    ev: &SeatEvidence,
    rec: &SeatRecord,
    agent: Option<&Agent>,
    reply: &Result<ReplyTarget, ReplyUnavailable>,
) -> Row {
    let obs = ev.obs;
    let reply = reply_path(reply);
    Row {
        usage: rec.usage,
        budget: budget_of(ev, rec, agent),
        context: rec.context.clone(),
        state_at: rec.state_at,
        id: rec.session_id.clone().unwrap_or_else(|| rec.key().into()),
        seen_key: rec.key().into(),
        name: ev.seat.agent.clone(),
        project: ev.seat.project.clone(),
        role: ev.seat.role,
        responsibility: agent.map(|a| a.description.clone()),
        state: rec.state,
        state_reason: rec.state_reason,
        state_source: rec.state_source.clone(),
        connection: ev
            .connection
            .map(ConnectionView::from_connection)
            .unwrap_or_else(ConnectionView::not_checked),
        activity: obs.map(activity_view),
        report: obs.and_then(report_view),
        handoff: obs.and_then(handoff_view),
        close_job: obs.and_then(close_job_view),
        task: rec.task.clone(),
        task_source: rec.task_source,
        workspace: rec.workspace.clone(),
        model: rec.model.clone(),
        provider: rec.provider.clone(),
        last_error: rec.last_error.clone(),
        last_assistant_text: rec.last_assistant_text.clone(),
        question: rec.question.clone(),
        last_user_text: ev.session.summary().and_then(|s| s.last_user_text.clone()),
        running_tool: ev
            .session
            .summary()
            .and_then(|s| s.running_tool.clone())
            .filter(|_| rec.state == BoardState::Working),
        pane: seat_pane(ev),
        last_activity: rec.last_activity,
        relaunched_at: rec.relaunched_at,
        waiting_on_you: rec.waiting_on_you,
        seen: rec.seen,
        alive: rec.alive,
        reply,
        host: None,
        turn: turn_of(ev, rec),
        session_ended: ev.reg.is_some_and(Registration::session_closed),
    }
}

/// A reply path as the views show it.
pub(super) fn reply_path(reply: &Result<ReplyTarget, ReplyUnavailable>) -> ReplyPath {
    match reply {
        Ok(t) => ReplyPath::Available {
            target: t.describe(),
        },
        Err(reason) => ReplyPath::Unavailable {
            reason: reason.to_string(),
        },
    }
}

/// The evidence a seat's state came from, as the name of its turn (docs/behaviour.md §3b): a
/// seat that went away names the pi that went (its registration); a dialog pi waits on names
/// that dialog (when pi opened it: two dialogs before the same tool call are two turns, though
/// the file's newest entry is the same); else the entry that decided the state (its id, or its
/// time in files without ids). The alerts key on it, so two passes, two processes or a restart
/// agree on "the same turn". (pi's other reports end a run the file also ends: its entry names
/// their turn, and stays the same when the report stops counting.)
fn turn_of(ev: &SeatEvidence, rec: &SeatRecord) -> Option<String> {
    if let (StateReason::Dialog, Some(at)) = (rec.state_reason, rec.state_at) {
        return Some(format!("dialog:{at}"));
    }
    if rec.state == BoardState::Offline {
        if let Some((pid, ticks)) = ev.reg.and_then(|r| Some((r.pid?, r.start_ticks?))) {
            return Some(format!("pi:{pid}:{ticks}"));
        }
    }
    let d = ev
        .session
        .summary()
        .and_then(crate::board::classify::deciding_entry)?;
    match (&d.id, d.timestamp) {
        (Some(id), _) => Some(format!("entry:{}", crate::text::clip(id, 128))),
        (None, Some(at)) => Some(format!("at:{at}")),
        (None, None) => None,
    }
}

/// The live pane of the seat's pi and, from a live registration, that pi's identity.
pub(super) fn seat_pane(ev: &SeatEvidence) -> Option<SeatPane> {
    let ((kind, socket), pane_id, shell_pid) = ev.live.pane.clone()?;
    let pi = ev
        .live_reg()
        .filter(|_| ev.reg_alive == Some(true))
        .and_then(|r| Some((r.pid?, r.start_ticks?, r.boot_id.clone()?)));
    Some(SeatPane {
        kind,
        socket,
        pane_id,
        shell_pid,
        pi,
    })
}

pub(super) fn activity_view(o: &WorkerObservation) -> ActivityView {
    ActivityView {
        status: o.observed_status,
        label: o.last_activity.to_string(),
        observed_at: o.observed_at,
        stale: o.stale,
        evidence: o.evidence,
    }
}

pub(super) fn report_view(o: &WorkerObservation) -> Option<RowReport> {
    o.report.as_ref().map(|r| RowReport {
        status: r.status,
        summary: r.summary.clone(),
        updated_at: r.updated_at,
    })
}

pub(super) fn handoff_view(o: &WorkerObservation) -> Option<RowHandoff> {
    o.handoff.as_ref().map(|h| RowHandoff {
        job_id: h.job_id.clone(),
        summary: h.summary.clone(),
        updated_at: h.updated_at,
    })
}

pub(super) fn close_job_view(o: &WorkerObservation) -> Option<RowCloseJob> {
    o.close_job.as_ref().map(|c| RowCloseJob {
        job_id: c.job_id.clone(),
        state: c.state,
        reason: c.reason.map(|r| r.as_str().to_string()),
        updated_at: c.updated_at,
    })
}

/// A seat record's `seat` object, from the row a pass built (or, for the coordinator, its pane
/// and reply path). Here, not on `SeatExtra`: the board's record names no view-model type.
pub(super) fn seat_extra(
    role: RowRole,
    pane: Option<&SeatPane>,
    reply: &ReplyPath,
    row: Option<&Row>,
) -> SeatExtra {
    SeatExtra {
        role: match role {
            RowRole::Coordinator => "coordinator",
            RowRole::Worker => "worker",
            RowRole::Seat => "seat",
            RowRole::Connector => "connector",
        },
        pane: pane.map(|p| PaneExtra {
            mux: p.kind.name(),
            socket: p.socket.clone(),
            pane_id: p.pane_id.clone(),
            shell_pid: p.shell_pid,
            pi: p.pi.as_ref().map(|(pid, ticks, boot)| PiExtra {
                pid: *pid,
                start_ticks: *ticks,
                boot_id: boot.clone(),
            }),
        }),
        reply: match reply {
            ReplyPath::Available { target } => ReplyExtra::Target(target.clone()),
            ReplyPath::Unavailable { reason } => ReplyExtra::Unavailable(reason.clone()),
        },
        last_user_text: row.and_then(|r| r.last_user_text.clone()),
        running_tool: row
            .and_then(|r| r.running_tool.as_ref())
            .map(|t| RunningToolExtra {
                name: t.name.clone(),
                since: t.since,
            }),
        turn: row.and_then(|r| r.turn.clone()),
        session_ended: row.is_some_and(|r| r.session_ended),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_git_walk_per_distinct_folder() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("proj");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("sub")).unwrap();
        let mut git = GitRoots::default();
        assert_eq!(git.project(&repo.join("sub")).as_deref(), Some("proj"));
        // Remembered for the pass: the same folder is not walked again.
        std::fs::remove_dir(repo.join(".git")).unwrap();
        assert_eq!(git.project(&repo.join("sub")).as_deref(), Some("proj"));
        assert_eq!(git.0.len(), 1);
        assert_eq!(GitRoots::default().project(&repo.join("sub")), None);
    }
}
