//! `intercom-pane restore`: bring the roster's agents back after the tmux server (or the
//! machine) went away, each on its own saved session (docs/behaviour.md §10).
//!
//! Order: the roster → one restore at a time (a lock; a second run is told at once) → per
//! agent, the checks `resume-worker` makes (nothing runs its session: registration, board,
//! process, health endpoint; its saved file is a regular file of this user whose header names
//! its session; its launch record usable; its folder a folder) → the coordinator first, in a
//! session of its own on the server it was registered on (its extension then places the
//! sidebar) → each worker in a window beside the coordinator's pane, as `spawn` places it →
//! one bounded wait for every registration from its new pane → launch records updated →
//! `--continue`: "continue" to the agents cut off mid-turn, through the reply path.
//!
//! Idempotent: an agent whose pi runs is "already running", so a second run starts nothing.

mod check;
mod start;

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::clock::Clock;
use crate::evidence::config::{self, Agent};
use crate::exit_code::exit_enum;
use crate::owned::restore_report::{AgentRestore, RestoreOutcome, RestoreReport};
use crate::paths;
use crate::scan::{self, ScanOptions};
use crate::store;
use crate::text::sanitize;

/// Longest wait for the registrations.
pub(crate) const MAX_WAIT_SECS: u64 = 120;
const POLL: Duration = Duration::from_millis(250);

exit_enum! {
    /// The exit code of a run.
    RestoreExit {
        /// Every agent asked for is running now (restored or already running), or was left out
        /// on purpose (closed, retired); a dry run whose checks passed.
        Done = 0,
        /// A launch failed.
        Failed = 1,
        /// Usage: no root, bad config, an `--only` name the roster does not have.
        Usage = 2,
        /// At least one agent could not be started (`cannot`) or did not register in time.
        Partly = 3,
        /// Another restore of this roster is running.
        Busy = 5,
    }
}

pub(crate) struct RestoreRequest<'a> {
    pub dry_run: bool,
    /// Only these agents (configured names, case-insensitive); empty: all.
    pub only: Vec<String>,
    pub include_closed: bool,
    /// Send "continue" to the agents cut off mid-turn once they registered.
    pub continue_cut_off: bool,
    pub wait_secs: u64,
    /// The pi program for an agent whose launch record names none.
    pub pi_program: String,
    /// The system config the new pis' extension passes on as `--config`.
    pub system_config: Option<PathBuf>,
    /// The tmux server to start the coordinator on (`--tmux-socket`), over the recorded one.
    pub tmux_socket: Option<PathBuf>,
    pub scan: &'a ScanOptions,
    pub clock: &'a dyn Clock,
    pub progress: &'a dyn Fn(&str),
    /// Who asked (each restored worker's timeline says).
    pub by: crate::evidence::sessions::timeline::Actor,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Ending {
    pub exit: RestoreExit,
    pub report: Box<RestoreReport>,
}

fn refused(exit: RestoreExit, msg: impl Into<String>) -> Ending {
    Ending {
        exit,
        report: Box::new(RestoreReport::refused(msg.into())),
    }
}

