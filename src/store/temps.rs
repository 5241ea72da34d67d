//! Temp files that say who wrote them, and the `.pi-intercom/.gitignore` that keeps machine-local
//! files out of commits.
//!
//! A replacement is written into an unnamed file (`O_TMPFILE`) and named only once it is whole,
//! right before it is renamed over its target: `<target>.ip-<pid>-<start ticks>-<inode>-<random>.tmp`.
//! A writer killed in that instant leaves one behind; the next writer into the same folder
//! removes it only when it can prove it is ours: a regular file of this user (or of the owner of
//! the file it replaces, whose owner a replacement keeps) whose inode is the one its name carries
//! (a writer knows the inode before naming; a person's file named like ours, or a copy of ours,
//! carries another), and whose writer (pid and start ticks) is gone. Right before a
//! compare-and-swap the name also takes the inode of the file the swap will displace
//! (`<target>.ip-<pid>-<ticks>-<inode>-<displaced inode>-<random>.tmp`): a writer killed between
//! the swap and its clean-up leaves that file under the name, proven the same way.
//! Anything else is never touched: other programs' temp files (the Intercom extension's
//! `config.json.<uuid>.tmp`), a person's `notes.ip-999999-5-0123456789ab.tmp`, and on a
//! filesystem without `O_TMPFILE` our own named temp files (`<target>.ip-<pid>-<ticks>-<random>.tmp`,
//! written under that name from the start, so nothing proves them; `*.tmp` keeps them out of git).

use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::proc;

/// Folder entries looked at per sweep (a folder is swept each time we write into it).
const SWEEP_CAP: usize = 4096;
/// Largest `.gitignore` we read and extend.
const IGNORE_CAP: u64 = 64 * 1024;

/// The lines our `.gitignore` holds: everything under `.pi-intercom/` but the shared config.
const IGNORED: [&str; 9] = [
    "/seats/",
    "/jobs/",
    "/monitor-*.json",
    "*.tmp",
    "*.lock",
    "/workers/",
    "/worktrees/",
    "/retired/",
    "/budgets/",
];
const IGNORE_HEADER: &str =
    "# intercom-pane: machine-local files, kept out of commits (config.json stays shared)";

/// This process's (pid, start ticks), read once.
fn me() -> (u32, u64) {
    static ME: OnceLock<(u32, u64)> = OnceLock::new();
    *ME.get_or_init(|| {
        let pid = std::process::id();
        let ticks = proc::read_stat(pid as i32).map_or(0, |s| s.start_ticks);
        (pid, ticks)
    })
}

fn random12() -> String {
    let r = uuid::Uuid::new_v4().simple().to_string();
    r[..12].to_string()
}

/// The name of a temp file written under its name from the start (no `O_TMPFILE`): never swept.
pub(super) fn plain_name(target: &str) -> String {
    let (pid, ticks) = me();
    format!("{target}.ip-{pid}-{ticks}-{}.tmp", random12())
}

/// The name of a finished replacement whose inode is `ino`: the proof the sweep checks.
pub(super) fn proven_name(target: &str, ino: u64) -> String {
    let (pid, ticks) = me();
    format!("{target}.ip-{pid}-{ticks}-{ino}-{}.tmp", random12())
}

/// `tmp`'s proven name, extended with the inode of the file it is about to displace (`was`),
/// given right before a swap (`Prepared::commit_if_current`): a writer killed between the swap
/// and its clean-up leaves that displaced file under this name, and the sweep can prove it too.
/// `None` for a name that proves nothing (a plain temp name).
pub(super) fn displacing(tmp: &Path, was: u64) -> Option<PathBuf> {
    let name = tmp.file_name()?.to_str()?;
    let proof = proof_of(name)?;
    if proof.was.is_some() {
        return None;
    }
    let body = name.strip_suffix(".tmp")?;
    let (head, rand) = body.rsplit_once('-')?;
    Some(tmp.with_file_name(format!("{head}-{was}-{rand}.tmp")))
}

/// What a proven temp file name carries: its writer (pid, start ticks), the inode of the
/// replacement it was made for, and (once a swap was about to happen) the inode of the file the
/// swap displaces.
struct Proof {
    pid: i32,
    ticks: u64,
    ino: u64,
    was: Option<u64>,
    /// The name of the file it replaces.
    target: String,
}

