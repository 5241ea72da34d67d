//! The loop every live view runs on (the sidebar, `status --watch`, `scan --watch`): it sleeps in
//! one `poll(2)` on the inotify fd, each held pi's pidfd, each tmux control client and a waker,
//! and runs a pass only when something changed (coalesced), when a state that depends on time may
//! have changed (`Plan::recheck`), or when the long timer for a full pass is due. Nothing runs
//! while nothing changes.
//!
//! A pass is whatever the caller's `Passes` does (the scan, with what it remembers); it tells the
//! engine what to watch next (`Plan`): the folders it read, the pis it saw and the tmux servers
//! it listed.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::coalesce::Coalescer;
use super::files::{Change, Spec, WatchSet};
use super::panes::{Panes, ServerHealth, ServerWatch};
use super::pids::PidSet;
use super::wake::Waker;
use crate::proc::ProcIdentity;

/// A full pass this often, whatever the events said (docs/behaviour.md §3a).
pub(crate) const FULL_EVERY: Duration = Duration::from_secs(30);
/// A full pass this often while folders are not all watched (no inotify, or a limit reached).
pub(crate) const DEGRADED_EVERY: Duration = Duration::from_secs(3);
/// Most changed file paths remembered between passes; more make the next pass a full one.
const MAX_DIRTY: usize = 4096;
/// Most fds polled at once (waker, inotify, clients, pidfds).
const MAX_FDS: usize = 2048;

/// How often full passes run.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    pub full_every: Duration,
    pub degraded_every: Duration,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            full_every: FULL_EVERY,
            degraded_every: DEGRADED_EVERY,
        }
    }
}

/// One check of the long timer, for the pass's log event: whether it found everything as it
/// was, whether it was the first after its pass (it hashes the folders: `Baseline`), how many
/// checks in a row found so, the µs it spent, and how many folders it looked at.
#[derive(Debug, Clone, Copy, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckNote {
    pub same: bool,
    pub first: bool,
    pub in_row: u32,
    pub us: CheckMicros,
    pub folders: usize,
}

/// The µs a check spent on panes, processes and git, and folders.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct CheckMicros {
    pub panes: u64,
    pub procs: u64,
    pub folders: u64,
}

/// What changed since the last pass.
#[derive(Debug, Clone, Default)]
pub struct Why {
    /// Everything may have changed: list every server again, trust nothing remembered.
    pub full: bool,
    /// Short names of what woke the engine (`start`, `timer`, `files`, `folders`, `overflow`,
    /// `panes`, `exit`, `recheck`, `gone`; `probe` when the sidebar's probe timer asked), for
    /// the log.
    pub reasons: BTreeSet<&'static str>,
    /// Files written, created, removed or renamed.
    pub files: BTreeSet<PathBuf>,
    /// tmux servers whose panes must be listed again (by socket).
    pub servers: BTreeSet<PathBuf>,
    /// Held pis that exited.
    pub exited: Vec<ProcIdentity>,
}

impl Why {
    fn note(&mut self, reason: &'static str) {
        self.reasons.insert(reason);
    }
}

/// What a pass tells the engine to watch until the next one.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// The folders the pass read, with the names in them that matter.
    pub folders: Vec<Spec>,
    /// The pis it saw alive (held by pidfds).
    pub pis: Vec<ProcIdentity>,
    /// The tmux servers it listed (a control client each).
    pub servers: Vec<ServerWatch>,
    /// Some state shown depends on time (a retry's backoff window, an observation turning
    /// stale): look again after this long even if nothing changes.
    pub recheck: Option<Duration>,
}

