//! When a seat deserves an alert (docs/behaviour.md §3b), and the status line's summary. Pure:
//! what was alerted before and the time are passed in; nothing is read or sent here.
//!
//! The rule is about transitions, not states: an alert fires when a seat *enters* a state that
//! needs the person, once per turn. A turn is named by the evidence the state came from (the
//! deciding session entry, or the registration's or liveness's own mark: `Seat::turn`), so a seat
//! that stays waiting across passes, a restarted sidebar, or a second watcher reading the same
//! memory never alerts twice for it. A state must hold for the settle delay first: one that
//! clears by itself (a retry that works, a pane that blinks out of a listing) alerts nobody.

use std::collections::{HashMap, HashSet, VecDeque};

use crate::board::reason::StateReason;
use crate::clock::Ms;
use crate::states::BoardState;

/// Most (session, turn) pairs one process remembers having handled itself (a memory file that
/// cannot be written must not make it alert again).
const MAX_DONE: usize = 4096;

/// What the alert rule reads of one seat.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Seat {
    /// The seat's identity across passes and processes: its session id when known (`Row::id`).
    pub session: String,
    pub state: BoardState,
    pub reason: StateReason,
    /// The evidence the state came from (the deciding entry's id, …); `None` when unknown.
    pub turn: Option<String>,
    /// When that evidence was written, if known.
    pub since: Option<Ms>,
    /// The person marked this very activity seen.
    pub seen: bool,
    /// A close job explains the seat going away.
    pub closing: bool,
    /// pi recorded the end of the seat's session: it went away on purpose.
    pub ended: bool,
}

/// Whether the seat is in a state that needs the person: one the board counts as needing
/// attention, or offline when nothing the person did explains it: no close job, and pi did not
/// record the end of its session (which only quitting, `/new`, `/resume` or `/fork` do; a pi
/// that crashed or was killed records nothing).
pub(crate) fn needs_person(seat: &Seat) -> bool {
    seat.state.needs_attention()
        || (seat.state == BoardState::Offline
            && !seat.closing
            && !seat.ended
            && seat.reason != StateReason::SessionClosed)
}

/// The key of the turn a seat needs the person in: `<state>:<turn>`; `None` when it does not.
pub(crate) fn turn_key(seat: &Seat) -> Option<String> {
    if !needs_person(seat) {
        return None;
    }
    Some(format!(
        "{}:{}",
        seat.state.as_str(),
        seat.turn.as_deref().unwrap_or("-")
    ))
}

/// The rule's settings.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Rules {
    /// How long a state must hold before it alerts.
    pub settle_ms: Ms,
    /// A seat no watcher has seen before alerts only for a state entered at most this long ago
    /// (a watcher started in the morning does not alert for last night's states).
    pub catch_up_ms: Ms,
    /// States that never alert (the person's choice).
    pub muted: Vec<BoardState>,
}

impl Default for Rules {
    fn default() -> Self {
        Rules {
            settle_ms: 5_000,
            catch_up_ms: 10 * 60_000,
            muted: Vec::new(),
        }
    }
}

/// What every watcher remembers together (the memory file): which turns were handled, which
/// seats were seen before.
pub(crate) trait Remembered {
    /// This turn of this seat was handled (alerted, or deliberately not).
    fn handled(&self, session: &str, key: &str) -> bool;
    /// Some watcher has seen this seat before.
    fn knows(&self, session: &str) -> bool;
    /// When this turn of this seat was recorded as alerted (by any process), if it was.
    fn alerted_at(&self, session: &str, key: &str) -> Option<Ms>;
}

/// Why a turn was handled without an alert, or that it was alerted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// An alert went out.
    Alerted,
    /// The seat's pane was the active pane of an attached client: the person was looking.
    Visible,
    /// The person had marked the activity seen.
    Seen,
    /// Entered before any watcher knew the seat, longer ago than the catch-up window.
    Earlier,
}

/// What one step decided for one seat (by its index in the step's input).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Alert for this turn now (unless the person is looking: then record `Visible`).
    Alert { index: usize, key: String },
    /// Record this turn as handled without an alert.
    Record {
        index: usize,
        key: String,
        outcome: Outcome,
    },
    /// Remember this seat as seen (it needs nobody now; a later change of it is a transition).
    Know { index: usize },
}

