//! Liveness in the scan against a real tmux server on a private socket: the real pi fixture
//! sessions are live only while a pane of their seat runs `pi`; offline when it runs a shell or
//! its recorded pane is gone; unknown when the server cannot be asked.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_support;
use crate::scan_support;

use std::path::Path;

use mux_support::{fake_pi, wait_for, TmuxServer};
use scan_support::*;
use serde_json::{json, Value};

fn scan(env: &Env, sock: &Path) -> Value {
    scan_json(env, &["--tmux-socket", &sock.display().to_string()])
}

fn state_of(index: &Value, agent: &str) -> (String, String) {
    let r = record(index, agent);
    (
        r["state"].as_str().unwrap().to_string(),
        r["stateReason"].as_str().unwrap().to_string(),
    )
}

fn start_ticks(pid: i32) -> u64 {
    intercom_pane::seam::proc::identity(pid)
        .unwrap()
        .start_ticks
}

/// Put a `tmux` on the binary's PATH that logs each call's arguments to `<env>/tmux-calls`
/// and runs the real one.
fn log_tmux_calls(env: &mut Env) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let shim_dir = env.path("shim");
    std::fs::create_dir_all(&shim_dir).unwrap();
    let log = env.path("tmux-calls");
    let real = std::process::Command::new("sh")
        .args(["-c", "command -v tmux"])
        .output()
        .unwrap();
    let real = String::from_utf8(real.stdout).unwrap();
    let shim = shim_dir.join("tmux");
    std::fs::write(
        &shim,
        format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
            log.display(),
            real.trim()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).unwrap();
    env.path_env = format!("{}:{}", shim_dir.display(), env.path_env);
    log
}

/// The tmux calls logged since the last look (the log is emptied).
fn take_calls(log: &Path) -> Vec<String> {
    let calls = std::fs::read_to_string(log).unwrap_or_default();
    std::fs::write(log, b"").unwrap();
    calls
        .lines()
        .map(|l| l.split(" -F ").next().unwrap_or(l).to_string())
        .collect()
}

