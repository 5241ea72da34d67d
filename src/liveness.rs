//! Seat liveness for the scan: one pane list per multiplexer server per pass, then a lookup per
//! seat. Offline needs evidence (a listing that lacks the pane, a registered pi that is gone, or
//! panes that do not run `pi`); when the server cannot be asked the seat is unknown, never
//! assumed alive.
//!
//! One rule for tmux and Herdr: a seat with a registered pi process is alive when that process
//! (checked against its registration: pid, start ticks, boot id) lives in its pane's process
//! tree — the pane's shell is the process or one of its ancestors. Names are not evidence there:
//! Herdr names a process by its program (`sleep` for `exec -a pi sleep`), tmux by its `argv[0]`.
//! Only a seat with no registered process falls back to the pane's foreground command `pi`.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::board::reason::{StateReason, StateSource, Unanswered};
use crate::mux::{self, Liveness, MuxError, MuxKind, PaneInfo, PaneList};

/// Deadline for the pass's pane listings: every server is asked at once, all under this one
/// deadline, so servers that accept and never answer cost the pass this much however many there
/// are.
const LIST_DEADLINE: Duration = Duration::from_secs(2);
/// Most distinct servers asked in one pass (one thread each, for at most `LIST_DEADLINE`); seats
/// naming more servers read `unknown` (`not_asked`).
const MAX_SERVERS: usize = 64;

/// `--liveness`: ask tmux (default) or treat every seat as alive (tests, no tmux).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LivenessMode {
    Tmux,
    AssumeAlive,
}

/// How a seat says where it lives.
#[derive(Debug, Clone, PartialEq)]
pub enum SeatHint {
    /// A recorded pane, or a tmux session that must exist (control-board seats: a missing
    /// session means offline). `socket`: `None` = the default tmux server; a path; or (tmux) a
    /// `-L` name.
    Pane {
        kind: MuxKind,
        socket: Option<String>,
        pane_id: Option<String>,
        session: Option<String>,
    },
    /// A session named like the agent, by convention only: when no such session exists the seat
    /// is unknown, not offline (Intercom workers without a registration).
    Conventional { session: String },
    /// A process identity (connectors): (pid, start ticks, boot id), or none recorded.
    Process(Option<(i32, u64, String)>),
}

/// The liveness verdict for one seat, with its reason and source.
#[derive(Debug, Clone, PartialEq)]
pub struct SeatLiveness {
    pub liveness: Liveness,
    pub reason: StateReason,
    pub source: StateSource,
    /// The live pane's cwd, and which multiplexer reported it.
    pub pane_cwd: Option<(String, MuxKind)>,
    /// The live pane that runs the seat's pi: its server, id and shell pid as listed.
    pub pane: Option<(ServerKey, String, Option<i32>)>,
}

impl SeatLiveness {
    fn new(liveness: Liveness, reason: StateReason, source: StateSource) -> Self {
        SeatLiveness {
            liveness,
            reason,
            source,
            pane_cwd: None,
            pane: None,
        }
    }
}

/// One server's listing: its panes, or why it could not be asked.
type Listing = Result<Vec<PaneInfo>, Unanswered>;

/// A listing's panes, or why it could not be asked.
fn listing_of(list: Result<PaneList, MuxError>) -> Listing {
    list.map(|l| l.panes)
        .map_err(|e| Unanswered::Failed(e.code))
}

/// A multiplexer server as seats name it: its kind and socket hint.
pub type ServerKey = (MuxKind, Option<String>);

/// tmux listings a live view keeps between passes (docs/behaviour.md §3a): a server's listing is
/// used again, brought up to date from `/proc` (`mux::tmux::current`), while the view's control
/// client on that server listens and has reported nothing since; any other server is listed.
#[derive(Default)]
pub struct KeptPanes {
    inner: Mutex<Kept>,
}

#[derive(Default)]
struct Kept {
    lists: HashMap<PathBuf, PaneList>,
    /// Servers whose kept listing may be used for the next pass.
    trusted: HashSet<PathBuf>,
    /// What of `/proc` the listing each server's last pass used rested on, when that pass
    /// brought a kept listing up to date (the live view's timer check, `same_as_used`).
    used: HashMap<PathBuf, mux::tmux::current::ProcSide>,
}

impl std::fmt::Debug for KeptPanes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KeptPanes")
    }
}

impl KeptPanes {
    pub fn new() -> KeptPanes {
        KeptPanes::default()
    }