/// One pass of whatever the caller shows.
pub trait Passes {
    type Out;
    /// Run one pass over what changed (`why`); say what to watch next (`None`: what is watched
    /// now, untouched — a pass that found nothing moved).
    fn pass(&mut self, why: &Why) -> (Self::Out, Option<Plan>);
    /// The tmux servers whose clients listen now: their listings may be kept from the last
    /// pass, except those in `stale` (`Why::servers`). The engine tells the runner before each
    /// pass.
    fn listening(&mut self, _servers: &[PathBuf], _stale: &BTreeSet<PathBuf>) {}
    /// How the engine watches changed (`doctor` reads it from the runner's record).
    fn health_changed(&mut self, _health: &Health) {}
    /// What the pass just made found before it ran, for its log event (`check`); asked only
    /// while the log is on.
    fn check_note(&self) -> Option<CheckNote> {
        None
    }
}

/// Why the engine woke the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// A pass is due: call `pass`.
    Pass,
    /// The caller's own time (`wait`'s `extra`) came, or its waker was interrupted.
    Timer,
    /// Stop (the waker, or SIGTERM/SIGHUP/SIGINT after `stop_on_signals`).
    Stop,
}

/// How the engine watches: shown by `doctor`, the log and `--watch` heartbeats.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Health {
    /// `events` while every folder is watched, else `polling` (full passes every
    /// `DEGRADED_EVERY`).
    pub mode: &'static str,
    /// Folders watched.
    pub watches: usize,
    /// Why some folder is not watched: `inotify_watch_limit`, `watch_cap`, `inotify_unavailable`.
    pub limit: Option<&'static str>,
    /// Folders (or parents of missing ones) left unwatched by the limit.
    pub unwatched: usize,
    /// Kernel queue overflows so far (each made the next pass a full one), and when the last
    /// one was seen.
    pub overflows: u64,
    pub last_overflow_at: Option<String>,
    /// pis held by a pidfd.
    pub pids: usize,
    /// tmux servers and whether a control client listens on each.
    pub servers: Vec<ServerHealthView>,
    /// Seconds between full passes now.
    pub full_every_secs: u64,
}

/// One server in `Health`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerHealthView {
    pub socket: String,
    pub listening: bool,
    pub by: &'static str,
    pub last_error: Option<String>,
}

impl From<ServerHealth> for ServerHealthView {
    fn from(s: ServerHealth) -> Self {
        ServerHealthView {
            socket: s.socket.display().to_string(),
            listening: s.listening,
            by: s.by,
            last_error: s.last_error,
        }
    }
}

/// The engine: event sources, what they said since the last pass, and the timers.
pub struct Engine<P: Passes> {
    runner: P,
    settings: Settings,
    files: Option<WatchSet>,
    pids: PidSet,
    panes: Panes,
    coalesce: Coalescer,
    waker: Waker,
    pending: Why,
    /// The watch plan needs a sync (a folder came or went, an overflow, a new plan).
    resync: bool,
    last_folders: Vec<Spec>,
    next_full: Instant,
    recheck_at: Option<Instant>,
    /// Consecutive passes that named a pi already gone (a pass after one is enough).
    gone_streak: u32,
    health: Option<Health>,
    /// What the last pass was for.
    last_why: Why,
    last_overflow_at: Option<String>,
    /// `poll` calls since the last pass (the pass log's `polls`: a quiet engine polls about
    /// once per pass).
    polls: u32,
    /// The fds `poll` waits on and what each is, kept between sleeps.
    poll_set: (Vec<libc::pollfd>, Vec<Src>),
}

/// What a polled fd is.
#[derive(Clone, Copy)]
enum Src {
    Waker,
    Files,
    Client(usize),
    Pid,
}

impl<P: Passes> Engine<P> {
    /// An engine around `runner`; the first `wait` returns `Pass` at once (a full pass).
    pub fn new(runner: P, settings: Settings) -> std::io::Result<Engine<P>> {
        let mut pending = Why {
            full: true,
            ..Why::default()
        };
        pending.note("start");
        let mut coalesce = Coalescer::new();
        let now = Instant::now();
        coalesce.note(now);
        Ok(Engine {
            runner,
            settings,
            // Without inotify (no instance left for this user) the engine polls, and says so.
            files: WatchSet::new().ok(),
            pids: PidSet::new(),
            panes: Panes::new(),
            coalesce,
            waker: Waker::new()?,
            pending,
            resync: true,
            last_folders: Vec::new(),
            next_full: now + settings.full_every,
            recheck_at: None,
            gone_streak: 0,
            health: None,
            last_why: Why::default(),
            last_overflow_at: None,
            polls: 0,
            poll_set: (Vec::new(), Vec::new()),
        })
    }

