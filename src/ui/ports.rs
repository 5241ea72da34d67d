//! The small interfaces the sidebar talks through, so the UI itself never touches files,
//! multiplexers, processes or probes: the runner passes real implementations in.

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::clock::Ms;
use crate::snapshot::Snapshot;

/// Called once when a token is cancelled (wakes a waiter that sleeps in `poll`, not here).
type OnCancel = Box<dyn Fn() + Send + Sync>;

/// A shared cancel flag: set once on quit; waiters wake immediately.
#[derive(Clone, Default)]
pub struct CancelToken {
    inner: Arc<(Mutex<bool>, Condvar)>,
    on_cancel: Arc<Mutex<Vec<OnCancel>>>,
}

impl CancelToken {
    /// A fresh, not-cancelled token.
    pub fn new() -> Self {
        Self::default()
    }

    /// Set the flag and wake every waiter.
    pub fn cancel(&self) {
        let (lock, cv) = &*self.inner;
        if let Ok(mut g) = lock.lock() {
            *g = true;
        }
        cv.notify_all();
        if let Ok(fs) = self.on_cancel.lock() {
            for f in fs.iter() {
                f();
            }
        }
    }

    /// Also call `f` when the token is cancelled (at once if it already is).
    pub fn on_cancel(&self, f: OnCancel) {
        if self.is_cancelled() {
            f();
        }
        if let Ok(mut fs) = self.on_cancel.lock() {
            fs.push(f);
        }
    }

    /// Whether `cancel` was called.
    pub fn is_cancelled(&self) -> bool {
        let (lock, _) = &*self.inner;
        lock.lock().map(|g| *g).unwrap_or(true)
    }

    /// Sleep up to `dur`; returns true as soon as the token is cancelled.
    pub fn wait_timeout(&self, dur: Duration) -> bool {
        let (lock, cv) = &*self.inner;
        let deadline = Instant::now() + dur;
        let Ok(mut g) = lock.lock() else {
            return true;
        };
        // Bounded: each wake re-checks the deadline, and spurious wakes cannot extend it.
        while !*g {
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            match cv.wait_timeout(g, deadline - now) {
                Ok((ng, _)) => g = ng,
                Err(_) => return true,
            }
        }
        true
    }
}

/// What each roster worker changed in git (by row id), read off the UI thread when the board
/// asks for it, for the Changes column (docs/behaviour.md §11). Read-only; bounded by its own
/// deadlines.
pub trait ChangesSource: Send + Sync {
    /// The changes of the workers whose row id is in `only` (every worker: `None`); a worker
    /// without a checkout is left out.
    fn read(
        &self,
        only: Option<&std::collections::BTreeSet<String>>,
    ) -> std::collections::BTreeMap<String, crate::ui::changes::RowChanges>;
    /// The review view (`v`) of one row: its files and its diff; `None` when it has no checkout.
    fn review(&self, row_id: &str) -> Option<crate::ui::changes::ReviewText>;
}

/// One pass of a source.
pub enum Pass {
    /// A snapshot to show.
    New(Snapshot),
    /// The board is exactly what the last `New` snapshot showed, as of `scanned_at`: its views
    /// only note the new time and draw nothing new. Only the live source says so (a pass that
    /// found nothing new, `Snapshot::same_board`, or the long timer's check that made none).
    Same { scanned_at: Ms },
}

/// Where snapshots come from: one bounded pass per call, run on a background thread.
pub trait SnapshotSource: Send {
    /// Run one pass and return its snapshot. Should return early once `cancel_token()` is set.
    fn next_snapshot(&mut self) -> Snapshot;
    /// Run one pass; a source that can tell says when it found nothing new. A timed source's
    /// every pass is new.
    fn next_pass(&mut self) -> Pass {
        Pass::New(self.next_snapshot())
    }
    /// The token this source watches (probes abort when it is cancelled); the runner cancels it on quit.
    fn cancel_token(&self) -> CancelToken;
    /// Sleep until the next pass is due; true when the token was cancelled meanwhile. A timed
    /// source waits `interval`; the live source waits for a change (docs/behaviour.md §3a).
    fn wait_for_change(&mut self, interval: Duration) -> bool {
        self.cancel_token().wait_timeout(interval)
    }
    /// A way for another thread to end a `wait_for_change` early (it returns false, not a
    /// stop): the hosts board, once a host is named, moves this machine's passes to a thread of
    /// their own. `None`: the wait ends by itself within its interval.
    fn interrupter(&self) -> Option<Interrupter> {
        None
    }
}

