//! Finding session files by session id in pi's session folders, bounded, links never followed.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::clock::Ms;
use crate::fsguard::{self, FsError, Kind};

// ---------------------------------------------------------------------------------------------
// Discovery.

/// Most top-level session folders indexed.
const MAX_DIRS: usize = 64;
/// Most entries listed per folder.
const MAX_DIR_ENTRIES: usize = 4096;
/// Most per-cwd subfolders visited in all.
const MAX_SUBDIRS: usize = 1024;
/// Most session files indexed in all.
const MAX_FILES: usize = 65_536;

/// Session folders to index: `$PI_CODING_AGENT_SESSION_DIR` (flat) when set, then
/// `$PI_CODING_AGENT_DIR/sessions`, else `~/.pi/agent/sessions`.
pub(crate) fn default_session_dirs() -> Vec<PathBuf> {
    session_dirs_from(|k| std::env::var(k).ok())
}

/// `default_session_dirs` with the environment passed in (testable).
pub fn session_dirs_from(env: impl Fn(&str) -> Option<String>) -> Vec<PathBuf> {
    let set = |k: &str| env(k).filter(|v| !v.is_empty());
    let mut dirs = Vec::new();
    if let Some(d) = set("PI_CODING_AGENT_SESSION_DIR") {
        dirs.push(PathBuf::from(d));
    }
    if let Some(d) = set("PI_CODING_AGENT_DIR") {
        dirs.push(PathBuf::from(d).join("sessions"));
    } else if let Some(h) = set("HOME") {
        dirs.push(PathBuf::from(h).join(".pi").join("agent").join("sessions"));
    }
    dirs
}

/// One indexed session file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexedFile {
    /// Where it is.
    pub path: PathBuf,
    /// Its mtime when listed.
    pub mtime_ms: Ms,
    /// Its length when listed.
    pub len: u64,
}

/// A path that could not be indexed, with a fixed code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexError {
    /// The folder or file refused.
    pub path: PathBuf,
    /// Why it was refused.
    pub error: FsError,
}

/// Session id → newest file named `<anything>_<sessionId>.jsonl`.
#[derive(Debug, Default)]
pub struct SessionIndex {
    /// Session id → its newest file (by mtime, then path).
    pub files: HashMap<String, IndexedFile>,
    /// Some folder had more entries than listed, or a total cap was hit.
    pub truncated: bool,
    /// Folders that could not be listed and session-named entries that are not regular files.
    pub errors: Vec<IndexError>,
}

impl SessionIndex {
    /// The newest file whose name ends with this session id. Confirm with the header's id.
    pub fn find(&self, session_id: &str) -> Option<&Path> {
        self.files.get(session_id).map(|f| f.path.as_path())
    }
}

/// The session id in a file name `<anything>_<sessionId>.jsonl`, if it has that shape.
pub fn session_id_from_name(name: &str) -> Option<&str> {
    let stem = name.strip_suffix(".jsonl")?;
    let (_, id) = stem.rsplit_once('_')?;
    let ok = !id.is_empty()
        && id.len() <= 128
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    ok.then_some(id)
}

/// Index session files directly in each folder or one level down, bounded; links never followed.
pub fn index_sessions(dirs: &[PathBuf]) -> SessionIndex {
    let mut idx = SessionIndex::default();
    if dirs.len() > MAX_DIRS {
        idx.truncated = true;
    }
    let mut subdirs_left = MAX_SUBDIRS;
    for dir in dirs.iter().take(MAX_DIRS) {
        let listing = match fsguard::list_dir(dir, MAX_DIR_ENTRIES) {
            Ok(l) => l,
            Err(e) => {
                idx.errors.push(IndexError {
                    path: dir.clone(),
                    error: e,
                });
                continue;
            }
        };
        idx.truncated |= listing.truncated;
        let mut subs = Vec::new();
        for ent in &listing.entries {
            if ent.kind == Kind::Dir {
                subs.push(dir.join(&ent.name));
            } else {
                add_file(&mut idx, dir, ent);
            }
        }
        for sub in subs {
            if subdirs_left == 0 {
                idx.truncated = true;
                break;
            }
            subdirs_left -= 1;
            match fsguard::list_dir(&sub, MAX_DIR_ENTRIES) {
                Ok(l) => {
                    idx.truncated |= l.truncated;
                    for ent in &l.entries {
                        if ent.kind != Kind::Dir {
                            add_file(&mut idx, &sub, ent);
                        }
                    }
                }
                Err(e) => idx.errors.push(IndexError {
                    path: sub,
                    error: e,
                }),
            }
        }
    }
    idx
}

