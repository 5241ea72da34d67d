//! `intercom-pane board` (and the coordinator's `intercom_board` tool): a page of the seats the
//! sidebar shows, with their board state and why, in the same paging as `status --json`
//! (limit 1–20, `nextOffset`, each page ≤ 40 KiB).
//!
//! Where `status --json` is Intercom's worker object (observed activity from the observation
//! logs), this page carries what only the board knows: `waiting` / `error` / `working` from the
//! session files and pi's own registration, the question a waiting seat asks, the error text, and
//! the close and resume stage. Every text is sanitized (no control character, no escape sequence)
//! and clipped, so one seat always fits a page.

use serde::Serialize;
use serde_json::Value;

use crate::clock::{format_iso, Ms};
use crate::snapshot::{ReplyPath, Row, RowRole, Snapshot};
use crate::text::sanitize;

use super::status_json::{fill_page, MAX_LIMIT};

/// The host of every seat until seats from other machines exist.
pub(crate) const LOCAL_HOST: &str = "local";
/// Most errors of the pass listed on a page (the rest are counted).
const MAX_ERRORS: usize = 16;

// Longest texts, in characters: a seat's page entry stays a few KiB at most.
const QUESTION_CHARS: usize = 1000;
const ERROR_CHARS: usize = 500;
const SUMMARY_CHARS: usize = 500;
const SHORT_CHARS: usize = 200;

#[derive(Debug, Clone, Default)]
pub(crate) struct BoardQuery {
    /// Only the seats that need the person: waiting or in error (or waiting on you), not
    /// marked seen — the sidebar's `n` rule.
    pub attention: bool,
    /// Only this seat (case-insensitive, on its name).
    pub name: Option<String>,
    /// Only seats of this host (`local` today).
    pub host: Option<String>,
    pub offset: usize,
    pub limit: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum BoardError {
    LimitOutOfRange(usize),
    NoSuchSeat(String),
    NoSuchHost(String),
}

impl std::fmt::Display for BoardError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BoardError::LimitOutOfRange(n) => write!(f, "limit must be 1..{MAX_LIMIT}, got {n}"),
            BoardError::NoSuchSeat(n) => write!(f, "no seat named {:?}", sanitize(n)),
            BoardError::NoSuchHost(h) => {
                write!(f, "no host named {:?} (hosts: {LOCAL_HOST})", sanitize(h))
            }
        }
    }
}

impl std::error::Error for BoardError {}

/// Whether the row needs the person (the sidebar's rule for `n`/`N`).
pub(crate) fn needs_you(row: &Row) -> bool {
    !row.seen && (row.state.needs_attention() || row.waiting_on_you)
}

/// The rows a query selects, in the sidebar's order (the coordinator is never a row).
pub(crate) fn select<'a>(
    snapshot: &'a Snapshot,
    q: &BoardQuery,
) -> Result<Vec<&'a Row>, BoardError> {
    if !(1..=MAX_LIMIT).contains(&q.limit) {
        return Err(BoardError::LimitOutOfRange(q.limit));
    }
    if let Some(h) = q.host.as_deref().filter(|h| *h != LOCAL_HOST) {
        return Err(BoardError::NoSuchHost(h.to_string()));
    }
    let rows: Vec<&Row> = snapshot
        .rows
        .iter()
        .filter(|r| r.role != RowRole::Coordinator)
        .filter(|r| {
            q.name
                .as_deref()
                .is_none_or(|n| r.name.to_lowercase() == n.to_lowercase())
        })
        .collect();
    if let (Some(n), true) = (&q.name, rows.is_empty()) {
        return Err(BoardError::NoSuchSeat(n.clone()));
    }
    Ok(rows
        .into_iter()
        .filter(|r| !q.attention || needs_you(r))
        .collect())
}