fn proof_of(file: &str) -> Option<Proof> {
    let body = file.strip_suffix(".tmp")?;
    let at = body.rfind(".ip-")?;
    let parts: Vec<&str> = body.get(at + 4..)?.split('-').collect();
    let (pid, ticks, ino, was, rand) = match parts.as_slice() {
        [p, t, i, r] => (p, t, i, None, r),
        [p, t, i, w, r] => (p, t, i, Some(w.parse().ok()?), r),
        _ => return None,
    };
    (rand.len() == 12 && rand.bytes().all(|b| b.is_ascii_hexdigit())).then_some(())?;
    Some(Proof {
        pid: pid.parse().ok()?,
        ticks: ticks.parse().ok()?,
        ino: ino.parse().ok()?,
        was,
        target: body.get(..at)?.to_string(),
    })
}

/// Is `path` (named `name`) a temp file we can prove a now-dead writer of ours left: the
/// replacement it named (its inode), or the file its swap displaced (`was`), owned by this user
/// or by the owner of the file it replaces (a replacement keeps that owner)?
fn provably_ours_and_dead(path: &Path, name: &str) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Some(proof) = proof_of(name) else {
        return false;
    };
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return false;
    };
    let target_owner = path
        .parent()
        .and_then(|d| std::fs::symlink_metadata(d.join(&proof.target)).ok())
        .map(|m| m.uid());
    let owner = meta.uid() == nix::unistd::getuid().as_raw() || Some(meta.uid()) == target_owner;
    let inode = meta.ino() == proof.ino || Some(meta.ino()) == proof.was;
    if !meta.file_type().is_file() || !inode || !owner {
        return false;
    }
    proc::read_stat(proof.pid).is_none_or(|s| s.start_ticks != proof.ticks)
}

/// Our temp files in `dir` that a dead writer left (the store removes them; see the module
/// comment for what counts as proof).
pub(super) fn stale(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(list) = crate::fsguard::list_dir(dir, SWEEP_CAP) else {
        return out;
    };
    for e in &list.entries {
        if e.kind != crate::fsguard::Kind::File {
            continue;
        }
        let Some(name) = e.name_str() else { continue };
        let path = dir.join(&e.name);
        if provably_ours_and_dead(&path, name) {
            out.push(path);
        }
    }
    out
}

/// Check a candidate again right before it is removed (the folder may have changed).
pub(super) fn still_stale(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| provably_ours_and_dead(path, n))
}

/// Remove the temp files in `dir` that writers killed mid-write left behind (only those provably
/// ours, only once their writer is dead; each checked again right before).
pub(super) fn sweep(dir: &Path) {
    for stale in stale(dir) {
        if still_stale(&stale) {
            let _ = std::fs::remove_file(stale);
        }
    }
}

/// A file for a replacement in `dir`: unnamed when the filesystem can (`O_TMPFILE`: nothing is
/// left behind if we die while writing it), else created under a plain temp name (returned).
pub(super) fn open(
    dir: &Path,
    target: &str,
) -> Result<(std::fs::File, Option<PathBuf>), super::StoreError> {
    let unnamed = std::fs::OpenOptions::new()
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_TMPFILE | libc::O_CLOEXEC)
        .open(dir);
    match unnamed {
        Ok(f) => return Ok((f, None)),
        // No O_TMPFILE here (EOPNOTSUPP; EISDIR or EINVAL on kernels or filesystems without it).
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(libc::EOPNOTSUPP | libc::EISDIR | libc::EINVAL)
            ) => {}
        Err(e) => return Err(super::err(super::code::StoreCode::CreateFailed, dir, e)),
    }
    let tmp = dir.join(plain_name(target));
    let f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&tmp)
        .map_err(|e| super::err(super::code::StoreCode::CreateFailed, &tmp, e))?;
    Ok((f, Some(tmp)))
}