/// Ends a source's current (or next) `wait_for_change` once (`SnapshotSource::interrupter`).
pub(crate) type Interrupter = Arc<dyn Fn() + Send + Sync>;

/// The other hosts of the board (docs/behaviour.md §12): "retry now" (`H`).
pub trait HostsControl: Send + Sync {
    /// Every host waiting to be asked again is asked now (returns at once).
    fn retry_now(&self);
    /// Host `name` is asked again now if it is waiting to (returns at once); whether the board
    /// has it.
    fn retry_host(&self, name: &str) -> bool;
}

/// Told about each frame that shows seats in a new state (the `live_frame` log event the
/// latency bench reads); `enabled` is false when nobody listens, so nothing is compared.
pub trait FrameLog: Send + Sync {
    fn enabled(&self) -> bool;
    /// `changed`: (row id, new state) of each row whose state differs from the last frame;
    /// `scanned_at`: the pass the frame shows.
    fn frame(&self, changed: &[(String, &'static str)], scanned_at: Ms);
}

/// Why a Seen/Unsee mark was not saved: said to the person (sanitized when shown).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SeenNotSaved {
    /// The writer refused or failed (its own message, e.g. `seen_invalid: …`).
    Failed(String),
    /// There is no writer (a run without a data root).
    NoWriter(String),
}

impl std::fmt::Display for SeenNotSaved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SeenNotSaved::Failed(m) | SeenNotSaved::NoWriter(m) => {
                f.write_str(&crate::text::sanitize(m))
            }
        }
    }
}

impl std::error::Error for SeenNotSaved {}

impl From<String> for SeenNotSaved {
    fn from(m: String) -> SeenNotSaved {
        SeenNotSaved::Failed(m)
    }
}

impl From<&str> for SeenNotSaved {
    fn from(m: &str) -> SeenNotSaved {
        SeenNotSaved::Failed(m.to_string())
    }
}

/// Writes a Seen/Unsee mark (the real one, in `cmd::monitor_cmd`, goes through `actions::seen`).
pub trait SeenWriter: Send + Sync {
    /// Mark (`seen = true`) or unmark `key` at exactly `last_activity_iso`.
    fn set_seen(&self, key: &str, last_activity_iso: &str, seen: bool) -> Result<(), SeenNotSaved>;
}

/// A Seen writer that refuses, for runs without a data root.
pub struct NoSeenWriter {
    /// Shown to the user as is.
    pub reason: String,
}

impl SeenWriter for NoSeenWriter {
    fn set_seen(&self, _key: &str, _last: &str, _seen: bool) -> Result<(), SeenNotSaved> {
        Err(SeenNotSaved::NoWriter(self.reason.clone()))
    }
}

/// One reply the user asked to send from the sidebar.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplyRequest {
    /// `Row::id` of the seat (receipts are keyed by it).
    pub row_id: String,
    /// `<project>/<agent>`.
    pub seen_key: String,
    /// Seat name as configured (raw).
    pub name: String,
    /// The target the box named (`ReplyPath::Available` when it opened, and still the row's
    /// target when Enter was pressed); the sender must refuse if the seat is no longer there.
    pub target: String,
    /// The text exactly as typed.
    pub text: String,
    /// The seat's host when it is not this machine, and the pane and pi the row showed (the
    /// identity the host's `reply --expect-seat` must find unchanged).
    pub host: Option<crate::snapshot::RowHost>,
    pub pane: Option<crate::snapshot::SeatPane>,
}

/// What happened to one reply. Never retried by the UI.
#[derive(Debug, Clone, PartialEq)]
pub enum ReplyOutcome {
    /// Sent at `at` to `target`; `outcome` is what pi made of it: `delivered` (a turn started),
    /// `queued` (behind the running turn) or `unconfirmed` (no answer in time; never resent).
    Delivered {
        at: Ms,
        target: String,
        outcome: &'static str,
    },
    /// The tool ran and failed.
    Failed {
        exit: Option<i32>,
        signal: Option<i32>,
        stderr: String,
    },
    /// Refused before anything was sent.
    Refused { reason: String },
}

