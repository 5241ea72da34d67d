//! Identities and evidence for a close job: the machine-local job record the worker's `handoff`
//! wrote, checked against its registration and from the outside (server incarnation, pane,
//! process start ticks and boot id, session header), and the settled-turn evidence.

use super::*;

/// The verified state of the worker's pane and process, from the outside.
pub(super) struct Verified {
    pub(super) server: ServerIdentity,
    pub(super) pane: mux::PaneInfo,
}

/// The machine-local job record written by the worker's `handoff`.
pub(super) struct JobRecord {
    pub(super) session_file: Option<PathBuf>,
    pub(super) pi: ProcIdentity,
    pub(super) kind: MuxKind,
    pub(super) socket: PathBuf,
    pub(super) server: ServerIdentity,
    pub(super) pane_id: String,
    pub(super) session_id: String,
    pub(super) window_id: String,
}

pub(super) fn read_job_record(root: &Path, job: &str) -> Result<JobRecord, String> {
    let path = handoff::job_record_path(root, job);
    let f = fsguard::open_regular(&path, Some(64 * 1024))
        .map_err(|e| format!("job record {}", e.code()))?;
    if f.mode & 0o077 != 0 {
        return Err("job record is readable by others".into());
    }
    let bytes = fsguard::read_at(&f.file, 0, f.len as usize).map_err(|e| e.code().to_string())?;
    let v: Value =
        serde_json::from_slice(&bytes).map_err(|_| "job record is not JSON".to_string())?;
    let s = |p: &Value, k: &str| p.get(k).and_then(Value::as_str).map(str::to_string);
    let pi = &v["pi"];
    let m = &v["mux"];
    let kind = match m["kind"].as_str() {
        Some("tmux") => MuxKind::Tmux,
        Some("herdr") => MuxKind::Herdr,
        _ => return Err("job record names no multiplexer".into()),
    };
    Ok(JobRecord {
        session_file: s(&v, "sessionFile").map(PathBuf::from),
        pi: ProcIdentity {
            pid: pi["pid"]
                .as_i64()
                .and_then(|p| i32::try_from(p).ok())
                .ok_or("no pid")?,
            start_ticks: pi["startTicks"].as_u64().ok_or("no start ticks")?,
            boot_id: s(pi, "bootId").ok_or("no boot id")?,
        },
        kind,
        socket: s(m, "socket").map(PathBuf::from).ok_or("no socket")?,
        server: serde_json::from_value(m["server"].clone()).map_err(|_| "no server identity")?,
        pane_id: s(m, "paneId").ok_or("no pane")?,
        session_id: s(m, "sessionId").ok_or("no session id")?,
        window_id: s(m, "windowId").ok_or("no window id")?,
    })
}

/// The job record must describe the same process incarnation the worker registered from inside
/// its own pi at session start: otherwise another process ran `handoff` for this session.
pub(super) fn matches_registration(
    job: &JobRecord,
    reg: Option<&Registration>,
) -> Result<(), String> {
    let r = reg.ok_or("the worker has no registration to compare the handoff with")?;
    let same = r.pid == Some(job.pi.pid)
        && r.start_ticks == Some(job.pi.start_ticks)
        && r.boot_id.as_deref() == Some(job.pi.boot_id.as_str());
    if !same {
        return Err("the handoff came from another process than the registered worker".into());
    }
    if let Some(pane) = r.mux.as_ref().and_then(|m| m.pane_id.as_deref()) {
        if pane != job.pane_id {
            return Err("the handoff came from another pane than the registered worker's".into());
        }
    }
    Ok(())
}

/// Check the worker's pane and process from the outside against the job record.
pub(super) fn verify(
    job: &JobRecord,
    session_id: &str,
    protected: &[String],
) -> Result<Verified, String> {
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
    if pane.session_id != job.session_id || pane.window_id != job.window_id {
        return Err("the pane moved to another session or window".into());
    }
    if protected.contains(&pane.id) {
        return Err("the pane is the caller's own or the monitor's".into());
    }
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

/// What the worker registered about itself, in the shape of a job record, so a dry run can run
/// the same outside verification a real close runs after the handoff.
pub(super) fn record_from_registration(r: &Registration) -> Option<JobRecord> {
    let m = r.mux.as_ref()?;
    let socket = m.socket.clone()?;
    let (kind, server) = match m.kind.as_str() {
        "tmux" => (
            MuxKind::Tmux,
            ServerIdentity::Tmux {
                socket_path: socket.clone(),
                server_pid: i32::try_from(m.server_pid?).ok()?,
                start_time: m.server_start?,
            },
        ),
        "herdr" => (
            MuxKind::Herdr,
            ServerIdentity::Herdr {
                socket_path: socket.clone(),
                version: String::new(),
                protocol: 0,
            },
        ),
        _ => return None,
    };
    Some(JobRecord {
        session_file: r.session_file.as_ref().map(PathBuf::from),
        pi: ProcIdentity {
            pid: r.pid?,
            start_ticks: r.start_ticks?,
            boot_id: r.boot_id.clone()?,
        },
        kind,
        socket: PathBuf::from(socket),
        server,
        pane_id: m.pane_id.clone()?,
        session_id: m.session_id.clone()?,
        window_id: m.window_id.clone()?,
    })
}