/// One page. `resume(row)` is the seat's resume stage, when a resume is recorded for it (the
/// caller reads it; views read no files).
pub(crate) fn page(
    snapshot: &Snapshot,
    q: &BoardQuery,
    resume: &dyn Fn(&Row) -> Option<Value>,
) -> Result<Value, BoardError> {
    let rows = select(snapshot, q)?;
    let total = rows.len();
    let start = q.offset.min(total);
    let end = (start + q.limit).min(total);
    let now = snapshot.scanned_at;
    let all = &snapshot.rows;
    let errors: Vec<String> = snapshot
        .errors
        .iter()
        .take(MAX_ERRORS)
        .map(|e| sanitize(&e.to_string()))
        .collect();
    let head = PageHead {
        version: 1,
        source: "intercom-pane board",
        generated_at: format_iso(now),
        truncated: snapshot.truncated,
        errors,
        errors_omitted: snapshot.errors.len().saturating_sub(MAX_ERRORS),
        seats_on_board: all
            .iter()
            .filter(|r| r.role != RowRole::Coordinator)
            .count(),
        need_you: all
            .iter()
            .filter(|r| r.role != RowRole::Coordinator && needs_you(r))
            .count(),
        filter: Filter {
            attention: q.attention,
            name: q.name.as_deref().map(sanitize),
            host: q.host.as_deref().map(sanitize),
        },
        total_in_snapshot: total,
        offset: start,
    };
    // Cannot fail: string keys only.
    let mut page =
        serde_json::to_value(&head).unwrap_or_else(|_| Value::Object(Default::default()));
    let seats: Vec<Value> = rows[start..end]
        .iter()
        .map(|r| seat_json(r, now, resume(r)))
        .collect();
    let kept = fill_page(&mut page, "seats", seats);
    let next = start + kept;
    page["nextOffset"] = if next < total {
        Value::from(next)
    } else {
        Value::Null
    };
    Ok(page)
}

fn age(now: Ms, at: Option<Ms>) -> Option<i64> {
    at.map(|t| ((now - t) / 1000).max(0))
}

/// Sanitized (one line, no controls) and cut to `max` characters, `…` marking a cut.
fn text(s: &str, max: usize) -> String {
    let clean = sanitize(s);
    if clean.chars().count() <= max {
        return clean;
    }
    let mut out: String = clean.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

fn opt_text(s: Option<&str>, max: usize) -> Option<String> {
    s.map(|s| text(s, max))
}

/// The page before its seats (`fill_page` adds them, then `nextOffset`).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PageHead {
    version: u32,
    source: &'static str,
    generated_at: String,
    truncated: bool,
    errors: Vec<String>,
    errors_omitted: usize,
    seats_on_board: usize,
    need_you: usize,
    filter: Filter,
    total_in_snapshot: usize,
    offset: usize,
}

#[derive(Serialize)]
struct Filter {
    attention: bool,
    name: Option<String>,
    host: Option<String>,
}

