//! Is anything still running the worker's session? Three independent witnesses, any one of which
//! refuses a resume: a live registration, a process on this machine that names the session, and
//! the worker's loopback health endpoint answering with the session id.

use std::path::Path;
use std::time::Duration;

use crate::evidence::registrations::{self, Registration};
use crate::fsguard;
use crate::probe::{self};
use crate::proc::{self, ProcIdentity};
use crate::states::ConnState;

/// At most this many `/proc` entries are looked at (a machine with more processes is refused
/// as "cannot tell", never assumed clear).
const MAX_PROCS: usize = 16_384;
/// Bytes of one process's command line or environment read.
const CMDLINE_CAP: u64 = 64 * 1024;

/// One witness that the session still runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Witness {
    pub kind: WitnessKind,
    pub detail: String,
}

/// What shows a worker still runs (shown as its word: `registration`, `process`, `health`,
/// `pane`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WitnessKind {
    /// A live registration of the session.
    Registration,
    /// A process whose command line or environment names the session.
    Process,
    /// The health endpoint answering as the session.
    Health,
    /// A pane the board sees alive.
    Pane,
}

impl std::fmt::Display for WitnessKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            WitnessKind::Registration => "registration",
            WitnessKind::Process => "process",
            WitnessKind::Health => "health",
            WitnessKind::Pane => "pane",
        })
    }
}

/// A live registration of the session: pid, start ticks and boot id of a running process, and
/// pi did not record the end of the session.
pub fn live_registration(
    root: &Path,
    data_root: &Path,
    session_id: &str,
) -> Option<(Witness, Registration)> {
    let set = registrations::read_all(Some(root), data_root);
    set.items
        .into_iter()
        .filter(|r| r.session_id.as_deref() == Some(session_id) && !r.session_closed())
        .find_map(|r| {
            let id = identity_of(&r)?;
            proc::is_alive(&id).then(|| {
                (
                    Witness {
                        kind: WitnessKind::Registration,
                        detail: format!("pid {} registered this session and still runs", id.pid),
                    },
                    r,
                )
            })
        })
}

pub fn identity_of(r: &Registration) -> Option<ProcIdentity> {
    Some(ProcIdentity {
        pid: r.pid?,
        start_ticks: r.start_ticks?,
        boot_id: r.boot_id.clone()?,
    })
}

/// Why "does anything still run the session" has no answer: unknown is not clear.
#[derive(Debug)]
pub enum Unknowable {
    /// `/proc` cannot be listed (an `FsError` code).
    ProcUnlisted(&'static str),
    /// `/proc` has more entries than are read.
    TooManyProcs,
    /// The probe runtime cannot start.
    NoRuntime(std::io::Error),
}

impl std::fmt::Display for Unknowable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unknowable::ProcUnlisted(code) => write!(f, "cannot list /proc ({code})"),
            Unknowable::TooManyProcs => write!(f, "more than {MAX_PROCS} entries in /proc"),
            Unknowable::NoRuntime(e) => write!(f, "cannot start the probe runtime: {e}"),
        }
    }
}

impl std::error::Error for Unknowable {}

/// A process other than this one whose command line names the session id or its file, or whose
/// environment says it runs for that session (`PI_SESSION_ID`, which pi gives its tools).
/// `Err` when `/proc` cannot be listed completely: unknown is not clear.
pub fn process_naming(
    session_id: &str,
    session_file: &Path,
) -> Result<Option<Witness>, Unknowable> {
    let me = std::process::id() as i32;
    let mine: Vec<i32> = proc::ancestors(me, proc::MAX_DEPTH);
    let listing = fsguard::list_dir(Path::new("/proc"), MAX_PROCS)
        .map_err(|e| Unknowable::ProcUnlisted(e.code()))?;
    if listing.truncated {
        return Err(Unknowable::TooManyProcs);
    }
    let file = session_file.as_os_str().as_encoded_bytes();
    let env_key = format!("PI_SESSION_ID={session_id}");
    for e in &listing.entries {
        let Some(pid) = e.name_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        if pid == me || mine.contains(&pid) {
            continue;
        }
        let dir = Path::new("/proc").join(pid.to_string());
        // A process that exits while we read simply has nothing to say.
        if let Ok(cmd) = fsguard::read_capped(&dir.join("cmdline"), CMDLINE_CAP) {
            let named = cmd
                .split(|&b| b == 0)
                .any(|a| a == session_id.as_bytes() || a == file || ends_with_id(a, session_id));
            if named {
                return Ok(Some(Witness {
                    kind: WitnessKind::Process,
                    detail: format!("pid {pid}'s command line names the session"),
                }));
            }
        }
        if let Ok(env) = fsguard::read_capped(&dir.join("environ"), CMDLINE_CAP) {
            if env.split(|&b| b == 0).any(|v| v == env_key.as_bytes()) {
                return Ok(Some(Witness {
                    kind: WitnessKind::Process,
                    detail: format!("pid {pid} runs with PI_SESSION_ID of this session"),
                }));
            }
        }
    }
    Ok(None)
}

/// `--session-id=<id>` or `--session=<…_id.jsonl>` written as one argument.
fn ends_with_id(arg: &[u8], session_id: &str) -> bool {
    let Ok(a) = std::str::from_utf8(arg) else {
        return false;
    };
    a.strip_prefix("--session-id=") == Some(session_id)
        || (a.starts_with("--session=") && a.ends_with(&format!("_{session_id}.jsonl")))
}

/// The worker's health endpoint answers with its session id (one bounded probe).
pub fn health_answers(port: u16, session_id: &str) -> Result<Option<Witness>, Unknowable> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(Unknowable::NoRuntime)?;
    let deadline = Duration::from_millis(probe::REQUEST_DEADLINE_MS);
    let (state, reason) = rt.block_on(probe::probe_one(port, session_id, deadline));
    Ok((state == ConnState::Connected).then(|| Witness {
        kind: WitnessKind::Health,
        detail: format!("127.0.0.1:{port} answers as this session ({reason})"),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_argument_forms_name_the_session() {
        assert!(ends_with_id(b"--session-id=abc", "abc"));
        assert!(ends_with_id(b"--session=/x/2026_abc.jsonl", "abc"));
        assert!(!ends_with_id(b"--session=/x/2026_abcd.jsonl", "abc"));
        assert!(!ends_with_id(b"--session-id=abcd", "abc"));
    }

    #[test]
    fn this_process_names_no_session() {
        let r = process_naming("no-such-session-7f3a", Path::new("/nonexistent/x.jsonl"));
        assert!(matches!(r, Ok(None)), "{r:?}");
    }
}
