//! Building one seat's record (the board file) and row (what the sidebar shows) from its evidence.

use std::path::{Path, PathBuf};

use super::seats::{ReplyTarget, ReplyUnavailable, SeatSource, SessionRead};
use crate::board::classify::{self, Classification, Liveness};
use crate::board::intercom::WorkerObservation;
use crate::board::provenance::{ProjectSource, TaskSource, WorkspaceSource};
use crate::board::reason::{StateReason, StateSource};
use crate::board::record::{RecordIntercom, RegisteredView, SeatRecord, TmuxRef};
use crate::clock::{age_seconds, format_iso, Ms};
use crate::evidence::config::Agent;
use crate::evidence::registrations::{Registration, RunEvent, RunRecord, RunState};
use crate::evidence::seen::{self, SeenMarks};
use crate::evidence::sessions::SessionSummary;
use crate::fsguard::{self, Kind};
use crate::liveness::SeatLiveness;
use crate::mux::MuxKind;
use crate::probe::Connection;
use crate::snapshot::{
    ActivityView, BoardState, ConnectionView, ReplyPath, Row, RowCloseJob, RowHandoff, RowReport,
    RowRole, SeatPane,
};

/// How long after a marked failure a still-running turn (registration run state) is trusted to be
/// pi's recovery: covers custom backoffs and slow summaries; past it the file's own rule decides
/// again (a pi without `agent_settled` never reports the end of a run).
const RECOVERY_TRUST_MS: Ms = 5 * 60 * 1000;

/// Most folder levels the `.git` walk climbs.
const GIT_WALK_LEVELS: usize = 32;

/// Most folders remembered by one pass's `GitRoots` (one per seat at most in practice).
const GIT_MEMO_CAP: usize = 4096;

/// The `.git` lookups of one pass: one walk per distinct folder, however many seats share it.
#[derive(Default)]
pub(super) struct GitRoots(std::collections::HashMap<PathBuf, Option<String>>);

