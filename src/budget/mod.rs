//! Budgets (docs/behaviour.md, "Budgets"): a cost, token and context limit per worker and for
//! the whole roster, warned at the soft limit, held at the hard one by the worker's extension
//! (never by killing, never by typing into its pane).
//!
//! `spec` is the roster's form and its refusals, `eval` the one evaluation, `record` the bounded
//! log of every change. This file joins them into what a row shows.

pub(crate) mod alerts;
pub(crate) mod change;
pub(crate) mod check;
pub(crate) mod eval;
pub(crate) mod record;
pub(crate) mod spec;

use serde::Serialize;

use crate::evidence::registrations::{BudgetHold, ContextFill};
use eval::{Figures, Level, Standing};
use spec::{Budget, OnContext};

/// A worker's budget as every view shows it.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BudgetView {
    /// Its own spending limit's standing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own: Option<Standing>,
    /// The roster-wide limit's standing (every worker's spending together).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fleet: Option<Standing>,
    /// Its context limit's standing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<Standing>,
    pub on_context: OnContext,
    /// The worker's extension enforces budgets (it reports its holds); otherwise a reached
    /// budget is shown, not enforced.
    pub enforced: bool,
    /// Prompts its extension holds now.
    pub held: u32,
    /// The worst standing: what decides the alert and the hold.
    pub level: Level,
}

impl BudgetView {
    /// The view of a worker with budget `own` (and the fleet's, filled in later), its figures,
    /// its context fill and what its extension reports (`None`: no budget-aware extension).
    pub fn of(
        own: Option<&Budget>,
        figures: &Figures,
        fill: Option<&ContextFill>,
        ext: Option<&BudgetHold>,
    ) -> BudgetView {
        let mut v = BudgetView {
            own: own.and_then(|b| eval::spending(b, figures)),
            fleet: None,
            context: own.and_then(|b| eval::context(b, fill)),
            on_context: own.map(|b| b.on_context).unwrap_or_default(),
            enforced: ext.is_some(),
            held: ext.map_or(0, |e| e.held),
            level: Level::Unknown,
        };
        v.settle();
        v
    }

    /// Recompute `level` from the standings.
    pub fn settle(&mut self) {
        self.level = [self.own, self.fleet, self.context]
            .iter()
            .flatten()
            .map(|s| s.level)
            .max()
            .unwrap_or(Level::Unknown);
    }

    /// Nothing to show: no limit applies.
    pub fn is_empty(&self) -> bool {
        self.own.is_none() && self.fleet.is_none() && self.context.is_none() && self.held == 0
    }

    /// The spending limit that is furthest along (own or fleet).
    pub fn deciding(&self) -> Option<(&'static str, Standing)> {
        let own = self.own.map(|s| ("budget", s));
        let fleet = self.fleet.map(|s| ("fleet budget", s));
        match (own, fleet) {
            (Some(o), Some(f)) if f.1.level > o.1.level => Some(f),
            (Some(o), _) => Some(o),
            (None, f) => f,
        }
    }

    /// The row's short words: `$3.20/5.00`, `$4.10/5.00 soft`, `$5.10/5.00 exceeded (not
    /// enforced)`, with the fleet's and the context's beside it when set.
    pub fn short(&self) -> String {
        let mut parts = Vec::new();
        let tag = |s: &Standing| match s.level {
            Level::Soft => " soft",
            Level::Reached if self.held > 0 => " reached",
            Level::Reached if self.enforced => " reached",
            Level::Reached => " exceeded (not enforced)",
            _ => "",
        };
        if let Some(s) = &self.own {
            parts.push(format!("{}{}", s.short(), tag(s)));
        }
        if let Some(s) = &self.fleet {
            parts.push(format!("fleet {}{}", s.short(), tag(s)));
        }
        if let Some(s) = &self.context {
            parts.push(format!("context {:.0}%/{:.0}%{}", s.spent, s.limit, tag(s)));
        }
        if !self.enforced && parts.is_empty() {
            return String::new();
        }
        if !self.enforced && self.level < Level::Reached {
            parts.push("not enforced".into());
        }
        parts.join(" · ")
    }
}

/// The `budget` object of the JSON views: the view, and its `line` as the row shows it.
pub(crate) fn to_json(v: &BudgetView) -> serde_json::Value {
    #[derive(Serialize)]
    struct WithLine<'a> {
        #[serde(flatten)]
        view: &'a BudgetView,
        line: String,
    }
    serde_json::to_value(WithLine {
        view: v,
        line: v.short(),
    })
    .unwrap_or(serde_json::Value::Null)
}