/// One seat on the page (also `intercom_wait`'s answer), in the page's key order.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Seat {
    name: String,
    project: String,
    host: &'static str,
    role: &'static str,
    state: &'static str,
    reason: std::borrow::Cow<'static, str>,
    reason_text: &'static str,
    source: String,
    age_seconds: Option<i64>,
    needs_you: bool,
    seen: bool,
    alive: Option<bool>,
    question: Option<String>,
    error: Option<String>,
    task: Option<String>,
    running_tool: Option<Tool>,
    headline: crate::views::headline::Headline,
    activity: Option<Activity>,
    connection: &'static str,
    report: Option<Report>,
    handoff: Option<Handoff>,
    close_job: Option<CloseJob>,
    resume: Option<Value>,
    reply: Reply,
    budget: Option<Value>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Tool {
    name: Option<String>,
    age_seconds: Option<i64>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Activity {
    status: &'static str,
    label: String,
    age_seconds: Option<i64>,
    evidence: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Report {
    status: &'static str,
    summary: String,
    age_seconds: Option<i64>,
    self_reported: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Handoff {
    job_id: String,
    summary: String,
    age_seconds: Option<i64>,
    self_reported: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CloseJob {
    job_id: String,
    state: &'static str,
    reason: Option<String>,
    age_seconds: Option<i64>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum Reply {
    Available { available: bool, target: String },
    Unavailable { available: bool, reason: String },
}

/// One seat as the page shows it (also `intercom_wait`'s answer).
/// The row's one line (`board::headline`), its text clipped as the question's.
fn board_headline(r: &Row, now: Ms) -> crate::views::headline::Headline {
    let mut h = crate::views::headline::headline(r, now);
    h.text = text(&h.text, QUESTION_CHARS);
    h
}

pub(crate) fn seat_json(r: &Row, now: Ms, resume: Option<Value>) -> Value {
    let role = match r.role {
        RowRole::Coordinator => "coordinator",
        RowRole::Worker => "worker",
        RowRole::Seat => "seat",
        RowRole::Connector => "connector",
    };
    let activity = r.activity.as_ref().map(|a| Activity {
        status: a.status.as_str(),
        label: a.label.clone(),
        age_seconds: age(now, a.observed_at),
        evidence: a.evidence.as_str(),
    });
    let report = r.report.as_ref().map(|p| Report {
        status: p.status.as_str(),
        summary: text(&p.summary, SUMMARY_CHARS),
        age_seconds: age(now, Some(p.updated_at)),
        self_reported: true,
    });
    let handoff = r.handoff.as_ref().map(|h| Handoff {
        job_id: text(&h.job_id, 64),
        summary: text(&h.summary, SUMMARY_CHARS),
        age_seconds: age(now, Some(h.updated_at)),
        self_reported: true,
    });
    let close = r.close_job.as_ref().map(|j| CloseJob {
        job_id: text(&j.job_id, 64),
        state: j.state.as_str(),
        reason: j.reason.as_deref().map(|x| text(x, 64)),
        age_seconds: age(now, Some(j.updated_at)),
    });
    let tool = r.running_tool.as_ref().map(|t| Tool {
        name: t.name.as_deref().map(|n| text(n, 64)),
        age_seconds: age(now, t.since),
    });
    let reply = match &r.reply {
        ReplyPath::Available { target } => Reply::Available {
            available: true,
            target: text(target, 120),
        },
        ReplyPath::Unavailable { reason } => Reply::Unavailable {
            available: false,
            reason: text(reason, SHORT_CHARS),
        },
    };
    let budget = r.budget.as_ref().map(crate::budget::to_json);
    let seat = Seat {
        name: text(&r.name, 120),
        project: text(&r.project, 120),
        host: LOCAL_HOST,
        role,
        state: r.state.as_str(),
        reason: r.state_reason.code(),
        reason_text: r.state_reason.words(),
        source: r.state_source.to_string(),
        age_seconds: age(now, r.last_activity),
        needs_you: needs_you(r),
        seen: r.seen,
        alive: r.alive,
        question: opt_text(r.question.as_deref(), QUESTION_CHARS),
        error: opt_text(r.last_error.as_deref(), ERROR_CHARS),
        task: opt_text(r.task.as_deref(), SHORT_CHARS),
        running_tool: tool,
        headline: board_headline(r, now),
        activity,
        connection: r.connection.state.as_str(),
        report,
        handoff,
        close_job: close,
        resume,
        reply,
        budget,
    };
    // Cannot fail: string keys only.
    serde_json::to_value(&seat).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_are_one_line_without_controls_and_cut() {
        assert_eq!(text("a\u{1b}[2Jb\nc", 10), "ab c");
        let long = "é".repeat(2000);
        let cut = text(&long, 1000);
        assert_eq!(cut.chars().count(), 1000);
        assert!(cut.ends_with('…'));
    }

    #[test]
    fn errors_name_what_was_asked_sanitized() {
        assert_eq!(
            BoardError::NoSuchHost("gpu\u{1b}".into()).to_string(),
            "no host named \"gpu\" (hosts: local)"
        );
        assert_eq!(
            BoardError::LimitOutOfRange(21).to_string(),
            "limit must be 1..20, got 21"
        );
    }
}
