//! What a person may hand `spawn`, checked before anything is read, written or started: the
//! worker's name, its description, the first task, the model, thinking and extra pi arguments.
//! Pure: every rule here answers from the text alone.

use crate::actions::launch_spec::{MAX_ARGS, MAX_ARG_BYTES};
use crate::reply_text::{self, INVISIBLE};

/// Longest worker name, in characters: it names a tmux window, a Herdr tab, a git branch and a
/// folder, and sits in a sidebar column.
pub(super) const MAX_NAME_CHARS: usize = 64;
/// Longest description (the roster's own limit).
pub(super) const MAX_DESCRIPTION_CHARS: usize = 4096;
/// pi's thinking levels (`pi --help`, 1.6.0).
pub(crate) const THINKING_LEVELS: [&str; 7] =
    ["off", "minimal", "low", "medium", "high", "xhigh", "max"];

/// pi flags that would bind the new pi to another session, or make it leave at once: the
/// session is the one the roster names, and the worker is interactive.
pub(crate) const SESSION_FLAGS: [&str; 13] = [
    "--session",
    "--session-id",
    "--session-dir",
    "-c",
    "--continue",
    "-r",
    "--resume",
    "--fork",
    "--no-session",
    "-p",
    "--print",
    "--mode",
    "--export",
];

/// Why spawn's input is refused before anything is read or written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum InputRefusal {
    NameBlank,
    NameTooLong(usize),
    NameSpaces,
    NameControl(u32),
    NameInvisible(u32),
    NameSeparator,
    NameDots,
    NameReserved,
    Description,
    DescriptionControl,
    Prompt(reply_text::TextError),
    Model,
    Thinking,
    SessionFlag(String),
    ArgBad,
    TooManyArgs,
}

impl std::fmt::Display for InputRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use InputRefusal as R;
        match self {
            R::NameBlank => f.write_str("the name is blank"),
            R::NameTooLong(n) => write!(f, "the name is {n} characters; at most {MAX_NAME_CHARS}"),
            R::NameSpaces => f.write_str("the name starts or ends with a space"),
            R::NameControl(c) => write!(f, "the name holds a control character (U+{c:04X})"),
            R::NameInvisible(c) => write!(f, "the name holds an invisible character (U+{c:04X})"),
            R::NameSeparator => f.write_str("the name holds a path separator (/ or \\)"),
            R::NameDots => f.write_str("the name may not be . or .. or start with -"),
            R::NameReserved => f.write_str("coordinator is reserved for the coordinator"),
            R::Description => write!(
                f,
                "--description must be non-blank and at most {MAX_DESCRIPTION_CHARS} characters"
            ),
            R::DescriptionControl => f.write_str("--description holds a control character"),
            R::Prompt(e) => write!(f, "--prompt: {e}"),
            R::Model => {
                f.write_str("--model must be a model pattern (no control characters, not a flag)")
            }
            R::Thinking => write!(f, "--thinking must be one of {}", THINKING_LEVELS.join(", ")),
            R::SessionFlag(flag) => write!(
                f,
                "pi argument {flag} is not passed: the worker runs in the session the roster names, interactively"
            ),
            R::ArgBad => {
                f.write_str("a pi argument holds a control character or is over 4096 bytes")
            }
            R::TooManyArgs => write!(f, "at most {MAX_ARGS} pi arguments"),
        }
    }
}

/// Why the name cannot be a worker's.
pub(crate) fn check_name(name: &str) -> Result<(), InputRefusal> {
    let n = name.chars().count();
    if name.trim().is_empty() {
        return Err(InputRefusal::NameBlank);
    }
    if n > MAX_NAME_CHARS {
        return Err(InputRefusal::NameTooLong(n));
    }
    if name.trim() != name {
        return Err(InputRefusal::NameSpaces);
    }
    if let Some(c) = name
        .chars()
        .find(|c| c.is_control() || reply_text::is_refused_control(*c))
    {
        return Err(InputRefusal::NameControl(c as u32));
    }
    if let Some(c) = name
        .chars()
        .find(|c| INVISIBLE.contains(c) || (c.is_whitespace() && *c != ' '))
    {
        return Err(InputRefusal::NameInvisible(c as u32));
    }
    if name.contains(['/', '\\']) {
        return Err(InputRefusal::NameSeparator);
    }
    if name == "." || name == ".." || name.starts_with('-') {
        return Err(InputRefusal::NameDots);
    }
    if name.to_lowercase() == "coordinator" {
        return Err(InputRefusal::NameReserved);
    }
    Ok(())
}

