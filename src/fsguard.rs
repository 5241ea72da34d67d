//! Bounded, non-following file access shared by every evidence reader.
//!
//! Why: evidence lives in folders other programs (and other people) write. A reader must never
//! follow a link, block on a FIFO, read a device, or read without a size cap. Every refusal carries
//! a fixed, content-free code (`FsError::code`) so errors can be shown and serialized safely.

use std::ffi::OsString;
use std::fs::File;
use std::io::Read;
use std::os::unix::ffi::OsStringExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Component, Path};

/// Why a path was refused. `code()` is what users and JSON see.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FsError {
    NotFound,
    Link,
    Fifo,
    Device,
    Socket,
    NotRegular,
    NotDirectory,
    Oversize,
    Unreadable,
    /// Owned by another user: evidence and state are trusted only from the caller's own uid.
    NotOwned,
    /// Writable by group or others: anyone else could have written it.
    OthersWrite,
}

impl FsError {
    pub fn code(self) -> &'static str {
        match self {
            FsError::NotFound => "not_found",
            FsError::Link => "link_refused",
            FsError::Fifo => "fifo_refused",
            FsError::Device => "device_refused",
            FsError::Socket => "socket_refused",
            FsError::NotRegular => "not_regular",
            FsError::NotDirectory => "not_directory",
            FsError::Oversize => "oversize",
            FsError::Unreadable => "unreadable",
            FsError::NotOwned => "not_owned",
            FsError::OthersWrite => "writable_by_others",
        }
    }

    fn from_io(e: &std::io::Error) -> FsError {
        match e.raw_os_error() {
            Some(libc::ENOENT) => FsError::NotFound,
            // O_NOFOLLOW on a link gives ELOOP; O_DIRECTORY|O_NOFOLLOW on a link can give ENOTDIR.
            Some(libc::ELOOP) => FsError::Link,
            Some(libc::ENOTDIR) => FsError::NotDirectory,
            Some(libc::ENXIO) => FsError::Device,
            _ => FsError::Unreadable,
        }
    }
}

impl std::fmt::Display for FsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.code())
    }
}

impl std::error::Error for FsError {}

/// What kind of entry `lstat` saw, with links never resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    File,
    Dir,
    Link,
    Fifo,
    Device,
    Socket,
}

fn kind_of(ft: std::fs::FileType) -> Kind {
    if ft.is_symlink() {
        Kind::Link
    } else if ft.is_dir() {
        Kind::Dir
    } else if ft.is_file() {
        Kind::File
    } else if ft.is_fifo() {
        Kind::Fifo
    } else if ft.is_socket() {
        Kind::Socket
    } else {
        Kind::Device
    }
}

fn refuse_kind(kind: Kind) -> FsError {
    match kind {
        Kind::Link => FsError::Link,
        Kind::Fifo => FsError::Fifo,
        Kind::Device => FsError::Device,
        Kind::Socket => FsError::Socket,
        Kind::Dir => FsError::NotRegular,
        Kind::File => FsError::NotDirectory,
    }
}

/// `lstat` a path: never follows the last component.
pub(crate) fn kind(path: &Path) -> Result<Kind, FsError> {
    std::fs::symlink_metadata(path)
        .map(|m| kind_of(m.file_type()))
        .map_err(|e| FsError::from_io(&e))
}

/// Check every component of `path` below `base` (not `base` itself, which the user chose):
/// each must exist and not be a link; all but the last must be directories.
pub(crate) fn check_under(base: &Path, path: &Path) -> Result<(), FsError> {
    let rel = path.strip_prefix(base).map_err(|_| FsError::Unreadable)?;
    let mut cur = base.to_path_buf();
    let comps: Vec<Component> = rel.components().collect();
    for (i, c) in comps.iter().enumerate() {
        match c {
            Component::Normal(n) => cur.push(n),
            Component::CurDir => continue,
            _ => return Err(FsError::Unreadable),
        }
        let k = kind(&cur)?;
        let last = i + 1 == comps.len();
        if k == Kind::Link {
            return Err(FsError::Link);
        }
        if !last && k != Kind::Dir {
            return Err(FsError::NotDirectory);
        }
    }
    Ok(())
}