pub(crate) fn restore(req: &RestoreRequest) -> Ending {
    if !(1..=MAX_WAIT_SECS).contains(&req.wait_secs) {
        return refused(
            RestoreExit::Usage,
            format!("--wait-secs must be 1..{MAX_WAIT_SECS}"),
        );
    }
    let root = match &req.scan.root {
        scan::RootChoice::Exact(r) => Some(r.clone()),
        scan::RootChoice::Discover(start) => config::discover_root(start).ok().flatten(),
        scan::RootChoice::Skip => None,
    };
    let Some(root) = root.map(|r| paths::absolute(&r)) else {
        return refused(RestoreExit::Usage, "no Intercom root: nothing to restore");
    };
    let cfg = match config::load(&root) {
        Ok(c) => c,
        Err(e) => return refused(RestoreExit::Usage, e.to_string()),
    };
    let retired = check::retired(&root, &cfg);
    if let Some(name) = req.only.iter().find(|n| {
        cfg.find_by_name(n).is_none() && !retired.iter().any(|r| r.name.eq_ignore_ascii_case(n))
    }) {
        return refused(
            RestoreExit::Usage,
            format!("no agent named {:?} in the roster", sanitize(name)),
        );
    }
    // One restore at a time, held to the end (a dry run starts nothing and takes no lock).
    let _lock = if req.dry_run {
        None
    } else {
        if let Err(e) = store::ensure_dir(&root, &paths::jobs_dir(&root)) {
            return refused(RestoreExit::Failed, format!("cannot prepare the lock: {e}"));
        }
        match store::Lock::acquire(&paths::restore_lock(&root)) {
            Ok(l) => Some(l),
            Err(e) if e.code == store::code::StoreCode::Locked => {
                return refused(
                    RestoreExit::Busy,
                    "another restore of this roster is running now: nothing started (run it again once that one ended)",
                )
            }
            Err(e) => return refused(RestoreExit::Failed, e.to_string()),
        }
    };
    test_pause();
    let pass = match scan::run(req.scan, req.clock, None, None) {
        Ok(p) => p,
        Err(e) => return refused(RestoreExit::Usage, e.to_string()),
    };
    let wanted =
        |a: &Agent| req.only.is_empty() || req.only.iter().any(|n| n.eq_ignore_ascii_case(&a.name));
    // The coordinator first: the workers open beside its pane.
    let mut agents: Vec<&Agent> = cfg.agents.iter().filter(|a| wanted(a)).collect();
    agents.sort_by_key(|a| !a.coordinator);
    let mut lines = Vec::new();
    let mut plans = Vec::new();
    for a in agents {
        match check::agent(req, &root, &pass, a) {
            Ok(plan) => plans.push(plan),
            Err(line) => lines.push(*line),
        }
    }
    let mut report = RestoreReport {
        version: 1,
        started_nothing: true,
        dry_run: req.dry_run,
        reason: None,
        root: Some(root.display().to_string()),
        server: None,
        agents: Vec::new(),
    };
    let began = req.clock.now_ms();
    let started = start::start_all(req, &root, &cfg, plans, &mut report);
    lines.extend(started);
    lines.extend(
        retired
            .into_iter()
            .filter(|r| req.only.iter().any(|n| n.eq_ignore_ascii_case(&r.name)))
            .map(|r| {
                let mut l = AgentRestore::new(&r.name, &r.session_id, false);
                l.outcome = RestoreOutcome::Retired;
                l.reason = Some(format!("retired at {}: not in the roster", r.retired_at));
                l
            }),
    );
    // The coordinator's line first, then the roster's order.
    let order = |l: &AgentRestore| {
        cfg.agents
            .iter()
            .position(|a| a.session_id == l.session_id)
            .map_or(usize::MAX, |i| if l.coordinator { 0 } else { i + 1 })
    };
    lines.sort_by_key(order);
    report.agents = lines;
    if !req.dry_run {
        crate::actions::worker_events::restored(&req.scan.data_root, began, req.by, &report);
    }
    let exit = exit_of(&report);
    Ending {
        exit,
        report: Box::new(report),
    }
}

fn exit_of(report: &RestoreReport) -> RestoreExit {
    use RestoreOutcome::*;
    let outcomes = || report.agents.iter().map(|a| a.outcome);
    if outcomes().any(|o| o == Failed) {
        RestoreExit::Failed
    } else if outcomes().any(|o| matches!(o, Cannot | LaunchedUnconfirmed)) {
        RestoreExit::Partly
    } else {
        RestoreExit::Done
    }
}

/// Test-only, never set in real use: `INTERCOM_PANE_TEST_PAUSE_IN_RESTORE=<file>` makes a
/// restore holding its lock create `<file>` and wait (at most 10 s) until it is removed, so a
/// test can run a second restore against it without sleeping and hoping.
pub(crate) const TEST_PAUSE_ENV: &str = "INTERCOM_PANE_TEST_PAUSE_IN_RESTORE";

fn test_pause() {
    if let Some(path) = std::env::var_os(TEST_PAUSE_ENV) {
        crate::actions::pause_for_test(Path::new(&path));
    }
}
