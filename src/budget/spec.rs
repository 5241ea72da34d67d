//! A budget as the roster holds it (`"budget": {"costUsd": 5, "tokens": N, "contextPercent": 90,
//! "softPercent": 80, "onContext": "hold"}`), on a worker's entry or at the roster's top level
//! (the fleet's), and as `spawn --budget-usd/--budget-tokens` and `budget --usd/--tokens` give
//! it. Strict: a value that is negative, not finite, too large or of the wrong type is refused
//! with its reason, and nothing is changed.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Largest cost limit accepted, in US dollars (far above any one fleet's day).
pub(crate) const MAX_USD: f64 = 1_000_000.0;
/// Largest token limit accepted.
pub(crate) const MAX_TOKENS: u64 = 1 << 40;
/// The soft limit when the roster names none, in percent of the hard one.
pub(crate) const DEFAULT_SOFT_PERCENT: u8 = 80;

/// What the extension does when the context limit is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnContext {
    /// Hold the next prompt, like a spent budget.
    #[default]
    Hold,
    /// Ask pi to compact instead.
    Compact,
}

impl OnContext {
    pub fn as_str(self) -> &'static str {
        match self {
            OnContext::Hold => "hold",
            OnContext::Compact => "compact",
        }
    }
}

/// A validated budget. Costs are kept in millionths of a dollar so the type compares exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Budget {
    pub cost_micros: Option<u64>,
    pub tokens: Option<u64>,
    /// Percent of the context window, 1..=100.
    pub context_percent: Option<u8>,
    /// Percent of each limit at which the soft alert fires, 1..=100.
    pub soft_percent: u8,
    pub on_context: OnContext,
}

impl Budget {
    pub fn cost_usd(&self) -> Option<f64> {
        self.cost_micros.map(|m| m as f64 / 1e6)
    }

    /// Nothing limited at all (every limit off).
    pub fn is_empty(&self) -> bool {
        self.cost_micros.is_none() && self.tokens.is_none() && self.context_percent.is_none()
    }