    /// Wakes (or stops) this engine from another thread or a signal handler.
    pub fn waker(&self) -> Waker {
        self.waker.clone()
    }

    pub fn runner(&mut self) -> &mut P {
        &mut self.runner
    }

    /// Whether every folder is watched (else full passes run every `degraded_every`).
    fn degraded(&self) -> bool {
        self.files.as_ref().is_none_or(|f| f.limit().is_some())
    }

    fn full_interval(&self) -> Duration {
        if self.degraded() {
            self.settings.degraded_every
        } else {
            self.settings.full_every
        }
    }

    /// Run the pass that is due (or one now): everything noted since the last one.
    pub fn pass(&mut self) -> P::Out {
        let started = Instant::now();
        let mut why = std::mem::take(&mut self.pending);
        if started >= self.next_full {
            why.full = true;
            why.note("timer");
        }
        let listening: Vec<PathBuf> = self
            .panes
            .health()
            .into_iter()
            .filter(|s| s.listening)
            .map(|s| s.socket)
            .collect();
        // Even the timer's full pass keeps what a listening client vouches for (and `/proc`
        // confirms): no process runs while nothing changes.
        self.runner.listening(&listening, &why.servers);
        let (out, plan) = self.runner.pass(&why);
        let now = Instant::now();
        self.coalesce.passed(started, now - started, now);
        match plan {
            Some(plan) => self.apply(plan, now),
            // A pass that found nothing moved keeps what is watched; while some folder is not,
            // it tries again all the same (a limit may allow it now).
            None => {
                self.sync_folders(None, now);
                self.report_health();
            }
        }
        // After `apply`: a limit the sync just met shortens the interval at once.
        if why.full {
            self.next_full = started + self.full_interval();
        }
        if crate::log::enabled() {
            crate::log::write(&crate::log::LivePass {
                ms: (now - started).as_millis() as u64,
                full: why.full,
                why: &why.reasons,
                files: why.files.len(),
                exited: why.exited.len(),
                polls: self.polls,
                check: self.runner.check_note(),
            });
        }
        self.last_why = why;
        self.polls = 0;
        out
    }

    /// What the last pass was for.
    pub fn last_why(&self) -> &Why {
        &self.last_why
    }

    /// Watch what the pass said, and note what the watching found already out of date.
    fn apply(&mut self, plan: Plan, now: Instant) {
        self.sync_folders(Some(plan.folders), now);
        let gone = self.pids.sync(&plan.pis);
        if gone > 0 && self.gone_streak == 0 {
            // The pass saw a pi alive that is gone now: one more pass says so.
            self.gone_streak += 1;
            self.pending.note("gone");
            self.coalesce.note(now);
        } else if gone == 0 {
            self.gone_streak = 0;
        }
        self.panes.sync(&plan.servers, now);
        self.recheck_at = plan.recheck.map(|d| now + d);
        self.report_health();
    }

    /// Watch `folders` (`None`: the ones watched now). A sync `lstat`s every folder: only when
    /// they changed, a folder came or went, or some folder is still unwatched (a limit may allow
    /// it now).
    fn sync_folders(&mut self, folders: Option<Vec<Spec>>, now: Instant) {
        let Some(files) = self.files.as_mut() else {
            return;
        };
        let changed = folders.as_ref().is_some_and(|f| *f != self.last_folders);
        if !(self.resync || files.limit().is_some() || changed) {
            return;
        }
        let first = self.last_folders.is_empty();
        if let Some(f) = folders {
            self.last_folders = f;
        }
        let added = files.sync(&self.last_folders);
        self.resync = false;
        // A folder that appeared after the engine started (a data root's `board/` made by the
        // first seen mark) may have been written between the pass that found it and its watch:
        // one more pass reads what the watch could not see.
        if added > 0 && !first {
            self.pending.note("watched");
            self.coalesce.note(now);
        }
    }

