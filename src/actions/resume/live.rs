//! Is anything still running the worker's session? Independent witnesses, any one of which
//! refuses a resume: a live registration, a process on this machine that names the session, a
//! live pi that cannot be proven to run another session (pi 1.6.0 hides its `--session*` flags,
//! so a pi without a registration could be running any session: not knowing refuses), and the
//! worker's loopback health endpoint answering with the session id.

use std::path::Path;
use std::time::Duration;

use crate::evidence::registrations::{self, Registration, RegistrationSet};
use crate::fsguard;
use crate::probe;
use crate::proc;
use crate::states::ConnState;

/// At most this many `/proc` entries are looked at (a machine with more processes is refused
/// as "cannot tell", never assumed clear).
const MAX_PROCS: usize = 16_384;
/// Bytes of one process's command line or environment read.
const CMDLINE_CAP: u64 = 64 * 1024;

/// One witness that the session still runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Witness {
    pub kind: WitnessKind,
    pub detail: String,
}

/// What shows a worker still runs (shown as its word: `registration`, `process`, `pi`,
/// `health`, `pane`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WitnessKind {
    /// A live registration of the session.
    Registration,
    /// A process whose command line or environment names the session.
    Process,
    /// A live pi of ours that could be running the session and is not proven to run another.
    Pi,
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
            WitnessKind::Pi => "pi",
            WitnessKind::Health => "health",
            WitnessKind::Pane => "pane",
        })
    }
}

/// A live registration of the session: pid, start ticks and boot id of a running process, and
/// pi did not record the end of the session.
pub(crate) fn live_registration(
    root: &Path,
    data_root: &Path,
    session_id: &str,
) -> Option<(Witness, Registration)> {
    let set = registrations::read_all(Some(root), data_root);
    set.items
        .into_iter()
        .filter(|r| r.session_id.as_deref() == Some(session_id) && !r.session_closed())
        .find_map(|r| {
            let pid = r.pid?;
            (r.identity().is_some() && r.alive() == Some(true)).then(|| {
                (
                    Witness {
                        kind: WitnessKind::Registration,
                        detail: format!("pid {pid} registered this session and still runs"),
                    },
                    r,
                )
            })
        })
}

/// Why "does anything still run the session" has no answer: unknown is not clear.
#[derive(Debug)]
pub(crate) enum Unknowable {
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
/// environment says it runs for that session (`PI_SESSION_ID`, which pi gives its tools); or a
/// live pi of ours that cannot be proven to run another session (`unproven_pi`). `regs`: every
/// registration read, to prove what a registered pi runs.
/// `Err` when `/proc` cannot be listed completely: unknown is not clear.
pub(crate) fn process_naming(
    session_id: &str,
    session_file: &Path,
    folder: &Path,
    regs: &RegistrationSet,
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
        if let Some(w) = unproven_pi(pid, session_id, session_file, folder, regs) {
            return Ok(Some(w));
        }
    }
    Ok(None)
}

/// A live pi of ours that could be running `session_id` and is not proven to run another: it is
/// pi (`proc::pi_command_line`); no live registration of exactly that process (naming another
/// session, not ended) and no visible command line proves another session; and it writes where
/// the saved file is (the folder its environment and cwd give holds `session_file`), runs in
/// the worker's `folder`, or its folder cannot be told. Another user's process cannot write our
/// session files and is not asked about.
fn unproven_pi(
    pid: i32,
    session_id: &str,
    session_file: &Path,
    folder: &Path,
    regs: &RegistrationSet,
) -> Option<Witness> {
    if !proc::is_ours(pid) {
        return None;
    }
    let argv = proc::pi_command_line(pid).ok()?;
    let id = proc::identity(pid)?;
    // The sessions this very process has registered and not ended.
    let open: Vec<&Registration> = regs
        .items
        .iter()
        .filter(|r| r.is_process(&id) && !r.session_closed())
        .collect();
    if open
        .iter()
        .any(|r| r.session_id.as_deref() == Some(session_id))
    {
        return Some(Witness {
            kind: WitnessKind::Pi,
            detail: format!("pid {pid} is a pi registered for this session"),
        });
    }
    if open.iter().any(|r| r.session_id.is_some()) {
        return None;
    }
    if runs_other_session(&argv, session_id) {
        return None;
    }
    let writes_there = match crate::scan::pi_session_dir(pid, &argv) {
        Some(dir) => session_file
            .parent()
            .is_some_and(|p| registrations::in_sessions_dir(p, &dir)),
        None => true,
    };
    let in_folder = proc::cwd(pid).is_some_and(|c| registrations::same_path(&c, folder));
    // A pi that exited while it was looked at runs nothing; its folder then reads as "cannot be
    // told" only because its /proc entry is gone.
    if (!writes_there && !in_folder) || !proc::is_alive(&id) {
        return None;
    }
    Some(Witness {
        kind: WitnessKind::Pi,
        detail: format!(
            "pid {pid} is a pi whose session cannot be told (no live registration of it, and pi 1.6.0 hides its --session flags): it could be running this session; quit it, or install the intercom-pane extension in it so it registers"
        ),
    })
}

/// The command line shows a session that is not `session_id`: `--no-session`, or a
/// `--session`, `--session-id` or `--fork` naming another.
fn runs_other_session(argv: &[String], session_id: &str) -> bool {
    let names_it = |v: &str| v == session_id || v.ends_with(&format!("_{session_id}.jsonl"));
    let mut it = argv.iter().map(String::as_str).peekable();
    while let Some(a) = it.next() {
        if a == "--no-session" {
            return true;
        }
        let value = match a.split_once('=') {
            Some((k, v)) if ["--session", "--session-id", "--fork"].contains(&k) => Some((k, v)),
            None if ["--session", "--session-id", "--fork"].contains(&a) => {
                it.next().map(|v| (a, v))
            }
            _ => None,
        };
        if let Some((k, v)) = value {
            // A fork starts a new session whatever it forks from.
            return k == "--fork" || !names_it(v);
        }
    }
    false
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
pub(crate) fn health_answers(port: u16, session_id: &str) -> Result<Option<Witness>, Unknowable> {
    let probes = probe::Blocking::new().map_err(Unknowable::NoRuntime)?;
    let deadline = Duration::from_millis(probe::REQUEST_DEADLINE_MS);
    let (state, reason) = probes.probe_one(port, session_id, deadline);
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
    fn a_visible_command_line_proves_another_session_only_when_it_names_one() {
        let v = |a: &[&str]| {
            runs_other_session(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>(), "abc")
        };
        assert!(v(&["node", "/x/cli.js", "--session-id", "other"]));
        assert!(v(&["node", "/x/cli.js", "--session=/s/2026_other.jsonl"]));
        assert!(v(&["node", "/x/cli.js", "--no-session"]));
        assert!(v(&["node", "/x/cli.js", "--fork", "abc"]));
        assert!(!v(&["node", "/x/cli.js", "--session-id", "abc"]));
        assert!(!v(&["node", "/x/cli.js", "--session", "/s/2026_abc.jsonl"]));
        // pi 1.6.0's title hides everything: nothing is proven.
        assert!(!v(&["pi"]));
        assert!(!v(&["node", "/x/cli.js", "--continue"]));
    }
}
