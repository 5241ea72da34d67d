//! Every budget change, who made it, when, from what and to what: one JSON line each in
//! `<root>/.pi-intercom/budgets/<hash of the session id>.jsonl`, append-only and bounded
//! (`store::append_line_capped` moves a full file aside once). `explain` and `log NAME` read it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::clock::{iso_ms, Ms};
use crate::store::{self, StoreError};

/// Bytes one worker's change log holds before it is moved aside (a few hundred changes).
const CAP: u64 = 64 * 1024;
/// Most changes read back.
pub(crate) const MAX_READ: usize = 200;

/// One change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Change {
    #[serde(with = "iso_ms")]
    pub at: Ms,
    /// Who: `cli` (`intercom-pane budget`), `sidebar`, `pi` (`/budget` inside the worker),
    /// `spawn`.
    pub by: String,
    /// The roster's budget value before and after (`null`: none).
    pub from: Value,
    pub to: Value,
}

impl Change {
    /// `cli: $5.00 → $7.00` — one line for `explain` and `log`.
    pub(crate) fn words(&self) -> String {
        format!(
            "{}: {} → {}",
            crate::text::sanitize(&self.by),
            shown(&self.from),
            shown(&self.to)
        )
    }
}

/// A budget value as a person reads it: `$5.00`, `$5.00, 200.0k tokens`, `off`.
fn shown(v: &Value) -> String {
    let Ok(b) = super::spec::parse(v) else {
        return "off".into();
    };
    let mut parts = Vec::new();
    if let Some(c) = b.cost_usd() {
        parts.push(format!("${c:.2}"));
    }
    if let Some(t) = b.tokens {
        parts.push(format!(
            "{} tokens",
            crate::evidence::sessions::usage::short_count(t)
        ));
    }
    if let Some(p) = b.context_percent {
        parts.push(format!("context {p}%"));
    }
    if parts.is_empty() {
        "off".into()
    } else {
        parts.join(", ")
    }
}

pub(crate) fn dir(root: &Path) -> PathBuf {
    crate::paths::state_dir(root).join("budgets")
}

pub(crate) fn file(root: &Path, session_id: &str) -> PathBuf {
    dir(root).join(format!("{}.jsonl", crate::paths::short_id(session_id)))
}

/// Append one change.
pub(crate) fn append(root: &Path, session_id: &str, c: &Change) -> Result<(), StoreError> {
    let state = crate::paths::state_dir(root);
    store::ensure_dir(&state, &dir(root))?;
    let mut line = serde_json::to_vec(c).unwrap_or_default();
    line.push(b'\n');
    store::append_line_capped(&file(root, session_id), &line, CAP)
}

/// The newest changes (at most `MAX_READ`), oldest first; lines that do not parse are skipped.
pub(crate) fn read(root: &Path, session_id: &str) -> Vec<Change> {
    let Ok(bytes) = crate::fsguard::read_capped(&file(root, session_id), CAP * 2) else {
        return Vec::new();
    };
    let all: Vec<Change> = bytes
        .split(|b| *b == b'\n')
        .filter_map(|l| serde_json::from_slice(l).ok())
        .collect();
    let skip = all.len().saturating_sub(MAX_READ);
    all.into_iter().skip(skip).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn changes_are_appended_and_read_back_in_order() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(crate::paths::state_dir(root.path())).unwrap();
        let c = |by: &str, from, to| Change {
            at: 1_700_000_000_000,
            by: by.into(),
            from,
            to,
        };
        append(
            root.path(),
            "w",
            &c("spawn", Value::Null, json!({"costUsd": 5})),
        )
        .unwrap();
        append(
            root.path(),
            "w",
            &c("cli", json!({"costUsd": 5}), json!({"costUsd": 7})),
        )
        .unwrap();
        let got = read(root.path(), "w");
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].words(), "spawn: off → $5.00");
        assert_eq!(got[1].words(), "cli: $5.00 → $7.00");
        assert!(read(root.path(), "other").is_empty());
    }
}
