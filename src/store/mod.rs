//! The one place that writes files: an unnamed temp file (`O_TMPFILE`, mode 0600; else an
//! exclusive no-follow one), write, fsync, name it after its writer and inode (so a dead writer's
//! leftover is provably ours and removed; `store/temps.rs`), rename over the target, fsync the
//! folder. Locks are `flock`s on lock files.
//!
//! Why: a reader (another intercom-pane, the Intercom extension, a person with `cat`) must only
//! ever see the old or the new whole file, and we must never write through a planted link.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::fsguard::FsError;
use code::StoreCode;

pub(crate) mod code;
mod temps;

pub(crate) use temps::{
    ignore_state, ignored_lines, on_ignore_problem, quiet_warnings, IgnoreState,
};

#[derive(Debug)]
pub struct StoreError {
    pub code: StoreCode,
    pub path: PathBuf,
    pub detail: String,
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: cannot write {}: {}",
            self.code,
            crate::text::sanitize(&self.path.display().to_string()),
            crate::text::sanitize(&self.detail)
        )
    }
}

impl std::error::Error for StoreError {}

fn err(code: StoreCode, path: &Path, e: impl std::fmt::Display) -> StoreError {
    StoreError {
        code,
        path: path.to_path_buf(),
        detail: e.to_string(),
    }
}

/// Create `dir` (and parents) with mode 0700 when missing; refuse when any existing component
/// below `base` is a link or not a folder, or (`fsguard::trusted`) is not this user's or is
/// writable by group or others: a state folder someone else made or can change is never written
/// into. `.pi-intercom/` itself is Intercom's shared folder and exempt (`doctor` reports a
/// group- or world-writable one).
pub fn ensure_dir(base: &Path, dir: &Path) -> Result<(), StoreError> {
    let rel = dir
        .strip_prefix(base)
        .map_err(|_| err(StoreCode::PathOutsideRoot, dir, "not under its root"))?;
    let mut cur = base.to_path_buf();
    for c in rel.components() {
        cur.push(c);
        match crate::fsguard::kind(&cur) {
            Ok(crate::fsguard::Kind::Dir) if c.as_os_str() == crate::paths::STATE_DIR => {}
            Ok(crate::fsguard::Kind::Dir) => {
                if let Err(e) = crate::fsguard::trusted_dir(&cur) {
                    let why = crate::fsguard::trust_reason(e, crate::fsguard::owner_of(&cur));
                    return Err(err(StoreCode::Fs(e), &cur, why));
                }
            }
            Ok(_) => {
                return Err(err(
                    StoreCode::Fs(FsError::NotDirectory),
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
                    .map_err(|e| err(StoreCode::MkdirFailed, &cur, e))?;
            }
            Err(e) => return Err(err(StoreCode::Fs(e), &cur, "cannot use as a folder")),
        }
    }
    Ok(())
}

/// Create `dir` and any missing parents (new ones mode 0700); the result must be a real folder,
/// not a link. Used for the default data root, whose parents may not exist on a new machine.
pub(crate) fn create_dir_all_private(dir: &Path) -> Result<(), StoreError> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| err(StoreCode::MkdirFailed, dir, e))?;
    match crate::fsguard::kind(dir) {
        Ok(crate::fsguard::Kind::Dir) => Ok(()),
        Ok(_) => Err(err(
            StoreCode::Fs(FsError::NotDirectory),
            dir,
            "exists and is not a real folder",
        )),
        Err(e) => Err(err(StoreCode::Fs(e), dir, "cannot use as a folder")),
    }
}

/// What `path` holds now, if it is a regular file of at most `cap` bytes: for a writer that skips
/// a replacement that would change nothing (board files).
pub(crate) fn current(path: &Path, cap: u64) -> Option<Vec<u8>> {
    crate::fsguard::read_capped(path, cap).ok()
}

/// Atomically replace `path` with `bytes` (mode 0600), fsynced. The folder must already exist.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    write_replace(path, bytes, true)
}

/// Atomically replace a derived, rewritable file (board records): readers still see the old or
/// the new whole file, but the data is not forced to disk, since the next scan rewrites it.
pub(crate) fn write_atomic_derived(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    write_replace(path, bytes, false)
}

fn write_replace(path: &Path, bytes: &[u8], durable: bool) -> Result<(), StoreError> {
    let p = prepare(path, bytes, durable, None)?;
    p.commit(durable)
}