/// The description given, or one made from the name; it must fit the roster's rule.
pub(super) fn description(given: Option<&str>, name: &str) -> Result<String, InputRefusal> {
    let d = match given {
        Some(d) => d.to_string(),
        None => format!("Worker {name}, started by intercom-pane spawn."),
    };
    if d.trim().is_empty() || d.chars().count() > MAX_DESCRIPTION_CHARS {
        return Err(InputRefusal::Description);
    }
    if d.chars().any(reply_text::is_refused_control) {
        return Err(InputRefusal::DescriptionControl);
    }
    Ok(d)
}

/// The first task: the reply path's text rules (it travels that way).
pub(super) fn check_prompt(prompt: &str) -> Result<(), InputRefusal> {
    reply_text::check_text(prompt).map_err(InputRefusal::Prompt)
}

/// pi's arguments after the program: the session, the model and thinking flags, then the extra
/// arguments as given.
pub(super) fn pi_args(
    session_id: &str,
    model: Option<&str>,
    thinking: Option<&str>,
    extra: &[String],
) -> Result<Vec<String>, InputRefusal> {
    let mut args = vec!["--session-id".to_string(), session_id.to_string()];
    if let Some(m) = model {
        if m.is_empty() || m.len() > 256 || m.starts_with('-') || m.chars().any(char::is_control) {
            return Err(InputRefusal::Model);
        }
        args.extend(["--model".to_string(), m.to_string()]);
    }
    if let Some(t) = thinking {
        if !THINKING_LEVELS.contains(&t) {
            return Err(InputRefusal::Thinking);
        }
        args.extend(["--thinking".to_string(), t.to_string()]);
    }
    for a in extra {
        let flag = a.split('=').next().unwrap_or(a);
        if SESSION_FLAGS.contains(&flag) {
            return Err(InputRefusal::SessionFlag(flag.to_string()));
        }
        if a.len() > MAX_ARG_BYTES || a.chars().any(|c| c.is_control() && c != '\t') {
            return Err(InputRefusal::ArgBad);
        }
    }
    args.extend(extra.iter().cloned());
    if args.len() > MAX_ARGS {
        return Err(InputRefusal::TooManyArgs);
    }
    Ok(args)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_or_reserved_names_are_refused_with_their_reason() {
        for ok in [
            "Docs",
            "Build 2",
            "#(touch x)",
            "#{pane_id}",
            "naïve",
            "a.b",
        ] {
            assert_eq!(check_name(ok), Ok(()), "{ok}");
        }
        let long = "x".repeat(MAX_NAME_CHARS + 1);
        for (bad, why) in [
            ("", "blank"),
            ("  ", "blank"),
            (" W", "space"),
            ("a\nb", "control"),
            ("a\tb", "control"),
            ("a\u{1b}[2Jb", "control"),
            ("a\u{85}b", "control"),
            ("a\u{202e}b", "control"),
            ("a\u{200b}b", "invisible"),
            ("a\u{00a0}b", "invisible"),
            ("a/b", "separator"),
            ("a\\b", "separator"),
            ("..", ".."),
            ("-x", "start with -"),
            ("COORDINATOR", "reserved"),
            (long.as_str(), "characters"),
        ] {
            let e = check_name(bad).unwrap_err().to_string();
            assert!(e.contains(why), "{bad:?}: {e}");
        }
    }

    #[test]
    fn pi_arguments_bind_the_session_and_refuse_another() {
        let a = pi_args("s", Some("fake/m"), Some("low"), &["--verbose".into()]).unwrap();
        assert_eq!(
            a,
            [
                "--session-id",
                "s",
                "--model",
                "fake/m",
                "--thinking",
                "low",
                "--verbose"
            ]
        );
        assert!(pi_args("s", None, Some("lots"), &[]).is_err());
        assert!(pi_args("s", Some("-x"), None, &[]).is_err());
        for bad in [
            "--session=/x",
            "-c",
            "--no-session",
            "--session-id",
            "--mode",
        ] {
            assert!(pi_args("s", None, None, &[bad.into()]).is_err(), "{bad}");
        }
        assert!(pi_args("s", None, None, &["a\nb".into()]).is_err());
    }
}
