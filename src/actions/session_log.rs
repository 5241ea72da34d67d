//! A per-session log of our own under the data root, `<dataRoot>/<folder>/<sessionId>.jsonl`:
//! one JSON line per record, appended (never failing the action it records), rotated to `.1` at
//! a cap, read back bounded with lines that are not of the type skipped. The reply path's
//! sender records (`reply::sent`) and the worker events (`worker_events`) are kept this way.

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::Serialize;

/// A session id that is a plain file name (what the per-session records are kept under).
pub(crate) fn plain_id(session_id: &str) -> bool {
    !session_id.is_empty()
        && session_id.len() <= 128
        && session_id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        && !session_id.starts_with('-')
}

/// One log: its folder under the data root and its cap.
pub(crate) struct SessionLog {
    pub folder: &'static str,
    /// The current file rotates at this size (the previous one is kept as `.1`).
    pub cap: u64,
}

impl SessionLog {
    /// The most read of the current and the previous file together.
    fn read_max(&self) -> u64 {
        2 * self.cap + 4096
    }

    /// `<dataRoot>/<folder>/<sessionId>.jsonl`; none for an id that is not a plain file name.
    fn path(&self, data_root: &Path, session_id: &str) -> Option<PathBuf> {
        plain_id(session_id).then(|| {
            data_root
                .join(self.folder)
                .join(format!("{session_id}.jsonl"))
        })
    }

    /// Append one record (best effort: never fails what it records).
    pub(crate) fn append<T: Serialize>(&self, data_root: &Path, session_id: &str, rec: &T) {
        let Some(p) = self.path(data_root, session_id) else {
            return;
        };
        let Some(dir) = p.parent() else { return };
        if crate::store::ensure_dir(data_root, dir).is_err() {
            return;
        }
        if let Ok(mut line) = serde_json::to_vec(rec) {
            line.push(b'\n');
            let _ = crate::store::append_line_capped(&p, &line, self.cap);
        }
    }

    /// The records of a session, in file order (the previous file's, then the current one's).
    pub(crate) fn read<T: DeserializeOwned>(&self, data_root: &Path, session_id: &str) -> Vec<T> {
        let Some(p) = self.path(data_root, session_id) else {
            return Vec::new();
        };
        let mut old = p.as_os_str().to_owned();
        old.push(".1");
        let mut out = Vec::new();
        for f in [PathBuf::from(old), p] {
            let Ok(bytes) = crate::fsguard::read_capped(&f, self.read_max()) else {
                continue;
            };
            out.extend(
                bytes
                    .split(|b| *b == b'\n')
                    .filter_map(|l| serde_json::from_slice::<T>(l).ok()),
            );
        }
        out
    }
}
