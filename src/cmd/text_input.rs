//! The one reader of a command's text argument — `reply`'s text and `handoff`'s summary: given
//! inline, `-` for standard input, or `-f FILE`. Both are read under one byte cap, before any
//! rule of their own (the reply text rules, the summary's length) looks at them.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::text::sanitize;

/// Bytes read from a file or standard input; more is refused (the texts themselves are then
/// limited to a few thousand characters).
pub(crate) const INPUT_CAP: u64 = 64 * 1024;

/// What the text is called in messages, and how to give it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TextArg {
    /// `text`, `summary`.
    pub noun: &'static str,
    /// The usage hint when nothing was given.
    pub usage: &'static str,
}

pub(crate) const REPLY_TEXT: TextArg = TextArg {
    noun: "text",
    usage: "give the text, `-` for standard input, or -f FILE",
};

pub(crate) const HANDOFF_SUMMARY: TextArg = TextArg {
    noun: "summary",
    usage: "give --summary TEXT, --summary - or -f FILE",
};

#[derive(Debug)]
pub(crate) enum InputError {
    /// Neither an inline text nor a file.
    Missing(TextArg),
    /// The file could not be read (a fixed `fsguard` code: missing, a link, over the cap, …).
    File { path: PathBuf, code: &'static str },
    /// Reading standard input failed.
    Stdin(std::io::Error),
    /// Standard input held more than `INPUT_CAP` bytes.
    StdinTooLarge,
    /// The bytes are not UTF-8.
    NotUtf8(TextArg),
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InputError::Missing(a) => f.write_str(a.usage),
            InputError::File { path, code } => write!(
                f,
                "-f {}: cannot read ({code})",
                sanitize(&path.display().to_string())
            ),
            InputError::Stdin(e) => write!(f, "cannot read standard input: {e}"),
            InputError::StdinTooLarge => write!(f, "standard input is over {INPUT_CAP} bytes"),
            InputError::NotUtf8(a) => write!(f, "the {} is not UTF-8", a.noun),
        }
    }
}

impl std::error::Error for InputError {}

/// The text from `inline` (`-` reads `stdin`) or `file` (which wins when both are given; clap
/// refuses that combination anyway).
pub(crate) fn read_text(
    arg: TextArg,
    inline: Option<&str>,
    file: Option<&Path>,
    stdin: impl Read,
) -> Result<String, InputError> {
    let bytes = match (file, inline) {
        (Some(path), _) => {
            crate::fsguard::read_capped(path, INPUT_CAP).map_err(|e| InputError::File {
                path: path.to_path_buf(),
                code: e.code(),
            })?
        }
        (None, Some("-")) => {
            let mut buf = Vec::new();
            stdin
                .take(INPUT_CAP + 1)
                .read_to_end(&mut buf)
                .map_err(InputError::Stdin)?;
            if buf.len() as u64 > INPUT_CAP {
                return Err(InputError::StdinTooLarge);
            }
            buf
        }
        (None, Some(t)) => return Ok(t.to_string()),
        (None, None) => return Err(InputError::Missing(arg)),
    };
    String::from_utf8(bytes).map_err(|_| InputError::NotUtf8(arg))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stdin(n: usize) -> std::io::Cursor<Vec<u8>> {
        std::io::Cursor::new(vec![b'a'; n])
    }

    #[test]
    fn standard_input_is_read_up_to_the_cap_and_refused_beyond_it() {
        for arg in [REPLY_TEXT, HANDOFF_SUMMARY] {
            let cap = INPUT_CAP as usize;
            let t = read_text(arg, Some("-"), None, stdin(cap)).unwrap();
            assert_eq!(t.len(), cap);
            let e = read_text(arg, Some("-"), None, stdin(cap + 1)).unwrap_err();
            assert!(matches!(e, InputError::StdinTooLarge), "{e}");
            assert_eq!(e.to_string(), "standard input is over 65536 bytes");
        }
    }

    #[test]
    fn inline_text_missing_text_and_bad_bytes() {
        let t = read_text(REPLY_TEXT, Some("two\nlines"), None, stdin(0)).unwrap();
        assert_eq!(t, "two\nlines");
        let e = read_text(HANDOFF_SUMMARY, None, None, stdin(0)).unwrap_err();
        assert_eq!(e.to_string(), HANDOFF_SUMMARY.usage);
        let bad = std::io::Cursor::new(vec![0xff, 0xfe]);
        let e = read_text(HANDOFF_SUMMARY, Some("-"), None, bad).unwrap_err();
        assert_eq!(e.to_string(), "the summary is not UTF-8");
    }

    #[test]
    fn a_file_error_quotes_the_path_with_control_characters_escaped() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("no\x1b[2Jsuch");
        let e = read_text(REPLY_TEXT, None, Some(&p), stdin(0)).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("cannot read (not_found)"), "{msg}");
        assert!(!msg.contains('\x1b'), "{msg}");
    }
}
