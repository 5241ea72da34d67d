//! The pi extension as a pi package: `pi install linux/pi-extension` makes a real pi (started in
//! a private tmux with `pi --session-id`) register its seat; after `pi remove` a new pi does not.
//! pi's agent folder and HOME are private to the test, so nothing global changes.
//!
//! Runs only when `INTERCOM_PANE_REAL_PI` names a folder holding `pi` and `node` (22), as for
//! `tests/real_pi/real_pi.rs`; otherwise `cargo test` reports it as ignored, with the reason.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_support;
use crate::real_pi_support;
use crate::scan_support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use mux_support::{wait_for, TmuxServer};
use real_pi_support::{real_pi, wait_ready};
use scan_support::*;
use serde_json::{json, Value};

const PACKAGE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/linux/pi-extension");

/// `pi <args>` with the private agent folder and HOME; its output, checked for success.
fn pi(bin: &Path, env: &Env, agent: &Path, args: &[&str]) -> String {
    let o = Command::new(bin.join("pi"))
        .args(args)
        .current_dir(env.dir.path())
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .env("HOME", env.path("home"))
        .env("PI_CODING_AGENT_DIR", agent)
        .env("PI_OFFLINE", "1")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "pi {args:?}: {text}");
    text
}

/// Start pi with this session id in a new tmux session in `cwd` (the roster's folder: a pi in
/// another folder is not its agent); wait until its editor is up.
fn start_pi(server: &TmuxServer, cwd: &Path, name: &str, line: &str) {
    server.new_session(name, cwd, &[]);
    let target = format!("={name}:");
    server.tmux(&["send-keys", "-t", &target, line, "Enter"]);
    wait_ready(server, &target);
}

fn registration(env: &Env, id: &str) -> PathBuf {
    env.path("data/seats/pi")
        .join(intercom_pane::seam::paths::short_id(id))
        .join("registration.json")
}

#[test]
#[cfg_attr(
    not(real_pi),
    ignore = "real-pi tier: INTERCOM_PANE_REAL_PI names no folder with pi and node 22 (.ci/run installs them)"
)]
fn pi_install_loads_the_extension_and_pi_remove_unloads_it() {
    let _one = real_pi_support::SERIAL
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let bin = real_pi();
    let env = Env::new().with_system_path();
    let agent = env.path("agent");
    std::fs::create_dir_all(&agent).unwrap();
    // A provider that is never asked (no prompt is sent): pi only needs a model to start.
    real_pi_support::never_asked_model(&agent);
    let out = pi(&bin, &env, &agent, &["install", PACKAGE]);
    assert!(out.contains("Installed"), "{out}");
    assert!(pi(&bin, &env, &agent, &["list"]).contains(PACKAGE));

    let sys = env.system_config();
    let launch = |id: &str| {
        format!(
            "export PATH={}:$PATH HOME={} PI_CODING_AGENT_DIR={} PI_OFFLINE=1 INTERCOM_PANE_BIN={} INTERCOM_PANE_CONFIG={sys}; pi --provider fake --model fake-model --session-id {id}",
            bin.display(),
            env.path("home").display(),
            agent.display(),
            env!("CARGO_BIN_EXE_intercom-pane")
        )
    };
    let server = TmuxServer::start("idle", env.dir.path(), &[]);
    let root = env.path("root");
    std::fs::create_dir_all(&root).unwrap();
    let first = "11111111-2222-4333-8444-555555555555";
    start_pi(&server, &root, "one", &launch(first));
    let reg = wait_for(15_000, || registration(&env, first).exists().then_some(()));
    assert!(
        reg.is_some(),
        "the installed extension registered no seat:\n{}",
        server.tmux(&["capture-pane", "-p", "-t", "=one:"])
    );
    let text = std::fs::read_to_string(registration(&env, first)).unwrap();
    assert!(text.contains(first), "{text}");
    // The doctor agrees: installed, loaded in the live pi, its session found.
    std::fs::create_dir_all(root.join(".pi-intercom")).unwrap();
    let roster = |agents: Value| {
        std::fs::write(
            root.join(".pi-intercom/config.json"),
            json!({"version": 1, "agents": agents}).to_string(),
        )
        .unwrap()
    };
    let one = json!({"sessionId": first, "name": "One", "coordinator": true,
        "description": "d", "port": 1, "projectDirectory": "."});
    roster(json!([one]));
    let r = doctor(&env, &agent, &server);
    assert_eq!(r["ok"], true, "{r:#}");
    assert_eq!(status(&r, "extension loaded"), "ok", "{r:#}");
    server.tmux(&["send-keys", "-t", "=one:", "C-d"]);

    let out = pi(&bin, &env, &agent, &["remove", PACKAGE]);
    assert!(out.contains("Removed"), "{out}");
    assert!(!pi(&bin, &env, &agent, &["list"]).contains(PACKAGE));
    let second = "66666666-7777-4888-8999-aaaaaaaaaaaa";
    start_pi(&server, &root, "Two", &launch(second));
    // Give a loaded extension ample time to have registered; nothing may appear.
    std::thread::sleep(Duration::from_secs(4));
    assert!(
        !registration(&env, second).exists(),
        "a removed extension still registered"
    );
    // The doctor names both: not installed, and a live pi (worker Two, in the tmux session
    // named like it) that never registered.
    let two = json!({"sessionId": second, "name": "Two", "coordinator": false,
        "description": "d", "port": 2, "projectDirectory": "."});
    roster(json!([one, two]));
    let r = doctor(&env, &agent, &server);
    assert_eq!(r["ok"], false, "{r:#}");
    assert_eq!(status(&r, "extension"), "fail", "{r:#}");
    assert_eq!(status(&r, "extension loaded"), "fail", "{r:#}");
    server.tmux(&["send-keys", "-t", "=Two:", "C-d"]);
}

/// `doctor --json` on the test's layout, as the person who started these pis would run it.
fn doctor(env: &Env, agent: &Path, server: &TmuxServer) -> Value {
    let args = layout_args(
        env,
        &["doctor", "--json"],
        &["--tmux-socket", &server.sock.display().to_string()],
    );
    let o = Command::new(env!("CARGO_BIN_EXE_intercom-pane"))
        .args(&args)
        .current_dir(env.dir.path())
        .env("HOME", env.path("home"))
        .env("PI_CODING_AGENT_DIR", agent)
        .env("INTERCOM_PANE_BIN", env!("CARGO_BIN_EXE_intercom-pane"))
        .output()
        .unwrap();
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&o.stderr));
    })
}

fn status(report: &Value, name: &str) -> String {
    report["checks"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["name"] == name)
        .and_then(|c| c["status"].as_str())
        .unwrap_or("missing")
        .to_string()
}