fn add_file(idx: &mut SessionIndex, dir: &Path, ent: &fsguard::Entry) {
    let Some(id) = ent.name_str().and_then(session_id_from_name) else {
        return;
    };
    let path = dir.join(&ent.name);
    if ent.kind != Kind::File {
        let error = match ent.kind {
            Kind::Link => FsError::Link,
            Kind::Fifo => FsError::Fifo,
            Kind::Device => FsError::Device,
            Kind::Socket => FsError::Socket,
            _ => FsError::NotRegular,
        };
        idx.errors.push(IndexError { path, error });
        return;
    }
    if idx.files.len() >= MAX_FILES && !idx.files.contains_key(id) {
        idx.truncated = true;
        return;
    }
    let cand = IndexedFile {
        path,
        mtime_ms: ent.mtime_ms,
        len: ent.len,
    };
    match idx.files.get(id) {
        Some(old) if (old.mtime_ms, &old.path) >= (cand.mtime_ms, &cand.path) => {}
        _ => {
            idx.files.insert(id.to_string(), cand);
        }
    }
}

/// Most per-cwd subfolders of one seat's sessions folder looked into.
const MAX_SEAT_SUBDIRS: usize = 64;

/// The newest `*.jsonl` regular file of one seat's sessions folder, read as pi lays it out: the
/// folder itself (`--session-dir`, `PI_CODING_AGENT_SESSION_DIR`: flat) and its per-cwd
/// subfolders `--<cwd>--/` (an agent folder's `sessions/`), one level down. Newest by name, then
/// mtime (pi names start with the ISO start time, so names from different subfolders compare by
/// time). Links and other non-regular entries are ignored, linked subfolders are not entered.
/// Bounded: ≤ 4096 entries listed per folder, ≤ 64 subfolders.
pub fn newest_session_in(dir: &Path) -> Result<Option<PathBuf>, FsError> {
    let listing = fsguard::list_dir(dir, MAX_DIR_ENTRIES)?;
    let mut best = newest_of(dir, &listing.entries);
    let mut subs: Vec<&fsguard::Entry> = listing
        .entries
        .iter()
        .filter(|e| e.kind == Kind::Dir)
        .collect();
    // The most recently changed folders first: the one pi writes into now is among them.
    subs.sort_by(|a, b| b.mtime_ms.cmp(&a.mtime_ms).then(a.name.cmp(&b.name)));
    for sub in subs.into_iter().take(MAX_SEAT_SUBDIRS) {
        let path = dir.join(&sub.name);
        // A subfolder that cannot be listed holds nothing we can read; the others still count.
        let Ok(l) = fsguard::list_dir(&path, MAX_DIR_ENTRIES) else {
            continue;
        };
        let cand = newest_of(&path, &l.entries);
        if cand.as_ref().map(|c| (&c.0, c.1)) > best.as_ref().map(|b| (&b.0, b.1)) {
            best = cand;
        }
    }
    Ok(best.map(|(name, _, dir)| dir.join(name)))
}

/// The newest `*.jsonl` regular file among `entries` of `dir`: (name, mtime, dir).
fn newest_of(dir: &Path, entries: &[fsguard::Entry]) -> Option<(String, Ms, PathBuf)> {
    entries
        .iter()
        .filter(|e| e.kind == Kind::File)
        .filter_map(|e| {
            let n = e.name_str()?;
            n.ends_with(".jsonl").then_some((n, e.mtime_ms))
        })
        .max()
        .map(|(n, m)| (n.to_string(), m, dir.to_path_buf()))
}
