//! Which multiplexer, and everything the rest of the program may know about one without asking
//! it: its names (wire, labels, words), what it can do (`Caps`), where its server listens, and
//! the checks a name or folder must pass before it is handed over. Code outside `mux/` asks
//! these, never `kind == MuxKind::…` (docs/architecture.md, "Adding a multiplexer").

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::MuxError;

/// Which multiplexer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MuxKind {
    Tmux,
    Herdr,
}

/// What a multiplexer can do, and how the program words its places. One value per kind, fixed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    /// The name in sentences (`tmux`, `Herdr`).
    pub label: &'static str,
    /// What it calls a session and a window (`session`/`window`; Herdr `workspace`/`tab`).
    pub session_word: &'static str,
    pub window_word: &'static str,
    /// Where `resume-worker` starts a worker, as its checks say it.
    pub resume_place: &'static str,
    /// A reply's transport name when no pi channel is ready (`reply`'s receipts).
    pub transport: &'static str,
    /// How long `Multiplexer::deliver` may take.
    pub deliver_within: Duration,
    /// Window names and start folders go into arguments it expands: `check_window_name` and
    /// `check_start_dir` refuse what it would not keep exactly.
    pub exact_names: bool,
    /// `split_above` splits above directly; else below, then the two panes are swapped (the
    /// monitor's `swap_pending` stage).
    pub splits_above: bool,
    /// A split runs its argv itself; else the command is typed into the new pane's shell (the
    /// monitor's `run_pending` stage).
    pub split_runs_argv: bool,
    /// A restarted server brings its panes back with their ids and labels (not their
    /// processes): a placed monitor is recognised by its record and relaunched in place.
    pub panes_survive_restart: bool,
    /// A pane keeps its id wherever it moves (tmux); else a move may renew it (Herdr, to
    /// another workspace), so a registration follows its pi at every event.
    pub stable_pane_ids: bool,
    /// A pane's identity includes a terminal id, renewed with its process (Herdr).
    pub terminal_ids: bool,
    /// `jump_to` moves a client (the caller's, so it needs the caller's pane on the same
    /// server); else it focuses the pane server-wide.
    pub jump_moves_a_client: bool,
    /// A pane event listener attaches to one session (tmux control mode); else one
    /// subscription covers the server (Herdr).
    pub events_per_session: bool,
    /// Pane processes are children of the server process (so the pty watch and the
    /// child-process compare work).
    pub panes_are_server_children: bool,
    /// A live view's listener may vouch for a kept listing (tmux control mode).
    pub listing_kept: bool,
    /// `grow_to` works.
    pub can_grow: bool,
    /// A status line and client messages the alerts use (`alerts::channels`).
    pub status_alerts: bool,
    /// A session of its own can be opened on its server from outside any pane (`restore`'s
    /// coordinator): tmux `new-session`, which starts the server when none answers; Herdr
    /// `workspace.create` on the server the person started.
    pub starts_sessions: bool,
    /// A sidebar may have been opened by a key of ours (the tmux plugin's `prefix M`), marked
    /// like ensure-monitor's and unrecorded: a placement takes it instead of a second one.
    pub key_opens_sidebars: bool,
}

const TMUX: Caps = Caps {
    label: "tmux",
    session_word: "session",
    window_word: "window",
    resume_place: "tmux session named like the worker",
    transport: "typed",
    deliver_within: super::tmux::typed::TOOL_DEADLINE,
    exact_names: true,
    splits_above: true,
    split_runs_argv: true,
    panes_survive_restart: false,
    stable_pane_ids: true,
    terminal_ids: false,
    jump_moves_a_client: true,
    events_per_session: true,
    panes_are_server_children: true,
    listing_kept: true,
    can_grow: true,
    status_alerts: true,
    starts_sessions: true,
    key_opens_sidebars: true,
};

const HERDR: Caps = Caps {
    label: "Herdr",
    session_word: "workspace",
    window_word: "tab",
    resume_place: "tab beside it",
    transport: "herdr",
    deliver_within: Duration::from_secs(8),
    exact_names: false,
    splits_above: false,
    split_runs_argv: false,
    panes_survive_restart: true,
    stable_pane_ids: false,
    terminal_ids: true,
    jump_moves_a_client: false,
    events_per_session: false,
    panes_are_server_children: false,
    listing_kept: false,
    can_grow: false,
    status_alerts: false,
    starts_sessions: true,
    key_opens_sidebars: false,
};

