//! What names a pane: as a multiplexer lists it (`PaneInfo`), its server incarnation
//! (`ServerIdentity`) and one pane incarnation (`PaneIdentity`) that a compare-and-close checks.

use serde::{Deserialize, Serialize};

use super::MuxKind;

/// One pane as the multiplexer reports it. Strings that are only shown (`current_command`,
/// `window_name`, `title`, `marker`) are sanitized; `session_name` and `cwd` are kept exact
/// (they are matched and used as paths) and must be sanitized by whoever shows them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PaneInfo {
    /// tmux `%N`; Herdr `w1:p2`.
    pub id: String,
    /// tmux `pane_pid`; Herdr `shell_pid`.
    pub pid: Option<i32>,
    pub tty: Option<String>,
    /// tmux `pane_current_command`; Herdr: the foreground process name.
    pub current_command: Option<String>,
    pub cwd: Option<String>,
    /// tmux `$N`; Herdr workspace id.
    pub session_id: String,
    /// tmux session name; Herdr workspace label.
    pub session_name: Option<String>,
    /// tmux `@N`; Herdr tab id.
    pub window_id: String,
    pub window_name: Option<String>,
    pub top: Option<u32>,
    pub left: Option<u32>,
    pub width: Option<u32>,
    pub height: Option<u32>,
    /// tmux `pane_dead` (remain-on-exit); Herdr never reports dead panes.
    pub dead: bool,
    /// tmux pane title; Herdr label.
    pub title: Option<String>,
    /// Our ownership marker (`MARKER_OPTION`), when set.
    pub marker: Option<String>,
    /// Herdr only: changes when the pane's terminal is recreated.
    pub terminal_id: Option<String>,
}

/// Which server a pane lives on. tmux ids are unique only within one server lifetime, so a tmux
/// identity carries the server pid and start time; Herdr pane ids are never reused.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum ServerIdentity {
    Tmux {
        socket_path: String,
        server_pid: i32,
        start_time: i64,
    },
    Herdr {
        socket_path: String,
        version: String,
        protocol: u32,
    },
}

impl ServerIdentity {
    /// The identity a registration recorded from inside its pane (`register`): tmux's needs
    /// the server's pid and start time (`None` without them); Herdr's is its socket (the
    /// version and protocol unknown: empty and 0).
    pub fn registered(
        kind: MuxKind,
        socket: &str,
        server_pid: Option<i64>,
        server_start: Option<i64>,
    ) -> Option<ServerIdentity> {
        Some(match kind {
            MuxKind::Tmux => ServerIdentity::Tmux {
                socket_path: socket.to_string(),
                server_pid: i32::try_from(server_pid?).ok()?,
                start_time: server_start?,
            },
            MuxKind::Herdr => ServerIdentity::Herdr {
                socket_path: socket.to_string(),
                version: String::new(),
                protocol: 0,
            },
        })
    }

    /// Which multiplexer.
    pub fn kind(&self) -> MuxKind {
        match self {
            ServerIdentity::Tmux { .. } => MuxKind::Tmux,
            ServerIdentity::Herdr { .. } => MuxKind::Herdr,
        }
    }

    /// The socket the server listens on.
    pub fn socket_path(&self) -> &str {
        match self {
            ServerIdentity::Tmux { socket_path, .. }
            | ServerIdentity::Herdr { socket_path, .. } => socket_path,
        }
    }

    /// Same server incarnation: tmux needs socket, pid and start time equal; Herdr the socket
    /// (its panes carry `terminal_id`, and a live handoff may change the version).
    pub fn same_server(&self, other: &ServerIdentity) -> bool {
        match (self, other) {
            (ServerIdentity::Tmux { .. }, ServerIdentity::Tmux { .. }) => self == other,
            (
                ServerIdentity::Herdr { socket_path: a, .. },
                ServerIdentity::Herdr { socket_path: b, .. },
            ) => a == b,
            _ => false,
        }
    }
}