/// One process's view over passes: which turns wait out the settle delay, which it handled.
#[derive(Debug, Default)]
pub(crate) struct Watch {
    /// session → (turn key, when the pass that first showed it ran).
    pending: HashMap<String, (String, Ms)>,
    done: HashSet<(String, String)>,
    done_order: VecDeque<(String, String)>,
}

impl Watch {
    pub(crate) fn new() -> Watch {
        Watch::default()
    }

    /// Decide for one pass's seats. `pass_at`: when the pass ran; `valid_through`: until when
    /// its result is known to hold (the pass time for a timed loop; now for a live engine,
    /// whose next pass would have come if anything had changed).
    pub(crate) fn step(
        &mut self,
        seats: &[Seat],
        memory: &dyn Remembered,
        pass_at: Ms,
        valid_through: Ms,
        rules: &Rules,
    ) -> Vec<Decision> {
        let mut out = Vec::new();
        let mut pending = HashMap::new();
        for (index, seat) in seats.iter().enumerate() {
            let key = turn_key(seat).filter(|_| !rules.muted.contains(&seat.state));
            let Some(key) = key else {
                if !memory.knows(&seat.session) {
                    out.push(Decision::Know { index });
                }
                continue;
            };
            if self.is_done(&seat.session, &key) || memory.handled(&seat.session, &key) {
                continue;
            }
            if seat.seen {
                out.push(Decision::Record {
                    index,
                    key,
                    outcome: Outcome::Seen,
                });
                continue;
            }
            let recent = seat
                .since
                .is_some_and(|t| valid_through.saturating_sub(t) <= rules.catch_up_ms);
            if !memory.knows(&seat.session) && !recent {
                out.push(Decision::Record {
                    index,
                    key,
                    outcome: Outcome::Earlier,
                });
                continue;
            }
            let first = match self.pending.get(&seat.session) {
                Some((k, at)) if *k == key => *at,
                _ => pass_at,
            };
            if valid_through >= first.saturating_add(rules.settle_ms) {
                out.push(Decision::Alert { index, key });
            } else {
                pending.insert(seat.session.clone(), (key, first));
            }
        }
        // A seat no longer shown, or no longer in that state, waits for nothing.
        self.pending = pending;
        out
    }

    /// Turns another process alerted for that this one has not handled yet: its own channels
    /// may still owe the person that alert (a sidebar without a program alerted first, and a
    /// watcher's `--on-alert` must still run). Only while the seat is still in that turn, and
    /// only for an alert at most `catch_up_ms` old (a watcher started in the morning does not
    /// send last night's alerts).
    pub(crate) fn late(
        &self,
        seats: &[Seat],
        memory: &dyn Remembered,
        now: Ms,
        rules: &Rules,
    ) -> Vec<(usize, String)> {
        let mut out = Vec::new();
        for (index, seat) in seats.iter().enumerate() {
            let key = turn_key(seat).filter(|_| !rules.muted.contains(&seat.state));
            let Some(key) = key else { continue };
            if seat.seen || self.is_done(&seat.session, &key) {
                continue;
            }
            let recent = memory
                .alerted_at(&seat.session, &key)
                .is_some_and(|at| now.saturating_sub(at) <= rules.catch_up_ms);
            if recent {
                out.push((index, key));
            }
        }
        out
    }

    /// When the earliest pending turn has settled (a live loop wakes then).
    pub(crate) fn next_due(&self, rules: &Rules) -> Option<Ms> {
        self.pending
            .values()
            .map(|(_, at)| at.saturating_add(rules.settle_ms))
            .min()
    }

    /// Whether some turn waits out the settle delay.
    pub(crate) fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Remember that this process handled `key` of `session` (whatever the memory file says).
    pub(crate) fn mark_done(&mut self, session: &str, key: &str) {
        let k = (session.to_string(), key.to_string());
        if self.done.insert(k.clone()) {
            self.done_order.push_back(k);
        }
        while self.done_order.len() > MAX_DONE {
            if let Some(old) = self.done_order.pop_front() {
                self.done.remove(&old);
            }
        }
    }

    fn is_done(&self, session: &str, key: &str) -> bool {
        self.done.contains(&(session.to_string(), key.to_string()))
    }
}

