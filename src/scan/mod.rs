//! One bounded pass over every evidence source into one immutable result (`Scan`).
//!
//! Order: seen marks (refuse when invalid) → Intercom roster, logs, reports → seat discovery
//! (Intercom agents, repo and fleet agents, connectors) → registrations → session files →
//! multiplexer panes (one list per server) → classification and joins. Views only read `Scan`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::board::classify::{self, Classification, Liveness};
use crate::board::intercom::{self, WorkerObservation};
use crate::board::reason::{StateReason, StateSource};
use crate::board::record::{RegisteredView, SeatRecord, TmuxRef};
use crate::clock::{age_seconds, format_iso, Clock, Ms};
use crate::evidence::config::{self, Agent, IntercomConfig};
use crate::evidence::connectors::{self, Binding};
use crate::evidence::observations;
use crate::evidence::registrations::{
    self, Registration, RegistrationSet, RunEvent, RunRecord, RunState,
};
use crate::evidence::reports;
use crate::evidence::seen::{self, SeenMarks};
use crate::evidence::sessions::{self, SessionError, SessionSummary};
use crate::fsguard::{self, FsError, Kind};
use crate::liveness::{self, LivenessMode};
use crate::mux::MuxKind;
use crate::probe::{Connection, ProbeCache, ProbeTarget};
use crate::snapshot::{
    ActivityView, BoardState, CloseJobView, ConnectionView, HandoffView, ReplyPath, ReportView,
    RosterStatus, Row, RowRole, Snapshot,
};

mod build;
mod panes;
mod seats;

use build::*;
pub use seats::ReplyTarget;
use seats::*;

const MAX_AGENT_DIRS: usize = 256;
const GIT_WALK_LEVELS: usize = 32;

/// Where the Intercom roster comes from.
#[derive(Debug, Clone)]
pub enum RootChoice {
    /// Walk upward from this folder (the default: the current folder).
    Discover(PathBuf),
    /// Exactly this root.
    Exact(PathBuf),
    /// No Intercom roster.
    Skip,
}

#[derive(Debug, Clone)]
pub struct ScanOptions {
    pub data_root: PathBuf,
    pub root: RootChoice,
    /// Checkout whose `.pi/state/<agent>/sessions` are repo seats.
    pub repo: Option<PathBuf>,
    /// `<fleet>/<agent>/.pi/agent/sessions` seats.
    pub fleet: Option<PathBuf>,
    /// pi session folders searched for Intercom agents' session files.
    pub session_dirs: Vec<PathBuf>,
    pub liveness: LivenessMode,
    /// The tmux server seats without an explicit socket live on (default: `$TMUX`, else
    /// `-L default`).
    pub tmux_socket: Option<PathBuf>,
}

/// A refusal that stops the pass (exit 2).
#[derive(Debug)]
pub struct ScanError(pub String);

impl std::fmt::Display for ScanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The immutable result of one pass.
pub struct Scan {
    pub scanned_at: Ms,
    pub data_root: PathBuf,
    pub config: Option<IntercomConfig>,
    /// One per configured worker (coordinator excluded), in configured order.
    pub workers: Vec<WorkerObservation>,
    pub records: Vec<SeatRecord>,
    pub snapshot: Snapshot,
    pub registered: Vec<String>,
    pub registration_stale: Vec<String>,
    pub registration_errors: Vec<String>,
    pub discovery_errors: Vec<String>,
    /// Per seat key (`<project>/<agent>`): where a reply goes, or why it cannot.
    pub reply_paths: BTreeMap<String, Result<ReplyTarget, String>>,
}