/// Delivers one reply; implemented by the reply-path issue. Called on a worker thread.
pub trait ReplySender: Send + Sync {
    /// `Some(reason)` when this sender can never deliver (the box shows why up front).
    fn unavailable_reason(&self) -> Option<String> {
        None
    }
    /// Deliver once; never retry.
    fn send(&self, req: &ReplyRequest) -> ReplyOutcome;
}

/// The sender until the reply path exists: refuses every reply with a clear reason.
pub struct NoReplyPath;

/// Why `NoReplyPath` refuses.
pub const NO_REPLY_PATH_REASON: &str = "reply path not available in this build";

impl ReplySender for NoReplyPath {
    fn unavailable_reason(&self) -> Option<String> {
        Some(NO_REPLY_PATH_REASON.to_string())
    }
    fn send(&self, _req: &ReplyRequest) -> ReplyOutcome {
        ReplyOutcome::Refused {
            reason: NO_REPLY_PATH_REASON.to_string(),
        }
    }
}

/// A seat as the person saw it when they acted: what the action must find unchanged.
#[derive(Debug, Clone, PartialEq)]
pub struct SeatRef {
    /// `Row::id` (the session id when known).
    pub row_id: String,
    /// `<project>/<agent>`.
    pub seen_key: String,
    /// The seat's name as configured (raw).
    pub name: String,
    /// The pane and pi the row showed (`None`: no live pane).
    pub pane: Option<crate::snapshot::SeatPane>,
    /// The seat's host when it is not this machine.
    pub host: Option<crate::snapshot::RowHost>,
}

impl SeatRef {
    /// The seat of a row as shown now.
    pub fn of(row: &crate::snapshot::Row) -> SeatRef {
        SeatRef {
            row_id: row.id.clone(),
            seen_key: row.seen_key.clone(),
            name: row.name.clone(),
            pane: row.pane.clone(),
            host: row.host.clone(),
        }
    }
}

/// What a jump to a seat's pane did.
#[derive(Debug, Clone, PartialEq)]
pub enum JumpOutcome {
    /// The person's client (tmux) or Herdr now shows `pane`.
    Moved { pane: String },
    /// Nothing moved: why (the seat moved, no pane, another server, …).
    Refused { reason: String },
}

/// Moves the person between panes; implemented in `cmd::monitor_cmd` through `mux/`.
pub trait Navigator: Send + Sync {
    /// Take the person to the seat's pane, after checking that it is still the pane and the pi
    /// they saw. Called on a worker thread.
    fn jump(&self, seat: &SeatRef) -> JumpOutcome;
    /// Make the sidebar's own pane at least `lines` tall when its window has room; `false`
    /// when nothing was done.
    fn keep_height(&self, _lines: u16) -> bool {
        false
    }
}

/// A navigator that never moves anything (runs outside a multiplexer, tests).
pub struct NoNavigator {
    /// Shown to the person as is.
    pub reason: String,
}

impl Navigator for NoNavigator {
    fn jump(&self, _seat: &SeatRef) -> JumpOutcome {
        JumpOutcome::Refused {
            reason: self.reason.clone(),
        }
    }
}

/// A guarded action on one worker, started from the list after a confirmation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkerAction {
    /// `close-worker`: handoff, settled turn, then the pane closed.
    Close,
    /// `resume-worker --confirm-closed`: a closed worker back in a session (Herdr: tab) of its own.
    Resume,
    /// `budget --raise`: the worker's cost limit raised by half (`budget::change::sidebar_step`).
    RaiseBudget,
    /// `spawn`: a new worker from the form (run through the `Spawner`, never the
    /// `WorkerControl`); its job shows on the new row once the scan lists it.
    Spawn,
}

impl WorkerAction {
    /// The command's name, as the row and receipts say it.
    pub fn command(self) -> &'static str {
        match self {
            WorkerAction::Close => "close-worker",
            WorkerAction::Resume => "resume-worker",
            WorkerAction::Spawn => "spawn",
            WorkerAction::RaiseBudget => "budget",
        }
    }
}

/// How a worker action ended: its command's result word (`closed`, `resumed`, `refused`, …), a
/// one-line summary, and whether it did what was asked.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkerOutcome {
    pub ok: bool,
    pub result: String,
    pub detail: String,
}

