//! `status` without `--json`: the same page as the JSON, as a list a person reads. One line per
//! worker (name, board state, observed activity, connection), then what it asks, its report,
//! handoff and close job on indented lines; a last line says which page this is and how to get
//! the next. Built from the JSON page itself, so the two never say different things.

use serde_json::Value;

use crate::board::reason::connection_words;
use crate::clock::short_age;
use crate::text::{clip, sanitize, width};

/// Longest name column.
const NAME_W: usize = 24;

/// The page as text lines.
pub(crate) fn status_text(page: &Value) -> String {
    let mut out = String::new();
    if page["roster"]["available"] == false {
        out.push_str(&format!(
            "no Intercom roster: {}\n",
            sanitize(
                page["roster"]["reason"]
                    .as_str()
                    .unwrap_or("unknown reason")
            )
        ));
        return out;
    }
    let workers = page["workers"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    let name_w = workers
        .iter()
        .map(|w| width(&clip(&s(&w["name"]), NAME_W)))
        .max()
        .unwrap_or(0);
    for w in workers {
        out.push_str(&worker_lines(w, name_w));
    }
    out.push_str(&footer(page, workers.len()));
    out
}

/// A JSON string field, sanitized (empty when absent).
fn s(v: &Value) -> String {
    sanitize(v.as_str().unwrap_or(""))
}

/// `3s ago` from an `…AgeSeconds` field, or nothing.
fn ago(v: &Value) -> Option<String> {
    v.as_i64().map(|a| format!("{} ago", short_age(a.max(0))))
}

fn worker_lines(w: &Value, name_w: usize) -> String {
    let name = clip(&s(&w["name"]), NAME_W);
    let pad = " ".repeat(name_w.saturating_sub(width(&name)));
    let state = w["boardState"].as_str().unwrap_or("unknown");
    let why = match w["boardStateReason"].as_str() {
        Some(r) => format!(" ({})", sanitize(r).replace('_', " ")),
        None => String::new(),
    };
    // Only what was observed: no Intercom log says nothing about activity, and a connection
    // nobody checked is said once, in the footer.
    let activity = match (
        w["observedStatus"].as_str(),
        ago(&w["observationAgeSeconds"]),
    ) {
        (Some(a), Some(age)) => Some(format!("activity {a} {age}")),
        (Some("unknown"), None) | (None, _) => None,
        (Some(a), None) => Some(format!("activity {a}")),
    };
    let conn = &w["connection"];
    let connection = (!conn["checkedAt"].is_null()).then(|| {
        format!(
            "connection {} ({})",
            s(&conn["state"]),
            connection_words(conn["reason"].as_str().unwrap_or(""))
        )
    });
    let mut out = format!("{name}{pad}  {state}{why}");
    for part in [activity, connection].into_iter().flatten() {
        out.push_str(&format!(" · {part}"));
    }
    out.push('\n');
    let indent = " ".repeat(name_w + 2);
    let mut more = |label: &str, text: String| {
        out.push_str(&format!("{indent}{label}: {}\n", clip(&text, 160)));
    };
    if let Some(q) = w["question"].as_str() {
        more("asks", sanitize(q));
    }
    // What is current for a working or idle seat (a waiting one's is its question above).
    let h = &w["headline"];
    let label = match h["source"].as_str() {
        Some("running-tool") => Some("running"),
        Some("last-result") => Some("result"),
        Some("latest-request") => Some("asked"),
        _ => None,
    };
    if let Some(label) = label {
        let mut line = s(&h["text"]);
        if let Some(secs) = h["stepSeconds"].as_i64() {
            line.push_str(&format!(" for {}", short_age(secs.max(0))));
        }
        // `quiet` is the headline's own rule (no new event for 5 minutes).
        if h["quiet"] == true {
            line.push_str(" · quiet (no new event for 5m)");
        }
        more(label, line);
    }
    if let Some(line) = w["budget"]["line"].as_str().filter(|l| !l.is_empty()) {
        more("budget", sanitize(line));
    }
    if let Some(r) = w["report"].as_object() {
        let age = ago(&r["ageSeconds"]).unwrap_or_default();
        let status = s(&r["status"]).replace('_', " ");
        more("report", format!("{status} {age} — {}", s(&r["summary"])));
    }
    if let Some(h) = w["handoff"].as_object() {
        let age = ago(&h["ageSeconds"]).unwrap_or_default();
        more("handoff", format!("saved {age} — {}", s(&h["summary"])));
    }
    if let Some(j) = w["closeJob"].as_object() {
        let age = ago(&j["ageSeconds"]).unwrap_or_default();
        let reason = j["reason"]
            .as_str()
            .map(|r| format!(" ({})", sanitize(r).replace('_', " ")))
            .unwrap_or_default();
        more(
            "close",
            format!("{}{reason}, {age}", s(&j["state"]).replace('_', " ")),
        );
    }
    out
}

/// `2 of 5 configured workers (1–2), scanned …; next page: --offset 2`, and the pass's warnings.
fn footer(page: &Value, shown: usize) -> String {
    let total = page["totalInSnapshot"].as_u64().unwrap_or(0);
    let offset = page["offset"].as_u64().unwrap_or(0);
    let mut line = if shown == 0 {
        format!("no configured worker to show ({total} in all)")
    } else {
        format!(
            "{shown} of {total} configured workers ({}–{}), scanned {}",
            offset + 1,
            offset + shown as u64,
            s(&page["generatedAt"])
        )
    };
    if let Some(next) = page["nextOffset"].as_u64() {
        line.push_str(&format!("; next page: --offset {next}"));
    }
    let unchecked = page["workers"]
        .as_array()
        .is_some_and(|ws| ws.iter().any(|w| w["connection"]["checkedAt"].is_null()));
    if unchecked {
        line.push_str("; connections not checked (--probe checks them)");
    }
    let mut out = line + "\n";
    if let Some(errors) = page["errors"].as_array().filter(|e| !e.is_empty()) {
        let list: Vec<String> = errors
            .iter()
            .take(5)
            .map(|e| sanitize(&e.to_string()))
            .collect();
        out.push_str(&format!("warnings: {}\n", list.join("; ")));
    }
    if page["truncated"] == true {
        out.push_str("warnings: the pass was cut short (more than it reads at once)\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_page_reads_as_a_list_with_the_same_facts() {
        let page = json!({
            "version": 1, "generatedAt": "2026-11-29T10:00:00.000Z", "truncated": false,
            "errors": [], "roster": {"available": true, "root": "/r"},
            "totalInSnapshot": 3, "offset": 0, "nextOffset": 2,
            "workers": [
                {"name": "Builder", "boardState": "waiting", "observedStatus": "idle",
                 "boardStateReason": "input_needed",
                 "observationAgeSeconds": 3, "question": "Choose staging or production?",
                 "connection": {"state": "unknown", "reason": "not_checked", "checkedAt": null},
                 "report": {"status": "needs_decision", "summary": "two designs", "ageSeconds": 70},
                 "handoff": null, "closeJob": null},
                {"name": "Docs\u{1b}[2J", "boardState": "working", "observedStatus": null,
                 "connection": {"state": "connected", "reason": "verified",
                    "checkedAt": "2026-11-29T09:59:59.000Z"},
                 "report": null, "handoff": null,
                 "closeJob": {"state": "timed_out", "reason": "timeout", "ageSeconds": 5}},
            ]
        });
        let text = status_text(&page);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "Builder  waiting (input needed) · activity idle 3s ago"
        );
        assert_eq!(lines[1], "         asks: Choose staging or production?");
        assert_eq!(
            lines[2],
            "         report: needs decision 1m ago — two designs"
        );
        assert!(lines[3].starts_with("Docs     working · "), "{text}");
        // Nothing observed is left out; a checked connection is said.
        assert!(
            !lines[3].contains("activity")
                && lines[3].contains(" · connection connected (its port answered"),
            "{text}"
        );
        assert_eq!(lines[4], "         close: timed out (timeout), 5s ago");
        assert_eq!(
            lines[5],
            "2 of 3 configured workers (1–2), scanned 2026-11-29T10:00:00.000Z; next page: \
             --offset 2; connections not checked (--probe checks them)"
        );
        assert!(!text.contains('\u{1b}'));
    }

    #[test]
    fn no_roster_says_why() {
        let page = json!({"roster": {"available": false, "reason": "no .pi-intercom/config.json"},
            "workers": []});
        assert_eq!(
            status_text(&page),
            "no Intercom roster: no .pi-intercom/config.json\n"
        );
    }
}
