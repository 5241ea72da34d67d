//! The only writer of `<data root>/alerts/memory.json` (`alerts::memory`): read, change and write
//! it back under one lock, so that two sidebars or watchers on the same data root never both
//! record the same turn, nor both send it on the same channel.
//!
//! The lock is `store::Lock` (a `flock`: a holder that dies releases it); it is tried again for
//! at most `LOCK_WAIT`, since another watcher holds it only for one small read and write.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::alerts::memory::{Memory, MemoryError, MAX_BYTES};
use crate::clock::Ms;
use crate::fsguard::FsError;
use crate::store::{self, StoreError};

/// Longest wait for another watcher's lock.
const LOCK_WAIT: Duration = Duration::from_secs(2);
/// Pause between tries.
const LOCK_RETRY: Duration = Duration::from_millis(15);

/// The alerts folder under the data root.
pub(crate) fn dir(data_root: &Path) -> PathBuf {
    data_root.join("alerts")
}

/// The memory file.
pub fn path(data_root: &Path) -> PathBuf {
    dir(data_root).join("memory.json")
}

fn lock_path(data_root: &Path) -> PathBuf {
    dir(data_root).join("memory.lock")
}

/// Why the memory could not be read or written.
#[derive(Debug)]
pub(crate) enum MemoryIoError {
    /// The file exists and cannot be read (a link, too large, not ours, …): its fixed code.
    Unreadable(&'static str),
    /// Read, and not a memory file we can use.
    Invalid(MemoryError),
    /// The lock or the write failed.
    Store(StoreError),
}

impl std::fmt::Display for MemoryIoError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MemoryIoError::Unreadable(code) => write!(f, "alert memory unreadable: {code}"),
            MemoryIoError::Invalid(e) => write!(f, "{e}"),
            MemoryIoError::Store(e) => write!(f, "{e}"),
        }
    }
}

/// The memory as it is on disk now (empty when there is none yet). Read without the lock: a
/// reader sees the old or the new whole file.
pub(crate) fn read(data_root: &Path) -> Result<Memory, MemoryIoError> {
    match crate::fsguard::read_trusted(&path(data_root), MAX_BYTES) {
        Ok(bytes) => Memory::parse(&bytes).map_err(MemoryIoError::Invalid),
        Err(FsError::NotFound) => Ok(Memory::default()),
        Err(e) => Err(MemoryIoError::Unreadable(e.code())),
    }
}

/// A cheap fingerprint of the file (inode, length, change time): a reader that kept the last
/// memory reads it again only when this changed.
pub(crate) fn fingerprint(data_root: &Path) -> Option<(u64, u64, i64, i64)> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::symlink_metadata(path(data_root)).ok()?;
    Some((m.ino(), m.len(), m.ctime(), m.ctime_nsec()))
}

/// Lock the memory, read it, let `change` change it, prune, and write it back when it changed.
/// An invalid file (not ours to read as memory, e.g. hand-edited) is replaced by a fresh one
/// built from `change`, and said so in the log: it only ever holds what we wrote; a file we
/// cannot read at all (a link, another user's) is left alone and the update refused.
pub(crate) fn update<R>(
    data_root: &Path,
    now: Ms,
    change: impl FnOnce(&mut Memory) -> R,
) -> Result<(R, Memory), MemoryIoError> {
    store::ensure_dir(data_root, &dir(data_root)).map_err(MemoryIoError::Store)?;
    let _lock = acquire(&lock_path(data_root))?;
    let mut memory = match read(data_root) {
        Ok(m) => m,
        Err(MemoryIoError::Invalid(e)) => {
            crate::log::write(&crate::log::AlertMemoryInvalid {
                detail: e.to_string(),
            });
            Memory::default()
        }
        Err(e) => return Err(e),
    };
    let before = memory.clone();
    let r = change(&mut memory);
    memory.prune(now);
    if memory != before {
        store::write_atomic(&path(data_root), &memory.to_bytes()).map_err(MemoryIoError::Store)?;
    }
    Ok((r, memory))
}

/// The memory's lock, held by the caller (who changes something every watcher shares, such as
/// which boards run: `alerts::boards`).
pub(crate) fn lock(data_root: &Path) -> Result<store::Lock, MemoryIoError> {
    store::ensure_dir(data_root, &dir(data_root)).map_err(MemoryIoError::Store)?;
    acquire(&lock_path(data_root))
}

fn acquire(path: &Path) -> Result<store::Lock, MemoryIoError> {
    let deadline = Instant::now() + LOCK_WAIT;
    loop {
        match store::Lock::acquire(path) {
            Ok(l) => return Ok(l),
            Err(e) if e.code == store::code::StoreCode::Locked && Instant::now() < deadline => {
                std::thread::sleep(LOCK_RETRY);
            }
            Err(e) => return Err(MemoryIoError::Store(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::alerts::{Outcome, Remembered};
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn writes_private_and_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read(dir.path()).unwrap(), Memory::default());
        let (first, m) = update(dir.path(), 1_000, |m| {
            m.record("s", "waiting:e1", Outcome::Alerted, 1_000)
        })
        .unwrap();
        assert!(first && m.handled("s", "waiting:e1"));
        let p = path(dir.path());
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert!(read(dir.path()).unwrap().handled("s", "waiting:e1"));
        let (again, _) = update(dir.path(), 2_000, |m| {
            m.record("s", "waiting:e1", Outcome::Alerted, 2_000)
        })
        .unwrap();
        assert!(!again, "a second recorder learns it was recorded");
    }

    #[test]
    fn many_writers_record_a_turn_once() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        let handles: Vec<_> = (0..8)
            .map(|_| {
                let root = root.clone();
                std::thread::spawn(move || {
                    update(&root, 5, |m| m.record("s", "error:e", Outcome::Alerted, 5))
                        .unwrap()
                        .0
                })
            })
            .collect();
        let firsts = handles
            .into_iter()
            .map(|h| h.join().unwrap())
            .filter(|f| *f)
            .count();
        assert_eq!(firsts, 1);
    }

    #[test]
    fn a_link_is_refused_and_garbage_replaced() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("alerts")).unwrap();
        std::fs::set_permissions(
            dir.path().join("alerts"),
            std::fs::Permissions::from_mode(0o700),
        )
        .unwrap();
        let target = dir.path().join("elsewhere");
        std::fs::write(&target, b"{}").unwrap();
        std::os::unix::fs::symlink(&target, path(dir.path())).unwrap();
        assert!(read(dir.path()).is_err());
        assert!(update(dir.path(), 1, |m| m.know("s", 1)).is_err());
        assert_eq!(std::fs::read(&target).unwrap(), b"{}");
        std::fs::remove_file(path(dir.path())).unwrap();
        std::fs::write(path(dir.path()), b"garbage").unwrap();
        let (_, m) = update(dir.path(), 1, |m| m.know("s", 1)).unwrap();
        assert!(m.knows("s"));
        assert!(read(dir.path()).unwrap().knows("s"));
    }
}
