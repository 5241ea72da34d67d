//! The text rules of a reply (docs/behaviour.md §6), in one place: every text that is sent — `reply`,
//! the sidebar's box, close-worker's request — passes `check_text` before anything else happens.
//! `scripts/agent-send.sh` mirrors the same rules so that running it directly is safe too
//! (`tests/suite/reply_text.rs` checks both against the same lists).
//!
//! Why each rule: a control character reaches a terminal application as a key (ESC `[201~` ends a
//! bracketed paste, CR submits, Ctrl-C/D abort or quit pi) and pi keeps control bytes that an
//! extension hands it, rendering them raw; C1 controls are 8-bit escapes; bidi embedding,
//! override and isolate controls make the text read differently from what it is. A text with no
//! visible character would arrive as an invisible message.

/// Longest text accepted, in characters.
pub const MAX_REPLY_CHARS: usize = 2000;

/// Characters that show nothing on their own, besides `char::is_whitespace`: zero-width spaces
/// and joiners, marks, the word joiner and invisible operators, the BOM, the soft hyphen,
/// fillers. A text made only of these (and whitespace) is blank.
pub const INVISIBLE: &[char] = &[
    '\u{00ad}', '\u{034f}', '\u{061c}', '\u{115f}', '\u{1160}', '\u{17b4}', '\u{17b5}', '\u{180e}',
    '\u{200b}', '\u{200c}', '\u{200d}', '\u{200e}', '\u{200f}', '\u{2060}', '\u{2061}', '\u{2062}',
    '\u{2063}', '\u{2064}', '\u{206a}', '\u{206b}', '\u{206c}', '\u{206d}', '\u{206e}', '\u{206f}',
    '\u{2800}', '\u{3164}', '\u{feff}', '\u{ffa0}',
];

/// Why a text is refused. Exit codes live on `Refusal` (3 blank, 4 too long, 9 control).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TextError {
    /// No visible character.
    Blank,
    /// More than `MAX_REPLY_CHARS` characters (the count).
    TooLong(usize),
    /// A control character: the character and its position (1-based, in characters).
    Control(char, usize),
}

impl std::fmt::Display for TextError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TextError::Blank => write!(f, "refusing to send empty or blank text"),
            TextError::TooLong(n) => {
                write!(
                    f,
                    "text is {n} characters; at most {MAX_REPLY_CHARS} are sent"
                )
            }
            TextError::Control(c, at) => write!(
                f,
                "text contains a control character ({}) at character {at}; refused",
                control_name(*c)
            ),
        }
    }
}

/// Is `c` refused inside a reply? C0 but LF and TAB (so CR and ESC too), DEL, C1, and the bidi
/// embedding/override (U+202A–U+202E) and isolate (U+2066–U+2069) controls.
pub fn is_refused_control(c: char) -> bool {
    let u = c as u32;
    (u < 0x20 && c != '\n' && c != '\t')
        || (0x7f..=0x9f).contains(&u)
        || (0x202a..=0x202e).contains(&u)
        || (0x2066..=0x2069).contains(&u)
}

/// Does `c` show nothing on its own?
pub fn is_invisible(c: char) -> bool {
    c.is_whitespace() || INVISIBLE.contains(&c)
}

/// Check a text against every rule: controls first (a hostile text is named as such even when
/// it is also long or otherwise blank), then blank, then length.
pub fn check_text(text: &str) -> Result<(), TextError> {
    if let Some((i, c)) = text
        .chars()
        .enumerate()
        .find(|(_, c)| is_refused_control(*c))
    {
        return Err(TextError::Control(c, i + 1));
    }
    if text.chars().all(is_invisible) {
        return Err(TextError::Blank);
    }
    let n = text.chars().count();
    if n > MAX_REPLY_CHARS {
        return Err(TextError::TooLong(n));
    }
    Ok(())
}

fn control_name(c: char) -> String {
    match c {
        '\0' => "NUL".into(),
        '\r' => "CR".into(),
        '\u{1b}' => "ESC".into(),
        '\u{7f}' => "DEL".into(),
        c => format!("U+{:04X}", c as u32),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_refused_with_their_place() {
        assert_eq!(
            check_text("ok\u{1b}[201~/quit"),
            Err(TextError::Control('\u{1b}', 3))
        );
        assert_eq!(check_text("a\rb"), Err(TextError::Control('\r', 2)));
        assert_eq!(check_text("\0"), Err(TextError::Control('\0', 1)));
        for c in [
            '\u{7f}', '\u{85}', '\u{9b}', '\u{202e}', '\u{2066}', '\u{2069}', '\u{7}',
        ] {
            assert!(matches!(
                check_text(&format!("x{c}")),
                Err(TextError::Control(..))
            ));
        }
        assert_eq!(check_text("line\n\tindented"), Ok(()));
        assert_eq!(check_text("\u{200f}mark is fine"), Ok(()));
    }

    #[test]
    fn invisible_only_is_blank() {
        for t in [
            "",
            "  \n\t",
            "\u{200b}\u{200b}",
            "\u{feff} \u{2060}",
            "\u{3164}\u{00a0}",
        ] {
            assert_eq!(check_text(t), Err(TextError::Blank), "{t:?}");
        }
        assert_eq!(check_text("\u{200b}x"), Ok(()));
    }

    #[test]
    fn length_is_counted_in_characters() {
        assert_eq!(check_text(&"é".repeat(MAX_REPLY_CHARS)), Ok(()));
        assert_eq!(
            check_text(&"é".repeat(MAX_REPLY_CHARS + 1)),
            Err(TextError::TooLong(MAX_REPLY_CHARS + 1))
        );
    }
}