/// Run one pass. `probes`: connection checks gathered by the caller (the sidebar's background
/// batches, or `status --probe` for its page); without it every connection is `not_checked`.
pub fn run(
    opts: &ScanOptions,
    clock: &dyn Clock,
    probes: Option<&ProbeCache>,
) -> Result<Scan, ScanError> {
    let now = clock.now_ms();
    let started = std::time::Instant::now();
    let mut errors: Vec<String> = Vec::new();
    let mut truncated = false;
    let mut discovery_errors = Vec::new();

    let seen_path = opts.data_root.join("board").join("seen.json");
    let marks = seen::read_seen(&seen_path).map_err(ScanError)?;

    // Intercom roster, logs, reports.
    let (config, roster) = load_roster(&opts.root);
    let mut workers = Vec::new();
    if let Some(cfg) = &config {
        let logs = observations::read_logs(&cfg.root);
        truncated |= logs.truncated;
        errors.extend(logs.errors.iter().map(|e| e.to_string()));
        let ids: Vec<&str> = cfg.workers().map(|a| a.session_id.as_str()).collect();
        let reps = reports::read_reports(&cfg.root, &ids);
        errors.extend(reps.errors.iter().map(|e| e.to_string()));
        for a in cfg.workers() {
            workers.push(intercom::project_worker(a, &logs.events, &reps, now));
        }
    } else if let RosterStatus::Unavailable { code, .. } = &roster {
        if code != "no_root" {
            errors.push(code.clone());
        }
    }

    // Seat discovery.
    let mut seats = Vec::new();
    if let Some(cfg) = &config {
        let index = sessions::index_sessions(&opts.session_dirs);
        truncated |= index.truncated;
        // A missing default pi folder only means no sessions there; a missing folder that was
        // named explicitly is worth saying.
        let defaults = sessions::default_session_dirs();
        errors.extend(
            index
                .errors
                .iter()
                .filter(|e| !(e.error == FsError::NotFound && defaults.contains(&e.path)))
                .map(|e| format!("sessions_{}", e.error.code())),
        );
        let project = base_name(&cfg.root);
        for (i, a) in cfg.agents.iter().enumerate() {
            seats.push(SeatSource {
                project: project.clone(),
                agent: a.name.clone(),
                role: if a.coordinator {
                    RowRole::Coordinator
                } else {
                    RowRole::Worker
                },
                session_file: index.find(&a.session_id).map(Path::to_path_buf),
                session_refused: index
                    .errors
                    .iter()
                    .find(|e| {
                        e.path
                            .file_name()
                            .and_then(|n| n.to_str())
                            .and_then(sessions::session_id_from_name)
                            == Some(a.session_id.as_str())
                    })
                    .map(|e| StateReason::SessionUnreadable(SessionError::Fs(e.error))),
                sessions_dir: None,
                session_id: Some(a.session_id.clone()),
                tmux: TmuxRef::default(),
                agent_index: Some(i),
                binding: None,
                pane: None,
                found_by: None,
            });
        }
    }
    if let Some(repo) = &opts.repo {
        discover_agent_dirs(
            &repo.join(".pi").join("state"),
            &base_name(repo),
            None,
            |agent_dir| agent_dir.join("sessions"),
            &mut seats,
            &mut discovery_errors,
        );
    }
    if let Some(fleet) = &opts.fleet {
        discover_agent_dirs(
            fleet,
            "fleet",
            Some("mosaic-fleet"),
            |agent_dir| agent_dir.join(".pi").join("agent").join("sessions"),
            &mut seats,
            &mut discovery_errors,
        );
    }
    let bindings = connectors::read_bindings(&opts.data_root);
    discovery_errors.extend(bindings.errors.iter().cloned());
    for b in bindings.items {
        let sessions_dir = opts.fleet.as_ref().map(|f| {
            f.join(&b.seat)
                .join(".pi/agent/sessions")
                .join(format!("discord-{}", b.name))
        });
        seats.push(SeatSource {
            project: "fleet".into(),
            agent: format!("{} (discord: {})", b.seat, b.name),
            role: RowRole::Connector,
            session_file: sessions_dir
                .as_deref()
                .and_then(|d| sessions::newest_session_in(d).ok().flatten()),
            sessions_dir,
            session_id: None,
            session_refused: None,
            tmux: TmuxRef::default(),
            agent_index: None,
            binding: Some(b),
            pane: None,
            found_by: None,
        });
    }

    let regs = registrations::read_all(config.as_ref().map(|c| c.root.as_path()), &opts.data_root);
    truncated |= regs.truncated;

    for seat in seats.iter_mut() {
        if let Some(f) = registered_session_file(seat, &regs) {
            seat.session_file = f;
        }
    }
    // Multiplexer panes: one list per server, whatever the number of seats.
    let panes = liveness::PaneCache::collect(
        opts.liveness,
        &seat_servers(&seats, &regs),
        opts.tmux_socket.as_deref(),
    );
    // Every other pane whose process tree runs pi is a seat too (no setup needed).
    let mut found = panes::pane_seats(&panes, &mut seats, &regs);
    for seat in found.iter_mut() {
        if let Some(f) = registered_session_file(seat, &regs) {
            seat.session_file = f;
        }
    }
    seats.extend(found);

    let mut records = Vec::with_capacity(seats.len());
    let mut rows = Vec::with_capacity(seats.len());
    let mut registered = Vec::new();
    let mut registration_stale = Vec::new();
    let mut reply_paths = BTreeMap::new();
    let mut git = build::GitRoots::default();
    for seat in &seats {
        let agent_cfg = seat
            .agent_index
            .and_then(|i| config.as_ref().map(|c| &c.agents[i]));
        let session = read_seat_session(seat, &mut errors);
        let summary = session.summary();
        let reg = match_registration(seat, &regs, summary);
        let reg_alive = reg.and_then(registration_alive);
        let session = match reg.filter(|_| reg_alive == Some(true)) {
            Some(r) => at_registered_leaf(session, r),
            None => session,
        };
        let registered_pi = reg.and_then(|r| {
            Some(liveness::RegisteredPi {
                pid: r.pid?,
                alive: reg_alive?,
            })
        });
        let live = liveness::seat_liveness_registered(
            &panes,
            seat_hint(seat, reg).as_ref(),
            opts.liveness,
            registered_pi,
        );
        let obs = agent_cfg
            .filter(|a| !a.coordinator)
            .and_then(|a| workers.iter().find(|w| w.session_id == a.session_id));
        let connection = agent_cfg.map(|a| match probes {
            Some(p) => p.get(&a.session_id, a.port, now),
            None => Connection::not_checked(&a.session_id),
        });
        let mut record = build_record(
            seat,
            &session,
            reg,
            reg_alive,
            &live,
            &marks,
            obs,
            connection.as_ref(),
            &mut git,
            now,
        );
        if let Some(why) = other_session_in_pane(seat, reg, &regs, &seats) {
            if !matches!(record.state, BoardState::Offline | BoardState::Unknown) {
                record.state = BoardState::Unknown;
                record.waiting_on_you = false;
                record.state_reason = StateReason::PaneRunsOtherSession;
                record.state_source = why;
            }
        }
        if reg.is_some() {
            let key = record.key();
            match reg_alive {
                Some(false) => registration_stale.push(key),
                _ => registered.push(key),
            }
        }
        let reply = reply_target(seat, reg, reg_alive);
        if seat.role != RowRole::Coordinator {
            rows.push(build_row(
                seat,
                &record,
                agent_cfg,
                obs,
                connection.as_ref(),
                &reply,
            ));
        }
        reply_paths.insert(record.key(), reply);
        records.push(record);
    }

    // Disconnected workers sort last; configured order is kept inside both groups.
    crate::probe::sort_disconnected_last(&mut rows, |r| r.connection.state);
    let snapshot = Snapshot {
        scanned_at: now,
        roster,
        rows,
        truncated,
        errors,
    };
    crate::log::event(
        crate::log::event::SCAN_PASS,
        serde_json::json!({"ms": started.elapsed().as_millis() as u64, "seats": records.len(),
            "errors": snapshot.errors}),
    );
    Ok(Scan {
        scanned_at: now,
        data_root: opts.data_root.clone(),
        config,
        workers,
        records,
        snapshot,
        registered,
        registration_stale,
        registration_errors: regs.errors.clone(),
        discovery_errors,
        reply_paths,
    })
}

