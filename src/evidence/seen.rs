//! `board/seen.json`: `{ "<project>/<agent>": "<lastActivity>" }` (seed 004).
//!
//! A scan reads it and never writes it. An unreadable or invalid file is an error, not an empty
//! map: silently dropping every mark would bring acknowledged rows back as new.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::fsguard::{self, FsError};
use crate::text::sanitize;

pub(crate) const MAX_SEEN_BYTES: u64 = 1 << 20;

pub(crate) type SeenMarks = BTreeMap<String, String>;

/// Why Seen marks could not be read or saved. Its text starts with a fixed code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SeenError {
    /// The key or the activity time is out of bounds.
    InvalidInput,
    /// `seen.json` cannot be read (an `FsError` code).
    Unreadable { path: PathBuf, code: &'static str },
    /// `seen.json` is not a JSON object of string values.
    Invalid { path: PathBuf },
    /// The new marks could not be written (the store's message).
    NotWritten(String),
}

impl std::fmt::Display for SeenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shown = |p: &PathBuf| sanitize(&p.display().to_string());
        match self {
            SeenError::InvalidInput => {
                f.write_str("seen_invalid_input: key or lastActivity out of bounds")
            }
            SeenError::Unreadable { path, code } => {
                write!(f, "seen_unreadable: {} ({code})", shown(path))
            }
            SeenError::Invalid { path } => write!(
                f,
                "seen_invalid: {} is not a JSON object of string values",
                shown(path)
            ),
            SeenError::NotWritten(m) => write!(f, "seen_not_written: {}", sanitize(m)),
        }
    }
}

impl std::error::Error for SeenError {}

/// Read `seen.json`; a missing file is an empty map.
pub(crate) fn read_seen(path: &Path) -> Result<SeenMarks, SeenError> {
    let bytes = match fsguard::read_capped(path, MAX_SEEN_BYTES) {
        Ok(b) => b,
        Err(FsError::NotFound) => return Ok(SeenMarks::new()),
        Err(e) => {
            return Err(SeenError::Unreadable {
                path: path.to_path_buf(),
                code: e.code(),
            })
        }
    };
    parse_seen(&bytes).ok_or_else(|| SeenError::Invalid {
        path: path.to_path_buf(),
    })
}

/// The marks in `seen.json`'s bytes: a JSON object of string values, else `None`.
pub fn parse_seen(bytes: &[u8]) -> Option<SeenMarks> {
    serde_json::from_slice(bytes).ok()
}

/// A mark applies only while the seat's newest `lastActivity` is exactly the marked value.
pub(crate) fn is_seen(marks: &SeenMarks, key: &str, last_activity: Option<&str>) -> bool {
    match (marks.get(key), last_activity) {
        (Some(m), Some(a)) => m == a,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_is_empty_invalid_is_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("seen.json");
        assert!(read_seen(&p).unwrap().is_empty());
        std::fs::write(&p, b"[1]").unwrap();
        assert!(read_seen(&p)
            .unwrap_err()
            .to_string()
            .starts_with("seen_invalid"));
        std::fs::write(&p, br#"{"p/a":5}"#).unwrap();
        assert!(read_seen(&p).is_err(), "a value that is not a string");
        std::fs::write(&p, br#"{"p/a":"2026-11-29T10:00:00.000Z"}"#).unwrap();
        let m = read_seen(&p).unwrap();
        assert!(is_seen(&m, "p/a", Some("2026-11-29T10:00:00.000Z")));
        assert!(!is_seen(&m, "p/a", Some("2026-11-29T10:00:01.000Z")));
        assert!(!is_seen(&m, "p/a", None));
    }
}