/// The status line's summary: seats needing attention, by state, as the board counts them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Summary {
    pub waiting: usize,
    pub error: usize,
}

impl Summary {
    /// Count the seats the board says need attention (not marked seen).
    pub(crate) fn of<'a>(seats: impl IntoIterator<Item = (&'a BoardState, bool)>) -> Summary {
        let mut s = Summary::default();
        for (state, seen) in seats {
            if seen || !state.needs_attention() {
                continue;
            }
            match state {
                BoardState::Waiting => s.waiting += 1,
                _ => s.error += 1,
            }
        }
        s
    }

    /// `⚑2 ✗1`; empty when nobody needs the person. Only fixed glyphs and digits: safe in a
    /// tmux status line as it is.
    pub(crate) fn text(&self) -> String {
        let mut parts = Vec::new();
        if self.waiting > 0 {
            parts.push(format!("⚑{}", self.waiting));
        }
        if self.error > 0 {
            parts.push(format!("✗{}", self.error));
        }
        parts.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Mem {
        handled: HashSet<(String, String)>,
        known: HashSet<String>,
        alerted: HashMap<(String, String), Ms>,
    }

    impl Remembered for Mem {
        fn handled(&self, s: &str, k: &str) -> bool {
            self.handled.contains(&(s.into(), k.into()))
        }
        fn knows(&self, s: &str) -> bool {
            self.known.contains(s)
        }
        fn alerted_at(&self, s: &str, k: &str) -> Option<Ms> {
            self.alerted.get(&(s.into(), k.into())).copied()
        }
    }

    impl Mem {
        /// Apply what a caller would record.
        fn apply(&mut self, seats: &[Seat], ds: &[Decision]) {
            for d in ds {
                match d {
                    Decision::Alert { index, key } | Decision::Record { index, key, .. } => {
                        self.handled
                            .insert((seats[*index].session.clone(), key.clone()));
                        self.known.insert(seats[*index].session.clone());
                    }
                    Decision::Know { index } => {
                        self.known.insert(seats[*index].session.clone());
                    }
                }
            }
        }
    }

    fn seat(state: BoardState, turn: &str, since: Ms) -> Seat {
        Seat {
            session: "s1".into(),
            state,
            reason: match state {
                BoardState::Waiting => StateReason::InputNeeded,
                BoardState::Error => StateReason::FinalError,
                BoardState::Offline => StateReason::PaneGone,
                _ => StateReason::CompletedReply,
            },
            turn: Some(turn.into()),
            since: Some(since),
            seen: false,
            closing: false,
            ended: false,
        }
    }

    fn rules(settle: Ms) -> Rules {
        Rules {
            settle_ms: settle,
            ..Rules::default()
        }
    }

    fn alerts(ds: &[Decision]) -> usize {
        ds.iter()
            .filter(|d| matches!(d, Decision::Alert { .. }))
            .count()
    }

    /// Passes every 3 s over a list of states; returns how many alerts each pass gave.
    fn run(
        w: &mut Watch,
        mem: &mut Mem,
        states: &[(BoardState, &str)],
        start: Ms,
        r: &Rules,
    ) -> Vec<usize> {
        let mut out = Vec::new();
        for (i, (st, turn)) in states.iter().enumerate() {
            let t = start + i as Ms * 3_000;
            let seats = vec![seat(*st, turn, t)];
            let ds = w.step(&seats, mem, t, t, r);
            mem.apply(&seats, &ds);
            for d in &ds {
                if let Decision::Alert { key, .. } = d {
                    w.mark_done("s1", key);
                }
            }
            out.push(alerts(&ds));
        }
        out
    }

    #[test]
    fn one_alert_per_turn_however_long_the_state_lasts() {
        use BoardState::*;
        let (mut w, mut mem) = (Watch::new(), Mem::default());
        let r = rules(0);
        let got = run(
            &mut w,
            &mut mem,
            &[
                (Working, "e1"),
                (Waiting, "e2"),
                (Waiting, "e2"),
                (Waiting, "e2"),
                (Working, "e3"),
                (Waiting, "e4"),
                (Waiting, "e4"),
            ],
            1_000_000,
            &r,
        );
        assert_eq!(got, vec![0, 1, 0, 0, 0, 1, 0]);
    }

    #[test]
    fn a_state_that_clears_within_the_settle_delay_alerts_nobody() {
        use BoardState::*;
        let (mut w, mut mem) = (Watch::new(), Mem::default());
        let r = rules(5_000);
        // error for one pass (3 s < 5 s), then a retry works.
        let got = run(
            &mut w,
            &mut mem,
            &[
                (Working, "e1"),
                (Error, "e2"),
                (Working, "e3"),
                (Idle, "e4"),
            ],
            1_000_000,
            &r,
        );
        assert_eq!(got, vec![0, 0, 0, 0]);
        // One that holds alerts at the first pass past the delay, once.
        let got = run(
            &mut w,
            &mut mem,
            &[
                (Waiting, "e5"),
                (Waiting, "e5"),
                (Waiting, "e5"),
                (Waiting, "e5"),
            ],
            2_000_000,
            &r,
        );
        assert_eq!(got, vec![0, 0, 1, 0]);
    }

    #[test]
    fn a_new_turn_in_the_same_state_restarts_the_settle_wait() {
        let (mut w, mem) = (Watch::new(), Mem::default());
        let r = rules(5_000);
        let mut known = mem;
        known.known.insert("s1".into());
        let a = vec![seat(BoardState::Waiting, "e1", 0)];
        assert_eq!(alerts(&w.step(&a, &known, 0, 0, &r)), 0);
        let b = vec![seat(BoardState::Waiting, "e2", 4_000)];
        assert_eq!(alerts(&w.step(&b, &known, 4_000, 4_000, &r)), 0);
        assert_eq!(w.next_due(&r), Some(9_000));
        assert_eq!(alerts(&w.step(&b, &known, 4_000, 8_999, &r)), 0);
        // A live loop re-checks at the due time without a new pass.
        assert_eq!(alerts(&w.step(&b, &known, 4_000, 9_000, &r)), 1);
    }

    #[test]
    fn a_restarted_watcher_reads_what_was_handled() {
        use BoardState::*;
        let mut mem = Mem::default();
        let r = rules(0);
        let mut first = Watch::new();
        assert_eq!(
            run(
                &mut first,
                &mut mem,
                &[(Idle, "e1"), (Waiting, "e2")],
                0,
                &r
            ),
            vec![0, 1]
        );
        // A new process (no in-process state) over the same memory, same turn: nothing.
        let mut second = Watch::new();
        assert_eq!(
            run(
                &mut second,
                &mut mem,
                &[(Waiting, "e2"), (Waiting, "e2")],
                10_000,
                &r
            ),
            vec![0, 0]
        );
        // Two watchers between them: whoever records first handles it for both.
        let mut a = Watch::new();
        let mut b = Watch::new();
        let seats = vec![seat(Error, "e9", 20_000)];
        let da = a.step(&seats, &mem, 20_000, 20_000, &r);
        mem.apply(&seats, &da);
        let db = b.step(&seats, &mem, 20_000, 20_000, &r);
        assert_eq!((alerts(&da), alerts(&db)), (1, 0));
    }

    #[test]
    fn seats_first_seen_in_an_old_state_are_recorded_not_alerted() {
        let (mut w, mut mem) = (Watch::new(), Mem::default());
        let r = rules(0);
        let now = 100 * 60_000;
        let old = vec![seat(BoardState::Waiting, "e1", now - 11 * 60_000)];
        let ds = w.step(&old, &mem, now, now, &r);
        assert!(matches!(
            ds[..],
            [Decision::Record {
                outcome: Outcome::Earlier,
                ..
            }]
        ));
        mem.apply(&old, &ds);
        // A recent one, on a seat nobody saw before, alerts (the watcher started just after).
        let mut fresh = seat(BoardState::Waiting, "e2", now - 60_000);
        fresh.session = "s2".into();
        assert_eq!(alerts(&w.step(&[fresh], &mem, now, now, &r)), 1);
        // Offline has no time: first seen offline is not a transition anyone saw.
        let mut off = seat(BoardState::Offline, "pi:1", 0);
        off.since = None;
        off.session = "s3".into();
        assert_eq!(alerts(&w.step(&[off], &mem, now, now, &r)), 0);
    }

    #[test]
    fn what_needs_the_person() {
        let mut s = seat(BoardState::Offline, "pi:1", 0);
        assert!(needs_person(&s));
        s.closing = true;
        assert!(!needs_person(&s), "a close job explains it");
        s.closing = false;
        s.ended = true;
        assert!(!needs_person(&s), "pi quit on purpose");
        s.ended = false;
        s.reason = StateReason::SessionClosed;
        assert!(!needs_person(&s), "the person ended that session");
        for st in [BoardState::Working, BoardState::Idle, BoardState::Unknown] {
            assert!(turn_key(&seat(st, "e", 0)).is_none());
        }
        assert_eq!(
            turn_key(&seat(BoardState::Waiting, "entry:ab", 0)).as_deref(),
            Some("waiting:entry:ab")
        );
        // Seen and muted.
        let (mut w, mut mem) = (Watch::new(), Mem::default());
        mem.known.insert("s1".into());
        let mut seen = seat(BoardState::Waiting, "e1", 0);
        seen.seen = true;
        let ds = w.step(&[seen], &mem, 0, 0, &rules(0));
        assert!(matches!(
            ds[..],
            [Decision::Record {
                outcome: Outcome::Seen,
                ..
            }]
        ));
        let muted = Rules {
            muted: vec![BoardState::Error],
            ..rules(0)
        };
        let e = seat(BoardState::Error, "e2", 0);
        assert!(w.step(&[e], &mem, 0, 0, &muted).is_empty());
    }

    #[test]
    fn a_process_never_alerts_twice_even_when_its_memory_is_not_written() {
        let mut w = Watch::new();
        let mut mem = Mem::default();
        mem.known.insert("s1".into());
        let s = vec![seat(BoardState::Waiting, "e1", 0)];
        let ds = w.step(&s, &mem, 0, 0, &rules(0));
        assert_eq!(alerts(&ds), 1);
        w.mark_done("s1", "waiting:e1");
        assert_eq!(alerts(&w.step(&s, &mem, 3_000, 3_000, &rules(0))), 0);
    }

    #[test]
    fn another_process_alert_is_owed_while_the_turn_holds_and_is_recent() {
        let mut w = Watch::new();
        let mut m = Mem::default();
        let s = [seat(BoardState::Waiting, "e1", 1_000)];
        let key = turn_key(&s[0]).unwrap();
        m.handled.insert(("s1".into(), key.clone()));
        m.known.insert("s1".into());
        let r = rules(0);
        // Handled without an alert (visible, seen, earlier): nothing owed.
        assert!(w.late(&s, &m, 2_000, &r).is_empty());
        m.alerted.insert(("s1".into(), key.clone()), 1_500);
        assert!(
            w.step(&s, &m, 2_000, 2_000, &r).is_empty(),
            "the rule itself does not alert twice"
        );
        assert_eq!(w.late(&s, &m, 2_000, &r), vec![(0, key.clone())]);
        // Too old, or the seat moved on, or muted, or done here: nothing.
        assert!(w.late(&s, &m, 1_500 + r.catch_up_ms + 1, &r).is_empty());
        let moved = seat(BoardState::Waiting, "e2", 1_000);
        assert!(w.late(&[moved], &m, 2_000, &r).is_empty());
        let muted = Rules {
            muted: vec![BoardState::Waiting],
            ..rules(0)
        };
        assert!(w.late(&s, &m, 2_000, &muted).is_empty());
        w.mark_done("s1", &key);
        assert!(w.late(&s, &m, 2_000, &r).is_empty());
    }

    #[test]
    fn summary_counts_what_the_board_counts() {
        use BoardState::*;
        let rows = [
            (Waiting, false),
            (Waiting, false),
            (Waiting, true),
            (Error, false),
            (Offline, false),
            (Working, false),
        ];
        let s = Summary::of(rows.iter().map(|(st, seen)| (st, *seen)));
        assert_eq!(
            s,
            Summary {
                waiting: 2,
                error: 1
            }
        );
        assert_eq!(s.text(), "⚑2 ✗1");
        assert_eq!(Summary::default().text(), "");
        assert_eq!(
            Summary {
                waiting: 0,
                error: 4
            }
            .text(),
            "✗4"
        );
    }
}
