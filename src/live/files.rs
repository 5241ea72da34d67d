//! The folders a pass reads, watched with inotify (docs/behaviour.md §3a): folders, never single
//! files, each with the names in it that matter. A folder that is missing, a link or no folder is
//! not watched; its nearest real parent (at most `MAX_CLIMB` levels up) is, for the one name that
//! leads to it, so its creation wakes the engine.
//!
//! Why `nix::sys::inotify` (the crate the project already uses): no thread of its own, reads in
//! bounded 4 KiB chunks from our loop, reports a queue overflow (`IN_Q_OVERFLOW`) as such, and
//! never panics on an event mask it does not know. The `inotify` crate `expect`s every event's
//! mask to be one it knows; `notify` runs its own thread and channel and reports an overflow only
//! as a rescan flag.
//!
//! Links are never followed: every watch is added with `IN_DONT_FOLLOW | IN_ONLYDIR`, and the
//! folder is `lstat`ed before and after, so a folder swapped for a link in between is dropped
//! again. A watched folder that is deleted or moved away ends its watch (`IN_DELETE_SELF`,
//! `IN_MOVE_SELF`, `IN_IGNORED`); the engine then runs a full pass and syncs the watch set again,
//! which finds the folder anew (or its parent).

use std::collections::{BTreeSet, HashMap};
use std::ffi::OsString;
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify, WatchDescriptor};

/// Most watches one engine holds (a roster of 255 workers with their per-cwd folders needs a few
/// hundred); more are not added and the engine falls back to timed full passes.
pub(crate) const MAX_WATCHES: usize = 4096;
/// How far up a missing folder's parent is looked for.
const MAX_CLIMB: usize = 2;
/// Most 4 KiB reads in one drain; the fd stays readable for the next turn of the loop.
const MAX_READS: usize = 64;

/// Which names in a watched folder matter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Names {
    /// Every entry.
    All,
    /// Only these names.
    Only(BTreeSet<OsString>),
    /// Names ending with this (e.g. `.json`).
    Suffix(String),
}

/// `Names::Suffix`'s rule (also the timer's check's, `live/check.rs`): a name that is text and
/// ends with `suffix`.
pub(crate) fn suffix_matches(name: &[u8], suffix: &[u8]) -> bool {
    std::str::from_utf8(name).is_ok() && name.ends_with(suffix)
}

impl Names {
    pub(crate) fn matches(&self, name: &std::ffi::OsStr) -> bool {
        match self {
            Names::All => true,
            Names::Only(set) => set.contains(name),
            Names::Suffix(s) => suffix_matches(name.as_encoded_bytes(), s.as_bytes()),
        }
    }

    fn union(self, other: &Names) -> Names {
        match (self, other) {
            (Names::All, _) | (_, Names::All) => Names::All,
            (Names::Only(mut a), Names::Only(b)) => {
                a.extend(b.iter().cloned());
                Names::Only(a)
            }
            (a, b) if &a == b => a,
            _ => Names::All,
        }
    }
}

/// One folder the pass reads and the names in it that matter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    pub dir: PathBuf,
    pub names: Names,
}

impl Spec {
    pub fn all(dir: impl Into<PathBuf>) -> Spec {
        Spec {
            dir: dir.into(),
            names: Names::All,
        }
    }

    pub fn only(dir: impl Into<PathBuf>, names: &[&str]) -> Spec {
        Spec {
            dir: dir.into(),
            names: Names::Only(names.iter().map(OsString::from).collect()),
        }
    }

    pub fn suffix(dir: impl Into<PathBuf>, suffix: &str) -> Spec {
        Spec {
            dir: dir.into(),
            names: Names::Suffix(suffix.into()),
        }
    }
}

