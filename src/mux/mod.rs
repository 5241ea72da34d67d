//! Multiplexers behind one trait: tmux (`tmux.rs`) and Herdr (`herdr.rs`).
//!
//! Why one trait: every later action (monitor placement, reply, close) needs one safe way to
//! address a pane, and nothing outside `mux/` may build a tmux argv or a Herdr request. Every call
//! is blocking and takes a deadline; a multiplexer that cannot be asked yields an error whose
//! fixed code the scan turns into `unknown`, never into a guess.

pub mod herdr;
pub mod pi_channel;
pub mod session;
pub mod spawn;
pub mod tmux;

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::proc;

/// The tmux user option (and Herdr metadata token) that marks a pane we created and own.
pub const MARKER_OPTION: &str = "@intercom-pane-owner";

/// Which multiplexer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MuxKind {
    Tmux,
    Herdr,
}

impl MuxKind {
    /// Lowercase name, as JSON shows it.
    pub fn name(self) -> &'static str {
        match self {
            MuxKind::Tmux => "tmux",
            MuxKind::Herdr => "herdr",
        }
    }

    /// The `workspaceSource` value for a workspace taken from a pane's cwd.
    pub fn workspace_source(self) -> &'static str {
        match self {
            MuxKind::Tmux => "tmux-pane",
            MuxKind::Herdr => "herdr-pane",
        }
    }
}

/// Fixed, content-free error codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// The multiplexer program is not installed (or not on PATH).
    NotInstalled,
    /// The installed version is older than we support.
    TooOld,
    /// No server answers on the socket (missing socket, dead socket, refused).
    NoServer,
    /// The call did not finish before its deadline.
    Timeout,
    /// The multiplexer ran and reported a failure.
    Failed,
    /// The pane does not exist.
    PaneNotFound,
    /// The reply could not be parsed or did not validate.
    BadReply,
    /// We refused to send the request (invalid id, text too long, ...).
    BadRequest,
    /// Herdr refused to prompt an agent that shows a dialog.
    AgentBlocked,
}

impl ErrorCode {
    /// The code as users and JSON see it.
    pub fn code(self) -> &'static str {
        match self {
            ErrorCode::NotInstalled => "not_installed",
            ErrorCode::TooOld => "too_old",
            ErrorCode::NoServer => "no_server",
            ErrorCode::Timeout => "timeout",
            ErrorCode::Failed => "failed",
            ErrorCode::PaneNotFound => "pane_not_found",
            ErrorCode::BadReply => "bad_reply",
            ErrorCode::BadRequest => "bad_request",
            ErrorCode::AgentBlocked => "agent_blocked",
        }
    }
}

/// An error from a multiplexer call: a fixed code plus a short, sanitized detail for logs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MuxError {
    pub code: ErrorCode,
    /// Sanitized, at most 200 characters; may quote the multiplexer's own message.
    pub detail: String,
}

impl MuxError {
    /// Build an error, sanitizing and bounding the detail.
    pub fn new(code: ErrorCode, detail: impl AsRef<str>) -> MuxError {
        let clean = crate::text::sanitize(detail.as_ref());
        let e = MuxError {
            code,
            detail: clean.trim().chars().take(200).collect(),
        };
        crate::log::event(
            crate::log::event::MUX_ERROR,
            serde_json::json!({"code": e.code(), "detail": e.detail}),
        );
        e
    }

    /// The fixed code string.
    pub fn code(&self) -> &'static str {
        self.code.code()
    }
}

impl std::fmt::Display for MuxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.detail.is_empty() {
            f.write_str(self.code())
        } else {
            write!(f, "{}: {}", self.code(), self.detail)
        }
    }
}

impl std::error::Error for MuxError {}

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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

/// A new pane above an existing one, without taking focus.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitAbove {
    /// The pane to split (the coordinator's).
    pub target: String,
    /// Height of the new pane in percent of the target's (1..=99).
    pub percent: u8,
    pub cwd: Option<PathBuf>,
    /// Program and arguments to run in the new pane (never through a shell on tmux).
    pub argv: Vec<String>,
    pub env: Vec<(String, String)>,
}

