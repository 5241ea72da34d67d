//! The timer's check (docs/behaviour.md §3a): before the long timer's full pass, look again at
//! everything the last full pass rested on — each folder it read (the folder's times, each file
//! that matters: inode, length, mtime, ctime), each server's panes on the `/proc` side, the
//! processes its states rest on that no pidfd holds, each workspace's git checkout — and make
//! the pass only when something moved. An idle board then touches a few hundred `lstat`s' worth
//! of memory every 30 s instead of rebuilding every row (on a machine whose memory is slow after
//! idle, that rebuild was most of the idle CPU: docs/benchmarks.md).
//!
//! Never trusted: a change younger than `SETTLE_SECS` (file times have a granularity; a second
//! write within it could keep the same times), a pass that was refused or slow, a server that did
//! not answer or whose listing is not kept, a state that depends on time (`Plan::recheck`), a pi
//! the engine does not hold by a pidfd (`BoardPasses`). Every `REBUILD_AFTER` checks in a row a
//! full pass runs anyway, for what no check looks at.

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

/// What the last full pass rested on, to compare with now.
pub(crate) struct Baseline {
    /// pis the pass saw alive (the engine holds each by a pidfd: their exits are events).
    pis: usize,
    folders: Packed,
    files: u64,
    sockets: Vec<PathBuf>,
    checks: Checks,
}

impl Baseline {
    /// The baseline of a full pass that just ran (`None`: nothing of it can be trusted later):
    /// taken after the pass, so anything that changed while it ran is either younger than
    /// `SETTLE_SECS` now (not trusted) or changes what the next check sees.
    pub(crate) fn after(
        pass: &Scan,
        folders: &[Spec],
        took_ms: u128,
        recheck: bool,
    ) -> Option<Baseline> {
        if took_ms > SLOW_PASS_MS || recheck || !pass.checks.servers_answered {
            return None;
        }
        let sockets = pass
            .servers
            .iter()
            .map(|(kind, socket, _, _)| kind.caps().listing_kept.then(|| socket.clone()))
            .collect::<Option<Vec<_>>>()?;
        let folders = Packed::of(folders);
        Some(Baseline {
            pis: pass.pis.len(),
            files: folders_now(&folders, SETTLE_SECS)?,
            folders,
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

    /// Whether a full pass now would rest on exactly what the last one did; with the time
    /// (µs) each part took (panes, processes and git, folders), for the log.
    pub(crate) fn holds(&self, kept: Option<&KeptPanes>) -> (bool, [u64; 3]) {
        let mut took = [0u64; 3];
        let mut timed = |i: usize, f: &dyn Fn() -> bool| {
            let t = std::time::Instant::now();
            let ok = f();
            took[i] = t.elapsed().as_micros() as u64;
            ok
        };
        let same = timed(0, &|| kept.is_some_and(|k| k.same_as_used(&self.sockets)))
            && timed(1, &|| self.checks.still_hold())
            && timed(2, &|| {
                folders_now(&self.folders, SETTLE_SECS) == Some(self.files)
            });
        (same, took)
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

/// One hash of every folder in `folders` as it is now; `None` when any time in them is within
/// `settle` seconds of now (or the clock is unreadable).
fn folders_now(folders: &Packed, settle: i64) -> Option<u64> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_secs() as i64;
    let mut hash = std::collections::hash_map::DefaultHasher::new();
    for (dir, rule) in &folders.specs {
        let dir = &folders.bytes[dir.clone()];
        hash.write(dir);
        hash.write_u8(0);
        let dir = Path::new(std::ffi::OsStr::from_bytes(dir));
        let wanted = |n: &std::ffi::OsStr| folders.matches(rule, n.as_bytes());
        match crate::fsguard::hash_dir(dir, MAX_ENTRIES, wanted, &mut hash) {
            Ok(newest) if newest > now - settle => return None,
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
        assert_eq!(folders_now(&specs, SETTLE_SECS), None);
        // (Times are compared to the ns; the settle rule is the one above.)
        let before = folders_now(&specs, 0).expect("read");
        assert_eq!(folders_now(&specs, 0), Some(before));

        // The packed rules say what `Names` says.
        let (_, only) = &specs.specs[2];
        assert!(specs.matches(only, b"notes.md") && specs.matches(only, b"other"));
        assert!(!specs.matches(only, b"notes") && !specs.matches(only, b"a.jsonl"));
        let (_, sfx) = &specs.specs[0];
        assert!(specs.matches(sfx, b"a.jsonl") && !specs.matches(sfx, b"a.json"));

        // A file that does not match changes in place: the same.
        std::fs::write(s.join("notes.txt"), "y").unwrap();
        assert_eq!(folders_now(&specs, 0), Some(before));

        // The file that matters grows: not the same.
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(s.join("a.jsonl"))
            .unwrap();
        std::io::Write::write_all(&mut f, b"two\n").unwrap();
        let grown = folders_now(&specs, 0).expect("read");
        assert_ne!(grown, before);

        // Replaced by a link to the same content: not the same.
        std::fs::rename(s.join("a.jsonl"), s.join("b.old")).unwrap();
        std::os::unix::fs::symlink(s.join("b.old"), s.join("a.jsonl")).unwrap();
        let linked = folders_now(&specs, 0).expect("read");
        assert_ne!(linked, grown);

        // A missing folder that appears: not the same.
        std::fs::create_dir(dir.path().join("missing")).unwrap();
        assert_ne!(folders_now(&specs, 0), Some(linked));
    }
}