/// An open regular file with its length at open time.
pub(crate) struct OpenFile {
    pub file: File,
    pub len: u64,
    pub mtime_ms: i64,
    pub mode: u32,
    pub uid: u32,
    /// Device and inode: which file this is, across renames.
    pub dev: u64,
    pub ino: u64,
}

/// Open a regular file without following a final link and without blocking on a FIFO.
/// `max_len`: refuse files larger than this many bytes (None = any size; callers then read
/// bounded windows only).
pub(crate) fn open_regular(path: &Path, max_len: Option<u64>) -> Result<OpenFile, FsError> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| FsError::from_io(&e))?;
    let meta = file.metadata().map_err(|e| FsError::from_io(&e))?;
    let k = kind_of(meta.file_type());
    if k != Kind::File {
        return Err(refuse_kind(k));
    }
    if let Some(max) = max_len {
        if meta.len() > max {
            return Err(FsError::Oversize);
        }
    }
    Ok(OpenFile {
        len: meta.len(),
        mtime_ms: meta.mtime() * 1000 + meta.mtime_nsec() / 1_000_000,
        mode: meta.mode(),
        uid: meta.uid(),
        dev: meta.dev(),
        ino: meta.ino(),
        file,
    })
}

/// The effective uid of this process: the one user whose files and processes are trusted.
pub fn my_uid() -> u32 {
    nix::unistd::geteuid().as_raw()
}

/// The one "trusted" rule for files and folders we rely on (registrations, state folders, logs,
/// a discovered roster): owned by this process's effective uid and not writable by group or
/// others. Anything else could have been planted or changed by another user.
pub(crate) fn trusted(uid: u32, mode: u32) -> Result<(), FsError> {
    if uid != my_uid() {
        Err(FsError::NotOwned)
    } else if mode & 0o022 != 0 {
        Err(FsError::OthersWrite)
    } else {
        Ok(())
    }
}

/// `open_regular`, refused unless the opened file passes `trusted` (checked on the open file
/// itself, so a swap after the check cannot matter).
pub(crate) fn open_trusted(path: &Path, max_len: Option<u64>) -> Result<OpenFile, FsError> {
    let f = open_regular(path, max_len)?;
    trusted(f.uid, f.mode)?;
    Ok(f)
}

/// `read_capped` of a file that passes `trusted`.
pub(crate) fn read_trusted(path: &Path, max_len: u64) -> Result<Vec<u8>, FsError> {
    let f = open_trusted(path, Some(max_len))?;
    read_open(&f, max_len)
}

/// A folder (never a link) that passes `trusted`.
pub(crate) fn trusted_dir(path: &Path) -> Result<(), FsError> {
    let meta = std::fs::symlink_metadata(path).map_err(|e| FsError::from_io(&e))?;
    match kind_of(meta.file_type()) {
        Kind::Dir => trusted(meta.uid(), meta.mode()),
        k => Err(refuse_kind_dir(k)),
    }
}

/// The owner of a path (not followed), when it can be read: for messages.
pub(crate) fn owner_of(path: &Path) -> Option<u32> {
    std::fs::symlink_metadata(path).ok().map(|m| m.uid())
}

/// A plain-words reason for a trust refusal, for messages people read.
pub(crate) fn trust_reason(e: FsError, uid: Option<u32>) -> String {
    match (e, uid) {
        (FsError::NotOwned, Some(u)) => {
            format!("is owned by uid {u}, not by you (uid {})", my_uid())
        }
        (FsError::NotOwned, None) => format!("is not owned by you (uid {})", my_uid()),
        (FsError::OthersWrite, _) => "is writable by group or others (chmod go-w to fix)".into(),
        (other, _) => format!("cannot be read safely ({})", other.code()),
    }
}

/// Read a whole regular file of at most `max_len` bytes. A file that grows past the cap while
/// being read is refused as oversize, not truncated silently.
pub(crate) fn read_capped(path: &Path, max_len: u64) -> Result<Vec<u8>, FsError> {
    let f = open_regular(path, Some(max_len))?;
    read_open(&f, max_len)
}

