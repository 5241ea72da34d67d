//! The machine-local job record `<root>/.pi-intercom/jobs/<jobId>.json` (mode 0600, never in
//! config): the worker's identity as `close-worker` verified it before asking for the handoff —
//! its pi (pid, start ticks, boot id), the multiplexer server incarnation and pane, the session id
//! and file. `handoff` accepts a caller only when that caller's pi is this recorded process, and
//! the close verifies and pins the same process; neither takes an identity from its caller.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::actions::store;
use crate::clock::{format_iso, Ms};
use crate::evidence::registrations::Registration;
use crate::fsguard;
use crate::mux::{MuxKind, ServerIdentity};
use crate::proc::ProcIdentity;

pub struct JobRecord {
    pub session_id: String,
    pub session_file: Option<PathBuf>,
    pub pi: ProcIdentity,
    pub kind: MuxKind,
    pub socket: PathBuf,
    pub server: ServerIdentity,
    pub pane_id: String,
    pub mux_session_id: String,
    pub window_id: String,
    /// The pane's incarnation when the pi was verified in it at the job's start: its process
    /// (tmux `pane_pid`, Herdr `shell_pid`) and, on Herdr, its terminal. A Herdr restart brings
    /// the pane id back as a fresh shell with a new terminal: that pane is not the worker's.
    pub pane_pid: Option<i32>,
    pub terminal_id: Option<String>,
}

/// `<root>/.pi-intercom/jobs/<jobId>.json`.
pub fn path(root: &Path, job_id: &str) -> PathBuf {
    root.join(".pi-intercom")
        .join("jobs")
        .join(format!("{job_id}.json"))
}

/// Write the record (mode 0600) before the job is announced anywhere.
pub fn write(root: &Path, job_id: &str, r: &JobRecord, now: Ms) -> Result<(), String> {
    let v = json!({
        "version": 2,
        "jobId": job_id,
        "sessionId": r.session_id,
        "sessionFile": r.session_file.as_ref().map(|p| p.display().to_string()),
        "pi": {"pid": r.pi.pid, "startTicks": r.pi.start_ticks, "bootId": r.pi.boot_id},
        "mux": {
            "kind": r.kind.name(),
            "socket": r.socket.display().to_string(),
            "server": r.server,
            "paneId": r.pane_id,
            "sessionId": r.mux_session_id,
            "windowId": r.window_id,
            "panePid": r.pane_pid,
            "terminalId": r.terminal_id,
        },
        "savedAt": format_iso(now),
    });
    let p = path(root, job_id);
    let dir = p.parent().unwrap_or(root).to_path_buf();
    store::ensure_dir(root, &dir).map_err(|e| e.to_string())?;
    let mut bytes = serde_json::to_vec_pretty(&v).map_err(|e| e.to_string())?;
    bytes.push(b'\n');
    store::write_atomic(&p, &bytes).map_err(|e| e.to_string())
}

/// Read the record; refused when others may read or write it.
pub fn read(root: &Path, job: &str) -> Result<JobRecord, String> {
    let p = path(root, job);
    let f = fsguard::open_regular(&p, Some(64 * 1024))
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
        session_id: s(&v, "sessionId").ok_or("job record names no session")?,
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
        mux_session_id: s(m, "sessionId").ok_or("no session id")?,
        window_id: s(m, "windowId").ok_or("no window id")?,
        pane_pid: m["panePid"].as_i64().and_then(|p| i32::try_from(p).ok()),
        terminal_id: s(m, "terminalId"),
    })
}

/// What the worker registered about itself (from inside its pi), as a job record.
pub fn from_registration(r: &Registration) -> Option<JobRecord> {
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
        session_id: r.session_id.clone()?,
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
        mux_session_id: m.session_id.clone()?,
        window_id: m.window_id.clone()?,
        pane_pid: None,
        terminal_id: None,
    })
}