/// A new window (tmux) or tab (Herdr) in the session or workspace of `beside`, without focus.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewWindow {
    /// A pane whose session (tmux) or workspace (Herdr) gets the new window.
    pub beside: String,
    /// The window or tab name.
    pub name: String,
    pub cwd: PathBuf,
    /// Program and arguments (tmux: run directly, never through a shell; Herdr: typed into the
    /// new tab's shell as one quoted line).
    pub argv: Vec<String>,
    pub env: Vec<(String, String)>,
}

/// Environment names a multiplexer may be asked to set: a shell-safe identifier.
pub fn valid_env_name(k: &str) -> bool {
    !k.is_empty()
        && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && k.bytes().next().is_some_and(|b| !b.is_ascii_digit())
}

/// One multiplexer server. Object-safe and blocking; every call finishes by its deadline.
pub trait Multiplexer: Send + Sync {
    /// Which multiplexer this is.
    fn kind(&self) -> MuxKind;
    /// The socket this client addresses.
    fn socket_path(&self) -> &Path;
    /// The server's identity (tmux: pid + start time; Herdr: version + protocol).
    fn server_identity(&self, deadline: Instant) -> Result<ServerIdentity, MuxError>;
    /// Every pane of the server in one batched query.
    fn list_panes(&self, deadline: Instant) -> Result<PaneList, MuxError>;
    /// The pane with exactly this id (`Ok(None)` when absent from a successful answer).
    fn find_pane(&self, pane_id: &str, deadline: Instant) -> Result<Option<PaneInfo>, MuxError>;
    /// A new pane above `req.target` without focus, running `req.argv`; returns the new pane.
    fn split_above(&self, req: &SplitAbove, deadline: Instant) -> Result<PaneInfo, MuxError>;
    /// Set our ownership marker on a pane.
    fn set_marker(&self, pane_id: &str, value: &str, deadline: Instant) -> Result<(), MuxError>;
    /// Read our ownership marker (`Ok(None)` when unset; `PaneNotFound` when the pane is gone).
    fn read_marker(&self, pane_id: &str, deadline: Instant) -> Result<Option<String>, MuxError>;
    /// Name a pane (tmux pane title; Herdr label).
    fn rename(&self, pane_id: &str, name: &str, deadline: Instant) -> Result<(), MuxError>;
    /// Swap two panes' places, focus unchanged; `true` when the layout changed.
    fn swap(&self, source: &str, target: &str, deadline: Instant) -> Result<bool, MuxError>;
    /// Deliver text to the pane as one bracketed paste, then a separate Enter (tmux: through
    /// `scripts/agent-send.sh`, `tmux::typed`, with its checks; Herdr: `agent.prompt`).
    fn send_text(&self, pane_id: &str, text: &str, deadline: Instant) -> Result<(), MuxError>;
    /// A new window (tab) beside `req.beside` without taking focus; returns its pane.
    fn new_window(&self, req: &NewWindow, deadline: Instant) -> Result<PaneInfo, MuxError>;
    /// Close the pane only if it still matches `expected` in every field, then verify.
    fn close_if_matches(
        &self,
        expected: &PaneIdentity,
        deadline: Instant,
    ) -> Result<CloseOutcome, MuxError>;
}

/// Open a client for a server of `kind` listening on `socket`.
pub fn open(kind: MuxKind, socket: &Path) -> Box<dyn Multiplexer> {
    match kind {
        MuxKind::Tmux => Box::new(tmux::Tmux::at_socket(socket)),
        MuxKind::Herdr => Box::new(herdr::Herdr::at_socket(socket)),
    }
}