/// Room made before reading a file whose size the kernel does not tell (`/proc` files say 0):
/// one `read` takes a `stat` line or a command line whole, where growing from nothing took five
/// to ten. Small enough to stay in the allocator's per-thread cache (a 4 KiB start showed up in
/// `malloc` in a profile of the idle sidebar).
const UNKNOWN_SIZE_START: u64 = 1000;

fn read_open(f: &OpenFile, max_len: u64) -> Result<Vec<u8>, FsError> {
    let room = if f.len == 0 {
        UNKNOWN_SIZE_START
    } else {
        f.len
    };
    let mut buf = Vec::with_capacity(room.min(max_len) as usize);
    (&f.file)
        .take(max_len + 1)
        .read_to_end(&mut buf)
        .map_err(|e| FsError::from_io(&e))?;
    if buf.len() as u64 > max_len {
        return Err(FsError::Oversize);
    }
    Ok(buf)
}

/// Read up to `len` bytes at `offset` (fewer at end of file).
pub(crate) fn read_at(file: &File, offset: u64, len: usize) -> Result<Vec<u8>, FsError> {
    // The kernel writes into the buffer's spare capacity: nothing is zeroed first (a pass over
    // 255 sessions zeroed 17 MB only to overwrite it).
    let mut buf: Vec<u8> = Vec::with_capacity(len);
    // Bounded: each iteration either makes progress or ends.
    while buf.len() < len {
        let at = offset + buf.len() as u64;
        match rustix::io::pread(file, rustix::buffer::spare_capacity(&mut buf), at) {
            Ok(0) => break,
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(FsError::from_io(&std::io::Error::from(e))),
        }
    }
    // The allocator may have given more capacity than asked: never more than `len` bytes.
    buf.truncate(len);
    Ok(buf)
}

/// A file's device, inode, length, mtime and ctime (nanoseconds): what tells that a file read
/// before is still the same file with the same content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SettledKey {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

/// The key of a regular file whose times are at least 2 s old; `None` otherwise. Why 2 s: a
/// file written within the clock's granularity of now could change again under the same key,
/// so it must be read again. Take the key before reading: a change after it gives the next
/// pass another key.
pub(crate) fn settled_key(meta: &std::fs::Metadata) -> Option<SettledKey> {
    use std::os::unix::fs::MetadataExt;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_secs() as i64;
    let settled = meta.mtime() <= now - 2 && meta.ctime() <= now - 2;
    (meta.file_type().is_file() && settled).then(|| SettledKey {
        dev: meta.dev(),
        ino: meta.ino(),
        len: meta.len(),
        mtime: (meta.mtime(), meta.mtime_nsec()),
        ctime: (meta.ctime(), meta.ctime_nsec()),
    })
}

/// `settled_key` of the file at `path` itself (a link is never followed and has no key).
pub(crate) fn settled_key_at(path: &Path) -> Option<SettledKey> {
    settled_key(&std::fs::symlink_metadata(path).ok()?)
}

/// One directory entry as `lstat` saw it.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub name: OsString,
    pub kind: Kind,
    pub len: u64,
    pub mtime_ms: i64,
    /// The inode: which file this name denotes (a rotation or replacement changes it).
    pub ino: u64,
}

impl Entry {
    pub(crate) fn name_str(&self) -> Option<&str> {
        self.name.to_str()
    }
}

/// List at most `max_entries` entries of a directory that is not a link. `truncated` is true when
/// more entries existed. Entries are `lstat`ed, never followed.
pub(crate) struct Listing {
    pub entries: Vec<Entry>,
    pub truncated: bool,
}

