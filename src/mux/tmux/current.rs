//! A kept pane listing brought up to date without running tmux (docs/interop.md §7a): the two
//! values tmux itself computes from `/proc` at format time, `#{pane_current_command}` and
//! `#{pane_current_path}`, computed here the way tmux 3.3a does (`osdep-linux.c`, `names.c`):
//! the foreground process group of the pane's terminal (its shell's `tpgid`), the first string of
//! that group leader's `/proc/<pgrp>/cmdline` as `parse_window_name` cleans it, and its cwd.
//!
//! A live view keeps a server's listing while the server's control client listens (it reports
//! panes and windows coming and going); what no notification reports is a pane's command
//! changing, which this refresh covers. A pane whose shell is gone cannot be brought up to date:
//! the caller lists again.

use std::collections::hash_map::DefaultHasher;
use std::hash::Hasher;
use std::path::Path;

use crate::mux::{PaneInfo, PaneList};

/// Longest `cmdline` read (tmux reads only up to the first NUL).
const CMDLINE_CAP: u64 = 64 * 1024;

/// tmux's `parse_window_name`: drop a leading `"` and everything from the next `"`, an `exec `
/// prefix, leading spaces and dashes, everything from the first space, trailing characters that
/// are neither alphanumeric nor punctuation, and take the base name of a path.
pub(crate) fn parse_window_name(input: &str) -> String {
    // Byte by byte, as tmux does.
    let mut name = input.as_bytes();
    name = name.strip_prefix(b"\"").unwrap_or(name);
    if let Some(i) = name.iter().position(|&b| b == b'"') {
        name = &name[..i];
    }
    name = name.strip_prefix(b"exec ").unwrap_or(name);
    while let [b' ' | b'-', rest @ ..] = name {
        name = rest;
    }
    if let Some(i) = name.iter().position(|&b| b == b' ') {
        name = &name[..i];
    }
    // Trailing bytes that are neither alphanumeric nor punctuation go; never the first byte.
    while let [head @ .., last] = name {
        if head.is_empty() || last.is_ascii_alphanumeric() || last.is_ascii_punctuation() {
            break;
        }
        name = head;
    }
    let name = String::from_utf8_lossy(name).into_owned();
    if name.starts_with('/') {
        return Path::new(&name)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or(name);
    }
    name
}

/// The first string of `/proc/<pid>/cmdline`, as tmux reads it (only that far: a command line
/// whose first string fits the buffer is read without allocating).
fn first_arg(pid: i32) -> Option<String> {
    let mut buf = [0u8; 1024];
    let (bytes, whole) = crate::proc::read_into(pid, "cmdline", &mut buf)?;
    let first = match bytes.iter().position(|&b| b == 0) {
        Some(end) => &bytes[..end],
        None if whole => bytes,
        None => {
            let path = format!("/proc/{pid}/cmdline");
            let bytes = crate::fsguard::read_capped(Path::new(&path), CMDLINE_CAP).ok()?;
            let first = bytes.split(|&b| b == 0).next()?;
            return Some(String::from_utf8_lossy(first).into_owned());
        }
    };
    Some(String::from_utf8_lossy(first).into_owned())
}

/// What `refresh` read from `/proc` for one live pane, in a few bytes: its shell, its
/// terminal's foreground group, that group leader's start and kernel name, and a hash of the
/// folder it took. A live view's timer check compares these (`ProcSide::holds`), never the
/// listing's own strings, which have gone cold in memory by then.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Vitals {
    shell: i32,
    tpgid: i32,
    leader_ticks: u64,
    leader_comm: [u8; 16],
    cwd: u64,
}

/// The `/proc` side of a refreshed listing: the server's pid and each live pane's vitals.
/// Equal vitals give an equal refreshed listing, but for a foreground process that rewrites its
/// own `argv[0]` without an `exec` or a new kernel name (docs/behaviour.md §3a).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ProcSide {
    server_pid: Option<i32>,
    panes: Vec<Vitals>,
}

impl ProcSide {
    /// Whether `/proc` still says what it said: the server runs exactly these panes' shells (no
    /// pane split where the control client does not hear) and each pane's vitals are the same.
    pub(crate) fn holds(&self) -> bool {
        let shells = self.panes.iter().map(|v| v.shell);
        self.server_pid.is_none_or(|pid| children_are(pid, shells))
            && self
                .panes
                .iter()
                .all(|v| vitals_of(v.shell).is_some_and(|(now, _)| now == *v))
    }
}

