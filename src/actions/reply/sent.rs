//! Who sent what a pi received: `<dataRoot>/replies/<sessionId>.jsonl`, one line per text the
//! reply path handed over (delivered, queued or unconfirmed), with who asked for it (the
//! sidebar, `reply`, the coordinator's `intercom_reply`, close-worker's handoff request, spawn's
//! first task) and the text's SHA-256 — not the text: pi's session file has that.
//!
//! Why a record of our own: pi records the text alone, byte for byte the same whichever path
//! carried it, so `log NAME` cannot tell from the session who answered a question. Recording never
//! fails a reply (a record that cannot be written is skipped); reading is bounded, and a line
//! that is not one of ours is ignored.

use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::actions::session_log::SessionLog;
use crate::clock::Ms;
use crate::evidence::sessions::timeline::Sender;

/// The log of one session rotates at this size (the previous one is kept as `.1`).
const CAP: u64 = 256 * 1024;

/// One text handed to a pi.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SentRecord {
    pub version: u32,
    #[serde(with = "crate::clock::iso_ms")]
    pub at: Ms,
    pub from: Sender,
    pub transport: String,
    pub outcome: String,
    /// SHA-256 of the text as pi received it (lowercase hex).
    pub sha256: String,
}

/// The text's digest as records hold it.
pub(crate) fn digest(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `<dataRoot>/replies/<sessionId>.jsonl`.
const LOG: SessionLog = SessionLog {
    folder: "replies",
    cap: CAP,
};

/// Append one record (best effort: never fails the reply it records).
pub(crate) fn record(data_root: &Path, session_id: &str, rec: &SentRecord) {
    LOG.append(data_root, session_id, rec);
}

/// The records of a session, oldest first (the previous log's, then the current one's).
pub(crate) fn read(data_root: &Path, session_id: &str) -> Vec<SentRecord> {
    LOG.read(data_root, session_id)
}

/// Who sent a message pi recorded at `at` with digest `sha`: the newest record of that text
/// made before it (pi writes a queued text when the running turn ends, so later; the clocks are
/// one machine's, with a few seconds allowed), within a day.
pub(crate) fn sender_of<'a>(
    records: &'a [SentRecord],
    sha: &str,
    at: Ms,
) -> Option<&'a SentRecord> {
    const SLACK: Ms = 5_000;
    const WINDOW: Ms = 86_400_000;
    records
        .iter()
        .filter(|r| r.sha256 == sha && r.at <= at + SLACK && r.at >= at - WINDOW)
        .max_by_key(|r| r.at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_read_back_and_match_the_text_they_sent() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let rec = |at: Ms, from: Sender, text: &str| SentRecord {
            version: 1,
            at,
            from,
            transport: "channel".into(),
            outcome: "delivered".into(),
            sha256: digest(text),
        };
        record(root, "s-1", &rec(1_000, Sender::Sidebar, "yes"));
        record(root, "s-1", &rec(60_000, Sender::Reply, "yes"));
        record(root, "s-1", &rec(90_000, Sender::CoordinatorTool, "no"));
        // Ids that are no plain name are never a path.
        record(root, "../x", &rec(1, Sender::Reply, "yes"));
        record(root, "-x", &rec(1, Sender::Reply, "yes"));
        assert!(!root.join("x.jsonl").exists() && !root.join("replies/-x.jsonl").exists());
        std::fs::write(
            root.join("replies/s-1.jsonl.1"),
            "garbage\n{\"version\":1}\n",
        )
        .unwrap();
        let got = read(root, "s-1");
        assert_eq!(got.len(), 3);
        let yes = digest("yes");
        assert_eq!(sender_of(&got, &yes, 61_000).unwrap().from, Sender::Reply);
        // Queued: pi wrote it later; a few seconds early is the clocks.
        assert_eq!(sender_of(&got, &yes, 2_000).unwrap().from, Sender::Sidebar);
        assert_eq!(sender_of(&got, &yes, 57_000).unwrap().from, Sender::Reply);
        assert!(sender_of(&got, &yes, -10_000).is_none());
        assert!(sender_of(&got, &digest("maybe"), 61_000).is_none());
    }
}
