//! When the next pass runs. Events are coalesced: a pass runs once the events have been quiet for
//! `QUIET`, and at the latest `MAX_DELAY` after the first of them, so a burst from 64 workers in
//! the same few milliseconds becomes one pass; passes are spaced by at least twice the last
//! pass's own time (and `MIN_GAP`), so a flood of changes cannot keep the engine busier than about
//! a third of a core. Pure: the engine passes the clock in.

use std::time::{Duration, Instant};

/// Quiet time that ends a burst.
pub(crate) const QUIET: Duration = Duration::from_millis(8);
/// Longest wait after the first event of a burst.
pub(crate) const MAX_DELAY: Duration = Duration::from_millis(30);
/// Shortest time between the end of one pass and the start of the next.
pub(crate) const MIN_GAP: Duration = Duration::from_millis(15);
/// Longest forced gap, however slow the last pass was.
const MAX_GAP: Duration = Duration::from_millis(500);

/// Pending events and the pass they call for.
#[derive(Debug, Default)]
pub(crate) struct Coalescer {
    first: Option<Instant>,
    last: Option<Instant>,
    /// No pass starts before this (the spacing after the last pass).
    not_before: Option<Instant>,
}

impl Coalescer {
    pub(crate) fn new() -> Coalescer {
        Coalescer::default()
    }

    /// An event arrived at `now`.
    pub(crate) fn note(&mut self, now: Instant) {
        self.first.get_or_insert(now);
        self.last = Some(now);
    }

    /// Whether events are waiting for a pass.
    pub(crate) fn pending(&self) -> bool {
        self.first.is_some()
    }

    /// When the pass for the pending events should start (`None`: nothing pending).
    pub(crate) fn due(&self) -> Option<Instant> {
        let (first, last) = (self.first?, self.last?);
        let at = (last + QUIET).min(first + MAX_DELAY);
        Some(match self.not_before {
            Some(nb) if nb > at => nb,
            _ => at,
        })
    }

    /// Whether a pass may start at `now` (the spacing after the last one has passed).
    pub(crate) fn may_start(&self, now: Instant) -> bool {
        self.not_before.is_none_or(|nb| nb <= now)
    }

    /// A pass that took `took` ended at `now`, covering everything noted before it started.
    pub(crate) fn passed(&mut self, started: Instant, took: Duration, now: Instant) {
        // Events noted while the pass ran are kept for the next one.
        if self.last.is_some_and(|l| l <= started) {
            self.first = None;
            self.last = None;
        } else if self.first.is_some_and(|f| f <= started) {
            self.first = Some(started);
        }
        let gap = (took * 2).clamp(MIN_GAP, MAX_GAP);
        self.not_before = Some(now + gap);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_is_one_pass_and_a_flood_is_spaced() {
        let t0 = Instant::now();
        let ms = |n| t0 + Duration::from_millis(n);
        let mut c = Coalescer::new();
        assert_eq!(c.due(), None);
        for i in 0..64 {
            c.note(ms(i / 16));
        }
        // 64 events within 4 ms: one pass, 8 ms after the last.
        assert_eq!(c.due(), Some(ms(3) + QUIET));
        // A steady stream: at most MAX_DELAY after the first.
        let mut s = Coalescer::new();
        for i in 0..100 {
            s.note(ms(i));
        }
        assert_eq!(s.due(), Some(ms(0) + MAX_DELAY));
        // After a pass of 40 ms, the next one waits 80 ms.
        s.passed(ms(100), Duration::from_millis(40), ms(140));
        assert!(!s.pending());
        s.note(ms(141));
        assert_eq!(s.due(), Some(ms(220)));
        // An event during a pass is kept for the next one.
        let mut r = Coalescer::new();
        r.note(ms(0));
        r.note(ms(5));
        r.passed(ms(3), Duration::from_millis(1), ms(4));
        assert!(r.pending());
        assert_eq!(r.due(), Some(ms(4) + MIN_GAP));
    }
}
