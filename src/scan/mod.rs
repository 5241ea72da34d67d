//! One bounded pass over every evidence source into one immutable result (`Scan`).
//!
//! Stages: seen marks (refuse when invalid) → Intercom roster, logs, reports → discover seats
//! (`discover.rs`: Intercom agents, repo and fleet agents, connectors, registrations, one pane
//! list per multiplexer server, pane seats) → join each seat (`join.rs`: session file,
//! registration, liveness, classification; `build.rs` the record and row) → assemble. Views
//! only read `Scan`.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use crate::board::intercom::{self, WorkerObservation};
use crate::board::record::{SeatKey, SeatRecord};
use crate::clock::{Clock, Ms};
use crate::evidence::config::{self, ConfigMemo, IntercomConfig};
use crate::evidence::observations;
use crate::evidence::reports;
use crate::evidence::seen::{self, SeenError};
use crate::evidence::sessions::usage::{self, UsageView};
use crate::evidence::ScanMemory;
use crate::liveness::LivenessMode;
use crate::probe::{ProbeCache, ProbeTarget};
use crate::snapshot::{ConnectionView, PassError, RosterCode, RosterStatus, Snapshot};
use crate::states::BoardState;

mod build;
mod checks;
mod discover;
mod join;
mod panes;
mod seats;

pub(crate) use checks::Checks;
pub(crate) use panes::pi_session_dir;
pub(crate) use seats::ReplyTarget;
pub use seats::ReplyUnavailable;

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
    /// Bytes a pass without memory reads forward for tokens and cost, over all seats, beyond
    /// each session file's first read (`usage::ONE_SHOT_BUDGET`; `status` reads none): what it
    /// does not reach is marked "at least". A pass with memory reads `SIDEBAR_PASS_BUDGET`.
    pub usage_reads: u64,
    /// Pane listings a live view keeps between passes (none: every server is listed).
    pub kept_panes: Option<std::sync::Arc<crate::liveness::KeptPanes>>,
}

/// A refusal that stops the pass (exit 2).
#[derive(Debug)]
pub enum ScanError {
    /// `board/seen.json` cannot be used: dropping every mark would bring acknowledged rows back.
    Seen(SeenError),
}

