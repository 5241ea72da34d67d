//! Identities and evidence for a close job: the machine-local job record, checked against the
//! worker's registration and from the outside (server incarnation, pane, process start ticks and
//! boot id, session header), and the settled-turn evidence.

use std::path::Path;
use std::time::Instant;

use super::guard::Guard;
use super::record::JobRecord;
use super::STEP_DEADLINE;
use crate::board::classify::{self, Activity};
use crate::board::intercom::{self, ObservedStatus};
use crate::clock::Ms;
use crate::evidence::config::Agent;
use crate::evidence::observations;
use crate::evidence::registrations::{self, Registration, RunState};
use crate::evidence::reports::ReportSet;
use crate::evidence::sessions;
use crate::mux::{self, ServerIdentity};
use crate::proc::{self, ProcStatus};

/// Why the worker is not (or no longer) the one the job recorded.
#[derive(Debug)]
pub(super) enum VerifyError {
    NoRegistration,
    RegisteredElsewhereProcess,
    RegisteredElsewherePane,
    Protected(super::guard::Refusal),
    Server(mux::MuxError),
    ServerRestarted,
    PaneLookup(mux::MuxError),
    PaneGone,
    PaneMoved,
    /// The pane's own process is another than when the job started.
    PaneProcessChanged,
    /// The pane's terminal is another than when the job started (a restarted Herdr keeps ids).
    PaneTerminalChanged,
    PiNotAlive,
    /// The recorded pi runs as another user: never signalled, its pane never closed.
    PiNotOurs,
    PaneHasNoProcess,
    PiNotInPane,
    /// The session file could not be read (an `FsError`/parse code).
    SessionFile(&'static str),
    SessionMismatch,
}

impl std::fmt::Display for VerifyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            VerifyError::NoRegistration => {
                f.write_str("the worker has no registration to compare the job with")
            }
            VerifyError::RegisteredElsewhereProcess => {
                f.write_str("the registered worker is another process than the job's")
            }
            VerifyError::RegisteredElsewherePane => {
                f.write_str("the registered worker is on another multiplexer server than the job's")
            }
            VerifyError::Protected(r) => r.fmt(f),
            VerifyError::Server(e) => write!(f, "server: {e}"),
            VerifyError::ServerRestarted => {
                f.write_str("the multiplexer server was restarted (ids may be reused)")
            }
            VerifyError::PaneLookup(e) => write!(f, "pane lookup: {e}"),
            VerifyError::PaneGone => f.write_str("the worker's pane is gone"),
            VerifyError::PaneMoved => f.write_str(
                "the pane moved to another session, window, workspace or tab since the job started",
            ),
            VerifyError::PaneProcessChanged => {
                f.write_str("the pane's process changed since the job started")
            }
            VerifyError::PaneTerminalChanged => f.write_str(
                "the pane's terminal changed since the job started (a restarted Herdr?)",
            ),
            VerifyError::PiNotAlive => {
                f.write_str("the recorded pi process is gone, a zombie, or another incarnation")
            }
            VerifyError::PiNotOurs => f.write_str("the recorded pi runs as another user"),
            VerifyError::PaneHasNoProcess => f.write_str("the pane has no process"),
            VerifyError::PiNotInPane => {
                f.write_str("the recorded pi process is not in the pane's process tree")
            }
            VerifyError::SessionFile(code) => write!(f, "session file {code}"),
            VerifyError::SessionMismatch => {
                f.write_str("the session file's header names another session")
            }
        }
    }
}

impl std::error::Error for VerifyError {}

impl From<super::guard::Refusal> for VerifyError {
    fn from(r: super::guard::Refusal) -> VerifyError {
        VerifyError::Protected(r)
    }
}

/// The verified state of the worker's pane and process, from the outside.
pub(super) struct Verified {
    pub(super) server: ServerIdentity,
    pub(super) pane: mux::PaneInfo,
}

/// The job record must still describe the process incarnation the worker's registration names:
/// a pi restarted in the pane since the job started is another worker.
pub(super) fn matches_registration(
    job: &JobRecord,
    reg: Option<&Registration>,
) -> Result<(), VerifyError> {
    let r = reg.ok_or(VerifyError::NoRegistration)?;
    let same = r.pid == Some(job.pi.pid)
        && r.start_ticks == Some(job.pi.start_ticks)
        && r.boot_id.as_deref() == Some(job.pi.boot_id.as_str());
    if !same {
        return Err(VerifyError::RegisteredElsewhereProcess);
    }
    // The registered pane is where pi was at its last event: a pane moved since (a Herdr
    // workspace move renames it) is followed by its process, so only the server must agree.
    if let Some(socket) = r.mux.as_ref().and_then(|m| m.socket.as_deref()) {
        if Path::new(socket) != job.socket {
            return Err(VerifyError::RegisteredElsewherePane);
        }
    }
    Ok(())
}

