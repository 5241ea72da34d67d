//! The reply editor's data: the box (bound to one seat by its row id, with the name and target it
//! showed when it opened), the draft with its cursor, how a paste is taken in, and how a draft is
//! laid out on screen lines. Pure: no drawing, no sending.

use crate::text::{sanitize, width};

/// Longest reply accepted by the editor: the reply path's own limit, defined once with the text
/// rules (docs/behaviour.md §6).
pub(crate) use crate::reply_text::MAX_REPLY_CHARS;

/// A reply being typed (cursor counted in chars). May hold line breaks (`\n`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Draft {
    pub text: String,
    pub cursor: usize,
}

/// An open reply box. It stays on the seat it was opened for (by row id, the session id when
/// known) whatever the list does meanwhile; it never follows the selection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplyBox {
    /// `Row::id` of the seat.
    pub row_id: String,
    /// The seat's name as shown when the box opened (sanitized).
    pub name: String,
    /// The reply target the box showed when it opened (raw); a send goes there or nowhere.
    pub target: String,
    /// Why the last Enter sent nothing, until the next key.
    pub note: Option<String>,
}

impl Draft {
    fn len(&self) -> usize {
        self.text.chars().count()
    }

    /// Insert `s` at the cursor if the draft stays within the cap; `false` (nothing changed)
    /// otherwise.
    pub fn insert(&mut self, s: &str) -> bool {
        if self.len() + s.chars().count() > MAX_REPLY_CHARS {
            return false;
        }
        let at = byte_at(&self.text, self.cursor);
        self.text.insert_str(at, s);
        self.cursor += s.chars().count();
        true
    }

    pub fn left(&mut self) {
        self.cursor = self.cursor.saturating_sub(1);
    }

    pub fn right(&mut self) {
        self.cursor = (self.cursor + 1).min(self.len());
    }

    /// Start of the cursor's line.
    pub fn home(&mut self) {
        self.cursor = self.line_start(self.cursor);
    }

    /// End of the cursor's line.
    pub fn end(&mut self) {
        self.cursor = self.line_end(self.cursor);
    }

    /// Same column on the previous line (clamped to its length); stays put on the first line.
    pub fn up(&mut self) {
        let start = self.line_start(self.cursor);
        if start == 0 {
            return;
        }
        let col = self.cursor - start;
        let prev_start = self.line_start(start - 1);
        self.cursor = (prev_start + col).min(start - 1);
    }

    /// Same column on the next line (clamped to its length); stays put on the last line.
    pub fn down(&mut self) {
        let end = self.line_end(self.cursor);
        if end >= self.len() {
            return;
        }
        let col = self.cursor - self.line_start(self.cursor);
        let next_start = end + 1;
        self.cursor = (next_start + col).min(self.line_end(next_start));
    }

    pub fn delete_back(&mut self) {
        if self.cursor > 0 {
            let at = byte_at(&self.text, self.cursor - 1);
            self.text.remove(at);
            self.cursor -= 1;
        }
    }

    pub fn delete_forward(&mut self) {
        if self.cursor < self.len() {
            let at = byte_at(&self.text, self.cursor);
            self.text.remove(at);
        }
    }

    fn line_start(&self, ci: usize) -> usize {
        let before: Vec<char> = self.text.chars().take(ci).collect();
        before
            .iter()
            .rposition(|&c| c == '\n')
            .map(|i| i + 1)
            .unwrap_or(0)
    }

    fn line_end(&self, ci: usize) -> usize {
        ci + self
            .text
            .chars()
            .skip(ci)
            .take_while(|&c| c != '\n')
            .count()
    }
}

/// A pasted text as it goes into a draft: line endings become `\n` (terminals paste CR), and
/// nothing else is changed. A paste holding a character a reply may not carry (another control
/// character, ESC, DEL, a bidi control) is refused whole, never silently altered.
pub(crate) fn paste_text(raw: &str) -> Result<String, PasteRefused> {
    let text = raw.replace("\r\n", "\n").replace('\r', "\n");
    let bad = text
        .chars()
        .find(|&c| (c.is_control() && c != '\n' && c != '\t') || is_bidi_control(c));
    match bad {
        Some(c) => Err(PasteRefused(c)),
        None => Ok(text),
    }
}

/// A paste refused whole for the character it holds (named by its code point, never printed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PasteRefused(pub char);

impl std::fmt::Display for PasteRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "paste not inserted: it holds {} (U+{:04X}), which a reply may not carry",
            if self.0 == '\u{1b}' {
                "an escape character"
            } else {
                "a control character"
            },
            self.0 as u32
        )
    }
}

