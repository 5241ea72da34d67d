//! A worker's timeline as people and scripts read it (`log NAME`, `intercom_log`): one line per
//! entry, newest last, every transcript string sanitized for the terminal; or a JSON document.

use std::fmt;
use std::path::Path;

use serde::Serialize;

use crate::actions::worker_events::WorkerEvent;
use crate::clock::{format_iso, Ms};
use crate::evidence::sessions::timeline::{
    self, Actor, EventKind, LogEntry, Read, Sender, Skipped, ToolCall, ToolEnd, Turn, TurnEnd,
    What, READ_LIMITS,
};
use crate::evidence::sessions::usage::short_count;
use crate::scan::{Scan, SeatLookup};
use crate::text;

/// `log --json`: the seat, what was read, the entries.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LogView<'a> {
    pub seat: &'a str,
    pub file: &'a str,
    #[serde(with = "crate::clock::iso_ms_opt")]
    pub since: Option<Ms>,
    /// Bytes read (the whole file is not, with `--since`).
    pub bytes_read: u64,
    /// A budget ran out before the cutoff: older entries were not read.
    pub truncated: bool,
    pub skipped: Skipped,
    pub entries: Vec<&'a LogEntry>,
}

/// Why a seat's timeline cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LogRefusal {
    /// No seat has that name (the name given; why no roster agent can be named, if so).
    Unknown(String, Option<String>),
    /// Several seats have it.
    Ambiguous(String),
    /// The seat (its key) has no session file yet.
    NoSessionFile(String),
    /// Its session file (path) cannot be read: the `FsError` code.
    Unreadable(String, &'static str),
}

impl fmt::Display for LogRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = |t: &str| text::clip(&text::sanitize(t), 200);
        match self {
            LogRefusal::Unknown(n, None) => write!(f, "no seat named {:?}", s(n)),
            LogRefusal::Unknown(n, Some(roster)) => {
                write!(f, "no seat named {:?}: {roster}", s(n))
            }
            LogRefusal::Ambiguous(n) => write!(
                f,
                "several seats are named {:?} (use <project>/<agent>)",
                s(n)
            ),
            LogRefusal::NoSessionFile(k) => write!(
                f,
                "{} has no session file yet (pi writes one at its first prompt)",
                s(k)
            ),
            LogRefusal::Unreadable(p, code) => {
                write!(f, "cannot read the session file {}: {code}", s(p))
            }
        }
    }
}

/// A seat's timeline as read now, and the open file `--follow` goes on reading.
pub(crate) struct SeatLog {
    pub key: String,
    pub file: String,
    pub read: Read,
    /// The seat's pi session id (what the reply path's records are kept under).
    pub session_id: Option<String>,
    /// The transcript's entries with this tool's own records of the seat among them, oldest
    /// first.
    pub entries: Vec<LogEntry>,
}

/// One event as an entry (its detail on one line, sanitized).
type Ev = (Ms, EventKind, String, Option<Actor>);

/// This tool's records of the seat, as the pass read them from the roster: its handoff and its
/// close job (the newest of each; older ones are not kept there). A close job that
/// `worker_events` recorded too is left to that record (it says who asked).
fn roster_events(pass: &Scan, key: &str, recorded: &[WorkerEvent]) -> Vec<Ev> {
    let Some(row) = pass.snapshot.rows.iter().find(|r| r.seen_key == key) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let Some(h) = &row.handoff {
        out.push((
            h.updated_at,
            EventKind::Handoff,
            format!("job {}: {}", h.job_id, h.summary),
            None,
        ));
    }
    if let Some(c) = &row.close_job {
        let mut detail = format!("job {}: {}", c.job_id, c.state.as_str());
        if let Some(r) = &c.reason {
            detail.push_str(&format!(" ({r})"));
        }
        if !recorded
            .iter()
            .any(|e| e.job_id.as_deref() == Some(c.job_id.as_str()))
        {
            out.push((c.updated_at, EventKind::Close, detail, None));
        }
    }
    // Who changed a budget is in the change's own words.
    out.extend(
        budget_events(pass, &row.id)
            .into_iter()
            .map(|(at, kind, words)| (at, kind, words, None)),
    );
    out
}

