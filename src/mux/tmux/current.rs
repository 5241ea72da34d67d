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

/// The first string of `/proc/<pid>/cmdline`, as tmux reads it.
fn first_arg(pid: i32) -> Option<String> {
    let path = format!("/proc/{pid}/cmdline");
    let bytes = crate::fsguard::read_capped(Path::new(&path), CMDLINE_CAP).ok()?;
    let first = bytes.split(|&b| b == 0).next()?;
    Some(String::from_utf8_lossy(first).into_owned())
}

/// One pane's command and folder now, from `/proc`; `None` when its shell is gone (the pane
/// closed or died: list again).
fn refresh_pane(p: &PaneInfo) -> Option<PaneInfo> {
    let shell = p.pid?;
    let st = crate::proc::read_stat(shell)?;
    if st.is_gone_state() {
        return None;
    }
    let mut out = p.clone();
    if st.tpgid > 0 {
        // tmux falls back to what the pane was started with when the name is empty; the listing
        // already holds what tmux said, so it is kept then.
        if let Some(name) = first_arg(st.tpgid).filter(|n| !n.is_empty()) {
            out.current_command = Some(parse_window_name(&name));
        }
        let cwd = crate::proc::cwd(st.tpgid).or_else(|| crate::proc::cwd(st.session));
        if let Some(c) = cwd {
            out.cwd = Some(c.display().to_string());
        }
    }
    Some(out)
}

/// Whether the server's child processes are exactly the listed panes' processes: a pane split
/// off in a session the control client is not attached to (tmux tells only that session's
/// clients) shows here as a new child. A job tmux runs for a format or `run-shell` shows too, and
/// only costs a listing. `true` when the kernel offers no children files (nothing to compare).
fn same_panes(list: &PaneList) -> bool {
    let Some(crate::mux::ServerIdentity::Tmux { server_pid, .. }) = &list.server else {
        return true;
    };
    let Some(mut children) = crate::proc::children_of(*server_pid) else {
        return true;
    };
    let mut panes: Vec<i32> = list
        .panes
        .iter()
        .filter(|p| !p.dead)
        .filter_map(|p| p.pid)
        .collect();
    children.sort_unstable();
    panes.sort_unstable();
    panes.dedup();
    children == panes
}

/// `list` with every pane's command and folder as tmux would print them now, or `None` when a
/// pane's shell is gone or the server has a process no listed pane runs (list again).
pub(crate) fn refresh(list: &PaneList) -> Option<PaneList> {
    if !same_panes(list) {
        return None;
    }
    let panes = list
        .panes
        .iter()
        .map(|p| {
            if p.dead {
                Some(p.clone())
            } else {
                refresh_pane(p)
            }
        })
        .collect::<Option<Vec<_>>>()?;
    Some(PaneList {
        server: list.server.clone(),
        panes,
    })
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
        let fresh = refresh(&list).unwrap();
        assert_eq!(fresh.panes[0].id, "%1");
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(refresh(&list).is_none());
    }
}
