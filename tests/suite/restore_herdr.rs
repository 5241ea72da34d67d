//! `intercom-pane restore` on a real Herdr 0.8.2 server (the real-Herdr tier: a private headless
//! `herdr server`, `tests/support/mux_herdr_fake/real.rs`): a coordinator registered from a
//! Herdr pane and two workers `spawn` opened as tabs beside it (the pi stand-in of
//! `tests/support/spawn_support`). The server is killed (SIGKILL: every pi goes with its pane),
//! the person starts Herdr again, and `restore` brings the fleet back there: the coordinator in
//! an unfocused workspace of its own, the workers as tabs in it, each on its own session file;
//! a second run starts nothing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_herdr_fake;
use crate::mux_support::wait_for;
use crate::scan_support::*;
use crate::spawn_support::{ended, lines, stand_in_pi};

use std::time::{Duration, Instant};

use serde_json::{json, Value};

#[test]
#[cfg_attr(not(real_herdr), ignore = "real-Herdr tier: no `herdr` on PATH")]
fn after_the_herdr_server_is_killed_restore_brings_each_pi_back_on_its_own_session() {
    use mux_herdr_fake::real::RealHerdr;
    let soon = || Instant::now() + Duration::from_secs(5);
    let mut h = RealHerdr::start();
    let env = Env::new().with_system_path();
    let root = env.path("root");
    for d in ["root", "sessions", "rec"] {
        std::fs::create_dir_all(env.path(d)).unwrap();
    }
    let o = env.run(&["init", "--root", "root", "--multiplexer", "herdr", "--json"]);
    let coord_id = stdout_json(&o)["sessionId"].as_str().unwrap().to_string();
    let coord_file = settled_session(&env, &coord_id, &root);
    // The person works in another workspace; the coordinator runs in a background one.
    h.result(&["workspace", "create", "--cwd", "/tmp", "--label", "front"]);
    let (_, shell) = h.coordinator_seat(
        &root,
        &coord_id,
        "back",
        json!({"sessionFile": coord_file.display().to_string()}),
    );
    let pi = stand_in_pi(&env.path("py-pi"), &env.path("rec"), &env.path("sessions"));
    let pi_s = pi.display().to_string();
    let mut workers = Vec::new();
    for name in ["Docs", "Tests"] {
        let o = env.run(&layout_args(
            &env,
            &["spawn"],
            &["--pi", &pi_s, "--json", "--wait-secs", "30", name],
        ));
        let out: Value = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{out} {}",
            String::from_utf8_lossy(&o.stderr)
        );
        workers.push((name, out["sessionId"].as_str().unwrap().to_string()));
    }
    let launches = lines(&env.path("rec/launches.jsonl"));
    assert_eq!(launches.len(), 2);
    // The stand-in wrote each worker's session file when it started.
    let file_of = |sid: &str| env.path(&format!("sessions/2026-11-29T23-00-00-000Z_{sid}.jsonl"));

    // Herdr dies: SIGKILL its server; every pi in its panes goes with it.
    let server = h.server_pid().unwrap() as i32;
    unsafe { libc::kill(server, libc::SIGKILL) };
    h.stop_server();
    for l in &launches {
        let pid = l["pid"].as_i64().unwrap() as i32;
        wait_for(15_000, || ended(pid).then_some(())).expect("a pi outlived its Herdr server");
    }
    wait_for(15_000, || ended(shell as i32).then_some(())).expect("the shell outlived Herdr");
    // The person starts Herdr again, and works in a workspace of their own.
    h.start_server();
    h.result(&["workspace", "create", "--cwd", "/tmp", "--label", "front"]);
    let focus_before = h.client().focus(soon()).unwrap();

    let restore = || {
        let o = env.run(&layout_args(
            &env,
            &["restore"],
            &["--pi", &pi_s, "--json", "--wait-secs", "30"],
        ));
        let out: Value = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
        (
            o.status.code(),
            out,
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (code, out, err) = restore();
    assert_eq!(code, Some(0), "{out} {err}");
    let line = |name: &str| {
        out["agents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("no line for {name}: {out}"))
    };
    for name in ["Coordinator", "Docs", "Tests"] {
        assert_eq!(line(name)["outcome"], "restored", "{name}: {out}");
    }
    // Each pi on its own session file, in its folder.
    let again: Vec<Value> = lines(&env.path("rec/launches.jsonl"))
        .into_iter()
        .skip(2)
        .collect();
    assert_eq!(again.len(), 3, "{again:?}");
    let launched = |sid: &str| {
        again
            .iter()
            .find(|l| l["sid"] == sid)
            .unwrap_or_else(|| panic!("{sid} not started: {again:?}"))
            .clone()
    };
    let c = launched(&coord_id);
    assert_eq!(
        c["argv"],
        json!(["--session", coord_file.display().to_string()])
    );
    assert_eq!(c["cwd"], root.display().to_string());
    for (_, sid) in &workers {
        let l = launched(sid);
        assert_eq!(
            l["argv"],
            json!(["--session", file_of(sid).display().to_string()])
        );
    }
    // The coordinator in a workspace of its own, labelled after it; the workers as tabs in it;
    // the focus not moved.
    let coord_pane = line("Coordinator")["pane"].as_str().unwrap().to_string();
    let ws = h.result(&["pane", "get", &coord_pane])["pane"]["workspace_id"].clone();
    let wss = h.result(&["workspace", "list"]);
    let mine = wss["workspaces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["workspace_id"] == ws)
        .unwrap()
        .clone();
    assert_eq!(mine["label"], "Coordinator", "{wss}");
    for name in ["Docs", "Tests"] {
        let pane = line(name)["pane"].as_str().unwrap().to_string();
        let p = h.result(&["pane", "get", &pane]);
        assert_eq!(p["pane"]["workspace_id"], ws, "{name}: {p}");
    }
    let tabs = h.result(&["tab", "list", "--workspace", ws.as_str().unwrap()]);
    let labels: Vec<&str> = tabs["tabs"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["label"].as_str())
        .collect();
    assert!(
        labels.contains(&"Docs") && labels.contains(&"Tests"),
        "{tabs}"
    );
    let after = h.client().focus(soon()).unwrap();
    assert_eq!(
        (&focus_before.workspace, &focus_before.pane),
        (&after.workspace, &after.pane),
        "restore took the focus"
    );
    // A second run starts nothing.
    let (code, out2, err) = restore();
    assert_eq!(code, Some(0), "{out2} {err}");
    assert_eq!(out2["startedNothing"], true, "{out2}");
    assert_eq!(lines(&env.path("rec/launches.jsonl")).len(), 5);
}
