//! The hosts file (docs/interop.md §13): which machines the board shows, and how to reach each.
//!
//! ```json
//! {"version": 1, "hosts": [
//!   {"name": "build", "ssh": "me@build.example.com", "bin": "/home/me/.cargo/bin/intercom-pane",
//!    "root": "/srv/proj", "args": ["--tmux-socket", "/tmp/tmux-1000/default"],
//!    "sshConfig": "/home/me/.ssh/intercom.conf"}]}
//! ```
//!
//! It names programs to run and where, so it is trusted only when it is the caller's own and
//! nobody else may write it (`fsguard::read_trusted`, the one trust rule). It is read whole
//! (at most 64 KiB), strictly: an unknown key, a bad value or a repeated name refuses the file.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::{Host, HostError, HostName};
use crate::fsguard;

/// Largest hosts file read.
const MAX_FILE: u64 = 64 * 1024;
/// Most hosts one file may name.
pub(crate) const MAX_HOSTS: usize = 32;
/// Most words of a host's `args`.
const MAX_ARGS: usize = 32;
/// Longest destination, program, path or argument.
const MAX_WORD: usize = 1024;

/// The flags a host's `args` may carry: where that machine's evidence is (the shared source
/// flags, each with its value). Anything else — a flag that changes what an action does — is
/// refused, so a hosts file can only say where to look, never what to do.
const SOURCE_FLAGS: &[&str] = &[
    "--config",
    "--root",
    "--repo",
    "--fleet",
    "--sessions-dir",
    "--tmux-socket",
    "--liveness",
];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileV1 {
    version: u32,
    hosts: Vec<EntryV1>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct EntryV1 {
    name: String,
    ssh: String,
    bin: Option<String>,
    root: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    ssh_config: Option<PathBuf>,
}

/// Where the hosts file is: `$INTERCOM_PANE_HOSTS` (an absolute path), else
/// `$XDG_CONFIG_HOME/intercom-pane/hosts.json`, else `~/.config/intercom-pane/hosts.json`.
pub(crate) fn default_path() -> Option<PathBuf> {
    let abs = |v: std::ffi::OsString| Some(PathBuf::from(v)).filter(|p| p.is_absolute());
    if let Some(p) = std::env::var_os("INTERCOM_PANE_HOSTS").and_then(abs) {
        return Some(p);
    }
    if let Some(x) = std::env::var_os("XDG_CONFIG_HOME").and_then(abs) {
        return Some(x.join("intercom-pane").join("hosts.json"));
    }
    std::env::var_os("HOME")
        .and_then(abs)
        .map(|h| h.join(".config").join("intercom-pane").join("hosts.json"))
}

/// The hosts the file at `path` names; none when there is no such file.
pub fn read(path: &Path) -> Result<Vec<Host>, HostError> {
    let bytes = match fsguard::read_trusted(path, MAX_FILE) {
        Ok(b) => b,
        Err(fsguard::FsError::NotFound) => return Ok(Vec::new()),
        Err(e) => {
            return Err(HostError::File(
                path.to_path_buf(),
                fsguard::trust_reason(e, fsguard::owner_of(path)),
            ))
        }
    };
    parse(&bytes).map_err(|why| HostError::File(path.to_path_buf(), why.to_string()))
}

/// Why a hosts file is refused (the file's own words come sanitized).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileRefusal {
    NotValid(String),
    Version(u32),
    TooMany,
    Name(String),
    Local,
    All,
    Twice(String),
    Entry { host: String, why: EntryRefusal },
}

/// Why one host's entry is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryRefusal {
    Dest(DestRefusal),
    Word { what: String, word: String },
    TooManyArgs,
    NotASourceFlag(String),
    NoValue(String),
    SshConfigRelative,
}

/// Why an ssh destination is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DestRefusal {
    EmptyOrLong,
    Dash(String),
    BadChar(String),
    Slash,
}

impl std::fmt::Display for FileRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FileRefusal::NotValid(e) => write!(f, "not valid: {e}"),
            FileRefusal::Version(v) => write!(f, "version {v} is not 1"),
            FileRefusal::TooMany => write!(f, "more than {MAX_HOSTS} hosts"),
            FileRefusal::Name(e) => f.write_str(e),
            FileRefusal::Local => {
                f.write_str("\"local\" is this machine and cannot be a host entry")
            }
            FileRefusal::All => {
                f.write_str("\"all\" means every host (--host all) and cannot be a host entry")
            }
            FileRefusal::Twice(n) => write!(f, "host {n} is named twice"),
            FileRefusal::Entry { host, why } => write!(f, "host {host}: {why}"),
        }
    }
}