    /// Before a pass: the kept listings of `listening` servers may be used, except those
    /// `stale` names (their client reported a change, or a pi on them exited).
    pub fn trust(&self, listening: &[PathBuf], stale: &std::collections::BTreeSet<PathBuf>) {
        if let Ok(mut k) = self.inner.lock() {
            // As before (the timer's pass while nothing changed): nothing to rebuild.
            if stale.is_empty()
                && k.trusted.len() == listening.len()
                && listening.iter().all(|s| k.trusted.contains(s))
            {
                return;
            }
            k.trusted = listening
                .iter()
                .filter(|s| !stale.contains(*s))
                .cloned()
                .collect();
            // Only listings a listening client keeps up to date are worth keeping.
            let Kept {
                lists,
                trusted,
                used,
            } = &mut *k;
            lists.retain(|s, _| trusted.contains(s) || listening.contains(s));
            used.retain(|s, _| lists.contains_key(s));
        }
    }

    /// A trusted kept listing of `socket`, brought up to date; `None`: list it.
    fn take(&self, socket: &Path) -> Option<PaneList> {
        let mut k = self.inner.lock().ok()?;
        if !k.trusted.contains(socket) {
            return None;
        }
        let Some((list, side)) = mux::tmux::current::refresh(k.lists.get(socket)?) else {
            k.used.remove(socket);
            return None;
        };
        k.used.insert(socket.to_path_buf(), side);
        Some(list)
    }

    fn keep(&self, socket: &Path, list: &PaneList) {
        if let Ok(mut k) = self.inner.lock() {
            k.lists.insert(socket.to_path_buf(), list.clone());
            // Listed by tmux just now: its `/proc` side is read by the next check, if any.
            k.used.remove(socket);
        }
    }

    /// Whether each of `sockets` has a trusted kept listing whose `/proc` side is what the last
    /// pass used: no pane came, went or changed its foreground process or folder since (the
    /// listing itself is not touched). A listing tmux gave that pass has no side yet: it holds
    /// when brought up to date from `/proc` it reads as tmux gave it, and that side is kept
    /// for the next check.
    pub fn same_as_used(&self, sockets: &[PathBuf]) -> bool {
        let Ok(mut k) = self.inner.lock() else {
            return false;
        };
        let Kept {
            lists,
            trusted,
            used,
        } = &mut *k;
        sockets.iter().all(|s| {
            if !trusted.contains(s) {
                return false;
            }
            if let Some(side) = used.get(s) {
                return side.holds();
            }
            let Some(list) = lists.get(s) else {
                return false;
            };
            match mux::tmux::current::refresh(list) {
                Some((now, side)) if now == *list => {
                    used.insert(s.clone(), side);
                    true
                }
                _ => false,
            }
        })
    }
}

/// One pane listing per server, taken once per pass.
pub struct PaneCache {
    /// Each listing once, with the first key that named its server.
    listings: Vec<(ServerKey, Listing)>,
    /// The socket each listing came from (same order as `listings`; `None` for listings taken
    /// elsewhere).
    sockets: Vec<Option<PathBuf>>,
    /// More servers were named than `MAX_SERVERS`: some were not asked.
    over_cap: bool,
    /// Every key asked about, and which listing answers it: keys that resolve to one socket
    /// (the default server and its path, a `-L` name and its path) share one listing.
    keys: Vec<(ServerKey, usize)>,
}

impl PaneCache {
    /// List the panes of each named server once, at most `MAX_SERVERS` servers, all at once
    /// under one deadline. Herdr servers are only asked at a recorded socket path.
    pub fn collect(
        mode: LivenessMode,
        servers: &[ServerKey],
        default_socket: Option<&Path>,
        kept: Option<&KeptPanes>,
    ) -> PaneCache {
        let mut cache = PaneCache {
            listings: Vec::new(),
            sockets: Vec::new(),
            keys: Vec::new(),
            over_cap: false,
        };
        if mode != LivenessMode::Tmux {
            return cache;
        }
        // Which server each key names; the first key naming a server gets its listing.
        let mut asked: Vec<(MuxKind, PathBuf)> = Vec::new();
        let mut plan: Vec<(ServerKey, Option<usize>)> = Vec::new();
        for key in servers {
            let path = key.0.server_socket(key.1.as_deref(), default_socket);
            let Some(path) = path else {
                plan.push((key.clone(), None));
                continue;
            };
            let server = (key.0, path);
            match asked.iter().position(|s| *s == server) {
                Some(i) => plan.push((key.clone(), Some(i))),
                None if asked.len() < MAX_SERVERS => {
                    plan.push((key.clone(), Some(asked.len())));
                    asked.push(server);
                }
                // Past the cap: not asked, so `server()` finds nothing (`not_asked`).
                None => cache.over_cap = true,
            }
        }
        let mut lists: Vec<Option<Listing>> =
            list_all(&asked, Instant::now() + LIST_DEADLINE, kept)
                .into_iter()
                .map(Some)
                .collect();
        let mut slot_of: Vec<Option<usize>> = vec![None; asked.len()];
        for (key, server) in plan {
            match server {
                None => cache.push(key, Err(Unanswered::NoSocket)),
                Some(i) => match slot_of[i] {
                    Some(slot) => cache.keys.push((key, slot)),
                    None => {
                        slot_of[i] = Some(cache.listings.len());
                        let listing = lists[i]
                            .take()
                            .unwrap_or(Err(Unanswered::Failed(mux::ErrorCode::Failed)));
                        cache.push(key, listing);
                        if let (Some(s), Some((_, path))) = (cache.sockets.last_mut(), asked.get(i))
                        {
                            *s = Some(path.clone());
                        }
                    }
                },
            }
        }
        cache
    }

