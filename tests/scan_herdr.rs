//! Liveness of a Herdr seat in the scan, against the protocol-faithful fake Herdr server: the
//! registered pane's foreground process decides alive / offline; a dead server is unknown.

mod mux_herdr_fake;
mod scan_support;

use mux_herdr_fake::FakeHerdr;
use scan_support::*;
use serde_json::{json, Value};

fn scan(env: &Env) -> Value {
    scan_json(env, &[])
}

#[test]
fn a_herdr_seat_follows_its_panes_foreground_process() {
    let env = Env::new();
    let ids = pi_root(&env, &["idle"]);
    let me = std::process::id();
    let herdr = FakeHerdr::start(me);
    let ticks = intercom_pane::proc::identity(me as i32)
        .unwrap()
        .start_ticks;
    let seat = env.path("data/seats/herdr/idle");
    std::fs::create_dir_all(&seat).unwrap();
    std::fs::write(
        seat.join("registration.json"),
        json!({"version": 1, "sessionId": ids[0].1, "pid": me, "startTicks": ticks,
            "startedAt": "2026-11-29T23:13:00.000Z",
            "mux": {"kind": "herdr", "socket": herdr.socket.display().to_string(), "paneId": "w1:p1"}})
        .to_string(),
    )
    .unwrap();

    herdr.with(|s| s.panes[0].foreground = vec![(me, "pi".into(), vec!["pi".into()])]);
    let r = scan(&env);
    let rec = record(&r, "W-idle");
    assert_eq!(rec["state"], "idle");
    assert_eq!(rec["stateSource"], "session file");
    assert_eq!(rec["alive"], true);
    assert_eq!(rec["workspace"], "/tmp");
    assert_eq!(rec["workspaceSource"], "herdr-pane");

    herdr.with(|s| s.panes[0].foreground = vec![(me, "bash".into(), vec!["bash".into()])]);
    let r = scan(&env);
    let rec = record(&r, "W-idle");
    assert_eq!(rec["state"], "offline");
    assert_eq!(rec["stateReason"], "pane_not_running_pi");
    assert_eq!(rec["stateSource"], "herdr");

    herdr.with(|s| s.panes.clear());
    let r = scan(&env);
    assert_eq!(record(&r, "W-idle")["stateReason"], "pane_gone");

    drop(herdr);
    let r = scan(&env);
    let rec = record(&r, "W-idle");
    assert_eq!(rec["state"], "unknown");
    assert!(
        rec["stateReason"].as_str().unwrap().starts_with("herdr_"),
        "{rec}"
    );
}
