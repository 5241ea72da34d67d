//! Holding close-worker at a stage boundary: the test takes the config lock the way the tool's
//! writers do and lets one config write through at a time until the close job reaches a stage.
#![allow(dead_code)]

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

/// The close job's stages in the order a run writes them (`""`: no job yet).
pub const STAGES: [&str; 5] = [
    "",
    "requested",
    "awaiting_handoff",
    "awaiting_settlement",
    "ready",
];

/// Take the config lock like our writers do: flock, then make sure the path still names the
/// locked file (a releasing writer removes it).
pub fn hold_config_lock(path: &Path) -> File {
    let end = Instant::now() + Duration::from_secs(20);
    loop {
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .unwrap();
        let locked = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0;
        let same = std::fs::metadata(path)
            .ok()
            .is_some_and(|m| m.ino() == f.metadata().unwrap().ino());
        if locked && same {
            return f;
        }
        assert!(Instant::now() < end, "never got the config lock");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// With `held` (the config lock at `lock`), let one write through at a time until the second
/// agent's close job in `cfg` reaches `STAGES[target]`; returns the lock, held again. Each
/// write must come within `wait_ms`; a run that goes past `ready` fails the test.
pub fn let_through_until(
    cfg: &Path,
    lock: &Path,
    mut held: File,
    target: usize,
    wait_ms: u64,
    label: &str,
) -> File {
    let at = |bytes: &[u8]| -> usize {
        let v: Value = serde_json::from_slice(bytes).unwrap_or(Value::Null);
        let s = v["agents"][1]["closeJob"]["state"].as_str().unwrap_or("");
        STAGES.iter().position(|o| *o == s).unwrap_or(usize::MAX)
    };
    loop {
        let before = std::fs::read(cfg).unwrap();
        let now = at(&before);
        assert_ne!(
            now,
            usize::MAX,
            "{label}: the run went past ready: {}",
            String::from_utf8_lossy(&before)
        );
        if now >= target {
            return held;
        }
        drop(held);
        // Polled every millisecond, and the lock retaken at once: the run must not get to write
        // a second stage in between (on a loaded machine a 20 ms poll let it, now and then).
        let end = Instant::now() + Duration::from_millis(wait_ms);
        while std::fs::read(cfg).ok().as_ref() == Some(&before) {
            assert!(Instant::now() < end, "{label}: no stage write came");
            std::thread::sleep(Duration::from_millis(1));
        }
        held = hold_config_lock(lock);
    }
}
