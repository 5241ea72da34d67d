//! What the worker's extension asks before it lets a prompt through (`budget --check`): hold it,
//! ask pi to compact, or let it go — from the same evaluation every view shows.

use serde::Serialize;

use super::eval::Level;
use super::spec::OnContext;
use super::BudgetView;

/// The answer `budget --check --json` prints (docs/interop.md, "Budgets").
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Verdict {
    /// The worst standing (`unknown` without any budget).
    pub level: Level,
    /// Hold the next prompt: a spending limit (own or fleet) is reached, or the context limit
    /// with `onContext: hold`.
    pub hold: bool,
    /// Ask pi to compact: the context limit is reached with `onContext: compact`.
    pub compact: bool,
    /// What is reached, in words (`budget $5.10/5.00`).
    pub line: String,
    /// How a person lifts it.
    pub lift: String,
}

/// The verdict for the worker named `name` whose row shows `view`.
pub(crate) fn verdict(name: &str, view: Option<&BudgetView>) -> Verdict {
    let raise = crate::mux::shell_line(&[
        "intercom-pane".to_string(),
        "budget".into(),
        name.to_string(),
        "--raise".into(),
        "2".into(),
    ]);
    let Some(v) = view else {
        return Verdict {
            level: Level::Unknown,
            hold: false,
            compact: false,
            line: String::new(),
            lift: String::new(),
        };
    };
    let spent = v.deciding().filter(|(_, s)| s.level == Level::Reached);
    let context = v.context.filter(|s| s.level == Level::Reached);
    let hold_context = context.is_some() && v.on_context == OnContext::Hold;
    let mut line = Vec::new();
    if let Some((what, s)) = spent {
        line.push(format!("{what} {}", s.short()));
    }
    if let Some(s) = context {
        line.push(format!(
            "context {:.0}% of the {:.0}% limit",
            s.spent, s.limit
        ));
    }
    let hold = spent.is_some() || hold_context;
    Verdict {
        level: v.level,
        hold,
        compact: context.is_some() && v.on_context == OnContext::Compact,
        line: line.join(", "),
        lift: match spent {
            // The roster's own limit: only the roster's top-level `budget` lifts it.
            Some(("fleet budget", _)) => {
                "raise the roster's budget (top-level \"budget\" in .pi-intercom/config.json)"
                    .to_string()
            }
            _ if hold => format!("/budget raise 2 here, or {raise}"),
            _ => String::new(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::eval::Figures;
    use crate::budget::spec::parse;
    use crate::evidence::registrations::ContextFill;
    use serde_json::json;

    fn figures(cost: f64) -> Figures {
        Figures {
            cost_usd: cost,
            tokens: 10,
            no_pricing: false,
            at_least: false,
        }
    }

    #[test]
    fn a_reached_budget_holds_and_says_how_to_lift_it() {
        let b = parse(&json!({"costUsd": 1})).unwrap();
        let v = BudgetView::of(Some(&b), &figures(1.2), None, None);
        let got = verdict("Bob $(x)", Some(&v));
        assert!(got.hold && !got.compact);
        assert_eq!(got.line, "budget $1.20/1.00");
        assert!(got.lift.contains("'Bob $(x)'"), "{}", got.lift);
        let under = BudgetView::of(Some(&b), &figures(0.9), None, None);
        let got = verdict("Bob", Some(&under));
        assert!(!got.hold && got.lift.is_empty());
        assert_eq!(got.level, Level::Soft);
        assert!(!verdict("Bob", None).hold);
    }

    #[test]
    fn the_context_limit_holds_or_compacts_as_configured() {
        let fill = ContextFill {
            tokens: Some(95),
            window: 100,
            percent: Some(95.0),
            at: 0,
        };
        let hold = parse(&json!({"contextPercent": 90})).unwrap();
        let v = BudgetView::of(Some(&hold), &figures(0.0), Some(&fill), None);
        let got = verdict("W", Some(&v));
        assert!(got.hold && !got.compact, "{got:?}");
        let compact = parse(&json!({"contextPercent": 90, "onContext": "compact"})).unwrap();
        let v = BudgetView::of(Some(&compact), &figures(0.0), Some(&fill), None);
        let got = verdict("W", Some(&v));
        assert!(!got.hold && got.compact, "{got:?}");
    }
}
