//! The one rule for data in tmux arguments: a value tmux format-expands goes through
//! `format_literal` (by way of the checked helpers below: `window_name`, `session_name`,
//! `start_dir`, `pane_title`), and a pane target is a `PaneId` (`%N`, nothing else).
//!
//! Why: tmux expands formats in many arguments, and `#(cmd)` there runs `cmd` as the tmux
//! server's user; `#S`, `#W`, `#{…}` silently change the value. What tmux 3.3a expands (its
//! source: spawn.c, arguments.c, cmd-*.c):
//! - expanded: `new-window -n -c`, `split-window -c`, `new-session -s -n -c`, `attach -c`,
//!   `select-pane -T`, `rename-window`, `rename-session`, `display-popup -d -T`, `-F` and `-f`
//!   of every command, `display-message` (and strftime's `%` there), `if-shell`'s condition or
//!   shell command, `run-shell`, `load-buffer`'s path, `set-option`'s option name (and its
//!   value with `-F`), `set-environment`'s value with `-F`;
//! - taken as they are: targets (`-t`, `-s`), `-e NAME=VALUE`, `set-option` values without
//!   `-F`, buffer names, `send-keys` keys, and the program and its arguments after `--` (an
//!   element ending in `;` aside, which would end the command: `escape_arg`).
//!
//! Our formats (`-F`, `-f`, `if-shell -F`) hold only fixed text and `PaneId`s; every other value
//! that reaches an expanded argument is built here.

use std::path::Path;

use super::super::{ErrorCode, MuxError};

/// Longest name or title we hand to tmux.
pub(crate) const MAX_NAME: usize = 1024;

/// The text that tmux's format expansion (format.c, `format_expand1`) turns back into exactly
/// `s`. There `##` is one `#`, and every other `#` starts a format, except a run of `#` right
/// before `[`: that is a style and is kept as it is (`#[` stays `#[`, `##[` stays `##[`). So each
/// run of `#` is doubled unless a `[` follows it. Every other byte is copied as is (newline and
/// TAB included), and nothing else is special: no time expansion in these arguments.
pub fn format_literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    let mut run = 0usize;
    for c in s.chars() {
        if c == '#' {
            run += 1;
            continue;
        }
        if run > 0 {
            let n = if c == '[' { run } else { 2 * run };
            out.extend(std::iter::repeat_n('#', n));
            run = 0;
        }
        out.push(c);
    }
    out.extend(std::iter::repeat_n('#', 2 * run));
    out
}

/// The text for `display-message`, which tmux expands and then draws (its status line's
/// `format_draw`): the text shown is exactly `s`. Drawing turns a run of `2k` `#`s into `k`
/// (and `#[` into a style), so every `#` is doubled for it; then the expansion rule above; and
/// display-message runs strftime over its text first, so each `%` is doubled too. Control
/// characters are the caller's to remove (drawing skips them).
pub(crate) fn message_literal(s: &str) -> String {
    format_literal(&s.replace('#', "##")).replace('%', "%%")
}

fn refuse(detail: String) -> MuxError {
    MuxError::new(ErrorCode::BadRequest, detail)
}

/// A name or title tmux would store and show as given: not empty, at most `MAX_NAME` bytes, no
/// control character (tmux stores a newline or TAB in a window name raw but shows it escaped, and
/// our listing of names cannot tell them apart from what it shows).
fn check_name(what: &str, s: &str) -> Result<(), MuxError> {
    if s.is_empty() {
        return Err(refuse(format!("the {what} is empty")));
    }
    if s.len() > MAX_NAME {
        return Err(refuse(format!("the {what} is over {MAX_NAME} bytes")));
    }
    if s.chars().any(char::is_control) {
        return Err(refuse(format!(
            "the {what} holds a control character (a newline, TAB, …): tmux would not keep it as \
             given"
        )));
    }
    Ok(())
}

/// The value for `new-window -n` / `new-session -n`.
pub(crate) fn window_name(name: &str) -> Result<String, MuxError> {
    check_name("window name", name)?;
    Ok(format_literal(name))
}

/// The value for `new-session -s`. tmux changes a session name after expanding it (session.c,
/// `session_check_name`, and utf8.c, `utf8_strvis`): `:` and `.` (which separate a target's
/// parts) become `_`, a `\` becomes `\\`, and a `$` before a letter, `_` or `{` gets a `\`.
/// Such a name is refused rather than changed.
pub(crate) fn session_name(name: &str) -> Result<String, MuxError> {
    check_name("session name", name)?;
    let dollar = name
        .as_bytes()
        .windows(2)
        .any(|w| w[0] == b'$' && (w[1].is_ascii_alphabetic() || w[1] == b'_' || w[1] == b'{'));
    if dollar || name.contains([':', '.', '\\']) {
        return Err(refuse(
            "the session name holds ':', '.', '\\' or '$' before a name, which tmux would change"
                .into(),
        ));
    }
    Ok(format_literal(name))
}

/// A session name tmux keeps as given, made from any name: the characters `session_name`
/// refuses (`:` `.` `\\` `$`) become `_`.
pub fn session_name_like(name: &str) -> String {
    name.chars()
        .map(|c| {
            if matches!(c, ':' | '.' | '\\' | '$') {
                '_'
            } else {
                c
            }
        })
        .collect()
}

