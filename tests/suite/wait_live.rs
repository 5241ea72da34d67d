//! `intercom-pane wait` sleeps on the live engine (the one every board view runs on): it makes a
//! pass when the seat's evidence moves, never on a timer of its own. A wait over an unchanging
//! board makes one pass however long it waits, and the change it waits for is answered by the
//! pass that change woke (`passes` counts them; the old one-second poll made one a second).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::live_support::Fleet;
use serde_json::Value;

fn wait_cmd(f: &Fleet, name: &str, state: &str, secs: u64) -> Command {
    let sys = f.tmp.path().join("sys.json");
    std::fs::write(&sys, serde_json::json!({"dataRoot": f.data}).to_string()).unwrap();
    let mut c = Command::new(env!("CARGO_BIN_EXE_intercom-pane"));
    c.args([
        "wait",
        name,
        "--state",
        state,
        "--timeout-secs",
        &secs.to_string(),
        "--config",
        sys.to_str().unwrap(),
        "--root",
        f.root.to_str().unwrap(),
        "--sessions-dir",
        f.sessions.to_str().unwrap(),
        "--fleet",
        "none",
        "--liveness",
        "assume-alive",
    ])
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    c
}

#[test]
fn a_wait_is_answered_by_the_pass_its_change_wakes_not_by_polling() {
    let f = Fleet::new(1);
    let child = wait_cmd(&f, "w0", "working", 30).spawn().unwrap();
    // Nothing changes for 3 s: the engine sleeps.
    std::thread::sleep(Duration::from_secs(3));
    let t0 = Instant::now();
    f.start_turn(0, 1);
    let out = child.wait_with_output().unwrap();
    let took = t0.elapsed();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(out.status.code(), Some(0), "{v}");
    assert_eq!(v["reached"], true, "{v}");
    assert_eq!(v["state"], "working", "{v}");
    assert_eq!(v["seat"]["name"], "w0", "{v}");
    // The first pass, then the one the write woke: no pass while nothing moved.
    assert_eq!(v["passes"], 2, "{v}");
    assert!(took < Duration::from_secs(10), "{took:?}");
}

#[test]
fn a_wait_that_times_out_made_one_pass_and_says_the_seat_as_it_is() {
    let f = Fleet::new(1);
    let out = wait_cmd(&f, "w0", "error", 2).output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{v}");
    assert_eq!(v["reached"], false, "{v}");
    assert_eq!(v["state"], "waiting", "{v}");
    assert_eq!(v["gone"], false, "{v}");
    assert_eq!(v["passes"], 1, "{v}");
    assert!(v["waitedMs"].as_u64().unwrap() >= 2000, "{v}");
    // A name no seat has is refused at once.
    let out = wait_cmd(&f, "nobody", "idle", 5).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}
