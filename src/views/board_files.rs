//! `board/index.json` and `board/sessions/<project>/<agent>.json` (seed 004 layout).

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::actions::store;
use crate::clock::format_iso;
use crate::scan::{counts, Scan};
use crate::snapshot::RosterStatus;

/// The index object: the same value `scan --json` prints.
pub fn index_json(scan: &Scan) -> Value {
    let waiting: Vec<String> = scan
        .records
        .iter()
        .filter(|r| r.waiting_on_you)
        .map(|r| r.key())
        .collect();
    let seen: Vec<String> = scan
        .records
        .iter()
        .filter(|r| r.seen)
        .map(|r| r.key())
        .collect();
    let roster = match &scan.snapshot.roster {
        RosterStatus::Available { root } => json!({"available": true, "root": root}),
        RosterStatus::Unavailable { code, reason } => {
            json!({"available": false, "code": code, "reason": reason})
        }
    };
    json!({
        "version": 1,
        "scannedAt": format_iso(scan.scanned_at),
        "counts": counts(&scan.records),
        "waitingOnYou": waiting,
        "seen": seen,
        "registered": scan.registered,
        "registrationStale": scan.registration_stale,
        "registrationErrors": scan.registration_errors,
        "discoveryErrors": scan.discovery_errors,
        "errors": scan.snapshot.errors,
        "truncated": scan.snapshot.truncated,
        "roster": roster,
        "records": scan.records,
    })
}

/// A folder or file name for a project or agent: the name itself when it is plainly safe, else a
/// cleaned name with a short hash so two different names never share a file.
pub fn file_name_for(name: &str) -> String {
    let safe = !name.is_empty()
        && name.len() <= 100
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ' '));
    if safe {
        return name.to_string();
    }
    let cleaned: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
        .take(48)
        .collect();
    let digest = Sha256::digest(name.as_bytes());
    let hex: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
    format!("{cleaned}-{hex}")
}

/// Write every board file atomically. Returns the board folder.
pub fn write_board(scan: &Scan) -> Result<PathBuf, String> {
    let root = &scan.data_root;
    let board = root.join("board");
    let sessions = board.join("sessions");
    store::ensure_dir(root, &sessions).map_err(|e| e.to_string())?;
    for rec in &scan.records {
        let dir = sessions.join(file_name_for(&rec.project));
        store::ensure_dir(root, &dir).map_err(|e| e.to_string())?;
        let path = dir.join(format!("{}.json", file_name_for(&rec.agent)));
        write_json(
            &path,
            &serde_json::to_value(rec).map_err(|e| e.to_string())?,
            false,
        )?;
    }
    write_json(&board.join("index.json"), &index_json(scan), true)?;
    Ok(board)
}

fn write_json(path: &Path, v: &Value, durable: bool) -> Result<(), String> {
    let mut bytes = super::json::to_string_pretty(v)?.into_bytes();
    bytes.push(b'\n');
    if durable {
        store::write_atomic(path, &bytes).map_err(|e| e.to_string())
    } else {
        store::write_atomic_derived(path, &bytes).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_are_safe_and_distinct() {
        assert_eq!(file_name_for("Builder"), "Builder");
        assert_eq!(file_name_for("my agent"), "my agent");
        let a = file_name_for("../etc");
        assert!(!a.contains('/') && !a.starts_with('.'));
        assert_ne!(file_name_for("a/b"), file_name_for("a\\b"));
        assert!(!file_name_for("..").starts_with('.'));
    }
}
