//! Temp files that say who wrote them, and the `.pi-intercom/.gitignore` that keeps machine-local
//! files out of commits.
//!
//! A temp file is `<target>.ip-<pid>-<start ticks>-<random>.tmp`: a writer killed between create
//! and rename leaves one behind, and the next writer into the same folder removes it once that
//! pid no longer names a process with those start ticks. Temp files of other programs (the
//! Intercom extension's `config.json.<uuid>.tmp`) are never touched: whether their writer still
//! runs cannot be told.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::proc;

/// Folder entries looked at per sweep (a folder is swept each time we write into it).
const SWEEP_CAP: usize = 4096;
/// Largest `.gitignore` we read and extend.
const IGNORE_CAP: u64 = 64 * 1024;

/// The lines our `.gitignore` holds: everything under `.pi-intercom/` but the shared config.
const IGNORED: [&str; 8] = [
    "/seats/",
    "/jobs/",
    "/monitor-*.json",
    "*.tmp",
    "*.lock",
    "/workers/",
    "/worktrees/",
    "/retired/",
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

/// A fresh temp file name for `target`.
pub(super) fn name(target: &str) -> String {
    let (pid, ticks) = me();
    let r = uuid::Uuid::new_v4().simple().to_string();
    format!("{target}.ip-{pid}-{ticks}-{}.tmp", &r[..12])
}

/// The writer (pid, start ticks) named by one of our temp file names.
fn writer_of(file: &str) -> Option<(i32, u64)> {
    let body = file.strip_suffix(".tmp")?;
    let at = body.rfind(".ip-")?;
    let mut parts = body[at + 4..].splitn(3, '-');
    let pid = parts.next()?.parse().ok()?;
    let ticks = parts.next()?.parse().ok()?;
    let rand = parts.next()?;
    (rand.len() == 12 && rand.bytes().all(|b| b.is_ascii_hexdigit())).then_some((pid, ticks))
}

/// Our temp files in `dir` whose writer is dead (the store removes them).
pub(super) fn stale(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(list) = crate::fsguard::list_dir(dir, SWEEP_CAP) else {
        return out;
    };
    for e in &list.entries {
        if e.kind != crate::fsguard::Kind::File {
            continue;
        }
        let Some((pid, ticks)) = e.name_str().and_then(writer_of) else {
            continue;
        };
        let alive = proc::read_stat(pid).is_some_and(|s| s.start_ticks == ticks);
        if !alive {
            out.push(dir.join(&e.name));
        }
    }
    out
}

/// When `path` lies in a `.pi-intercom` folder, make sure that folder's `.gitignore` lists the
/// machine-local files (missing lines are appended; a person's own lines are kept).
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
    let text = match crate::fsguard::read_capped(&file, IGNORE_CAP) {
        Ok(b) => match String::from_utf8(b) {
            Ok(t) => t,
            Err(_) => return,
        },
        Err(crate::fsguard::FsError::NotFound) => String::new(),
        Err(_) => return,
    };
    let have: Vec<&str> = text.lines().map(str::trim).collect();
    let missing: Vec<&str> = IGNORED
        .iter()
        .copied()
        .filter(|l| !have.contains(l))
        .collect();
    if missing.is_empty() {
        return;
    }
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
    let _ = super::write_public(&file, out.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_carry_their_writer() {
        let n = name("config.json");
        let (pid, ticks) = writer_of(&n).unwrap();
        assert_eq!(pid as u32, std::process::id());
        assert_eq!(Some(ticks), proc::read_stat(pid).map(|s| s.start_ticks));
        assert!(writer_of("config.json.0b1d-uuid.tmp").is_none());
        assert!(writer_of("config.json.ip-12-34-zz.tmp").is_none());
    }

    #[test]
    fn a_dead_writers_temp_is_swept_a_live_ones_and_foreign_ones_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let live = dir.path().join(name("a.json"));
        let dead = dir.path().join("a.json.ip-999999999-5-0123456789ab.tmp");
        let foreign = dir.path().join("config.json.5f0c9b2e-uuid.tmp");
        for f in [&live, &dead, &foreign] {
            std::fs::write(f, b"x").unwrap();
        }
        for p in stale(dir.path()) {
            std::fs::remove_file(p).unwrap();
        }
        assert!(live.exists() && foreign.exists());
        assert!(!dead.exists());
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
}