/// What the kernel told, in the engine's terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Change {
    /// An entry that matters was written, created, removed or renamed (`dir/name`).
    Entry { dir: PathBuf, name: OsString },
    /// A folder came or went (a watched folder, a subfolder of one, or the way to a missing
    /// one): discovery may find other seats, and the watch set must be synced again.
    Folder(PathBuf),
    /// The kernel's queue overflowed: events were lost, anything may have changed.
    Overflow,
}

/// Why not every folder is watched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Limit {
    /// The kernel refused a watch (`ENOSPC`: `fs.inotify.max_user_watches` reached).
    Kernel,
    /// `MAX_WATCHES` (or a test's lower cap) reached.
    Own,
}

impl Limit {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Limit::Kernel => "inotify_watch_limit",
            Limit::Own => "watch_cap",
        }
    }
}

/// One watch and why it is held.
#[derive(Debug)]
struct Watch {
    path: PathBuf,
    /// The folder's own entries that matter (a folder the pass reads).
    names: Option<Names>,
    /// Child names that lead to a wanted folder that is missing.
    leads_to: BTreeSet<OsString>,
    /// (device, inode) of the folder when the watch was added.
    inode: (u64, u64),
}

/// Every event a folder the pass reads may see: its entries written, and `parent_mask`.
fn folder_mask() -> AddWatchFlags {
    AddWatchFlags::IN_MODIFY
        | AddWatchFlags::IN_ATTRIB
        | AddWatchFlags::IN_CLOSE_WRITE
        | parent_mask()
}

/// A parent watched only for the name leading to a missing folder: entries coming and going,
/// and the folder itself going.
fn parent_mask() -> AddWatchFlags {
    AddWatchFlags::IN_CREATE
        | AddWatchFlags::IN_DELETE
        | AddWatchFlags::IN_MOVED_FROM
        | AddWatchFlags::IN_MOVED_TO
        | AddWatchFlags::IN_DELETE_SELF
        | AddWatchFlags::IN_MOVE_SELF
        | guard_flags()
}

/// Never follow a link, only folders, and no events for names already unlinked.
fn guard_flags() -> AddWatchFlags {
    AddWatchFlags::IN_DONT_FOLLOW
        | AddWatchFlags::IN_ONLYDIR
        | AddWatchFlags::from_bits_retain(libc::IN_EXCL_UNLINK)
}

/// (device, inode) of a real folder at `path` (never a link).
fn real_dir(path: &Path) -> Option<(u64, u64)> {
    let m = std::fs::symlink_metadata(path).ok()?;
    m.file_type().is_dir().then(|| (m.dev(), m.ino()))
}

/// The inotify instance and the folders it watches.
pub(crate) struct WatchSet {
    ino: Inotify,
    watches: HashMap<WatchDescriptor, Watch>,
    by_path: HashMap<PathBuf, WatchDescriptor>,
    cap: usize,
    /// Set while some wanted folder is not watched because a limit was reached.
    limit: Option<Limit>,
    /// How many wanted folders (and parents) have no watch because of `limit`.
    unwatched: usize,
    overflows: u64,
}

impl WatchSet {
    /// A new inotify instance (non-blocking, close-on-exec), with the default cap.
    pub(crate) fn new() -> nix::Result<WatchSet> {
        WatchSet::with_cap(MAX_WATCHES)
    }