/// Give a finished unnamed temp file its proven name (`linkat` through `/proc/self/fd`, which
/// needs no privilege, unlike `AT_EMPTY_PATH`).
pub(super) fn name(
    f: &std::fs::File,
    dir: &Path,
    target: &str,
) -> Result<PathBuf, super::StoreError> {
    use std::os::fd::AsRawFd;
    use std::os::unix::ffi::OsStrExt;
    let ino = f
        .metadata()
        .map_err(|e| super::err(super::code::StoreCode::StatFailed, dir, e))?
        .ino();
    let from = std::ffi::CString::new(format!("/proc/self/fd/{}", f.as_raw_fd()))
        .map_err(|e| super::err(super::code::StoreCode::LinkFailed, dir, e))?;
    let mut last = String::new();
    for _ in 0..3 {
        let tmp = dir.join(proven_name(target, ino));
        let to = std::ffi::CString::new(tmp.as_os_str().as_bytes())
            .map_err(|e| super::err(super::code::StoreCode::LinkFailed, &tmp, e))?;
        // SAFETY: two valid NUL-terminated paths; AT_SYMLINK_FOLLOW resolves the fd link.
        let r = unsafe {
            libc::linkat(
                libc::AT_FDCWD,
                from.as_ptr(),
                libc::AT_FDCWD,
                to.as_ptr(),
                libc::AT_SYMLINK_FOLLOW,
            )
        };
        if r == 0 {
            return Ok(tmp);
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::AlreadyExists {
            return Err(super::err(super::code::StoreCode::LinkFailed, &tmp, e));
        }
        last = e.to_string();
    }
    Err(super::err(super::code::StoreCode::LinkFailed, dir, last))
}

/// What a `.pi-intercom/.gitignore` holds of our lines, or why it cannot be kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum IgnoreState {
    /// Every line is there.
    Complete,
    /// No file yet (the first write into the folder creates it).
    Absent,
    /// These lines are missing (the next write appends them); the file's text.
    Lacks(Vec<&'static str>, String),
    /// It cannot be read or extended safely: why, in words (nothing is written then).
    Problem(String),
}

/// Read a `.gitignore` (never through a link, at most `IGNORE_CAP` bytes) and compare it with
/// our lines.
pub(crate) fn ignore_state(file: &Path) -> IgnoreState {
    use crate::fsguard::FsError;
    let text = match crate::fsguard::read_capped(file, IGNORE_CAP) {
        Ok(b) => match String::from_utf8(b) {
            Ok(t) => t,
            Err(_) => return IgnoreState::Problem("it is not UTF-8 text".into()),
        },
        Err(FsError::NotFound) => return IgnoreState::Absent,
        Err(FsError::Link) => {
            return IgnoreState::Problem("it is a symbolic link, which is never followed".into())
        }
        Err(FsError::Oversize) => {
            return IgnoreState::Problem(format!(
                "it is larger than {} KiB, more than is read",
                IGNORE_CAP / 1024
            ))
        }
        Err(e) => {
            return IgnoreState::Problem(format!(
                "it cannot be read as a regular file ({})",
                e.code()
            ))
        }
    };
    let have: Vec<&str> = text.lines().map(str::trim).collect();
    let missing: Vec<&'static str> = IGNORED
        .iter()
        .copied()
        .filter(|l| !have.contains(l))
        .collect();
    if missing.is_empty() {
        IgnoreState::Complete
    } else {
        IgnoreState::Lacks(missing, text)
    }
}

/// The lines our `.gitignore` holds.
pub(crate) fn ignored_lines() -> &'static [&'static str] {
    &IGNORED
}

/// Whether problems are said on stderr too (not while a terminal UI owns the screen).
static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

pub(crate) fn quiet_warnings() {
    QUIET.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Who else hears that a `.gitignore` cannot be kept: the log, told by `main_entry`
/// (`on_ignore_problem`). The store is the ground floor and names nothing above it.
static TELL: OnceLock<fn(&Path, &str)> = OnceLock::new();

/// Have `tell` hear each `.gitignore` problem (once per process and file, as stderr does).
pub(crate) fn on_ignore_problem(tell: fn(&Path, &str)) {
    let _ = TELL.set(tell);
}

/// Say once per process and file that a `.gitignore` cannot be kept: to whoever listens (the
/// log) always, on stderr unless quiet.
fn report(file: &Path, why: &str) {
    static SAID: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
    {
        let mut said = SAID.lock().unwrap_or_else(|e| e.into_inner());
        if said.iter().any(|p| p == file) || said.len() >= 64 {
            return;
        }
        said.push(file.to_path_buf());
    }
    if let Some(tell) = TELL.get() {
        tell(file, why);
    }
    if !QUIET.load(std::sync::atomic::Ordering::Relaxed) {
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "intercom-pane: {}: {}; not kept, so machine-local files (seats, jobs, locks) could end up in a commit. `intercom-pane doctor` shows the lines it needs.",
            crate::text::sanitize(&file.display().to_string()),
            why
        );
    }
}