/// The entries of `dir` (not a link), each `lstat`ed: at most `max_entries`.
pub(crate) fn list_dir(dir: &Path, max_entries: usize) -> Result<Listing, FsError> {
    let mut entries = Vec::new();
    let truncated = each_name(dir, max_entries, |fd, name| {
        let flags = rustix::fs::AtFlags::SYMLINK_NOFOLLOW;
        let Ok(st) = rustix::fs::statat(fd, name, flags) else {
            return false;
        };
        entries.push(Entry {
            name: OsString::from_vec(name.to_bytes().to_vec()),
            kind: kind_of_mode(st.st_mode),
            len: st.st_size as u64,
            // Saturating: a file's time is whatever its owner set.
            mtime_ms: st
                .st_mtime
                .saturating_mul(1000)
                .saturating_add(st.st_mtime_nsec as i64 / 1_000_000),
            ino: st.st_ino,
        });
        true
    })?;
    Ok(Listing { entries, truncated })
}

/// Call `take` with each name in `dir` (not a link) but `.` and `..`, at most `max` (it says
/// whether it took one), without allocating; true when names were left over.
pub(crate) fn for_each_name(
    dir: &Path,
    max: usize,
    mut take: impl FnMut(&std::ffi::CStr) -> bool,
) -> Result<bool, FsError> {
    each_name(dir, max, |_, name| take(name))
}

/// Call `take` with the open folder and each name in it but `.` and `..`, until it has taken
/// `max` (it says whether it took one); true when names were left over.
///
/// Read with `getdents64` into a buffer on the stack: `std::fs::read_dir` (glibc's `opendir`)
/// allocates 32 KiB per folder, and a live board lists hundreds of folders a full pass; in a
/// heap that a pass has just filled with small blocks, that allocation was the top of the idle
/// profile (docs/benchmarks.md).
fn each_name(
    dir: &Path,
    max: usize,
    take: impl FnMut(&rustix::fd::OwnedFd, &std::ffi::CStr) -> bool,
) -> Result<bool, FsError> {
    each_name_in(&open_dir(dir)?, max, take)
}

/// `dir` opened for listing: a link, FIFO or file is refused without a race or a block.
fn open_dir(dir: &Path) -> Result<rustix::fd::OwnedFd, FsError> {
    use rustix::fs::{Mode, OFlags, CWD};
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    match rustix::fs::openat(CWD, dir, flags, Mode::empty()) {
        Ok(fd) => Ok(fd),
        // A link, a FIFO, a file: say which (opening with these flags never blocks).
        Err(rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR) => {
            Err(refuse_kind_dir(kind(dir)?))
        }
        Err(e) => Err(FsError::from_io(&e.into())),
    }
}

/// `each_name` over a folder already open.
fn each_name_in(
    fd: &rustix::fd::OwnedFd,
    max: usize,
    mut take: impl FnMut(&rustix::fd::OwnedFd, &std::ffi::CStr) -> bool,
) -> Result<bool, FsError> {
    let mut buf = [std::mem::MaybeUninit::<u8>::uninit(); 8192];
    let mut names = rustix::fs::RawDir::new(fd, &mut buf);
    let mut taken = 0;
    // An error reading the folder ends the listing with what was read.
    while let Some(Ok(item)) = names.next() {
        let name = item.file_name();
        if name == c"." || name == c".." {
            continue;
        }
        if taken >= max {
            return Ok(true);
        }
        if take(fd, name) {
            taken += 1;
        }
    }
    Ok(false)
}

