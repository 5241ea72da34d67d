//! Liveness of a Herdr seat in the scan, against the protocol-faithful fake Herdr server: the
//! registered pi process, in its pane's process tree, decides alive / offline (not a process
//! name); a dead server is unknown.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_herdr_fake;
use crate::scan_support;

use mux_herdr_fake::FakeHerdr;
use scan_support::*;
use serde_json::{json, Value};

fn scan(env: &Env) -> Value {
    scan_json(env, &[])
}

/// A seat registered from a process started as `exec -a pi sleep …` (Herdr names it `sleep`,
/// with argv `["pi", …]`; captures 109–111): its pane's shell is that process.
fn exec_a_pi() -> std::process::Child {
    std::process::Command::new("bash")
        .args(["-c", "exec -a pi sleep 60"])
        .spawn()
        .unwrap()
}

fn register(env: &Env, session: &str, pid: u32, socket: &std::path::Path, pane: &str) {
    let ticks = intercom_pane::seam::proc::identity(pid as i32)
        .unwrap()
        .start_ticks;
    let seat = env.path("data/seats/herdr/idle");
    std::fs::create_dir_all(&seat).unwrap();
    std::fs::write(
        seat.join("registration.json"),
        json!({"version": 1, "sessionId": session, "pid": pid, "startTicks": ticks,
            "startedAt": "2026-11-29T23:13:00.000Z",
            "mux": {"kind": "herdr", "socket": socket.display().to_string(), "paneId": pane}})
        .to_string(),
    )
    .unwrap();
}

