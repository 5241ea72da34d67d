//! A seat as discovery finds it, and its evidence joins: session file, registration, liveness
//! hint, reply path.

use std::path::{Path, PathBuf};

use crate::board::provenance::{FoundBy, SessionTie};
use crate::board::reason::{StateReason, StateSource};
use crate::board::record::{SeatKey, TmuxRef};
use crate::evidence::connectors::Binding;
use crate::evidence::registrations::{in_sessions_dir, Registration, RegistrationSet, RunEvent};
use crate::evidence::sessions::{self, SessionMemo, SessionSummary};
use crate::fsguard::{self, Kind};
use crate::liveness;
use crate::mux::MuxKind;
use crate::snapshot::{PassError, RowRole};

/// One seat found by discovery, before any session file is read.
pub(super) struct SeatSource {
    pub(super) project: String,
    pub(super) agent: String,
    pub(super) role: RowRole,
    pub(super) session_file: Option<PathBuf>,
    pub(super) sessions_dir: Option<PathBuf>,
    /// Configured session id (Intercom agents): the file must confirm it.
    pub(super) session_id: Option<String>,
    /// A file named for this seat's session exists but was refused (a link, a FIFO...).
    pub(super) session_refused: Option<StateReason>,
    pub(super) tmux: TmuxRef,
    pub(super) agent_index: Option<usize>,
    pub(super) binding: Option<Binding>,
    /// Seats found from a pane's pi process: the pane, and where its session was found.
    pub(super) pane: Option<(liveness::ServerKey, String)>,
    pub(super) found_by: Option<FoundBy>,
    /// Seats found from a pane's pi: what ties it to its session file, and with `Undecided`
    /// the files that could be its.
    pub(super) tie: Option<SessionTie>,
    pub(super) candidates: Vec<PathBuf>,
}

/// A seat's session file: read, absent, or present but unusable (then the state is unknown).
pub(super) enum SessionRead {
    Read(Box<SessionSummary>),
    /// Read with the branch ending at the leaf pi's `/tree` moved to (from the registration).
    AtLeaf(Box<SessionSummary>),
    NoFile,
    Unusable(StateReason),
}

impl SessionRead {
    pub(super) fn summary(&self) -> Option<&SessionSummary> {
        match self {
            SessionRead::Read(s) | SessionRead::AtLeaf(s) => Some(s),
            _ => None,
        }
    }
}

pub(super) fn read_seat_session(
    seat: &SeatSource,
    memo: Option<&SessionMemo>,
    errors: &mut Vec<PassError>,
) -> SessionRead {
    let Some(path) = seat.session_file.as_ref() else {
        return match &seat.session_refused {
            Some(code) => SessionRead::Unusable(*code),
            None => SessionRead::NoFile,
        };
    };
    let code = match sessions::read_session_with(path, memo) {
        Ok(s) => match &seat.session_id {
            Some(want) if &s.session_id != want => StateReason::SessionIdMismatch,
            _ => return SessionRead::Read(Box::new(s)),
        },
        Err(e) => StateReason::SessionUnreadable(e),
    };
    errors.push(PassError::SeatSession {
        seat: SeatKey::new(&seat.project, &seat.agent),
        reason: code,
    });
    SessionRead::Unusable(code)
}

/// pi's `/tree` moves its leaf without writing anything; a live registration records where
/// (`session_tree`). While nothing has been written since (the file is no newer than that
/// record), the seat's branch ends there, not at the last line. Anything else keeps `session`.
pub(super) fn at_registered_leaf(
    session: SessionRead,
    r: &Registration,
    memo: Option<&SessionMemo>,
) -> SessionRead {
    let SessionRead::Read(s) = &session else {
        return session;
    };
    let Some(rs) = r.run_state.as_ref() else {
        return session;
    };
    let Some(leaf) = rs.leaf_id.as_deref() else {
        return session;
    };
    if rs.event != Some(RunEvent::SessionTree)
        || s.newest_entry_id.as_deref() == Some(leaf)
        || s.mtime_ms > rs.at
        || r.session_id.as_deref() != Some(s.session_id.as_str())
    {
        return session;
    }
    match sessions::read_session_from_leaf(&s.path, leaf, memo) {
        Ok(Some(at_leaf)) => SessionRead::AtLeaf(Box::new(at_leaf)),
        _ => session,
    }
}