/// A pane's vitals now and the folder they hashed; `None` when its shell is gone.
fn vitals_of(shell: i32) -> Option<(Vitals, Option<std::path::PathBuf>)> {
    use std::os::unix::ffi::OsStrExt;
    let st = crate::proc::read_stat(shell)?;
    if st.is_gone_state() {
        return None;
    }
    let mut v = Vitals {
        shell,
        tpgid: st.tpgid,
        leader_ticks: 0,
        leader_comm: [0; 16],
        cwd: 0,
    };
    if st.tpgid <= 0 {
        return Some((v, None));
    }
    let other;
    let leader = if st.tpgid == shell {
        Some(&st)
    } else {
        other = crate::proc::read_stat(st.tpgid);
        other.as_ref()
    };
    if let Some(l) = leader {
        v.leader_ticks = l.start_ticks;
        let n = l.comm.len().min(16);
        v.leader_comm[..n].copy_from_slice(&l.comm.as_bytes()[..n]);
    }
    let cwd = crate::proc::cwd(st.tpgid).or_else(|| crate::proc::cwd(st.session));
    if let Some(c) = &cwd {
        let mut h = DefaultHasher::new();
        h.write(c.as_os_str().as_bytes());
        v.cwd = h.finish();
    }
    Some((v, cwd))
}

/// A pane's command and folder as tmux would print them now, from `/proc` (`None` for either:
/// the listing's value stands), and its vitals; `None` when its shell is gone (the pane closed
/// or died: list again).
fn now_of(p: &PaneInfo) -> Option<(Option<String>, Option<String>, Vitals)> {
    let (v, cwd) = vitals_of(p.pid?)?;
    if v.tpgid <= 0 {
        return Some((None, None, v));
    }
    // tmux falls back to what the pane was started with when the name is empty; the listing
    // already holds what tmux said, so it is kept then.
    let command = first_arg(v.tpgid)
        .filter(|n| !n.is_empty())
        .map(|n| parse_window_name(&n));
    Some((command, cwd.map(|c| c.display().to_string()), v))
}

/// Whether `server`'s child processes are exactly `shells`; `true` when the kernel offers no
/// children files (nothing to compare).
fn children_are(server: i32, shells: impl Iterator<Item = i32>) -> bool {
    let Some(mut children) = crate::proc::children_of(server) else {
        return true;
    };
    let mut shells: Vec<i32> = shells.collect();
    children.sort_unstable();
    shells.sort_unstable();
    shells.dedup();
    children == shells
}

/// Whether the server's child processes are exactly the listed panes' processes: a pane split
/// off in a session the control client is not attached to (tmux tells only that session's
/// clients) shows here as a new child. A job tmux runs for a format or `run-shell` shows too, and
/// only costs a listing.
fn same_panes(list: &PaneList) -> bool {
    let Some(crate::mux::ServerIdentity::Tmux { server_pid, .. }) = &list.server else {
        return true;
    };
    let shells = list.panes.iter().filter(|p| !p.dead).filter_map(|p| p.pid);
    children_are(*server_pid, shells)
}

/// `list` with every pane's command and folder as tmux would print them now, and what of
/// `/proc` that rests on; `None` when a pane's shell is gone or the server has a process no
/// listed pane runs (list again).
pub(crate) fn refresh(list: &PaneList) -> Option<(PaneList, ProcSide)> {
    if !same_panes(list) {
        return None;
    }
    let mut vitals = Vec::with_capacity(list.panes.len());
    let mut panes = Vec::with_capacity(list.panes.len());
    for p in &list.panes {
        let mut out = p.clone();
        if !p.dead {
            let (command, cwd, v) = now_of(p)?;
            if let Some(c) = command {
                out.current_command = Some(c);
            }
            if let Some(c) = cwd {
                out.cwd = Some(c);
            }
            vitals.push(v);
        }
        panes.push(out);
    }
    let server_pid = match &list.server {
        Some(crate::mux::ServerIdentity::Tmux { server_pid, .. }) => Some(*server_pid),
        _ => None,
    };
    Some((
        PaneList {
            server: list.server.clone(),
            panes,
        },
        ProcSide {
            server_pid,
            panes: vitals,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_cleaned_as_tmux_cleans_them() {
        for (input, want) in [
            ("pi", "pi"),
            ("-bash", "bash"),
            ("/usr/bin/node", "node"),
            ("exec sleep 30", "sleep"),
            ("\"quoted name\" x", "quoted"),
            ("vim  ", "vim"),
            ("  -  x", "x"),
            ("", ""),
            ("/", "/"),
        ] {
            assert_eq!(parse_window_name(input), want, "{input:?}");
        }
    }

    #[test]
    fn a_pane_is_refreshed_from_its_foreground_group_and_a_gone_one_is_not() {
        // A process in its own session has no terminal: tpgid -1, the listed values stay.
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pane = PaneInfo {
            pid: Some(child.id() as i32),
            cwd: Some("/listed".into()),
            session_name: None,
            ..PaneInfo::sample("%1", "", "listed")
        };
        let list = PaneList {
            server: None,
            panes: vec![pane],
        };
        let (fresh, side) = refresh(&list).unwrap();
        assert_eq!(fresh.panes[0].id, "%1");
        assert!(side.holds(), "nothing moved");
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(refresh(&list).is_none());
        assert!(!side.holds(), "the pane's process is gone");
    }
}
