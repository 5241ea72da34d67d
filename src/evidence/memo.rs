//! What a pass read from an unchanged file, kept for the next pass (the sidebar's): the one rule
//! for config, session and report files. A file is "unchanged" while its key (at least its
//! `fsguard::SettledKey`, taken before the read) is the same; a file written in the last 2 s has
//! no key and is always read again.
//!
//! A memo lives in the `ScanMemory` of whoever makes passes again (`evidence/mod.rs`); a one-shot
//! command has none, and its readers then take no key at all (no `stat` for a pass that never
//! comes).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Results by path, at most `max` (a full memo starts over rather than grow). Shared through
/// `&`: the sidebar's passes and its reply checks may use one memory from two threads.
pub struct Memo<K, V> {
    max: usize,
    entries: Mutex<HashMap<PathBuf, (K, V)>>,
}

impl<K: PartialEq, V: Clone> Memo<K, V> {
    pub(crate) fn new(max: usize) -> Memo<K, V> {
        Memo {
            max,
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// `read()` of `path`, or what it gave before while `key()` is the same. The key is taken
    /// before the read, so a change after it gives the next pass another key. Without a memo (a
    /// one-shot command) no key is taken and nothing is kept.
    pub(crate) fn read_through<E>(
        memo: Option<&Self>,
        path: &Path,
        key: impl FnOnce() -> Option<K>,
        read: impl FnOnce() -> Result<V, E>,
    ) -> Result<V, E> {
        let Some(memo) = memo else { return read() };
        let key = key();
        if let Some(v) = key.as_ref().and_then(|k| memo.get(path, k)) {
            return Ok(v);
        }
        let value = read()?;
        if let Some(k) = key {
            memo.put(path, k, value.clone());
        }
        Ok(value)
    }

    /// What was read from `path` when its key was `key`.
    pub(crate) fn get(&self, path: &Path, key: &K) -> Option<V> {
        let entries = self.entries.lock().ok()?;
        let (k, v) = entries.get(path)?;
        (k == key).then(|| v.clone())
    }

    /// Remember `value`, read from `path` under `key`.
    pub(crate) fn put(&self, path: &Path, key: K, value: V) {
        let Ok(mut map) = self.entries.lock() else {
            return;
        };
        if map.len() >= self.max && !map.contains_key(path) {
            map.clear();
        }
        map.insert(path.to_path_buf(), (key, value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_comes_back_only_under_its_key_and_the_memo_stays_bounded() {
        let m: Memo<u32, &str> = Memo::new(2);
        m.put(Path::new("/a"), 1, "one");
        assert_eq!(m.get(Path::new("/a"), &1), Some("one"));
        assert_eq!(m.get(Path::new("/a"), &2), None);
        assert_eq!(m.get(Path::new("/b"), &1), None);
        m.put(Path::new("/b"), 1, "b");
        m.put(Path::new("/c"), 1, "c");
        // Full: started over with only the newest.
        assert_eq!(m.get(Path::new("/a"), &1), None);
        assert_eq!(m.get(Path::new("/c"), &1), Some("c"));
    }
}
