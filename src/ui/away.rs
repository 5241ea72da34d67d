//! "Since you looked": what changed on the seats while the person was not looking at the sidebar.
//!
//! The rule is the one the sidebar can know: a key press or the pane gaining the keyboard
//! (a terminal focus report) is a look and clears the record; while the pane has the keyboard
//! nothing is recorded. Between looks, each snapshot is compared with the one before it, seat by
//! seat: working → idle is "finished", any other state → waiting is "asked", any other state →
//! error is "failed". A seat counts once per kind however often it flips. Memory is bounded by
//! the seats the last snapshot showed: a seat that leaves the snapshot leaves the record.

use std::collections::HashMap;

use crate::snapshot::Row;
use crate::states::BoardState;

/// The kinds of change the line counts, in the order it names them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Kinds {
    finished: bool,
    asked: bool,
    failed: bool,
}

impl Kinds {
    fn any(self) -> bool {
        self.finished || self.asked || self.failed
    }
}

/// One seat's record: its state in the last snapshot, and what it did while the person was away.
#[derive(Debug, Clone)]
struct Seat {
    state: BoardState,
    kinds: Kinds,
}

/// The record between looks.
#[derive(Debug, Clone, Default)]
pub(crate) struct Away {
    /// By row id; only seats of the last snapshot.
    seats: HashMap<String, Seat>,
    /// Row ids in the order the last snapshot listed them (the names follow it).
    order: Vec<String>,
    /// Names as the last snapshot gave them (raw: the line sanitizes).
    names: HashMap<String, String>,
}

/// What the line says, counted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Tally {
    pub(crate) finished: usize,
    pub(crate) asked: usize,
    pub(crate) failed: usize,
    /// Seats that changed, in snapshot order (raw names).
    pub(crate) names: Vec<String>,
}

impl Away {
    /// A new snapshot's rows. `present`: the person is looking now (the pane has the keyboard),
    /// so transitions are not recorded; states are always remembered so the next comparison is
    /// against what was last shown.
    pub(crate) fn snapshot(&mut self, rows: &[Row], present: bool) {
        let mut seats = HashMap::with_capacity(rows.len());
        let mut order = Vec::with_capacity(rows.len());
        let mut names = HashMap::with_capacity(rows.len());
        for row in rows {
            if seats.contains_key(&row.id) {
                continue;
            }
            let (mut kinds, before) = match self.seats.remove(&row.id) {
                Some(s) => (s.kinds, Some(s.state)),
                None => (Kinds::default(), None),
            };
            if !present {
                // A seat first seen now has no "before": it did not change in front of anyone.
                if let Some(before) = before {
                    let now = row.state;
                    kinds.finished |= before == BoardState::Working && now == BoardState::Idle;
                    kinds.asked |= before != BoardState::Waiting && now == BoardState::Waiting;
                    kinds.failed |= before != BoardState::Error && now == BoardState::Error;
                }
            }
            order.push(row.id.clone());
            names.insert(row.id.clone(), row.name.clone());
            seats.insert(
                row.id.clone(),
                Seat {
                    state: row.state,
                    kinds,
                },
            );
        }
        self.seats = seats;
        self.order = order;
        self.names = names;
    }

    /// The person looked: forget what happened, keep the states.
    pub(crate) fn looked(&mut self) {
        for s in self.seats.values_mut() {
            s.kinds = Kinds::default();
        }
    }

    /// The counts and names, or `None` when nothing changed.
    pub(crate) fn tally(&self) -> Option<Tally> {
        let mut t = Tally::default();
        for id in &self.order {
            let Some(s) = self.seats.get(id) else {
                continue;
            };
            if !s.kinds.any() {
                continue;
            }
            t.finished += usize::from(s.kinds.finished);
            t.asked += usize::from(s.kinds.asked);
            t.failed += usize::from(s.kinds.failed);
            t.names
                .push(self.names.get(id).cloned().unwrap_or_else(|| id.clone()));
        }
        (!t.names.is_empty()).then_some(t)
    }

    /// The line under the title, clipped to `width` columns, or `None` when nothing changed.
    pub(crate) fn line(&self, width: usize) -> Option<String> {
        let t = self.tally()?;
        let mut parts = Vec::new();
        for (n, word) in [
            (t.finished, "finished"),
            (t.asked, "asked"),
            (t.failed, "failed"),
        ] {
            if n > 0 {
                parts.push(format!("{n} {word}"));
            }
        }
        let names: Vec<String> = t
            .names
            .iter()
            .map(|n| crate::text::sanitize(n).trim().to_string())
            .collect();
        let text = format!(
            "since you looked: {} ({})",
            parts.join(" · "),
            names.join(", ")
        );
        Some(crate::text::clip(&text, width))
    }

