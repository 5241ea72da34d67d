//! Where a budget stands, from the figures the scan already has: the session file's tokens and
//! cost (`UsageView`) and the context fill pi reports. Pure: the one place that decides under,
//! soft or reached, so the rows, `status`, the board files, the coordinator's tools, the alerts
//! and `budget --check` (what the extension asks before it lets a prompt through) agree.

use serde::Serialize;

use super::spec::Budget;
use crate::evidence::registrations::ContextFill;
use crate::evidence::sessions::usage::UsageView;

/// Where spending stands against a limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// Not known (a cost limit on a model without pricing, no token limit to fall back on).
    Unknown,
    Under,
    /// At or past the soft limit.
    Soft,
    /// At or past the limit.
    Reached,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Unknown => "unknown",
            Level::Under => "under",
            Level::Soft => "soft",
            Level::Reached => "reached",
        }
    }
}

/// What a limit counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Measure {
    /// US dollars, from pi's pricing of each message.
    Cost,
    /// Tokens (every input, output and cache token).
    Tokens,
}

/// One limit's standing.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Standing {
    pub measure: Measure,
    pub spent: f64,
    pub limit: f64,
    pub level: Level,
    /// The model has no pricing: counted by tokens, or not at all.
    pub no_pricing: bool,
    /// Part of a session file was not read: `spent` is at least this.
    pub at_least: bool,
}

impl Standing {
    /// `$3.20/5.00`, `41.0k/100.0k tokens` (no pricing: `… by tokens (no pricing)`).
    pub fn short(&self) -> String {
        let ge = if self.at_least { "≥" } else { "" };
        match (self.measure, self.level) {
            (Measure::Cost, Level::Unknown) => format!("$?/{:.2} (no pricing)", self.limit),
            (Measure::Cost, _) => format!("{ge}${:.2}/{:.2}", self.spent, self.limit),
            (Measure::Tokens, _) => format!(
                "{ge}{}/{} tokens{}",
                crate::evidence::sessions::usage::short_count(self.spent as u64),
                crate::evidence::sessions::usage::short_count(self.limit as u64),
                if self.no_pricing {
                    " by tokens (no pricing)"
                } else {
                    ""
                }
            ),
        }
    }
}

/// The figures a budget is measured on.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Figures {
    pub cost_usd: f64,
    pub tokens: u64,
    /// Calls were made and none carried a cost: the model has no pricing.
    pub no_pricing: bool,
    pub at_least: bool,
}

impl Figures {
    pub fn of(u: Option<&UsageView>) -> Figures {
        let Some(u) = u else {
            return Figures::default();
        };
        let x = &u.usage;
        Figures {
            cost_usd: x.cost(),
            tokens: x
                .input
                .saturating_add(x.output)
                .saturating_add(x.cache_read)
                .saturating_add(x.cache_write),
            no_pricing: x.calls > 0 && x.cost_nanos == 0,
            at_least: u.at_least,
        }
    }

    pub fn add(&mut self, o: &Figures) {
        self.cost_usd += o.cost_usd;
        self.tokens = self.tokens.saturating_add(o.tokens);
        self.no_pricing |= o.no_pricing;
        self.at_least |= o.at_least;
    }
}

fn level(spent: f64, limit: f64, soft_percent: u8) -> Level {
    if spent >= limit {
        Level::Reached
    } else if spent >= limit * f64::from(soft_percent) / 100.0 {
        Level::Soft
    } else {
        Level::Under
    }
}