    fn push(&mut self, key: ServerKey, listing: Listing) {
        self.keys.push((key.clone(), self.listings.len()));
        self.listings.push((key, listing));
        self.sockets.push(None);
    }

    /// A cache of listings already taken, one per server (benches and tests take their own).
    pub fn from_listings(listings: Vec<(ServerKey, Result<PaneList, MuxError>)>) -> PaneCache {
        let mut cache = PaneCache {
            listings: Vec::new(),
            sockets: Vec::new(),
            keys: Vec::new(),
            over_cap: false,
        };
        for (k, l) in listings.into_iter().take(MAX_SERVERS) {
            cache.push(k, listing_of(l));
        }
        cache
    }

    /// The socket of each server a seat named that did not answer because nothing listens
    /// there; `None` when some server was not asked, has no known socket, or failed otherwise (a
    /// deadline, an error, another user's: only asking again can tell what it holds now).
    pub fn not_listening(&self) -> Option<Vec<PathBuf>> {
        if self.over_cap {
            return None;
        }
        let mut out = Vec::new();
        for ((_, listing), socket) in self.listings.iter().zip(&self.sockets) {
            match listing {
                Ok(_) => {}
                Err(Unanswered::Failed(mux::ErrorCode::NoServer)) => out.push(socket.clone()?),
                Err(_) => return None,
            }
        }
        Some(out)
    }

    /// Every pane of every server that answered, once, with the first key that named its server.
    pub fn panes(&self) -> impl Iterator<Item = (&ServerKey, &PaneInfo)> {
        self.listings
            .iter()
            .filter_map(|(k, l)| l.as_ref().ok().map(|ps| (k, ps)))
            .flat_map(|(k, ps)| ps.iter().map(move |p| (k, p)))
    }

    /// Each server that answered: its kind, its socket, the session of its first pane (a live
    /// view attaches its listening client there) and that pane's process.
    pub fn answered(&self) -> Vec<(MuxKind, PathBuf, Option<String>, Option<i32>)> {
        self.listings
            .iter()
            .zip(&self.sockets)
            .filter_map(|((k, l), s)| {
                let panes = l.as_ref().ok()?;
                let first = panes.first();
                Some((
                    k.0,
                    s.clone()?,
                    first.map(|p| p.session_id.clone()),
                    first.and_then(|p| p.pid),
                ))
            })
            .collect()
    }

    fn server(&self, key: &ServerKey) -> Option<&Listing> {
        let (_, i) = self.keys.iter().find(|(k, _)| k == key)?;
        self.listings.get(*i).map(|(_, l)| l)
    }
}

/// Every server's listing, in order, each asked on its own thread (the first on this one) and
/// all bounded by the same `deadline`. A thread that cannot be started lists on this one. A tmux
/// server whose kept listing is trusted (`KeptPanes`) is not asked at all.
fn list_all(
    servers: &[(MuxKind, PathBuf)],
    deadline: Instant,
    kept: Option<&KeptPanes>,
) -> Vec<Listing> {
    let list = |(kind, path): &(MuxKind, PathBuf)| {
        let kept = kept.filter(|_| kind.caps().listing_kept);
        if let Some(l) = kept.and_then(|k| k.take(path)) {
            return listing_of(Ok(l));
        }
        let l = mux::open(*kind, path).list_panes(deadline);
        if let (Some(k), Ok(l)) = (kept, &l) {
            k.keep(path, l);
        }
        listing_of(l)
    };
    let Some((first, rest)) = servers.split_first() else {
        return Vec::new();
    };
    std::thread::scope(|scope| {
        let handles: Vec<_> = rest
            .iter()
            .map(|s| {
                std::thread::Builder::new()
                    .name("list-panes".into())
                    .spawn_scoped(scope, move || list(s))
                    .map_err(|_| s)
            })
            .collect();
        let mut out = vec![list(first)];
        for h in handles {
            out.push(match h {
                Ok(h) => h
                    .join()
                    .unwrap_or(Err(Unanswered::Failed(mux::ErrorCode::Failed))),
                Err(s) => list(s),
            });
        }
        out
    })
}

