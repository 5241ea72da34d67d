//! Shared helpers for the Intercom reader tests.

use std::path::Path;

/// Every entry below `dir` (links not followed) with kind, length and mtime.
pub fn listing(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let m = std::fs::symlink_metadata(e.path()).unwrap();
            out.push(format!(
                "{} {:?} {} {:?}",
                e.path().display(),
                m.file_type(),
                m.len(),
                m.modified().ok()
            ));
            if m.is_dir() {
                stack.push(e.path());
            }
        }
    }
    out.sort();
    out
}
