//! `intercom-pane spawn NAME`: add a worker to the roster and start its pi in a new window (Herdr:
//! tab) beside the coordinator, without taking focus, in one guarded step (docs/behaviour.md §10).
//!
//! Order: the input alone (name, flags, first task) → the root → one spawn of this name at a
//! time (a lock) → every refusal on the roster as it is (name taken, roster full, folder, no
//! coordinator pane) → launch spec (stage `reserved`) → worktree → roster entry, under the
//! roster's lock, re-checked there → spec `launching` → the window, pi as an argv → spec
//! `launched` → wait for the new seat to register from inside that pane → spec `registered` →
//! the first task through the reply path. Each stage is recorded before its step, so a spawn
//! stopped anywhere leaves the roster valid and a note saying what it left; the next spawn of
//! the name picks it up (`reserve::Kind`) instead of being blocked by it.

mod input;
mod launch;
mod reserve;
mod sidebar;
pub(crate) mod worktree;

use std::path::{Path, PathBuf};

use crate::actions::worker_events;
use crate::clock::Clock;
use crate::evidence::config;
use crate::evidence::sessions::timeline::Actor;
use crate::exit_code::exit_enum;
use crate::owned::spawn_report::SpawnReport;
use crate::paths;
use crate::scan::{self, ScanOptions};
use crate::store;
use crate::text::sanitize;

#[cfg(test)]
pub(crate) use input::THINKING_LEVELS;
pub(crate) use input::{check_name, SESSION_FLAGS};

/// Longest wait for the new seat's registration.
pub(crate) const MAX_WAIT_SECS: u64 = 120;

exit_enum! {
    /// The exit code of a run, one per way it can end.
    SpawnExit {
        /// Started and registered (and the first task delivered or queued, when one was given).
        Spawned = 0,
        /// A step failed; the report says what was kept.
        Failed = 1,
        /// Bad flags or setup: no root, a bad roster, a bad flag value or first task.
        Usage = 2,
        /// The name cannot be a worker's (blank, too long, control, invisible or separator
        /// characters, reserved).
        BadName = 3,
        /// The roster has the name, or another spawn of it is running now.
        Taken = 4,
        /// The folder: missing, not writable, outside the root; a worktree refused.
        BadFolder = 5,
        /// The roster holds the most agents it may.
        Full = 6,
        /// No coordinator pane to open the window beside.
        NoPlace = 7,
        /// Launched, but the new seat did not register before the wait ended.
        LaunchedUnconfirmed = 8,
        /// Registered, but the first task was not delivered.
        PromptNotDelivered = 9,
    }
}

/// Where the worker works.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Folder {
    /// The root itself (`projectDirectory` `.`).
    Root,
    /// A folder under the root.
    Dir(PathBuf),
    /// A new git worktree (on this branch, else one named after the worker).
    Worktree(Option<String>),
}

pub(crate) struct SpawnRequest<'a> {
    pub name: String,
    pub folder: Folder,
    pub description: Option<String>,
    /// The first task (already read from `--prompt-file`).
    pub prompt: Option<String>,
    pub model: Option<String>,
    pub thinking: Option<String>,
    /// Arguments for pi after `--`.
    pub extra_args: Vec<String>,
    /// The worker's budget, written into its roster entry (already checked).
    pub budget: Option<crate::budget::spec::Budget>,
    pub wait_secs: u64,
    /// The pi program to run (a name looked up on PATH, or a path).
    pub pi_program: String,
    /// The system config the new pi's extension passes on as `--config`.
    pub system_config: Option<PathBuf>,
    pub scan: &'a ScanOptions,
    pub clock: &'a dyn Clock,
    /// Progress lines while waiting.
    pub progress: &'a dyn Fn(&str),
    /// Who asked (the worker's timeline says).
    pub by: Actor,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Ending {
    pub exit: SpawnExit,
    pub report: Box<SpawnReport>,
}

pub(crate) fn refused(exit: SpawnExit, msg: impl std::fmt::Display) -> Ending {
    Ending {
        exit,
        report: Box::new(SpawnReport::refused(msg.to_string())),
    }
}

/// The input alone: refused before anything is read or written.
fn check_input(req: &SpawnRequest) -> Result<(), Ending> {
    input::check_name(&req.name).map_err(|e| refused(SpawnExit::BadName, e))?;
    if !(1..=MAX_WAIT_SECS).contains(&req.wait_secs) {
        return Err(refused(
            SpawnExit::Usage,
            format!("--wait-secs must be 1..{MAX_WAIT_SECS}"),
        ));
    }
    input::description(req.description.as_deref(), &req.name)
        .map_err(|e| refused(SpawnExit::Usage, e))?;
    if let Some(p) = &req.prompt {
        input::check_prompt(p).map_err(|e| refused(SpawnExit::Usage, e))?;
    }
    input::pi_args(
        "id",
        req.model.as_deref(),
        req.thinking.as_deref(),
        &req.extra_args,
    )
    .map_err(|e| refused(SpawnExit::Usage, e))?;
    if req.pi_program.is_empty() || req.pi_program.contains('\0') {
        return Err(refused(SpawnExit::Usage, "--pi names no program"));
    }
    Ok(())
}

