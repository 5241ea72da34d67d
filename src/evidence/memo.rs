//! What a pass read from an unchanged file, kept for the next pass (the sidebar's): the one rule
//! for config, session and report files. A file is "unchanged" while its key (at least its
//! `fsguard::SettledKey`, taken before the read) is the same; a file written in the last 2 s has
//! no key and is always read again.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Results by path, at most `max` (a full memo starts over rather than grow).
pub struct Memo<K, V> {
    max: usize,
    entries: Mutex<Option<HashMap<PathBuf, (K, V)>>>,
}

impl<K: PartialEq, V: Clone> Memo<K, V> {
    pub const fn new(max: usize) -> Memo<K, V> {
        Memo {
            max,
            entries: Mutex::new(None),
        }
    }

    /// The key to remember a read of `path` under: `None` when this process makes one pass
    /// (nothing is remembered) or the file has no key yet.
    pub fn key(&self, key: impl FnOnce() -> Option<K>) -> Option<K> {
        if super::remembering() {
            key()
        } else {
            None
        }
    }

    /// What was read from `path` when its key was `key`.
    pub fn get(&self, path: &Path, key: &K) -> Option<V> {
        let entries = self.entries.lock().ok()?;
        let (k, v) = entries.as_ref()?.get(path)?;
        (k == key).then(|| v.clone())
    }

    /// Remember `value`, read from `path` under `key`.
    pub fn put(&self, path: &Path, key: K, value: V) {
        let Ok(mut entries) = self.entries.lock() else {
            return;
        };
        let map = entries.get_or_insert_with(HashMap::new);
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