impl MuxKind {
    /// Every multiplexer this build drives.
    pub const ALL: [MuxKind; 2] = [MuxKind::Tmux, MuxKind::Herdr];

    /// The multiplexer the Intercom roster's own seat hints name: a seat's `tmux` socket and
    /// session, and the conventional session named like the agent on the default server.
    pub const ROSTER: MuxKind = MuxKind::Tmux;

    /// The multiplexer the shared `--tmux-socket` flag names.
    pub const SOCKET_FLAG: MuxKind = MuxKind::Tmux;

    /// Lowercase name, as JSON shows it.
    pub fn name(self) -> &'static str {
        match self {
            MuxKind::Tmux => "tmux",
            MuxKind::Herdr => "herdr",
        }
    }

    /// The kind named `name` (`name()`), if this build drives it.
    pub fn parse(name: &str) -> Option<MuxKind> {
        MuxKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// What it can do.
    pub fn caps(self) -> &'static Caps {
        match self {
            MuxKind::Tmux => &TMUX,
            MuxKind::Herdr => &HERDR,
        }
    }

    /// The board files' code for a folder read from a live pane (`tmux-pane`).
    pub fn pane_source(self) -> &'static str {
        match self {
            MuxKind::Tmux => "tmux-pane",
            MuxKind::Herdr => "herdr-pane",
        }
    }

    /// Where a server named by a seat's `hint` listens. tmux: a path, a `-L` name, or (none)
    /// `default_tmux`, this process's own server, the default one (`tmux::resolve_socket`);
    /// Herdr: the path itself.
    pub fn server_socket(self, hint: Option<&str>, default_tmux: Option<&Path>) -> Option<PathBuf> {
        match self {
            MuxKind::Tmux => super::tmux::resolve_socket(hint, default_tmux),
            MuxKind::Herdr => hint.map(PathBuf::from),
        }
    }

    /// The server a reply to a pane registered with socket `hint` goes to (tmux: as the
    /// delivery tool resolves it, `tmux::typed::tool_socket`), or the refusal's words.
    pub fn delivery_socket(self, hint: Option<&str>) -> Result<PathBuf, MuxError> {
        match self {
            MuxKind::Tmux => super::tmux::typed::tool_socket(hint),
            MuxKind::Herdr => hint.map(PathBuf::from).ok_or_else(|| {
                MuxError::new(
                    super::ErrorCode::BadRequest,
                    "the registration names no Herdr socket",
                )
            }),
        }
    }

    /// A window (tab) name exactly as the multiplexer will keep it, or why not (tmux:
    /// `tmux::literal`, the one rule for data in expanded arguments).
    pub fn check_window_name(self, name: &str) -> Result<(), MuxError> {
        match self {
            MuxKind::Tmux => super::tmux::literal::window_name(name).map(|_| ()),
            MuxKind::Herdr => Ok(()),
        }
    }

    /// A start folder exactly as the multiplexer will use it, or why not.
    pub fn check_start_dir(self, dir: &Path) -> Result<(), MuxError> {
        match self {
            MuxKind::Tmux => super::tmux::literal::start_dir(dir).map(|_| ()),
            MuxKind::Herdr => Ok(()),
        }
    }

    /// What a person runs (or reads) to go to `pane` on the server at `socket`, as
    /// `jump --print` shows it.
    pub fn jump_hint(self, socket: &Path, pane: &str) -> String {
        match self {
            MuxKind::Tmux => super::shell_line(&[
                "tmux".to_string(),
                "-S".into(),
                socket.display().to_string(),
                "switch-client".into(),
                "-t".into(),
                pane.to_string(),
            ]),
            MuxKind::Herdr => format!(
                "herdr pane {} (socket {})",
                crate::text::sanitize(pane),
                crate::text::sanitize(&socket.display().to_string())
            ),
        }
    }

    /// This process's own pane on the server at `socket`, from the variables the multiplexer
    /// set, when `jump_to` needs it (`Caps::jump_moves_a_client`).
    pub fn own_pane_on(self, socket: &Path) -> Option<String> {
        match self {
            MuxKind::Tmux => super::tmux::own_pane_on(socket),
            MuxKind::Herdr => None,
        }
    }
}
