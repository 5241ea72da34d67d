//! ensure-monitor on Herdr, against the protocol-faithful fake Herdr server: split down, swap,
//! layout check, run, marker and name; the owned pane is kept on the next run.

mod mux_herdr_fake;

use intercom_pane::actions::monitor_pane::{self, EnsureRequest, Outcome};
use intercom_pane::evidence::config;
use intercom_pane::mux::MuxEnv;
use mux_herdr_fake::FakeHerdr;
use serde_json::json;

#[test]
fn places_and_keeps_a_monitor_above_the_coordinator_on_herdr() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir_all(root.join(".pi-intercom")).unwrap();
    std::fs::write(
        root.join(".pi-intercom/config.json"),
        json!({"version": 1, "multiplexer": "herdr", "agents": [
            {"sessionId": "coord", "name": "Coordinator", "coordinator": true, "description": "C.", "port": 1, "projectDirectory": "."},
            {"sessionId": "w", "name": "W", "coordinator": false, "description": "W.", "port": 2, "projectDirectory": "."}]})
        .to_string(),
    )
    .unwrap();
    let cfg = config::load(&root).unwrap();
    // The coordinator's pane w1:p1 has this test process as its shell: ancestry finds it.
    let me = std::process::id();
    let herdr = FakeHerdr::start(me);
    let env = MuxEnv {
        herdr_env: true,
        herdr_socket_path: Some(herdr.socket.display().to_string()),
        herdr_pane_id: Some("w1:p1".into()),
        ..Default::default()
    };
    let req = EnsureRequest {
        config: &cfg,
        session_id: Some("coord".into()),
        caller_pid: me as i32,
        monitor_argv: vec![
            "intercom-pane".into(),
            "monitor".into(),
            "--root".into(),
            root.display().to_string(),
        ],
        recover: false,
        now: 0,
    };
    let pane = match monitor_pane::ensure(&req, &env).unwrap() {
        Outcome::Created { pane } => pane,
        other => panic!("{other:?}"),
    };
    assert_ne!(pane, "w1:p1");
    let methods = herdr.methods();
    let pos = |m: &str| {
        methods
            .iter()
            .position(|x| x == m)
            .unwrap_or_else(|| panic!("{m} not called: {methods:?}"))
    };
    assert!(pos("pane.split") < pos("pane.swap"));
    assert!(pos("pane.swap") < pos("pane.layout"));
    let (label, marker) = herdr.with(|s| {
        let p = s.panes.iter().find(|p| p.id == pane).unwrap();
        (p.label.clone(), p.tokens.values().next().cloned())
    });
    assert_eq!(label.as_deref(), Some("Intercom monitor"));
    let rec: serde_json::Value =
        serde_json::from_slice(&std::fs::read(monitor_pane::record_path(&root, "coord")).unwrap())
            .unwrap();
    assert_eq!(rec["stage"], "submitted");
    assert_eq!(rec["pane"], pane);
    assert_eq!(rec["caller"], "w1:p1");
    assert_eq!(rec["multiplexer"], "herdr");
    assert_eq!(marker.as_deref(), rec["marker"].as_str());
    // The typed command ran in the new pane.
    let typed = herdr.with(|s| {
        s.inputs
            .iter()
            .any(|(p, t, _)| p == &pane && t.contains("monitor"))
    });
    assert!(typed, "the monitor command was typed into the new pane");

    // Next run: kept, nothing split again.
    let splits = herdr
        .methods()
        .iter()
        .filter(|m| *m == "pane.split")
        .count();
    assert_eq!(
        monitor_pane::ensure(&req, &env).unwrap(),
        Outcome::Preserved { pane: pane.clone() }
    );
    assert_eq!(
        herdr
            .methods()
            .iter()
            .filter(|m| *m == "pane.split")
            .count(),
        splits
    );
}