    /// A new instance holding at most `cap` watches (tests lower it to force the fallback).
    pub(crate) fn with_cap(cap: usize) -> nix::Result<WatchSet> {
        let ino = Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC)?;
        Ok(WatchSet {
            ino,
            watches: HashMap::new(),
            by_path: HashMap::new(),
            cap: cap.min(MAX_WATCHES),
            limit: None,
            unwatched: 0,
            overflows: 0,
        })
    }

    /// The fd to poll: readable when events are queued.
    pub(crate) fn raw_fd(&self) -> RawFd {
        self.ino.as_fd().as_raw_fd()
    }

    /// Folders watched now.
    pub(crate) fn len(&self) -> usize {
        self.watches.len()
    }

    /// Why some wanted folder is not watched, if one is not.
    pub(crate) fn limit(&self) -> Option<Limit> {
        self.limit
    }

    /// How many wanted folders have no watch because of the limit.
    pub(crate) fn unwatched(&self) -> usize {
        self.unwatched
    }

    /// Queue overflows seen so far.
    pub(crate) fn overflows(&self) -> u64 {
        self.overflows
    }

    /// Watch exactly the folders in `specs` (and the parents of missing ones); drop the rest.
    /// Idempotent: a folder already watched as the same inode keeps its watch. Returns how many
    /// folders the pass reads got a watch now (one that just appeared was maybe written before
    /// its watch existed: the caller passes again).
    pub(crate) fn sync(&mut self, specs: &[Spec]) -> usize {
        let mut new_folders = 0;
        let wanted = wanted_watches(specs);
        // Drop what is no longer wanted, and watches whose folder is another inode now (replaced,
        // or a link put in its place).
        let stale: Vec<PathBuf> = self
            .by_path
            .iter()
            .filter(|(p, wd)| {
                !wanted.contains_key(*p)
                    || self
                        .watches
                        .get(wd)
                        .is_none_or(|w| real_dir(p) != Some(w.inode))
            })
            .map(|(p, _)| p.clone())
            .collect();
        for p in stale {
            self.drop_watch(&p);
        }
        self.limit = None;
        self.unwatched = 0;
        for (path, (names, leads_to)) in wanted {
            if let Some(wd) = self.by_path.get(&path).copied() {
                let was_folder = self.watches.get(&wd).is_some_and(|w| w.names.is_some());
                if was_folder == names.is_some() {
                    if let Some(w) = self.watches.get_mut(&wd) {
                        w.names = names;
                        w.leads_to = leads_to;
                    }
                    continue;
                }
                // The role changed (a parent became a folder the pass reads): a new mask.
                self.drop_watch(&path);
            }
            if self.limit.is_some() {
                self.unwatched += 1;
                continue;
            }
            let folder = names.is_some();
            match self.add(&path, names, leads_to) {
                Ok(()) => new_folders += usize::from(folder),
                Err(Some(limit)) => {
                    self.limit = Some(limit);
                    self.unwatched += 1;
                }
                // Gone or not a folder any more: the next sync (after a full pass) looks again.
                Err(None) => {}
            }
        }
        new_folders
    }

    /// Add one watch, checking the folder is the same real folder before and after.
    fn add(
        &mut self,
        path: &Path,
        names: Option<Names>,
        leads_to: BTreeSet<OsString>,
    ) -> Result<(), Option<Limit>> {
        if self.watches.len() >= self.cap {
            return Err(Some(Limit::Own));
        }
        let before = real_dir(path).ok_or(None)?;
        let mask = if names.is_some() {
            folder_mask()
        } else {
            parent_mask()
        };
        let wd = match self.ino.add_watch(path, mask) {
            Ok(wd) => wd,
            Err(Errno::ENOSPC) => return Err(Some(Limit::Kernel)),
            Err(_) => return Err(None),
        };
        // Another path to the same folder (a bind mount) shares the watch: keep the first.
        if self.watches.contains_key(&wd) {
            return Err(None);
        }
        if real_dir(path) != Some(before) {
            let _ = self.ino.rm_watch(wd);
            return Err(None);
        }
        self.by_path.insert(path.to_path_buf(), wd);
        self.watches.insert(
            wd,
            Watch {
                path: path.to_path_buf(),
                names,
                leads_to,
                inode: before,
            },
        );
        Ok(())
    }

    fn drop_watch(&mut self, path: &Path) {
        if let Some(wd) = self.by_path.remove(path) {
            self.watches.remove(&wd);
            let _ = self.ino.rm_watch(wd);
        }
    }

    /// Read what the kernel queued (bounded) and say what it means. Never blocks.
    pub(crate) fn drain(&mut self, out: &mut Vec<Change>) {
        for _ in 0..MAX_READS {
            let events = match self.ino.read_events() {
                Ok(e) if !e.is_empty() => e,
                _ => return,
            };
            for ev in events {
                self.one(ev.wd, ev.mask, ev.name, out);
            }
        }
    }

    fn one(
        &mut self,
        wd: WatchDescriptor,
        mask: AddWatchFlags,
        name: Option<OsString>,
        out: &mut Vec<Change>,
    ) {
        if mask.contains(AddWatchFlags::IN_Q_OVERFLOW) {
            self.overflows += 1;
            out.push(Change::Overflow);
            return;
        }
        let Some(w) = self.watches.get(&wd) else {
            return;
        };
        let gone = AddWatchFlags::IN_DELETE_SELF
            | AddWatchFlags::IN_MOVE_SELF
            | AddWatchFlags::IN_IGNORED
            | AddWatchFlags::IN_UNMOUNT;
        if mask.intersects(gone) {
            let path = w.path.clone();
            out.push(Change::Folder(path.clone()));
            if let Some(w) = self.watches.remove(&wd) {
                self.by_path.remove(&w.path);
            }
            if !mask.contains(AddWatchFlags::IN_IGNORED) {
                let _ = self.ino.rm_watch(wd);
            }
            return;
        }
        let Some(name) = name else { return };
        if w.leads_to.contains(&name) {
            out.push(Change::Folder(w.path.join(&name)));
            return;
        }
        let Some(names) = &w.names else { return };
        let structural = AddWatchFlags::IN_CREATE
            | AddWatchFlags::IN_DELETE
            | AddWatchFlags::IN_MOVED_FROM
            | AddWatchFlags::IN_MOVED_TO;
        if mask.contains(AddWatchFlags::IN_ISDIR) && mask.intersects(structural) {
            // A subfolder came or went (pi's per-cwd folders, a seat's registration folder).
            out.push(Change::Folder(w.path.join(&name)));
        } else if names.matches(&name) {
            out.push(Change::Entry {
                dir: w.path.clone(),
                name,
            });
        }
    }
}

