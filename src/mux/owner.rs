//! Which multiplexer pane owns a process: the environment only names candidate servers, the
//! process ancestry decides.

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::{herdr, tmux, ErrorCode, Multiplexer, MuxError, MuxKind, PaneInfo, ServerIdentity};
use crate::proc;

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
    /// Variables that point at one server only (`kind` at `socket`): for finding a pane by its
    /// process there when this process runs outside it (`spawn` placing the coordinator's
    /// sidebar).
    pub fn pointing_at(kind: MuxKind, socket: &Path) -> MuxEnv {
        let socket = socket.to_string_lossy().into_owned();
        match kind {
            MuxKind::Tmux => MuxEnv {
                tmux: Some(format!("{socket},0,0")),
                ..MuxEnv::default()
            },
            MuxKind::Herdr => MuxEnv {
                herdr_socket_path: Some(socket),
                ..MuxEnv::default()
            },
        }
    }

    /// By the variables alone: whether they say this runs in a multiplexer pane, and Herdr when
    /// Herdr's say so (`None` otherwise: the caller's default).
    pub fn inside(&self) -> (bool, Option<MuxKind>) {
        let herdr = self.herdr_env || self.herdr_pane_id.is_some();
        (
            self.tmux.is_some() || herdr,
            herdr.then_some(MuxKind::Herdr),
        )
    }

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
    let chain = chain_of(pid);
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
        let Ok(Some(found)) = owner_in(mux.as_ref(), &chain, deadline) else {
            continue;
        };
        if best.as_ref().is_none_or(|b| found.depth < b.depth) {
            best = Some(found);
        }
    }
    best
}

/// Where `pid` is now on one server: the pane `recorded` names while it still holds `pid`
/// under that same id (one pane lookup; its session and window as they are now), else the pane
/// a fresh listing finds holding it (the pane whose process is `pid` or its nearest ancestor;
/// a tmux pane may change window). A Herdr pane moved to another
/// workspace answers its old id with its new one, so it is found by the listing.
pub(crate) fn follow_pane(
    mux: &dyn Multiplexer,
    recorded: Option<&str>,
    pid: i32,
    deadline: Instant,
) -> Result<Option<Owner>, MuxError> {
    let chain = chain_of(pid);
    if let Some(id) = recorded {
        if let Some(pane) = mux.find_pane(id, deadline)? {
            let depth = pane.pid.and_then(|p| chain.iter().position(|&c| c == p));
            if let (true, Some(depth)) = (pane.id == id, depth) {
                return Ok(Some(Owner {
                    kind: mux.kind(),
                    socket_path: mux.socket_path().to_path_buf(),
                    server: mux.server_identity(deadline)?,
                    pane,
                    depth,
                }));
            }
        }
    }
    owner_in(mux, &chain, deadline)
}

/// `pid` and its ancestors, nearest first.
fn chain_of(pid: i32) -> Vec<i32> {
    let mut chain = vec![pid];
    chain.extend(proc::ancestors(pid, proc::MAX_DEPTH));
    chain
}

/// The pane of `mux` whose process is nearest in `chain` (one listing).
fn owner_in(
    mux: &dyn Multiplexer,
    chain: &[i32],
    deadline: Instant,
) -> Result<Option<Owner>, MuxError> {
    let list = mux.list_panes(deadline)?;
    let server = list
        .server
        .ok_or_else(|| MuxError::new(ErrorCode::BadReply, "listing without a server identity"))?;
    let best = list
        .panes
        .into_iter()
        .filter_map(|pane| {
            let depth = pane.pid.and_then(|p| chain.iter().position(|&c| c == p))?;
            Some((depth, pane))
        })
        .min_by_key(|(depth, _)| *depth);
    Ok(best.map(|(depth, pane)| Owner {
        kind: mux.kind(),
        socket_path: mux.socket_path().to_path_buf(),
        server,
        pane,
        depth,
    }))
}

/// A server we may act through (type into, close a pane of): its socket is ours (owner uid, not
/// a link) and, when its pid is known, so is its process. Another user's server could show us
/// anything and would run what we type as that user (docs/behaviour.md §6).
pub fn server_is_ours(socket: &std::path::Path, server_pid: Option<i32>) -> Result<(), MuxError> {
    use std::os::unix::fs::MetadataExt;
    let shown = crate::text::clip(&crate::text::sanitize(&socket.to_string_lossy()), 120);
    let me = crate::fsguard::my_uid();
    match std::fs::symlink_metadata(socket) {
        Ok(m) if m.file_type().is_symlink() => {
            return Err(MuxError::new(
                ErrorCode::NotOurs,
                format!("the server socket {shown} is a link"),
            ))
        }
        Ok(m) if m.uid() != me => {
            return Err(MuxError::new(
                ErrorCode::NotOurs,
                format!(
                    "the server socket {shown} belongs to uid {}, not to you",
                    m.uid()
                ),
            ))
        }
        Ok(_) => {}
        Err(_) => {
            return Err(MuxError::new(
                ErrorCode::NoServer,
                format!("no server socket at {shown}"),
            ))
        }
    }
    if let Some(pid) = server_pid {
        if !proc::is_ours(pid) {
            return Err(MuxError::new(
                ErrorCode::NotOurs,
                format!("the server process {pid} runs as another user"),
            ));
        }
    }
    Ok(())
}