/// What `worker_events` recorded of the seat's session: spawn, close, resume, restore, with who
/// asked.
fn recorded_events(recorded: &[WorkerEvent]) -> Vec<Ev> {
    recorded
        .iter()
        .map(|e| {
            let detail = if e.detail.is_empty() {
                e.outcome.clone()
            } else {
                format!("{}: {}", e.outcome, e.detail)
            };
            (e.at, e.event, detail, Some(e.by))
        })
        .collect()
}

/// Every record this tool keeps of the seat, as entries whose seqs start at `first_seq` (the
/// one place a new source of events joins the timeline; `merge_events` puts them in time order).
fn tool_events(pass: &Scan, key: &str, session_id: Option<&str>, first_seq: u64) -> Vec<LogEntry> {
    let recorded = session_id
        .map(|sid| crate::actions::worker_events::read(&pass.data_root, sid))
        .unwrap_or_default();
    let mut all = roster_events(pass, key, &recorded);
    all.extend(recorded_events(&recorded));
    all.into_iter()
        .zip(first_seq..)
        .map(|((at, event, detail, by), seq)| LogEntry {
            seq,
            at: Some(at),
            what: What::Event {
                event,
                detail: text::one_line(&detail, LINE_CHARS),
                by,
            },
        })
        .collect()
}

/// The recorded changes of the seat's budget (`budget::record`), each at its time.
fn budget_events(pass: &Scan, session_id: &str) -> Vec<(Ms, EventKind, String)> {
    let Some(cfg) = &pass.config else {
        return Vec::new();
    };
    crate::budget::record::read(&cfg.root, session_id)
        .into_iter()
        .map(|c| (c.at, EventKind::Budget, c.words()))
        .collect()
}

/// Characters kept of an event's detail.
const LINE_CHARS: usize = 300;

/// The timeline of the seat `name` of `pass` since `since`: the seat found as `explain` finds
/// it, its session file the one the scan tied to it (never a guess).
pub(crate) fn seat_log(pass: &Scan, name: &str, since: Option<Ms>) -> Result<SeatLog, LogRefusal> {
    let key = pass.find_seat(name).map_err(|why| match why {
        SeatLookup::Unknown => {
            LogRefusal::Unknown(name.to_string(), pass.snapshot.roster.missing())
        }
        SeatLookup::Ambiguous(_) => LogRefusal::Ambiguous(name.to_string()),
    })?;
    let file = pass
        .records
        .iter()
        .find(|rec| rec.key() == key)
        .and_then(|rec| rec.session_file.clone())
        .ok_or_else(|| LogRefusal::NoSessionFile(key.clone()))?;
    let read = timeline::read_path(Path::new(&file), since, &READ_LIMITS)
        .map_err(|e| LogRefusal::Unreadable(file.clone(), e.code()))?;
    let mut entries: Vec<LogEntry> = read.builder.entries().cloned().collect();
    let session_id = pass
        .records
        .iter()
        .find(|rec| rec.key() == key)
        .and_then(|rec| rec.session_id.clone());
    // Their seqs follow the transcript's, far enough on not to meet what `--follow` adds.
    let events = tool_events(pass, &key, session_id.as_deref(), u64::MAX / 2);
    if let Some(sid) = &session_id {
        timeline::attribute(
            &mut entries,
            &crate::actions::reply::sent::read(&pass.data_root, sid),
        );
    }
    let entries = timeline::merge_events(entries, events, since);
    Ok(SeatLog {
        key,
        file,
        read,
        session_id,
        entries,
    })
}

/// Bytes of entries on one `intercom_log` page at most (as `intercom_board`'s 40 KiB).
const PAGE_BYTES: usize = 40 * 1024;

/// `intercom_log`'s answer: a page of a seat's timeline, newest first.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LogPage<'a> {
    pub version: u32,
    pub source: &'static str,
    pub seat: &'a str,
    #[serde(with = "crate::clock::iso_ms_opt")]
    pub since: Option<Ms>,
    pub order: &'static str,
    /// Entries read in the window (all pages).
    pub total_in_window: usize,
    pub offset: usize,
    /// Where the next (older) page starts; `None` at the oldest.
    pub next_offset: Option<usize>,
    /// A read budget ran out before the cutoff: older entries were not read.
    pub truncated: bool,
    pub skipped: Skipped,
    pub entries: Vec<&'a LogEntry>,
}