/// The value for `select-pane -T` (an empty title is allowed: it clears the title).
pub(crate) fn pane_title(title: &str) -> Result<String, MuxError> {
    if !title.is_empty() {
        check_name("pane title", title)?;
    }
    Ok(format_literal(title))
}

/// The value for `-c` (`new-window`, `split-window`, `new-session`): an existing folder, in
/// UTF-8, made absolute against our own folder (as tmux would, from its client's folder). A
/// newline or TAB in it is kept (tmux passes it to `chdir` as is); a missing folder (tmux would
/// silently start the pane in the home folder) is refused rather than changed.
pub(crate) fn start_dir(dir: &Path) -> Result<String, MuxError> {
    let dir = if dir.is_absolute() {
        dir.to_path_buf()
    } else {
        std::env::current_dir()
            .map_err(|e| refuse(format!("our own folder is unknown: {e}")))?
            .join(dir)
    };
    let s = dir
        .to_str()
        .ok_or_else(|| refuse("the folder is not UTF-8".into()))?;
    if !dir.is_dir() {
        return Err(refuse(format!(
            "the folder does not exist (tmux would start the pane elsewhere): {s}"
        )));
    }
    Ok(format_literal(s))
}

/// A tmux pane id, `%` and 1 to 9 digits: the only pane target accepted anywhere, so no target
/// can name a session or window, pick "the active pane", or carry a format into a filter.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct PaneId(String);

impl PaneId {
    /// `s` as a pane id, or a `bad_request` refusal.
    pub(crate) fn parse(s: &str) -> Result<PaneId, MuxError> {
        if is_pane_id(s) {
            Ok(PaneId(s.to_string()))
        } else {
            Err(refuse(
                "not a tmux pane id (% and digits): only a pane id is accepted as a target".into(),
            ))
        }
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for PaneId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

pub(super) fn is_id(s: &str, sigil: char) -> bool {
    match s.strip_prefix(sigil) {
        Some(d) => !d.is_empty() && d.len() <= 9 && d.bytes().all(|b| b.is_ascii_digit()),
        None => false,
    }
}

/// A tmux pane id: `%` followed by 1 to 9 digits.
pub fn is_pane_id(s: &str) -> bool {
    is_id(s, '%')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_doubled_except_before_a_style_bracket() {
        assert_eq!(format_literal("plain"), "plain");
        assert_eq!(format_literal("#(touch x)"), "##(touch x)");
        assert_eq!(format_literal("notes#S"), "notes##S");
        assert_eq!(format_literal("a#{b}"), "a##{b}");
        assert_eq!(format_literal("x##y#"), "x####y##");
        assert_eq!(format_literal("a#[b"), "a#[b");
        assert_eq!(format_literal("c##[d#"), "c##[d##");
        assert_eq!(format_literal("nl\nx\ty"), "nl\nx\ty");
        assert_eq!(format_literal(""), "");
    }

    #[test]
    fn messages_are_doubled_for_drawing_expansion_and_strftime() {
        assert_eq!(message_literal("plain"), "plain");
        assert_eq!(message_literal("#x"), "####x");
        assert_eq!(message_literal("#[fg=red]"), "##[fg=red]");
        assert_eq!(message_literal("100%d #S"), "100%%d ####S");
    }

    #[test]
    fn names_and_folders_are_refused_when_tmux_would_change_them() {
        assert_eq!(window_name("notes#S").unwrap(), "notes##S");
        for bad in ["", "a\nb", "a\tb", "a\u{1b}b", "a\u{85}b"] {
            assert_eq!(window_name(bad).unwrap_err().code, ErrorCode::BadRequest);
        }
        assert!(window_name(&"x".repeat(MAX_NAME + 1)).is_err());
        for bad in ["a.b", "a:b", "a\\b", "a$b", "a$_", "a${b}"] {
            assert!(session_name(bad).is_err(), "{bad}");
        }
        assert_eq!(session_name("a$1 $").unwrap(), "a$1 $");
        assert_eq!(session_name("s#(x)").unwrap(), "s##(x)");
        assert_eq!(pane_title("").unwrap(), "");
        assert!(pane_title("t\n").is_err());
        let dir = tempfile::tempdir().unwrap();
        let hostile = dir.path().join("p#(touch m)\n\t#S");
        std::fs::create_dir(&hostile).unwrap();
        let want = format_literal(hostile.to_str().unwrap());
        assert_eq!(start_dir(&hostile).unwrap(), want);
        let here = std::env::current_dir().unwrap();
        assert_eq!(
            start_dir(Path::new(".")).unwrap(),
            format_literal(here.join(".").to_str().unwrap())
        );
        assert!(start_dir(&dir.path().join("missing")).is_err());
    }

    #[test]
    fn only_percent_digits_is_a_pane_id() {
        assert_eq!(PaneId::parse("%12").unwrap().as_str(), "%12");
        for bad in [
            "",
            "%",
            "12",
            "%1a",
            "%0},#(touch x)",
            "=s:",
            "%1234567890",
            " %1",
        ] {
            assert!(PaneId::parse(bad).is_err(), "{bad}");
        }
    }
}