    /// Log the health when it changed (`live_watch`), and an overflow each time.
    fn report_health(&mut self) {
        let h = self.health();
        if self.health.as_ref() != Some(&h) {
            crate::log::write(&crate::log::LiveWatch(&h));
            self.runner.health_changed(&h);
            self.health = Some(h);
        }
    }

    /// How the engine watches now.
    pub fn health(&self) -> Health {
        let (watches, limit, unwatched, overflows) = match &self.files {
            Some(f) => (
                f.len(),
                f.limit().map(|l| l.as_str()),
                f.unwatched(),
                f.overflows(),
            ),
            None => (0, Some("inotify_unavailable"), 0, 0),
        };
        Health {
            mode: if self.degraded() { "polling" } else { "events" },
            watches,
            limit,
            unwatched,
            overflows,
            last_overflow_at: self.last_overflow_at.clone(),
            pids: self.pids.len(),
            servers: self.panes.health().into_iter().map(Into::into).collect(),
            full_every_secs: self.full_interval().as_secs(),
        }
    }

    /// A pass the caller's own timer asks for (the sidebar's probes): `reason` is noted for the
    /// next pass, which the board may answer with its check when nothing else is pending.
    pub fn ask(&mut self, reason: &'static str) {
        self.pending.note(reason);
    }

    /// Sleep until a pass is due (`Pass`), `extra` comes (`Timer`), or the engine is stopped.
    pub fn wait(&mut self, extra: Option<Instant>) -> Wake {
        loop {
            if self.waker.stopped() {
                return Wake::Stop;
            }
            if self.waker.take_interrupt() {
                return Wake::Timer;
            }
            let now = Instant::now();
            if self.recheck_at.is_some_and(|t| t <= now) {
                self.recheck_at = None;
                self.pending.note("recheck");
                self.coalesce.note(now);
            }
            if self.next_full <= now && !self.coalesce.pending() {
                // The timer's own pass gathers no burst: no quiet time to wait for (one wake
                // for it, not two).
                if self.coalesce.may_start(now) {
                    return Wake::Pass;
                }
                self.coalesce.note(now);
            }
            if self.panes.next_due().is_some_and(|t| t <= now)
                && self.panes.on_timer(now, &mut self.pending.servers)
            {
                self.pending.note("panes");
                self.coalesce.note(now);
            }
            if self.coalesce.due().is_some_and(|t| t <= now) {
                return Wake::Pass;
            }
            if extra.is_some_and(|t| t <= now) {
                return Wake::Timer;
            }
            // A full pass already noted waits for the coalescer, not for its own time, which
            // is past: as a deadline it would make `poll` return at once until the pass starts.
            let full = (!self.coalesce.pending()).then_some(self.next_full);
            let deadline = [
                self.coalesce.due(),
                full,
                self.recheck_at,
                self.panes.next_due(),
                extra,
            ]
            .into_iter()
            .flatten()
            .min();
            self.sleep(deadline);
        }
    }

    /// One `poll` until `deadline` (or forever), then take in what is ready.
    fn sleep(&mut self, deadline: Option<Instant>) {
        // Kept between sleeps: an idle engine allocates nothing to sleep.
        let (mut fds, mut srcs) = std::mem::take(&mut self.poll_set);
        fds.clear();
        srcs.clear();
        self.sleep_on(deadline, &mut fds, &mut srcs);
        self.poll_set = (fds, srcs);
    }

