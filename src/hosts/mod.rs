//! Several machines on one board (docs/behaviour.md §12, docs/interop.md §13): the hosts file,
//! `--host`, and the OpenSSH transport that runs this same program on each host and reads its
//! board, or runs an action there as the same guarded command.
//!
//! `local` is this machine and always exists; every other host is reached only through `ssh`
//! (`hosts::ssh`), one multiplexed connection per host.

pub(crate) mod board;
pub(crate) mod delegate;
pub(crate) mod expect;
pub(crate) mod file;
pub(crate) mod fleet;
pub(crate) mod hello;
pub(crate) mod here;
pub(crate) mod lines;
pub(crate) mod link;
pub(crate) mod merged;
pub(crate) mod quote;
pub(crate) mod shared;
pub(crate) mod ssh;
pub(crate) mod stream_lines;
pub(crate) mod wire;

use std::path::PathBuf;

/// The name of this machine on the board.
pub(crate) const LOCAL: &str = "local";
/// `--host all`: this machine and every host of the hosts file (never a host's own name).
pub(crate) const ALL: &str = "all";
/// The remote program when a host names none: `intercom-pane` on that host's PATH.
pub(crate) const DEFAULT_BIN: &str = "intercom-pane";
/// Longest host name.
const MAX_NAME: usize = 32;

/// A host's name on the board: `[A-Za-z0-9][A-Za-z0-9_-]*`, at most 32 characters, compared
/// without case (`local` is this machine).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HostName(String);

impl HostName {
    pub fn parse(s: &str) -> Result<HostName, HostError> {
        let ok = !s.is_empty()
            && s.len() <= MAX_NAME
            && s.starts_with(|c: char| c.is_ascii_alphanumeric())
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if ok {
            Ok(HostName(s.to_ascii_lowercase()))
        } else {
            Err(HostError::BadName(crate::text::sanitize(s)))
        }
    }

    /// `local`.
    pub fn local() -> HostName {
        HostName(LOCAL.into())
    }

    pub fn is_local(&self) -> bool {
        self.0 == LOCAL
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for HostName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// One remote host: how to reach it and what to run there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Host {
    pub name: HostName,
    /// The ssh destination (`[user@]host`, an alias of the person's ssh config, or `ssh://…`).
    pub dest: String,
    /// The program on that host.
    pub bin: String,
    /// Source flags given to every command run there (`--root`, `--config`, …).
    pub args: Vec<String>,
    /// An ssh config file for this host (`ssh -F`), else the person's own.
    pub ssh_config: Option<PathBuf>,
}

impl Host {
    /// A host given as `--host NAME=DEST`: the default program, no flags.
    pub fn ad_hoc(name: HostName, dest: String) -> Host {
        Host {
            name,
            dest,
            bin: DEFAULT_BIN.into(),
            args: Vec::new(),
            ssh_config: None,
        }
    }
}

/// Why hosts cannot be used (exit 2, nothing done).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostError {
    BadName(String),
    /// The hosts file is refused: where, and why.
    File(PathBuf, String),
    Unknown(String),
    /// `--host DEST` with an ssh destination (not a name) the hosts file does not hold: the
    /// destination, the `NAME=DEST` to say instead, and the hosts file looked in.
    NotInFile {
        dest: String,
        suggest: String,
        file: Option<PathBuf>,
    },
    BadDest(String),
    /// `--host NAME=DEST` for a name the hosts file already has.
    Shadows(String),
    /// An action names more than one host, or flags that only apply here.
    OneHost(String),
}

impl std::fmt::Display for HostError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HostError::BadName(n) => write!(
                f,
                "{n:?} is not a host name (letters, digits, '-', '_', at most {MAX_NAME})"
            ),
            HostError::File(p, why) => write!(
                f,
                "hosts file {}: {}",
                crate::text::sanitize(&p.display().to_string()),
                why
            ),
            HostError::Unknown(n) => write!(
                f,
                "no host named {n:?} (the hosts file names the others; --host {n}=DEST reaches \
                 it for this run, DEST its ssh destination)"
            ),
            HostError::NotInFile {
                dest,
                suggest,
                file,
            } => {
                let file = match file {
                    Some(p) => format!(
                        "the hosts file ({})",
                        crate::text::sanitize(&p.display().to_string())
                    ),
                    None => "the hosts file".to_string(),
                };
                write!(
                    f,
                    "{dest} is not in {file}; to use it for this run say --host {suggest}={dest}, \
                     or add it to the hosts file under a name"
                )
            }
            HostError::BadDest(why) => write!(f, "--host: {why}"),
            HostError::Shadows(n) => write!(
                f,
                "host {n} is in the hosts file: give --host {n} (its own destination is used)"
            ),
            HostError::OneHost(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for HostError {}

/// One machine a command reads or acts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    Local,
    Remote(Host),
}

