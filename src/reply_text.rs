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
//!
//! What pi's editor does to a text it is given and then submitted (pi 1.6.0, `submitValue` and
//! the interactive submit handler): it drops the surrounding whitespace (JavaScript's `trim`),
//! turns each TAB into four spaces (and a TAB typed as a key opens its completion), runs a text
//! whose first character is `!` as a shell command (`!!`: the same, its output kept from the
//! model), and takes a first `/` as a command (built-in ones like `/quit` and `/new`, extension
//! commands, prompt templates, skills). So every transport sends the text without its surrounding
//! whitespace (`trim_like_pi`: what pi would record from a typed one anyway), and the transports
//! that go through pi's editor — typed keys (`agent-send.sh`) and Herdr's `agent.prompt` — refuse
//! (`check_for_editor`) a text that would be a command there or that the editor would change. The
//! channel hands the text to pi as a message (`pi.sendUserMessage`): there `!` and `/` are plain
//! text, so one text never means a command on one transport and a message on another.

/// The line earlier versions added on its own line after every reply. Session files written
/// then still end such user messages with it: readers drop it (`without_legacy_trailer`), so the
/// board never shows it as a worker's task. Nothing sends it any more.
pub const LEGACY_TRAILER: &str = "(intercom-pane: answer in your own session as usual; the board reads your transcript. Do not agent-send to intercom-pane.)";

/// `text` without a `LEGACY_TRAILER` line at its end.
pub fn without_legacy_trailer(text: &str) -> &str {
    text.strip_suffix(LEGACY_TRAILER)
        .and_then(|t| t.strip_suffix('\n'))
        .unwrap_or(text)
}

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
    /// Through pi's editor only: the text starts with `!` or `/`, which pi's editor takes as a
    /// shell command or a command (the character).
    EditorCommand(char),
    /// Through pi's editor only: a TAB (its position), which pi's editor turns into spaces.
    EditorTab(usize),
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
            TextError::EditorCommand('!') => f.write_str(
                "the text starts with `!`, which pi's editor runs as a shell command; this seat \
                 has no reply channel (its text would be typed), so it is refused: start with \
                 another character, or give the seat the extension's channel",
            ),
            TextError::EditorCommand(c) => write!(
                f,
                "the text starts with `{c}`, which pi's editor takes as a command; this seat has \
                 no reply channel (its text would be typed), so it is refused: start with another \
                 character, or give the seat the extension's channel"
            ),
            TextError::EditorTab(at) => write!(
                f,
                "the text has a TAB at character {at}, which pi's editor turns into spaces; this \
                 seat has no reply channel (its text would be typed), so it is refused: use spaces"
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

/// Is `c` dropped from either end of a text by pi's editor? JavaScript's `trim` set: Unicode
/// white space and the BOM (U+0085, which Rust also counts, is refused as a control anyway).
pub fn is_trimmed_by_pi(c: char) -> bool {
    c.is_whitespace() || c == '\u{feff}'
}

/// The text as pi records it from its editor: without surrounding white space. Every transport
/// sends this, so the text pi records is the same whichever carries it.
pub fn trim_like_pi(text: &str) -> &str {
    text.trim_matches(is_trimmed_by_pi)
}

/// The first characters pi's editor treats as a command: `!` (and `!!`) a shell command, `/` a
/// command, prompt template or skill.
pub(crate) const EDITOR_COMMAND_PREFIXES: &[char] = &['!', '/'];

/// The extra rules for a text that goes through pi's editor (typed keys, Herdr's `agent.prompt`),
/// for a text that passed `check_text`: its first character after the surrounding white space is
/// not a command prefix, and it has no TAB. What passes arrives as exactly `trim_like_pi(text)`.
pub fn check_for_editor(text: &str) -> Result<(), TextError> {
    if let Some(c) = trim_like_pi(text)
        .chars()
        .next()
        .filter(|c| EDITOR_COMMAND_PREFIXES.contains(c))
    {
        return Err(TextError::EditorCommand(c));
    }
    if let Some(i) = text.chars().position(|c| c == '\t') {
        return Err(TextError::EditorTab(i + 1));
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
    fn editor_rules_refuse_commands_and_tabs_after_pis_own_trim() {
        for t in [
            "!touch x",
            "!!ls",
            "  !ls",
            "\n\u{feff}\u{3000}!x",
            "/quit",
            " /new\nmore",
        ] {
            assert!(
                matches!(check_for_editor(t), Err(TextError::EditorCommand(_))),
                "{t:?}"
            );
        }
        assert_eq!(check_for_editor("a\tb"), Err(TextError::EditorTab(2)));
        // Not first (after white space): plain text; invisible characters pi keeps count.
        for t in ["say !x", "a/b", "\u{200b}!x", "ok\n!second line", "é /x"] {
            assert_eq!(check_for_editor(t), Ok(()), "{t:?}");
        }
        assert_eq!(trim_like_pi(" \n\u{feff}hi there\u{a0}\t"), "hi there");
        assert_eq!(trim_like_pi("\u{200b}x"), "\u{200b}x");
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
