//! The engine at the kernel's inotify limits, made real by lowering them (as root) for the
//! moment the engine starts, then putting them back at once (also on a panic): a queue that
//! overflows makes the next pass a full one and the board is right after it; a watch limit
//! reached falls back to full passes every few seconds, says so, and watches everything again
//! once the limit allows it.
//!
//! The limits are system-wide: each test holds them lowered only while its engine starts (a few
//! milliseconds), and the tests here run one at a time.

use std::time::Duration;

use crate::live_support::{engine, limits_held, state, until, Fleet};
use intercom_pane::live::Settings;
use intercom_pane::liveness::LivenessMode;

/// A lowered `/proc/sys/fs/inotify/<name>`, put back when dropped.
struct Lowered {
    path: String,
    old: String,
}

impl Lowered {
    fn set(name: &str, value: u64) -> Lowered {
        let path = format!("/proc/sys/fs/inotify/{name}");
        let old = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, value.to_string())
            .unwrap_or_else(|e| panic!("lowering {path} needs root: {e}"));
        Lowered { path, old }
    }
}

impl Drop for Lowered {
    fn drop(&mut self) {
        let _ = std::fs::write(&self.path, self.old.trim());
    }
}

/// inotify watches this user holds now (every process's `fdinfo`).
fn watches_in_use() -> u64 {
    let mut n = 0;
    for p in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(fds) = std::fs::read_dir(p.path().join("fdinfo")) else {
            continue;
        };
        for fd in fds.flatten() {
            if let Ok(t) = std::fs::read_to_string(fd.path()) {
                n += t.lines().filter(|l| l.starts_with("inotify wd:")).count() as u64;
            }
        }
    }
    n
}

#[test]
fn a_queue_overflow_is_caught_up_by_a_full_pass() {
    let _one = limits_held();
    let f = Fleet::new(2);
    let mut opts = f.opts(&f.tmp.path().join("no-tmux"));
    opts.liveness = LivenessMode::AssumeAlive;
    let mut e = {
        let _low = Lowered::set("max_queued_events", 8);
        engine(opts, Settings::default())
    };
    until(&mut e, |s| state(s, "w0") == "waiting/input_needed");
    // Far more distinct events than the queue holds, nothing read meanwhile; among them the
    // one change that matters.
    for i in 0..64 {
        std::fs::write(f.sessions.join(format!("noise-{i}.txt")), "x").unwrap();
    }
    f.start_turn(1, 1);
    for i in 0..64 {
        std::fs::write(f.sessions.join(format!("more-{i}.jsonl")), "x").unwrap();
    }
    let (s, _) = until(&mut e, |s| state(s, "w1") == "working/user_message");
    assert_eq!(state(&s, "w0"), "waiting/input_needed");
    let h = e.health();
    assert!(h.overflows >= 1, "{h:?}");
    assert!(h.last_overflow_at.is_some());
    assert_eq!(h.mode, "events", "an overflow is caught up, not a fallback");
}

#[test]
fn a_watch_limit_falls_back_to_full_passes_and_recovers() {
    let _one = limits_held();
    let f = Fleet::new(1);
    let mut opts = f.opts(&f.tmp.path().join("no-tmux"));
    opts.liveness = LivenessMode::AssumeAlive;
    let settings = Settings {
        degraded_every: Duration::from_secs(1),
        ..Settings::default()
    };
    // Room for one more watch than this user holds now: the engine's first sync hits it. Other
    // tests of this process may let go of watches meanwhile: then try again (bounded).
    let mut attempts = 0;
    let mut e = loop {
        attempts += 1;
        let mut e = engine(opts.clone(), settings);
        {
            let _low = Lowered::set("max_user_watches", watches_in_use() + 1);
            until(&mut e, |s| state(s, "w0") == "waiting/input_needed");
        }
        if e.health().limit.is_some() || attempts == 10 {
            break e;
        }
    };
    let h = e.health();
    assert_eq!(h.mode, "polling", "{h:?}");
    assert_eq!(h.limit, Some("inotify_watch_limit"));
    assert_eq!(h.full_every_secs, 1);
    // A change is still shown, by the next full pass at the latest.
    f.start_turn(0, 1);
    until(&mut e, |s| state(s, "w0") == "working/user_message");
    // The limit is back: the next full pass watches every folder again.
    let mut rounds = 0;
    while e.health().mode != "events" {
        rounds += 1;
        assert!(rounds < 10, "{:?}", e.health());
        until(&mut e, |_| true);
    }
    assert_eq!(e.health().limit, None);
    assert_eq!(e.health().full_every_secs, 30);
}