impl std::fmt::Display for EntryRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EntryRefusal::Dest(d) => write!(f, "{d}"),
            EntryRefusal::Word { what, word } => write!(
                f,
                "{what} {word:?} is empty, too long or holds a control character"
            ),
            EntryRefusal::TooManyArgs => write!(f, "more than {MAX_ARGS} args"),
            EntryRefusal::NotASourceFlag(flag) => {
                write!(f, "args: {flag:?} is not one of {}", SOURCE_FLAGS.join(" "))
            }
            EntryRefusal::NoValue(flag) => write!(f, "args: {flag} has no value"),
            EntryRefusal::SshConfigRelative => f.write_str("sshConfig must be an absolute path"),
        }
    }
}

impl std::fmt::Display for DestRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DestRefusal::EmptyOrLong => f.write_str("the ssh destination is empty or too long"),
            DestRefusal::Dash(d) => write!(f, "the ssh destination {d:?} starts with '-'"),
            DestRefusal::BadChar(d) => write!(
                f,
                "the ssh destination {d:?} holds a character a host name cannot"
            ),
            DestRefusal::Slash => {
                f.write_str("a '/' in an ssh destination is only allowed in an ssh:// address")
            }
        }
    }
}

/// The hosts of a file's bytes, or why the file is refused.
pub fn parse(bytes: &[u8]) -> Result<Vec<Host>, FileRefusal> {
    let file: FileV1 = serde_json::from_slice(bytes)
        .map_err(|e| FileRefusal::NotValid(crate::text::sanitize(&e.to_string())))?;
    if file.version != 1 {
        return Err(FileRefusal::Version(file.version));
    }
    if file.hosts.len() > MAX_HOSTS {
        return Err(FileRefusal::TooMany);
    }
    let mut out: Vec<Host> = Vec::with_capacity(file.hosts.len());
    for e in file.hosts {
        let name = HostName::parse(&e.name).map_err(|e| FileRefusal::Name(e.to_string()))?;
        if name.is_local() {
            return Err(FileRefusal::Local);
        }
        if name.as_str() == super::ALL {
            return Err(FileRefusal::All);
        }
        if out.iter().any(|h| h.name == name) {
            return Err(FileRefusal::Twice(name.to_string()));
        }
        let entry = |why: EntryRefusal| FileRefusal::Entry {
            host: name.to_string(),
            why,
        };
        let mut args = Vec::new();
        if let Some(root) = e.root {
            args.extend(["--root".to_string(), root]);
        }
        args.extend(e.args);
        check_args(&args).map_err(entry)?;
        let host = Host {
            dest: check_dest(&e.ssh).map_err(|d| entry(EntryRefusal::Dest(d)))?,
            bin: match e.bin {
                Some(b) => check_word("bin", &b).map_err(entry)?,
                None => super::DEFAULT_BIN.to_string(),
            },
            args,
            ssh_config: match e.ssh_config {
                Some(p) if !p.is_absolute() => return Err(entry(EntryRefusal::SshConfigRelative)),
                other => other,
            },
            name,
        };
        out.push(host);
    }
    Ok(out)
}

/// An ssh destination: `[user@]host` or `ssh://[user@]host[:port]`. Never starts with `-`
/// (ssh would read it as an option), and holds only what host names, users, IPv6 brackets and
/// ports are written with.
pub(crate) fn check_dest(d: &str) -> Result<String, DestRefusal> {
    let ok_char = |c: char| c.is_ascii_alphanumeric() || "._-@:[]%/".contains(c);
    if d.is_empty() || d.len() > 255 {
        Err(DestRefusal::EmptyOrLong)
    } else if d.starts_with('-') {
        Err(DestRefusal::Dash(crate::text::sanitize(d)))
    } else if !d.chars().all(ok_char) {
        Err(DestRefusal::BadChar(crate::text::sanitize(d)))
    } else if d.contains('/') && !d.starts_with("ssh://") {
        Err(DestRefusal::Slash)
    } else {
        Ok(d.to_string())
    }
}

