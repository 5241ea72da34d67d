//! The one JSON writer of every view (`scan --json`, board files, `status --json`).
//!
//! Why: serde_json leaves C1 controls (U+0080–U+009F) and bidirectional controls raw, and a
//! terminal or editor showing the JSON acts on them (U+009B is a CSI; U+202E reverses the text
//! that follows). Every such character is written as `\uXXXX` instead. They can only occur
//! inside JSON strings (the structure is ASCII), so escaping the serialized text is exact.

use serde::Serialize;

/// Characters escaped on top of what serde_json escapes.
fn needs_escape(c: char) -> bool {
    matches!(c,
        '\u{80}'..='\u{9f}'
        | '\u{200e}' | '\u{200f}'
        | '\u{202a}'..='\u{202e}'
        | '\u{2066}'..='\u{2069}'
        | '\u{061c}')
}

fn escape(text: String) -> String {
    if !text.chars().any(needs_escape) {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if needs_escape(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// Pretty JSON text, escaped.
pub(crate) fn to_string_pretty<T: Serialize + ?Sized>(v: &T) -> Result<String, serde_json::Error> {
    serde_json::to_string_pretty(v).map(escape)
}

/// Compact JSON text, escaped.
pub(crate) fn to_string<T: Serialize + ?Sized>(v: &T) -> Result<String, serde_json::Error> {
    serde_json::to_string(v).map(escape)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c1_and_bidi_controls_are_escaped_and_the_text_round_trips() {
        let raw = "a\u{9b}2J\u{85}b\u{202e}evil\u{2066}x\u{2069}\u{200e}\u{200f}\u{61c}é\u{a0}";
        let v = serde_json::json!({ "name": raw, raw: [raw] });
        for text in [to_string(&v).unwrap(), to_string_pretty(&v).unwrap()] {
            assert!(!text.chars().any(needs_escape), "{text}");
            assert!(
                text.contains("\\u009b") && text.contains("\\u202e"),
                "{text}"
            );
            assert!(text.contains('é') && text.contains('\u{a0}'), "others stay");
            let back: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(back, v);
        }
    }
}
