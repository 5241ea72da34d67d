//! A worker's timeline as people and scripts read it (`log NAME`, `intercom_log`): one line per
//! entry, newest last, every transcript string sanitized for the terminal; or a JSON document.

use serde::Serialize;

use crate::clock::{format_iso, Ms};
use crate::evidence::sessions::timeline::{
    LogEntry, Skipped, ToolCall, ToolEnd, Turn, TurnEnd, What,
};
use crate::evidence::sessions::usage::short_count;
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
    if t.calls > 0 {
        let tokens_in = t
            .input
            .saturating_add(t.cache_read)
            .saturating_add(t.cache_write);
        parts.push(format!(
            "{} in · {} out · ${:.4}",
            short_count(tokens_in),
            short_count(t.output),
            t.cost
        ));
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
        What::Answer { text, sender } => (
            "answer",
            format!("{} · {}", safe(text, 160), sender.words()),
        ),
        What::Compaction {} => ("compact", "pi compacted the context".into()),
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
}
