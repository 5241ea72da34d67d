//! The Seen / Unsee action: the only writer of `board/seen.json`.

use std::path::Path;

use crate::evidence::seen::{read_seen, SeenError, SeenMarks};
use crate::store;

/// Mark (`seen = true`) or unmark `key` at `last_activity`. Re-reads the file first and refuses
/// to replace an invalid one.
pub fn set_seen(
    data_root: &Path,
    key: &str,
    last_activity: &str,
    seen: bool,
) -> Result<SeenMarks, SeenError> {
    if key.is_empty() || key.len() > 512 || last_activity.len() > 64 {
        return Err(SeenError::InvalidInput);
    }
    let not_written = |e: &dyn std::fmt::Display| SeenError::NotWritten(e.to_string());
    let board = data_root.join("board");
    store::ensure_dir(data_root, &board).map_err(|e| not_written(&e))?;
    let path = board.join("seen.json");
    let mut marks = read_seen(&path)?;
    if seen {
        marks.insert(key.to_string(), last_activity.to_string());
    } else {
        marks.remove(key);
    }
    let mut bytes = serde_json::to_vec_pretty(&marks).map_err(|e| not_written(&e))?;
    bytes.push(b'\n');
    store::write_atomic(&path, &bytes).map_err(|e| not_written(&e))?;
    Ok(marks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mark_then_unmark_lands_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        set_seen(dir.path(), "p/a", "2026-11-29T10:00:00.000Z", true).unwrap();
        let text = std::fs::read_to_string(dir.path().join("board/seen.json")).unwrap();
        assert!(text.contains("\"p/a\": \"2026-11-29T10:00:00.000Z\""));
        set_seen(dir.path(), "p/a", "2026-11-29T10:00:00.000Z", false).unwrap();
        let text = std::fs::read_to_string(dir.path().join("board/seen.json")).unwrap();
        assert_eq!(text.trim(), "{}");
        std::fs::write(dir.path().join("board/seen.json"), b"nope").unwrap();
        assert!(set_seen(dir.path(), "p/a", "x", true).is_err());
        assert_eq!(
            std::fs::read(dir.path().join("board/seen.json")).unwrap(),
            b"nope"
        );
    }
}
