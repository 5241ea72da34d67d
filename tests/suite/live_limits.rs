//! The engine at the kernel's inotify limits, made real without touching what other processes
//! see: a queue that overflows (flooded past `fs.inotify.max_queued_events` while nothing reads
//! it) makes the next pass a full one and the board is right after it; a watch limit reached
//! falls back to full passes every few seconds, says so, and watches everything again once the
//! limit allows it. The watch limit is lowered only inside a user namespace of the test's own
//! (`/proc/sys/user/max_inotify_watches` there binds that namespace alone): lowering the
//! system's `max_user_watches` took watches from every other process of the user meanwhile —
//! other tests, the real-pi tier running alongside, anything else of root's.

use std::io::Write;
use std::time::Duration;

use crate::live_support::{engine, state, until, Fleet};
use intercom_pane::seam::live::board::BoardPass;
use intercom_pane::seam::live::{Settings, Wake};
use intercom_pane::seam::liveness::LivenessMode;

#[test]
fn a_queue_overflow_is_caught_up_by_a_full_pass() {
    let f = Fleet::new(2);
    let mut opts = f.opts(&f.tmp.path().join("no-tmux"));
    opts.liveness = LivenessMode::AssumeAlive;
    let mut e = engine(opts, Settings::default());
    until(&mut e, |s| state(s, "w0") == "waiting/input_needed");
    // More distinct events than the kernel's queue holds, nothing read meanwhile (the engine
    // reads only when asked): two files written in turn (the kernel merges an event only into
    // an identical last one). Then the one change that matters, whose event finds the queue
    // full and is lost: only the full pass after the overflow can show it.
    let max: u64 = std::fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        max <= 1 << 24,
        "a queue of {max} events is too long to flood"
    );
    let mut noise: Vec<std::fs::File> = (0..2)
        .map(|i| std::fs::File::create(f.sessions.join(format!("noise-{i}.txt"))).unwrap())
        .collect();
    for i in 0..max + 64 {
        noise[(i % 2) as usize].write_all(b"x").unwrap();
    }
    f.start_turn(1, 1);
    let (s, _) = until(&mut e, |s| state(s, "w1") == "working/user_message");
    assert_eq!(state(&s, "w0"), "waiting/input_needed");
    let h = e.health();
    assert!(h.overflows >= 1, "{h:?}");
    assert!(h.last_overflow_at.is_some());
    assert_eq!(h.mode, "events", "an overflow is caught up, not a fallback");
}

/// Set for the copy of this test binary that runs `watch_limit_scenario` in a user namespace.
const WATCH_CHILD: &str = "INTERCOM_PANE_TEST_WATCH_LIMIT_CHILD";
/// Printed by the scenario when it ran to its end (so its copy cannot pass by doing nothing).
const WATCH_DONE: &str = "watch-limit scenario: fell back, showed the change, recovered";

#[test]
fn a_watch_limit_falls_back_to_full_passes_and_recovers() {
    let out = std::process::Command::new("unshare")
        .args(["--user", "--map-root-user", "--"])
        .arg(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "live_limits::watch_limit_scenario",
            "--test-threads=1",
            "--nocapture",
        ])
        .env(WATCH_CHILD, "1")
        .output()
        .expect("unshare (util-linux) runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    assert!(text.contains(WATCH_DONE), "{text}");
}

/// Not a test on its own: the watch-limit scenario, run by the test above in a user namespace
/// of its own (does nothing unless started by it).
#[test]
fn watch_limit_scenario() {
    if std::env::var_os(WATCH_CHILD).is_none() {
        return;
    }
    // This namespace's own limit; the user holds no watch in it yet.
    let limit = "/proc/sys/user/max_inotify_watches";
    let old = std::fs::read_to_string(limit).unwrap();
    let f = Fleet::new(1);
    let mut opts = f.opts(&f.tmp.path().join("no-tmux"));
    opts.liveness = LivenessMode::AssumeAlive;
    let settings = Settings {
        degraded_every: Duration::from_secs(1),
        ..Settings::default()
    };
    let mut e = engine(opts, settings);
    // Room for one watch: the engine's first sync, which watches several folders, hits it.
    std::fs::write(limit, "1").unwrap();
    until(&mut e, |s| state(s, "w0") == "waiting/input_needed");
    let h = e.health();
    assert_eq!(h.mode, "polling", "{h:?}");
    assert_eq!(h.limit, Some("inotify_watch_limit"));
    assert_eq!(h.full_every_secs, 1);
    // Nothing moves: the timer's check finds the unwatched folders as they were (once their
    // times are 2 s old) and makes no pass.
    let end = std::time::Instant::now() + Duration::from_secs(15);
    let mut same = false;
    while !same {
        assert!(
            std::time::Instant::now() < end,
            "no check found the board unchanged"
        );
        if e.wait(Some(end)) == Wake::Pass {
            same = matches!(e.pass(), BoardPass::Same { .. });
        }
    }
    // A change is still shown: by its event if its folder got the one watch, else by the next
    // check, which finds the folder moved and makes the pass.
    f.start_turn(0, 1);
    until(&mut e, |s| state(s, "w0") == "working/user_message");
    // The limit is back: the next full pass watches every folder again.
    std::fs::write(limit, old.trim()).unwrap();
    let mut rounds = 0;
    while e.health().mode != "events" {
        rounds += 1;
        assert!(rounds < 10, "{:?}", e.health());
        until(&mut e, |_| true);
    }
    assert_eq!(e.health().limit, None);
    assert_eq!(e.health().full_every_secs, 30);
    println!("{WATCH_DONE}");
}
