//! The timer's check (docs/behaviour.md §3a): before the long timer's full pass, look again at
//! everything the last full pass rested on — each folder it read (the folder's times, each file
//! that matters: inode, length, mtime, ctime), each server's panes on the `/proc` side, the
//! processes its states rest on that no pidfd holds, each workspace's git checkout — and make
//! the pass only when something moved. An idle board then touches a few hundred `lstat`s' worth
//! of memory every 30 s instead of rebuilding every row (on a machine whose memory is slow after
//! idle, that rebuild was most of the idle CPU: docs/benchmarks.md).
//!
//! Any pass that was not refused is a baseline, not only a full one (the last pass after activity
//! is almost always for a changed file): its folders are hashed by the first check, which trusts
//! them only when every time in them is older than the pass's start on the clock file times come
//! from (`file_clock_ns`) — a write after that start gets a time no older than it, so nothing the
//! pass read has moved since. Later checks compare with that hash.
//!
//! Never trusted: a change younger than `SETTLE_SECS` (file times have a granularity; a second
//! write within it could keep the same times), a pass that was refused or slow, a server that did
//! not answer or whose listing is not kept, a state that depends on time (`Plan::recheck`), a pi
//! the engine does not hold by a pidfd (`BoardPasses`). Every `REBUILD_AFTER` checks in a row a
//! full pass runs anyway, for what no check looks at (and for file times that lie: a clock set
//! back, a network filesystem whose server's clock is behind).

use std::hash::Hasher;
use std::ops::Range;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::files::{Names, Spec};
use crate::liveness::KeptPanes;
use crate::scan::{Checks, Scan};

/// A change this recent (seconds) is not trusted to show in file times.
const SETTLE_SECS: i64 = 2;
/// Checks in a row that found nothing before a full pass runs anyway (10 × 30 s).
pub(crate) const REBUILD_AFTER: u32 = 10;
/// Entries hashed per folder (as many as a pass lists).
const MAX_ENTRIES: usize = 4096;
/// A pass slower than this is no baseline (a server that took its deadline, a huge folder).
const SLOW_PASS_MS: u128 = 1000;

/// What the last pass rested on, to compare with now.
pub(crate) struct Baseline {
    /// pis the pass saw alive (the engine holds each by a pidfd: their exits are events).
    pis: usize,
    folders: Packed,
    /// The folders' hash, from the first check that found nothing in them younger than `began`.
    files: Option<u64>,
    /// When the pass began, on the clock file times come from (ns since the epoch).
    began: i128,
    sockets: Vec<PathBuf>,
    checks: Checks,
}

/// Now on the clock file times come from (`CLOCK_REALTIME_COARSE`, ns since the epoch): a file
/// written after this reading gets a time no older than it (multigrain times on newer kernels
/// included: a fine time is never behind the coarse one).
pub(crate) fn file_clock_ns() -> i128 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::RealtimeCoarse);
    i128::from(t.tv_sec) * 1_000_000_000 + i128::from(t.tv_nsec)
}

impl Baseline {
    /// The baseline of a pass that just ran and began at `began` (`file_clock_ns`); `None`:
    /// nothing of it can be trusted later. Reads nothing: the first check hashes the folders.
    pub(crate) fn of(
        pass: &Scan,
        folders: &[Spec],
        began: i128,
        took_ms: u128,
        recheck: bool,
    ) -> Option<Baseline> {
        if took_ms > SLOW_PASS_MS || recheck || !pass.checks.sockets_made_before(began) {
            return None;
        }
        let sockets = pass
            .servers
            .iter()
            .map(|(kind, socket, _, _)| kind.caps().listing_kept.then(|| socket.clone()))
            .collect::<Option<Vec<_>>>()?;
        Some(Baseline {
            pis: pass.pis.len(),
            folders: Packed::of(folders),
            files: None,
            began,
            sockets,
            checks: pass.checks.clone(),
        })
    }

    /// pis the pass saw alive.
    pub(crate) fn pis(&self) -> usize {
        self.pis
    }

    /// Folders looked at.
    pub(crate) fn folder_count(&self) -> usize {
        self.folders.specs.len()
    }

    /// Whether the first check already found the folders as the pass read them.
    pub(crate) fn hashed(&self) -> bool {
        self.files.is_some()
    }

