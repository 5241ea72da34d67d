//! Batches of probes and the cache that carries their results across passes.
//!
//! A batch is bounded three ways: ≤ 16 probes in flight (a semaphore), a 4 s wall budget, and
//! only the first 256 targets. What a batch could not finish keeps its earlier, unexpired check
//! (or reads `not_checked`); cancelled in-flight probes read `aborted`. Neither is ever
//! `disconnected`. The next batch starts at the first target this one did not finish, so a
//! roster larger than one budget is covered over successive batches.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{watch, Semaphore};
use tokio::task::JoinSet;

use super::http::probe_one;
use super::{reason, valid_target, Connection};
use super::{BATCH_BUDGET_MS, CHECK_TTL_MS, MAX_IN_FLIGHT, MAX_TARGETS, REQUEST_DEADLINE_MS};
use crate::clock::Ms;
use crate::states::ConnState;

/// One worker to check: its session id and its configured port.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ProbeTarget {
    /// The session id config says owns the port.
    pub session_id: String,
    /// The configured loopback port.
    pub port: u16,
}

/// The bounds of a batch; `Default` is docs/interop.md §5. Values above those are clamped down.
#[derive(Debug, Clone, Copy)]
pub struct ProbeLimits {
    /// Whole-request deadline (750 ms).
    pub request_deadline: Duration,
    /// Wall budget of one batch (4 s).
    pub batch_budget: Duration,
    /// Probes in flight at once (16).
    pub max_in_flight: usize,
    /// Targets considered per batch (first 256).
    pub max_targets: usize,
    /// Age after which a check reads `stale` (30 s).
    pub ttl_ms: Ms,
}

impl Default for ProbeLimits {
    fn default() -> Self {
        ProbeLimits {
            request_deadline: Duration::from_millis(REQUEST_DEADLINE_MS),
            batch_budget: Duration::from_millis(BATCH_BUDGET_MS),
            max_in_flight: MAX_IN_FLIGHT,
            max_targets: MAX_TARGETS,
            ttl_ms: CHECK_TTL_MS,
        }
    }
}

impl ProbeLimits {
    /// Never looser than the spec: tests may tighten limits, nothing may widen them.
    fn clamped(self) -> Self {
        let d = ProbeLimits::default();
        ProbeLimits {
            request_deadline: self.request_deadline.min(d.request_deadline),
            batch_budget: self.batch_budget.min(d.batch_budget),
            max_in_flight: self.max_in_flight.clamp(1, d.max_in_flight),
            max_targets: self.max_targets.min(d.max_targets),
            ttl_ms: self.ttl_ms.clamp(0, d.ttl_ms),
        }
    }
}

/// What one batch did; counts are over distinct valid targets among the first 256.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BatchStats {
    /// Distinct valid targets considered (after the 256 cap and de-duplication).
    pub considered: usize,
    /// Targets refused before any network use (port 0, blank id...).
    pub invalid: usize,
    /// Targets beyond the first 256, never probed.
    pub over_cap: usize,
    /// Probes started.
    pub started: usize,
    /// Probes that finished with a classification.
    pub completed: usize,
    /// Completed probes by state.
    pub connected: usize,
    /// Completed as disconnected.
    pub disconnected: usize,
    /// Completed as unknown (legacy, http_error, malformed...).
    pub unknown: usize,
    /// In flight when the budget ran out (their earlier check, if any, is kept).
    pub cut_by_budget: usize,
    /// Never started (budget or cancel).
    pub not_started: usize,
    /// In flight when the batch was cancelled (recorded as `aborted`).
    pub aborted: usize,
    /// Whether the 4 s budget ended the batch.
    pub budget_exhausted: bool,
    /// Whether the cancel signal ended the batch.
    pub cancelled: bool,
    /// Most probes holding a connection at once, counted client-side.
    pub max_in_flight: usize,
    /// Position in the considered list where this batch started (rotation).
    pub start_index: usize,
    /// Wall time of the batch.
    pub elapsed: Duration,
}

