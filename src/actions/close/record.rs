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
    crate::paths::close_job_record(root, job_id)
}

/// Why a job record was not written, or cannot be used.
#[derive(Debug)]
pub enum RecordError {
    Store(store::StoreError),
    Encode(serde_json::Error),
    /// It cannot be opened or read (an `FsError` code).
    Unreadable(&'static str),
    /// Others may read or write it: it is not trusted.
    Exposed,
    NotJson,
    /// It names no such field (what is missing).
    Missing(&'static str),
}

impl std::fmt::Display for RecordError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RecordError::Store(e) => e.fmt(f),
            RecordError::Encode(e) => write!(f, "job record not encoded: {e}"),
            RecordError::Unreadable(code) => write!(f, "job record {code}"),
            RecordError::Exposed => f.write_str("job record is readable by others"),
            RecordError::NotJson => f.write_str("job record is not JSON"),
            RecordError::Missing(what) => write!(f, "job record names no {what}"),
        }
    }
}

impl std::error::Error for RecordError {}

/// Write the record (mode 0600) before the job is announced anywhere.
pub fn write(root: &Path, job_id: &str, r: &JobRecord, now: Ms) -> Result<(), RecordError> {
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
    store::ensure_dir(root, &dir).map_err(RecordError::Store)?;
    let mut bytes = serde_json::to_vec_pretty(&v).map_err(RecordError::Encode)?;
    bytes.push(b'\n');
    store::write_atomic(&p, &bytes).map_err(RecordError::Store)
}

/// Read the record; refused when others may read or write it.
pub fn read(root: &Path, job: &str) -> Result<JobRecord, RecordError> {
    use RecordError::Missing;
    let p = path(root, job);
    // The jobs folder and the record must be ours and private (`fsguard::trusted`, and no read
    // by others either): another user's record could name their pane as the worker's.
    fsguard::trusted_dir(&crate::paths::jobs_dir(root))
        .map_err(|e| RecordError::Unreadable(e.code()))?;
    let f = fsguard::open_trusted(&p, Some(64 * 1024))
        .map_err(|e| RecordError::Unreadable(e.code()))?;
    if f.mode & 0o077 != 0 {
        return Err(RecordError::Exposed);
    }
    let bytes = fsguard::read_at(&f.file, 0, f.len as usize)
        .map_err(|e| RecordError::Unreadable(e.code()))?;
    let v: Value = serde_json::from_slice(&bytes).map_err(|_| RecordError::NotJson)?;
    let s = |p: &Value, k: &str| p.get(k).and_then(Value::as_str).map(str::to_string);
    let pi = &v["pi"];
    let m = &v["mux"];
    let kind = match m["kind"].as_str() {
        Some("tmux") => MuxKind::Tmux,
        Some("herdr") => MuxKind::Herdr,
        _ => return Err(Missing("multiplexer")),
    };
    Ok(JobRecord {
        session_id: s(&v, "sessionId").ok_or(Missing("session"))?,
        session_file: s(&v, "sessionFile").map(PathBuf::from),
        pi: ProcIdentity {
            pid: pi["pid"]
                .as_i64()
                .and_then(|p| i32::try_from(p).ok())
                .ok_or(Missing("pid"))?,
            start_ticks: pi["startTicks"].as_u64().ok_or(Missing("start ticks"))?,
            boot_id: s(pi, "bootId").ok_or(Missing("boot id"))?,
        },
        kind,
        socket: s(m, "socket").map(PathBuf::from).ok_or(Missing("socket"))?,
        server: serde_json::from_value(m["server"].clone())
            .map_err(|_| Missing("server identity"))?,
        pane_id: s(m, "paneId").ok_or(Missing("pane"))?,
        mux_session_id: s(m, "sessionId").ok_or(Missing("session id"))?,
        window_id: s(m, "windowId").ok_or(Missing("window id"))?,
        pane_pid: m["panePid"].as_i64().and_then(|p| i32::try_from(p).ok()),
        terminal_id: s(m, "terminalId"),
    })
}

/// What the worker registered about itself (from inside its pi), as a job record.
pub fn from_registration(r: &Registration) -> Option<JobRecord> {
    let m = r.mux.as_ref()?;
    let socket = m.socket.clone()?;
    let (kind, server) = match m.kind? {
        MuxKind::Tmux => (
            MuxKind::Tmux,
            ServerIdentity::Tmux {
                socket_path: socket.clone(),
                server_pid: i32::try_from(m.server_pid?).ok()?,
                start_time: m.server_start?,
            },
        ),
        MuxKind::Herdr => (
            MuxKind::Herdr,
            ServerIdentity::Herdr {
                socket_path: socket.clone(),
                version: String::new(),
                protocol: 0,
            },
        ),
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

/// The pane the recorded pi is in now, on the recorded server (`mux::follow_pane`): the
/// registration names the pane of pi's last event, and a pane moved since is followed by the
/// pi's process (a Herdr pane moved to another workspace gets a new id; one moved to another
/// tab keeps its id in another tab). When the server does not answer or no pane holds the pi,
/// the record is left as it is, and the outside verification refuses it.
pub fn follow(r: &mut JobRecord) {
    let m = crate::mux::open(r.kind, &r.socket);
    let deadline = std::time::Instant::now() + super::STEP_DEADLINE;
    if let Ok(Some(o)) = crate::mux::follow_pane(m.as_ref(), Some(&r.pane_id), r.pi.pid, deadline) {
        r.pane_id = o.pane.id;
        r.mux_session_id = o.pane.session_id;
        r.window_id = o.pane.window_id;
    }
}