/// Everything that names one pane incarnation: server + pane + session + window (+ the pane's
/// process and, on Herdr, its terminal).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PaneIdentity {
    pub server: ServerIdentity,
    pub pane_id: String,
    pub session_id: String,
    pub window_id: String,
    pub pane_pid: Option<i32>,
    pub terminal_id: Option<String>,
}

impl PaneIdentity {
    /// The identity of `pane` on `server`.
    pub fn of(server: &ServerIdentity, pane: &PaneInfo) -> PaneIdentity {
        PaneIdentity {
            server: server.clone(),
            pane_id: pane.id.clone(),
            session_id: pane.session_id.clone(),
            window_id: pane.window_id.clone(),
            pane_pid: pane.pid,
            terminal_id: pane.terminal_id.clone(),
        }
    }

    /// The first field in which `pane` (on `server`) differs from this identity, if any.
    pub fn mismatch(&self, server: &ServerIdentity, pane: &PaneInfo) -> Option<&'static str> {
        if !self.server.same_server(server) {
            Some("server")
        } else if self.pane_id != pane.id {
            Some("pane_id")
        } else if self.session_id != pane.session_id {
            Some("session_id")
        } else if self.window_id != pane.window_id {
            Some("window_id")
        } else if self.pane_pid.is_some() && self.pane_pid != pane.pid {
            Some("pane_pid")
        } else if self.terminal_id.is_some() && self.terminal_id != pane.terminal_id {
            Some("terminal_id")
        } else {
            None
        }
    }
}

/// One listing of a server: its identity (when it could be read) and all its panes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaneList {
    pub server: Option<ServerIdentity>,
    pub panes: Vec<PaneInfo>,
}

/// What a compare-and-close did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CloseOutcome {
    /// The pane matched, was closed, and a fresh listing no longer shows it.
    Closed,
    /// Nothing was closed: the reason names the first field that differed.
    Refused(String),
    /// The pane (or its whole server) was already gone: nothing was closed.
    AlreadyGone,
    /// The close was sent but a fresh listing still shows the pane (or could not be read).
    Unverified(String),
}

#[cfg(test)]
impl PaneInfo {
    /// A listed pane for unit tests: pid 100 running `cmd` in `/w`, in session `session` (`$0`),
    /// window `@0`.
    pub(crate) fn sample(id: &str, session: &str, cmd: &str) -> PaneInfo {
        PaneInfo {
            id: id.into(),
            pid: Some(100),
            tty: None,
            current_command: Some(cmd.into()),
            cwd: Some("/w".into()),
            session_id: "$0".into(),
            session_name: Some(session.into()),
            window_id: "@0".into(),
            window_name: None,
            top: None,
            left: None,
            width: None,
            height: None,
            dead: false,
            title: None,
            marker: None,
            terminal_id: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{PaneIdentity, PaneInfo, ServerIdentity};

    fn pane(id: &str, session: &str, cmd: &str) -> PaneInfo {
        PaneInfo::sample(id, session, cmd)
    }

    #[test]
    fn identity_mismatch_names_the_field() {
        let s = ServerIdentity::Tmux {
            socket_path: "/s".into(),
            server_pid: 1,
            start_time: 2,
        };
        let p = pane("%1", "x", "pi");
        let id = PaneIdentity::of(&s, &p);
        assert_eq!(id.mismatch(&s, &p), None);
        let s2 = ServerIdentity::Tmux {
            socket_path: "/s".into(),
            server_pid: 1,
            start_time: 3,
        };
        assert_eq!(id.mismatch(&s2, &p), Some("server"));
        let mut p2 = p.clone();
        p2.pid = Some(101);
        assert_eq!(id.mismatch(&s, &p2), Some("pane_pid"));
        p2 = p.clone();
        p2.window_id = "@9".into();
        assert_eq!(id.mismatch(&s, &p2), Some("window_id"));
    }
}