/// The pi process a seat's registration names, and whether it is that live process (the
/// registration's identity check, made once by the scan).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RegisteredPi {
    pub pid: i32,
    pub alive: bool,
}

/// Decide one seat's liveness from the pass's pane listings (no registered process known).
pub fn seat_liveness(
    cache: &PaneCache,
    hint: Option<&SeatHint>,
    mode: LivenessMode,
) -> SeatLiveness {
    seat_liveness_registered(cache, hint, mode, None)
}

/// Decide one seat's liveness from the pass's pane listings and its registered pi process.
pub(crate) fn seat_liveness_registered(
    cache: &PaneCache,
    hint: Option<&SeatHint>,
    mode: LivenessMode,
    registered: Option<RegisteredPi>,
) -> SeatLiveness {
    if mode == LivenessMode::AssumeAlive {
        return SeatLiveness::new(
            Liveness::Alive,
            StateReason::AssumedAlive,
            StateSource::AssumedAlive,
        );
    }
    match hint {
        None => SeatLiveness::new(
            Liveness::Unknown,
            StateReason::PaneNotIdentified,
            StateSource::NoRegistration,
        ),
        Some(SeatHint::Process(None)) => SeatLiveness::new(
            Liveness::Offline,
            StateReason::OwnerMissing,
            StateSource::ConnectorOwnerRecord,
        ),
        Some(SeatHint::Process(Some((pid, ticks, boot)))) => {
            let alive = crate::proc::identity(*pid)
                .filter(|id| id.start_ticks == *ticks && &id.boot_id == boot)
                .is_some_and(|id| crate::proc::is_alive(&id));
            let (liveness, reason) = if alive {
                (Liveness::Alive, StateReason::OwnerLive)
            } else {
                (Liveness::Offline, StateReason::OwnerGone)
            };
            SeatLiveness::new(liveness, reason, StateSource::ConnectorOwnerProcess)
        }
        Some(SeatHint::Pane {
            kind,
            socket,
            pane_id,
            session,
        }) => pane_liveness(
            cache,
            &(*kind, socket.clone()),
            pane_id.as_deref(),
            session.as_deref(),
            true,
            registered,
        ),
        Some(SeatHint::Conventional { session }) => pane_liveness(
            cache,
            &(MuxKind::ROSTER, None),
            None,
            Some(session),
            false,
            None,
        ),
    }
}

fn pane_liveness(
    cache: &PaneCache,
    server: &ServerKey,
    pane_id: Option<&str>,
    session: Option<&str>,
    session_required: bool,
    registered: Option<RegisteredPi>,
) -> SeatLiveness {
    let source = StateSource::Mux(server.0);
    let unknown = |why| {
        // The server could not be asked, but a registered pi that is provably gone needs no
        // pane to be offline: its pid is free, or it is ours and another incarnation (or a
        // zombie). A pid held by another user's process proves nothing either way.
        if let Some(r) = registered.filter(|r| !r.alive) {
            let gone = crate::proc::identity(r.pid).is_none() || crate::proc::is_ours(r.pid);
            if gone {
                return SeatLiveness::new(
                    Liveness::Offline,
                    StateReason::RegisteredPiGone,
                    StateSource::RegisteredPi(server.0, why),
                );
            }
        }
        SeatLiveness::new(
            Liveness::Unknown,
            StateReason::MuxUnanswered(server.0, why),
            StateSource::Mux(server.0),
        )
    };
    let panes = match cache.server(server) {
        Some(Ok(p)) => p,
        Some(Err(why)) => return unknown(*why),
        None => return unknown(Unanswered::NotAsked),
    };
    let in_scope: Vec<&PaneInfo> = match (pane_id, session) {
        (Some(id), _) => panes.iter().filter(|p| p.id == id).collect(),
        (None, Some(s)) => panes
            .iter()
            .filter(|p| p.session_name.as_deref() == Some(s))
            .collect(),
        (None, None) => Vec::new(),
    };
    let runs = |p: &PaneInfo| match registered {
        Some(r) => r.alive && p.pid.is_some_and(|shell| in_tree(shell, r.pid)),
        None => p.current_command.as_deref() == Some(mux::PI_COMMAND),
    };
    let alive = |p: &PaneInfo, reason: StateReason| SeatLiveness {
        liveness: Liveness::Alive,
        reason,
        source: StateSource::Mux(server.0),
        pane_cwd: p
            .cwd
            .clone()
            .filter(|c| !c.is_empty())
            .map(|c| (c, server.0)),
        pane: Some((server.clone(), p.id.clone(), p.pid)),
    };
    if let Some(p) = in_scope.iter().find(|p| !p.dead && runs(p)) {
        return alive(p, StateReason::PaneRunsPi);
    }
    // The registered pi lives, but not in the pane it registered: the pane it is in now, found
    // by its process (a Herdr pane moved to another workspace has a new id; pi registers the
    // move only at its next event).
    if let Some(r) = registered.filter(|r| r.alive) {
        return match pane_holding(panes, r.pid) {
            Some(p) => alive(p, StateReason::PaneFollowed),
            None => SeatLiveness::new(Liveness::Unknown, StateReason::PaneNotIdentified, source),
        };
    }
    if in_scope.is_empty() {
        return match (pane_id, session, session_required) {
            (Some(_), _, _) => SeatLiveness::new(Liveness::Offline, StateReason::PaneGone, source),
            (None, Some(_), true) => {
                SeatLiveness::new(Liveness::Offline, StateReason::NoTmuxSession, source)
            }
            _ => SeatLiveness::new(Liveness::Unknown, StateReason::PaneNotIdentified, source),
        };
    }
    SeatLiveness::new(Liveness::Offline, StateReason::PaneNotRunningPi, source)
}