impl std::fmt::Display for ScanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ScanError::Seen(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ScanError {}

/// The immutable result of one pass.
pub struct Scan {
    pub scanned_at: Ms,
    pub data_root: PathBuf,
    pub config: Option<IntercomConfig>,
    /// One per configured worker (coordinator excluded), in configured order.
    pub workers: Vec<WorkerObservation>,
    pub records: Vec<SeatRecord>,
    pub snapshot: Snapshot,
    pub registered: Vec<SeatKey>,
    pub registration_stale: Vec<SeatKey>,
    pub registration_errors: Vec<String>,
    pub discovery_errors: Vec<PassError>,
    /// Per seat: where a reply goes, or why it cannot.
    pub reply_paths: BTreeMap<SeatKey, Result<ReplyTarget, ReplyUnavailable>>,
    /// Every live pi the pass saw (live registrations, and the pis listed panes run): a live
    /// view holds each by a pidfd.
    pub pis: Vec<crate::proc::ProcIdentity>,
    /// Each multiplexer server that answered: kind, socket, a session on it (`$N`, tmux), the
    /// process of a pane on it.
    pub servers: Vec<(crate::mux::MuxKind, PathBuf, Option<String>, Option<i32>)>,
    /// What the states rest on beyond files and pane listings (a live view's timer check).
    pub checks: Checks,
    /// Folders a pane's pi was judged by beyond the seats' own files, each with the suffix of
    /// the names that matter: an undecided pi's session folder (`.jsonl`: a file its evidence
    /// may soon name), another roster's seats folder (`.json`: its registration appearing
    /// moves that pi off this board). A live view watches them.
    pub pane_folders: Vec<(PathBuf, &'static str)>,
}

/// Run one pass. `probes`: connection checks gathered by the caller (the sidebar's background
/// batches, or `status --probe` for its page); without it every connection is `not_checked`.
/// `memory`: what earlier passes of the same caller read (the sidebar keeps one); one-shot
/// commands pass none and every file is read fresh.
///
/// Stages: the seen marks (a pass refuses when they are invalid) and the Intercom roster, then
/// discover seats, join each seat, assemble.
pub fn run(
    opts: &ScanOptions,
    clock: &dyn Clock,
    probes: Option<&ProbeCache>,
    memory: Option<&ScanMemory>,
) -> Result<Scan, ScanError> {
    let now = clock.now_ms();
    let started = std::time::Instant::now();
    let seen_path = opts.data_root.join("board").join("seen.json");
    let marks = seen::read_seen(&seen_path).map_err(ScanError::Seen)?;
    let intercom = read_intercom(&opts.root, now, memory);
    let found = discover::discover_seats(opts, intercom.config.as_ref());
    let mut errors = intercom.errors;
    errors.extend(found.errors.iter().cloned());
    let mut workers = HashMap::new();
    for w in &intercom.workers {
        workers.entry(w.session_id.as_str()).or_insert(w);
    }
    let pass = join::Pass {
        opts,
        config: intercom.config.as_ref(),
        workers: &workers,
        regs: &found.regs,
        panes: &found.panes,
        seats: &found.seats,
        marks: &marks,
        probes,
        sessions: memory.map(|m| &m.sessions),
        usage: memory.map(|m| &m.usage),
        usage_budget: std::cell::Cell::new(match memory {
            Some(_) => usage::SIDEBAR_PASS_BUDGET,
            None => opts.usage_reads,
        }),
        now,
    };
    let mut git = build::GitRoots::default();
    // Each seat's parts go straight to their place: a record and row are about 1.7 KB, and a
    // list of whole joined seats copied again afterwards was a large part of a 255-seat pass.
    let mut seats = SeatParts::with_capacity(found.seats.len());
    for seat in &found.seats {
        seats.add(pass.join(seat, &mut git, &mut errors));
    }
    let snapshot = Snapshot {
        scanned_at: now,
        roster: intercom.roster,
        rows: Vec::new(),
        truncated: intercom.truncated || found.truncated,
        errors,
        usage: UsageView::default(),
        hosts: Vec::new(),
    };
    let scan = assemble(
        opts,
        intercom.config,
        intercom.workers,
        found,
        seats,
        snapshot,
        git,
    );
    crate::log::write(&crate::log::ScanPass {
        ms: started.elapsed().as_millis() as u64,
        seats: scan.records.len(),
        errors: &scan.snapshot.errors,
    });
    Ok(scan)
}

/// The Intercom roster with its workers' observations and reports.
struct Intercom {
    config: Option<IntercomConfig>,
    roster: RosterStatus,
    workers: Vec<WorkerObservation>,
    /// Logs and reports that could not be read.
    errors: Vec<PassError>,
    truncated: bool,
}

fn read_intercom(root: &RootChoice, now: Ms, memory: Option<&ScanMemory>) -> Intercom {
    let (config, roster) = load_roster(root, memory.map(|m| &m.config));
    let mut out = Intercom {
        config: None,
        roster,
        workers: Vec::new(),
        errors: Vec::new(),
        truncated: false,
    };
    if let Some(cfg) = &config {
        let logs = observations::read_logs_with(&cfg.root, memory.map(|m| &m.logs));
        out.truncated |= logs.truncated;
        out.errors
            .extend(logs.errors.iter().map(|e| PassError::Source(e)));
        let ids: Vec<&str> = cfg.workers().map(|a| a.session_id.as_str()).collect();
        let reps = reports::read_reports(&cfg.root, &ids, memory.map(|m| &m.reports));
        out.errors
            .extend(reps.errors.iter().map(|e| PassError::Source(e)));
        let events = intercom::EventIndex::new(&logs.events);
        out.workers = cfg
            .workers()
            .map(|a| intercom::project_worker(a, &events, &reps, now))
            .collect();
    } else if let RosterStatus::Unavailable { code, .. } = &out.roster {
        if *code != RosterCode::NoRoot {
            out.errors.push(PassError::Source(code.as_str()));
        }
    }
    out.config = config;
    out
}

/// The joined seats of a pass, split into the parts a `Scan` keeps, in discovery order.
struct SeatParts {
    records: Vec<SeatRecord>,
    rows: Vec<crate::snapshot::Row>,
    registered: Vec<SeatKey>,
    registration_stale: Vec<SeatKey>,
    reply_paths: BTreeMap<SeatKey, Result<ReplyTarget, ReplyUnavailable>>,
}

impl SeatParts {
    fn with_capacity(n: usize) -> SeatParts {
        SeatParts {
            records: Vec::with_capacity(n),
            rows: Vec::with_capacity(n),
            registered: Vec::new(),
            registration_stale: Vec::new(),
            reply_paths: BTreeMap::new(),
        }
    }

    fn add(&mut self, j: join::Joined) {
        let key = j.record.key();
        match j.registered {
            Some(false) => self.registration_stale.push(key.clone()),
            Some(true) => self.registered.push(key.clone()),
            None => {}
        }
        self.rows.extend(j.row);
        self.reply_paths.insert(key, j.reply);
        self.records.push(j.record);
    }
}

/// The pass's result from its joined seats, in discovery order; disconnected workers sort last.
fn assemble(
    opts: &ScanOptions,
    config: Option<IntercomConfig>,
    workers: Vec<WorkerObservation>,
    found: discover::Discovered,
    seats: SeatParts,
    mut snapshot: Snapshot,
    git: build::GitRoots,
) -> Scan {
    snapshot.rows = seats.rows;
    // Tokens and cost over every seat with a session file (the coordinator too).
    snapshot.usage =
        seats
            .records
            .iter()
            .filter_map(|r| r.usage)
            .fold(UsageView::default(), |mut all, u| {
                all.add(&u);
                all
            });
    if let Some(cfg) = &config {
        crate::budget::fleet_onto(&mut snapshot.rows, cfg);
    }
    let mut records = seats.records;
    // The board files carry what the rows show of the budget (by key: a search of the rows per
    // record was quadratic at 255 seats).
    let budgets: HashMap<&str, &crate::budget::BudgetView> = snapshot
        .rows
        .iter()
        .filter_map(|r| Some((r.seen_key.as_str(), r.budget.as_ref()?)))
        .collect();
    for rec in records.iter_mut() {
        rec.budget = budgets.get(rec.key().as_str()).map(|b| (*b).clone());
    }
    let pis = live_pis(&found);
    let checks = Checks::of(&found, git);
    let servers = found.panes.answered();
    // Configured order is kept inside both groups.
    crate::probe::sort_disconnected_last(&mut snapshot.rows, |r| r.connection.state);
    Scan {
        scanned_at: snapshot.scanned_at,
        data_root: opts.data_root.clone(),
        config,
        workers,
        records,
        snapshot,
        registered: seats.registered,
        registration_stale: seats.registration_stale,
        registration_errors: found.regs.errors,
        discovery_errors: found.discovery_errors,
        reply_paths: seats.reply_paths,
        pis,
        servers,
        checks,
        pane_folders: found.pane_folders,
    }
}

/// The live registered pis and the pis panes run, each once (identity read now: the pane's pi
/// was found by this pass a moment ago).
fn live_pis(found: &discover::Discovered) -> Vec<crate::proc::ProcIdentity> {
    let mut out: Vec<crate::proc::ProcIdentity> = found
        .regs
        .items
        .iter()
        .filter_map(|r| r.identity())
        .filter(crate::proc::is_alive)
        .collect();
    for &pid in &found.pane_pis {
        if out.iter().any(|id| id.pid == pid) {
            continue;
        }
        out.extend(crate::proc::identity(pid));
    }
    out
}

/// Why a name names no single seat of a pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SeatLookup {
    Unknown,
    /// Several seats have that agent name: their keys.
    Ambiguous(Vec<String>),
}

impl Scan {
    /// The key of the seat `who` names: `<project>/<agent>` exactly, else an agent name
    /// (case-insensitive) that only one seat has (reply, explain).
    pub fn find_seat(&self, who: &str) -> Result<String, SeatLookup> {
        if self.records.iter().any(|r| r.key() == who) {
            return Ok(who.to_string());
        }
        let want = who.to_lowercase();
        let hits: Vec<String> = self
            .records
            .iter()
            .filter(|r| r.agent.to_lowercase() == want)
            .map(|r| r.key().into())
            .collect();
        match hits.as_slice() {
            [] => Err(SeatLookup::Unknown),
            [k] => Ok(k.clone()),
            _ => Err(SeatLookup::Ambiguous(hits)),
        }
    }

    /// The probe targets of this pass: configured workers in saved order.
    pub fn probe_targets(&self) -> Vec<ProbeTarget> {
        self.config.as_ref().map(probe_targets).unwrap_or_default()
    }

    /// Show the connection checks in `probes` (taken after this pass read its evidence) on the
    /// worker rows and records, then sort disconnected workers last again.
    pub fn apply_connections(&mut self, probes: &ProbeCache, now: Ms) {
        let Some(cfg) = &self.config else { return };
        for rec in &mut self.records {
            let (Some(sid), Some(obj)) = (rec.session_id.as_deref(), rec.intercom.as_mut()) else {
                continue;
            };
            if let Some(c) = connection_of(cfg, sid, probes, now) {
                obj.connection = c;
            }
        }
        connections_onto(&mut self.snapshot.rows, cfg, probes, now);
    }
}

/// The roster's workers, as probe targets.
pub(crate) fn probe_targets(cfg: &IntercomConfig) -> Vec<ProbeTarget> {
    cfg.workers()
        .map(|a| ProbeTarget {
            session_id: a.session_id.clone(),
            port: a.port,
        })
        .collect()
}

/// A worker's connection check in `probes`, as of `now` (`None`: not a worker).
fn connection_of(
    cfg: &IntercomConfig,
    sid: &str,
    probes: &ProbeCache,
    now: Ms,
) -> Option<crate::probe::Connection> {
    cfg.find_by_session(sid)
        .filter(|a| !a.coordinator)
        .map(|a| probes.get(&a.session_id, a.port, now))
}

/// Show the connection checks in `probes` on the worker rows, then sort disconnected workers
/// last again (a pass's rows, or the rows shown when a check found nothing else moved).
pub(crate) fn connections_onto(
    rows: &mut [crate::snapshot::Row],
    cfg: &IntercomConfig,
    probes: &ProbeCache,
    now: Ms,
) {
    for row in rows.iter_mut() {
        if let Some(c) = connection_of(cfg, &row.id, probes, now) {
            row.connection = ConnectionView::from_connection(&c);
        }
    }
    crate::probe::sort_disconnected_last(rows, |r| r.connection.state);
}

fn load_roster(
    choice: &RootChoice,
    memo: Option<&ConfigMemo>,
) -> (Option<IntercomConfig>, RosterStatus) {
    let unavailable = |code, reason| (None, RosterStatus::Unavailable { code, reason });
    let loaded = match choice {
        RootChoice::Skip => {
            let why = "no Intercom root was given (--no-root)";
            return unavailable(RosterCode::NoRoot, why.into());
        }
        RootChoice::Exact(root) => config::load_with(root, memo),
        // Discovery has read and validated the config already: it is not read a second time.
        RootChoice::Discover(start) => match config::discover_with(start, memo) {
            Ok(Some(cfg)) => Ok(cfg),
            Ok(None) => {
                let why = format!(
                    "no .pi-intercom/config.json in {} or any folder above it",
                    start.display()
                );
                return unavailable(RosterCode::NoRoot, why);
            }
            Err(e) => Err(e),
        },
    };
    match loaded {
        Ok(cfg) => {
            let root = cfg.root.display().to_string();
            (Some(cfg), RosterStatus::Available { root })
        }
        Err(e) => unavailable(RosterCode::Config(e.code()), e.to_string()),
    }
}

/// The last component of a path (the project name of a root or checkout).
pub(crate) fn base_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "/".into())
}

/// Counts per state, in the fixed state order.
pub(crate) fn counts(records: &[SeatRecord]) -> BTreeMap<&'static str, usize> {
    let mut m: BTreeMap<&'static str, usize> =
        BoardState::ALL.iter().map(|s| (s.as_str(), 0)).collect();
    for r in records {
        *m.entry(r.state.as_str()).or_default() += 1;
    }
    m
}