/// `explain`'s budget lines: where it stands, whether its extension enforces it, and each
/// recorded change (the newest 10).
pub(crate) fn explain_lines(v: Option<&BudgetView>, changes: &[record::Change]) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(v) = v.filter(|v| !v.short().is_empty()) {
        let enforced = match (v.enforced, v.held) {
            (_, n) if n > 0 => format!("its extension holds {n} prompt(s)"),
            (true, _) => "enforced by its extension".to_string(),
            (false, _) => "not enforced (no budget-aware extension reports)".to_string(),
        };
        out.push(format!(
            "budget: {} ({}); {enforced}",
            crate::text::sanitize(&v.short()),
            v.level.as_str()
        ));
    }
    let skip = changes.len().saturating_sub(10);
    for c in changes.iter().skip(skip) {
        out.push(format!(
            "budget change: {} at {}",
            c.words(),
            crate::clock::format_iso(c.at)
        ));
    }
    out
}

/// A view as `to_json` wrote it (another host's board): `None` unless every figure is a finite
/// number (JSON holds no other) and the shape is this version's.
pub(crate) fn from_json(v: serde_json::Value) -> Option<BudgetView> {
    let mut view: BudgetView = serde_json::from_value(v).ok()?;
    view.settle();
    Some(view)
}

/// `to_json` for a serde field.
pub(crate) fn serialize_opt<S: serde::Serializer>(
    v: &Option<BudgetView>,
    s: S,
) -> Result<S::Ok, S::Error> {
    v.as_ref().map(to_json).serialize(s)
}

/// Add the roster-wide budget's standing to every configured worker's row: the spending of
/// all of them together against `cfg.budget`.
pub(crate) fn fleet_onto(
    rows: &mut [crate::snapshot::Row],
    cfg: &crate::evidence::config::IntercomConfig,
) {
    let Some(fleet) = cfg.budget.as_ref() else {
        return;
    };
    let workers =
        |r: &crate::snapshot::Row| cfg.find_by_session(&r.id).is_some_and(|a| !a.coordinator);
    let mut all = Figures::default();
    for r in rows.iter().filter(|r| workers(r)) {
        all.add(&Figures::of(r.usage.as_ref()));
    }
    let Some(standing) = eval::spending(fleet, &all) else {
        return;
    };
    for r in rows.iter_mut().filter(|r| workers(r)) {
        let v = r
            .budget
            .get_or_insert_with(|| BudgetView::of(None, &Figures::default(), None, None));
        v.fleet = Some(standing);
        v.settle();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn figures(cost: f64) -> Figures {
        Figures {
            cost_usd: cost,
            tokens: 100,
            no_pricing: false,
            at_least: false,
        }
    }

    #[test]
    fn a_reached_budget_without_the_extension_says_not_enforced() {
        let b = spec::parse(&json!({"costUsd": 5})).unwrap();
        let v = BudgetView::of(Some(&b), &figures(6.0), None, None);
        assert_eq!(v.level, Level::Reached);
        assert_eq!(v.short(), "$6.00/5.00 exceeded (not enforced)");
        let v = BudgetView::of(Some(&b), &figures(3.2), None, None);
        assert_eq!(v.short(), "$3.20/5.00 · not enforced");
        let hold = BudgetHold {
            held: 1,
            since: None,
        };
        let v = BudgetView::of(Some(&b), &figures(6.0), None, Some(&hold));
        assert_eq!(v.short(), "$6.00/5.00 reached");
        assert_eq!(v.held, 1);
        let v = BudgetView::of(Some(&b), &figures(4.5), None, Some(&hold));
        assert_eq!(v.short(), "$4.50/5.00 soft");
    }

    #[test]
    fn another_hosts_view_reads_back_as_written() {
        let b = spec::parse(&json!({"costUsd": 5, "contextPercent": 90})).unwrap();
        let v = BudgetView::of(Some(&b), &figures(4.5), None, None);
        assert_eq!(from_json(to_json(&v)), Some(v));
        assert_eq!(from_json(json!({"own": {"measure": "cost"}})), None);
        assert_eq!(from_json(json!("$(x)")), None);
    }

    #[test]
    fn the_fleet_limit_decides_when_it_is_further_along() {
        let b = spec::parse(&json!({"costUsd": 5})).unwrap();
        let fleet = spec::parse(&json!({"costUsd": 4})).unwrap();
        let mut v = BudgetView::of(Some(&b), &figures(1.0), None, None);
        v.fleet = eval::spending(&fleet, &figures(4.0));
        v.settle();
        assert_eq!(v.level, Level::Reached);
        assert_eq!(v.deciding().unwrap().0, "fleet budget");
    }
}
