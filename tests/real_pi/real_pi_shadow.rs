//! A real pi started with a live worker's `--session-id` in another folder (an interactive pi in
//! W2's tmux session, and `pi --session-id <W1> -p hi` elsewhere) shadows nothing (issue 20
//! item 2): W1's own record in the roster's seats folder stays the worker's, the board keeps
//! reading W1's own session file although the other pis wrote newer files with the same id, the
//! reply reaches W1, W1 stays reachable, and close-worker W1 closes W1's pane and never W2's.
//!
//! Runs only with `INTERCOM_PANE_REAL_PI` (see tests/real_pi/real_pi.rs); otherwise it is
//! reported as ignored, with the reason.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_support;
use crate::real_pi::prepare_agent_dir;
use crate::real_pi_support;
use crate::scan_support;

use std::path::{Path, PathBuf};

use mux_support::{wait_for, TmuxServer};
use real_pi_support::{real_pi, submit_first, wait_ready, SERIAL};
use scan_support::*;
use serde_json::Value;

const W1: &str = "0b5e55ed-0000-4000-8000-0000000000a1";

/// Every file pi wrote for session `W1`, in any per-cwd folder of `sessions`.
fn files_of_w1(sessions: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for d in std::fs::read_dir(sessions).into_iter().flatten().flatten() {
        for f in std::fs::read_dir(d.path()).into_iter().flatten().flatten() {
            let p = f.path();
            if p.to_string_lossy().ends_with(&format!("_{W1}.jsonl")) {
                out.push(p);
            }
        }
    }
    out
}

/// The texts of the user messages in a session file.
fn user_texts(file: &Path) -> Vec<String> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "message" && v["message"]["role"] == "user")
        .map(|v| v["message"]["content"].to_string())
        .collect()
}

#[test]
#[cfg_attr(
    not(real_pi),
    ignore = "real-pi tier: INTERCOM_PANE_REAL_PI names no folder with pi and node 22 (.ci/run installs them)"
)]
fn a_real_pi_with_a_workers_session_id_elsewhere_shadows_nothing() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let bin = real_pi();
    let env = Env::new().with_system_path();
    let agent = env.dir.path().to_path_buf();
    prepare_agent_dir(&agent);
    let root = env.path("root");
    // The roster names W1's session before its pi starts (the README's setup).
    write_roster(&root, &[(W1, "W1")]);
    let tools = env.path("path-bin");
    std::fs::create_dir_all(&tools).unwrap();
    std::os::unix::fs::symlink(
        env!("CARGO_BIN_EXE_intercom-pane"),
        tools.join("intercom-pane"),
    )
    .unwrap();
    let sys = env.system_config();
    let exports = format!(
        "export PI_OFFLINE=1 PATH={}:{}:$PATH PI_CODING_AGENT_DIR={} INTERCOM_PANE_CONFIG={sys}",
        tools.display(),
        bin.display(),
        agent.display()
    );
    let pi = format!("{exports}; pi --provider fake --model fake-model --session-id {W1}");
    let server = TmuxServer::start("W1", &root, &[]);
    server.tmux(&["send-keys", "-t", "=W1:", &pi, "Enter"]);
    wait_ready(&server, "=W1:");
    let sessions = agent.join("sessions");
    submit_first(&server, "=W1:", "hello from W1");
    let f1 = wait_for(30_000, || files_of_w1(&sessions).into_iter().next())
        .expect("W1 wrote its session file");
    let sock = server.sock.display().to_string();
    let w1 = || record(&scan_json(&env, &["--tmux-socket", &sock]), "W1").clone();
    wait_for(20_000, || {
        let w = w1();
        (w["registered"]["alive"] == true && w["state"] == "idle").then_some(())
    })
    .unwrap_or_else(|| panic!("W1 not registered and idle: {}", w1()));

    // The same session id, started by a real pi in another folder, in W2's tmux session.
    let elsewhere = env.path("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    server.new_session("W2", &elsewhere, &[]);
    server.tmux(&["send-keys", "-t", "=W2:", &pi, "Enter"]);
    wait_ready(&server, "=W2:");
    submit_first(&server, "=W2:", "hello from the other pi");
    wait_for(30_000, || (files_of_w1(&sessions).len() == 2).then_some(()))
        .expect("the other pi wrote its own file for the same id");
    // And a one-shot `pi --session-id <W1> -p hi` in a third folder.
    let third = env.path("third");
    std::fs::create_dir_all(&third).unwrap();
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!("{pi} -p hi </dev/null"))
        .current_dir(&third)
        .env("HOME", env.path("home"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(files_of_w1(&sessions).len(), 3, "each pi its own file");

    // The board still reads W1's own pane and file, and the reply reaches W1 only.
    let w = w1();
    assert_eq!(w["registered"]["alive"], true, "{w}");
    assert_eq!(w["registered"]["tmuxSession"], "W1", "{w}");
    assert_eq!(w["sessionFile"], f1.display().to_string(), "{w}");
    let reply = |text: &str| {
        let o = env.run(&layout_args(
            &env,
            &["reply"],
            &["--tmux-socket", &sock, "W1", text],
        ));
        (
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (code, err) = reply("the deploy token=SECRET");
    assert_eq!(code, 0, "{err}");
    wait_for(20_000, || {
        user_texts(&f1)
            .iter()
            .any(|t| t.contains("token=SECRET"))
            .then_some(())
    })
    .expect("the reply reached W1's own session");
    for f in files_of_w1(&sessions).iter().filter(|f| **f != f1) {
        assert!(
            !user_texts(f).iter().any(|t| t.contains("SECRET")),
            "{} got the reply",
            f.display()
        );
    }
    wait_for(20_000, || (w1()["state"] == "idle").then_some(()));
    let (code, err) = reply("still there?");
    assert_eq!(code, 0, "W1 stays reachable: {err}");
    wait_for(20_000, || {
        user_texts(&f1)
            .iter()
            .any(|t| t.contains("still there?"))
            .then_some(())
    })
    .expect("the second reply reached W1");
    wait_for(20_000, || (w1()["state"] == "idle").then_some(()));

    // close-worker W1: W1's pane goes, W2's (the other pi's) stays.
    let o = env.run(&layout_args(
        &env,
        &["close-worker"],
        &[
            "--tmux-socket",
            &sock,
            "--json",
            "--deadline-secs",
            "60",
            "W1",
        ],
    ));
    let report: Value = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{report} {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let left = server.tmux(&["list-sessions", "-F", "#{session_name}"]);
    assert_eq!(left.trim(), "W2", "only W1's pane was closed: {left}");
    server.tmux(&["send-keys", "-t", "=W2:", "C-d"]);
}