/// The seat's registration (`RegistrationSet::by_session_id`, the one rule). A record from
/// outside the roster's own seats folder that names another session file or folder than the
/// board found for the seat (`folder`: a roster agent's configured folder) is another pi's
/// record of the same id: the seat has none.
pub(super) fn match_registration<'a>(
    seat: &SeatSource,
    folder: Option<&Path>,
    regs: &'a RegistrationSet,
    summary: Option<&SessionSummary>,
) -> Option<&'a Registration> {
    if seat.role == RowRole::Connector {
        return None;
    }
    if let Some(id) = seat
        .session_id
        .as_deref()
        .or(summary.map(|s| s.session_id.as_str()))
    {
        if regs.by_session_id(id).is_some() {
            return regs.of_seat(id, seat.session_file.as_deref(), folder);
        }
    }
    seat.sessions_dir
        .as_deref()
        .and_then(|d| regs.by_sessions_dir(d))
}

/// The session file a live registration names for a layout seat, when it differs from the one
/// picked by name: pi appends to the session it is in, and after `/resume` (or `--session`) that
/// is an older-named file; after `/new` it is a file pi has not written yet (`Some(None)`: the
/// seat is in a fresh session with nothing in it, not in the old one). Only a live registration
/// whose file sits in the seat's own sessions folder counts; Intercom seats stay pinned to their
/// configured id (`own_session_file`; `folder`: a roster agent's configured folder). `None`:
/// keep the file found by name.
pub(super) fn registered_session_file(
    seat: &SeatSource,
    regs: &RegistrationSet,
    folder: Option<&Path>,
) -> Option<Option<PathBuf>> {
    if seat.session_id.is_some() {
        return own_session_file(seat, regs, folder);
    }
    if seat.role != RowRole::Seat {
        return None;
    }
    let dir = seat.sessions_dir.as_deref()?;
    let r = regs.by_sessions_dir(dir)?;
    let file = PathBuf::from(r.session_file.as_deref()?);
    if !file.parent().is_some_and(|p| in_sessions_dir(p, dir))
        || file.extension().is_none_or(|e| e != "jsonl")
        || seat.session_file.as_deref() == Some(file.as_path())
        || r.alive() != Some(true)
    {
        return None;
    }
    file_named_by_registration(file)
}

/// The session file a live registration names: `Some(Some)` a regular file, `Some(None)` not
/// written yet (pi writes nothing before its first prompt), `None` a link, a FIFO, unreadable:
/// the registration proves nothing readable.
pub(super) fn file_named_by_registration(file: PathBuf) -> Option<Option<PathBuf>> {
    match fsguard::kind(&file) {
        Ok(Kind::File) => Some(Some(file)),
        Err(fsguard::FsError::NotFound) => Some(None),
        _ => None,
    }
}

/// A roster agent's file as its live registration names it (named for the configured id, a
/// regular file), whatever folders the board's own environment searches: pi wrote it where
/// pi's environment said (docs/behaviour.md §1).
/// - The record in the roster's own seats folder names it even when several files carry the
///   id (another pi started with the same `--session-id` in another folder writes its own):
///   the newest file by time is only the fallback, it may be the other pi's.
/// - A record from outside (the data root: pi registered before the roster named it) counts
///   only when the board found no file of the id at all and the record's pi runs in the
///   agent's own folder (`Registration::matches_seat`).
///
/// Before pi's first prompt the named file does not exist yet (`Some(None)`): the agent has
/// no transcript, whatever another pi wrote under the same id.
fn own_session_file(
    seat: &SeatSource,
    regs: &RegistrationSet,
    folder: Option<&Path>,
) -> Option<Option<PathBuf>> {
    let id = seat.session_id.as_deref()?;
    let r = regs.by_session_id(id)?;
    let file = PathBuf::from(r.session_file.as_deref()?);
    let named = file
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(sessions::session_id_from_name)
        == Some(id);
    let outside_ok = seat.session_file.is_none()
        && r.cwd.is_some()
        && folder.is_some_and(|f| r.matches_seat(None, Some(f)).is_ok());
    if !(regs.is_own(r) || outside_ok)
        || !named
        || seat.session_file.as_deref() == Some(file.as_path())
        || r.alive() != Some(true)
    {
        return None;
    }
    file_named_by_registration(file)
}