impl Target {
    pub(crate) fn name(&self) -> HostName {
        match self {
            Target::Local => HostName::local(),
            Target::Remote(h) => h.name.clone(),
        }
    }
}

/// Which machines: the `--host` values given (each `NAME` of the hosts file, `local`, or
/// `NAME=DEST`), in order, without repeats; none given means `local` and, when `all_by_default`
/// (the sidebar, `watch`), every host of the file too.
pub(crate) fn choose(
    given: &[String],
    file_hosts: &[Host],
    all_by_default: bool,
) -> Result<Vec<Target>, HostError> {
    if given.is_empty() {
        let mut out = vec![Target::Local];
        if all_by_default {
            out.extend(file_hosts.iter().cloned().map(Target::Remote));
        }
        return Ok(out);
    }
    let mut out: Vec<Target> = Vec::new();
    for g in given {
        let t = match g.split_once('=') {
            Some((n, d)) => {
                let name = HostName::parse(n)?;
                if name.is_local() || file_hosts.iter().any(|h| h.name == name) {
                    return Err(HostError::Shadows(name.to_string()));
                }
                Target::Remote(Host::ad_hoc(
                    name,
                    file::check_dest(d).map_err(|e| HostError::BadDest(e.to_string()))?,
                ))
            }
            None => {
                let name =
                    HostName::parse(g).map_err(|e| not_in_file(g, file_hosts).unwrap_or(e))?;
                if name.is_local() {
                    Target::Local
                } else {
                    file_hosts
                        .iter()
                        .find(|h| h.name == name)
                        .cloned()
                        .map(Target::Remote)
                        .ok_or_else(|| HostError::Unknown(name.to_string()))?
                }
            }
        };
        if !out.iter().any(|o| o.name() == t.name()) {
            out.push(t);
        }
    }
    Ok(out)
}

/// `--host DEST` given an ssh destination where a host name belongs (`build.example.com`,
/// `me@build`): the refusal naming the `NAME=DEST` form, with a name made from the destination
/// (`NAME` when none can be). None when `given` is no ssh destination either.
fn not_in_file(given: &str, file_hosts: &[Host]) -> Option<HostError> {
    let dest = file::check_dest(given).ok()?;
    let bare = dest.strip_prefix("ssh://").unwrap_or(&dest);
    let bare = bare.rsplit('@').next().unwrap_or(bare);
    let first: String = bare
        .split(['.', ':', '/', '[', ']', '%'])
        .find(|w| !w.is_empty())
        .unwrap_or("")
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .take(MAX_NAME)
        .collect();
    let suggest = match HostName::parse(&first) {
        // An address (`10.0.0.7`, `[::1]`) makes no name worth offering.
        Ok(n)
            if n.as_str().contains(|c: char| c.is_ascii_alphabetic())
                && !n.is_local()
                && !file_hosts.iter().any(|h| h.name == n) =>
        {
            n.to_string()
        }
        _ => "NAME".to_string(),
    };
    Some(HostError::NotInFile {
        dest,
        suggest,
        file: file::default_path(),
    })
}

/// The hosts file's hosts (none without a file), for `choose`.
pub(crate) fn file_hosts() -> Result<Vec<Host>, HostError> {
    match file::default_path() {
        Some(p) => file::read(&p),
        None => Ok(Vec::new()),
    }
}

/// The machines the `--host` values name (see `choose`).
pub(crate) fn targets(given: &[String], all_by_default: bool) -> Result<Vec<Target>, HostError> {
    // Without --host and outside the sidebar, the file is not even read: one machine, as before.
    if given.is_empty() && !all_by_default {
        return Ok(vec![Target::Local]);
    }
    choose(given, &file_hosts()?, all_by_default)
}

/// The machines a board or stream follows: as `targets`, with `all` standing for this
/// machine and every host of the hosts file, in the file's order, where it is given.
pub(crate) fn board_targets(given: &[String]) -> Result<Vec<Target>, HostError> {
    if !given.iter().any(|g| g.eq_ignore_ascii_case(ALL)) {
        return targets(given, false);
    }
    follow_all(given)
}

