//! The actions that open tmux panes from data, with hostile data, on logged private tmux servers
//! (`hostile_support`): resume-worker of a worker whose roster `name` and `projectDirectory` hold
//! `#(…)`, `#{…}`, `#S` and styles (the roster itself refuses control characters there);
//! ensure-monitor run, as the pi extension runs it, from a coordinator root named like that, with
//! a newline and a TAB too. No format job runs, and tmux reports exactly the roster's name and
//! folder, and the root.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::ensure_monitor::finished;
use crate::hostile_support::{reported, wait_cwd, Markers};
use crate::mux_support::TmuxServer;
use crate::resume_worker::{coordinator_on, resume, setup, stand_in_pi};
use crate::scan_support::*;

use std::path::Path;

use serde_json::json;

const ID1: &str = "01a2f000-0000-7000-8000-00000000ab01";
const COORD: &str = "01a2f000-0000-7000-8000-00000000ab00";

/// The coordinator's pane, registered from the inside, on a server that logs its format jobs.
fn coordinator(env: &Env) -> TmuxServer {
    coordinator_on(env, TmuxServer::start_logged)
}

fn window_names(server: &TmuxServer) -> Vec<String> {
    // `#{window_id}` first: the names themselves may hold anything but a newline.
    let out = server.tmux(&["list-windows", "-a", "-F", "#{window_id}"]);
    out.lines()
        .map(|id| reported(server, id, "window_name"))
        .collect()
}

#[test]
fn resume_worker_opens_the_window_with_the_rosters_name_and_folder_exactly() {
    let env = Env::new().with_system_path();
    let m = Markers::new();
    let name = format!("notes#S {}#{{pane_id}}#[x", m.job("rn"));
    // (The roster itself refuses control characters in names and folders.)
    let project = format!("p{}#W #{{session_name}}##[y", m.job("rp"));
    setup(&env, ID1, &name, &project);
    let server = coordinator(&env);
    m.arm(&server);
    let pi = stand_in_pi(&env);

    let (code, out, err) = resume(&env, &pi, &[&name, "--confirm-closed"]);
    assert_eq!(code, 0, "{out} {err}");
    assert_eq!(out["result"], "resumed", "{out}");
    assert_eq!(window_names(&server)[1..], [name.as_str()]);
    let want = env.path("root").join(&project);
    let cwd = std::fs::read_to_string(env.path("launched.cwd")).unwrap();
    assert_eq!(cwd.strip_suffix('\n'), Some(want.to_str().unwrap()));
    let pane = out["pane"].as_str().unwrap();
    assert_eq!(
        reported(&server, pane, "pane_current_path"),
        want.to_str().unwrap()
    );
    m.assert_none_ran(&server);
}

/// A roster with a coordinator and a worker at `root`.
fn roster(root: &Path) {
    std::fs::create_dir_all(root.join(".pi-intercom")).unwrap();
    let agents = json!([
        {"sessionId": COORD, "name": "Coordinator", "coordinator": true,
         "description": "C.", "port": 1, "projectDirectory": "."},
        {"sessionId": "w-1", "name": "Worker", "coordinator": false,
         "description": "W.", "port": 2, "projectDirectory": "."}]);
    std::fs::write(
        root.join(".pi-intercom/config.json"),
        json!({"version": 1, "agents": agents}).to_string(),
    )
    .unwrap();
}

fn sq(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', "'\\''"))
}

#[test]
fn ensure_monitor_under_a_hostile_root_places_the_sidebar_in_that_exact_folder() {
    let env = Env::new().with_system_path();
    let m = Markers::new();
    let root = env.path(&format!("proj{}#S\n\t#{{pane_id}}#[z", m.job("root")));
    roster(&root);
    let server = TmuxServer::start_logged("coord", &env.path("home"), &[]);
    m.arm(&server);
    server.tmux(&["resize-window", "-t", "=coord:", "-x", "120", "-y", "40"]);
    let coord = server.tmux(&["display-message", "-p", "-t", "=coord:", "#{pane_id}"]);
    let coord = coord.trim();
    // As the extension runs it: from the coordinator's folder, the root found from there.
    let (rc, out) = (env.path("rc"), env.path("out"));
    let script = env.path("ensure.sh");
    std::fs::write(
        &script,
        format!(
            "cd {} && {} ensure-monitor --config {} > {} 2>&1; echo $? > {}\n",
            sq(&root),
            env!("CARGO_BIN_EXE_intercom-pane"),
            sq(Path::new(&env.system_config())),
            sq(&out),
            sq(&rc),
        ),
    )
    .unwrap();
    let run = format!("sh {}", script.display());
    server.tmux(&["send-keys", "-t", coord, &run, "Enter"]);
    let (code, said) = finished(&env);
    assert_eq!(code, 0, "{said}");
    let panes = server.tmux(&["list-panes", "-t", "=coord:", "-F", "#{pane_id}"]);
    let monitor = panes
        .lines()
        .find(|p| *p != coord)
        .unwrap_or_else(|| panic!("no sidebar: {said}"))
        .to_string();
    assert_eq!(
        reported(&server, &monitor, "pane_title"),
        "Intercom monitor"
    );
    wait_cwd(&server, &monitor, &root);
    m.assert_none_ran(&server);
}
