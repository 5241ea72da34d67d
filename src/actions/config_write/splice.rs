//! Rebuild the edited entry of `config.json` in place: only members a change names are printed
//! anew (in the file's own layout, `style.rs`); every other byte of the file is kept.

use serde_json::Value;

use super::scan::{Doc, Obj, SpliceError};
use super::style::{breaks_line, line_indent, Layout};
use super::Change;

/// The object's text with `set` members replaced or appended and `removed` ones dropped; every
/// other byte of it as it was. New text follows the object's own layout (`style.rs`).
fn rebuild(
    text: &str,
    o: &Obj,
    set: &[(String, Value)],
    removed: &[&str],
) -> Result<String, SpliceError> {
    let inner_start = o.span.start + 1;
    let inner_end = o.span.end - 1;
    let layout = Layout::of(text, o);
    let Some(first) = o.members.first() else {
        // An empty object: compact members.
        let parts: Result<Vec<String>, SpliceError> = set
            .iter()
            .map(|(k, v)| {
                Ok(format!(
                    "{}: {}",
                    serde_json::to_string(k).map_err(SpliceError::Encode)?,
                    layout.render(v, "", false)?
                ))
            })
            .collect();
        return Ok(format!("{{{}}}", parts?.join(", ")));
    };
    let last = o.members.last().unwrap_or(first);
    let lead = &text[inner_start..first.key_span.start];
    let trail = &text[last.value.end..inner_end];
    let colon = &text[first.key_span.end..first.value.start];
    // The separator new members get: the one before the last member (comma-last or comma-first,
    // as the file has it), else a comma and the white space before the first member.
    let default_sep = if o.members.len() >= 2 {
        let prev = &o.members[o.members.len() - 2];
        text[prev.value.end..last.key_span.start].to_string()
    } else {
        format!(",{lead}")
    };
    // The indentation of the line `out` now ends in.
    let indent_now = |out: &str| -> String {
        if out.contains('\n') {
            line_indent(out).to_string()
        } else {
            line_indent(&text[..=o.span.start]).to_string()
        }
    };
    let mut out = String::from(lead);
    let mut first_out = true;
    for (i, m) in o.members.iter().enumerate() {
        if removed.contains(&m.key.as_str()) {
            continue;
        }
        // The separator before this member in the file (also when the one before it is dropped).
        let ws = match i.checked_sub(1) {
            Some(p) if !first_out => &text[o.members[p].value.end..m.key_span.start],
            _ => lead,
        };
        if !first_out {
            out.push_str(ws);
        }
        first_out = false;
        match set.iter().find(|(k, _)| *k == m.key) {
            Some((_, v)) => {
                out.push_str(&text[m.key_span.start..m.value.start]);
                let indent = indent_now(&out);
                out.push_str(&layout.render(v, &indent, breaks_line(ws))?);
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
            out.push_str(ws);
        }
        first_out = false;
        out.push_str(&serde_json::to_string(k).map_err(SpliceError::Encode)?);
        out.push_str(colon);
        let indent = indent_now(&out);
        out.push_str(&layout.render(v, &indent, breaks_line(ws))?);
    }
    out.push_str(trail);
    Ok(format!("{{{out}}}"))
}

/// The new file text: the target entry changed by `change`; nothing outside it is touched.
pub(super) fn apply(text: &str, doc: &Doc, change: &Change) -> Result<Vec<u8>, SpliceError> {
    let o = doc
        .agents
        .get(doc.target_index)
        .ok_or_else(|| SpliceError::Shape("agents".into()))?;
    if change.set.is_empty() && change.removed.is_empty() {
        return Ok(text.as_bytes().to_vec());
    }
    let removed: Vec<&str> = change.removed.iter().map(String::as_str).collect();
    let entry = rebuild(text, o, &change.set, &removed)?;
    let mut out = String::with_capacity(text.len() + entry.len());
    out.push_str(&text[..o.span.start]);
    out.push_str(&entry);
    out.push_str(&text[o.span.end..]);
    Ok(out.into_bytes())
}
