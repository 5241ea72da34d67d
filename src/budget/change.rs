//! Changing a worker's budget in the roster (`budget NAME --raise/--usd/--tokens/--off`, the
//! sidebar's key, `/budget` inside pi, `spawn --budget-usd`): the value is checked first, the
//! worker's entry is rewritten under the roster's lock (`config_write`), and the change is
//! recorded (`record`). The extension asks `budget --check` before each prompt, so it sees the
//! new limit at once, without a restart.

use std::cell::RefCell;
use std::path::Path;

use serde_json::Value;

use super::record::{self, Change};
use super::spec::{self, Budget, BudgetError, DEFAULT_SOFT_PERCENT};
use crate::actions::config_write::{self, WriteError};
use crate::clock::Ms;

/// What to change.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Edit {
    /// Add this many dollars to the cost limit.
    Raise(f64),
    /// Set the cost limit.
    Usd(f64),
    /// Set the token limit.
    Tokens(f64),
    /// Remove the worker's budget.
    Off,
}

/// Why a budget was not changed.
#[derive(Debug)]
pub(crate) enum ChangeError {
    /// The value given is refused.
    Value(BudgetError),
    /// `--raise` on a worker without a cost limit.
    NoCostLimit,
    /// The worker's budget in the roster does not validate (the roster would not load).
    Current(BudgetError),
    /// The roster could not be rewritten.
    Write(String),
}

impl std::fmt::Display for ChangeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ChangeError::Value(e) => e.fmt(f),
            ChangeError::NoCostLimit => {
                f.write_str("it has no cost limit to raise (set one with --usd)")
            }
            ChangeError::Current(e) => write!(f, "its current budget is invalid: {e}"),
            ChangeError::Write(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for ChangeError {}

/// The budget after `edit`, from `current` (`None`: no budget; `Ok(None)`: none after).
pub(crate) fn edited(current: Option<&Budget>, edit: Edit) -> Result<Option<Budget>, ChangeError> {
    let base = current.copied().unwrap_or(Budget {
        soft_percent: DEFAULT_SOFT_PERCENT,
        ..Budget::default()
    });
    let mut b = base;
    match edit {
        Edit::Off => return Ok(None),
        Edit::Usd(v) => b.cost_micros = Some(spec::usd("costUsd", v).map_err(ChangeError::Value)?),
        Edit::Tokens(v) => b.tokens = Some(spec::tokens("tokens", v).map_err(ChangeError::Value)?),
        Edit::Raise(v) => {
            let add = spec::usd("raise", v).map_err(ChangeError::Value)?;
            let now = base.cost_micros.ok_or(ChangeError::NoCostLimit)?;
            let sum = now.saturating_add(add);
            // The sum must itself be a limit the roster accepts.
            spec::usd("costUsd", sum as f64 / 1e6).map_err(ChangeError::Value)?;
            b.cost_micros = Some(sum);
        }
    }
    Ok(Some(b))
}

/// How much the sidebar's `$` raises a cost limit: half of it, at least a cent.
pub(crate) fn sidebar_step(limit: f64) -> f64 {
    ((limit / 2.0) * 100.0).round().max(1.0) / 100.0
}

/// Apply `edit` to the worker with `session_id` in the roster at `root`, recording who (`by`)
/// and when. Returns the change recorded.
pub(crate) fn apply(
    root: &Path,
    session_id: &str,
    edit: Edit,
    by: &str,
    now: Ms,
) -> Result<Change, ChangeError> {
    let seen = RefCell::new((Value::Null, Value::Null));
    let result = config_write::update_agent(root, session_id, &|entry| {
        let from = entry.get("budget").cloned().unwrap_or(Value::Null);
        let current = match &from {
            Value::Null => None,
            v => Some(spec::parse(v).map_err(ChangeError::Current)?),
        };
        let to = match edited(current.as_ref(), edit)? {
            Some(b) => {
                let v = b.to_json();
                entry.insert("budget".into(), v.clone());
                v
            }
            None => {
                entry.remove("budget");
                Value::Null
            }
        };
        *seen.borrow_mut() = (from, to);
        Ok(())
    });
    match result {
        Ok(_) => {}
        Err(WriteError::Refused(e)) => return Err(e),
        Err(e) => return Err(ChangeError::Write(e.to_string())),
    }
    let (from, to) = seen.into_inner();
    let change = Change {
        at: now,
        by: by.to_string(),
        from,
        to,
    };
    // The roster holds the change; a record that cannot be written is said, not hidden.
    record::append(root, session_id, &change).map_err(|e| {
        ChangeError::Write(format!(
            "changed, but the change could not be recorded: {e}"
        ))
    })?;
    Ok(change)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usd(v: f64) -> Budget {
        Budget {
            cost_micros: Some((v * 1e6) as u64),
            soft_percent: DEFAULT_SOFT_PERCENT,
            ..Budget::default()
        }
    }

    #[test]
    fn raise_adds_to_the_cost_limit_and_refuses_what_it_cannot() {
        let b = edited(Some(&usd(5.0)), Edit::Raise(2.0)).unwrap().unwrap();
        assert_eq!(b.cost_usd(), Some(7.0));
        assert!(matches!(
            edited(None, Edit::Raise(2.0)),
            Err(ChangeError::NoCostLimit)
        ));
        for bad in [-1.0, f64::NAN, f64::INFINITY, 1e12] {
            assert!(
                matches!(
                    edited(Some(&usd(5.0)), Edit::Raise(bad)),
                    Err(ChangeError::Value(_))
                ),
                "{bad}"
            );
        }
        // The sum past the largest limit is refused too.
        let near = usd(spec::MAX_USD);
        assert!(matches!(
            edited(Some(&near), Edit::Raise(1.0)),
            Err(ChangeError::Value(BudgetError::TooLarge(..)))
        ));
        assert_eq!(edited(Some(&usd(5.0)), Edit::Off).unwrap(), None);
        let t = edited(Some(&usd(5.0)), Edit::Tokens(1000.0))
            .unwrap()
            .unwrap();
        assert_eq!((t.cost_usd(), t.tokens), (Some(5.0), Some(1000)));
        assert_eq!(sidebar_step(5.0), 2.5);
        assert_eq!(sidebar_step(0.25), 0.13);
        assert_eq!(sidebar_step(0.001), 0.01);
        assert!(matches!(
            edited(None, Edit::Tokens(0.5)),
            Err(ChangeError::Value(BudgetError::NotWhole(..)))
        ));
    }
}
