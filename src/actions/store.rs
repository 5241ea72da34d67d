//! The one place that writes files: exclusive temp file (mode 0600, no-follow), write, fsync,
//! rename over the target, fsync the folder. Lock files by exclusive create.
//!
//! Why: a reader (another intercom-pane, the Intercom extension, a person with `cat`) must only
//! ever see the old or the new whole file, and we must never write through a planted link.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

#[derive(Debug)]
pub struct StoreError {
    pub code: &'static str,
    pub path: PathBuf,
    pub detail: String,
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: cannot write {}: {}",
            self.code,
            self.path.display(),
            self.detail
        )
    }
}

impl std::error::Error for StoreError {}

fn err(code: &'static str, path: &Path, e: impl std::fmt::Display) -> StoreError {
    StoreError {
        code,
        path: path.to_path_buf(),
        detail: e.to_string(),
    }
}

/// Create `dir` (and parents) with mode 0700 when missing; refuse when any existing component
/// below `base` is a link or not a folder.
pub fn ensure_dir(base: &Path, dir: &Path) -> Result<(), StoreError> {
    let rel = dir
        .strip_prefix(base)
        .map_err(|_| err("path_outside_root", dir, "not under its root"))?;
    let mut cur = base.to_path_buf();
    for c in rel.components() {
        cur.push(c);
        match crate::fsguard::kind(&cur) {
            Ok(crate::fsguard::Kind::Dir) => {}
            Ok(_) => {
                return Err(err(
                    "not_directory",
                    &cur,
                    "exists and is not a real folder",
                ))
            }
            Err(crate::fsguard::FsError::NotFound) => {
                std::fs::DirBuilder::new()
                    .mode(0o700)
                    .create(&cur)
                    .or_else(|e| {
                        if e.kind() == std::io::ErrorKind::AlreadyExists {
                            Ok(())
                        } else {
                            Err(e)
                        }
                    })
                    .map_err(|e| err("mkdir_failed", &cur, e))?;
            }
            Err(e) => return Err(err(e.code(), &cur, "cannot use as a folder")),
        }
    }
    Ok(())
}

/// Create `dir` and any missing parents (new ones mode 0700); the result must be a real folder,
/// not a link. Used for the default data root, whose parents may not exist on a new machine.
pub fn create_dir_all_private(dir: &Path) -> Result<(), StoreError> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| err("mkdir_failed", dir, e))?;
    match crate::fsguard::kind(dir) {
        Ok(crate::fsguard::Kind::Dir) => Ok(()),
        Ok(_) => Err(err("not_directory", dir, "exists and is not a real folder")),
        Err(e) => Err(err(e.code(), dir, "cannot use as a folder")),
    }
}

/// Atomically replace `path` with `bytes` (mode 0600), fsynced. The folder must already exist.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    write_replace(path, bytes, true)
}

/// Atomically replace a derived, rewritable file (board records): readers still see the old or
/// the new whole file, but the data is not forced to disk, since the next scan rewrites it.
pub fn write_atomic_derived(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    write_replace(path, bytes, false)
}

fn write_replace(path: &Path, bytes: &[u8], durable: bool) -> Result<(), StoreError> {
    let dir = path
        .parent()
        .ok_or_else(|| err("bad_path", path, "no parent folder"))?;
    let name = path
        .file_name()
        .ok_or_else(|| err("bad_path", path, "no file name"))?;
    match crate::fsguard::kind(path) {
        Ok(crate::fsguard::Kind::File) | Err(crate::fsguard::FsError::NotFound) => {}
        Ok(_) => {
            return Err(err(
                "not_regular",
                path,
                "target exists and is not a regular file",
            ))
        }
        Err(e) => return Err(err(e.code(), path, "cannot inspect target")),
    }
    let tmp = dir.join(format!(
        "{}.{}.tmp",
        name.to_string_lossy(),
        uuid::Uuid::new_v4()
    ));
    let result = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&tmp)
            .map_err(|e| err("create_failed", &tmp, e))?;
        f.write_all(bytes)
            .map_err(|e| err("write_failed", &tmp, e))?;
        if durable {
            f.sync_all().map_err(|e| err("fsync_failed", &tmp, e))?;
        }
        std::fs::rename(&tmp, path).map_err(|e| err("rename_failed", path, e))?;
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
        return result;
    }
    if durable {
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
    }
    Ok(())
}

