//! One line of a pi session file reduced to what a timeline shows (docs/interop.md §6): who
//! spoke, when, the tool calls and results with their ids, the usage, how a reply stopped.
//!
//! Unlike the board's reader (`parse.rs`, which must keep what precedes a cut), a timeline line is
//! always whole (`backward.rs` hands over complete lines only, up to a cap), so derived serde
//! types do: anything not of pi's shape fails the line, and the caller counts it.

use serde::de::IgnoredAny;
use serde::Deserialize;

use super::parse::{cap_str, first_non_blank_line};
use super::usage::Usage;
use crate::clock::{parse_iso, Ms};

/// Longest text kept from a message (the first line is what is shown).
const TEXT_KEEP: usize = 4096;
/// Longest one-line summary of a tool call's arguments, in characters.
pub(crate) const ARGS_CHARS: usize = 160;
/// Most tool calls kept from one assistant message.
const CALLS_KEPT: usize = 64;
/// Largest token count and cost believed for one call (as `usage.rs`).
const MAX_CALL_TOKENS: f64 = (1u64 << 40) as f64;
const MAX_CALL_COST: f64 = 1e6;

/// A tool call of an assistant message.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CallFact {
    pub id: Option<String>,
    pub name: String,
    pub args: String,
}

/// An assistant message: how it stopped, its usage, its tool calls and text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AssistantFact {
    /// The entry's id (a `context_edit` aims at it when pi retries).
    pub id: Option<String>,
    pub stop: Option<String>,
    pub error: Option<String>,
    pub model: Option<String>,
    pub usage: Usage,
    pub calls: Vec<CallFact>,
    pub text: String,
}

/// What one line says.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Fact {
    User {
        text: String,
        /// SHA-256 of the whole text (what the reply path's records hold).
        sha256: String,
    },
    Assistant(AssistantFact),
    ToolResult {
        call_id: Option<String>,
        name: Option<String>,
        is_error: bool,
        duration_ms: Option<i64>,
    },
    /// pi scheduled a retry of the entry `target`.
    ContextEdit {
        target: Option<String>,
    },
    Compaction,
    /// The header, a model or thinking change, a label...: nothing to show.
    Other,
}

