//! What a completed reply asks of a person: the `Input needed: ` marker rule and the question
//! a waiting seat shows (docs/behaviour.md §2). Facts of the session text, so they live with the
//! session evidence; `board::classify` applies them.

/// The marker that makes a completed reply ask for human input.
const INPUT_MARKER: &str = "Input needed: ";

/// Does this first non-blank line ask for input? Column zero, exact marker, non-empty request.
pub(crate) fn is_input_request(first_line: &str) -> bool {
    first_line
        .strip_prefix(INPUT_MARKER)
        .is_some_and(|rest| !rest.trim().is_empty())
}

/// Longest question kept, in characters (the row shows its first line, details all of it).
pub(crate) const QUESTION_CHARS: usize = 1000;

/// What a reply that asks for input asks: its text from the last line that starts with the
/// marker (the marker itself dropped) to the end; without such a line, its last paragraph.
/// Trailing spaces and runs of blank lines are dropped; at most `QUESTION_CHARS` characters.
/// Raw text: views sanitize it.
pub(crate) fn question_of(text: &str) -> Option<String> {
    let lines: Vec<&str> = text
        .lines()
        .map(|l| l.strip_suffix('\r').unwrap_or(l).trim_end())
        .collect();
    let from = match lines.iter().rposition(|l| is_input_request(l)) {
        Some(i) => i,
        None => {
            let end = lines.iter().rposition(|l| !l.is_empty())?;
            lines[..end]
                .iter()
                .rposition(|l| l.is_empty())
                .map_or(0, |b| b + 1)
        }
    };
    let mut out = String::new();
    let mut blank = false;
    for (i, l) in lines[from..].iter().enumerate() {
        let l = if i == 0 {
            l.strip_prefix(INPUT_MARKER).unwrap_or(l)
        } else {
            l
        };
        if l.is_empty() {
            blank = !out.is_empty();
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank { "\n\n" } else { "\n" });
        }
        blank = false;
        out.push_str(l);
    }
    let out: String = out.chars().take(QUESTION_CHARS).collect();
    (!out.trim().is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_question_is_the_asking_part_of_the_reply() {
        assert_eq!(
            question_of("Input needed: Staging or production?\n\nOptions:\n1. staging\n")
                .as_deref(),
            Some("Staging or production?\n\nOptions:\n1. staging")
        );
        // The last marker line wins; what comes before it is context the row does not need.
        assert_eq!(
            question_of("Input needed: old\nsome report\nInput needed: which one?\r\n").as_deref(),
            Some("which one?")
        );
        // No marker: the last paragraph.
        assert_eq!(
            question_of("Did the work.\n\nShall I also\nrun the tests?\n\n\n").as_deref(),
            Some("Shall I also\nrun the tests?")
        );
        assert_eq!(question_of("   \n\n"), None);
        let long = format!("Input needed: {}", "é".repeat(5000));
        assert_eq!(question_of(&long).unwrap().chars().count(), QUESTION_CHARS);
    }

    #[test]
    fn input_marker_rule() {
        assert!(is_input_request("Input needed: pick one"));
        assert!(!is_input_request("Input needed: "));
        assert!(!is_input_request("Input needed:   "));
        assert!(!is_input_request(" Input needed: x"));
        assert!(!is_input_request("> Input needed: x"));
        assert!(!is_input_request("input needed: x"));
        assert!(!is_input_request("Input needed:x"));
    }
}