impl BatchStats {
    /// One more completed probe, counted under its state.
    fn count(&mut self, state: ConnState) {
        self.completed += 1;
        match state {
            ConnState::Connected => self.connected += 1,
            ConnState::Disconnected => self.disconnected += 1,
            ConnState::Unknown => self.unknown += 1,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Check {
    state: ConnState,
    reason: &'static str,
    checked_at: Ms,
}

/// Checks carried across batches, keyed by (session id, port) so a changed port never inherits.
#[derive(Debug, Default)]
pub struct ProbeCache {
    checks: HashMap<(String, u16), Check>,
    /// Where the next batch starts in the considered list.
    cursor: usize,
    limits: ProbeLimits,
}

impl ProbeCache {
    /// An empty cache with the spec's limits.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty cache with tighter limits (tests, benches); looser values are clamped to the spec.
    pub fn with_limits(limits: ProbeLimits) -> Self {
        ProbeCache {
            limits: limits.clamped(),
            ..Self::default()
        }
    }

    /// The connection to show for this worker at `now`.
    pub fn get(&self, session_id: &str, port: u16, now: Ms) -> Connection {
        if !valid_target(session_id, port) {
            return Connection {
                session_id: session_id.to_string(),
                state: ConnState::Unknown,
                reason: reason::INVALID_INPUT,
                checked_at: None,
            };
        }
        let Some(check) = self.checks.get(&(session_id.to_string(), port)) else {
            return Connection::not_checked(session_id);
        };
        let expired = check.checked_at > now || now - check.checked_at > self.limits.ttl_ms;
        let (state, why) = if expired {
            (ConnState::Unknown, reason::STALE)
        } else {
            (check.state, check.reason)
        };
        Connection {
            session_id: session_id.to_string(),
            state,
            reason: why,
            checked_at: Some(check.checked_at),
        }
    }

    /// Number of checks held (expired ones included until their target leaves the roster).
    pub fn len(&self) -> usize {
        self.checks.len()
    }

    /// Whether no check is held.
    pub fn is_empty(&self) -> bool {
        self.checks.is_empty()
    }

    /// Probe `targets` (the roster, in config order) within the limits, updating the cache.
    ///
    /// `targets` is taken as the whole roster the cache serves: checks for (session, port) pairs
    /// not in it are dropped first. A long-lived cache (the sidebar) passes every worker; a
    /// one-shot page check (`status --json --probe`) uses its own fresh cache. `now_ms` stamps
    /// each finished check; `cancel` flipping to true aborts in-flight probes at once.
    pub async fn run_batch(
        &mut self,
        targets: &[ProbeTarget],
        now_ms: impl Fn() -> Ms,
        mut cancel: watch::Receiver<bool>,
    ) -> BatchStats {
        let began = Instant::now();
        let limits = self.limits;
        let (list, mut stats) = self.select_targets(targets);
        let n = list.len();
        if n == 0 {
            self.cursor = 0;
            stats.elapsed = began.elapsed();
            return stats;
        }
        let start = self.cursor % n;
        stats.start_index = start;
        // Rotated order: position p is list[(start + p) % n].
        let at = |p: usize| &list[(start + p) % n];

        let semaphore = Arc::new(Semaphore::new(limits.max_in_flight));
        let live = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let mut tasks: JoinSet<(ConnState, &'static str)> = JoinSet::new();
        let mut task_pos: HashMap<tokio::task::Id, usize> = HashMap::new();
        let mut done = vec![false; n];
        let mut next = 0usize;
        let budget = tokio::time::sleep(limits.batch_budget);
        tokio::pin!(budget);
        let cancelled = wait_cancel(&mut cancel);
        tokio::pin!(cancelled);

        loop {
            if next >= n && tasks.is_empty() {
                break;
            }
            tokio::select! {
                biased;
                () = &mut cancelled => {
                    stats.cancelled = true;
                    break;
                }
                Some(joined) = tasks.join_next_with_id(), if !tasks.is_empty() => {
                    let (id, verdict) = match joined {
                        Ok((id, v)) => (id, Some(v)),
                        // A panicked task leaves its target unchecked rather than guessed.
                        Err(e) => (e.id(), None),
                    };
                    let Some(p) = task_pos.remove(&id) else { continue };
                    let Some((state, why)) = verdict else { continue };
                    done[p] = true;
                    stats.count(state);
                    let t = at(p);
                    self.checks.insert(
                        (t.session_id.clone(), t.port),
                        Check { state, reason: why, checked_at: now_ms() },
                    );
                }
                () = &mut budget => {
                    stats.budget_exhausted = true;
                    break;
                }
                permit = semaphore.clone().acquire_owned(), if next < n => {
                    let Ok(permit) = permit else { break };
                    let t = at(next).clone();
                    let deadline = limits.request_deadline;
                    let live = live.clone();
                    let peak = peak.clone();
                    let handle = tasks.spawn(async move {
                        let _permit = permit;
                        let _count = InFlight::enter(live, &peak);
                        probe_one(t.port, &t.session_id, deadline).await
                    });
                    task_pos.insert(handle.id(), next);
                    stats.started += 1;
                    next += 1;
                }
            }
        }

        // Whatever is still in flight is dropped now: its socket closes with the task.
        tasks.abort_all();
        if stats.cancelled {
            self.mark_aborted(task_pos.values().map(|&p| at(p)), now_ms());
            stats.aborted = task_pos.len();
        } else {
            stats.cut_by_budget = task_pos.len();
        }
        stats.not_started = n - next;
        // Aborted tasks finish at their next poll; the bound only guards against the unexpected.
        let _ = tokio::time::timeout(Duration::from_millis(200), tasks.shutdown()).await;

        // Next batch starts at the first target (in this batch's order) left unfinished.
        self.cursor = (start + done.iter().position(|d| !d).unwrap_or(0)) % n;
        stats.max_in_flight = peak.load(Ordering::SeqCst);
        stats.elapsed = began.elapsed();
        stats
    }

    /// The batch's targets: the first `max_targets`, valid and without repeats, in roster order.
    /// Checks for pairs no longer configured are dropped here (a changed or removed port).
    fn select_targets(&mut self, targets: &[ProbeTarget]) -> (Vec<ProbeTarget>, BatchStats) {
        let max = self.limits.max_targets;
        let mut stats = BatchStats {
            over_cap: targets.len().saturating_sub(max),
            ..BatchStats::default()
        };
        let mut seen = HashSet::new();
        let mut list: Vec<ProbeTarget> = Vec::new();
        for t in targets.iter().take(max) {
            if !valid_target(&t.session_id, t.port) {
                stats.invalid += 1;
            } else if seen.insert((t.session_id.as_str(), t.port)) {
                list.push(t.clone());
            }
        }
        self.checks
            .retain(|(sid, port), _| seen.contains(&(sid.as_str(), *port)));
        stats.considered = list.len();
        (list, stats)
    }

    /// Cancelled in-flight probes read `aborted`, never `disconnected`.
    fn mark_aborted<'a>(&mut self, cut: impl Iterator<Item = &'a ProbeTarget>, stamp: Ms) {
        for t in cut {
            self.checks.insert(
                (t.session_id.clone(), t.port),
                Check {
                    state: ConnState::Unknown,
                    reason: reason::ABORTED,
                    checked_at: stamp,
                },
            );
        }
    }

    /// Blocking form for one-shot CLI use: runs the batch on a fresh current-thread runtime.
    pub fn run_batch_blocking(
        &mut self,
        targets: &[ProbeTarget],
        now_ms: impl Fn() -> Ms,
        cancel: watch::Receiver<bool>,
    ) -> std::io::Result<BatchStats> {
        Ok(super::Blocking::new()?.run_batch(self, targets, now_ms, cancel))
    }
}

/// Resolves once the watch says true; never resolves if the sender is gone without cancelling.
async fn wait_cancel(rx: &mut watch::Receiver<bool>) {
    loop {
        if *rx.borrow_and_update() {
            return;
        }
        if rx.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// Counts probes holding a connection; decrements on drop, so aborted tasks count down too.
struct InFlight(Arc<AtomicUsize>);

impl InFlight {
    fn enter(live: Arc<AtomicUsize>, peak: &AtomicUsize) -> InFlight {
        let now = live.fetch_add(1, Ordering::SeqCst) + 1;
        peak.fetch_max(now, Ordering::SeqCst);
        InFlight(live)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(s: &str, port: u16) -> ProbeTarget {
        ProbeTarget {
            session_id: s.into(),
            port,
        }
    }

    #[test]
    fn expiry_and_future_and_port_change() {
        let mut cache = ProbeCache::new();
        cache.checks.insert(
            ("a".into(), 10),
            Check {
                state: ConnState::Connected,
                reason: reason::VERIFIED,
                checked_at: 1_000_000,
            },
        );
        assert_eq!(cache.get("a", 10, 1_000_000).reason, "verified");
        assert_eq!(cache.get("a", 10, 1_030_000).reason, "verified");
        let c = cache.get("a", 10, 1_030_001);
        assert_eq!(
            (c.state, c.reason, c.checked_at),
            (ConnState::Unknown, "stale", Some(1_000_000))
        );
        assert_eq!(cache.get("a", 10, 999_999).reason, "stale");
        assert_eq!(cache.get("a", 11, 1_000_000).reason, "not_checked");
        assert_eq!(cache.get("a", 0, 1_000_000).reason, "invalid_input");
        assert_eq!(cache.get(" ", 10, 1_000_000).reason, "invalid_input");
    }

    #[test]
    fn limits_never_widen() {
        let l = ProbeLimits {
            request_deadline: Duration::from_secs(10),
            batch_budget: Duration::from_secs(100),
            max_in_flight: 1000,
            max_targets: 100_000,
            ttl_ms: 1_000_000,
        }
        .clamped();
        assert_eq!(l.request_deadline, Duration::from_millis(750));
        assert_eq!(l.batch_budget, Duration::from_secs(4));
        assert_eq!(
            (l.max_in_flight, l.max_targets, l.ttl_ms),
            (16, 256, 30_000)
        );
        assert_eq!(
            ProbeLimits {
                max_in_flight: 0,
                ..l
            }
            .clamped()
            .max_in_flight,
            1
        );
    }

    #[test]
    fn invalid_and_duplicate_targets_cost_nothing() {
        let mut cache = ProbeCache::new();
        let (_tx, rx) = watch::channel(false);
        let ts = [target("", 5), target("a", 0), target("b", 0)];
        let stats = cache.run_batch_blocking(&ts, || 0, rx).expect("runtime");
        assert_eq!((stats.invalid, stats.considered, stats.started), (3, 0, 0));
    }
}
