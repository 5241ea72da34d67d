//! `status --watch --json-lines` and `scan --watch` as a reader sees them: the whole board
//! first, then a line per changed seat as it changes, heartbeats; exit 0 when the reader goes
//! away (`| head -n 3`) or on SIGTERM; a reader that does not read gets a `board` line again
//! (`why: resync`, `dropped`) instead of a queue that grows.

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::live_support::{sid, Fleet};
use serde_json::Value;

fn watch_args(f: &Fleet, cmd: &str) -> Vec<String> {
    let sys = f.tmp.path().join("sys.json");
    std::fs::write(&sys, serde_json::json!({"dataRoot": f.data}).to_string()).unwrap();
    [
        cmd,
        "--watch",
        "--json-lines",
        "--config",
        sys.to_str().unwrap(),
        "--root",
        f.root.to_str().unwrap(),
        "--sessions-dir",
        f.sessions.to_str().unwrap(),
        "--fleet",
        "none",
        "--repo",
        f.root.to_str().unwrap(),
        "--liveness",
        "assume-alive",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_intercom-pane")
}

fn parse(line: &str) -> Value {
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"))
}

#[test]
fn the_board_then_a_line_per_change_and_exit_0_on_sigterm() {
    let f = Fleet::new(2);
    let mut child = Command::new(bin())
        .args(watch_args(&f, "status"))
        .args(["--heartbeat-secs", "1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = parse(&lines.next().unwrap().unwrap());
    assert_eq!(first["v"], 1);
    assert_eq!(first["kind"], "board");
    assert_eq!(first["why"], "start");
    let recs = first["board"]["records"].as_array().unwrap();
    assert_eq!(recs.len(), 3);
    f.start_turn(1, 1);
    let t0 = Instant::now();
    let mut got_seat = false;
    let mut got_heartbeat = false;
    while !(got_seat && got_heartbeat) {
        assert!(t0.elapsed() < Duration::from_secs(20));
        let v = parse(&lines.next().unwrap().unwrap());
        match v["kind"].as_str().unwrap() {
            "seat" => {
                assert_eq!(v["key"], "root/w1");
                assert_eq!(v["seat"]["state"], "working");
                assert_eq!(v["seat"]["sessionId"], sid(1));
                got_seat = true;
            }
            "heartbeat" => {
                assert_eq!(v["live"]["mode"], "events");
                got_heartbeat = true;
            }
            other => panic!("unexpected {other}: {v}"),
        }
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{status:?}");
}

#[test]
fn head_n_3_ends_the_watch_with_exit_0_even_when_idle() {
    let f = Fleet::new(1);
    let args = watch_args(&f, "status")
        .iter()
        .map(|a| format!("'{a}'"))
        .collect::<Vec<_>>()
        .join(" ");
    let t0 = Instant::now();
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "'{}' {args} --heartbeat-secs 1 | head -n 3 > /dev/null; echo \"${{PIPESTATUS[0]}}\"",
            bin()
        ))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "0");
    assert!(t0.elapsed() < Duration::from_secs(20));
    // Idle, one line: `head -n 1` ends it at once, not at the next heartbeat.
    let t0 = Instant::now();
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "'{}' {args} --heartbeat-secs 3600 | head -n 1 > /dev/null; echo \"${{PIPESTATUS[0]}}\"",
            bin()
        ))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "0");
    assert!(t0.elapsed() < Duration::from_secs(20), "{:?}", t0.elapsed());
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0)
}

#[test]
fn a_reader_that_does_not_read_gets_a_board_again_not_a_growing_queue() {
    let f = Fleet::new(64);
    // A smaller queue than the 4 MiB of a real run (a test may only lower it), so a debug build
    // on a loaded machine fills it in seconds.
    let mut child = Command::new(bin())
        .args(watch_args(&f, "status"))
        .env("INTERCOM_PANE_TEST_WATCH_QUEUE_BYTES", "262144")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    // Wait for the first line to be there (the pipe holds it), then read nothing.
    std::thread::sleep(Duration::from_millis(500));
    // Changes for every seat, again and again: far more lines than the pipe and the queue hold.
    let t0 = Instant::now();
    let mut round = 0;
    let mut peak = 0;
    while t0.elapsed() < Duration::from_secs(8) {
        round += 1;
        for i in 0..64 {
            f.start_turn(i, round);
        }
        std::thread::sleep(Duration::from_millis(40));
        peak = peak.max(rss_kib(child.id()));
    }
    assert!(round > 20);
    assert!(peak > 0 && peak < 64 * 1024, "peak RSS {peak} KiB");
    // Now read: somewhere after the first lines, a board line says how many were dropped.
    let mut buf = Vec::new();
    let reader = std::thread::spawn(move || {
        let _ = out.read_to_end(&mut buf);
        buf
    });
    std::thread::sleep(Duration::from_secs(2));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(0));
    let text = String::from_utf8(reader.join().unwrap()).unwrap();
    let resync = text
        .lines()
        .map(parse)
        .find(|v| v["kind"] == "board" && v["why"] == "resync")
        .expect("a board line after the dropped ones");
    assert!(
        resync["dropped"].as_u64().unwrap() > 0,
        "{}",
        resync["dropped"]
    );
    assert_eq!(resync["board"]["records"].as_array().unwrap().len(), 65);
}

#[test]
fn scan_watch_writes_the_board_files_when_a_seat_changes() {
    let f = Fleet::new(1);
    let mut child = Command::new(bin())
        .args(watch_args(&f, "scan"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    assert_eq!(parse(&lines.next().unwrap().unwrap())["kind"], "board");
    let file = f.data.join("board/sessions/root/w0.json");
    let read = || std::fs::read_to_string(&file).unwrap_or_default();
    let t0 = Instant::now();
    while !read().contains("\"waiting\"") {
        assert!(t0.elapsed() < Duration::from_secs(20), "{}", read());
        std::thread::sleep(Duration::from_millis(20));
    }
    f.start_turn(0, 1);
    assert_eq!(parse(&lines.next().unwrap().unwrap())["kind"], "seat");
    let t0 = Instant::now();
    while !read().contains("\"working\"") {
        assert!(t0.elapsed() < Duration::from_secs(20));
        std::thread::sleep(Duration::from_millis(20));
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(0));
}