/// A line: when, and what.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LineFact {
    pub at: Option<Ms>,
    pub fact: Fact,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawLine {
    #[serde(rename = "type")]
    typ: String,
    #[serde(default)]
    timestamp: Option<String>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    target_id: Option<String>,
    #[serde(default)]
    message: Option<RawMsg>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawMsg {
    #[serde(default)]
    role: Option<String>,
    #[serde(default)]
    content: Option<RawContent>,
    #[serde(default)]
    stop_reason: Option<String>,
    #[serde(default)]
    error_message: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    usage: Option<RawUsage>,
    #[serde(default)]
    tool_call_id: Option<String>,
    #[serde(default)]
    tool_name: Option<String>,
    #[serde(default)]
    is_error: Option<bool>,
    #[serde(default)]
    duration_ms: Option<f64>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawContent {
    Text(String),
    Blocks(Vec<BlockOr>),
    Other(IgnoredAny),
}

#[derive(Deserialize)]
#[serde(untagged)]
enum BlockOr {
    Block(RawBlock),
    Other(IgnoredAny),
}

#[derive(Deserialize)]
struct RawBlock {
    #[serde(rename = "type", default)]
    typ: Option<String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawUsage {
    #[serde(default)]
    input: Option<f64>,
    #[serde(default)]
    output: Option<f64>,
    #[serde(default)]
    cache_read: Option<f64>,
    #[serde(default)]
    cache_write: Option<f64>,
    #[serde(default)]
    cost: Option<RawCost>,
}

#[derive(Deserialize)]
struct RawCost {
    #[serde(default)]
    total: Option<f64>,
}

/// The line's facts; `None` when it is not a JSON object of pi's shape.
pub(crate) fn line_fact(line: &[u8]) -> Option<LineFact> {
    let raw: RawLine = serde_json::from_slice(line).ok()?;
    let at = raw.timestamp.as_deref().and_then(parse_iso);
    let fact = match raw.typ.as_str() {
        "message" => raw.message.map_or(Fact::Other, |m| message(m, raw.id)),
        "context_edit" => Fact::ContextEdit {
            target: raw.target_id,
        },
        "compaction" => Fact::Compaction,
        _ => Fact::Other,
    };
    Some(LineFact { at, fact })
}

fn message(m: RawMsg, id: Option<String>) -> Fact {
    match m.role.as_deref() {
        Some("user") => {
            let full = full_text(m.content.as_ref());
            Fact::User {
                text: cap_str(&full, TEXT_KEEP),
                sha256: crate::actions::reply::sent::digest(&full),
            }
        }
        Some("assistant") => {
            let mut calls = Vec::new();
            if let Some(RawContent::Blocks(bs)) = &m.content {
                for b in bs {
                    let BlockOr::Block(b) = b else { continue };
                    if b.typ.as_deref() == Some("toolCall") && calls.len() < CALLS_KEPT {
                        let name = b.name.clone().unwrap_or_default();
                        calls.push(CallFact {
                            id: b.id.clone(),
                            args: b
                                .arguments
                                .as_ref()
                                .map(|a| summarize(&name, a))
                                .unwrap_or_default(),
                            name,
                        });
                    }
                }
            }
            Fact::Assistant(AssistantFact {
                id,
                stop: m.stop_reason,
                error: m.error_message.map(|e| cap_str(&e, TEXT_KEEP)),
                model: m.model,
                usage: m.usage.and_then(usage_of).unwrap_or_default(),
                calls,
                text: text_of(m.content),
            })
        }
        Some("toolResult") => Fact::ToolResult {
            call_id: m.tool_call_id,
            name: m.tool_name,
            is_error: m.is_error.unwrap_or(false),
            duration_ms: m
                .duration_ms
                .filter(|d| d.is_finite() && (0.0..1e12).contains(d))
                .map(|d| d as i64),
        },
        _ => Fact::Other,
    }
}

/// A user message's whole text (its blocks joined by newlines): at most a line's length, since
/// lines are capped before they are parsed.
fn full_text(c: Option<&RawContent>) -> String {
    match c {
        Some(RawContent::Text(t)) => t.clone(),
        Some(RawContent::Blocks(bs)) => bs
            .iter()
            .filter_map(|b| match b {
                BlockOr::Block(b) if b.typ.as_deref() == Some("text") => b.text.as_deref(),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The text blocks of a message, joined by newlines, capped.
fn text_of(c: Option<RawContent>) -> String {
    let mut out = String::new();
    match c {
        Some(RawContent::Text(t)) => out = cap_str(&t, TEXT_KEEP),
        Some(RawContent::Blocks(bs)) => {
            for b in bs {
                let BlockOr::Block(b) = b else { continue };
                if b.typ.as_deref() != Some("text") {
                    continue;
                }
                let Some(t) = b.text else { continue };
                if out.len() >= TEXT_KEEP {
                    break;
                }
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(&cap_str(&t, TEXT_KEEP - out.len()));
            }
        }
        _ => {}
    }
    out
}

fn usage_of(u: RawUsage) -> Option<Usage> {
    let tok = |v: Option<f64>| -> Option<u64> {
        let v = v.unwrap_or(0.0);
        (v.is_finite() && (0.0..=MAX_CALL_TOKENS).contains(&v)).then_some(v as u64)
    };
    let cost = u.cost.and_then(|c| c.total).unwrap_or(0.0);
    if !cost.is_finite() || !(0.0..=MAX_CALL_COST).contains(&cost) {
        return None;
    }
    Some(Usage {
        calls: 1,
        input: tok(u.input)?,
        output: tok(u.output)?,
        cache_read: tok(u.cache_read)?,
        cache_write: tok(u.cache_write)?,
        cost_nanos: (cost * 1e9).round() as u64,
    })
}

/// A tool call's arguments on one line: the argument people recognise it by (a command, a
/// path, a pattern), else the arguments as compact JSON. Raw text: views sanitize it.
pub(crate) fn summarize(name: &str, args: &serde_json::Value) -> String {
    const KEYS: [&str; 7] = [
        "command",
        "path",
        "file_path",
        "pattern",
        "url",
        "query",
        "name",
    ];
    let _ = name;
    let picked = args.as_object().and_then(|o| {
        KEYS.iter()
            .find_map(|k| o.get(*k).and_then(|v| v.as_str()).map(str::to_string))
    });
    let text = picked.unwrap_or_else(|| serde_json::to_string(args).unwrap_or_default());
    let one = first_non_blank_line(&text).unwrap_or_default();
    let more = one.len() < text.trim().len();
    let mut out: String = one.chars().take(ARGS_CHARS).collect();
    if more || one.chars().count() > ARGS_CHARS {
        out.push('…');
    }
    out
}

/// The first non-blank line of a text, at most `chars` characters.
pub(crate) fn first_line(t: &str, chars: usize) -> String {
    first_non_blank_line(t)
        .unwrap_or_default()
        .chars()
        .take(chars)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pi_lines_become_facts() {
        let a = br#"{"type":"message","id":"a1","timestamp":"2026-11-29T23:14:04.490Z","message":{"role":"assistant","content":[{"type":"text","text":"Running."},{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"sleep 1\nls"}}],"model":"m","usage":{"input":100,"output":5,"cacheRead":2,"cacheWrite":0,"cost":{"total":0.5}},"stopReason":"toolUse"}}"#;
        let f = line_fact(a).unwrap();
        assert!(f.at.is_some());
        let Fact::Assistant(AssistantFact {
            calls, usage, stop, ..
        }) = f.fact
        else {
            panic!("{f:?}")
        };
        assert_eq!(calls[0].name, "bash");
        assert_eq!(calls[0].args, "sleep 1…");
        assert_eq!((usage.input, usage.cache_read), (100, 2));
        assert_eq!(usage.cost_nanos, 500_000_000);
        assert_eq!(stop.as_deref(), Some("toolUse"));
        let r = br#"{"type":"message","timestamp":"2026-11-29T23:14:05Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"x"}],"isError":true,"durationMs":1200}}"#;
        assert_eq!(
            line_fact(r).unwrap().fact,
            Fact::ToolResult {
                call_id: Some("c1".into()),
                name: Some("bash".into()),
                is_error: true,
                duration_ms: Some(1200)
            }
        );
        // Odd shapes: blocks that are not objects, a string content, a header.
        let u = br#"{"type":"message","message":{"role":"user","content":[1,"x",{"type":"text","text":"hi"}]}}"#;
        assert_eq!(
            line_fact(u).unwrap().fact,
            Fact::User {
                text: "hi".into(),
                sha256: crate::actions::reply::sent::digest("hi")
            }
        );
        assert_eq!(
            line_fact(br#"{"type":"session","id":"x"}"#).unwrap().fact,
            Fact::Other
        );
        assert!(line_fact(b"{\"type\":\"message\"").is_none());
        assert!(line_fact(b"[1,2]").is_none());
        assert!(line_fact(br#"{"type":"message","message":7}"#).is_none());
    }

    #[test]
    fn arguments_fit_one_line() {
        let v: serde_json::Value =
            serde_json::from_str(r#"{"path":"src/a.rs","oldText":"x"}"#).unwrap();
        assert_eq!(summarize("edit", &v), "src/a.rs");
        let v: serde_json::Value = serde_json::from_str(r#"{"n":1}"#).unwrap();
        assert_eq!(summarize("x", &v), r#"{"n":1}"#);
        let v = serde_json::Value::String("é".repeat(500));
        assert_eq!(summarize("x", &v).chars().count(), ARGS_CHARS + 1);
    }
}