/// path → (names if it is a folder the pass reads, child names leading to missing folders).
type Wanted = HashMap<PathBuf, (Option<Names>, BTreeSet<OsString>)>;

/// The watches `specs` need: each real folder, else its nearest real parent (within
/// `MAX_CLIMB`) for the name leading to it.
fn wanted_watches(specs: &[Spec]) -> Wanted {
    let mut wanted: Wanted = HashMap::new();
    for s in specs {
        if !s.dir.is_absolute() {
            continue;
        }
        if real_dir(&s.dir).is_some() {
            let e = wanted.entry(s.dir.clone()).or_default();
            e.0 = Some(match e.0.take() {
                Some(n) => n.union(&s.names),
                None => s.names.clone(),
            });
            continue;
        }
        let mut child = s.dir.as_path();
        for _ in 0..MAX_CLIMB {
            let (Some(parent), Some(name)) = (child.parent(), child.file_name()) else {
                break;
            };
            if real_dir(parent).is_some() {
                wanted
                    .entry(parent.to_path_buf())
                    .or_default()
                    .1
                    .insert(name.to_os_string());
                break;
            }
            child = parent;
        }
    }
    wanted
}

#[cfg(test)]
mod tests {
    use super::*;

    impl WatchSet {
        /// Whether `dir` is watched as a folder the pass reads.
        fn watches_folder(&self, dir: &Path) -> bool {
            self.by_path
                .get(dir)
                .and_then(|wd| self.watches.get(wd))
                .is_some_and(|w| w.names.is_some())
        }
    }

    fn changes(w: &mut WatchSet) -> Vec<Change> {
        // The kernel queues events synchronously with the write: one drain sees them.
        let mut out = Vec::new();
        w.drain(&mut out);
        out
    }

