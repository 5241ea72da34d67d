//! `status --json`: a page of configured workers, compatible with Intercom's own
//! `intercom_worker_status` tool (fields may be added, never renamed).

use serde_json::{json, Value};

use crate::board::intercom;
use crate::clock::format_iso;
use crate::scan::Scan;
use crate::snapshot::RosterStatus;

/// Each page stays under this many bytes before the pagination field is added.
pub(crate) const PAGE_CAP_BYTES: usize = 40 * 1024;
pub(crate) const MAX_LIMIT: usize = 20;
/// Room kept for the pagination field (`,"nextOffset":N`), so the whole compact page fits too.
const PAGINATION_RESERVE: usize = 64;

#[derive(Debug, Clone)]
pub(crate) struct StatusQuery {
    pub name: Option<String>,
    pub offset: usize,
    pub limit: usize,
}

/// Why a status query selects nothing to show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StatusError {
    /// `--limit` outside `1..=MAX_LIMIT`.
    LimitOutOfRange(usize),
    /// No configured worker has this name (as given; sanitized when shown).
    NoSuchWorker(String),
}

impl std::fmt::Display for StatusError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StatusError::LimitOutOfRange(n) => write!(f, "--limit must be 1..{MAX_LIMIT}, got {n}"),
            StatusError::NoSuchWorker(name) => write!(
                f,
                "no configured worker named {:?}",
                crate::text::sanitize(name)
            ),
        }
    }
}

impl std::error::Error for StatusError {}

/// Indexes (into `scan.workers`) of the workers this query selects, before paging.
pub(crate) fn select(scan: &Scan, q: &StatusQuery) -> Result<Vec<usize>, StatusError> {
    if !(1..=MAX_LIMIT).contains(&q.limit) {
        return Err(StatusError::LimitOutOfRange(q.limit));
    }
    let all: Vec<usize> = (0..scan.workers.len()).collect();
    match &q.name {
        None => Ok(all),
        Some(n) => {
            let hit: Vec<usize> = all
                .into_iter()
                .filter(|i| scan.workers[*i].name.to_lowercase() == n.to_lowercase())
                .collect();
            if hit.is_empty() {
                Err(StatusError::NoSuchWorker(n.clone()))
            } else {
                Ok(hit)
            }
        }
    }
}

/// Build one page. `connection(i)` gives the connection object for worker `i` (not_checked when
/// no probe ran). The page keeps configured order; with probes, disconnected sort last within it.
pub(crate) fn page(
    scan: &Scan,
    q: &StatusQuery,
    connection: &dyn Fn(usize) -> Value,
    disconnected_last: bool,
) -> Result<Value, StatusError> {
    let selected = select(scan, q)?;
    let total = selected.len();
    let start = q.offset.min(total);
    let end = (start + q.limit).min(total);
    let mut workers: Vec<(usize, Value)> = selected[start..end]
        .iter()
        .map(|&i| (i, worker_object(scan, i, connection(i))))
        .collect();
    if disconnected_last {
        intercom::sort_disconnected_last(&mut workers, |(_, w)| {
            w["connection"]["state"] == "disconnected"
        });
    }
    let (errors, truncated) = (scan.snapshot.errors.clone(), scan.snapshot.truncated);
    let mut page = json!({
        "version": 1,
        "source": "local-observations",
        "generatedAt": format_iso(scan.scanned_at),
        "truncated": truncated,
        "errors": errors,
        "roster": roster_json(&scan.snapshot.roster),
        "totalInSnapshot": total,
        "usage": scan.snapshot.usage,
        "offset": start,
        "workers": [],
    });
    let kept = fill_page(
        &mut page,
        "workers",
        workers.into_iter().map(|(_, w)| w).collect(),
    );
    let next = start + kept;
    page["nextOffset"] = if next < total {
        json!(next)
    } else {
        Value::Null
    };
    Ok(page)
}

/// Put `items` under `key` in `page` while the page stays within `PAGE_CAP_BYTES` (at least
/// one item is kept, however large: callers keep every item well under the cap); what does not
/// fit starts the next page. Returns how many were kept.
pub(crate) fn fill_page(page: &mut Value, key: &str, items: Vec<Value>) -> usize {
    page[key] = Value::Array(Vec::new());
    // The page without items, plus each item and its separating comma: the exact compact size.
    let mut size = super::json::to_string(&*page)
        .map(|b| b.len())
        .unwrap_or(usize::MAX);
    let mut kept = Vec::new();
    for item in items {
        let len = super::json::to_string(&item)
            .map(|b| b.len())
            .unwrap_or(usize::MAX);
        let grown = size
            .saturating_add(len)
            .saturating_add(usize::from(!kept.is_empty()));
        if grown > PAGE_CAP_BYTES - PAGINATION_RESERVE && !kept.is_empty() {
            break;
        }
        size = grown;
        kept.push(item);
    }
    let n = kept.len();
    page[key] = Value::Array(kept);
    n
}

fn roster_json(r: &RosterStatus) -> Value {
    match r {
        RosterStatus::Available { root } => json!({"available": true, "root": root}),
        RosterStatus::Unavailable { code, reason } => {
            json!({"available": false, "code": code.as_str(), "reason": reason})
        }
    }
}

/// The Intercom worker object plus the board state of the same seat.
fn worker_object(scan: &Scan, i: usize, connection: Value) -> Value {
    let obs = &scan.workers[i];
    let mut w = intercom::worker_status_json(obs, connection);
    if let Some(rec) = scan
        .records
        .iter()
        .find(|r| r.session_id.as_deref() == Some(obs.session_id.as_str()) && r.intercom.is_some())
    {
        w["boardState"] = json!(rec.state);
        w["boardStateReason"] = json!(rec.state_reason);
        w["boardStateSource"] = json!(rec.state_source);
        w["sessionFile"] = json!(rec.session_file);
        w["lastSessionActivity"] = json!(rec.last_activity.map(format_iso));
        w["question"] = json!(rec.question);
        w["boardStateAt"] = json!(rec.state_at.map(format_iso));
        w["model"] = json!(rec.model);
        w["usage"] = json!(rec.usage);
        w["context"] = json!(rec.context);
        let row = scan
            .snapshot
            .rows
            .iter()
            .find(|r| r.seen_key == rec.key().as_str());
        w["headline"] = json!(row.map(|r| crate::views::headline::headline(r, scan.scanned_at)));
        if let Some(b) = row.and_then(|r| r.budget.as_ref()) {
            w["budget"] = crate::budget::to_json(b);
        }
    }
    w
}

#[cfg(test)]
mod tests {
    use super::StatusError;

    #[test]
    fn a_bad_name_is_quoted_and_sanitized() {
        let e = StatusError::NoSuchWorker("evil\u{1b}[2J\"x".into());
        let shown = e.to_string();
        assert!(
            shown.starts_with("no configured worker named \""),
            "{shown}"
        );
        assert!(!shown.contains('\u{1b}'), "{shown}");
        assert_eq!(
            StatusError::LimitOutOfRange(0).to_string(),
            "--limit must be 1..20, got 0"
        );
    }
}
