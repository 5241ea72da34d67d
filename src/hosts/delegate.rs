//! An action on another host, run there as the same guarded command (docs/behaviour.md §12):
//! hello first (a host of another protocol is refused with both versions named), then the
//! command through ssh with that host's flags, `--host local` (it never fans out further), the
//! seat the board showed (`--expect-seat`), its text on stdin. The remote exit code and receipt
//! come back unchanged. When ssh fails, what happened is said as it is: **not started** (the
//! program there never ran: no connection, key or auth refused) or **unknown** (the host stopped
//! answering while the command may have run) — never as done.

use std::time::{Duration, Instant};

use super::hello;
use super::ssh::{self, Call, Problem};
use super::Host;

/// Exit code of a delegated command whose host was not reached: nothing was done there.
pub(crate) const EXIT_NOT_STARTED: i32 = 20;
/// Exit code of a delegated command whose host stopped answering while it ran: its outcome is
/// unknown (check the board before trying again).
pub(crate) const EXIT_UNKNOWN: i32 = 21;
/// Largest answer kept (a close report, a receipt).
const MAX_ANSWER: usize = 1024 * 1024;

/// How a delegated command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Delegated {
    /// It ran there: its exit code, stdout and stderr, unchanged (stderr capped).
    Ran {
        code: i32,
        stdout: Vec<u8>,
        stderr: String,
    },
    /// Nothing ran there (the reason, for the person).
    NotStarted(String),
    /// It may have run there; its outcome is unknown.
    Unknown(String),
}

impl Delegated {
    /// The exit code this machine's command ends with.
    pub(crate) fn code(&self) -> i32 {
        match self {
            Delegated::Ran { code, .. } => *code,
            Delegated::NotStarted(_) => EXIT_NOT_STARTED,
            Delegated::Unknown(_) => EXIT_UNKNOWN,
        }
    }
}

/// The words of `command` on `host`: the program, the command, `--host local`, the host's own
/// flags, `flags`, then `--` and the positional words (so a name is never read as a flag).
pub(crate) fn words(
    host: &Host,
    command: &str,
    flags: &[String],
    positional: &[String],
) -> Vec<String> {
    let mut w = vec![
        host.bin.clone(),
        command.to_string(),
        "--host".into(),
        super::LOCAL.into(),
    ];
    w.extend(host.args.iter().cloned());
    w.extend(flags.iter().cloned());
    w.push("--".into());
    w.extend(positional.iter().cloned());
    w
}

/// Whether ssh's failure happened before the remote program could run (connect, key, auth).
fn before_running(p: &Problem) -> bool {
    match p {
        Problem::HostKeyUnknown | Problem::HostKeyChanged | Problem::AuthFailed => true,
        Problem::NotAnswering(d) | Problem::Other(d) => [
            "connect to host",
            "Could not resolve hostname",
            "Connection refused",
            "No route to host",
            "Network is unreachable",
            "kex_exchange_identification",
        ]
        .iter()
        .any(|m| d.contains(m)),
    }
}

/// Run `words` (from `words()`) on `host` after a hello, feeding `input`, within `deadline`.
pub(crate) fn run(
    host: &Host,
    words: &[String],
    input: Option<&[u8]>,
    deadline: Duration,
) -> Delegated {
    if let Err(why) = hello::ask(host) {
        return Delegated::NotStarted(why.to_string());
    }
    after_hello(host, words, input, deadline)
}

/// `run` once the host's hello was answered (the caller asked it).
pub(crate) fn after_hello(
    host: &Host,
    words: &[String],
    input: Option<&[u8]>,
    deadline: Duration,
) -> Delegated {
    match ssh::call(host, words, input, Instant::now() + deadline, MAX_ANSWER) {
        Call::Exited {
            code,
            stdout,
            stderr,
        } => Delegated::Ran {
            code,
            stdout,
            stderr,
        },
        Call::NotStarted(why) => Delegated::NotStarted(why),
        Call::Ssh(p) if before_running(&p) => Delegated::NotStarted(p.describe()),
        Call::Ssh(p) => Delegated::Unknown(format!("the connection failed: {}", p.describe())),
        Call::Timeout { .. } => Delegated::Unknown(format!(
            "no answer within {} s; ssh was stopped",
            deadline.as_secs()
        )),
        Call::Oversize => Delegated::Unknown("its answer was larger than the cap".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hosts::HostName;

    #[test]
    fn remote_words_put_positionals_after_a_separator() {
        let mut h = Host::ad_hoc(HostName::parse("b").unwrap(), "b".into());
        h.args = vec!["--root".into(), "/srv/p".into()];
        let w = words(
            &h,
            "reply",
            &["--json".into()],
            &["--evil".into(), "-".into()],
        );
        assert_eq!(
            w,
            [
                "intercom-pane",
                "reply",
                "--host",
                "local",
                "--root",
                "/srv/p",
                "--json",
                "--",
                "--evil",
                "-"
            ]
        );
    }

    #[test]
    fn what_ssh_said_decides_not_started_or_unknown() {
        assert!(before_running(&Problem::AuthFailed));
        assert!(before_running(&Problem::classify(
            "ssh: connect to host 10.0.0.2 port 22: Connection refused"
        )));
        assert!(!before_running(&Problem::classify(
            "Timeout, server 10.0.0.2 not responding."
        )));
        assert!(!before_running(&Problem::classify(
            "Connection to 10.0.0.2 closed by remote host."
        )));
        assert_eq!(Delegated::NotStarted("x".into()).code(), EXIT_NOT_STARTED);
        assert_eq!(Delegated::Unknown("x".into()).code(), EXIT_UNKNOWN);
    }
}