/// When `path` lies in a `.pi-intercom` folder, make sure that folder's `.gitignore` lists the
/// machine-local files (missing lines are appended; a person's own lines are kept). A file that
/// cannot be kept (a link, too large, not text, not writable) is reported, never replaced.
pub(super) fn ensure_ignored(path: &Path) {
    let Some(base) = path
        .ancestors()
        .skip(1)
        .find(|a| a.file_name().is_some_and(|n| n == crate::paths::STATE_DIR))
    else {
        return;
    };
    let file = base.join(".gitignore");
    if path == file {
        return;
    }
    let (missing, text) = match ignore_state(&file) {
        IgnoreState::Complete => return,
        IgnoreState::Problem(why) => return report(&file, &why),
        IgnoreState::Absent => (IGNORED.to_vec(), String::new()),
        IgnoreState::Lacks(missing, text) => (missing, text),
    };
    let have: Vec<&str> = text.lines().map(str::trim).collect();
    let mut out = text.clone();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    if !have.contains(&IGNORE_HEADER) {
        out.push_str(IGNORE_HEADER);
        out.push('\n');
    }
    for l in missing {
        out.push_str(l);
        out.push('\n');
    }
    if let Err(e) = super::write_public(&file, out.as_bytes()) {
        report(&file, &format!("it cannot be written ({})", e.code));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proven_names_carry_their_writer_and_inode() {
        let n = proven_name("config.json", 4242);
        let p = proof_of(&n).unwrap();
        assert_eq!(p.pid as u32, std::process::id());
        assert_eq!(Some(p.ticks), proc::read_stat(p.pid).map(|s| s.start_ticks));
        assert_eq!(
            (p.ino, p.was, p.target.as_str()),
            (4242, None, "config.json")
        );
        // Right before a swap it also names the file the swap displaces.
        let d = displacing(Path::new(&n), 77).unwrap();
        let d = d.to_str().unwrap();
        let q = proof_of(d).unwrap();
        assert_eq!(
            (q.pid, q.ticks, q.ino, q.was),
            (p.pid, p.ticks, 4242, Some(77))
        );
        assert!(displacing(Path::new(d), 78).is_none(), "named once");
        assert!(displacing(Path::new(&plain_name("config.json")), 77).is_none());
        assert!(proof_of(&plain_name("config.json")).is_none());
        assert!(proof_of("config.json.0b1d-uuid.tmp").is_none());
        assert!(proof_of("notes.ip-999999-5-0123456789ab.tmp").is_none());
        assert!(proof_of("config.json.ip-12-34-56-zz.tmp").is_none());
    }

    #[test]
    fn only_a_dead_writers_file_that_carries_its_own_inode_is_swept() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let put = |name: &str| {
            let p = dir.path().join(name);
            std::fs::write(&p, b"x").unwrap();
            (p.clone(), std::fs::metadata(&p).unwrap().ino())
        };
        // A dead writer's file, named with its real inode: renamed to carry it, as we name ours.
        let (draft, ino) = put("draft");
        let dead = dir
            .path()
            .join(format!("a.json.ip-999999999-5-{ino}-0123456789ab.tmp"));
        std::fs::rename(&draft, &dead).unwrap();
        // A live writer's (ours, this process).
        let (d2, ino2) = put("draft2");
        let live = dir.path().join(proven_name("a.json", ino2));
        std::fs::rename(&d2, &live).unwrap();
        // A person's notes named like an old temp, one named with a wrong inode, a foreign temp.
        let (notes, _) = put("notes.ip-999999-5-0123456789ab.tmp");
        let (wrong, _) = put("b.json.ip-999999999-5-1-0123456789ab.tmp");
        let (foreign, _) = put("config.json.5f0c9b2e-uuid.tmp");
        let found = stale(dir.path());
        assert_eq!(found, vec![dead.clone()]);
        for p in found {
            assert!(still_stale(&p));
            std::fs::remove_file(p).unwrap();
        }
        assert!(live.exists() && notes.exists() && wrong.exists() && foreign.exists());
        assert!(!dead.exists());
    }

    /// A writer killed between its swap and its clean-up leaves the displaced file under its
    /// temp name (owned by the target's owner, as is a replacement that kept it): swept by the
    /// inode the name carries for it. Another user's file is not, unless it owns the target.
    #[test]
    fn a_displaced_file_and_an_owner_kept_replacement_of_a_dead_writer_are_swept() {
        use std::os::unix::fs::MetadataExt;
        if !nix::unistd::geteuid().is_root() {
            return; // chown needs root
        }
        let dir = tempfile::tempdir().unwrap();
        let put = |name: &str, uid: u32| {
            let p = dir.path().join(name);
            std::fs::write(&p, b"x").unwrap();
            std::os::unix::fs::chown(&p, Some(uid), None).unwrap();
            (p.clone(), std::fs::metadata(&p).unwrap().ino())
        };
        let (_, _) = put("a.json", 4321);
        let (old, was) = put("old", 4321);
        let displaced = dir
            .path()
            .join(format!("a.json.ip-999999999-5-1-{was}-0123456789ab.tmp"));
        std::fs::rename(&old, &displaced).unwrap();
        let (mine, ino) = put("mine", 4321);
        let kept = dir
            .path()
            .join(format!("a.json.ip-999999999-5-{ino}-0123456789ab.tmp"));
        std::fs::rename(&mine, &kept).unwrap();
        // Of a uid that owns neither us nor the target: never ours.
        let (theirs, ino3) = put("theirs", 4322);
        let stranger = dir
            .path()
            .join(format!("a.json.ip-999999999-5-{ino3}-0123456789ab.tmp"));
        std::fs::rename(&theirs, &stranger).unwrap();
        let mut found = stale(dir.path());
        found.sort();
        let mut want = vec![displaced, kept];
        want.sort();
        assert_eq!(found, want);
        assert!(stranger.exists());
    }

    #[test]
    fn the_ignore_file_is_created_and_extended_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let pi = dir.path().join(".pi-intercom");
        std::fs::create_dir(&pi).unwrap();
        std::fs::write(pi.join(".gitignore"), "mine\n/seats/").unwrap();
        ensure_ignored(&pi.join("seats").join("x.json"));
        let text = std::fs::read_to_string(pi.join(".gitignore")).unwrap();
        assert!(text.starts_with("mine\n/seats/\n"), "{text}");
        for l in IGNORED {
            assert_eq!(text.lines().filter(|x| *x == l).count(), 1, "{text}");
        }
        assert!(!text.lines().any(|l| l == "config.json"));
        ensure_ignored(&pi.join("config.json"));
        assert_eq!(
            std::fs::read_to_string(pi.join(".gitignore")).unwrap(),
            text
        );
    }

    #[test]
    fn the_ignore_file_state_says_what_it_lacks_or_why_it_cannot_be_kept() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join(".gitignore");
        assert_eq!(ignore_state(&f), IgnoreState::Absent);
        std::fs::write(&f, "mine\n/seats/\n").unwrap();
        match ignore_state(&f) {
            IgnoreState::Lacks(missing, text) => {
                assert!(!missing.contains(&"/seats/") && missing.contains(&"/jobs/"));
                assert_eq!(text, "mine\n/seats/\n");
            }
            other => panic!("{other:?}"),
        }
        std::fs::write(&f, b"\xff\xfe").unwrap();
        assert!(matches!(ignore_state(&f), IgnoreState::Problem(w) if w.contains("UTF-8")));
        std::fs::write(&f, "x\n".repeat(40_000)).unwrap();
        assert!(matches!(ignore_state(&f), IgnoreState::Problem(w) if w.contains("64 KiB")));
        std::fs::remove_file(&f).unwrap();
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), &f).unwrap();
        assert!(matches!(ignore_state(&f), IgnoreState::Problem(w) if w.contains("link")));
        std::fs::remove_file(&f).unwrap();
        std::fs::write(&f, IGNORED.join("\n")).unwrap();
        assert_eq!(ignore_state(&f), IgnoreState::Complete);
    }
}
