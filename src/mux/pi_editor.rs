//! What pi's editor shows on a pane's screen, for a transport that types into it (Herdr's
//! `agent.prompt`): pi 1.6.0 draws its editor as the lines between two borders at the bottom of
//! its screen, each a full-width line of U+2500 or one carrying a label (a scroll indicator
//! ` ↑ 3 more `, the status loader ` ⠙ Retrying (2/3) in 3s... `). Text typed there is merged into
//! a draft the person left and submitted with it, so a draft (or a selector or dialog, which pi
//! draws in the same place) must be seen before anything is typed.
//!
//! `scripts/agent-send.sh` (`editor()`, tmux) applies the same rule to `capture-pane` output;
//! `tests/suite/reply_herdr.rs` holds both to the same screens.

/// One look at pi's editor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Editor {
    /// The editor is there and holds nothing.
    Empty,
    /// A draft, or a selector or dialog, between the borders.
    Draft,
    /// No border on screen at all: not pi's TUI (or not drawn yet).
    None,
    /// Borders, but not the editor's shape.
    Unknown,
}

const RULE: char = '\u{2500}';

/// A border line of a pane `width` columns wide.
fn is_rule(line: &str, width: usize) -> bool {
    let plain: String = line.chars().filter(|&c| c != RULE).collect();
    if plain.is_empty() {
        return !line.is_empty() && line.chars().count() == width;
    }
    // A labelled border: starts and ends with the rule, the label padded by a space each side.
    line.starts_with(RULE)
        && line.ends_with(RULE)
        && plain.len() >= 2
        && plain.starts_with(' ')
        && plain.ends_with(' ')
}

/// ` ↑ 3 more ` or ` ↓ 12 more `: the editor scrolled (more lines than it shows).
fn scrolled(line: &str) -> bool {
    ["\u{2191}", "\u{2193}"].iter().any(|arrow| {
        line.match_indices(&format!(" {arrow} ")).any(|(i, m)| {
            let rest = line.get(i + m.len()..).unwrap_or("");
            let digits = rest.chars().take_while(char::is_ascii_digit).count();
            digits > 0 && rest.get(digits..).is_some_and(|r| r.starts_with(" more "))
        })
    })
}

/// The width of a screen whose size is not known: its widest line. pi's borders span the whole
/// width, so they are the widest lines whenever they are there. Why: a headless Herdr keeps a
/// pane's terminal at its own size (94×39 in 0.8.2) whatever its rectangle in the layout, and
/// says neither; `stty size` in a pane whose rectangle is 47×19 prints `39 94`.
pub(crate) fn widest(screen: &str) -> usize {
    screen
        .lines()
        .map(|l| l.trim_end_matches('\r').chars().count())
        .max()
        .unwrap_or(0)
}

/// Read pi's editor from a screen (its lines, top to bottom) `width` columns wide.
pub(crate) fn read(screen: &str, width: usize) -> Editor {
    let lines: Vec<&str> = screen.lines().map(|l| l.trim_end_matches('\r')).collect();
    let Some(b) = lines.iter().rposition(|l| is_rule(l, width)) else {
        return Editor::None;
    };
    let Some(t) = lines
        .get(..b)
        .and_then(|above| above.iter().rposition(|l| is_rule(l, width)))
    else {
        return Editor::Unknown;
    };
    if b - t < 2 {
        return Editor::Unknown;
    }
    let (top, bottom) = (lines.get(t).copied(), lines.get(b).copied());
    if b - t > 2 || top.is_some_and(scrolled) || bottom.is_some_and(scrolled) {
        return Editor::Draft;
    }
    match lines.get(t + 1) {
        Some(l) if l.chars().any(|c| c != ' ') => Editor::Draft,
        _ => Editor::Empty,
    }
}

#[cfg(test)]
mod tests {
    use super::{read, Editor};

    fn rule(w: usize) -> String {
        "\u{2500}".repeat(w)
    }

    /// Screens as Herdr's `pane.read --source visible` gives them for real pi 1.6.0 (trailing
    /// spaces trimmed).
    #[test]
    fn reads_pis_editor() {
        let w = 94;
        let screen = |inside: &[&str]| {
            let mut s: Vec<String> = vec!["".into(), "hello".into(), rule(w)];
            s.extend(inside.iter().map(|l| l.to_string()));
            s.push(rule(w));
            s.push("/tmp/work".into());
            s.push("0.0%/128k (auto)        fake-model".into());
            s.join("\n") + "\n"
        };
        assert_eq!(read(&screen(&[""]), w), Editor::Empty);
        assert_eq!(read(&screen(&["my draft"]), w), Editor::Draft);
        assert_eq!(read(&screen(&["line 1", "line 2"]), w), Editor::Draft);
        assert_eq!(read("just a shell $\n", w), Editor::None);
        // A ruler of another width is not pi's border.
        assert_eq!(read(&screen(&[""]), w + 1), Editor::None);
        let labelled = format!("\u{2500}\u{2500} \u{2191} 3 more {}", rule(20));
        let s = format!("{labelled}\nx\n{}\n", rule(w));
        assert_eq!(read(&s, w), Editor::Draft);
        let loader = format!(
            "\u{2500}\u{2500} \u{2819} Retrying (2/3) in 3s... {}",
            rule(10)
        );
        let s = format!("{loader}\n\n{}\n", rule(w));
        assert_eq!(read(&s, w), Editor::Empty);
        // One border only, or two touching: not the editor's shape.
        assert_eq!(read(&format!("x\n{}\n", rule(w)), w), Editor::Unknown);
        assert_eq!(read(&format!("{0}\n{0}\n", rule(w)), w), Editor::Unknown);
        // The width from the screen itself.
        let s = screen(&["draft"]);
        assert_eq!(super::widest(&s), w);
        assert_eq!(read(&s, super::widest(&s)), Editor::Draft);
        assert_eq!(super::widest(""), 0);
    }
}
