//! Worker reports (docs/interop.md §3): `<root>/.pi-intercom/reports/<sha256(sessionId)>.json`.
//!
//! Why look up by configured id instead of listing the folder: only configured workers' reports
//! mean anything, and hashing the id we already trust means a file can only speak for the session
//! it was named for (its embedded `sessionId` must match too). Unsafe, oversized or invalid files
//! are skipped with a fixed error code; absence is not proof that no blocker exists.

use std::collections::HashMap;
use std::path::Path;

use crate::evidence::log_line::Fields;
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::clock::{parse_iso, Ms};
use crate::evidence::memo::Memo;
use crate::fsguard::{self, FsError, SettledKey};
use crate::states::ReportStatus;

/// Most session ids looked up per pass.
pub(crate) const MAX_REPORTS: usize = 256;
/// Largest accepted report file, in bytes.
pub(crate) const MAX_REPORT_BYTES: u64 = 8 * 1024;
/// Longest accepted summary, in characters.
pub(crate) const MAX_SUMMARY_CHARS: usize = 2000;

/// One validated report. `summary` is raw text: views sanitize it before showing it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// The worker's session id (equal to the id the file name was computed from).
    pub session_id: String,
    /// Explicit status; `Clear` is a tombstone that projects as "no report".
    pub status: ReportStatus,
    /// Public worker-authored summary (empty for a tombstone).
    pub summary: String,
    /// When the worker wrote it.
    pub updated_at: Ms,
}

/// Reports of configured workers, keyed by session id, plus fixed error codes (each once):
/// `reports_unavailable`, `report_read_failed`, `report_invalid`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ReportSet {
    /// Valid reports (tombstones included), keyed by session id.
    pub reports: HashMap<String, Report>,
    /// Fixed error codes, each at most once.
    pub errors: Vec<&'static str>,
}

impl ReportSet {
    /// The report for a session id, tombstones excluded.
    pub fn active(&self, session_id: &str) -> Option<&Report> {
        self.reports
            .get(session_id)
            .filter(|r| r.status != ReportStatus::Clear)
    }

    fn error(&mut self, code: &'static str) {
        if !self.errors.contains(&code) {
            self.errors.push(code);
        }
    }
}

/// File name for a session id: lowercase hex SHA-256 of its UTF-8 bytes, plus `.json`.
pub fn report_file_name(session_id: &str) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digest = Sha256::digest(session_id.as_bytes());
    let mut s = String::with_capacity(69);
    for b in digest {
        s.push(char::from(HEX[usize::from(b >> 4)]));
        s.push(char::from(HEX[usize::from(b & 0xf)]));
    }
    s.push_str(".json");
    s
}

/// Read the reports of `session_ids` (the configured workers; only the first 256 are looked up),
/// reusing what `memo` kept of files unchanged since (the sidebar reads every worker's each pass).
pub fn read_reports(root: &Path, session_ids: &[&str], memo: Option<&ReportMemo>) -> ReportSet {
    let mut set = ReportSet::default();
    let dir = crate::paths::reports_dir(root);
    match fsguard::check_under(root, &dir) {
        Ok(()) => {}
        // No report was ever written.
        Err(FsError::NotFound) => return set,
        Err(_) => {
            set.error("reports_unavailable");
            return set;
        }
    }
    if fsguard::kind(&dir) != Ok(fsguard::Kind::Dir) {
        set.error("reports_unavailable");
        return set;
    }
    let mut seen = std::collections::HashSet::new();
    for id in session_ids.iter().take(MAX_REPORTS) {
        if !seen.insert(*id) {
            continue;
        }
        let path = dir.join(report_file_name(id));
        let read = match read_one(&path, id, memo) {
            Ok(r) => r,
            Err(FsError::NotFound) => continue,
            Err(_) => {
                set.error("report_read_failed");
                continue;
            }
        };
        match read {
            Some(r) => {
                set.reports.insert((*id).to_string(), r);
            }
            None => set.error("report_invalid"),
        }
    }
    set
}

/// Reports of files that did not change since they were read, with the session id they were
/// checked against.
pub(crate) type ReportMemo = Memo<(SettledKey, String), Option<Report>>;

/// Report files a `ReportMemo` keeps.
pub(crate) const REPORTS_KEPT: usize = 2 * MAX_REPORTS;

/// One report file, validated (`None`: it is not a valid report for `id`).
fn read_one(path: &Path, id: &str, memo: Option<&ReportMemo>) -> Result<Option<Report>, FsError> {
    Memo::read_through(
        memo,
        path,
        || Some((fsguard::settled_key_at(path)?, id.to_string())),
        || {
            Ok(parse_report(
                &fsguard::read_capped(path, MAX_REPORT_BYTES)?,
                id,
            ))
        },
    )
}

/// Validate one report file's bytes against the session id its name was computed from.
pub fn parse_report(bytes: &[u8], expected_session_id: &str) -> Option<Report> {
    const FIELDS: [&str; 5] = ["version", "sessionId", "status", "summary", "updatedAt"];
    let o = Fields::parse_named(bytes, &FIELDS)?;
    if o.u64("version")? != 1 {
        return None;
    }
    let session_id = o.str("sessionId")?;
    if session_id != expected_session_id {
        return None;
    }
    let status = ReportStatus::parse(&o.str("status")?)?;
    let summary = o.str("summary")?;
    if summary.chars().count() > MAX_SUMMARY_CHARS {
        return None;
    }
    if status != ReportStatus::Clear && summary.trim().is_empty() {
        return None;
    }
    let updated_at = parse_iso(&o.str("updatedAt")?)?;
    Some(Report {
        session_id: session_id.to_string(),
        status,
        summary: summary.to_string(),
        updated_at,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_name_is_sha256_hex() {
        // Matches the fixture's file for this id.
        assert_eq!(
            report_file_name("01a2f000-0000-7000-8000-0000000000b2"),
            "62e30f87602194e4120b4de9cf3bee88b76bf3c2c4cef716f683be3dc7f2f655.json"
        );
    }

    #[test]
    fn validation() {
        let ok = br#"{"version":1,"sessionId":"s","status":"blocked","summary":"x","updatedAt":"2026-11-29T10:00:00.000Z"}"#;
        assert_eq!(parse_report(ok, "s").unwrap().status, ReportStatus::Blocked);
        assert!(parse_report(ok, "t").is_none());
        let blank = br#"{"version":1,"sessionId":"s","status":"blocked","summary":" ","updatedAt":"2026-11-29T10:00:00.000Z"}"#;
        assert!(parse_report(blank, "s").is_none());
        let clear = br#"{"version":1,"sessionId":"s","status":"clear","summary":"","updatedAt":"2026-11-29T10:00:00.000Z"}"#;
        assert_eq!(
            parse_report(clear, "s").unwrap().status,
            ReportStatus::Clear
        );
        let bad_status = br#"{"version":1,"sessionId":"s","status":"done","summary":"x","updatedAt":"2026-11-29T10:00:00.000Z"}"#;
        assert!(parse_report(bad_status, "s").is_none());
        let long = format!(
            r#"{{"version":1,"sessionId":"s","status":"blocked","summary":"{}","updatedAt":"2026-11-29T10:00:00.000Z"}}"#,
            "é".repeat(2001)
        );
        assert!(parse_report(long.as_bytes(), "s").is_none());
        assert!(parse_report(b"\xff\xfe{", "s").is_none());
    }
}