/// Atomically replace `path` (which must exist) with `bytes`, keeping its mode and owner: a
/// shared file (the Intercom config) must not turn private, or change hands, because we wrote
/// it. Refused, with nothing written, when the owner cannot be kept.
///
/// `flush_first`: fsync the replacement before it is swapped in (the normal case). Without it,
/// the data is flushed right after the swap instead: a writer that must win a race against a
/// lockless writer rewriting every few milliseconds cannot hold an fsync (often ~10 ms) between
/// reading the file and swapping it.
pub(crate) fn replace_keeping_mode(
    path: &Path,
    bytes: &[u8],
    flush_first: bool,
) -> Result<Prepared, StoreError> {
    let meta = std::fs::symlink_metadata(path).map_err(|e| err(StoreCode::StatFailed, path, e))?;
    if !meta.is_file() {
        return Err(err(
            StoreCode::Fs(FsError::NotRegular),
            path,
            "not a regular file",
        ));
    }
    let like = Like {
        mode: meta.mode() & 0o7777,
        uid: meta.uid(),
        gid: meta.gid(),
    };
    prepare(path, bytes, flush_first, Some(like))
}

/// Atomically replace a file meant to be read by everyone (mode 0644, or its present mode):
/// the `.pi-intercom/.gitignore`.
fn write_public(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let like = match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_file() => Like {
            mode: m.mode() & 0o7777,
            uid: m.uid(),
            gid: m.gid(),
        },
        _ => {
            let me = nix::unistd::Uid::current().as_raw();
            let g = nix::unistd::Gid::current().as_raw();
            Like {
                mode: 0o644,
                uid: me,
                gid: g,
            }
        }
    };
    prepare(path, bytes, true, Some(like))?.commit(true)
}

/// Create `path` with `bytes` (mode 0644: a file people share, like the roster) only if it does
/// not exist: written and fsynced beside it, then linked in place, so it appears whole or not at
/// all, and a file created meanwhile by anyone is never replaced (`Ok(false)`).
pub(crate) fn create_shared_new(path: &Path, bytes: &[u8]) -> Result<bool, StoreError> {
    let me = nix::unistd::Uid::current().as_raw();
    let g = nix::unistd::Gid::current().as_raw();
    let like = Like {
        mode: 0o644,
        uid: me,
        gid: g,
    };
    let p = prepare(path, bytes, true, Some(like))?;
    match std::fs::hard_link(&p.tmp, path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Ok(false),
        Err(e) => return Err(err(StoreCode::LinkFailed, path, e)),
    }
    if let Some(d) = path.parent().and_then(|d| std::fs::File::open(d).ok()) {
        let _ = d.sync_all();
    }
    Ok(true) // dropping `p` removes the temp name; the file stays under `path`
}

/// The mode and owner a replacement must carry.
#[derive(Clone, Copy)]
struct Like {
    mode: u32,
    uid: u32,
    gid: u32,
}

/// A replacement written and fsynced beside its target, renamed over it only by `commit`, so a
/// caller can re-check the target right before the rename. Dropped uncommitted, it is removed.
pub(crate) struct Prepared {
    tmp: PathBuf,
    path: PathBuf,
    done: bool,
    /// The replacement, still open: flushed after the swap when it was not before.
    file: Option<std::fs::File>,
    flushed: bool,
}

