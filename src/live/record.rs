//! Each running live view's health, in `<data root>/live/<pid>.json` (written when it changes,
//! removed when the view ends), so `doctor` can say how the sidebar and the watches watch: by
//! events, or by full passes every few seconds because a limit was reached, and when the kernel
//! last dropped events.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::engine::Health;
use crate::proc::ProcIdentity;

/// Largest health record read back.
const CAP: u64 = 64 * 1024;
/// Most records `doctor` looks at.
const MAX_RECORDS: usize = 64;

/// One live view's record.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LiveRecord {
    pub version: u32,
    /// The view's process (the record counts only while it lives).
    pub process: ProcIdentity,
    /// `monitor`, `status`, `scan`.
    pub command: String,
    pub updated_at: String,
    pub health: serde_json::Value,
}

/// `<data root>/live`.
pub(crate) fn dir(data_root: &Path) -> PathBuf {
    data_root.join("live")
}

/// This process's record path.
pub(crate) fn own_path(data_root: &Path) -> PathBuf {
    dir(data_root).join(format!("{}.json", std::process::id()))
}

/// Write this process's record (best effort: a view that cannot write it still runs).
pub(crate) fn write(data_root: &Path, health: &Health) {
    let Some(process) = crate::proc::identity(std::process::id() as i32) else {
        return;
    };
    let rec = LiveRecord {
        version: 1,
        process,
        command: std::env::args().nth(1).unwrap_or_default(),
        updated_at: crate::clock::format_iso(crate::clock::Clock::now_ms(
            &crate::clock::SystemClock,
        )),
        health: serde_json::to_value(health).unwrap_or_default(),
    };
    let Ok(text) = crate::views::json::to_string_pretty(&rec) else {
        return;
    };
    if crate::store::ensure_dir(data_root, &dir(data_root)).is_ok() {
        prune(data_root);
        let _ = crate::store::write_atomic_derived(&own_path(data_root), text.as_bytes());
    }
}

/// Remove the records of views that ended without removing theirs (killed, or a process that
/// exits without running destructors): a record names its process, so a dead one is known.
fn prune(data_root: &Path) {
    let d = dir(data_root);
    let Ok(list) = crate::fsguard::list_dir(&d, MAX_RECORDS * 4) else {
        return;
    };
    for e in list
        .entries
        .iter()
        .filter(|e| e.kind == crate::fsguard::Kind::File)
    {
        let p = d.join(&e.name);
        let dead = crate::fsguard::read_capped(&p, CAP)
            .ok()
            .and_then(|b| serde_json::from_slice::<LiveRecord>(&b).ok())
            .is_some_and(|r| !crate::proc::is_alive(&r.process));
        if dead {
            let _ = crate::store::remove_file(&p);
        }
    }
}

/// Remove this process's record.
pub(crate) fn remove(data_root: &Path) {
    let _ = crate::store::remove_file(&own_path(data_root));
}

/// The records of live views that still run (dead ones are left alone and not shown).
pub(crate) fn running(data_root: &Path) -> Vec<LiveRecord> {
    let Ok(list) = crate::fsguard::list_dir(&dir(data_root), MAX_RECORDS * 4) else {
        return Vec::new();
    };
    let mut out: Vec<LiveRecord> = list
        .entries
        .iter()
        .filter(|e| e.kind == crate::fsguard::Kind::File)
        .filter_map(|e| crate::fsguard::read_capped(&dir(data_root).join(&e.name), CAP).ok())
        .filter_map(|b| serde_json::from_slice::<LiveRecord>(&b).ok())
        .filter(|r| crate::proc::is_alive(&r.process))
        .take(MAX_RECORDS)
        .collect();
    out.sort_by_key(|r| r.process.pid);
    out
}
