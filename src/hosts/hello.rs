//! The handshake (docs/interop.md §13): before a host's board is read or an action sent, the
//! remote program says who it is. `intercom-pane hello --echo WORD` prints one JSON line:
//!
//! ```json
//! {"v":1,"program":"intercom-pane","version":"0.1.0","protocol":1,"watch":true,"echo":"…"}
//! ```
//!
//! `protocol` names what both sides rely on (the record's `seat` member, `--expect-seat`, exit
//! codes); a host whose protocol differs is refused with both versions named. `watch` says
//! whether it streams (`status --watch --json-lines`); without it the board is read by a
//! periodic `scan --json`. `echo` must come back exactly as sent (`quote::PROBE_WORD`): a login
//! shell that changes a quoted word is refused, since no remote command would be safe there.

use serde::{Deserialize, Serialize};

/// The remote protocol this build speaks.
pub const PROTOCOL: u32 = 1;
/// Whether this build has `status --watch --json-lines`.
pub(crate) const HAS_WATCH: bool = true;
/// Largest hello answer read.
pub(crate) const MAX_HELLO: usize = 16 * 1024;

/// This build's version.
pub fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// The hello line this build prints.
pub(crate) fn line(echo: Option<&str>) -> String {
    let hello = HelloLine {
        v: 1,
        program: "intercom-pane",
        version: version(),
        protocol: PROTOCOL,
        watch: HAS_WATCH,
        echo,
    };
    serde_json::to_string(&hello).unwrap_or_default()
}

/// The hello this build prints (what `Hello` reads on the other side, with its line version).
#[derive(Serialize)]
struct HelloLine<'a> {
    v: u32,
    program: &'static str,
    version: &'static str,
    protocol: u32,
    watch: bool,
    echo: Option<&'a str>,
}

/// What a remote said in its hello.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Hello {
    pub program: String,
    pub version: String,
    pub protocol: u32,
    #[serde(default)]
    pub watch: bool,
    pub echo: Option<String>,
}

/// Why a host cannot be used, from its hello.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// Another protocol: both versions named.
    WrongVersion { theirs: String, ours: String },
    /// Its shell changed the probe word.
    ShellChangesWords,
    /// Not a hello at all.
    NotHello(String),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::WrongVersion { theirs, ours } => write!(
                f,
                "wrong version: the host runs intercom-pane {theirs}, this is {ours} (protocol \
                 {PROTOCOL}); install the same version there"
            ),
            Refused::ShellChangesWords => f.write_str(
                "its login shell changes quoted words (not a POSIX shell?): nothing is run there",
            ),
            Refused::NotHello(d) => write!(f, "its program did not answer hello: {d}"),
        }
    }
}

/// Judge a hello answer (`stdout` of `hello --echo PROBE_WORD`).
pub fn judge(stdout: &[u8]) -> Result<Hello, Refused> {
    let text = String::from_utf8_lossy(stdout);
    let first = text.lines().next().unwrap_or("");
    let h: Hello = serde_json::from_str(first)
        .map_err(|_| Refused::NotHello(crate::text::one_line(first, 120)))?;
    if h.program != "intercom-pane" {
        return Err(Refused::NotHello(crate::text::one_line(&h.program, 60)));
    }
    if h.protocol != PROTOCOL {
        return Err(Refused::WrongVersion {
            theirs: format!("{} (protocol {})", clean(&h.version), h.protocol),
            ours: version().to_string(),
        });
    }
    if h.echo.as_deref() != Some(super::quote::PROBE_WORD) {
        return Err(Refused::ShellChangesWords);
    }
    Ok(h)
}

/// A program that has no `hello` (an older intercom-pane): its `--version` line names it.
pub(crate) fn judge_old(version_stdout: &[u8]) -> Refused {
    let text = String::from_utf8_lossy(version_stdout);
    let v = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("intercom-pane "))
        .map(clean)
        .unwrap_or_else(|| "an unknown version".into());
    Refused::WrongVersion {
        theirs: format!("{v} (no hello)"),
        ours: version().to_string(),
    }
}

/// A hello must answer within this long (connect included).
const HELLO_DEADLINE: std::time::Duration = std::time::Duration::from_secs(10);

/// Why a hello did not find a host of this protocol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Failed {
    /// It answered and is refused (version, shell).
    Refused(Refused),
    /// Its program is not there (the shell's exit 127).
    NotInstalled(String),
    /// ssh or the program failed otherwise.
    Call(super::ssh::Call),
}

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failed::Refused(r) => r.fmt(f),
            Failed::NotInstalled(bin) => write!(
                f,
                "{bin} (or coreutils' timeout) is not installed there (or not on PATH)"
            ),
            Failed::Call(c) => f.write_str(&c.describe()),
        }
    }
}

/// Ask `host` who it is: `hello --echo PROBE_WORD`, and for a program without `hello` its
/// `--version` (to name it in the refusal).
pub(crate) fn ask(host: &super::Host) -> Result<Hello, Failed> {
    use super::ssh::{call, Call};
    let at = || std::time::Instant::now() + HELLO_DEADLINE;
    let w = vec![
        host.bin.clone(),
        "hello".into(),
        "--echo".into(),
        super::quote::PROBE_WORD.into(),
    ];
    match call(host, &w, None, at(), MAX_HELLO) {
        Call::Exited {
            code: 0, stdout, ..
        } => judge(&stdout).map_err(Failed::Refused),
        Call::Exited { code: 2, .. } => {
            let w = vec![host.bin.clone(), "--version".into()];
            match call(host, &w, None, at(), MAX_HELLO) {
                Call::Exited {
                    code: 0, stdout, ..
                } => Err(Failed::Refused(judge_old(&stdout))),
                other => Err(Failed::Call(other)),
            }
        }
        Call::Exited { code: 127, .. } => {
            Err(Failed::NotInstalled(crate::text::one_line(&host.bin, 120)))
        }
        other => Err(Failed::Call(other)),
    }
}

fn clean(s: &str) -> String {
    crate::text::one_line(s, 40)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hosts::quote::PROBE_WORD;
    use serde_json::json;

    #[test]
    fn our_own_hello_is_accepted() {
        let h = judge(line(Some(PROBE_WORD)).as_bytes()).unwrap();
        assert_eq!(h.version, version());
        assert_eq!(h.watch, HAS_WATCH);
    }

    #[test]
    fn other_protocols_changed_words_and_noise_are_refused() {
        let other = json!({"v":1,"program":"intercom-pane","version":"9.9.9","protocol":7,
                           "echo":PROBE_WORD})
        .to_string();
        let e = judge(other.as_bytes()).unwrap_err().to_string();
        assert!(e.contains("9.9.9") && e.contains(version()), "{e}");
        let mangled = line(Some("a'b")).into_bytes();
        assert_eq!(judge(&mangled).unwrap_err(), Refused::ShellChangesWords);
        assert!(matches!(
            judge(b"bash: no such command"),
            Err(Refused::NotHello(_))
        ));
        let e = judge_old(b"intercom-pane 0.0.3\n").to_string();
        assert!(
            e.contains("0.0.3 (no hello)") && e.contains(version()),
            "{e}"
        );
    }
}