/// The environment variables that point at candidate multiplexers. They only point: ownership
/// is decided by process ancestry (`owning_multiplexer`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MuxEnv {
    pub tmux: Option<String>,
    pub tmux_pane: Option<String>,
    pub tmux_tmpdir: Option<String>,
    pub herdr_env: bool,
    pub herdr_socket_path: Option<String>,
    pub herdr_pane_id: Option<String>,
    /// `HERDR_SESSION` as set, empty included (Herdr refuses an empty name).
    pub herdr_session: Option<String>,
    pub xdg_config_home: Option<String>,
    pub home: Option<String>,
}

impl MuxEnv {
    /// Read the variables through `get` (e.g. `|k| std::env::var(k).ok()`); empty counts as unset.
    pub fn from_vars(get: impl Fn(&str) -> Option<String>) -> MuxEnv {
        let g = |k: &str| get(k).filter(|v| !v.is_empty());
        MuxEnv {
            tmux: g("TMUX"),
            tmux_pane: g("TMUX_PANE"),
            tmux_tmpdir: g("TMUX_TMPDIR"),
            herdr_env: g("HERDR_ENV").as_deref() == Some("1"),
            herdr_socket_path: g("HERDR_SOCKET_PATH"),
            herdr_pane_id: g("HERDR_PANE_ID"),
            herdr_session: get("HERDR_SESSION"),
            xdg_config_home: g("XDG_CONFIG_HOME"),
            home: g("HOME"),
        }
    }

    /// This process's environment.
    pub fn from_process() -> MuxEnv {
        MuxEnv::from_vars(|k| std::env::var(k).ok())
    }
}

/// The multiplexer pane that owns a process, found by ancestry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    pub kind: MuxKind,
    pub socket_path: PathBuf,
    pub server: ServerIdentity,
    pub pane: PaneInfo,
    /// 0 when the pane's process is the process itself, 1 for its parent, and so on.
    pub depth: usize,
}

/// Which multiplexer pane owns `pid`: the pane whose process is `pid` or one of its ancestors.
/// `env` only names candidate servers (`$TMUX`; the Herdr server Herdr's own CLI would talk to,
/// inside a Herdr pane or not: `herdr::socket_from_env`); when both answer, the innermost (nearest ancestor) wins. One listing per
/// candidate server; `None` when no candidate's pane is an ancestor.
pub fn owning_multiplexer(pid: i32, env: &MuxEnv, deadline: Instant) -> Option<Owner> {
    let mut chain = vec![pid];
    chain.extend(proc::ancestors(pid, proc::MAX_DEPTH));
    let mut candidates: Vec<Box<dyn Multiplexer>> = Vec::new();
    if let Some(t) = env.tmux.as_deref().and_then(tmux::Tmux::from_tmux_env) {
        candidates.push(Box::new(t));
    }
    // No Herdr there costs one failed stat of its socket path, no connection.
    if let Some(h) = herdr::Herdr::from_env(env) {
        candidates.push(Box::new(h));
    }
    let mut best: Option<Owner> = None;
    for mux in candidates {
        let Ok(list) = mux.list_panes(deadline) else {
            continue;
        };
        let Some(server) = list.server else { continue };
        for pane in list.panes {
            let Some(depth) = pane.pid.and_then(|p| chain.iter().position(|&c| c == p)) else {
                continue;
            };
            let better = match &best {
                None => true,
                Some(b) => depth < b.depth,
            };
            if better {
                best = Some(Owner {
                    kind: mux.kind(),
                    socket_path: mux.socket_path().to_path_buf(),
                    server: server.clone(),
                    pane,
                    depth,
                });
            }
        }
    }
    best
}

/// Whether a seat's agent is running.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Liveness {
    Alive,
    Offline,
    Unknown,
}

/// The process name pi gives itself, as `pane_current_command` shows it.
pub const PI_COMMAND: &str = "pi";

pub use crate::text::shell_quote;

/// A command line for a shell that runs exactly `argv` (each word quoted).
pub fn shell_line(argv: &[String]) -> String {
    argv.iter()
        .map(|a| shell_quote(a))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pane(id: &str, session: &str, cmd: &str) -> PaneInfo {
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

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("abc"), "abc");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_line(&["x".into(), "a;b".into()]), "x 'a;b'");
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