/// The root, absolute (the window's folder must not depend on where tmux runs).
fn root_of(req: &SpawnRequest) -> Result<PathBuf, Ending> {
    let found = match &req.scan.root {
        scan::RootChoice::Exact(r) => Some(r.clone()),
        scan::RootChoice::Discover(start) => {
            config::discover_root(start).map_err(|e| refused(SpawnExit::Usage, e.to_string()))?
        }
        scan::RootChoice::Skip => None,
    };
    let root = found.ok_or_else(|| {
        refused(
            SpawnExit::Usage,
            "no Intercom root here (run `intercom-pane init`, or give --root)",
        )
    })?;
    Ok(paths::absolute(&root))
}

pub(crate) fn spawn(req: &SpawnRequest) -> Ending {
    if let Err(e) = check_input(req) {
        return e;
    }
    let started = req.clock.now_ms();
    let root = match root_of(req) {
        Ok(r) => r,
        Err(e) => return e,
    };
    if let Err(e) = config::load(&root) {
        return refused(SpawnExit::Usage, e.to_string());
    }
    if let Err(e) = store::ensure_dir(&root, &paths::jobs_dir(&root)) {
        return refused(SpawnExit::Failed, format!("cannot prepare the lock: {e}"));
    }
    // One spawn of a name at a time, held to the end: a second is refused at once.
    let _lock = match store::Lock::acquire(&paths::spawn_lock(&root, &req.name)) {
        Ok(l) => l,
        Err(e) if e.code == store::code::StoreCode::Locked => {
            return refused(
                SpawnExit::Taken,
                format!("another spawn of {} is running now", sanitize(&req.name)),
            )
        }
        Err(e) => return refused(SpawnExit::Failed, e.to_string()),
    };
    test_pause("locked");
    let mut plan = match reserve::plan(req, &root) {
        Ok(p) => p,
        Err(e) => return e,
    };
    let spec = match reserve::reserve(req, &root, &mut plan) {
        Ok(s) => s,
        Err(e) => return e,
    };
    let end = launch::launch(req, &root, &plan, spec);
    worker_events::spawned(&req.scan.data_root, started, req.by, &end.report);
    end
}

/// First port tried when the roster has none above it.
const FIRST_PORT: u16 = 47001;
/// Ports tried upward from the roster's highest before asking the kernel for a free one.
const PORT_TRIES: u16 = 64;

/// A loopback port for a new agent: the next free one above the roster's highest (`used`; the
/// roster's own convention, 47001 in an empty one), else one the kernel picks; never one another
/// agent has. The format requires a port on every entry; the Intercom extension saves the one
/// it listens on.
pub(crate) fn free_port(used: &[u16]) -> Option<u16> {
    use std::net::TcpListener;
    let free = |p: u16| !used.contains(&p) && TcpListener::bind(("127.0.0.1", p)).is_ok();
    let start = used
        .iter()
        .max()
        .map_or(FIRST_PORT, |p| p.saturating_add(1))
        .max(1024);
    (start..start.saturating_add(PORT_TRIES))
        .find(|p| free(*p))
        .or_else(|| {
            let p = TcpListener::bind(("127.0.0.1", 0))
                .ok()?
                .local_addr()
                .ok()?
                .port();
            free(p).then_some(p)
        })
}

/// Test-only, never set in real use: `INTERCOM_PANE_TEST_PAUSE_IN_SPAWN=<stage>:<file>` makes a
/// spawn reaching `<stage>` (`locked`: holding its name's lock; `reserved`: spec written, no
/// worktree or roster entry yet; `launching`: in the roster, no window yet; `launched`: the
/// window opened, before the wait) create `<file>` and wait (at most 10 s) until it is removed,
/// so a test can race a second spawn or a config writer against it, or kill it there, without
/// sleeping and hoping.
pub(crate) const TEST_PAUSE_ENV: &str = "INTERCOM_PANE_TEST_PAUSE_IN_SPAWN";

pub(super) fn test_pause(stage: &str) {
    let Some(v) = std::env::var_os(TEST_PAUSE_ENV) else {
        return;
    };
    let v = v.to_string_lossy();
    if let Some(file) = v.strip_prefix(stage).and_then(|r| r.strip_prefix(':')) {
        crate::actions::pause_for_test(Path::new(file));
    }
}
