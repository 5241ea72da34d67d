//! Names a person must tell apart (docs/behaviour.md §1): two names that differ only by a
//! character that shows nothing look identical on the board and in `reply NAME`.
//!
//! The rule, in one place: a roster name (`config.json`'s `name`, which the person writes and
//! `reply` takes) holding such a character is refused with the character and its place; a name
//! the tool does not choose (a tmux session's, an agent folder's, a connector's) is shown with
//! every such character written out as `<U+XXXX>`, so the difference is visible.
//!
//! "Shows nothing": whitespace other than the plain space (a no-break or ideographic space looks
//! like a space), the invisible characters of the reply text rules (zero-width spaces and
//! joiners, marks, fillers, the BOM), bidi controls, tag characters, and a variation selector
//! after an ASCII character (after an emoji it chooses how the emoji looks, and is kept).

use crate::reply_text::is_invisible;

/// Does `c` (after `prev`) show nothing in a name?
fn shows_nothing(prev: Option<char>, c: char) -> bool {
    let u = c as u32;
    (c != ' ' && is_invisible(c))
        || (0x202a..=0x202e).contains(&u)
        || (0x2066..=0x2069).contains(&u)
        || (0xe0000..=0xe007f).contains(&u)
        || (((0xfe00..=0xfe0f).contains(&u) || (0xe0100..=0xe01ef).contains(&u))
            && prev.is_none_or(|p| p.is_ascii()))
}

/// The first character of `name` that shows nothing, and its place (1-based, in characters).
pub(crate) fn first_invisible(name: &str) -> Option<(char, usize)> {
    let mut prev = None;
    for (i, c) in name.chars().enumerate() {
        if shows_nothing(prev, c) {
            return Some((c, i + 1));
        }
        prev = Some(c);
    }
    None
}

/// `name` with every character that shows nothing written out as `<U+XXXX>`.
pub fn visible(name: &str) -> String {
    if first_invisible(name).is_none() {
        return name.to_string();
    }
    let mut out = String::with_capacity(name.len() + 16);
    let mut prev = None;
    for c in name.chars() {
        if shows_nothing(prev, c) {
            out.push_str(&format!("<U+{:04X}>", c as u32));
        } else {
            out.push(c);
        }
        prev = Some(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invisible_characters_are_found_and_written_out() {
        assert_eq!(first_invisible("Builder"), None);
        assert_eq!(first_invisible("Build Bot"), None);
        assert_eq!(first_invisible("Build\u{200b}er"), Some(('\u{200b}', 6)));
        assert_eq!(first_invisible("Build\u{a0}Bot"), Some(('\u{a0}', 6)));
        assert_eq!(first_invisible("\u{feff}Builder"), Some(('\u{feff}', 1)));
        assert_eq!(first_invisible("Builder\u{fe0f}"), Some(('\u{fe0f}', 8)));
        assert_eq!(first_invisible("Builder\u{e0041}"), Some(('\u{e0041}', 8)));
        assert_eq!(first_invisible("abc\u{202e}"), Some(('\u{202e}', 4)));
        // A variation selector after an emoji is how the emoji looks: kept.
        assert_eq!(first_invisible("\u{2764}\u{fe0f} Ops"), None);
        assert_eq!(visible("Build\u{200b}er"), "Build<U+200B>er");
        assert_eq!(visible("a\u{3000}b\u{2060}"), "a<U+3000>b<U+2060>");
        assert_eq!(visible("plain name"), "plain name");
        assert_ne!(visible("Builder\u{200d}"), visible("Builder"));
    }
}
