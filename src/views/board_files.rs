//! `board/index.json` and `board/sessions/<project>/<agent>.json` (seed 004 layout).

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::board::record::{SeatKey, SeatRecord};
use crate::clock::format_iso;
use crate::evidence::sessions::usage::UsageView;
use crate::scan::{counts, Scan};
use crate::snapshot::{PassError, RosterStatus};
use crate::store;

/// Why the board could not be written.
#[derive(Debug)]
pub(crate) enum BoardError {
    /// A folder or file could not be created or replaced.
    Store(store::StoreError),
    /// A record or the index could not be serialized.
    Json(serde_json::Error),
    /// The index head did not end with its empty `records` member (a bug, never written).
    IndexLayout,
}

impl std::fmt::Display for BoardError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BoardError::Store(e) => write!(f, "{e}"),
            BoardError::Json(e) => write!(f, "{e}"),
            BoardError::IndexLayout => f.write_str("index layout: records is not the last member"),
        }
    }
}

impl std::error::Error for BoardError {}

impl From<store::StoreError> for BoardError {
    fn from(e: store::StoreError) -> Self {
        BoardError::Store(e)
    }
}

impl From<serde_json::Error> for BoardError {
    fn from(e: serde_json::Error) -> Self {
        BoardError::Json(e)
    }
}

/// `board/index.json`, what `scan --json` prints: the pass's summary, then its records (the
/// last member).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Index<'a> {
    version: u32,
    scanned_at: String,
    counts: BTreeMap<&'static str, usize>,
    waiting_on_you: Vec<SeatKey>,
    seen: Vec<SeatKey>,
    registered: &'a [SeatKey],
    registration_stale: &'a [SeatKey],
    registration_errors: &'a [String],
    discovery_errors: &'a [PassError],
    errors: &'a [PassError],
    truncated: bool,
    roster: Roster<'a>,
    usage: &'a UsageView,
    records: &'a [SeatRecord],
}

/// The index's `roster`: its root, or why there is none.
#[derive(Serialize)]
struct Roster<'a> {
    available: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    root: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
}

/// The index object: the same value `scan --json` prints.
pub(crate) fn index_json(scan: &Scan) -> Value {
    serde_json::to_value(index(scan, &scan.records)).unwrap_or_default()
}

/// The index without its records (`"records": []`, the last member).
pub(crate) fn index_json_head(scan: &Scan) -> Value {
    serde_json::to_value(index_head(scan)).unwrap_or_default()
}

fn index_head(scan: &Scan) -> Index<'_> {
    index(scan, &[])
}

fn index<'a>(scan: &'a Scan, records: &'a [SeatRecord]) -> Index<'a> {
    let waiting: Vec<SeatKey> = scan
        .records
        .iter()
        .filter(|r| r.waiting_on_you)
        .map(|r| r.key())
        .collect();
    let seen: Vec<SeatKey> = scan
        .records
        .iter()
        .filter(|r| r.seen)
        .map(|r| r.key())
        .collect();
    let roster = match &scan.snapshot.roster {
        RosterStatus::Available { root } => Roster {
            available: true,
            root: Some(root),
            code: None,
            reason: None,
        },
        RosterStatus::Unavailable { code, reason } => Roster {
            available: false,
            root: None,
            code: Some(code.as_str()),
            reason: Some(reason),
        },
    };
    Index {
        version: 1,
        scanned_at: format_iso(scan.scanned_at),
        counts: counts(&scan.records),
        waiting_on_you: waiting,
        seen,
        registered: &scan.registered,
        registration_stale: &scan.registration_stale,
        registration_errors: &scan.registration_errors,
        discovery_errors: &scan.discovery_errors,
        errors: &scan.snapshot.errors,
        truncated: scan.snapshot.truncated,
        roster,
        usage: &scan.snapshot.usage,
        records,
    }
}