    #[test]
    fn a_folder_is_watched_for_its_names_only() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("board");
        std::fs::create_dir(&d).unwrap();
        let mut w = WatchSet::new().unwrap();
        w.sync(&[Spec::only(&d, &["seen.json"])]);
        assert!(w.watches_folder(&d));
        std::fs::write(d.join("index.json"), "{}").unwrap();
        assert!(
            changes(&mut w).is_empty(),
            "our own board files wake nothing"
        );
        std::fs::write(d.join("seen.json"), "{}").unwrap();
        let c = changes(&mut w);
        assert!(c.contains(&Change::Entry {
            dir: d.clone(),
            name: "seen.json".into()
        }));
    }

    #[test]
    fn a_missing_folder_is_found_through_its_parent_and_a_link_is_never_watched() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("sessions");
        let mut w = WatchSet::new().unwrap();
        let spec = [Spec::all(&d)];
        assert_eq!(w.sync(&spec), 0, "only its parent is watched");
        assert!(!w.watches_folder(&d));
        std::fs::create_dir(&d).unwrap();
        assert_eq!(changes(&mut w), vec![Change::Folder(d.clone())]);
        // The folder's own watch is new: the engine passes once more for what was written
        // before it existed.
        assert_eq!(w.sync(&spec), 1);
        assert!(w.watches_folder(&d));
        assert_eq!(w.sync(&spec), 0, "a kept watch is not new");
        // Replaced by a link: the old watch ends, the link is not followed.
        let real = t.path().join("elsewhere");
        std::fs::create_dir(&real).unwrap();
        std::fs::rename(&d, t.path().join("moved")).unwrap();
        std::os::unix::fs::symlink(&real, &d).unwrap();
        let c = changes(&mut w);
        assert!(c.contains(&Change::Folder(d.clone())), "{c:?}");
        w.sync(&spec);
        assert!(!w.watches_folder(&d));
        std::fs::write(real.join("x.jsonl"), "{}").unwrap();
        assert!(changes(&mut w).is_empty());
        // Deleted and made again: watched anew.
        std::fs::remove_file(&d).unwrap();
        std::fs::create_dir(&d).unwrap();
        assert!(changes(&mut w).contains(&Change::Folder(d.clone())));
        w.sync(&spec);
        assert!(w.watches_folder(&d));
        std::fs::write(d.join("a.jsonl"), "x").unwrap();
        assert!(changes(&mut w).contains(&Change::Entry {
            dir: d.clone(),
            name: "a.jsonl".into()
        }));
        std::fs::remove_dir_all(&d).unwrap();
        assert!(changes(&mut w).contains(&Change::Folder(d.clone())));
        w.sync(&spec);
        assert!(!w.watches_folder(&d));
    }

    #[test]
    fn a_cap_leaves_folders_unwatched_and_says_so() {
        let t = tempfile::tempdir().unwrap();
        let specs: Vec<Spec> = (0..5)
            .map(|i| {
                let d = t.path().join(format!("d{i}"));
                std::fs::create_dir(&d).unwrap();
                Spec::all(d)
            })
            .collect();
        let mut w = WatchSet::with_cap(3).unwrap();
        w.sync(&specs);
        assert_eq!(w.len(), 3);
        assert_eq!(w.limit(), Some(Limit::Own));
        assert_eq!(w.unwatched(), 2);
        w.sync(&specs[..3]);
        assert_eq!(w.limit(), None);
        assert_eq!(w.len(), 3);
    }

    #[test]
    fn subfolders_coming_and_going_are_structural() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().to_path_buf();
        let mut w = WatchSet::new().unwrap();
        w.sync(&[Spec::suffix(&d, ".jsonl")]);
        std::fs::create_dir(d.join("--w--")).unwrap();
        assert_eq!(changes(&mut w), vec![Change::Folder(d.join("--w--"))]);
        std::fs::write(d.join("notes.txt"), "x").unwrap();
        assert!(changes(&mut w).is_empty());
    }
}