impl std::error::Error for PasteRefused {}

fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{061c}')
}

/// A draft laid out on lines `width` columns wide: line breaks start a new line, long lines wrap
/// by character. Returns the screen lines and the cursor's (line, column); a cursor right after a
/// full line sits at the start of the next, so there is always a cell for it.
pub(crate) fn layout(d: &Draft, width_cols: usize) -> (Vec<String>, (usize, usize)) {
    let w = width_cols.max(1);
    let mut lines = vec![String::new()];
    let mut col = 0usize;
    let mut cursor = (0usize, 0usize);
    let mut placed = false;
    for (i, c) in d.text.chars().enumerate() {
        if i == d.cursor {
            cursor = place(&mut lines, &mut col, w);
            placed = true;
        }
        if c == '\n' {
            lines.push(String::new());
            col = 0;
            continue;
        }
        // Shown as the sidebar shows all text (a tab reads as one space).
        let shown = sanitize(c.encode_utf8(&mut [0u8; 4]));
        let cw = width(&shown);
        if col + cw > w && col > 0 {
            lines.push(String::new());
            col = 0;
        }
        if let Some(last) = lines.last_mut() {
            last.push_str(&shown);
        }
        col += cw;
    }
    if !placed {
        cursor = place(&mut lines, &mut col, w);
    }
    (lines, cursor)
}

/// The cursor at column `col` of the last line; at the edge it moves to a new line.
fn place(lines: &mut Vec<String>, col: &mut usize, w: usize) -> (usize, usize) {
    if *col >= w {
        lines.push(String::new());
        *col = 0;
    }
    (lines.len() - 1, *col)
}

/// Byte offset of char index `ci` (end of string when past it): never splits a UTF-8 char.
fn byte_at(s: &str, ci: usize) -> usize {
    s.char_indices().nth(ci).map(|(b, _)| b).unwrap_or(s.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(text: &str, cursor: usize) -> Draft {
        Draft {
            text: text.into(),
            cursor,
        }
    }

    #[test]
    fn paste_keeps_newlines_and_refuses_controls() {
        assert_eq!(paste_text("a\r\nb\rc\nd\te").unwrap(), "a\nb\nc\nd\te");
        assert!(paste_text("x\u{1b}[201~/quit")
            .unwrap_err()
            .to_string()
            .contains("escape"));
        assert!(paste_text("x\u{7f}").is_err());
        assert!(paste_text("x\u{85}").is_err());
        assert!(paste_text("l\u{202e}r").is_err());
        assert_eq!(paste_text("日本 ok").unwrap(), "日本 ok");
    }

    #[test]
    fn lines_move_by_column() {
        let mut x = d("abc\nd\nefgh", 10);
        x.up();
        assert_eq!(x.cursor, 5, "clamped to the short line's end");
        x.up();
        assert_eq!(x.cursor, 1);
        x.up();
        assert_eq!(x.cursor, 1, "first line: stays");
        x.end();
        assert_eq!(x.cursor, 3);
        x.down();
        assert_eq!(x.cursor, 5);
        x.down();
        assert_eq!(x.cursor, 7);
        x.home();
        assert_eq!(x.cursor, 6);
        x.down();
        assert_eq!(x.cursor, 6, "last line: stays");
    }

    #[test]
    fn the_cap_refuses_a_whole_insert() {
        let mut x = Draft::default();
        assert!(x.insert(&"x".repeat(MAX_REPLY_CHARS)));
        assert!(!x.insert("y"));
        assert_eq!(x.text.chars().count(), MAX_REPLY_CHARS);
    }

    #[test]
    fn layout_wraps_breaks_and_places_the_cursor() {
        let (lines, cur) = layout(&d("abcdef\ngh", 9), 4);
        assert_eq!(lines, ["abcd", "ef", "gh"]);
        assert_eq!(cur, (2, 2));
        let (lines, cur) = layout(&d("abcd", 4), 4);
        assert_eq!(lines, ["abcd", ""]);
        assert_eq!(cur, (1, 0));
        let (lines, cur) = layout(&d("日本語", 1), 4);
        assert_eq!(lines, ["日本", "語"]);
        assert_eq!(cur, (0, 2));
        let (lines, cur) = layout(&d("a\n", 2), 10);
        assert_eq!(lines, ["a", ""]);
        assert_eq!(cur, (1, 0));
        let (lines, cur) = layout(&d("abcde", 4), 4);
        assert_eq!(lines, ["abcd", "e"]);
        assert_eq!(cur, (1, 0));
        let (lines, _) = layout(&d("", 0), 0);
        assert_eq!(lines, [""]);
    }
}