/// A folder or file name for a project or agent: the name itself when it is plainly safe, else a
/// cleaned name with a short hash so two different names never share a file.
pub(crate) fn file_name_for(name: &str) -> String {
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

/// What one board write did.
pub(crate) struct Written {
    /// The board folder.
    pub board: PathBuf,
    /// The text of `board/index.json` (what `scan --json` prints).
    pub index_text: String,
}

/// Write every board file atomically. Returns the board folder.
pub(crate) fn write_board(scan: &Scan) -> Result<PathBuf, BoardError> {
    write_board_text(scan).map(|w| w.board)
}

/// Write the board: each seat's file only when its content changed (see `same_but_volatile`),
/// `board/index.json` every pass. Each record is serialized once; the index text reuses it.
pub(crate) fn write_board_text(scan: &Scan) -> Result<Written, BoardError> {
    let root = &scan.data_root;
    let board = root.join("board");
    let sessions = board.join("sessions");
    store::ensure_dir(root, &sessions)?;
    // Folders checked once per pass, not once per file.
    let mut checked: HashSet<PathBuf> = HashSet::new();
    let mut texts = Vec::with_capacity(scan.records.len());
    for rec in &scan.records {
        let dir = sessions.join(file_name_for(&rec.project));
        if !checked.contains(&dir) {
            store::ensure_dir(root, &dir)?;
            checked.insert(dir.clone());
        }
        let path = dir.join(format!("{}.json", file_name_for(&rec.agent)));
        let text = super::json::to_string_pretty(rec)?;
        if !on_disk_matches(&path, &text) {
            let mut bytes = Vec::with_capacity(text.len() + 1);
            bytes.extend_from_slice(text.as_bytes());
            bytes.push(b'\n');
            store::write_atomic_derived(&path, &bytes)?;
        }
        texts.push(text);
    }
    let index_text = index_text_with(scan, &texts)?;
    let mut bytes = Vec::with_capacity(index_text.len() + 1);
    bytes.extend_from_slice(index_text.as_bytes());
    bytes.push(b'\n');
    store::write_atomic(&board.join("index.json"), &bytes)?;
    Ok(Written { board, index_text })
}

/// The pretty index text, with the records' own pretty texts spliced in (indented by the two
/// levels they sit at), so each record is serialized once. Same bytes as `index_json` printed.
fn index_text_with(scan: &Scan, record_texts: &[String]) -> Result<String, BoardError> {
    splice_records(
        &super::json::to_string_pretty(&index_head(scan))?,
        record_texts,
    )
}

/// `head` is a pretty object whose last member is `"records": []`.
fn splice_records(head: &str, record_texts: &[String]) -> Result<String, BoardError> {
    const EMPTY: &str = "\n  \"records\": []\n}";
    let Some(stem) = head.strip_suffix(EMPTY) else {
        return Err(BoardError::IndexLayout);
    };
    if record_texts.is_empty() {
        return Ok(head.to_string());
    }
    let total: usize = record_texts.iter().map(|t| t.len() + t.len() / 8).sum();
    let mut out = String::with_capacity(stem.len() + total + 32);
    out.push_str(stem);
    out.push_str("\n  \"records\": [");
    for (i, t) in record_texts.iter().enumerate() {
        out.push_str(if i == 0 { "\n" } else { ",\n" });
        for (j, line) in t.split('\n').enumerate() {
            if j > 0 {
                out.push('\n');
            }
            out.push_str("    ");
            out.push_str(line);
        }
    }
    out.push_str("\n  ]\n}");
    Ok(out)
}

/// Top-level and nested keys whose values follow from the pass's clock alone: `scannedAt`, and
/// ages (`scannedAt` minus a timestamp kept in the same record). A seat file that differs only in
/// these is not rewritten, so it keeps the `scannedAt` (and the ages as of it) of the pass that
/// last changed it.
const VOLATILE: [&str; 3] = ["scannedAt", "ageSeconds", "observationAgeSeconds"];

/// Whether a record's member `key` follows from the pass's clock alone (the stream of
/// `--watch` compares records by the same rule).
pub(crate) fn is_volatile(key: &str) -> bool {
    VOLATILE.contains(&key)
}

/// Whether a pretty JSON line (indent trimmed) starts with the member `key`.
fn starts_with_member(line: &str, key: &str) -> bool {
    line.strip_prefix('"')
        .and_then(|l| l.strip_prefix(key))
        .is_some_and(|l| l.starts_with("\": "))
}

/// Whether the file at `path` already holds `new` (plus the final newline), clock-derived
/// values aside. Read bounded: a file much larger than the new text cannot match.
fn on_disk_matches(path: &Path, new: &str) -> bool {
    let cap = new.len() as u64 + 1024;
    store::current(path, cap).is_some_and(|old| {
        std::str::from_utf8(&old).is_ok_and(|old| {
            old.strip_suffix('\n')
                .is_some_and(|old| same_but_volatile(old, new))
        })
    })
}

/// Line by line (pretty JSON: every member on its own line; a string never holds a raw newline
/// and a `"` inside one is escaped, so a line starting with `"key": ` is that key): equal, or
/// the same volatile key on both sides.
fn same_but_volatile(old: &str, new: &str) -> bool {
    let mut a = old.split('\n');
    let mut b = new.split('\n');
    loop {
        match (a.next(), b.next()) {
            (None, None) => return true,
            (Some(x), Some(y)) if x == y => {}
            (Some(x), Some(y)) => {
                let (xt, yt) = (x.trim_start_matches(' '), y.trim_start_matches(' '));
                let indent_same = x.len() - xt.len() == y.len() - yt.len();
                let volatile = VOLATILE
                    .iter()
                    .any(|k| starts_with_member(xt, k) && starts_with_member(yt, k));
                if !(indent_same && volatile) {
                    return false;
                }
            }
            _ => return false,
        }
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

    #[test]
    fn spliced_records_give_the_same_text_as_the_whole_value() {
        let recs = [
            serde_json::json!({"agent": "a\u{9b}", "n": [], "o": {}, "x": {"y": [1, {"z": null}]}}),
            serde_json::json!({"agent": "b", "scannedAt": "t"}),
        ];
        for n in 0..=recs.len() {
            let head = serde_json::json!({"version": 1, "e": [], "records": []});
            let mut whole = head.clone();
            whole["records"] = serde_json::Value::Array(recs[..n].to_vec());
            let texts: Vec<String> = recs[..n]
                .iter()
                .map(|r| crate::views::json::to_string_pretty(r).unwrap())
                .collect();
            let head = crate::views::json::to_string_pretty(&head).unwrap();
            assert_eq!(
                splice_records(&head, &texts).unwrap(),
                crate::views::json::to_string_pretty(&whole).unwrap()
            );
        }
        assert!(splice_records("{\n  \"records\": [],\n  \"x\": 1\n}", &[]).is_err());
    }

    #[test]
    fn only_clock_values_may_differ() {
        let a = "{\n  \"a\": 1,\n  \"ageSeconds\": 5,\n  \"i\": {\n    \"observationAgeSeconds\": null\n  },\n  \"scannedAt\": \"t1\"\n}";
        let b = "{\n  \"a\": 1,\n  \"ageSeconds\": 65,\n  \"i\": {\n    \"observationAgeSeconds\": 3\n  },\n  \"scannedAt\": \"t2\"\n}";
        assert!(same_but_volatile(a, b));
        assert!(!same_but_volatile(a, &b.replace("\"a\": 1", "\"a\": 2")));
        assert!(!same_but_volatile(
            a,
            &b.replace("\"ageSeconds\"", "\"age\"")
        ));
        assert!(!same_but_volatile(a, &format!("{b}\n")));
        assert!(!same_but_volatile(
            a,
            &b.replace("  \"ageSeconds", "   \"ageSeconds")
        ));
        // A string value that merely contains the key text is not the key.
        let c = "{\n  \"t\": \"\\\"scannedAt\\\": 1\"\n}";
        let d = "{\n  \"t\": \"\\\"scannedAt\\\": 2\"\n}";
        assert!(!same_but_volatile(c, d));
    }
}
