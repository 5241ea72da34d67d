//! The file's own layout, for text a splice prints anew: whether a value goes on one line or
//! several, the line break (`\n` or `\r\n`), the indentation of a line and the indentation unit.
//! Everything is read from the bytes around the place being written, so any valid layout —
//! comma-last or comma-first, spaces or tabs, LF or CRLF, or a mix — gets text like its
//! neighbours. Whatever is read, only JSON white space (space, TAB, CR, LF) is ever produced
//! between tokens, so the result stays valid JSON.

use serde::Serialize;
use serde_json::Value;

use super::scan::{Obj, SpliceError};

/// How new lines of one object are laid out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Layout {
    /// `"\n"` or `"\r\n"`.
    pub(crate) newline: &'static str,
    /// One level of indentation: spaces or TABs, never empty.
    pub(crate) unit: String,
}

/// The indentation (leading spaces and TABs) of the line `text` ends in.
pub(crate) fn line_indent(text: &str) -> &str {
    let line = text.rfind('\n').map_or(text, |i| &text[i + 1..]);
    let end = line.find(|c| c != ' ' && c != '\t').unwrap_or(line.len());
    &line[..end]
}

/// Does the white space `ws` (between two tokens) break the line?
pub(crate) fn breaks_line(ws: &str) -> bool {
    ws.contains('\n')
}

/// The line break `ws` uses (it breaks the line).
fn newline_of(ws: &str) -> &'static str {
    if ws.contains("\r\n") {
        "\r\n"
    } else {
        "\n"
    }
}

impl Layout {
    /// The layout of object `o` in `text`: the unit is what its members' lines are indented
    /// beyond the line its `{` is on; the line break is the one before its members. Without a
    /// member on a line of its own: a TAB if the file indents with TABs, else two spaces.
    pub(crate) fn of(text: &str, o: &Obj) -> Layout {
        let brace = line_indent(&text[..o.span.start]);
        let mut prev_end = o.span.start + 1;
        let mut newline = None;
        let mut unit = None;
        for m in &o.members {
            let ws = &text[prev_end..m.key_span.start];
            prev_end = m.value.end;
            if !breaks_line(ws) {
                continue;
            }
            newline.get_or_insert(newline_of(ws));
            let own = line_indent(&text[..m.key_span.start]);
            if let Some(extra) = own.strip_prefix(brace).filter(|e| !e.is_empty()) {
                unit = Some(extra.to_string());
                break;
            }
        }
        let newline = newline.unwrap_or_else(|| newline_of(&text[..o.span.start]));
        let unit = unit.unwrap_or_else(|| {
            if text.contains("\n\t") {
                "\t".to_string()
            } else {
                "  ".to_string()
            }
        });
        Layout { newline, unit }
    }

    /// `value` as it goes after a key on a line indented by `indent`: on several lines (nested
    /// parts one unit deeper, the closing bracket at `indent`) when `multiline`, else compact.
    pub(crate) fn render(
        &self,
        value: &Value,
        indent: &str,
        multiline: bool,
    ) -> Result<String, SpliceError> {
        if !multiline {
            return serde_json::to_string(value).map_err(SpliceError::Encode);
        }
        let mut buf = Vec::new();
        let fmt = serde_json::ser::PrettyFormatter::with_indent(self.unit.as_bytes());
        let mut ser = serde_json::Serializer::with_formatter(&mut buf, fmt);
        value.serialize(&mut ser).map_err(SpliceError::Encode)?;
        let pretty = String::from_utf8(buf).map_err(|_| SpliceError::NotUtf8)?;
        // serde_json escapes line breaks inside strings: every '\n' here is between tokens.
        Ok(pretty.replace('\n', &format!("{}{indent}", self.newline)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indent_is_leading_spaces_and_tabs_of_the_last_line() {
        assert_eq!(line_indent("{\n    , \"a\""), "    ");
        assert_eq!(line_indent("x\r\n\t\t\"k\": "), "\t\t");
        assert_eq!(line_indent("  { \"a\": "), "  ");
        assert_eq!(line_indent(""), "");
    }

    #[test]
    fn renders_in_the_files_unit_and_line_break() {
        let l = Layout {
            newline: "\r\n",
            unit: "\t".into(),
        };
        let v = serde_json::json!({"a": [1, "x\ny"]});
        assert_eq!(
            l.render(&v, "\t", true).unwrap(),
            "{\r\n\t\t\"a\": [\r\n\t\t\t1,\r\n\t\t\t\"x\\ny\"\r\n\t\t]\r\n\t}"
        );
        assert_eq!(l.render(&v, "\t", false).unwrap(), "{\"a\":[1,\"x\\ny\"]}");
    }
}