/// The page of `log` that starts `offset` entries from the newest: at most `limit` entries and
/// `PAGE_BYTES` of them (at least one, whatever its size, so paging always moves on).
pub(crate) fn page(log: &SeatLog, since: Option<Ms>, offset: usize, limit: usize) -> LogPage<'_> {
    let b = &log.read.builder;
    let newest_first: Vec<&LogEntry> = log.entries.iter().rev().collect();
    let total = newest_first.len();
    let mut entries = Vec::new();
    let mut bytes = 0usize;
    for e in newest_first.iter().skip(offset).take(limit) {
        let size = serde_json::to_string(e).map_or(0, |s| s.len());
        if !entries.is_empty() && bytes + size > PAGE_BYTES {
            break;
        }
        bytes += size;
        entries.push(*e);
    }
    let end = offset.saturating_add(entries.len());
    LogPage {
        version: 1,
        source: "intercom-pane log",
        seat: &log.key,
        since,
        order: "newestFirst",
        total_in_window: total,
        offset,
        next_offset: (end < total).then_some(end),
        truncated: log.read.truncated,
        skipped: b.skipped,
        entries,
    }
}

/// `12ms`, `4.2s`, `3m05s`, `1h02m`.
pub(crate) fn duration(ms: i64) -> String {
    match ms {
        ms if ms < 1000 => format!("{}ms", ms.max(0)),
        ms if ms < 60_000 => format!("{:.1}s", ms as f64 / 1000.0),
        ms if ms < 3_600_000 => format!("{}m{:02}s", ms / 60_000, ms / 1000 % 60),
        ms => format!("{}h{:02}m", ms / 3_600_000, ms / 60_000 % 60),
    }
}

/// `2026-12-01 10:00:01`, UTC.
fn when(at: Option<Ms>) -> String {
    match at {
        Some(at) => {
            let iso = format_iso(at);
            iso.get(..19).map_or(iso.clone(), |s| s.replace('T', " "))
        }
        None => "????-??-?? ??:??:??".into(),
    }
}

/// A transcript string made safe and short for one line.
fn safe(s: &str, chars: usize) -> String {
    text::one_line(s, chars)
}

fn turn_words(t: &Turn) -> String {
    let outcome = match t.outcome {
        TurnEnd::Running => "running",
        TurnEnd::Settled => "settled",
        TurnEnd::Aborted => "aborted",
        TurnEnd::Error => "error",
        TurnEnd::Retried => "retried",
        TurnEnd::Compacted => "compacted",
    };
    let mut parts = vec![outcome.to_string()];
    if let Some(d) = t.duration_ms {
        parts[0].push(' ');
        parts[0].push_str(&duration(d));
    }
    if let Some(m) = &t.model {
        parts.push(safe(m, 60));
    }
    if t.usage.usage.calls > 0 {
        parts.push(t.usage.to_string());
    }
    if t.tools > 0 {
        parts.push(format!(
            "{} tool{}",
            t.tools,
            if t.tools == 1 { "" } else { "s" }
        ));
    }
    if t.retries > 0 {
        parts.push(format!(
            "{} retr{}",
            t.retries,
            if t.retries == 1 { "y" } else { "ies" }
        ));
    }
    if let Some(e) = &t.error {
        parts.push(format!("error: {}", safe(e, 120)));
    }
    match &t.prompt {
        Some(p) if !p.is_empty() && t.from.sender != Sender::Unknown => {
            parts.push(format!("“{}” {}", safe(p, 80), t.from.sender.words()))
        }
        Some(p) if !p.is_empty() => parts.push(format!("“{}”", safe(p, 80))),
        _ if t.partial => parts.push("(began before the window)".into()),
        _ => {}
    }
    parts.join(" · ")
}

