//! `status --json`: a page of configured workers, compatible with Intercom's own
//! `intercom_worker_status` tool (fields may be added, never renamed).

use serde::Serialize;
use serde_json::Value;

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
    let head = PageHead {
        version: 1,
        source: "local-observations",
        generated_at: format_iso(scan.scanned_at),
        truncated: scan.snapshot.truncated,
        errors: &scan.snapshot.errors,
        roster: roster_json(&scan.snapshot.roster),
        total_in_snapshot: total,
        usage: &scan.snapshot.usage,
        offset: start,
        workers: [],
    };
    // Cannot fail: string keys, no maps keyed by anything else.
    let mut page =
        serde_json::to_value(&head).unwrap_or_else(|_| Value::Object(Default::default()));
    let kept = fill_page(
        &mut page,
        "workers",
        workers.into_iter().map(|(_, w)| w).collect(),
    );
    let next = start + kept;
    page["nextOffset"] = if next < total {
        Value::from(next)
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

/// The page before its workers (`fill_page` adds them, then `nextOffset`).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PageHead<'a> {
    version: u32,
    source: &'static str,
    generated_at: String,
    truncated: bool,
    errors: &'a [crate::snapshot::PassError],
    roster: RosterJson<'a>,
    total_in_snapshot: usize,
    usage: &'a crate::snapshot::UsageView,
    offset: usize,
    workers: [(); 0],
}

/// The roster's availability as the page says it.
#[derive(Serialize)]
#[serde(untagged)]
enum RosterJson<'a> {
    Available {
        available: bool,
        root: &'a str,
    },
    Unavailable {
        available: bool,
        code: &'static str,
        reason: &'a str,
    },
}

fn roster_json(r: &RosterStatus) -> RosterJson<'_> {
    match r {
        RosterStatus::Available { root } => RosterJson::Available {
            available: true,
            root,
        },
        RosterStatus::Unavailable { code, reason } => RosterJson::Unavailable {
            available: false,
            code: code.as_str(),
            reason,
        },
    }
}

/// What the board adds to an Intercom worker object, after Intercom's own members.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct BoardMembers<'a> {
    board_state: &'a crate::states::BoardState,
    board_state_reason: &'a crate::board::reason::StateReason,
    board_state_source: &'a crate::board::reason::StateSource,
    session_file: &'a Option<String>,
    last_session_activity: Option<String>,
    question: &'a Option<String>,
    board_state_at: Option<String>,
    model: &'a Option<String>,
    usage: &'a Option<crate::snapshot::UsageView>,
    context: &'a Option<crate::evidence::registrations::ContextFill>,
    headline: Option<crate::views::headline::Headline>,
    #[serde(skip_serializing_if = "Option::is_none")]
    budget: Option<Value>,
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
        let row = scan
            .snapshot
            .rows
            .iter()
            .find(|r| r.seen_key == rec.key().as_str());
        let board = BoardMembers {
            board_state: &rec.state,
            board_state_reason: &rec.state_reason,
            board_state_source: &rec.state_source,
            session_file: &rec.session_file,
            last_session_activity: rec.last_activity.map(format_iso),
            question: &rec.question,
            board_state_at: rec.state_at.map(format_iso),
            model: &rec.model,
            usage: &rec.usage,
            context: &rec.context,
            headline: row.map(|r| crate::views::headline::headline(r, scan.scanned_at)),
            budget: row
                .and_then(|r| r.budget.as_ref())
                .map(crate::budget::to_json),
        };
        if let (Some(o), Ok(Value::Object(add))) = (w.as_object_mut(), serde_json::to_value(&board))
        {
            o.extend(add);
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