/// What a folder (not a link) holds now, fed to `hash` without keeping it: the folder's own
/// inode and times (an entry added, removed or renamed moves them), then each entry `wanted`
/// names, in listing order — name, type, inode, length, mtime and ctime in ns — and whether
/// more than `max` were there. Returns the newest of these times (ns since the epoch) plus
/// what its filesystem may have cut from it (`cut_at_most`), for a caller that must not trust
/// a change within the clock's granularity (`settled_key`).
pub(crate) fn hash_dir(
    dir: &Path,
    max: usize,
    wanted: impl Fn(&std::ffi::OsStr) -> bool,
    hash: &mut impl std::hash::Hasher,
) -> Result<i128, FsError> {
    use std::os::unix::ffi::OsStrExt;
    let fd = open_dir(dir)?;
    let mut newest = i128::MIN;
    let ns = latest_ns;
    let mut feed = |st: &rustix::fs::Stat, hash: &mut dyn std::hash::Hasher| {
        hash.write_u32(st.st_mode);
        hash.write_u64(st.st_ino);
        hash.write_i64(st.st_size);
        hash.write_i64(st.st_mtime);
        hash.write_i64(st.st_mtime_nsec as i64);
        hash.write_i64(st.st_ctime);
        hash.write_i64(st.st_ctime_nsec as i64);
        let m = ns(st.st_mtime, st.st_mtime_nsec as i64);
        newest = newest.max(m).max(ns(st.st_ctime, st.st_ctime_nsec as i64));
    };
    let st = rustix::fs::fstat(&fd).map_err(|e| FsError::from_io(&e.into()))?;
    feed(&st, hash);
    let more = each_name_in(&fd, max, |fd, name| {
        let name = std::ffi::OsStr::from_bytes(name.to_bytes());
        if !wanted(name) {
            return false;
        }
        hash.write(name.as_bytes());
        hash.write_u8(0);
        let flags = rustix::fs::AtFlags::SYMLINK_NOFOLLOW;
        match rustix::fs::statat(fd, name, flags) {
            Ok(st) => feed(&st, hash),
            // Gone between the listing and the `lstat`: the folder's times moved too.
            Err(_) => hash.write_u8(1),
        }
        true
    })?;
    hash.write_u8(u8::from(more));
    Ok(newest)
}

/// The latest moment (ns since the epoch) a file time of `secs` and `nsec` may stand for: the
/// time plus what its filesystem may have cut from it (`cut_at_most`).
pub(crate) fn latest_ns(secs: i64, nsec: i64) -> i128 {
    i128::from(secs) * 1_000_000_000 + i128::from(nsec) + cut_at_most(nsec)
}

/// How much a file time with `nsec` nanoseconds may have been cut short by its filesystem's
/// granularity (ns): a filesystem keeps times to the ns, µs, second or two seconds (FAT), so a
/// time of a whole second may have been up to 2 s later, one of whole µs up to 1 µs later. A
/// time that happens to end in zeros on a ns filesystem only makes its reader more careful.
fn cut_at_most(nsec: i64) -> i128 {
    if nsec == 0 {
        return 2_000_000_000;
    }
    let (mut n, mut grain) = (nsec, 1i128);
    // At most 8 steps: 0 < nsec < 10^9.
    while n % 10 == 0 {
        n /= 10;
        grain *= 10;
    }
    grain
}

/// `kind_of` for a raw `st_mode`.
fn kind_of_mode(mode: u32) -> Kind {
    match rustix::fs::FileType::from_raw_mode(mode) {
        rustix::fs::FileType::Symlink => Kind::Link,
        rustix::fs::FileType::Directory => Kind::Dir,
        rustix::fs::FileType::RegularFile => Kind::File,
        rustix::fs::FileType::Fifo => Kind::Fifo,
        rustix::fs::FileType::Socket => Kind::Socket,
        _ => Kind::Device,
    }
}

