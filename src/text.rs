//! Terminal-safe text: every string from files or peers passes through `sanitize` before it is
//! shown, and `clip` before it is fitted to a column.

use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

/// Remove C0/C1 controls, ESC/CSI/OSC/DCS sequences and bidi overrides; turn tabs and newlines
/// into spaces. The result cannot move the cursor, set a title or reorder text.
pub fn sanitize(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => skip_escape(&mut chars),
            // C1 CSI / OSC / DCS / SOS / PM / APC introduce sequences as well.
            '\u{9b}' => skip_csi(&mut chars),
            '\u{9d}' | '\u{90}' | '\u{98}' | '\u{9e}' | '\u{9f}' => skip_string(&mut chars),
            '\t' | '\n' | '\r' => out.push(' '),
            c if is_control(c) || is_bidi(c) => {}
            c => out.push(c),
        }
    }
    out
}

fn is_control(c: char) -> bool {
    let u = c as u32;
    u < 0x20 || (0x7f..=0x9f).contains(&u)
}

fn is_bidi(c: char) -> bool {
    matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{061c}')
}

fn skip_escape(chars: &mut std::iter::Peekable<std::str::Chars>) {
    match chars.peek().copied() {
        Some('[') => {
            chars.next();
            skip_csi(chars);
        }
        Some(']') | Some('P') | Some('X') | Some('^') | Some('_') => {
            chars.next();
            skip_string(chars);
        }
        Some(c) if (' '..='/').contains(&c) => {
            // nF sequence: intermediates then one final byte.
            while let Some(&c) = chars.peek() {
                chars.next();
                if !(' '..='/').contains(&c) {
                    break;
                }
            }
        }
        Some(_) => {
            chars.next();
        }
        None => {}
    }
}

fn skip_csi(chars: &mut std::iter::Peekable<std::str::Chars>) {
    // Parameters and intermediates, then a final byte in @..~ .
    for c in chars.by_ref() {
        if ('@'..='~').contains(&c) {
            break;
        }
        if !(' '..='?').contains(&c) {
            break;
        }
    }
}

fn skip_string(chars: &mut std::iter::Peekable<std::str::Chars>) {
    // Ends at BEL, ST (ESC \) or C1 ST.
    while let Some(c) = chars.next() {
        match c {
            '\u{7}' | '\u{9c}' => break,
            '\u{1b}' => {
                if chars.peek() == Some(&'\\') {
                    chars.next();
                }
                break;
            }
            _ => {}
        }
    }
}

/// Display width in terminal columns.
pub fn width(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

/// Clip to at most `max` columns and `max` characters by grapheme, ending with `…` when something
/// was cut. Characters too: zero-width marks take no column, and a run of them would otherwise
/// pass any width bound at any length.
pub fn clip(s: &str, max: usize) -> String {
    if width(s) <= max && s.chars().nth(max).is_none() {
        return s.to_string();
    }
    if max == 0 {
        return String::new();
    }
    let mut out = String::new();
    let (mut used, mut chars) = (0, 0);
    for g in s.graphemes(true) {
        let (w, n) = (width(g), g.chars().count());
        if used + w > max - 1 || chars + n > max - 1 {
            break;
        }
        out.push_str(g);
        used += w;
        chars += n;
    }
    out.push('…');
    out
}

/// Collapse whitespace runs to single spaces and cut to `max_chars` characters (task lines).
pub fn one_line(s: &str, max_chars: usize) -> String {
    let collapsed = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let clean = sanitize(&collapsed);
    if clean.chars().count() <= max_chars {
        clean
    } else {
        clean.chars().take(max_chars).collect()
    }
}

/// Quote one word for a POSIX shell (single quotes; `'` becomes `'\''`).
pub fn shell_quote(s: &str) -> String {
    let safe = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b));
    if safe {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_escapes_and_bidi() {
        assert_eq!(sanitize("a\u{1b}]0;pwned\u{7}b"), "ab");
        assert_eq!(sanitize("x\u{1b}[2Jy"), "xy");
        assert_eq!(sanitize("l\u{202e}r"), "lr");
        assert_eq!(sanitize("t\tn\nz"), "t n z");
        assert_eq!(sanitize("c1\u{9b}31mz"), "c1z");
    }

    #[test]
    fn clips_by_width() {
        assert_eq!(clip("hello", 10), "hello");
        assert_eq!(clip("hello world", 6), "hello…");
        assert_eq!(clip("日本語テキスト", 5), "日本…");
        assert_eq!(width(&clip("日本語テキスト", 5)), 5);
        assert_eq!(one_line("a\n\n  b\tc", 240), "a b c");
    }

    #[test]
    fn zero_width_marks_are_bounded_by_count() {
        // A fuzzer found it: 2,000 combining marks are 0 columns wide.
        let marks = format!("pi {}", "\u{489}".repeat(2000));
        assert_eq!(clip(&marks, 500), "pi…");
        let accented = "e\u{301}".repeat(400);
        let c = clip(&accented, 500);
        assert_eq!(c.chars().count(), 499);
        assert_eq!(width(&c), 250);
        assert_eq!(clip("a\u{301}b", 3), "a\u{301}b");
    }
}