/// The live pane of a listing whose process is `pid` or its nearest ancestor.
fn pane_holding(panes: &[PaneInfo], pid: i32) -> Option<&PaneInfo> {
    let mut chain = vec![pid];
    chain.extend(crate::proc::ancestors(pid, crate::proc::MAX_DEPTH));
    panes
        .iter()
        .filter(|p| !p.dead)
        .filter_map(|p| Some((chain.iter().position(|&c| Some(c) == p.pid)?, p)))
        .min_by_key(|(depth, _)| *depth)
        .map(|(_, p)| p)
}

/// `pid` is the pane's shell or runs under it.
fn in_tree(shell: i32, pid: i32) -> bool {
    crate::proc::ancestry_depth(shell, pid).is_some()
}

#[cfg(test)]
mod tests {
    use super::{seat_liveness, LivenessMode, PaneCache, SeatHint};
    use crate::mux::Liveness;
    use crate::mux::{ErrorCode, MuxError, MuxKind, PaneInfo, PaneList};

    fn pane(id: &str, session: &str, cmd: &str) -> PaneInfo {
        PaneInfo::sample(id, session, cmd)
    }

    fn verdict(
        list: Result<Vec<PaneInfo>, MuxError>,
        p: Option<&str>,
        s: Option<&str>,
    ) -> Liveness {
        let cache = PaneCache::from_listings(vec![(
            (MuxKind::Tmux, None),
            list.map(|panes| PaneList {
                server: None,
                panes,
            }),
        )]);
        let hint = SeatHint::Pane {
            kind: MuxKind::Tmux,
            socket: None,
            pane_id: p.map(Into::into),
            session: s.map(Into::into),
        };
        seat_liveness(&cache, Some(&hint), LivenessMode::Tmux).liveness
    }

    #[test]
    fn liveness_rules() {
        let panes = vec![pane("%0", "alpha", "bash"), pane("%1", "beta", "pi")];
        let v = |p: Option<&str>, s: Option<&str>| verdict(Ok(panes.clone()), p, s);
        assert_eq!(v(None, Some("beta")), Liveness::Alive);
        assert_eq!(v(None, Some("alpha")), Liveness::Offline);
        assert_eq!(v(None, Some("gone")), Liveness::Offline);
        assert_eq!(v(Some("%1"), None), Liveness::Alive);
        assert_eq!(v(Some("%0"), Some("beta")), Liveness::Offline);
        assert_eq!(v(Some("%9"), Some("beta")), Liveness::Offline);
        assert_eq!(v(None, None), Liveness::Unknown);
        let mut dead = panes.clone();
        dead[1].dead = true;
        assert_eq!(verdict(Ok(dead), None, Some("beta")), Liveness::Offline);
        let err = Err(MuxError::new(ErrorCode::NoServer, "x"));
        assert_eq!(verdict(err, None, Some("beta")), Liveness::Unknown);
    }
}