fn tool_words(t: &ToolCall) -> String {
    let outcome = match t.outcome {
        ToolEnd::Running => "running".to_string(),
        ToolEnd::Ok => "ok".to_string(),
        ToolEnd::Error => "FAILED".to_string(),
    };
    let mut s = format!("{} {outcome}", safe(&t.name, 40));
    if let Some(d) = t.duration_ms {
        s.push(' ');
        s.push_str(&duration(d));
    }
    if !t.args.is_empty() {
        s.push_str(" · ");
        s.push_str(&safe(&t.args, 100));
    }
    s
}

/// One entry on one line.
pub(crate) fn line(e: &LogEntry) -> String {
    let (kind, words) = match &e.what {
        What::Turn(t) => ("turn", turn_words(t)),
        What::Tool(t) => ("tool", tool_words(t)),
        What::Question { text } => ("question", safe(text, 160)),
        What::Answer { text, from } => (
            "answer",
            format!("{} · {}", safe(text, 160), from.sender.words()),
        ),
        What::Compaction {} => ("compact", "pi compacted the context".into()),
        What::Event { event, detail, by } => (
            event.word(),
            match by {
                Some(b) => format!("{} · {}", safe(detail, 300), b.words()),
                None => safe(detail, 300),
            },
        ),
    };
    format!("{}  {kind:<8} {words}", when(e.at))
}

/// The lines of a whole timeline, then what was skipped or not read (when anything was).
pub(crate) fn render(v: &LogView) -> Vec<String> {
    let mut out: Vec<String> = v.entries.iter().map(|e| line(e)).collect();
    if out.is_empty() {
        out.push(match v.since {
            Some(s) => format!("nothing since {}", when(Some(s))),
            None => "nothing recorded yet".into(),
        });
    }
    let s = v.skipped;
    if s.unreadable > 0 || s.huge > 0 {
        out.push(format!(
            "({} unreadable and {} oversized lines skipped)",
            s.unreadable, s.huge
        ));
    }
    if s.dropped > 0 {
        out.push(format!(
            "({} older entries not kept: use --since)",
            s.dropped
        ));
    }
    if v.truncated {
        out.push(format!(
            "(read the newest {} only: older entries were not read)",
            short_count(v.bytes_read)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_like_people_say_them() {
        assert_eq!(duration(12), "12ms");
        assert_eq!(duration(4_200), "4.2s");
        assert_eq!(duration(185_000), "3m05s");
        assert_eq!(duration(3_720_000), "1h02m");
        assert_eq!(duration(-5), "0ms");
    }

    #[test]
    fn transcript_text_cannot_reach_the_terminal_raw() {
        let e = LogEntry {
            seq: 0,
            at: Some(0),
            what: What::Question {
                text: "pick \u{1b}]0;title\u{7}one\nnow".into(),
            },
        };
        let l = line(&e);
        assert!(!l.contains('\u{1b}') && !l.contains('\n'), "{l:?}");
        assert!(l.starts_with("1970-01-01 00:00:00  question pick"), "{l}");
    }

    #[test]
    fn an_event_says_what_it_did_and_who_asked_on_one_safe_line() {
        let e = LogEntry {
            seq: 0,
            at: Some(0),
            what: What::Event {
                event: EventKind::Close,
                detail: "closed: job j; handoff \u{1b}[2Jsaved\n$(x)".into(),
                by: Some(Actor::Sidebar),
            },
        };
        let l = line(&e);
        assert!(!l.contains('\u{1b}') && !l.contains('\n'), "{l:?}");
        assert!(
            l.starts_with("1970-01-01 00:00:00  close    closed: job j; handoff"),
            "{l}"
        );
        assert!(l.ends_with("$(x) · from the sidebar"), "{l}");
        let json = serde_json::to_value(&e).unwrap();
        assert_eq!(json["kind"], "event");
        assert_eq!(json["event"], "close");
        assert_eq!(json["by"], "sidebar");
        // The roster's own records name nobody.
        let roster = LogEntry {
            what: What::Event {
                event: EventKind::Handoff,
                detail: "job j: done".into(),
                by: None,
            },
            ..e
        };
        assert!(serde_json::to_value(&roster).unwrap().get("by").is_none());
        assert!(line(&roster).ends_with("handoff  job j: done"));
    }
}