#[test]
fn fixture_seats_follow_their_panes() {
    let mut env = Env::new().with_system_path();
    let calls = log_tmux_calls(&mut env);
    pi_root(&env, &["idle", "waiting", "error", "tool"]);
    let bin = env.path("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let pi = fake_pi(&bin).display().to_string();
    let cwd = env.path("root");
    // W-idle and W-tool: a session named like the worker whose pane runs `pi`.
    let mut server = TmuxServer::start("W-idle", &cwd, &[&pi, "600"]);
    server.new_session("W-tool", &cwd, &[&pi, "600"]);
    // W-waiting: its session exists but the pane runs a shell.
    server.new_session("W-waiting", &cwd, &[]);
    // W-error: a registration records its pane (in a session named otherwise) and pi process.
    server.new_session("elsewhere", &cwd, &[&pi, "600"]);
    let listing = server.tmux(&[
        "list-panes",
        "-a",
        "-F",
        "#{session_name} #{pane_id} #{pane_pid}",
    ]);
    let line = listing
        .lines()
        .find(|l| l.starts_with("elsewhere "))
        .unwrap()
        .to_string();
    let mut parts = line.split(' ').skip(1);
    let pane_id = parts.next().unwrap().to_string();
    let pid: i32 = parts.next().unwrap().parse().unwrap();
    let error_id = header_id(&Path::new(FIXTURES).join("pi-sessions/error.jsonl"));
    let seats = env.path("data/seats/main/w-error");
    std::fs::create_dir_all(&seats).unwrap();
    std::fs::write(
        seats.join("registration.json"),
        json!({"version": 1, "seat": "w-error", "sessionId": error_id, "pid": pid,
            "startTicks": start_ticks(pid), "startedAt": "2026-11-29T23:13:00.000Z",
            "task": "Ship the error fixture", "taskSetBy": "lead",
            "mux": {"kind": "tmux", "socket": server.sock.display().to_string(), "paneId": pane_id}})
        .to_string(),
    )
    .unwrap();
    // The pane commands settle asynchronously after new-session.
    wait_for(10_000, || {
        let l = server.tmux(&["list-panes", "-a", "-F", "#{pane_current_command}"]);
        (l.matches("pi").count() >= 3).then_some(())
    })
    .expect("panes run pi");

    take_calls(&calls);
    let index = scan(&env, &server.sock);
    // One server, one pass: one tmux client, the listing; no `tmux -V` (the listing carries
    // the server's version).
    let sock = server.sock.display().to_string();
    let one_listing = vec![format!("-u -S {sock} list-panes -a")];
    assert_eq!(take_calls(&calls), one_listing);
    let status = env.run(&layout_args(
        &env,
        &["status", "--json"],
        &["--tmux-socket", &sock],
    ));
    assert!(status.status.success(), "{status:?}");
    assert_eq!(take_calls(&calls), one_listing, "status --json");
    assert_eq!(
        state_of(&index, "W-idle"),
        ("idle".into(), "completed_reply".into())
    );
    assert_eq!(state_of(&index, "W-tool").0, "working");
    assert_eq!(
        state_of(&index, "W-waiting"),
        ("offline".into(), "pane_not_running_pi".into())
    );
    assert_eq!(state_of(&index, "W-error").0, "error");
    let err = record(&index, "W-error");
    assert_eq!(err["task"], "Ship the error fixture");
    assert_eq!(err["taskSource"], "registration");
    assert_eq!(err["taskSetBy"], "lead");
    assert_eq!(err["registered"]["alive"], true);
    assert_eq!(record(&index, "W-idle")["workspaceSource"], "tmux-pane");
    assert_eq!(
        record(&index, "W-idle")["workspace"],
        cwd.canonicalize().unwrap().display().to_string()
    );
    // No session for the coordinator and no registration: unknown, not offline.
    assert_eq!(
        state_of(&index, "Coordinator"),
        ("unknown".into(), "pane_not_identified".into())
    );
    assert_eq!(index["waitingOnYou"], json!([]));

    // The registered pane goes away: the seat is offline, and its registration is stale.
    server.tmux(&["kill-pane", "-t", &pane_id]);
    wait_for(10_000, || {
        intercom_pane::seam::proc::identity(pid)
            .is_none()
            .then_some(())
    });
    let index = scan(&env, &server.sock);
    assert_eq!(
        state_of(&index, "W-error"),
        ("offline".into(), "pane_gone".into())
    );
    let err = record(&index, "W-error");
    assert_eq!(err["registered"]["alive"], false);
    assert_eq!(
        err["taskSource"], "first-user-message",
        "a stale registration never wins"
    );
    assert_eq!(err["taskSetBy"], Value::Null);
    assert_eq!(index["registrationStale"], json!(["root/W-error"]));

    // The server is gone: every seat is unknown, never offline, but one whose registered pi
    // is provably gone (its pid free): that needs no pane to be offline, and says why.
    server.kill();
    let index = scan(&env, &server.sock);
    for agent in ["W-idle", "W-tool", "W-waiting", "Coordinator"] {
        assert_eq!(state_of(&index, agent).0, "unknown", "{agent}");
    }
    assert_eq!(
        state_of(&index, "W-error"),
        ("offline".into(), "registered_pi_gone".into())
    );
    assert!(state_of(&index, "W-idle").1.starts_with("tmux_"));
}

#[test]
fn without_tmux_on_path_every_seat_is_unknown() {
    let env = Env::new();
    pi_root(&env, &["idle", "waiting"]);
    let index = scan(&env, &env.path("no-such.sock"));
    assert_eq!(
        state_of(&index, "W-idle"),
        ("unknown".into(), "tmux_not_installed".into())
    );
    assert_eq!(state_of(&index, "W-waiting").0, "unknown");
    assert_eq!(index["waitingOnYou"], json!([]));
}