    /// The roster's JSON form (what `spawn` and `budget` write).
    pub fn to_json(self) -> Value {
        let wire = Wire {
            cost_usd: self.cost_usd(),
            tokens: self.tokens,
            context_percent: self.context_percent,
            soft_percent: (self.soft_percent != DEFAULT_SOFT_PERCENT).then_some(self.soft_percent),
            on_context: (self.on_context != OnContext::Hold).then_some(self.on_context),
        };
        serde_json::to_value(wire).unwrap_or(Value::Null)
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Wire {
    #[serde(skip_serializing_if = "Option::is_none")]
    cost_usd: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    context_percent: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    soft_percent: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    on_context: Option<OnContext>,
}

/// Why a budget value is refused.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum BudgetError {
    /// `budget` is not a JSON object.
    NotObject,
    /// A key this version does not know (a typo would otherwise limit nothing).
    UnknownKey(String),
    /// The field's value is of the wrong type.
    WrongType(&'static str),
    Negative(&'static str, f64),
    NotFinite(&'static str),
    /// Above the largest accepted value.
    TooLarge(&'static str, f64),
    /// A count or percent that is not a whole number.
    NotWhole(&'static str, f64),
    /// A percent of zero or above 100.
    PercentRange(&'static str, f64),
    /// `onContext` is neither "hold" nor "compact".
    OnContext,
}

impl std::fmt::Display for BudgetError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BudgetError::NotObject => f.write_str("budget must be an object"),
            BudgetError::UnknownKey(k) => write!(
                f,
                "budget.{} is not a budget field (costUsd, tokens, contextPercent, softPercent, onContext)",
                crate::text::clip(&crate::text::sanitize(k), 40)
            ),
            BudgetError::WrongType(k) => write!(f, "budget.{k} must be a number"),
            BudgetError::Negative(k, v) => write!(f, "budget.{k} must not be negative (got {v})"),
            BudgetError::NotFinite(k) => write!(f, "budget.{k} must be a finite number"),
            BudgetError::TooLarge(k, v) => write!(f, "budget.{k} is too large (got {v:e})"),
            BudgetError::NotWhole(k, v) => write!(f, "budget.{k} must be a whole number (got {v})"),
            BudgetError::PercentRange(k, v) => {
                write!(f, "budget.{k} must be a percent from 1 to 100 (got {v})")
            }
            BudgetError::OnContext => f.write_str("budget.onContext must be \"hold\" or \"compact\""),
        }
    }
}

impl std::error::Error for BudgetError {}

/// A cost limit in dollars: finite, not negative, at most `MAX_USD`.
pub(crate) fn usd(field: &'static str, v: f64) -> Result<u64, BudgetError> {
    if !v.is_finite() {
        return Err(BudgetError::NotFinite(field));
    }
    if v < 0.0 {
        return Err(BudgetError::Negative(field, v));
    }
    if v > MAX_USD {
        return Err(BudgetError::TooLarge(field, v));
    }
    Ok((v * 1e6).round() as u64)
}

/// A token limit: a whole number, not negative, at most `MAX_TOKENS`.
pub(crate) fn tokens(field: &'static str, v: f64) -> Result<u64, BudgetError> {
    if !v.is_finite() {
        return Err(BudgetError::NotFinite(field));
    }
    if v < 0.0 {
        return Err(BudgetError::Negative(field, v));
    }
    if v.fract() != 0.0 {
        return Err(BudgetError::NotWhole(field, v));
    }
    if v > MAX_TOKENS as f64 {
        return Err(BudgetError::TooLarge(field, v));
    }
    Ok(v as u64)
}

fn percent(field: &'static str, v: f64) -> Result<u8, BudgetError> {
    if !v.is_finite() {
        return Err(BudgetError::NotFinite(field));
    }
    if v.fract() != 0.0 {
        return Err(BudgetError::NotWhole(field, v));
    }
    if !(1.0..=100.0).contains(&v) {
        return Err(BudgetError::PercentRange(field, v));
    }
    Ok(v as u8)
}

fn number(field: &'static str, v: &Value) -> Result<f64, BudgetError> {
    v.as_f64().ok_or(BudgetError::WrongType(field))
}

/// A roster's `budget` value, checked field by field (the first bad one is named).
pub(crate) fn parse(v: &Value) -> Result<Budget, BudgetError> {
    let obj = v.as_object().ok_or(BudgetError::NotObject)?;
    let mut b = Budget {
        soft_percent: DEFAULT_SOFT_PERCENT,
        ..Budget::default()
    };
    for (k, v) in obj {
        match k.as_str() {
            "costUsd" => b.cost_micros = Some(usd("costUsd", number("costUsd", v)?)?),
            "tokens" => b.tokens = Some(tokens("tokens", number("tokens", v)?)?),
            "contextPercent" => {
                b.context_percent = Some(percent("contextPercent", number("contextPercent", v)?)?)
            }
            "softPercent" => b.soft_percent = percent("softPercent", number("softPercent", v)?)?,
            "onContext" => {
                b.on_context = match v.as_str() {
                    Some("hold") => OnContext::Hold,
                    Some("compact") => OnContext::Compact,
                    _ => return Err(BudgetError::OnContext),
                }
            }
            other => return Err(BudgetError::UnknownKey(other.to_string())),
        }
    }
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_full_budget_reads_and_writes_back_the_same() {
        let v = json!({"costUsd": 5, "tokens": 200000, "contextPercent": 90, "softPercent": 70, "onContext": "compact"});
        let b = parse(&v).unwrap();
        assert_eq!(b.cost_micros, Some(5_000_000));
        assert_eq!(b.tokens, Some(200_000));
        assert_eq!(b.context_percent, Some(90));
        assert_eq!(b.soft_percent, 70);
        assert_eq!(b.on_context, OnContext::Compact);
        assert_eq!(parse(&b.to_json()).unwrap(), b);
        let d = parse(&json!({"costUsd": 2.5})).unwrap();
        assert_eq!(d.soft_percent, DEFAULT_SOFT_PERCENT);
        assert_eq!(d.to_json(), json!({"costUsd": 2.5}));
    }

    #[test]
    fn hostile_values_are_refused_with_their_reason() {
        let cases = [
            (json!([]), "must be an object"),
            (json!({"costUsd": -1}), "must not be negative"),
            (json!({"costUsd": 1e300}), "too large"),
            (json!({"costUsd": "5"}), "must be a number"),
            (json!({"costUsd": null}), "must be a number"),
            (json!({"tokens": 1.5}), "whole number"),
            (json!({"tokens": -3}), "must not be negative"),
            (json!({"tokens": 1e20}), "too large"),
            (json!({"contextPercent": 0}), "from 1 to 100"),
            (json!({"contextPercent": 101}), "from 1 to 100"),
            (json!({"softPercent": 79.5}), "whole number"),
            (json!({"onContext": "kill"}), "\"hold\" or \"compact\""),
            (json!({"costUSD": 5}), "not a budget field"),
            (json!({"cost\u{1b}[31m": 5}), "not a budget field"),
        ];
        for (v, why) in cases {
            let e = parse(&v).unwrap_err().to_string();
            assert!(e.contains(why), "{v}: {e}");
            assert!(!e.contains('\u{1b}'), "{e}");
        }
        // What JSON cannot carry but a flag can.
        for v in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(usd("costUsd", v), Err(BudgetError::NotFinite("costUsd")));
            assert_eq!(tokens("tokens", v), Err(BudgetError::NotFinite("tokens")));
        }
    }
}