/// The sidebar's and `watch`'s machines: this one and every host of the file without
/// `--host`, else those named (`all` among them).
pub(crate) fn sidebar_targets(given: &[String]) -> Result<Vec<Target>, HostError> {
    if given.is_empty() {
        return targets(given, true);
    }
    board_targets(given)
}

/// Whether the hosts named follow the hosts file as it changes: none named (a board's
/// default), or `all`.
pub(crate) fn follows_file(given: &[String]) -> bool {
    given.is_empty() || given.iter().any(|g| g.eq_ignore_ascii_case(ALL))
}

fn follow_all(given: &[String]) -> Result<Vec<Target>, HostError> {
    let file = file_hosts()?;
    let mut out: Vec<Target> = Vec::new();
    for g in given {
        let more = if g.eq_ignore_ascii_case(ALL) {
            choose(&[], &file, true)?
        } else {
            choose(std::slice::from_ref(g), &file, false)?
        };
        for t in more {
            if !out.iter().any(|o| o.name() == t.name()) {
                out.push(t);
            }
        }
    }
    Ok(out)
}

/// The other machines of `targets` (the sidebar always shows this one too).
pub(crate) fn remotes(targets: &[Target]) -> Vec<Host> {
    targets
        .iter()
        .filter_map(|t| match t {
            Target::Remote(h) => Some(h.clone()),
            Target::Local => None,
        })
        .collect()
}

/// The one machine an action names: `local` when no `--host` was given.
pub(crate) fn one_target(given: &[String]) -> Result<Target, HostError> {
    match targets(given, false)?.as_slice() {
        [t] => Ok(t.clone()),
        _ => Err(HostError::OneHost(
            "an action runs on one host: give --host once".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(n: &str) -> Host {
        Host::ad_hoc(HostName::parse(n).unwrap(), format!("{n}.example"))
    }

    #[test]
    fn names() {
        assert_eq!(HostName::parse("Build-2").unwrap().as_str(), "build-2");
        for bad in ["", "-a", "a b", "a.b", "a/b", "é", &"x".repeat(33), "a\n"] {
            assert!(HostName::parse(bad).is_err(), "{bad:?}");
        }
        assert!(HostName::parse("LOCAL").unwrap().is_local());
    }

    #[test]
    fn a_destination_given_as_a_name_is_told_the_name_equals_dest_form() {
        let file = vec![host("a"), host("build")];
        let said = |g: &str| match choose(&[g.to_string()], &file, false) {
            Err(e @ HostError::NotInFile { .. }) => e.to_string(),
            other => panic!("{g}: {other:?}"),
        };
        let t = said("build2.example.com");
        assert!(
            t.starts_with("build2.example.com is not in the hosts file"),
            "{t}"
        );
        assert!(t.contains("say --host build2=build2.example.com"), "{t}");
        assert!(said("me@gpu.lan:22").contains("--host gpu=me@gpu.lan:22"));
        assert!(said("ssh://me@[::1]:2222").contains("--host NAME=ssh://me@[::1]:2222"));
        // A name the file has, or `local`, is not offered again.
        assert!(said("build.example.com").contains("--host NAME=build.example.com"));
        assert!(said("local.lan").contains("--host NAME=local.lan"));
        // Not a destination either: refused as a bad name, nothing echoed raw.
        assert!(matches!(
            choose(&["$(x).b".into()], &file, false),
            Err(HostError::BadName(_))
        ));
    }

    #[test]
    fn choosing_hosts() {
        let file = vec![host("a"), host("b")];
        let names = |v: Vec<Target>| v.iter().map(|t| t.name().to_string()).collect::<Vec<_>>();
        assert_eq!(names(choose(&[], &file, false).unwrap()), ["local"]);
        assert_eq!(
            names(choose(&[], &file, true).unwrap()),
            ["local", "a", "b"]
        );
        let given = vec![
            "b".to_string(),
            "local".into(),
            "B".into(),
            "c=u@c.example".into(),
        ];
        assert_eq!(
            names(choose(&given, &file, true).unwrap()),
            ["b", "local", "c"]
        );
        assert!(matches!(
            choose(&["z".into()], &file, false),
            Err(HostError::Unknown(_))
        ));
        assert!(matches!(
            choose(&["a=x".into()], &file, false),
            Err(HostError::Shadows(_))
        ));
        assert!(matches!(
            choose(&["local=x".into()], &file, false),
            Err(HostError::Shadows(_))
        ));
        assert!(matches!(
            choose(&["c=-oProxyCommand=sh".into()], &file, false),
            Err(HostError::BadDest(_))
        ));
    }
}
