//! The opt-in log (`INTERCOM_PANE_LOG=path`): off by default; named JSON events for a pass's
//! timing, a multiplexer error with its detail, and ensure-monitor's stages in a real tmux pane;
//! bounded by rotation.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_support;
use crate::scan_support;

use std::process::Command;

use mux_support::{wait_for, TmuxServer};
use scan_support::*;
use serde_json::{json, Value};

fn events(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn scan_with(env: &Env, log: Option<&std::path::Path>) {
    let args = layout_args(env, &["scan"], &[]);
    let mut c = Command::new(env!("CARGO_BIN_EXE_intercom-pane"));
    c.args(&args)
        .current_dir(env.dir.path())
        .env_clear()
        .env("HOME", env.path("home"))
        .env("PATH", &env.path_env)
        .env("TMUX_TMPDIR", env.path("tmux-tmp"));
    if let Some(l) = log {
        c.env("INTERCOM_PANE_LOG", l);
    }
    assert!(c.output().unwrap().status.success());
}

#[test]
fn off_by_default_and_named_events_when_on() {
    // No tmux on PATH: the pass's liveness call fails, which the log records with its detail.
    let env = Env::new();
    pi_root(&env, &["idle"]);
    let log = env.path("log/intercom-pane.log");
    std::fs::create_dir_all(env.path("log")).unwrap();
    scan_with(&env, None);
    assert!(!log.exists());
    scan_with(&env, Some(&log));
    let ev = events(&log);
    let pass = ev
        .iter()
        .find(|e| e["event"] == "scan_pass")
        .unwrap_or_else(|| panic!("{ev:?}"));
    assert!(
        pass["ms"].is_u64() && pass["seats"].as_u64() >= Some(2),
        "{pass}"
    );
    assert_eq!(pass["command"], "scan");
    assert!(pass["at"].as_str().is_some_and(|t| t.ends_with('Z')));
    let mux = ev
        .iter()
        .find(|e| e["event"] == "mux_error")
        .unwrap_or_else(|| panic!("{ev:?}"));
    assert_eq!(mux["code"], "not_installed", "{mux}");
    // A relative path is not a place to write: ignored.
    let o = Command::new(env!("CARGO_BIN_EXE_intercom-pane"))
        .args(["man"])
        .env("INTERCOM_PANE_LOG", "relative.log")
        .current_dir(env.dir.path())
        .output()
        .unwrap();
    assert!(o.status.success());
    assert!(!env.path("relative.log").exists());
}

#[test]
fn ensure_monitor_stages_are_logged() {
    let env = Env::new().with_system_path();
    let root = env.path("root");
    std::fs::create_dir_all(root.join(".pi-intercom")).unwrap();
    let agents = json!([
        {"sessionId": "c-1", "name": "Coordinator", "coordinator": true, "description": "C.",
         "port": 1, "projectDirectory": "."},
        {"sessionId": "w-1", "name": "Worker", "coordinator": false, "description": "W.",
         "port": 2, "projectDirectory": "."}]);
    std::fs::write(
        root.join(".pi-intercom/config.json"),
        json!({"version": 1, "agents": agents}).to_string(),
    )
    .unwrap();
    let log = env.path("ensure.log");
    let server = TmuxServer::start("coord", &root, &[]);
    let cmd = format!(
        "INTERCOM_PANE_LOG={} {} ensure-monitor --root {} --config {} --session-id c-1; echo done > {}",
        log.display(),
        env!("CARGO_BIN_EXE_intercom-pane"),
        root.display(),
        env.system_config(),
        env.path("rc").display()
    );
    server.tmux(&["send-keys", "-t", "=coord:", &cmd, "Enter"]);
    wait_for(15_000, || env.path("rc").exists().then_some(())).expect("ensure-monitor ran");
    let ev = events(&log);
    let stages: Vec<&str> = ev
        .iter()
        .filter(|e| e["event"] == "ensure_monitor_stage")
        .filter_map(|e| e["stage"].as_str())
        .collect();
    assert_eq!(
        stages,
        ["split_pending", "label_pending", "submitted"],
        "{ev:?}"
    );
    let done = ev
        .iter()
        .find(|e| e["event"] == "ensure_monitor_done")
        .unwrap();
    assert_eq!(
        (&done["outcome"], &done["exit"]),
        (&json!("created"), &json!(0))
    );
}

#[test]
fn the_log_rotates_at_its_cap() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.log");
    let line = [b'a'; 99].iter().chain(b"\n").copied().collect::<Vec<u8>>();
    for _ in 0..35 {
        intercom_pane::seam::store::append_line_capped(&p, &line, 1000).unwrap();
    }
    let now = std::fs::metadata(&p).unwrap().len();
    let old = std::fs::metadata(dir.path().join("x.log.1")).unwrap().len();
    assert!(now <= 1000 && old <= 1000, "{now} {old}");
    assert_eq!(now, 500, "35 lines: 3 rotations of 10, 5 left");
    assert!(!dir.path().join("x.log.2").exists());
    // Never through a link.
    let target = dir.path().join("target");
    std::fs::write(&target, b"").unwrap();
    std::os::unix::fs::symlink(&target, dir.path().join("link.log")).unwrap();
    assert!(intercom_pane::seam::store::append_line_capped(
        &dir.path().join("link.log"),
        &line,
        1000
    )
    .is_err());
    assert_eq!(std::fs::metadata(&target).unwrap().len(), 0);
}