/// The standing of the spending limit of `b` on `f`: the cost limit while the model is priced,
/// else the token limit ("by tokens (no pricing)"), else unknown. `None`: no spending limit.
pub(crate) fn spending(b: &Budget, f: &Figures) -> Option<Standing> {
    let tokens = |no_pricing| {
        b.tokens.map(|t| Standing {
            measure: Measure::Tokens,
            spent: f.tokens as f64,
            limit: t as f64,
            level: level(f.tokens as f64, t as f64, b.soft_percent),
            no_pricing,
            at_least: f.at_least,
        })
    };
    match b.cost_usd() {
        Some(limit) if !f.no_pricing => {
            let cost = Standing {
                measure: Measure::Cost,
                spent: f.cost_usd,
                limit,
                level: level(f.cost_usd, limit, b.soft_percent),
                no_pricing: false,
                at_least: f.at_least,
            };
            // Both limits set: the one further along decides.
            match tokens(false) {
                Some(t) if t.level > cost.level => Some(t),
                _ => Some(cost),
            }
        }
        Some(limit) => tokens(true).or(Some(Standing {
            measure: Measure::Cost,
            spent: 0.0,
            limit,
            level: Level::Unknown,
            no_pricing: true,
            at_least: f.at_least,
        })),
        None => tokens(f.no_pricing),
    }
}

/// The standing of the context limit of `b` on pi's reported fill (`None`: no limit, or no
/// figure from pi).
pub(crate) fn context(b: &Budget, fill: Option<&ContextFill>) -> Option<Standing> {
    let limit = f64::from(b.context_percent?);
    let p = fill?.percent?;
    Some(Standing {
        measure: Measure::Tokens,
        spent: p,
        limit,
        level: level(p, limit, b.soft_percent),
        no_pricing: false,
        at_least: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::spec::{parse, DEFAULT_SOFT_PERCENT};
    use serde_json::json;

    fn f(cost: f64, tokens: u64, no_pricing: bool) -> Figures {
        Figures {
            cost_usd: cost,
            tokens,
            no_pricing,
            at_least: false,
        }
    }

    #[test]
    fn cost_crosses_soft_then_reached() {
        let b = parse(&json!({"costUsd": 5})).unwrap();
        assert_eq!(b.soft_percent, DEFAULT_SOFT_PERCENT);
        let s = |c| spending(&b, &f(c, 10, false)).unwrap();
        assert_eq!(s(3.2).level, Level::Under);
        assert_eq!(s(3.2).short(), "$3.20/5.00");
        assert_eq!(s(4.0).level, Level::Soft);
        assert_eq!(s(4.99).level, Level::Soft);
        assert_eq!(s(5.0).level, Level::Reached);
        assert_eq!(s(7.0).level, Level::Reached);
    }

    #[test]
    fn a_model_without_pricing_falls_back_to_tokens_and_says_so() {
        let b = parse(&json!({"costUsd": 5, "tokens": 1000})).unwrap();
        let s = spending(&b, &f(0.0, 900, true)).unwrap();
        assert_eq!((s.measure, s.level), (Measure::Tokens, Level::Soft));
        assert_eq!(s.short(), "900/1.0k tokens by tokens (no pricing)");
        let only_cost = parse(&json!({"costUsd": 5})).unwrap();
        let s = spending(&only_cost, &f(0.0, 900, true)).unwrap();
        assert_eq!(s.level, Level::Unknown);
        assert_eq!(s.short(), "$?/5.00 (no pricing)");
        // Priced, both limits: the one further along decides.
        let s = spending(&b, &f(1.0, 1000, false)).unwrap();
        assert_eq!((s.measure, s.level), (Measure::Tokens, Level::Reached));
        assert!(spending(
            &parse(&json!({"contextPercent": 90})).unwrap(),
            &f(1.0, 1, false)
        )
        .is_none());
    }

    #[test]
    fn context_uses_pis_percent_only() {
        let b = parse(&json!({"contextPercent": 90})).unwrap();
        let fill = |p| ContextFill {
            tokens: None,
            window: 1000,
            percent: p,
            at: 0,
        };
        assert_eq!(
            context(&b, Some(&fill(Some(50.0)))).unwrap().level,
            Level::Under
        );
        assert_eq!(
            context(&b, Some(&fill(Some(75.0)))).unwrap().level,
            Level::Soft
        );
        assert_eq!(
            context(&b, Some(&fill(Some(90.0)))).unwrap().level,
            Level::Reached
        );
        assert!(context(&b, Some(&fill(None))).is_none());
        assert!(context(&b, None).is_none());
    }
}