impl Prepared {
    /// Rename over the target, then fsync the folder (when durable).
    pub(crate) fn commit(mut self, durable: bool) -> Result<(), StoreError> {
        std::fs::rename(&self.tmp, &self.path)
            .map_err(|e| err(StoreCode::RenameFailed, &self.path, e))?;
        self.done = true;
        if durable {
            if let Some(d) = self.path.parent().and_then(|d| std::fs::File::open(d).ok()) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    }
}

/// `renameat2(a, b, RENAME_EXCHANGE)`: swap two names atomically.
fn exchange(a: &Path, b: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let ca = std::ffi::CString::new(a.as_os_str().as_bytes()).map_err(std::io::Error::other)?;
    let cb = std::ffi::CString::new(b.as_os_str().as_bytes()).map_err(std::io::Error::other)?;
    // SAFETY: two valid NUL-terminated paths relative to the current folder; flag 2 is
    // RENAME_EXCHANGE.
    let r = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            libc::AT_FDCWD,
            ca.as_ptr(),
            libc::AT_FDCWD,
            cb.as_ptr(),
            2u32,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

impl Prepared {
    /// Replace the target only if it still holds exactly `expected` (the bytes the replacement
    /// was made from) — a compare-and-swap for writers that take no lock. The two names are
    /// exchanged atomically; if the file swapped out is not `expected` (someone replaced it
    /// since it was read), it is swapped back at once and `Ok(false)` says nothing was replaced.
    /// Bytes are compared; an inode number only while the file it names is held open (a
    /// filesystem reuses a freed inode number at once).
    pub(crate) fn commit_if_current(mut self, expected: &[u8]) -> Result<bool, StoreError> {
        let cap = expected.len() as u64;
        let holds = |p: &Path| {
            crate::fsguard::read_capped(p, cap)
                .ok()
                .is_some_and(|b| b == expected)
        };
        // The file the swap is meant to displace goes into our temp name first: killed between
        // the swap and the clean-up below, we leave it under a name the next sweep can prove.
        let Ok(target) = std::fs::symlink_metadata(&self.path) else {
            return Ok(false);
        };
        if let Some(named) = temps::displacing(&self.tmp, target.ino()) {
            std::fs::rename(&self.tmp, &named)
                .map_err(|e| err(StoreCode::RenameFailed, &self.tmp, e))?;
            self.tmp = named;
        }
        // Look first: a swap that must be undone shows our file for an instant, and a lockless
        // writer reading it then would build on it and drop the change we swapped back.
        let Ok(seen) = crate::fsguard::open_regular(&self.path, Some(cap)) else {
            return Ok(false);
        };
        if (seen.dev, seen.ino) != (target.dev(), target.ino()) {
            return Ok(false);
        }
        if crate::fsguard::read_at(&seen.file, 0, expected.len() + 1)
            .ok()
            .as_deref()
            != Some(expected)
        {
            return Ok(false);
        }
        exchange(&self.tmp, &self.path).map_err(|e| err(StoreCode::RenameFailed, &self.path, e))?;
        // `tmp` now names the file we displaced. Not the file looked at (its inode number cannot
        // have been reused while `seen` holds it open): swapped back after one `lstat`, keeping
        // that instant short. The same file: its bytes are compared too (an in-place writer).
        let displaced = std::fs::symlink_metadata(&self.tmp)
            .is_ok_and(|m| (m.dev(), m.ino()) == (seen.dev, seen.ino));
        if displaced && holds(&self.tmp) {
            let _ = std::fs::remove_file(&self.tmp);
            self.done = true;
            if !self.flushed {
                if let Some(f) = &self.file {
                    f.sync_all()
                        .map_err(|e| err(StoreCode::FsyncFailed, &self.path, e))?;
                }
            }
            if let Some(d) = self.path.parent().and_then(|d| std::fs::File::open(d).ok()) {
                let _ = d.sync_all();
            }
            return Ok(true);
        }
        exchange(&self.tmp, &self.path).map_err(|e| err(StoreCode::RenameFailed, &self.path, e))?;
        Ok(false) // drop removes ours again
    }
}

impl Drop for Prepared {
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

fn prepare(
    path: &Path,
    bytes: &[u8],
    durable: bool,
    like: Option<Like>,
) -> Result<Prepared, StoreError> {
    let dir = path
        .parent()
        .ok_or_else(|| err(StoreCode::BadPath, path, "no parent folder"))?;
    let name = path
        .file_name()
        .ok_or_else(|| err(StoreCode::BadPath, path, "no file name"))?;
    match crate::fsguard::kind(path) {
        Ok(crate::fsguard::Kind::File) | Err(crate::fsguard::FsError::NotFound) => {}
        Ok(_) => {
            return Err(err(
                StoreCode::Fs(FsError::NotRegular),
                path,
                "target exists and is not a regular file",
            ))
        }
        Err(e) => return Err(err(StoreCode::Fs(e), path, "cannot inspect target")),
    }
    // A writer killed between naming and rename left its temp file: the next writer removes it.
    temps::sweep(dir);
    temps::ensure_ignored(path);
    let target = name.to_string_lossy();
    let (mut f, named) = temps::open(dir, &target)?;
    // A plain temp file exists from the start: removed again on any failure below.
    let mut p = Prepared {
        tmp: named.clone().unwrap_or_default(),
        path: path.to_path_buf(),
        done: named.is_none(),
        file: None,
        flushed: false,
    };
    let shown = named.as_deref().unwrap_or(dir);
    if let Some(l) = like {
        use std::os::unix::fs::PermissionsExt;
        let meta = f
            .metadata()
            .map_err(|e| err(StoreCode::StatFailed, shown, e))?;
        if (meta.uid(), meta.gid()) != (l.uid, l.gid) {
            std::os::unix::fs::fchown(&f, Some(l.uid), Some(l.gid)).map_err(|e| {
                err(
                    StoreCode::ChownFailed,
                    path,
                    format!("cannot keep its owner: {e}"),
                )
            })?;
        }
        f.set_permissions(std::fs::Permissions::from_mode(l.mode))
            .map_err(|e| err(StoreCode::ChmodFailed, path, e))?;
    }
    f.write_all(bytes)
        .map_err(|e| err(StoreCode::WriteFailed, shown, e))?;
    if durable {
        f.sync_all()
            .map_err(|e| err(StoreCode::FsyncFailed, shown, e))?;
    }
    if named.is_none() {
        p.tmp = temps::name(&f, dir, &target)?;
        p.done = false;
    }
    p.flushed = durable;
    p.file = Some(f);
    Ok(p)
}

/// Remove a regular file (never a link's target, never a folder). Missing is fine.
pub(crate) fn remove_file(path: &Path) -> Result<(), StoreError> {
    match crate::fsguard::kind(path) {
        Ok(crate::fsguard::Kind::File) => {
            std::fs::remove_file(path).map_err(|e| err(StoreCode::RemoveFailed, path, e))
        }
        Err(crate::fsguard::FsError::NotFound) => Ok(()),
        Ok(_) => Err(err(
            StoreCode::Fs(FsError::NotRegular),
            path,
            "not a regular file",
        )),
        Err(e) => Err(err(StoreCode::Fs(e), path, "cannot inspect")),
    }
}

/// Append one line to a log (mode 0600, never through a link). When the line would take the
/// file past `cap` bytes, the file first moves to `<path>.1` (replacing an older one): the log
/// never holds much more than twice `cap` on disk. One `write` per line, so concurrent writers
/// (pi spawns several `register`s) do not interleave inside a line.
pub fn append_line_capped(path: &Path, line: &[u8], cap: u64) -> Result<(), StoreError> {
    let open = || {
        std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
            .open(path)
            .map_err(|e| err(StoreCode::OpenFailed, path, e))
    };
    let mut f = open()?;
    let meta = f.metadata().ok().filter(|m| m.is_file()).ok_or_else(|| {
        err(
            StoreCode::Fs(FsError::NotRegular),
            path,
            "not a regular file",
        )
    })?;
    // Another user's log, or one others may write, is never appended to (it could be read or
    // planted by them): `fsguard::trusted`, on the file opened.
    if let Err(e) = crate::fsguard::trusted(meta.uid(), meta.mode()) {
        let why = crate::fsguard::trust_reason(e, Some(meta.uid()));
        return Err(err(StoreCode::Fs(e), path, why));
    }
    let len = meta.len();
    if len > 0 && len + line.len() as u64 > cap {
        let mut old = path.as_os_str().to_owned();
        old.push(".1");
        std::fs::rename(path, &old).map_err(|e| err(StoreCode::RotateFailed, path, e))?;
        f = open()?;
    }
    f.write_all(line)
        .map_err(|e| err(StoreCode::WriteFailed, path, e))
}

/// An exclusive lock: an advisory `flock` on a lock file (mode 0600, never through a link).
///
/// Why `flock` and not "whoever created the file": the kernel drops the lock when its holder
/// dies, however it dies, so a crash can never leave a lock that blocks every later writer, and
/// "is the holder alive" has an exact answer (`is_held`) with no pid to reuse. The file is
/// removed on drop; an acquirer that locked a file someone removed meanwhile notices (the path
/// no longer names its inode) and tries again, so two holders never coexist.
pub(crate) struct Lock {
    path: PathBuf,
    file: std::fs::File,
}

/// How often `acquire` retries when the file it locked was removed under it (bounded).
const LOCK_ATTEMPTS: usize = 8;

fn open_lock_file(path: &Path, create: bool) -> std::io::Result<std::fs::File> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(create)
        .create(create)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
        .open(path)?;
    if !f.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    Ok(f)
}

#[allow(deprecated)] // nix's `Flock` wrapper panics if unlocking fails; closing the fd unlocks.
fn try_flock(f: &std::fs::File, exclusive: bool) -> nix::Result<()> {
    use nix::fcntl::{flock, FlockArg};
    use std::os::fd::AsRawFd;
    let arg = if exclusive {
        FlockArg::LockExclusiveNonblock
    } else {
        FlockArg::LockSharedNonblock
    };
    flock(f.as_raw_fd(), arg)
}

fn same_inode(f: &std::fs::File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (f.metadata(), std::fs::symlink_metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

impl Lock {
    /// Lock `path` (created when missing). Fails with `locked` when a live process holds it.
    pub(crate) fn acquire(path: &Path) -> Result<Lock, StoreError> {
        for _ in 0..LOCK_ATTEMPTS {
            let file =
                open_lock_file(path, true).map_err(|e| err(StoreCode::LockFailed, path, e))?;
            match try_flock(&file, true) {
                Ok(()) => {}
                Err(nix::errno::Errno::EWOULDBLOCK) => {
                    return Err(err(
                        StoreCode::Locked,
                        path,
                        "another intercom-pane holds this lock",
                    ))
                }
                Err(e) => return Err(err(StoreCode::LockFailed, path, e)),
            }
            if !same_inode(&file, path) {
                continue; // removed by its last holder after we opened it: try the new one
            }
            // For a person looking: who holds it. Nothing reads this back.
            let _ = file.set_len(0);
            let _ = writeln!(&file, "{}", std::process::id());
            return Ok(Lock {
                path: path.to_path_buf(),
                file,
            });
        }
        Err(err(
            StoreCode::LockFailed,
            path,
            "the lock file kept changing",
        ))
    }
}

/// Whether a live process holds the lock at `path` right now. A missing file is not held.
pub(crate) fn is_held(path: &Path) -> bool {
    match open_lock_file(path, false) {
        Ok(f) => matches!(try_flock(&f, false), Err(nix::errno::Errno::EWOULDBLOCK)),
        Err(_) => false,
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        // Removed while still locked, then unlocked by closing: see the type's comment.
        if same_inode(&self.file, &self.path) {
            let _ = std::fs::remove_file(&self.path);
        }
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
        assert_eq!(
            write_atomic(&link, b"new").unwrap_err().code,
            StoreCode::Fs(FsError::NotRegular)
        );
        assert_eq!(std::fs::read(&target).unwrap(), b"keep");
        std::os::unix::fs::symlink(dir.path(), dir.path().join("ln")).unwrap();
        assert!(ensure_dir(dir.path(), &dir.path().join("ln").join("sub")).is_err());
    }

    #[test]
    fn lock_is_exclusive_and_dies_with_its_holder() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.lock");
        assert!(!is_held(&p));
        let l = Lock::acquire(&p).unwrap();
        assert!(is_held(&p));
        assert_eq!(Lock::acquire(&p).err().unwrap().code, StoreCode::Locked);
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        drop(l);
        assert!(!p.exists(), "removed on drop");
        assert!(!is_held(&p));
        // A lock file left behind by a holder that died is not held: it is simply taken.
        std::fs::write(&p, b"12345\n").unwrap();
        assert!(!is_held(&p));
        let l = Lock::acquire(&p).unwrap();
        drop(l);
        // A dangling link where the lock goes is not followed: refused, nothing created.
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), &p).unwrap();
        assert_eq!(Lock::acquire(&p).err().unwrap().code, StoreCode::LockFailed);
        assert!(!dir.path().join("elsewhere").exists());
        assert!(!is_held(&p));
    }

    #[test]
    fn a_holder_that_is_killed_releases_its_lock() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("y.lock");
        // flock(1) holds the lock (`-o`: not passed on to its command) while `sleep` runs; it
        // is then killed without any chance to clean up.
        let mut child = std::process::Command::new("flock")
            .arg("-o")
            .arg(&p)
            .args(["sleep", "30"])
            .spawn()
            .unwrap();
        let end = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !is_held(&p) {
            assert!(std::time::Instant::now() < end, "flock never took the lock");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(Lock::acquire(&p).err().unwrap().code, StoreCode::Locked);
        // flock(1) forks, and its child shares the locked file until it closes it right before
        // exec'ing `sleep`: wait for that exec (the child's name turns to `sleep`), so the one
        // holder left is the flock(1) this test kills.
        let pid = child.id() as i32;
        let sleeper = || {
            crate::proc::descendants(pid, 8).into_iter().find(|k| {
                std::fs::read_to_string(format!("/proc/{k}/comm"))
                    .is_ok_and(|c| c.trim_end() == "sleep")
            })
        };
        let kid = loop {
            if let Some(k) = sleeper() {
                break k;
            }
            assert!(std::time::Instant::now() < end, "flock never ran sleep");
            std::thread::sleep(std::time::Duration::from_millis(10));
        };
        child.kill().unwrap();
        child.wait().unwrap();
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(kid),
            nix::sys::signal::Signal::SIGKILL,
        );
        assert!(p.exists(), "the dead holder left its file");
        assert!(!is_held(&p));
        assert!(Lock::acquire(&p).is_ok());
    }
}