/// Remove a regular file (never a link's target, never a folder). Missing is fine.
pub fn remove_file(path: &Path) -> Result<(), StoreError> {
    match crate::fsguard::kind(path) {
        Ok(crate::fsguard::Kind::File) => {
            std::fs::remove_file(path).map_err(|e| err("remove_failed", path, e))
        }
        Err(crate::fsguard::FsError::NotFound) => Ok(()),
        Ok(_) => Err(err("not_regular", path, "not a regular file")),
        Err(e) => Err(err(e.code(), path, "cannot inspect")),
    }
}

/// An exclusive lock file, removed on drop.
pub struct Lock {
    path: PathBuf,
}

impl Lock {
    /// Create `path` exclusively (mode 0600), holding this process's pid from its first moment:
    /// the pid is written to a private temp file first, which is then hard-linked to `path`
    /// (`link` fails when anything, even a dangling link, is there). A reader never sees an empty
    /// lock and takes a live holder for a dead one. Fails with `locked` when it already exists.
    pub fn acquire(path: &Path) -> Result<Lock, StoreError> {
        let dir = path
            .parent()
            .ok_or_else(|| err("bad_path", path, "no parent folder"))?;
        let tmp = dir.join(format!(".lock.{}.tmp", uuid::Uuid::new_v4()));
        let made = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&tmp)
            .and_then(|mut f| writeln!(f, "{}", holder_line()));
        if let Err(e) = made {
            let _ = std::fs::remove_file(&tmp);
            return Err(err("lock_failed", path, e));
        }
        let linked = std::fs::hard_link(&tmp, path);
        let _ = std::fs::remove_file(&tmp);
        match linked {
            Ok(()) => Ok(Lock {
                path: path.to_path_buf(),
            }),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                Err(err("locked", path, "another intercom-pane holds this lock"))
            }
            Err(e) => Err(err("lock_failed", path, e)),
        }
    }
}

/// `<pid> <start ticks> <boot id>` of this process (just `<pid>` if /proc cannot say): with the
/// start time, a dead holder whose pid was reused is not taken for alive.
fn holder_line() -> String {
    let pid = std::process::id() as i32;
    match crate::proc::identity(pid) {
        Some(id) => format!("{} {} {}", id.pid, id.start_ticks, id.boot_id),
        None => pid.to_string(),
    }
}

/// Whether the process that wrote a lock file's holder line still runs (same pid, and the same
/// start ticks and boot id when recorded).
pub fn lock_holder_alive(content: &str) -> bool {
    let mut parts = content.split_whitespace();
    let Some(pid) = parts.next().and_then(|p| p.parse::<i32>().ok()) else {
        return false;
    };
    let Some(now) = crate::proc::identity(pid) else {
        return false;
    };
    match (
        parts.next().and_then(|t| t.parse::<u64>().ok()),
        parts.next(),
    ) {
        (Some(ticks), Some(boot)) => now.start_ticks == ticks && now.boot_id == boot,
        _ => true,
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn atomic_write_replaces_and_sets_mode() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a").join("b.json");
        ensure_dir(dir.path(), &dir.path().join("a")).unwrap();
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        // No temp files left behind.
        assert_eq!(std::fs::read_dir(dir.path().join("a")).unwrap().count(), 1);
    }

    #[test]
    fn refuses_to_write_through_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("elsewhere");
        std::fs::write(&target, b"keep").unwrap();
        let link = dir.path().join("x.json");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert_eq!(write_atomic(&link, b"new").unwrap_err().code, "not_regular");
        assert_eq!(std::fs::read(&target).unwrap(), b"keep");
        std::os::unix::fs::symlink(dir.path(), dir.path().join("ln")).unwrap();
        assert!(ensure_dir(dir.path(), &dir.path().join("ln").join("sub")).is_err());
    }

    #[test]
    fn lock_is_exclusive() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.lock");
        let l = Lock::acquire(&p).unwrap();
        assert_eq!(Lock::acquire(&p).err().unwrap().code, "locked");
        drop(l);
        let l = Lock::acquire(&p).unwrap();
        // Born holding the pid (with its start time), mode 0600, no temp file left beside it.
        let line = std::fs::read_to_string(&p).unwrap();
        assert!(
            line.starts_with(&format!("{} ", std::process::id())),
            "{line}"
        );
        assert!(lock_holder_alive(&line));
        // The same pid with another start time is a reused pid: not the holder.
        let mut f: Vec<&str> = line.split_whitespace().collect();
        f[1] = "1";
        assert!(!lock_holder_alive(&f.join(" ")));
        assert!(!lock_holder_alive(""));
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        drop(l);
        // A dangling link where the lock goes is not followed: the lock is refused.
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), &p).unwrap();
        assert_eq!(Lock::acquire(&p).err().unwrap().code, "locked");
        assert!(!dir.path().join("elsewhere").exists());
    }
}