    /// Whether a full pass now would rest on exactly what the last one did; with the time
    /// (µs) each part took (panes, processes and git, folders), for the log.
    pub(crate) fn holds(&mut self, kept: Option<&KeptPanes>) -> (bool, [u64; 3]) {
        let mut took = [0u64; 3];
        let mut timed = |i: usize, f: &mut dyn FnMut() -> bool| {
            let t = std::time::Instant::now();
            let ok = f();
            took[i] = t.elapsed().as_micros() as u64;
            ok
        };
        let same = timed(0, &mut || {
            kept.is_some_and(|k| k.same_as_used(&self.sockets))
        }) && timed(1, &mut || self.checks.still_hold())
            && timed(2, &mut || self.folders_hold());
        (same, took)
    }

    /// The folders as the pass read them: the hash the first check took, or (the first check)
    /// nothing in them younger than the pass's start.
    fn folders_hold(&mut self) -> bool {
        let Some(now) = realtime_ns() else {
            return false;
        };
        let settled = now - i128::from(SETTLE_SECS) * 1_000_000_000;
        folders_hold(&self.folders, &mut self.files, self.began, settled)
    }
}

/// The folders of a baseline and the names that matter in each, in one buffer: a check reads
/// them all, and as separate paths and name sets they had gone cold in as many places.
struct Packed {
    bytes: Vec<u8>,
    specs: Vec<(Range<usize>, Rule)>,
}

/// `Names`, as ranges of `Packed::bytes`.
enum Rule {
    All,
    Suffix(Range<usize>),
    /// Names, each followed by a NUL.
    Only(Range<usize>),
}

impl Packed {
    fn of(folders: &[Spec]) -> Packed {
        let mut bytes = Vec::new();
        let put = |b: &[u8], bytes: &mut Vec<u8>| {
            let start = bytes.len();
            bytes.extend_from_slice(b);
            start..bytes.len()
        };
        let specs = folders
            .iter()
            .map(|spec| {
                let dir = put(spec.dir.as_os_str().as_bytes(), &mut bytes);
                let rule = match &spec.names {
                    Names::All => Rule::All,
                    Names::Suffix(sfx) => Rule::Suffix(put(sfx.as_bytes(), &mut bytes)),
                    Names::Only(set) => {
                        let start = bytes.len();
                        for n in set {
                            bytes.extend_from_slice(n.as_bytes());
                            bytes.push(0);
                        }
                        Rule::Only(start..bytes.len())
                    }
                };
                (dir, rule)
            })
            .collect();
        Packed { bytes, specs }
    }

    /// Whether `name` matters under `rule` (as `Names::matches`).
    fn matches(&self, rule: &Rule, name: &[u8]) -> bool {
        match rule {
            Rule::All => true,
            Rule::Suffix(r) => super::files::suffix_matches(name, &self.bytes[r.clone()]),
            Rule::Only(r) => self.bytes[r.clone()].split(|&b| b == 0).any(|n| n == name),
        }
    }
}

/// `Baseline::folders_hold` with the times given (ns): nothing newer than `settled` is
/// trusted; the first time (`files` empty) nothing as new as `began` either, and the hash is
/// kept.
fn folders_hold(folders: &Packed, files: &mut Option<u64>, began: i128, settled: i128) -> bool {
    match *files {
        Some(h) => folders_now(folders, settled) == Some(h),
        None => {
            *files = folders_now(folders, settled.min(began - 1));
            files.is_some()
        }
    }
}

/// Now (ns since the epoch), `None` if the clock is before it.
fn realtime_ns() -> Option<i128> {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    Some(d.as_nanos() as i128)
}