/// A configured worker (or coordinator) with no live registration of its own session whose
/// pane (the tmux session named like it) holds a live pi in another session — registered, or
/// found from the pane's pi process: that pi's state is not the worker's, and the worker's own
/// is not known. Returns the source, naming both sessions.
pub(super) fn other_session_in_pane(
    seat: &SeatSource,
    own: Option<&Registration>,
    regs: &RegistrationSet,
    seats: &[SeatSource],
) -> Option<StateSource> {
    if !matches!(seat.role, RowRole::Worker | RowRole::Coordinator) || seat.pane.is_some() {
        return None;
    }
    let want = seat.session_id.as_deref()?;
    if own.is_some_and(|r| r.alive() == Some(true)) {
        return None;
    }
    let shown = |id: &str| crate::text::clip(&crate::text::sanitize(id), 80);
    let registered = regs.items.iter().find(|r| {
        r.session_id.as_deref().is_some_and(|id| id != want)
            && r.mux.as_ref().is_some_and(|m| {
                m.kind == Some(MuxKind::ROSTER) && m.session.as_deref() == Some(&seat.agent)
            })
            && !r.session_closed()
            && r.alive() == Some(true)
    });
    if let Some(r) = registered {
        return Some(StateSource::OtherRegisteredPi {
            pid: r.pid.unwrap_or(0),
            session: shown(r.session_id.as_deref().unwrap_or("")),
            configured: shown(want),
        });
    }
    // A pane seat (found from its pi process) in the worker's conventional pane.
    let pane = seats.iter().find(|o| {
        o.found_by.is_some()
            && o.pane
                .as_ref()
                .is_some_and(|((kind, socket), _)| *kind == MuxKind::ROSTER && socket.is_none())
            && o.tmux.session.as_deref() == Some(&seat.agent)
    })?;
    // Only a session known to differ counts (a pi with no file yet may be the worker's own).
    let other = pane
        .session_file
        .as_deref()
        .and_then(|f| f.file_name()?.to_str())
        .and_then(sessions::session_id_from_name)
        .filter(|id| *id != want)
        .map(shown)?;
    Some(StateSource::OtherPaneProcess {
        seat: pane.agent.clone(),
        session: other,
        configured: shown(want),
    })
}

/// `Some(true)` live, `Some(false)` stale (pid gone, another process or another user's),
/// `None` no pid recorded: `Registration::alive`, the one rule.
pub(super) fn registration_alive(r: &Registration) -> Option<bool> {
    r.alive()
}

pub(super) fn seat_hint(
    seat: &SeatSource,
    reg: Option<&Registration>,
) -> Option<liveness::SeatHint> {
    if let Some(b) = &seat.binding {
        return Some(liveness::SeatHint::Process(
            b.owner.clone().map(|o| (o.pid, o.start_tick, o.boot_id)),
        ));
    }
    if let Some(m) = reg.and_then(|r| r.mux.as_ref()) {
        return Some(liveness::SeatHint::Pane {
            kind: m.kind?,
            socket: m.socket.clone(),
            pane_id: m.pane_id.clone(),
            session: m.session.clone(),
        });
    }
    if let Some(((kind, socket), pane_id)) = &seat.pane {
        return Some(liveness::SeatHint::Pane {
            kind: *kind,
            socket: socket.clone(),
            pane_id: Some(pane_id.clone()),
            session: None,
        });
    }
    if matches!(seat.role, RowRole::Worker | RowRole::Coordinator) {
        return Some(liveness::SeatHint::Conventional {
            session: seat.agent.clone(),
        });
    }
    seat.tmux
        .session
        .as_ref()
        .map(|s| liveness::SeatHint::Pane {
            kind: MuxKind::ROSTER,
            socket: seat.tmux.socket.clone(),
            pane_id: None,
            session: Some(s.clone()),
        })
}

/// Every server some seat lives on (the default tmux server always), each listed once.
pub(super) fn seat_servers(
    seats: &[SeatSource],
    regs: &RegistrationSet,
) -> Vec<liveness::ServerKey> {
    let mut out: Vec<liveness::ServerKey> = vec![(MuxKind::ROSTER, None)];
    let mut add = |k: liveness::ServerKey| {
        if !out.contains(&k) {
            out.push(k);
        }
    };
    for s in seats {
        add((MuxKind::ROSTER, s.tmux.socket.clone()));
    }
    for r in &regs.items {
        if let Some(m) = &r.mux {
            if let Some(kind) = m.kind {
                add((kind, m.socket.clone()));
            }
        }
    }
    out
}