/// A word passed to the remote program: not empty, no control characters, bounded.
fn check_word(what: &str, w: &str) -> Result<String, EntryRefusal> {
    if w.is_empty() || w.len() > MAX_WORD || w.chars().any(char::is_control) {
        Err(EntryRefusal::Word {
            what: what.to_string(),
            word: crate::text::sanitize(w),
        })
    } else {
        Ok(w.to_string())
    }
}

/// `args`: pairs of a source flag and its value.
fn check_args(args: &[String]) -> Result<(), EntryRefusal> {
    if args.len() > MAX_ARGS {
        return Err(EntryRefusal::TooManyArgs);
    }
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        if !SOURCE_FLAGS.contains(&flag.as_str()) {
            return Err(EntryRefusal::NotASourceFlag(crate::text::sanitize(flag)));
        }
        let value = it
            .next()
            .ok_or_else(|| EntryRefusal::NoValue(flag.clone()))?;
        check_word(flag, value)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_entry_and_defaults() {
        let hosts = parse(
            br#"{"version":1,"hosts":[
              {"name":"build","ssh":"me@build.example.com","bin":"/opt/ip","root":"/srv/p",
               "args":["--tmux-socket","/tmp/t s"],"sshConfig":"/etc/x.conf"},
              {"name":"gpu-2","ssh":"ssh://u@[::1]:2222"}]}"#,
        )
        .unwrap();
        assert_eq!(hosts[0].name.as_str(), "build");
        assert_eq!(hosts[0].bin, "/opt/ip");
        assert_eq!(
            hosts[0].args,
            ["--root", "/srv/p", "--tmux-socket", "/tmp/t s"]
        );
        assert_eq!(hosts[1].bin, "intercom-pane");
        assert!(hosts[1].args.is_empty() && hosts[1].ssh_config.is_none());
    }

    #[test]
    fn bad_files_are_refused_with_the_reason() {
        let cases: &[(&str, &str)] = &[
            (r#"{"version":2,"hosts":[]}"#, "version"),
            (r#"{"version":1,"hosts":[],"x":1}"#, "unknown field"),
            (
                r#"{"version":1,"hosts":[{"name":"a","ssh":"h","port":2}]}"#,
                "unknown field",
            ),
            (
                r#"{"version":1,"hosts":[{"name":"local","ssh":"h"}]}"#,
                "this machine",
            ),
            (
                r#"{"version":1,"hosts":[{"name":"a","ssh":"h"},{"name":"A","ssh":"h"}]}"#,
                "twice",
            ),
            (
                r#"{"version":1,"hosts":[{"name":"a b","ssh":"h"}]}"#,
                "host name",
            ),
            (
                r#"{"version":1,"hosts":[{"name":"a","ssh":"-oProxyCommand=x"}]}"#,
                "starts with '-'",
            ),
            (
                r#"{"version":1,"hosts":[{"name":"a","ssh":"h;x"}]}"#,
                "cannot",
            ),
            (
                r#"{"version":1,"hosts":[{"name":"a","ssh":"h/x"}]}"#,
                "ssh://",
            ),
            (
                r#"{"version":1,"hosts":[{"name":"a","ssh":"h","args":["--pi","x"]}]}"#,
                "not one of",
            ),
            (
                r#"{"version":1,"hosts":[{"name":"a","ssh":"h","args":["--root"]}]}"#,
                "no value",
            ),
            (
                r#"{"version":1,"hosts":[{"name":"a","ssh":"h","bin":"a\nb"}]}"#,
                "control",
            ),
            (
                r#"{"version":1,"hosts":[{"name":"a","ssh":"h","sshConfig":"rel"}]}"#,
                "absolute",
            ),
        ];
        for (text, want) in cases {
            let e = parse(text.as_bytes()).unwrap_err().to_string();
            assert!(e.contains(want), "{text}: {e}");
        }
    }

    #[test]
    fn a_file_others_may_write_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("hosts.json");
        std::fs::write(&p, br#"{"version":1,"hosts":[{"name":"a","ssh":"h"}]}"#).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(read(&p).unwrap().len(), 1);
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o622)).unwrap();
        let e = read(&p).unwrap_err().to_string();
        assert!(e.contains("writable by group or others"), "{e}");
        assert!(read(&dir.path().join("none.json")).unwrap().is_empty());
    }
}