    fn sleep_on(
        &mut self,
        deadline: Option<Instant>,
        fds: &mut Vec<libc::pollfd>,
        srcs: &mut Vec<Src>,
    ) {
        let mut push = |fd, s| {
            if fds.len() < MAX_FDS {
                fds.push(libc::pollfd {
                    fd,
                    events: libc::POLLIN,
                    revents: 0,
                });
                srcs.push(s);
            }
        };
        push(self.waker.raw_fd(), Src::Waker);
        if let Some(f) = &self.files {
            push(f.raw_fd(), Src::Files);
        }
        for (fd, i) in self.panes.fds() {
            push(fd, Src::Client(i));
        }
        for fd in self.pids.fds() {
            push(fd, Src::Pid);
        }
        let timeout = match deadline {
            None => -1,
            Some(d) => {
                let left = d.saturating_duration_since(Instant::now());
                // Round up: waking a millisecond early would only loop once more.
                i32::try_from(left.as_micros().div_ceil(1000)).unwrap_or(i32::MAX)
            }
        };
        self.polls = self.polls.saturating_add(1);
        // SAFETY: `fds` is a valid, initialized slice of pollfd for its whole length.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout) };
        if n <= 0 {
            return;
        }
        let now = Instant::now();
        let mut changes = Vec::new();
        for (p, s) in fds.iter().zip(srcs.iter().copied()) {
            if p.revents == 0 {
                continue;
            }
            match s {
                Src::Waker => self.waker.drain(),
                Src::Files => {
                    if let Some(f) = self.files.as_mut() {
                        f.drain(&mut changes);
                    }
                }
                Src::Client(i) => {
                    if self.panes.read(i, now, &mut self.pending.servers) {
                        self.pending.note("panes");
                        self.coalesce.note(now);
                    }
                }
                Src::Pid => {
                    let exited = self.pids.ready(p.fd);
                    if !exited.is_empty() {
                        self.pending.exited.extend(exited);
                        self.pending.note("exit");
                        // Its pane may have closed with it, or shows its shell now.
                        self.pending.servers.extend(self.panes.sockets());
                        self.coalesce.note(now);
                    }
                }
            }
        }
        self.take_changes(changes, now);
    }

