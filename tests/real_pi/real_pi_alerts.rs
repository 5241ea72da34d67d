//! Alerts with a real pi 1.6.0 worker in a real tmux (a private server, a real client attached
//! to it): the sidebar and a `watch` both run, each with `--on-alert` appending to one file. The
//! worker asks for input in two separate turns: exactly two lines between them. A sidebar
//! restarted mid-turn adds none. While the client shows the worker's pane, a third question
//! alerts nobody. `jump --last` moves the client to the pane of the seat that alerted last, and
//! refuses once that pane runs another pi.
//!
//! Runs only with `INTERCOM_PANE_REAL_PI` (see tests/real_pi/real_pi.rs); otherwise `cargo test`
//! reports it as ignored, with the reason.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_support;
use crate::real_pi::{binary_on_path, first_prompt, prepare_agent_dir};
use crate::real_pi_support;
use crate::scan_support;

use std::path::{Path, PathBuf};

use mux_support::{wait_for, TmuxServer};
use real_pi_support::{real_pi, wait_ready, SERIAL};
use scan_support::*;
use serde_json::Value;

fn lines(out: &Path) -> Vec<Value> {
    std::fs::read_to_string(out)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn events(log: &Path, name: &str, command: &str) -> usize {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["event"] == name && v["command"] == command)
        .count()
}

/// Wait until both the sidebar and the watcher ran `n` more passes (both on the board stream:
/// `live_pass`, a scan or a timer's or probe wake's check that found nothing moved; the
/// watcher's full pass every 2 s).
fn both_pass(log: &Path, n: usize) {
    let (m, w) = (
        events(log, "live_pass", "monitor"),
        events(log, "live_pass", "watch"),
    );
    wait_for(60_000, || {
        (events(log, "live_pass", "monitor") >= m + n && events(log, "live_pass", "watch") >= w + n)
            .then_some(())
    })
    .unwrap_or_else(|| {
        let mut seen = std::collections::BTreeMap::new();
        for l in std::fs::read_to_string(log).unwrap_or_default().lines() {
            if let Ok(v) = serde_json::from_str::<Value>(l) {
                *seen
                    .entry(format!("{} {}", v["command"], v["event"]))
                    .or_insert(0) += 1;
            }
        }
        panic!("both did not run {n} more passes: {seen:?}")
    });
}

fn ask(server: &TmuxServer, text: &str) {
    server.tmux(&["send-keys", "-t", "=W1:", "-l", text]);
    server.tmux(&["send-keys", "-t", "=W1:", "Enter"]);
}