/// Check the worker's pane and process from the outside against the job record.
pub(super) fn verify(
    job: &JobRecord,
    session_id: &str,
    guard: &Guard,
) -> Result<Verified, VerifyError> {
    guard.check(job)?;
    let m = mux::open(job.kind, &job.socket);
    let deadline = Instant::now() + STEP_DEADLINE;
    let server = m.server_identity(deadline).map_err(VerifyError::Server)?;
    if !server.same_server(&job.server) {
        return Err(VerifyError::ServerRestarted);
    }
    // Another user's server (socket or process) is never closed through.
    let server_pid = match &server {
        ServerIdentity::Tmux { server_pid, .. } => Some(*server_pid),
        ServerIdentity::Herdr { .. } => None,
    };
    mux::server_is_ours(&job.socket, server_pid).map_err(VerifyError::Server)?;
    let pane = m
        .find_pane(&job.pane_id, deadline)
        .map_err(VerifyError::PaneLookup)?
        .ok_or(VerifyError::PaneGone)?;
    // A Herdr pane moved to another workspace answers its old id with its new one: that is
    // not the pane the job recorded (a close by the old id would still reach it).
    if pane.id != job.pane_id
        || pane.session_id != job.mux_session_id
        || pane.window_id != job.window_id
    {
        return Err(VerifyError::PaneMoved);
    }
    // The pane incarnation the job started with (recorded once verified): the same id with
    // another process or terminal is another pane (a Herdr restart keeps ids, not shells).
    if job.pane_pid.is_some() && job.pane_pid != pane.pid {
        return Err(VerifyError::PaneProcessChanged);
    }
    if job.terminal_id.is_some() && job.terminal_id != pane.terminal_id {
        return Err(VerifyError::PaneTerminalChanged);
    }
    guard.check_pane(&pane)?;
    if proc::status(&job.pi) != ProcStatus::Alive {
        return Err(VerifyError::PiNotAlive);
    }
    if !proc::is_ours(job.pi.pid) {
        return Err(VerifyError::PiNotOurs);
    }
    let pane_pid = pane.pid.ok_or(VerifyError::PaneHasNoProcess)?;
    if pane_pid != job.pi.pid && !proc::is_ancestor(pane_pid, job.pi.pid) {
        return Err(VerifyError::PiNotInPane);
    }
    if let Some(file) = &job.session_file {
        let s = sessions::read_session(file).map_err(|e| VerifyError::SessionFile(e.code()))?;
        if s.session_id != session_id {
            return Err(VerifyError::SessionMismatch);
        }
    }
    Ok(Verified { server, pane })
}

/// (length, mtime, newest entry id) of the worker's session file: the settled evidence.
pub(super) type SettledEvidence = (u64, i64, Option<String>);

/// The settled evidence of the worker's session file, if it reads.
pub(super) fn evidence(file: &Path) -> Option<SettledEvidence> {
    let s = sessions::read_session(file).ok()?;
    Some((s.file_len, s.mtime_ms, s.newest_entry_id.clone()))
}

/// Settled: the newest reply completed after the handoff and no turn is running — by the session
/// file, and, where they exist, by the observation logs (no busy record since the handoff) and
/// the registration's run state (the extension saw the turn settle).
pub(super) fn settled(
    root: &Path,
    agent: &Agent,
    data_root: &Path,
    file: &Path,
    handoff_at: Ms,
    now: Ms,
) -> bool {
    let Ok(s) = sessions::read_session(file) else {
        return false;
    };
    let c = classify::classify(&s, now);
    if c.activity == Activity::Working || s.last_activity.is_none_or(|a| a <= handoff_at) {
        return false;
    }
    let logs = observations::read_logs(root);
    let obs = intercom::project_worker(
        agent,
        &intercom::EventIndex::new(&logs.events),
        &ReportSet::default(),
        now,
    );
    let logs_busy = matches!(
        obs.observed_status,
        ObservedStatus::Working | ObservedStatus::Thinking
    ) && obs.observed_at.is_some_and(|t| t >= handoff_at);
    let regs = registrations::read_all(Some(root), data_root);
    let reg_busy = regs
        .by_session_id(&agent.session_id)
        .and_then(|r| r.run_state.as_ref())
        .is_some_and(|rs| rs.state == RunState::Working);
    !logs_busy && !reg_busy
}
