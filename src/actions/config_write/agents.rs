//! Whole entries of the `agents` array added or removed in place: every other byte of the file
//! stays, and a new entry is printed in the style of the entries already there (the space after
//! `{`, between members, around `:`, before `}`, and between entries, comma-first included;
//! nested values in the file's own layout, `style.rs`).

use serde_json::{Map, Value};

use super::scan::{self, Obj, SpliceError};
use super::style::{breaks_line, line_indent, Layout};

/// `entry` as an object printed like `like` (another entry of the same file).
fn styled(text: &str, like: &Obj, entry: &Map<String, Value>) -> Result<String, SpliceError> {
    let (Some(first), Some(last)) = (like.members.first(), like.members.last()) else {
        return compact(entry);
    };
    let lead = &text[like.span.start + 1..first.key_span.start];
    let colon = &text[first.key_span.end..first.value.start];
    let trail = &text[last.value.end..like.span.end - 1];
    let sep = match like.members.len() {
        n if n >= 2 => text[like.members[n - 2].value.end..last.key_span.start].to_string(),
        _ => format!(",{lead}"),
    };
    let layout = Layout::of(text, like);
    let mut out = String::from("{");
    for (i, (k, v)) in entry.iter().enumerate() {
        let ws = if i == 0 { lead } else { sep.as_str() };
        out.push_str(ws);
        out.push_str(&serde_json::to_string(k).map_err(SpliceError::Encode)?);
        out.push_str(colon);
        // A member on a line of its own is indented like that line; one on the brace's line,
        // like the line the entry it copies starts on.
        let indent = if breaks_line(ws) {
            line_indent(ws)
        } else {
            line_indent(&text[..like.span.start])
        };
        out.push_str(&layout.render(v, indent, breaks_line(ws))?);
    }
    out.push_str(trail);
    out.push('}');
    Ok(out)
}

fn compact(entry: &Map<String, Value>) -> Result<String, SpliceError> {
    serde_json::to_string(entry).map_err(SpliceError::Encode)
}

/// The text with `entry` added after the last agent.
pub(super) fn append(text: &str, entry: &Map<String, Value>) -> Result<String, SpliceError> {
    let (array, list) = scan::agents(text)?;
    let Some(last) = list.last() else {
        // `[]` (or only space inside): the entry alone, compact.
        let mut out = String::with_capacity(text.len() + 256);
        out.push_str(&text[..array.start + 1]);
        out.push_str(&compact(entry)?);
        out.push_str(&text[array.end - 1..]);
        return Ok(out);
    };
    let between = match list.len() {
        n if n >= 2 => text[list[n - 2].span.end..last.span.start].to_string(),
        _ => format!(",{}", &text[array.start + 1..last.span.start]),
    };
    let obj = styled(text, last, entry)?;
    let at = last.span.end;
    let mut out = String::with_capacity(text.len() + between.len() + obj.len());
    out.push_str(&text[..at]);
    out.push_str(&between);
    out.push_str(&obj);
    out.push_str(&text[at..]);
    Ok(out)
}

/// The text without the agent whose `sessionId` is `session_id`: its entry and the separator
/// before it (after it, for the first entry).
pub(super) fn remove(text: &str, session_id: &str) -> Result<String, SpliceError> {
    let doc = scan::document(text, session_id)?;
    let i = doc.target_index;
    let cut = match (i.checked_sub(1), doc.agents.get(i + 1)) {
        (Some(prev), _) => doc.agents[prev].span.end..doc.target.end,
        (None, Some(next)) => doc.target.start..next.span.start,
        (None, None) => doc.target.clone(),
    };
    let mut out = text.to_string();
    out.replace_range(cut, "");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry() -> Map<String, Value> {
        let v = json!({"sessionId": "n", "name": "New", "coordinator": false,
            "description": "Does it.", "port": 47003, "projectDirectory": "."});
        v.as_object().unwrap().clone()
    }

    /// Added and removed again in every layout a person or another tool may leave: the entry
    /// lands in the file's style, the removal gives back the original bytes.
    #[test]
    fn an_entry_is_added_in_the_files_style_and_removed_to_the_original() {
        let base = json!({"version": 1, "big": 1, "agents": [
            {"sessionId": "c", "name": "Coordinator", "coordinator": true, "description": "C.",
             "port": 1, "projectDirectory": "."},
            {"sessionId": "w", "name": "W", "coordinator": false, "description": "W.",
             "port": 2, "projectDirectory": "."}]});
        let pretty = serde_json::to_string_pretty(&base).unwrap();
        let comma_first = "{\"version\": 1\n, \"agents\":\n  [ {\"sessionId\": \"c\", \"name\": \"Coordinator\", \"coordinator\": true, \"description\": \"C.\", \"port\": 1, \"projectDirectory\": \".\"}\n  , {\"sessionId\": \"w\", \"name\": \"W\", \"coordinator\": false, \"description\": \"W.\", \"port\": 2, \"projectDirectory\": \".\"}\n  ]\n}\n".to_string();
        let layouts = [
            serde_json::to_string(&base).unwrap(),
            pretty.clone(),
            pretty.replace("  ", "\t"),
            pretty.replace('\n', "\r\n"),
            comma_first.clone(),
        ];
        for text in &layouts {
            let out = append(text, &entry()).unwrap();
            let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}\n{out}"));
            assert_eq!(v["agents"][2], Value::Object(entry()), "{out}");
            assert_eq!(v["agents"].as_array().unwrap().len(), 3);
            assert_eq!(remove(&out, "n").unwrap(), *text, "{out}");
        }
        // Pretty stays pretty: the new entry indented like the others.
        let out = append(&pretty, &entry()).unwrap();
        assert!(
            out.contains("    },\n    {\n      \"sessionId\": \"n\",\n      \"name\": \"New\","),
            "{out}"
        );
        let out = append(&comma_first, &entry()).unwrap();
        assert!(
            out.contains("}\n  , {\"sessionId\": \"n\", \"name\": \"New\""),
            "{out}"
        );
        // The first entry removed takes the separator after it.
        let out = remove(&pretty, "c").unwrap();
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["agents"].as_array().unwrap().len(), 1);
        assert!(
            out.contains("[\n    {\n      \"sessionId\": \"w\""),
            "{out}"
        );
        // An empty array takes the entry alone.
        let out = append("{\"version\":1,\"agents\":[ ]}", &entry()).unwrap();
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["agents"][0]["name"], "New");
        assert!(matches!(remove(&pretty, "x"), Err(SpliceError::NoAgent(_))));
    }
}