impl Scan {
    /// The probe targets of this pass: configured workers in saved order.
    pub fn probe_targets(&self) -> Vec<ProbeTarget> {
        self.config
            .iter()
            .flat_map(|c| c.workers())
            .map(|a| ProbeTarget {
                session_id: a.session_id.clone(),
                port: a.port,
            })
            .collect()
    }

    /// Show the connection checks in `probes` (taken after this pass read its evidence) on the
    /// worker rows and records, then sort disconnected workers last again.
    pub fn apply_connections(&mut self, probes: &ProbeCache, now: Ms) {
        let Some(cfg) = &self.config else { return };
        let connection = |sid: &str| {
            cfg.find_by_session(sid)
                .filter(|a| !a.coordinator)
                .map(|a| probes.get(&a.session_id, a.port, now))
        };
        for row in &mut self.snapshot.rows {
            if let Some(c) = connection(&row.id) {
                row.connection = ConnectionView::from_connection(&c);
            }
        }
        for rec in &mut self.records {
            let (Some(sid), Some(obj)) = (rec.session_id.as_deref(), rec.intercom.as_mut()) else {
                continue;
            };
            if let Some(c) = connection(sid) {
                obj["connection"] = c.to_json();
            }
        }
        crate::probe::sort_disconnected_last(&mut self.snapshot.rows, |r| r.connection.state);
    }
}

fn load_roster(choice: &RootChoice) -> (Option<IntercomConfig>, RosterStatus) {
    let root = match choice {
        RootChoice::Skip => {
            return (
                None,
                RosterStatus::Unavailable {
                    code: "no_root".into(),
                    reason: "no Intercom root was given (--no-root)".into(),
                },
            )
        }
        RootChoice::Exact(p) => p.clone(),
        // Discovery has read and validated the config already: it is not read a second time.
        RootChoice::Discover(start) => match config::discover(start) {
            Ok(Some(cfg)) => {
                let status = RosterStatus::Available {
                    root: cfg.root.display().to_string(),
                };
                return (Some(cfg), status);
            }
            Ok(None) => {
                return (
                    None,
                    RosterStatus::Unavailable {
                        code: "no_root".into(),
                        reason: format!(
                            "no .pi-intercom/config.json in {} or any folder above it",
                            start.display()
                        ),
                    },
                )
            }
            Err(e) => {
                return (
                    None,
                    RosterStatus::Unavailable {
                        code: e.code().to_string(),
                        reason: e.to_string(),
                    },
                )
            }
        },
    };
    match config::load(&root) {
        Ok(cfg) => {
            let status = RosterStatus::Available {
                root: root.display().to_string(),
            };
            (Some(cfg), status)
        }
        Err(e) => (
            None,
            RosterStatus::Unavailable {
                code: e.code().to_string(),
                reason: e.to_string(),
            },
        ),
    }
}

/// The last component of a path (the project name of a root or checkout).
pub(crate) fn base_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "/".into())
}

/// Counts per state, in the fixed state order.
pub fn counts(records: &[SeatRecord]) -> BTreeMap<&'static str, usize> {
    let mut m: BTreeMap<&'static str, usize> =
        BoardState::ALL.iter().map(|s| (s.as_str(), 0)).collect();
    for r in records {
        *m.entry(r.state.as_str()).or_default() += 1;
    }
    m
}
