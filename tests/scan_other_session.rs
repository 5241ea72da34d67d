//! A configured worker whose pane runs a live pi registered in another session is `unknown`,
//! with both sessions named, never `idle` for lack of a file: that pi's state is not the
//! worker's. Real tmux on a private socket; the pane's pi is a program named `pi`.

mod mux_support;
mod scan_support;

use mux_support::{fake_pi, wait_for, TmuxServer};
use scan_support::*;
use serde_json::json;

#[test]
fn a_worker_whose_pane_runs_another_session_is_unknown_not_idle() {
    let env = Env::new().with_system_path();
    let root = env.path("root");
    write_roster(&root, &[("configured-1", "W")]);
    std::fs::create_dir_all(env.path("sessions")).unwrap();
    let bin = env.path("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let pi = fake_pi(&bin).display().to_string();
    let server = TmuxServer::start("W", &root, &[&pi, "600"]);
    wait_for(10_000, || {
        let l = server.tmux(&["list-panes", "-a", "-F", "#{pane_current_command}"]);
        (l.trim() == "pi").then_some(())
    })
    .expect("the pane runs pi");
    let sock = server.sock.display().to_string();
    let st = |idx: &serde_json::Value| {
        let r = record(idx, "W");
        (
            r["state"].as_str().unwrap().to_string(),
            r["stateReason"].as_str().unwrap().to_string(),
            r["stateSource"].as_str().unwrap().to_string(),
        )
    };
    // Without any registration: a live pi with no file yet is idle, as pi writes nothing until
    // its first prompt.
    let before = st(&scan_json(&env, &["--tmux-socket", &sock]));
    assert_eq!(
        (before.0.as_str(), before.1.as_str()),
        ("idle", "no_session_file")
    );

    let line = server.tmux(&["list-panes", "-a", "-F", "#{pane_id} #{pane_pid}"]);
    let mut parts = line.split_whitespace();
    let pane_id = parts.next().unwrap().to_string();
    let pid: i32 = parts.next().unwrap().parse().unwrap();
    let id = intercom_pane::proc::identity(pid).unwrap();
    let seats = env.path("data/seats/pi/other");
    std::fs::create_dir_all(&seats).unwrap();
    std::fs::write(
        seats.join("registration.json"),
        json!({"version": 1, "seat": "other", "sessionId": "other-2", "pid": pid,
            "startTicks": id.start_ticks, "bootId": id.boot_id,
            "startedAt": "2026-11-29T23:13:00.000Z",
            "runState": {"state": "idle", "seq": 1, "at": "2026-11-29T23:13:00.000Z",
                "event": "agent_settled"},
            "mux": {"kind": "tmux", "socket": sock, "session": "W", "paneId": pane_id}})
        .to_string(),
    )
    .unwrap();
    let (state, reason, source) = st(&scan_json(&env, &["--tmux-socket", &sock]));
    assert_eq!(
        (state.as_str(), reason.as_str()),
        ("unknown", "pane_runs_other_session")
    );
    assert!(
        source.contains("other-2") && source.contains("configured-1"),
        "{source}"
    );
}
