//! The attack of issue 20 with a real pi: a coordinator's pi started, with the shipped extension,
//! in a folder named `proj#(touch …)#S…`. The extension runs ensure-monitor there, which opens
//! the sidebar above it in that folder: tmux must run no format job and start the sidebar in
//! exactly that folder. (Newline and TAB in a root are covered by the suite's
//! `tmux_hostile_actions`, without pi.)
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::hostile_support::{reported, wait_cwd, Markers};
use crate::mux_support::{wait_for, TmuxServer};
use crate::real_pi::{binary_on_path, prepare_agent_dir};
use crate::real_pi_support::{real_pi, wait_ready, SERIAL};
use crate::scan_support::*;

use serde_json::json;

const COORD: &str = "01a2f000-0000-7000-8000-0000000bad01";

fn sq(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

#[test]
#[cfg_attr(
    not(real_pi),
    ignore = "real-pi tier: INTERCOM_PANE_REAL_PI names no folder with pi and node 22 (.ci/run installs them)"
)]
fn a_coordinator_pi_in_a_hostile_folder_gets_its_sidebar_there_and_runs_nothing() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let bin = real_pi();
    let env = Env::new().with_system_path();
    let m = Markers::new();
    let root = env.path(&format!(
        "proj{}#S #{{pane_id}}#{{?pane_active,a,b}}#[fg=red]",
        m.job("pi")
    ));
    std::fs::create_dir_all(root.join(".pi-intercom")).unwrap();
    let agents = json!([
        {"sessionId": COORD, "name": "Coordinator", "coordinator": true,
         "description": "C.", "port": 1, "projectDirectory": "."},
        {"sessionId": "01a2f000-0000-7000-8000-0000000bad02", "name": "Worker",
         "coordinator": false, "description": "W.", "port": 2, "projectDirectory": "."}]);
    std::fs::write(
        root.join(".pi-intercom/config.json"),
        json!({"version": 1, "agents": agents}).to_string(),
    )
    .unwrap();
    let agent = env.path("agent");
    std::fs::create_dir_all(&agent).unwrap();
    prepare_agent_dir(&agent);
    // intercom-pane on pi's PATH, for the extension.
    let tools = binary_on_path(&env);
    // The pane starts in a plain folder; a script goes to the root and runs pi there.
    let script = env.path("coordinator.sh");
    std::fs::write(
        &script,
        format!(
            "export PI_OFFLINE=1 PATH={}:{}:$PATH PI_CODING_AGENT_DIR={} INTERCOM_PANE_CONFIG={}\n\
             cd {} && exec pi --provider fake --model fake-model --session-id {COORD}\n",
            sq(&tools.display().to_string()),
            sq(&bin.display().to_string()),
            sq(&agent.display().to_string()),
            sq(&env.system_config()),
            sq(root.to_str().unwrap()),
        ),
    )
    .unwrap();
    let server = TmuxServer::start_logged("C", &env.path("home"), &[]);
    m.arm(&server);
    server.tmux(&["resize-window", "-t", "=C:", "-x", "160", "-y", "45"]);
    let coord = server.tmux(&["display-message", "-p", "-t", "=C:", "#{pane_id}"]);
    let coord = coord.trim().to_string();
    let run = format!("bash {}", script.display());
    server.tmux(&["send-keys", "-t", &coord, &run, "Enter"]);
    wait_ready(&server, &coord);

    let monitor = wait_for(60_000, || {
        let out = server.tmux(&["list-panes", "-t", "=C:", "-F", "#{pane_id}"]);
        out.lines()
            .find(|id| *id != coord && reported(&server, id, "pane_title") == "Intercom monitor")
            .map(str::to_string)
    })
    .unwrap_or_else(|| {
        panic!(
            "no sidebar above the coordinator:\n{}",
            server.tmux(&["capture-pane", "-p", "-t", &coord])
        )
    });
    assert_eq!(
        reported(&server, &coord, "pane_current_path"),
        root.to_str().unwrap(),
        "pi runs in the hostile root"
    );
    wait_cwd(&server, &monitor, &root);
    m.assert_none_ran(&server);
}