/// Where a reply to this seat goes, from its live, verified registration only.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplyTarget {
    pub kind: MuxKind,
    /// Socket path (or `-L` name) exactly as registered.
    pub socket: Option<String>,
    /// The pane id when registered, else the tmux session name.
    pub target: String,
    pub session: Option<String>,
    /// What the board found for the seat, which the registration must still agree with right
    /// before anything is sent (`Registration::matches_seat`): its session file, and for a
    /// roster agent its configured folder.
    pub session_file: Option<PathBuf>,
    pub folder: Option<PathBuf>,
}

impl ReplyTarget {
    /// How the sidebar and receipts name it, e.g. `tmux %3 (session build)`.
    pub fn describe(&self) -> String {
        match &self.session {
            Some(s) if s != &self.target => {
                format!("{} {} (session {s})", self.kind.name(), self.target)
            }
            _ => format!("{} {}", self.kind.name(), self.target),
        }
    }
}

/// Why a seat has no reply path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyUnavailable {
    Connector,
    /// No pi registered the seat, and none is seen running it.
    NotRegistered,
    /// A pi runs the seat but never registered: the extension is not loaded in it.
    NoExtension,
    Stale,
    NoProcess,
    /// The pane still runs that pi, but in another session (or it is quitting): text typed
    /// there would reach a session that is not this seat's.
    SessionEnded,
    NoPane,
    UnknownMultiplexer,
    NoTarget,
    /// The registration names another session file or folder than the board found for the
    /// seat: it is another pi's record of the same session id.
    NotThisSeat,
}

impl std::fmt::Display for ReplyUnavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ReplyUnavailable::Connector => "connector rows cannot be replied to",
            ReplyUnavailable::NotRegistered => {
                "no pi has registered this seat: start its pi with the intercom-pane extension installed (pi install <checkout>/linux/pi-extension)"
            }
            ReplyUnavailable::NoExtension => {
                "its pi runs without the intercom-pane extension: install it (pi install <checkout>/linux/pi-extension), then type /reload in that pi"
            }
            ReplyUnavailable::Stale => "the seat's registration is stale (its pi is gone)",
            ReplyUnavailable::NoProcess => "the registration records no process to verify",
            ReplyUnavailable::SessionEnded => {
                "the seat's session has ended in its pi (it moved on or is quitting)"
            }
            ReplyUnavailable::NoPane => "the registration names no multiplexer pane",
            ReplyUnavailable::UnknownMultiplexer => "the registration names an unknown multiplexer",
            ReplyUnavailable::NoTarget => "the registration names no pane or session",
            ReplyUnavailable::NotThisSeat => {
                "the registration's session file or folder is not the one the board found for this seat"
            }
        })
    }
}

impl std::error::Error for ReplyUnavailable {}

/// The reply path of a seat, or why it has none. Never a guess: only a registration whose
/// process is verifiably alive names where to type. `pi_runs`: the board sees the seat's pi
/// running (so a missing registration means the extension is not loaded in it).
pub(super) fn reply_target(
    seat: &SeatSource,
    folder: Option<&Path>,
    reg: Option<&Registration>,
    reg_alive: Option<bool>,
    pi_runs: bool,
) -> Result<ReplyTarget, ReplyUnavailable> {
    if seat.role == RowRole::Connector {
        return Err(ReplyUnavailable::Connector);
    }
    let r = reg.ok_or(if pi_runs {
        ReplyUnavailable::NoExtension
    } else {
        ReplyUnavailable::NotRegistered
    })?;
    match reg_alive {
        Some(true) => {}
        Some(false) => return Err(ReplyUnavailable::Stale),
        None => return Err(ReplyUnavailable::NoProcess),
    }
    if r.session_closed() {
        return Err(ReplyUnavailable::SessionEnded);
    }
    if r.matches_seat(seat.session_file.as_deref(), folder)
        .is_err()
    {
        return Err(ReplyUnavailable::NotThisSeat);
    }
    let m = r.mux.as_ref().ok_or(ReplyUnavailable::NoPane)?;
    let kind = m.kind.ok_or(ReplyUnavailable::UnknownMultiplexer)?;
    let target = m
        .pane_id
        .clone()
        .or_else(|| m.session.clone())
        .ok_or(ReplyUnavailable::NoTarget)?;
    Ok(ReplyTarget {
        kind,
        socket: m.socket.clone(),
        target,
        session: m.session.clone(),
        session_file: seat.session_file.clone(),
        folder: folder.map(Path::to_path_buf),
    })
}
