//! Seat liveness for the scan: one pane list per multiplexer server per pass, then a pure lookup
//! per seat. Offline needs evidence (a listing that lacks the pane, or panes that do not run
//! `pi`); when the server cannot be asked the seat is unknown, never assumed alive.

use crate::board::classify::Liveness;
use crate::mux::tmux::Tmux;
use crate::mux::{Multiplexer, PaneInfo};

/// `--liveness`: ask tmux (default) or treat every seat as alive (tests, no tmux).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LivenessMode {
    Tmux,
    AssumeAlive,
}

/// How a seat says where it lives.
#[derive(Debug, Clone, PartialEq)]
pub enum SeatHint {
    /// A tmux pane or session on a socket (`None` = the default server; a bare name = `-L name`).
    Pane {
        socket: Option<String>,
        pane_id: Option<String>,
        session: Option<String>,
    },
    /// A process identity (connectors): (pid, start ticks, boot id), or none recorded.
    Process(Option<(i32, u64, String)>),
}

/// The liveness verdict for one seat, with its reason and source.
#[derive(Debug, Clone, PartialEq)]
pub struct SeatLiveness {
    pub liveness: Liveness,
    pub reason: String,
    pub source: String,
    pub pane_cwd: Option<String>,
}

impl SeatLiveness {
    fn new(liveness: Liveness, reason: &str, source: &str) -> Self {
        SeatLiveness {
            liveness,
            reason: reason.into(),
            source: source.into(),
            pane_cwd: None,
        }
    }
}

/// One pane listing per server, taken once per pass.
pub struct PaneCache {
    servers: Vec<(Option<String>, Result<Vec<PaneInfo>, String>)>,
}

impl PaneCache {
    /// List the panes of each named server once. `None` is the default server.
    pub fn collect(mode: LivenessMode, sockets: &[Option<String>]) -> PaneCache {
        let mut servers = Vec::new();
        if mode == LivenessMode::Tmux {
            for s in sockets.iter().take(16) {
                let listing = Tmux::for_socket_hint(s.as_deref())
                    .and_then(|t| t.list_panes())
                    .map_err(|e| e.code().to_string());
                servers.push((s.clone(), listing));
            }
        }
        PaneCache { servers }
    }

    fn server(&self, socket: &Option<String>) -> Option<&Result<Vec<PaneInfo>, String>> {
        self.servers
            .iter()
            .find(|(s, _)| s == socket)
            .map(|(_, l)| l)
    }
}

/// Decide one seat's liveness from the pass's pane listings.
pub fn seat_liveness(cache: &PaneCache, hint: Option<&SeatHint>, mode: LivenessMode) -> SeatLiveness {
    if mode == LivenessMode::AssumeAlive {
        return SeatLiveness::new(Liveness::Alive, "assumed_alive", "--liveness assume-alive");
    }
    match hint {
        None => SeatLiveness::new(Liveness::Unknown, "pane_not_identified", "no registration"),
        Some(SeatHint::Process(None)) => {
            SeatLiveness::new(Liveness::Offline, "owner_missing", "connector owner record")
        }
        Some(SeatHint::Process(Some((pid, ticks, boot)))) => {
            let alive = crate::proc::identity(*pid)
                .filter(|id| id.start_ticks == *ticks && &id.boot_id == boot)
                .is_some_and(|id| crate::proc::is_alive(&id));
            if alive {
                SeatLiveness::new(Liveness::Alive, "owner_live", "connector owner process")
            } else {
                SeatLiveness::new(Liveness::Offline, "owner_gone", "connector owner process")
            }
        }
        Some(SeatHint::Pane {
            socket,
            pane_id,
            session,
        }) => pane_liveness(cache, socket, pane_id.as_deref(), session.as_deref()),
    }
}

fn pane_liveness(
    cache: &PaneCache,
    socket: &Option<String>,
    pane_id: Option<&str>,
    session: Option<&str>,
) -> SeatLiveness {
    let panes = match cache.server(socket) {
        Some(Ok(p)) => p,
        Some(Err(code)) => {
            return SeatLiveness::new(Liveness::Unknown, &format!("tmux_{code}"), "tmux")
        }
        None => return SeatLiveness::new(Liveness::Unknown, "tmux_not_asked", "tmux"),
    };
    let candidates: Vec<&PaneInfo> = match (pane_id, session) {
        (Some(id), _) => panes.iter().filter(|p| p.id == id).collect(),
        (None, Some(s)) => panes.iter().filter(|p| p.session_name == s).collect(),
        (None, None) => Vec::new(),
    };
    if candidates.is_empty() {
        return match (pane_id, session) {
            (Some(_), _) => SeatLiveness::new(Liveness::Offline, "pane_gone", "tmux"),
            (None, Some(_)) => SeatLiveness::new(Liveness::Offline, "no_tmux_session", "tmux"),
            _ => SeatLiveness::new(Liveness::Unknown, "pane_not_identified", "tmux"),
        };
    }
    match candidates
        .iter()
        .find(|p| !p.dead && p.current_command == "pi")
    {
        Some(p) => SeatLiveness {
            liveness: Liveness::Alive,
            reason: "pane_runs_pi".into(),
            source: "tmux".into(),
            pane_cwd: Some(p.cwd.clone()).filter(|c| !c.is_empty()),
        },
        None => SeatLiveness::new(Liveness::Offline, "pane_not_running_pi", "tmux"),
    }
}
