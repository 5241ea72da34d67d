//! Identities and evidence for a close job: the machine-local job record, checked against the
//! worker's registration and from the outside (server incarnation, pane, process start ticks and
//! boot id, session header), and the settled-turn evidence.

use super::guard::Guard;
use super::record::JobRecord;
use super::*;

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
) -> Result<(), String> {
    let r = reg.ok_or("the worker has no registration to compare the job with")?;
    let same = r.pid == Some(job.pi.pid)
        && r.start_ticks == Some(job.pi.start_ticks)
        && r.boot_id.as_deref() == Some(job.pi.boot_id.as_str());
    if !same {
        return Err("the registered worker is another process than the job's".into());
    }
    if let Some(pane) = r.mux.as_ref().and_then(|m| m.pane_id.as_deref()) {
        if pane != job.pane_id {
            return Err("the registered worker is in another pane than the job's".into());
        }
    }
    Ok(())
}

/// Check the worker's pane and process from the outside against the job record.
pub(super) fn verify(job: &JobRecord, session_id: &str, guard: &Guard) -> Result<Verified, String> {
    guard.check(job)?;
    let m = mux::open(job.kind, &job.socket);
    let deadline = Instant::now() + STEP_DEADLINE;
    let server = m
        .server_identity(deadline)
        .map_err(|e| format!("server: {e}"))?;
    if !server.same_server(&job.server) {
        return Err("the multiplexer server was restarted (ids may be reused)".into());
    }
    let pane = m
        .find_pane(&job.pane_id, deadline)
        .map_err(|e| format!("pane lookup: {e}"))?
        .ok_or("the worker's pane is gone")?;
    if pane.session_id != job.mux_session_id || pane.window_id != job.window_id {
        return Err("the pane moved to another session or window".into());
    }
    // The pane incarnation the job started with (recorded once verified): the same id with
    // another process or terminal is another pane (a Herdr restart keeps ids, not shells).
    if job.pane_pid.is_some() && job.pane_pid != pane.pid {
        return Err("the pane's process changed since the job started".into());
    }
    if job.terminal_id.is_some() && job.terminal_id != pane.terminal_id {
        return Err(
            "the pane's terminal changed since the job started (a restarted Herdr?)".into(),
        );
    }
    guard.check_pane(&pane)?;
    if proc::status(&job.pi) != ProcStatus::Alive {
        return Err("the recorded pi process is gone, a zombie, or another incarnation".into());
    }
    let pane_pid = pane.pid.ok_or("the pane has no process")?;
    if pane_pid != job.pi.pid && !proc::is_ancestor(pane_pid, job.pi.pid) {
        return Err("the recorded pi process is not in the pane's process tree".into());
    }
    if let Some(file) = &job.session_file {
        let s = sessions::read_session(file).map_err(|e| format!("session file {}", e.code()))?;
        if s.session_id != session_id {
            return Err("the session file's header names another session".into());
        }
    }
    Ok(Verified { server, pane })
}

/// (length, mtime, newest entry id) of the worker's session file: the settled evidence.
pub(super) fn evidence(file: &Path) -> Option<(u64, i64, Option<String>)> {
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
    let obs = intercom::project_worker(agent, &logs.events, &ReportSet::default(), now);
    let logs_busy = matches!(
        obs.observed_status,
        ObservedStatus::Working | ObservedStatus::Thinking
    ) && obs.observed_at.is_some_and(|t| t >= handoff_at);
    let regs = registrations::read_all(Some(root), data_root);
    let reg_busy = regs
        .by_session_id(&agent.session_id)
        .and_then(|r| r.run_state.as_ref())
        .is_some_and(|rs| rs.state == "working");
    !logs_busy && !reg_busy
}
