//! The rosters this user made on this machine (`<dataRoot>/rosters.json`): `init` adds each
//! root it creates, so a second roster's coordinator never gets a port another roster's agent
//! already has (two rosters on one machine: docs/behaviour.md §10). A root whose roster is gone
//! or unreadable simply adds no ports. Bounded: at most `MAX_ROOTS` roots (the oldest dropped),
//! each config read through the bounded reader.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::evidence::config;
use crate::fsguard;
use crate::store;

/// Most roots remembered.
const MAX_ROOTS: usize = 256;
/// Largest list read.
const MAX_BYTES: u64 = 256 * 1024;
/// How long a writer waits for another's lock (it is held for one small write).
const LOCK_WAIT: Duration = Duration::from_millis(2000);

#[derive(Debug, Default, Serialize, Deserialize)]
struct RosterList {
    version: u32,
    roots: Vec<PathBuf>,
}

fn list_path(data_root: &Path) -> PathBuf {
    data_root.join("rosters.json")
}

fn read(data_root: &Path) -> RosterList {
    fsguard::read_trusted(&list_path(data_root), MAX_BYTES)
        .ok()
        .and_then(|b| serde_json::from_slice::<RosterList>(&b).ok())
        .filter(|l| l.version == 1)
        .unwrap_or_default()
}

/// The roots `init` made here (absolute paths, as written).
pub(crate) fn known_roots(data_root: &Path) -> Vec<PathBuf> {
    let mut roots = read(data_root).roots;
    roots.truncate(MAX_ROOTS);
    roots
}

/// Every port an agent of a known roster has (the rosters that still read).
pub(crate) fn ports_in_use(data_root: &Path) -> Vec<u16> {
    known_roots(data_root)
        .iter()
        .filter_map(|r| config::load(r).ok())
        .flat_map(|c| c.agents.into_iter().map(|a| a.port))
        .collect()
}

/// Add `root` to the list (kept once, newest last, the oldest dropped past `MAX_ROOTS`).
pub(crate) fn remember(data_root: &Path, root: &Path) -> Result<(), store::StoreError> {
    let lock_path = data_root.join("rosters.lock");
    let end = Instant::now() + LOCK_WAIT;
    // Bounded by LOCK_WAIT: another `init` holds it for one small write.
    let _lock = loop {
        match store::Lock::acquire(&lock_path) {
            Ok(l) => break l,
            Err(e) if e.code == store::code::StoreCode::Locked && Instant::now() < end => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => return Err(e),
        }
    };
    let mut list = read(data_root);
    list.version = 1;
    list.roots.retain(|r| r != root);
    list.roots.push(root.to_path_buf());
    let extra = list.roots.len().saturating_sub(MAX_ROOTS);
    list.roots.drain(..extra);
    let bytes = serde_json::to_vec_pretty(&list).unwrap_or_default();
    store::write_atomic(&list_path(data_root), &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_root_is_kept_once_newest_last_and_bounded() {
        let d = tempfile::tempdir().unwrap();
        for i in 0..(MAX_ROOTS + 3) {
            remember(d.path(), Path::new(&format!("/r/{i}"))).unwrap();
        }
        remember(d.path(), Path::new("/r/5")).unwrap();
        let roots = known_roots(d.path());
        assert_eq!(roots.len(), MAX_ROOTS);
        assert_eq!(roots.last().unwrap(), Path::new("/r/5"));
        assert_eq!(roots.iter().filter(|r| *r == Path::new("/r/5")).count(), 1);
        assert!(!roots.contains(&PathBuf::from("/r/0")), "the oldest went");
    }

    #[test]
    fn a_damaged_list_reads_as_none_and_adds_no_ports() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(list_path(d.path()), b"{not json").unwrap();
        assert!(known_roots(d.path()).is_empty());
        assert!(ports_in_use(d.path()).is_empty());
    }
}
