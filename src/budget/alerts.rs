//! The soft limit's alert (docs/behaviour.md, "Budgets"): once per crossing, through the
//! existing alert path. A worker whose budget (own, context, or the fleet's) stands at or past
//! its soft limit is shown to the alert rule as one more seat of its own, `waiting` with reason
//! `budget_soft`, whose turn names the limit crossed: the rule's settle delay, its memory shared
//! by every watcher, its channels and its de-duplication apply unchanged, and a raised limit is
//! a new crossing. The fleet's crossing is one seat for the whole roster, not one per worker.

use std::borrow::Cow;

use super::eval::{Level, Standing};
use crate::board::reason::StateReason;
use crate::snapshot::{Row, RowRole, Snapshot};
use crate::states::BoardState;

/// What marks a budget seat's id (after the worker's session id).
const OWN: &str = "#budget";
const FLEET: &str = "#fleet-budget";

fn key(kind: &str, s: &Standing) -> String {
    let m = match s.measure {
        super::eval::Measure::Cost => "usd",
        super::eval::Measure::Tokens => "tokens",
    };
    format!("budget-soft:{kind}:{m}:{}", s.limit)
}

fn seat(row: &Row, suffix: &str, turn: String, text: String, at: crate::clock::Ms) -> Row {
    let mut r = row.clone();
    r.id = format!("{}{suffix}", row.id);
    r.seen_key = format!("{}{suffix}", row.seen_key);
    r.state = BoardState::Waiting;
    r.state_reason = StateReason::BudgetSoft;
    r.turn = Some(turn);
    r.question = Some(text);
    r.state_at = Some(at);
    r.seen = false;
    r.waiting_on_you = false;
    r.close_job = None;
    r.session_ended = false;
    r
}

/// `snap` with one budget seat per worker past its soft limit (and one for the fleet); the
/// same snapshot, not a copy, when there is none.
pub(crate) fn with_budget_seats(snap: &Snapshot) -> Cow<'_, Snapshot> {
    let mut extra = Vec::new();
    let mut fleet_done = false;
    for row in snap.rows.iter().filter(|r| r.role == RowRole::Worker) {
        let Some(b) = row.budget.as_ref() else {
            continue;
        };
        let own = [("own", b.own), ("context", b.context)]
            .into_iter()
            .filter_map(|(k, s)| s.filter(|s| s.level >= Level::Soft).map(|s| (k, s)))
            .max_by_key(|(_, s)| s.level);
        if let Some((kind, s)) = own {
            let what = if kind == "context" {
                format!("context {:.0}% (limit {:.0}%)", s.spent, s.limit)
            } else {
                s.short()
            };
            extra.push(seat(
                row,
                OWN,
                key(kind, &s),
                format!("its budget passed the soft limit: {what}"),
                snap.scanned_at,
            ));
        }
        if let Some(s) = b.fleet.filter(|s| s.level >= Level::Soft && !fleet_done) {
            fleet_done = true;
            extra.push(seat(
                row,
                FLEET,
                key("fleet", &s),
                format!("the fleet's budget passed the soft limit: {}", s.short()),
                snap.scanned_at,
            ));
        }
    }
    if extra.is_empty() {
        return Cow::Borrowed(snap);
    }
    let mut s = snap.clone();
    s.rows.extend(extra);
    Cow::Owned(s)
}

/// An alert made from a budget seat names the worker itself: its session and the jump to it.
pub(crate) fn worker_alert(a: &mut crate::alerts::message::Alert) {
    for suffix in [OWN, FLEET] {
        if let Some(id) = a.session.strip_suffix(suffix).map(str::to_string) {
            for w in a.jump.iter_mut().filter(|w| w.ends_with(suffix)) {
                *w = id.clone();
            }
            if let Some(k) = a.seat_key.strip_suffix(suffix).map(str::to_string) {
                a.seat_key = k;
            }
            a.session = id;
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::eval::Figures;
    use crate::budget::{spec, BudgetView};
    use serde_json::json;

    fn snap(cost: f64, limit: f64) -> Snapshot {
        let mut r = crate::ui::demo::demo_row(1, 0, 1_000);
        r.role = RowRole::Worker;
        r.state = BoardState::Idle;
        let b = spec::parse(&json!({"costUsd": limit})).unwrap();
        let f = Figures {
            cost_usd: cost,
            tokens: 1,
            no_pricing: false,
            at_least: false,
        };
        r.budget = Some(BudgetView::of(Some(&b), &f, None, None));
        let mut s = crate::ui::demo::demo_snapshot(0, 0, 1_000);
        s.rows = vec![r];
        s
    }

    #[test]
    fn a_soft_crossing_is_one_more_seat_whose_turn_names_the_limit() {
        assert!(matches!(
            with_budget_seats(&snap(1.0, 5.0)),
            Cow::Borrowed(_)
        ));
        let s = with_budget_seats(&snap(4.5, 5.0)).into_owned();
        assert_eq!(s.rows.len(), 2);
        let b = &s.rows[1];
        assert_eq!(b.state, BoardState::Waiting);
        assert_eq!(b.turn.as_deref(), Some("budget-soft:own:usd:5"));
        assert!(b.id.ends_with(OWN));
        // Reached (not enforced): the same crossing, so no second alert.
        let s2 = with_budget_seats(&snap(6.0, 5.0)).into_owned();
        assert_eq!(s2.rows[1].turn, b.turn);
        // A raised limit is a new crossing.
        let s3 = with_budget_seats(&snap(6.0, 7.0)).into_owned();
        assert_ne!(s3.rows[1].turn, b.turn);
    }

    #[test]
    fn the_context_limit_and_the_fleet_alert_as_their_own_crossings() {
        use crate::evidence::registrations::ContextFill;
        let b = spec::parse(&json!({"contextPercent": 50})).unwrap();
        let fill = ContextFill {
            tokens: Some(45),
            window: 100,
            percent: Some(45.0),
            at: 0,
        };
        let mut s = snap(0.0, 5.0);
        let f = Figures::default();
        s.rows[0].budget = Some(BudgetView::of(Some(&b), &f, Some(&fill), None));
        // Two workers past the fleet's soft limit: one fleet seat, not two.
        let mut other = s.rows[0].clone();
        other.id = "other".into();
        s.rows.push(other);
        let fleet = spec::parse(&json!({"costUsd": 10})).unwrap();
        let all = Figures {
            cost_usd: 9.0,
            ..Figures::default()
        };
        for r in s.rows.iter_mut() {
            let v = r.budget.as_mut().unwrap();
            v.fleet = crate::budget::eval::spending(&fleet, &all);
            v.settle();
        }
        let out = with_budget_seats(&s).into_owned();
        let turns: Vec<_> = out.rows.iter().filter_map(|r| r.turn.clone()).collect();
        assert_eq!(
            turns
                .iter()
                .filter(|t| t.starts_with("budget-soft:context"))
                .count(),
            2,
            "{turns:?}"
        );
        assert_eq!(
            turns
                .iter()
                .filter(|t| t.starts_with("budget-soft:fleet"))
                .count(),
            1,
            "{turns:?}"
        );
    }
}