/// Runs close-worker and resume-worker; implemented in `cmd::monitor_cmd` through the same
/// guarded code as the commands. Called on a worker thread; `stage` reports progress.
pub trait WorkerControl: Send + Sync {
    /// `Some(reason)` when this run can never act on workers.
    fn unavailable_reason(&self) -> Option<String> {
        None
    }
    /// Run `action` on the seat (refusing when it is no longer the seat the person saw).
    fn run(&self, action: WorkerAction, seat: &SeatRef, stage: &dyn Fn(&str)) -> WorkerOutcome;
}

/// Worker control that refuses everything, with a reason.
pub struct NoWorkerControl {
    pub reason: String,
}

impl WorkerControl for NoWorkerControl {
    fn unavailable_reason(&self) -> Option<String> {
        Some(self.reason.clone())
    }
    fn run(&self, _a: WorkerAction, _s: &SeatRef, _stage: &dyn Fn(&str)) -> WorkerOutcome {
        WorkerOutcome {
            ok: false,
            result: "refused".into(),
            detail: self.reason.clone(),
        }
    }
}

/// A worker the person asked the sidebar's spawn form to start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpawnAsk {
    /// The name as typed (the spawner checks it with the command's rules).
    pub name: String,
    /// The first task, when one was typed.
    pub prompt: Option<String>,
    /// In a new git worktree (a branch named after the worker).
    pub worktree: bool,
}

/// Runs `spawn` for the sidebar (the real one, in `cmd::spawn_cmd`, is the command's own
/// guarded code). Called on a worker thread; `stage` reports progress. The outcome is a worker
/// action's: the command's result word (`spawned`, `refused`, …) and a one-line detail.
pub trait Spawner: Send + Sync {
    /// `Some(reason)` when this run can never spawn (no roster).
    fn unavailable_reason(&self) -> Option<String> {
        None
    }
    fn spawn(&self, ask: &SpawnAsk, stage: &dyn Fn(&str)) -> WorkerOutcome;
}

/// A spawner that refuses, with a reason.
pub(crate) struct NoSpawner {
    pub reason: String,
}

impl Spawner for NoSpawner {
    fn unavailable_reason(&self) -> Option<String> {
        Some(self.reason.clone())
    }
    fn spawn(&self, _ask: &SpawnAsk, _stage: &dyn Fn(&str)) -> WorkerOutcome {
        WorkerOutcome {
            ok: false,
            result: "refused".into(),
            detail: self.reason.clone(),
        }
    }
}

/// Reads a worker's timeline for the sidebar's `l` panel (`log NAME`'s lines, newest last).
pub trait TimelineReader: Send + Sync {
    /// The lines, or why there are none (the seat gone, no session file, another machine's).
    fn read(&self, seat: &SeatRef) -> Result<Vec<String>, NoLines>;
}

/// Why the `l` panel shows no lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoLines {
    /// This sidebar reads no timelines (tests, the demo).
    NotHere,
    /// Another machine's worker (its name, sanitized).
    OtherHost(String),
    Gone,
    /// The pass or the log refused, in its own words.
    Refused(String),
}

impl std::fmt::Display for NoLines {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoLines::NotHere => f.write_str("this sidebar cannot read timelines"),
            NoLines::OtherHost(name) => write!(
                f,
                "another machine's worker: run `intercom-pane log {name} --host HOST` there"
            ),
            NoLines::Gone => f.write_str("the worker is gone from the board"),
            NoLines::Refused(why) => f.write_str(why),
        }
    }
}

/// No timeline in this run (tests, the demo).
pub(crate) struct NoTimeline;

impl TimelineReader for NoTimeline {
    fn read(&self, _seat: &SeatRef) -> Result<Vec<String>, NoLines> {
        Err(NoLines::NotHere)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cancel_wakes_a_waiter() {
        let t = CancelToken::new();
        assert!(!t.wait_timeout(Duration::from_millis(5)));
        let t2 = t.clone();
        let h = std::thread::spawn(move || t2.wait_timeout(Duration::from_secs(10)));
        std::thread::sleep(Duration::from_millis(20));
        let start = Instant::now();
        t.cancel();
        assert!(h.join().unwrap());
        assert!(start.elapsed() < Duration::from_secs(2));
        assert!(t.is_cancelled());
    }
}