/// One hash of every folder in `folders` as it is now; `None` when any time in them is newer
/// than `newest` (ns since the epoch).
fn folders_now(folders: &Packed, newest: i128) -> Option<u64> {
    let mut hash = std::collections::hash_map::DefaultHasher::new();
    for (dir, rule) in &folders.specs {
        let dir = &folders.bytes[dir.clone()];
        hash.write(dir);
        hash.write_u8(0);
        let dir = Path::new(std::ffi::OsStr::from_bytes(dir));
        let wanted = |n: &std::ffi::OsStr| folders.matches(rule, n.as_bytes());
        match crate::fsguard::hash_dir(dir, MAX_ENTRIES, wanted, &mut hash) {
            Ok(t) if t > newest => return None,
            Ok(_) => hash.write_u8(1),
            // A missing or refused folder: which one it is is part of what the pass saw.
            Err(e) => hash.write(e.code().as_bytes()),
        }
    }
    Some(hash.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_hash_the_same_until_a_file_that_matters_moves() {
        let dir = tempfile::tempdir().unwrap();
        let s = dir.path().join("s");
        std::fs::create_dir(&s).unwrap();
        std::fs::write(s.join("a.jsonl"), "one\n").unwrap();
        std::fs::write(s.join("notes.txt"), "x").unwrap();
        let specs = Packed::of(&[
            Spec::suffix(&s, ".jsonl"),
            Spec::all(dir.path().join("missing")),
            Spec::only(&s, &["notes.md", "other"]),
        ]);
        // Just written: not trusted.
        let settled = realtime_ns().unwrap() - i128::from(SETTLE_SECS) * 1_000_000_000;
        assert_eq!(folders_now(&specs, settled), None);
        // (Times are compared to the ns; the settle rule is the one above.)
        let any = i128::MAX;
        let before = folders_now(&specs, any).expect("read");
        assert_eq!(folders_now(&specs, any), Some(before));

        // The packed rules say what `Names` says.
        let (_, only) = &specs.specs[2];
        assert!(specs.matches(only, b"notes.md") && specs.matches(only, b"other"));
        assert!(!specs.matches(only, b"notes") && !specs.matches(only, b"a.jsonl"));
        let (_, sfx) = &specs.specs[0];
        assert!(specs.matches(sfx, b"a.jsonl") && !specs.matches(sfx, b"a.json"));

        // A file that does not match changes in place: the same.
        std::fs::write(s.join("notes.txt"), "y").unwrap();
        assert_eq!(folders_now(&specs, any), Some(before));

        // The file that matters grows: not the same.
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(s.join("a.jsonl"))
            .unwrap();
        std::io::Write::write_all(&mut f, b"two\n").unwrap();
        let grown = folders_now(&specs, any).expect("read");
        assert_ne!(grown, before);

        // Replaced by a link to the same content: not the same.
        std::fs::rename(s.join("a.jsonl"), s.join("b.old")).unwrap();
        std::os::unix::fs::symlink(s.join("b.old"), s.join("a.jsonl")).unwrap();
        let linked = folders_now(&specs, any).expect("read");
        assert_ne!(linked, grown);

        // A missing folder that appears: not the same.
        std::fs::create_dir(dir.path().join("missing")).unwrap();
        assert_ne!(folders_now(&specs, any), Some(linked));
    }

    #[test]
    fn the_first_check_trusts_only_what_is_older_than_the_pass() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.jsonl"), "one\n").unwrap();
        let specs = Packed::of(&[Spec::suffix(dir.path(), ".jsonl")]);
        let any = i128::MAX;

        // The file was written after the pass began (the pass may have read it before): no
        // hash, not the same.
        let began_before = file_clock_ns() - 1_000_000_000;
        let mut files = None;
        assert!(!folders_hold(&specs, &mut files, began_before, any));
        assert_eq!(files, None);

        // A pass that began after the write read it as it is: the same, and hashed.
        std::thread::sleep(std::time::Duration::from_millis(30));
        let began_after = file_clock_ns();
        assert!(folders_hold(&specs, &mut files, began_after, any));
        assert!(files.is_some());
        assert!(folders_hold(&specs, &mut files, began_after, any));

        // Later checks compare with that hash: a line appended is seen.
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(dir.path().join("a.jsonl"))
            .unwrap();
        std::io::Write::write_all(&mut f, b"two\n").unwrap();
        assert!(!folders_hold(&specs, &mut files, began_after, any));
    }

    #[test]
    fn a_time_cut_to_the_second_is_not_trusted_until_two_seconds_before_the_pass() {
        // A filesystem that keeps whole seconds (ext2's small inodes, FAT: two) writes a time
        // up to that much before the write: one after the pass began could read as older.
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("a.jsonl");
        std::fs::write(&f, "one\n").unwrap();
        let whole = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let file = std::fs::File::options().write(true).open(&f).unwrap();
        file.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(whole))
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(30));
        let began = file_clock_ns();
        let specs = Packed::of(&[Spec::suffix(dir.path(), ".jsonl")]);
        let mut files = None;
        assert!(!folders_hold(&specs, &mut files, began, i128::MAX));
        // Two seconds on, the same time is trusted.
        assert!(folders_hold(
            &specs,
            &mut files,
            began + 2_000_000_001,
            i128::MAX
        ));
    }

    #[test]
    fn a_write_after_the_reading_of_the_file_clock_is_never_older_than_it() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        for _ in 0..200 {
            let before = file_clock_ns();
            std::fs::write(&file, "x").unwrap();
            let mut h = std::collections::hash_map::DefaultHasher::new();
            let newest = crate::fsguard::hash_dir(dir.path(), 8, |_| true, &mut h).unwrap();
            assert!(newest >= before, "a time {newest} older than {before}");
        }
    }
}