fn refuse_kind_dir(k: Kind) -> FsError {
    match k {
        Kind::Link => FsError::Link,
        Kind::Fifo => FsError::Fifo,
        Kind::Device => FsError::Device,
        Kind::Socket => FsError::Socket,
        _ => FsError::NotDirectory,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_cut_to_the_second_or_the_microsecond_counts_as_up_to_that_much_later() {
        assert_eq!(cut_at_most(0), 2_000_000_000);
        assert_eq!(cut_at_most(123_456_789), 1);
        assert_eq!(cut_at_most(123_456_000), 1_000);
        assert_eq!(cut_at_most(500_000_000), 100_000_000);
        assert_eq!(cut_at_most(999_999_999), 1);
    }

    #[test]
    fn read_at_gives_the_bytes_asked_for_or_fewer_at_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&p, &data).unwrap();
        let f = File::open(&p).unwrap();
        assert_eq!(read_at(&f, 0, 0).unwrap(), Vec::<u8>::new());
        assert_eq!(read_at(&f, 10, 5).unwrap(), data[10..15]);
        assert_eq!(read_at(&f, 1000, 150_000).unwrap(), data[1000..151_000]);
        assert_eq!(read_at(&f, 199_990, 100).unwrap(), data[199_990..]);
        assert!(read_at(&f, 300_000, 10).unwrap().is_empty());
    }

    #[test]
    fn refuses_links_fifos_and_oversize() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.txt");
        std::fs::write(&real, b"hello").unwrap();
        let link = dir.path().join("link.txt");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();

        assert_eq!(read_capped(&real, 10).unwrap(), b"hello");
        assert_eq!(read_capped(&real, 4).unwrap_err(), FsError::Oversize);
        assert_eq!(read_capped(&link, 10).unwrap_err(), FsError::Link);
        // Must return at once, not block waiting for a writer.
        assert_eq!(read_capped(&fifo, 10).unwrap_err(), FsError::Fifo);
        assert_eq!(
            read_capped(Path::new("/dev/null"), 10).unwrap_err(),
            FsError::Device
        );
        assert_eq!(
            read_capped(&dir.path().join("missing"), 10).unwrap_err(),
            FsError::NotFound
        );
        assert_eq!(
            read_capped(dir.path(), 10).unwrap_err(),
            FsError::NotRegular
        );
    }

    #[test]
    fn check_under_refuses_a_linked_component() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::create_dir(&real).unwrap();
        std::fs::write(real.join("f"), b"x").unwrap();
        std::os::unix::fs::symlink(&real, dir.path().join("via")).unwrap();
        assert!(check_under(dir.path(), &real.join("f")).is_ok());
        assert_eq!(
            check_under(dir.path(), &dir.path().join("via").join("f")).unwrap_err(),
            FsError::Link
        );
        assert_eq!(
            list_dir(&dir.path().join("via"), 10).err(),
            Some(FsError::Link)
        );
    }

    #[test]
    fn list_dir_is_bounded() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..20 {
            std::fs::write(dir.path().join(format!("f{i}")), b"").unwrap();
        }
        let l = list_dir(dir.path(), 5).unwrap();
        assert_eq!(l.entries.len(), 5);
        assert!(l.truncated);
        let l = list_dir(dir.path(), 50).unwrap();
        assert_eq!(l.entries.len(), 20);
        assert!(!l.truncated);
    }

    #[test]
    fn list_dir_says_what_each_entry_is_and_refuses_what_is_not_a_folder() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("file"), b"hello").unwrap();
        std::fs::create_dir(d.join("sub")).unwrap();
        std::os::unix::fs::symlink(d.join("file"), d.join("link")).unwrap();
        nix::unistd::mkfifo(&d.join("fifo"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        // More names than one getdents64 buffer holds.
        let long = "n".repeat(200);
        for i in 0..100 {
            std::fs::write(d.join(format!("{long}{i}")), b"").unwrap();
        }
        let l = list_dir(d, 1000).unwrap();
        assert_eq!(l.entries.len(), 104);
        let of = |n: &str| l.entries.iter().find(|e| e.name_str() == Some(n)).unwrap();
        let f = of("file");
        assert_eq!((f.kind, f.len), (Kind::File, 5));
        let meta = std::fs::symlink_metadata(d.join("file")).unwrap();
        assert_eq!(f.ino, meta.ino());
        assert_eq!(
            f.mtime_ms,
            meta.mtime() * 1000 + meta.mtime_nsec() / 1_000_000
        );
        assert_eq!(of("sub").kind, Kind::Dir);
        assert_eq!(of("link").kind, Kind::Link);
        assert_eq!(of("fifo").kind, Kind::Fifo);
        assert!(l.entries.iter().all(|e| e.name_str() != Some(".")));
        // Not folders: said as what they are, and a FIFO does not block the open.
        assert_eq!(
            list_dir(&d.join("file"), 10).err(),
            Some(FsError::NotDirectory)
        );
        assert_eq!(list_dir(&d.join("fifo"), 10).err(), Some(FsError::Fifo));
        assert_eq!(list_dir(&d.join("link"), 10).err(), Some(FsError::Link));
        assert_eq!(list_dir(&d.join("gone"), 10).err(), Some(FsError::NotFound));
        assert_eq!(
            list_dir(&d.join("file/x"), 10).err(),
            Some(FsError::NotDirectory)
        );
    }
}