#[test]
#[cfg_attr(
    not(real_pi),
    ignore = "real-pi tier: INTERCOM_PANE_REAL_PI names no folder with pi and node 22 (.ci/run installs them)"
)]
fn a_real_worker_alerts_once_per_turn_not_where_the_person_looks_and_jumps_there() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let env = Env::new().with_system_path();
    let root = env.path("root");
    write_roster(&root, &[]);
    let tools = binary_on_path(&env);
    let sys = env.system_config();
    let server = TmuxServer::start("desk", &root, &[]);
    let agent = env.path("agent-W1");
    std::fs::create_dir_all(&agent).unwrap();
    prepare_agent_dir(&agent);
    server.new_session("W1", &root, &[]);
    server.tmux(&[
        "send-keys",
        "-t",
        "=W1:",
        &format!(
            "export PI_OFFLINE=1 PATH={}:{}:$PATH PI_CODING_AGENT_DIR={} INTERCOM_PANE_CONFIG={sys}; \
             pi --provider fake --model fake-model",
            tools.display(),
            real_pi().display(),
            agent.display()
        ),
        "Enter",
    ]);
    wait_ready(&server, "=W1:");
    let file = first_prompt(&server, "=W1:", "hello", &agent.join("sessions"));
    write_roster(&root, &[(&header_id(&file), "W1")]);
    let sessions = agent.join("sessions").display().to_string();
    let sock = server.sock.display().to_string();
    let out = env.path("alerts.jsonl");
    let log = env.path("log.jsonl");
    let recorder = format!("cat >> '{}'", out.display());
    let common: Vec<String> = [
        "--config",
        &sys,
        "--root",
        &root.display().to_string(),
        "--fleet",
        "none",
        "--sessions-dir",
        &sessions,
        "--tmux-socket",
        &sock,
        "--settle-secs",
        "1",
        "--no-desktop",
        "--on-alert",
        "/bin/sh",
        "-c",
        &recorder,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let envs = |cmd: &str| -> Vec<String> {
        let mut a: Vec<String> = vec![
            "env".into(),
            format!("HOME={}", env.path("home").display()),
            format!("XDG_STATE_HOME={}", env.path("state").display()),
            format!("INTERCOM_PANE_LOG={}", log.display()),
            "TERM=xterm-256color".into(),
            env!("CARGO_BIN_EXE_intercom-pane").into(),
            cmd.into(),
        ];
        a.extend(common.iter().cloned());
        a
    };
    // The sidebar in session C, a watcher in session X; the person's client shows `desk`.
    let monitor = envs("monitor");
    let monitor: Vec<&str> = monitor.iter().map(String::as_str).collect();
    server.new_session("C", &root, &monitor);
    // Its full pass every 2 s (`--on-alert` comes last: the flag goes right after the command).
    let mut watch = envs("watch");
    let at = watch.iter().position(|a| a == "watch").unwrap() + 1;
    watch.splice(at..at, ["--full-pass-secs".to_string(), "2".to_string()]);
    let watch: Vec<&str> = watch.iter().map(String::as_str).collect();
    server.new_session("X", &root, &watch);
    let client = server.attach_client("desk", 160, 40);
    both_pass(&log, 1);

    // Turn one asks: one line, whoever of the two sends it.
    ask(&server, "deploy it SCENARIO:waiting");
    let l = wait_for(60_000, || {
        let l = lines(&out);
        (!l.is_empty()).then_some(l)
    })
    .expect("an alert for the first question");
    assert_eq!(l[0]["seat"], "W1");
    assert_eq!(l[0]["state"], "waiting");
    assert_eq!(l[0]["text"], "Choose staging or production.");
    let w1_pane = server
        .tmux(&["list-panes", "-t", "=W1:", "-F", "#{pane_id}"])
        .trim()
        .to_string();
    assert_eq!(l[0]["pane"]["paneId"], w1_pane.as_str());
    both_pass(&log, 3);
    assert_eq!(lines(&out).len(), 1, "{:?}", lines(&out));

    // The sidebar restarted mid-turn (the worker still waiting): nothing more.
    server.tmux(&["respawn-pane", "-k", "-t", "=C:"]);
    both_pass(&log, 3);
    assert_eq!(lines(&out).len(), 1, "{:?}", lines(&out));

    // Turn two asks again: the second line.
    ask(&server, "and again SCENARIO:waiting");
    wait_for(60_000, || (lines(&out).len() >= 2).then_some(()))
        .expect("an alert for the second question");
    both_pass(&log, 3);
    assert_eq!(lines(&out).len(), 2, "{:?}", lines(&out));

    // jump --last (as the plugin's key runs it, from the pane the client shows): the client
    // moves to W1's pane.
    let desk_pane = server.client_pane();
    assert_ne!(desk_pane, w1_pane);
    let mut jump = vec![
        "jump".to_string(),
        "--last".into(),
        "--from".into(),
        desk_pane,
    ];
    jump.extend(common[..10].iter().cloned());
    let o = env.run(&jump);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(server.client_pane(), w1_pane);

    // Now the person looks at W1's pane: its third question alerts nobody.
    ask(&server, "once more SCENARIO:waiting");
    wait_for(60_000, || {
        std::fs::read_to_string(&file)
            .unwrap_or_default()
            .matches("Input needed: Choose staging")
            .count()
            .eq(&3)
            .then_some(())
    })
    .expect("pi wrote its third question");
    both_pass(&log, 4);
    assert_eq!(lines(&out).len(), 2, "{:?}", lines(&out));
    let mem: Value =
        serde_json::from_slice(&std::fs::read(env.path("data/alerts/memory.json")).unwrap())
            .unwrap();
    let turns = mem["seats"][header_id(&file)]["turns"].as_array().unwrap();
    let outcomes: Vec<&str> = turns.iter().filter_map(|t| t["outcome"].as_str()).collect();
    assert_eq!(outcomes, ["alerted", "alerted", "visible"], "{mem}");

    // The pane now runs another pi than the one that alerted: the jump refuses (exit 4).
    server.tmux(&["send-keys", "-t", "=W1:", "C-c"]);
    server.tmux(&["send-keys", "-t", "=W1:", "C-d"]);
    wait_for(30_000, || {
        let c = server.tmux(&[
            "display-message",
            "-p",
            "-t",
            "=W1:",
            "#{pane_current_command}",
        ]);
        (c.trim() != "node" && c.trim() != "pi").then_some(())
    })
    .expect("pi quit");
    // pi quit on purpose (it recorded the end of its session): going offline alerts nobody.
    both_pass(&log, 3);
    assert_eq!(lines(&out).len(), 2, "{:?}", lines(&out));
    let o = env.run(&jump);
    assert!(
        matches!(o.status.code(), Some(3) | Some(4)),
        "{:?} {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    drop(client);
    let _: PathBuf = root;
}