    fn take_changes(&mut self, changes: Vec<Change>, now: Instant) {
        if changes.is_empty() {
            return;
        }
        for c in changes {
            match c {
                Change::Entry { dir, name } => {
                    if self.pending.files.len() < MAX_DIRTY {
                        self.pending.files.insert(dir.join(name));
                        self.pending.note("files");
                    } else {
                        self.pending.full = true;
                        self.pending.note("files");
                    }
                }
                Change::Folder(_) => {
                    self.resync = true;
                    self.pending.full = true;
                    self.pending.note("folders");
                }
                Change::Overflow => {
                    self.last_overflow_at = Some(crate::clock::format_iso(
                        crate::clock::Clock::now_ms(&crate::clock::SystemClock),
                    ));
                    self.resync = true;
                    self.pending.full = true;
                    self.pending.note("overflow");
                    crate::log::write(&crate::log::LiveOverflow {
                        overflows: self.files.as_ref().map(|f| f.overflows()),
                    });
                }
            }
        }
        self.coalesce.note(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts passes; watches the folders and pis it is given.
    struct Fake {
        plan: Plan,
        passes: Vec<Why>,
    }

    impl Passes for Fake {
        type Out = usize;
        fn pass(&mut self, why: &Why) -> (usize, Option<Plan>) {
            self.passes.push(why.clone());
            (self.passes.len(), Some(self.plan.clone()))
        }
    }

    fn engine(plan: Plan) -> Engine<Fake> {
        Engine::new(
            Fake {
                plan,
                passes: Vec::new(),
            },
            Settings::default(),
        )
        .unwrap()
    }

    #[test]
    fn a_write_wakes_one_pass_and_nothing_runs_while_nothing_changes() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().to_path_buf();
        let mut e = engine(Plan {
            folders: vec![Spec::suffix(&dir, ".jsonl")],
            ..Plan::default()
        });
        assert_eq!(e.wait(None), Wake::Pass);
        assert_eq!(e.pass(), 1);
        assert!(e.runner().passes[0].full);
        // Quiet: the caller's timer comes first, no pass.
        let soon = Instant::now() + Duration::from_millis(150);
        assert_eq!(e.wait(Some(soon)), Wake::Timer);
        for i in 0..64 {
            std::fs::write(dir.join(format!("w{i}.jsonl")), "x").unwrap();
        }
        let t0 = Instant::now();
        assert_eq!(e.wait(None), Wake::Pass);
        assert!(t0.elapsed() < Duration::from_secs(2));
        assert_eq!(e.pass(), 2);
        let why = &e.runner().passes[1];
        assert!(!why.full);
        assert_eq!(why.files.len(), 64, "{why:?}");
        let soon = Instant::now() + Duration::from_millis(100);
        assert_eq!(e.wait(Some(soon)), Wake::Timer);
        assert_eq!(e.runner().passes.len(), 2);
        assert_eq!(e.health().mode, "events");
        assert_eq!(e.health().watches, 1);
    }

    #[test]
    fn a_pi_exit_wakes_at_once_and_a_waker_stops() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let id = crate::proc::identity(child.id() as i32).unwrap();
        let mut e = engine(Plan {
            pis: vec![id.clone()],
            ..Plan::default()
        });
        assert_eq!(e.wait(None), Wake::Pass);
        e.pass();
        assert_eq!(e.health().pids, 1);
        child.kill().unwrap();
        let t0 = Instant::now();
        assert_eq!(e.wait(None), Wake::Pass);
        assert!(t0.elapsed() < Duration::from_secs(2));
        // The pass sees it gone (a pass that still named it would get one more pass).
        e.runner().plan.pis.clear();
        e.pass();
        assert_eq!(e.runner().passes[1].exited, vec![id]);
        child.wait().unwrap();
        let w = e.waker();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            w.stop();
        });
        assert_eq!(e.wait(None), Wake::Stop);
    }

    #[test]
    fn an_interrupt_ends_one_wait_as_the_callers_time() {
        let mut e = engine(Plan::default());
        assert_eq!(e.wait(None), Wake::Pass);
        e.pass();
        let w = e.waker();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            w.interrupt();
        });
        let t0 = Instant::now();
        assert_eq!(e.wait(None), Wake::Timer);
        assert!(t0.elapsed() < Duration::from_secs(2));
        // Once: the next wait sleeps again (here until its own time).
        let soon = Instant::now() + Duration::from_millis(100);
        assert_eq!(e.wait(Some(soon)), Wake::Timer);
        assert!(Instant::now() >= soon);
    }

    #[test]
    fn a_time_bound_state_is_looked_at_again() {
        let mut e = engine(Plan {
            recheck: Some(Duration::from_millis(50)),
            ..Plan::default()
        });
        assert_eq!(e.wait(None), Wake::Pass);
        e.pass();
        assert_eq!(e.wait(None), Wake::Pass);
        e.pass();
        assert!(e.runner().passes[1].reasons.contains("recheck"));
    }

    #[test]
    fn a_due_full_pass_sleeps_until_it_starts() {
        let mut e = Engine::new(
            Fake {
                plan: Plan::default(),
                passes: Vec::new(),
            },
            Settings {
                full_every: Duration::from_millis(40),
                degraded_every: Duration::from_millis(40),
            },
        )
        .unwrap();
        assert_eq!(e.wait(None), Wake::Pass);
        e.pass();
        assert_eq!(e.wait(None), Wake::Pass);
        // One poll until the full pass is due, one for the coalescer's quiet time: a past
        // deadline would have made `poll` return at once, hundreds of times.
        assert!(e.polls <= 4, "{} polls", e.polls);
        e.pass();
        assert!(e.runner().passes[1].full);
        assert!(e.runner().passes[1].reasons.contains("timer"));
    }
}