/// Waits (bounded) until `bash -c 'exec -a pi …'` has exec'd: its argv[0] reads `pi`.
fn wait_exec(pid: u32) {
    for _ in 0..200 {
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        if cmd.starts_with(b"pi\0") {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    panic!("exec -a pi did not happen");
}

#[test]
fn a_herdr_seat_is_alive_by_its_registered_pi_in_the_panes_process_tree() {
    let env = Env::new();
    let ids = pi_root(&env, &["idle"]);
    let mut pi = exec_a_pi();
    let pid = pi.id();
    wait_exec(pid);
    let herdr = FakeHerdr::start(pid);
    // As Herdr 0.8.2 reports it: the program's name, not the name it was started as.
    herdr.with(|s| {
        s.panes[0].foreground = vec![(pid, "sleep".into(), vec!["pi".into(), "60".into()])]
    });
    register(&env, &ids[0].1, pid, &herdr.socket, "w1:p1");
    let rec = record(&scan(&env), "W-idle").clone();
    assert_eq!(rec["state"], "idle", "{rec}");
    assert_eq!(rec["alive"], true);
    assert_eq!(rec["workspace"], "/tmp");
    assert_eq!(rec["workspaceSource"], "herdr-pane");

    // A display name alone is not evidence: the pane says `pi`, the registered pi is gone.
    let _ = pi.kill();
    let _ = pi.wait();
    herdr.with(|s| s.panes[0].foreground = vec![(pid, "pi".into(), vec!["pi".into()])]);
    let rec = record(&scan(&env), "W-idle").clone();
    assert_eq!(rec["state"], "offline", "{rec}");
    assert_eq!(rec["stateReason"], "pane_not_running_pi");
    assert_eq!(rec["stateSource"], "herdr");

    herdr.with(|s| s.panes.clear());
    assert_eq!(record(&scan(&env), "W-idle")["stateReason"], "pane_gone");

    // The server is down: a registered pi that is provably gone (its pid is free) needs no
    // pane to read offline, and says why.
    let socket = herdr.socket.clone();
    drop(herdr);
    let r = scan(&env);
    let rec = record(&r, "W-idle");
    assert_eq!(rec["state"], "offline", "{rec}");
    assert_eq!(rec["stateReason"], "registered_pi_gone");
    assert!(
        rec["stateSource"]
            .as_str()
            .unwrap()
            .contains("herdr not asked"),
        "{rec}"
    );
    // A registered pi that lives, its server down: unknown, never a guess.
    let mut pi = exec_a_pi();
    let pid = pi.id();
    wait_exec(pid);
    register(&env, &ids[0].1, pid, &socket, "w1:p1");
    let r = scan(&env);
    let rec = record(&r, "W-idle");
    assert_eq!(rec["state"], "unknown", "{rec}");
    assert!(
        rec["stateReason"].as_str().unwrap().starts_with("herdr_"),
        "{rec}"
    );
    let _ = pi.kill();
    let _ = pi.wait();
}

/// The registered pi lives, but not under the registered pane's shell: unknown, not alive.
#[test]
fn a_registered_pi_outside_its_pane_is_not_proof() {
    let env = Env::new();
    let ids = pi_root(&env, &["idle"]);
    let mut pi = exec_a_pi();
    let pid = pi.id();
    wait_exec(pid);
    // The pane's shell is a sibling of `pi` (not its ancestor), and the pane even says `pi`.
    let other = crate::mux_support::Sleeper::start(60);
    let herdr = FakeHerdr::start(other.id());
    herdr.with(|s| s.panes[0].foreground = vec![(other.id(), "pi".into(), vec!["pi".into()])]);
    register(&env, &ids[0].1, pid, &herdr.socket, "w1:p1");
    let rec = record(&scan(&env), "W-idle").clone();
    let _ = pi.kill();
    let _ = pi.wait();
    drop(other);
    assert_eq!(rec["state"], "unknown", "{rec}");
    assert_eq!(rec["stateReason"], "pane_not_identified");
}

/// Real-Herdr tier: a private headless `herdr server`; a pane runs `exec -a pi sleep 600` (Herdr
/// names it `sleep`) and a registration names that process: the seat reads live.
#[test]
#[cfg_attr(not(real_herdr), ignore = "real-Herdr tier: no `herdr` on PATH")]
fn real_herdr_exec_a_pi_seat_reads_live() {
    use std::time::{Duration, Instant};
    let h = mux_herdr_fake::real::RealHerdr::start();
    let env = Env::new();
    let ids = pi_root(&env, &["idle"]);
    let pane = h.background_pane("/tmp", "seat");
    h.shell_pid(&pane);
    h.cli(&["pane", "run", &pane, "exec -a pi sleep 600"]);
    let end = Instant::now() + Duration::from_secs(10);
    let pid = loop {
        let info = h
            .client()
            .process_info(&pane, Instant::now() + Duration::from_secs(3))
            .unwrap()
            .unwrap();
        let fg = info.foreground().cloned();
        if let Some(f) = fg.filter(|f| {
            f.argv
                .as_deref()
                .and_then(|a| a.first())
                .map(String::as_str)
                == Some("pi")
        }) {
            assert_eq!(f.name, "sleep", "Herdr names the program");
            break f.pid;
        }
        assert!(Instant::now() < end, "exec -a pi did not start: {info:?}");
        std::thread::sleep(Duration::from_millis(100));
    };
    register(&env, &ids[0].1, pid, &h.socket, &pane);
    let rec = record(&scan(&env), "W-idle").clone();
    assert_eq!(rec["alive"], true, "{rec}");
    assert_eq!(rec["state"], "idle", "{rec}");
}

/// Real-Herdr tier: the seat of a pane that a Herdr restart brought back (same pane id, a fresh
/// shell, the registered pi gone, captures 141–170) reads offline, never alive by its pane id.
#[test]
#[cfg_attr(not(real_herdr), ignore = "real-Herdr tier: no `herdr` on PATH")]
fn real_herdr_a_restarted_pane_is_not_the_seats_pi() {
    use std::time::{Duration, Instant};
    let mut h = mux_herdr_fake::real::RealHerdr::start();
    let env = Env::new();
    let ids = pi_root(&env, &["idle"]);
    let pane = h.background_pane("/tmp", "seat");
    let shell = h.shell_pid(&pane);
    h.cli(&["pane", "run", &pane, "exec -a pi sleep 600"]);
    let end = Instant::now() + Duration::from_secs(10);
    while std::fs::read(format!("/proc/{shell}/cmdline"))
        .map(|c| !c.starts_with(b"pi\0"))
        .unwrap_or(true)
    {
        assert!(Instant::now() < end, "exec -a pi did not happen");
        std::thread::sleep(Duration::from_millis(50));
    }
    register(&env, &ids[0].1, shell, &h.socket, &pane);
    assert_eq!(record(&scan(&env), "W-idle")["alive"], true);
    h.stop_server();
    h.start_server();
    let fresh = h.shell_pid(&pane);
    assert_ne!(fresh, shell, "the pane came back as a fresh shell");
    let rec = record(&scan(&env), "W-idle").clone();
    assert_eq!(rec["state"], "offline", "{rec}");
    assert_eq!(rec["alive"], false, "{rec}");
}
