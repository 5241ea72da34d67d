//! The machine-local job record `<root>/.pi-intercom/jobs/<jobId>.json` (mode 0600, never in
//! config): the worker's identity as `close-worker` verified it before asking for the handoff —
//! its pi (pid, start ticks, boot id), the multiplexer server incarnation and pane, the session id
//! and file. `handoff` accepts a caller only when that caller's pi is this recorded process, and
//! the close verifies and pins the same process; neither takes an identity from its caller.
//! Its shape on disk is `owned::job_record`.

use std::path::{Path, PathBuf};

use crate::clock::{format_iso, Ms};
use crate::evidence::registrations::Registration;
use crate::fsguard;
use crate::mux::{MuxKind, ServerIdentity};
use crate::owned;
use crate::owned::job_record::{self, JobFile, MuxFields, PiFields};
use crate::proc::ProcIdentity;
use crate::store;

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
    Encode(owned::EncodeError),
    /// It cannot be opened or read (an `FsError` code).
    Unreadable(&'static str),
    /// Others may read or write it: it is not trusted.
    Exposed,
    /// It is not JSON, or not a job record's shape (what is missing or wrong).
    Invalid(owned::DecodeError),
}

impl std::fmt::Display for RecordError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RecordError::Store(e) => e.fmt(f),
            RecordError::Encode(e) => write!(f, "job record {e}"),
            RecordError::Unreadable(code) => write!(f, "job record {code}"),
            RecordError::Exposed => f.write_str("job record is readable by others"),
            RecordError::Invalid(owned::DecodeError::NotJson) => {
                f.write_str("job record is not JSON")
            }
            RecordError::Invalid(e) => write!(f, "job record is {e}"),
        }
    }
}

impl std::error::Error for RecordError {}

impl JobRecord {
    /// The record's file for job `job_id`, saved at `now`.
    fn to_file(&self, job_id: &str, now: Ms) -> JobFile {
        JobFile {
            version: job_record::VERSION,
            job_id: job_id.to_string(),
            session_id: self.session_id.clone(),
            session_file: self.session_file.as_ref().map(|p| p.display().to_string()),
            pi: PiFields {
                pid: self.pi.pid,
                start_ticks: self.pi.start_ticks,
                boot_id: self.pi.boot_id.clone(),
            },
            mux: MuxFields {
                kind: self.kind,
                socket: self.socket.display().to_string(),
                server: self.server.clone(),
                pane_id: self.pane_id.clone(),
                session_id: self.mux_session_id.clone(),
                window_id: self.window_id.clone(),
                pane_pid: self.pane_pid,
                terminal_id: self.terminal_id.clone(),
            },
            saved_at: format_iso(now),
        }
    }

    fn from_file(f: JobFile) -> JobRecord {
        JobRecord {
            session_id: f.session_id,
            session_file: f.session_file.map(PathBuf::from),
            pi: ProcIdentity {
                pid: f.pi.pid,
                start_ticks: f.pi.start_ticks,
                boot_id: f.pi.boot_id,
            },
            kind: f.mux.kind,
            socket: PathBuf::from(f.mux.socket),
            server: f.mux.server,
            pane_id: f.mux.pane_id,
            mux_session_id: f.mux.session_id,
            window_id: f.mux.window_id,
            pane_pid: f.mux.pane_pid,
            terminal_id: f.mux.terminal_id,
        }
    }
}

/// Write the record (mode 0600) before the job is announced anywhere.
pub(crate) fn write(root: &Path, job_id: &str, r: &JobRecord, now: Ms) -> Result<(), RecordError> {
    let bytes = owned::encode(&r.to_file(job_id, now)).map_err(RecordError::Encode)?;
    let p = path(root, job_id);
    let dir = p.parent().unwrap_or(root).to_path_buf();
    store::ensure_dir(root, &dir).map_err(RecordError::Store)?;
    store::write_atomic(&p, &bytes).map_err(RecordError::Store)
}

/// Read the record; refused when others may read or write it.
pub fn read(root: &Path, job: &str) -> Result<JobRecord, RecordError> {
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
    let file: JobFile = owned::decode(&bytes).map_err(RecordError::Invalid)?;
    Ok(JobRecord::from_file(file))
}

/// What the worker registered about itself (from inside its pi), as a job record.
pub(crate) fn from_registration(r: &Registration) -> Option<JobRecord> {
    let m = r.mux.as_ref()?;
    let socket = m.socket.clone()?;
    let kind = m.kind?;
    let server = ServerIdentity::registered(kind, &socket, m.server_pid, m.server_start)?;
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
pub(crate) fn follow(r: &mut JobRecord) {
    let m = crate::mux::open(r.kind, &r.socket);
    let deadline = std::time::Instant::now() + super::STEP_DEADLINE;
    if let Ok(Some(o)) = crate::mux::follow_pane(m.as_ref(), Some(&r.pane_id), r.pi.pid, deadline) {
        r.pane_id = o.pane.id;
        r.mux_session_id = o.pane.session_id;
        r.window_id = o.pane.window_id;
    }
}
