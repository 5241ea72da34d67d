//! Multiplexers behind one trait: tmux (`tmux/`) and Herdr (`herdr/`). Errors in `error.rs`, pane
//! and server identities in `identity.rs`, which pane owns a process in `owner.rs`.
//!
//! Why one trait: every later action (monitor placement, reply, close) needs one safe way to
//! address a pane, and nothing outside `mux/` may build a tmux argv or a Herdr request. Every call
//! is blocking and takes a deadline; a multiplexer that cannot be asked yields an error whose
//! fixed code the scan turns into `unknown`, never into a guess.

mod deliver;
mod error;
pub(crate) mod events;
pub(crate) mod herdr;
mod identity;
mod kind;
pub(crate) mod lines;
mod owner;
pub(crate) mod pi_channel;
pub(crate) mod pi_editor;
pub(crate) mod session;
pub(crate) mod spawn;
pub(crate) mod tmux;

pub(crate) use deliver::{PiText, Typed, Untyped};
pub use error::{ErrorCode, MuxError};
pub use identity::{CloseOutcome, PaneIdentity, PaneInfo, PaneList, ServerIdentity};
pub use kind::MuxKind;
pub(crate) use owner::{follow_pane, Owner};
pub use owner::{owning_multiplexer, server_is_ours, MuxEnv};

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};

/// How far past the caller's deadline a multiplexer call (or a pi channel request) may return:
/// killing and reaping a helper, draining its pipes and closing a socket, with margin for a
/// loaded 2-core machine. The calls check the deadline between steps; this is the promise the
/// tests hold them to.
pub const DEADLINE_OVERRUN: std::time::Duration = std::time::Duration::from_millis(1200);

/// The tmux user option (and Herdr metadata token) that marks a pane we created and own.
pub(crate) const MARKER_OPTION: &str = "@intercom-pane-owner";

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
    /// tmux: a detached session of its own on `beside`'s server instead, named like the window
    /// (`name`, then `name-2` … when taken), so it outlives the session of `beside` as the
    /// setup's one session per agent does. Herdr: ignored (a tab in the workspace).
    pub own_session: bool,
    /// The window or tab name.
    pub name: String,
    pub cwd: PathBuf,
    /// Program and arguments (tmux: run directly, never through a shell; Herdr: typed into the
    /// new tab's shell as one quoted line).
    pub argv: Vec<String>,
    pub env: Vec<(String, String)>,
}

/// Environment names a multiplexer may be asked to set: a shell-safe identifier.
pub(crate) fn valid_env_name(k: &str) -> bool {
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
    /// Type a reply into the pi `req.pi` in the pane `req.pane`, after every check made right
    /// before (the pane still holds that pi, nothing in pi's editor, no dialog), then submit it
    /// and check pi took it: `reply`'s path whenever no pi channel is ready (tmux:
    /// `scripts/agent-send.sh`, `tmux::typed`; Herdr: `agent.prompt`, `herdr::prompt`). Never
    /// retried. `Err` when nothing was typed.
    fn deliver(&self, req: &PiText<'_>, deadline: Instant) -> Result<Typed, Untyped>;
    /// A new window (tab) beside `req.beside` without taking focus; returns its pane.
    fn new_window(&self, req: &NewWindow, deadline: Instant) -> Result<PaneInfo, MuxError>;
    /// Close the pane only if it still matches `expected` in every field, then verify.
    fn close_if_matches(
        &self,
        expected: &PaneIdentity,
        deadline: Instant,
    ) -> Result<CloseOutcome, MuxError>;
    /// Take the person to `target` and check that it worked: tmux switches the client that
    /// shows `from` (the caller's own pane; without one, the attached client used last; never a
    /// control client) to `target`'s session, window and pane; Herdr focuses its workspace, tab
    /// and pane (`from` unused).
    fn jump_to(&self, target: &str, from: Option<&str>, deadline: Instant) -> Result<(), MuxError>;
    /// Make a pane at least `lines` tall, taking rows from its neighbours; `Ok(false)` when it
    /// already is. Herdr: not supported (an error).
    fn grow_to(&self, pane_id: &str, lines: u16, deadline: Instant) -> Result<bool, MuxError>;
    /// Whether someone looks at the pane now (tmux: the active pane of an attached client, a
    /// control client being a program; Herdr: the focused pane).
    fn looked_at(&self, pane_id: &str, deadline: Instant) -> Result<bool, MuxError>;
}

/// Open a client for a server of `kind` listening on `socket`.
pub(crate) fn open(kind: MuxKind, socket: &Path) -> Box<dyn Multiplexer> {
    match kind {
        MuxKind::Tmux => Box::new(tmux::Tmux::at_socket(socket)),
        MuxKind::Herdr => Box::new(herdr::Herdr::at_socket(socket)),
    }
}

/// A detached session of its own named like `req.name` on the server of `kind` at `socket`
/// (`beside` unused), that server started when none answers there; a server that answers must
/// be ours (`restore`'s coordinator, after the server died). Herdr: an unfocused workspace on the
/// server that answers there (none is started: `NoServer`).
pub(crate) fn open_first_session(
    kind: MuxKind,
    socket: &Path,
    req: &NewWindow,
    deadline: Instant,
) -> Result<PaneInfo, MuxError> {
    match kind {
        MuxKind::Tmux => {
            let client = tmux::Tmux::at_socket(socket);
            if let Ok(ServerIdentity::Tmux { server_pid, .. }) = client.server_identity(deadline) {
                server_is_ours(socket, Some(server_pid))?;
            }
            client.open_first_session(req, deadline)
        }
        // A Herdr server is the person's (their `herdr` starts it): restore uses one that answers
        // on the socket, and that socket must be theirs.
        MuxKind::Herdr => {
            let client = herdr::Herdr::at_socket(socket);
            server_is_ours(socket, None)?;
            client.ping(deadline)?;
            client.open_workspace(req, deadline)
        }
    }
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
pub(crate) const PI_COMMAND: &str = "pi";

pub(crate) use crate::text::shell_quote;

/// A command line for a shell that runs exactly `argv` (each word quoted).
pub fn shell_line(argv: &[String]) -> String {
    argv.iter()
        .map(|a| shell_quote(a))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::{shell_line, shell_quote};

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("abc"), "abc");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_line(&["x".into(), "a;b".into()]), "x 'a;b'");
    }
}