    /// Seats remembered (tests: bounded by the last snapshot).
    #[cfg(test)]
    fn remembered(&self) -> usize {
        self.seats.len().max(self.names.len()).max(self.order.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::demo::demo_row;

    fn row(id: &str, name: &str, state: BoardState) -> Row {
        let mut r = demo_row(0, 0, 0);
        r.id = id.into();
        r.name = name.into();
        r.state = state;
        r
    }

    fn rows(states: &[(&str, BoardState)]) -> Vec<Row> {
        states
            .iter()
            .map(|(id, s)| row(id, &format!("N{id}"), *s))
            .collect()
    }

    use BoardState::{Error, Idle, Offline, Waiting, Working};

    #[test]
    fn each_kind_of_transition_is_counted_while_away() {
        let mut a = Away::default();
        a.snapshot(
            &rows(&[("a", Working), ("b", Working), ("c", Idle), ("d", Working)]),
            false,
        );
        assert_eq!(a.tally(), None, "the first snapshot has no before");
        a.snapshot(
            &rows(&[("a", Idle), ("b", Waiting), ("c", Error), ("d", Working)]),
            false,
        );
        let t = a.tally().unwrap();
        assert_eq!((t.finished, t.asked, t.failed), (1, 1, 1));
        assert_eq!(t.names, vec!["Na", "Nb", "Nc"]);
        assert_eq!(
            a.line(200).unwrap(),
            "since you looked: 1 finished · 1 asked · 1 failed (Na, Nb, Nc)"
        );
    }

    #[test]
    fn idle_from_anything_but_working_is_not_finished() {
        let mut a = Away::default();
        a.snapshot(&rows(&[("a", Offline), ("b", Waiting)]), false);
        a.snapshot(&rows(&[("a", Idle), ("b", Idle)]), false);
        assert_eq!(a.tally(), None);
    }

    #[test]
    fn nothing_is_recorded_while_present_and_looking_clears() {
        let mut a = Away::default();
        a.snapshot(&rows(&[("a", Working)]), true);
        a.snapshot(&rows(&[("a", Idle)]), true);
        assert_eq!(a.tally(), None, "present: not recorded");
        a.snapshot(&rows(&[("a", Working)]), false);
        a.snapshot(&rows(&[("a", Error)]), false);
        assert!(a.line(80).is_some());
        a.looked();
        assert_eq!(a.tally(), None);
        assert_eq!(a.line(80), None);
        // The state is kept across the look: the next comparison is against Error.
        a.snapshot(&rows(&[("a", Error)]), false);
        assert_eq!(a.tally(), None);
        a.snapshot(&rows(&[("a", Waiting)]), false);
        assert_eq!(a.tally().unwrap().asked, 1);
    }

    #[test]
    fn a_seat_flipping_back_and_forth_counts_once_per_kind() {
        let mut a = Away::default();
        a.snapshot(&rows(&[("a", Working)]), false);
        for _ in 0..5 {
            a.snapshot(&rows(&[("a", Idle)]), false);
            a.snapshot(&rows(&[("a", Waiting)]), false);
            a.snapshot(&rows(&[("a", Working)]), false);
        }
        let t = a.tally().unwrap();
        assert_eq!((t.finished, t.asked, t.failed), (1, 1, 0));
        assert_eq!(t.names, vec!["Na"]);
    }

    #[test]
    fn memory_is_bounded_by_the_seats_shown() {
        let mut a = Away::default();
        for i in 0..1000 {
            let id = format!("s{i}");
            a.snapshot(&rows(&[(id.as_str(), Working)]), false);
            a.snapshot(&rows(&[(id.as_str(), Idle)]), false);
        }
        assert_eq!(a.remembered(), 1);
        assert_eq!(a.tally().unwrap().names, vec!["Ns999"]);
        a.snapshot(&[], false);
        assert_eq!(a.remembered(), 0);
        assert_eq!(a.tally(), None);
    }

    #[test]
    fn names_are_sanitized_and_the_line_clipped() {
        let mut a = Away::default();
        let hostile = "evil\n$(rm -rf ~)\u{1b}[31m";
        a.snapshot(
            &[row("a", hostile, Working), row("b", "Docs", Working)],
            false,
        );
        a.snapshot(&[row("a", hostile, Idle), row("b", "Docs", Error)], false);
        let full = a.line(500).unwrap();
        assert!(!full.contains('\n') && !full.contains('\u{1b}'), "{full:?}");
        assert_eq!(
            full,
            "since you looked: 1 finished · 1 failed (evil $(rm -rf ~), Docs)"
        );
        let clipped = a.line(30).unwrap();
        assert_eq!(crate::text::width(&clipped), 30);
        assert!(clipped.ends_with('…'), "{clipped}");
    }
}
