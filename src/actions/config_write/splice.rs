//! Rebuild the edited parts of `config.json` in place: only members a change names are printed
//! anew; every other member keeps its bytes.

use serde_json::Value;

use super::scan::{Doc, Obj, SpliceError};
use super::Change;

/// `value` printed for a member indented by `indent` (pretty when the file is, else compact).
pub(super) fn render(value: &Value, indent: Option<&str>) -> Result<String, SpliceError> {
    match indent {
        Some(ind) => Ok(serde_json::to_string_pretty(value)
            .map_err(SpliceError::Encode)?
            .replace('\n', &format!("\n{ind}"))),
        None => serde_json::to_string(value).map_err(SpliceError::Encode),
    }
}

/// The indentation after the last newline of `ws`, or `None` when `ws` has no newline.
pub(super) fn indent_of(ws: &str) -> Option<&str> {
    ws.rfind('\n').map(|i| &ws[i + 1..])
}

/// The object's text with `set` members replaced or appended and `removed` ones dropped.
fn rebuild(
    text: &str,
    o: &Obj,
    set: &[(String, Value)],
    removed: &[&str],
) -> Result<String, SpliceError> {
    let inner_start = o.span.start + 1;
    let inner_end = o.span.end - 1;
    let Some(first) = o.members.first() else {
        // An empty object: compact members.
        let parts: Result<Vec<String>, SpliceError> = set
            .iter()
            .map(|(k, v)| {
                Ok(format!(
                    "{}: {}",
                    serde_json::to_string(k).map_err(SpliceError::Encode)?,
                    render(v, None)?
                ))
            })
            .collect();
        return Ok(format!("{{{}}}", parts?.join(", ")));
    };
    let last = o.members.last().unwrap_or(first);
    let lead = &text[inner_start..first.key_span.start];
    let trail = &text[last.value.end..inner_end];
    let colon = &text[first.key_span.end..first.value.start];
    // The separator new members get: the one before the last member, else one made from `lead`.
    let default_sep = if o.members.len() >= 2 {
        let prev = &o.members[o.members.len() - 2];
        text[prev.value.end..last.key_span.start].to_string()
    } else {
        format!(",{lead}")
    };
    let mut out = String::from(lead);
    let mut first_out = true;
    for (i, m) in o.members.iter().enumerate() {
        if removed.contains(&m.key.as_str()) {
            continue;
        }
        let sep = if i == 0 {
            default_sep.as_str()
        } else {
            &text[o.members[i - 1].value.end..m.key_span.start]
        };
        if !first_out {
            out.push_str(sep);
        }
        let ws = if first_out { lead } else { sep };
        first_out = false;
        match set.iter().find(|(k, _)| *k == m.key) {
            Some((_, v)) => {
                out.push_str(&text[m.key_span.start..m.value.start]);
                out.push_str(&render(v, indent_of(ws))?);
            }
            None => out.push_str(&text[m.key_span.start..m.value.end]),
        }
    }
    for (k, v) in set {
        if o.members.iter().any(|m| &m.key == k) {
            continue;
        }
        let ws = if first_out {
            lead
        } else {
            default_sep.as_str()
        };
        if !first_out {
            out.push_str(&default_sep);
        }
        first_out = false;
        out.push_str(&serde_json::to_string(k).map_err(SpliceError::Encode)?);
        out.push_str(colon);
        out.push_str(&render(v, indent_of(ws))?);
    }
    out.push_str(trail);
    Ok(format!("{{{out}}}"))
}

/// The new file text: the target entry changed by `change`, `dashboardPort` dropped everywhere.
pub(super) fn apply(text: &str, doc: &Doc, change: &Change) -> Result<Vec<u8>, SpliceError> {
    let mut edits: Vec<(std::ops::Range<usize>, String)> = Vec::new();
    for (i, o) in doc.agents.iter().enumerate() {
        let (set, mut removed): (&[(String, Value)], Vec<&str>) = if i == doc.target_index {
            (
                &change.set,
                change.removed.iter().map(String::as_str).collect(),
            )
        } else {
            (&[], Vec::new())
        };
        if o.members.iter().any(|m| m.key == "dashboardPort") && !removed.contains(&"dashboardPort")
        {
            removed.push("dashboardPort");
        }
        if set.is_empty() && removed.is_empty() {
            continue;
        }
        edits.push((o.span.clone(), rebuild(text, o, set, &removed)?));
    }
    let mut out = text.to_string();
    edits.sort_by_key(|(r, _)| std::cmp::Reverse(r.start));
    for (r, s) in edits {
        out.replace_range(r, &s);
    }
    Ok(out.into_bytes())
}