impl GitRoots {
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
fn git_project(dir: &Path) -> Option<String> {
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

/// What a live seat's registered run state says beyond its session file, if anything.
fn run_state_verdict(
    rs: &RunRecord,
    s: Option<&SessionSummary>,
    state: BoardState,
    reason: StateReason,
    now: Ms,
) -> Option<(BoardState, StateReason)> {
    // Recorded after the newest entry: the file has not caught up with the run yet.
    let newer = s.and_then(|s| s.last_activity).is_none_or(|a| rs.at > a);
    // A turn that started before pi wrote anything is only visible in the registration.
    if rs.state == RunState::Working && newer && state != BoardState::Working {
        return Some((BoardState::Working, StateReason::TurnStarted));
    }
    // The file alone times pi's recovery by its default backoff, which custom retry settings, a
    // message typed during the wait, or a slow summary outlast. A run that started before the
    // marked failure and has not settled since is still recovering.
    if rs.state == RunState::Working && !newer && state == BoardState::Error {
        let (_, kind) = s
            .and_then(classify::recovery_marked_at)
            .filter(|(m, _)| rs.at <= *m && now - *m <= RECOVERY_TRUST_MS)?;
        return Some((BoardState::Working, kind));
    }
    // pi reports `agent_settled` only when no retry will run: a settle after the failed attempt
    // means the retry was abandoned (Escape during the backoff), so the error stands even while
    // the backoff window would still read as retrying.
    let settled = rs.event == Some(RunEvent::AgentSettled);
    if settled && newer && matches!(reason, StateReason::Retrying | StateReason::Compacting) {
        return Some((BoardState::Error, StateReason::RetryAbandoned));
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

/// A seat's state, why, and where that came from.
struct Verdict {
    state: BoardState,
    reason: StateReason,
    source: StateSource,
}

/// The state rules in order: the session file, then what makes it unusable, then the
/// registration's run state, then liveness (which wins when the seat is not alive).
fn verdict(ev: &SeatEvidence, now: Ms) -> Verdict {
    let s = ev.session.summary();
    let classification: Option<Classification> = s.map(|s| classify::classify(s, now));
    let mut v = Verdict {
        state: classify::board_state(ev.live.liveness, classification.as_ref()),
        reason: classification.map_or(StateReason::NoSessionFile, |c| c.reason),
        source: match ev.session {
            SessionRead::NoFile => StateSource::NoSessionFile,
            SessionRead::AtLeaf(_) => StateSource::SessionFileAtTreeLeaf,
            _ => StateSource::SessionFile,
        },
    };
    let shown = !matches!(v.state, BoardState::Offline | BoardState::Unknown);
    // A session file that exists but cannot be used says nothing: unknown, never idle.
    if let (SessionRead::Unusable(code), true) = (ev.session, shown) {
        v.state = BoardState::Unknown;
        v.reason = *code;
    }
    // The newest lines are damaged (a zero-filled tail, a cut or garbage line): what they would
    // decide is not known, and damage must never make a seat look calm.
    if let (Some(d), true) = (s.and_then(|s| s.tail_damage), shown) {
        v.state = BoardState::Unknown;
        v.reason = StateReason::SessionTail(d);
    }
    // pi recorded the end of this session (`session_shutdown`) and its process still runs: it
    // moved to another session (`/new`, `/resume`, `/fork`) or is quitting. The pane runs pi,
    // but not this seat's session.
    let session_closed = ev.live_reg().is_some_and(Registration::session_closed);
    if ev.alive() && session_closed && ev.reg_alive == Some(true) {
        v.state = BoardState::Offline;
        v.reason = StateReason::SessionClosed;
        v.source = StateSource::RegistrationRunState;
    } else if ev.alive() {
        let run = ev.live_reg().and_then(|r| r.run_state.as_ref());
        if let Some((st, why)) = run.and_then(|rs| run_state_verdict(rs, s, v.state, v.reason, now))
        {
            v.state = st;
            v.reason = why;
            v.source = StateSource::RegistrationRunState;
        }
    }
    if !ev.alive() {
        v.reason = ev.live.reason;
        v.source = ev.live.source.clone();
    }
    v
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
        .filter(|m| m.kind == Some(MuxKind::Tmux))
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
    let Verdict {
        state,
        reason,
        source,
    } = verdict(ev, now);
    let last_activity = s.and_then(|s| s.last_activity);
    let key = format!("{}/{}", ev.seat.project, ev.seat.agent);
    // seen.json keeps the mark as the ISO text of the activity it saw.
    let seen = seen::is_seen(marks, &key, last_activity.map(format_iso).as_deref());
    let (task, task_source, task_set_by) = task_of(ev);
    let (workspace, workspace_source) = workspace_of(ev);
    let (active_project, active_project_source) = active_project_of(ev, workspace.as_deref(), git);
    SeatRecord {
        agent: ev.seat.agent.clone(),
        project: ev.seat.project.clone(),
        state,
        state_reason: reason,
        state_source: source,
        waiting_on_you: state == BoardState::Waiting && !seen,
        seen,
        alive: match ev.live.liveness {
            // The pane runs pi, but pi closed this session.
            Liveness::Alive if state == BoardState::Offline => Some(false),
            Liveness::Alive => Some(true),
            Liveness::Offline => Some(false),
            Liveness::Unknown => None,
        },
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
        last_error: s.and_then(|s| s.last_error.clone()),
        question: s
            .and_then(|s| s.question.clone())
            .filter(|_| state == BoardState::Waiting),
        skipped_lines: s.map(|s| s.skipped_lines).unwrap_or(0),
        scanned_at: now,
        intercom: ev.obs.map(|o| RecordIntercom {
            obs: o.clone(),
            connection: ev
                .connection
                .cloned()
                .unwrap_or_else(|| Connection::not_checked(&o.session_id)),
        }),
        connector: ev.seat.binding.as_ref().map(|b| {
            serde_json::json!({
                "binding": b.name,
                "alive": ev.alive(),
                "ownerState": ev.live.reason,
                "braked": serde_json::Value::Null,
            })
        }),
        found_by: ev.seat.found_by,
        seat: None,
    }
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
        id: rec.session_id.clone().unwrap_or_else(|| rec.key()),
        seen_key: rec.key(),
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
