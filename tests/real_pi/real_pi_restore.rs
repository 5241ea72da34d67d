//! `restore` with a real pi 1.6.0 in real tmux: `init --start` makes the roster and becomes the
//! coordinator's pi; `spawn` starts two workers beside it, one with a model flag; `tmux
//! kill-server` ends them all; `restore` brings each back on its own session file, the worker
//! with its model flag, the coordinator first in a session of its own (its extension places the
//! sidebar again), the workers beside it; a second `restore` starts nothing. The truth about
//! what runs comes from tmux (`#{pane_start_command}`: pi 1.6.0 replaces its visible command
//! line with its title) and from each pi's own registration.
//!
//! Runs only with `INTERCOM_PANE_REAL_PI` (see tests/real_pi/real_pi.rs); otherwise `cargo
//! test` reports it as ignored, with the reason.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_support;
use crate::real_pi_spawn::Setup;
use crate::real_pi_support;

use std::path::Path;

use mux_support::{tmux_cmd, wait_for};
use real_pi_support::{submit_first, wait_ready, SERIAL};
use serde_json::Value;

fn line<'a>(out: &'a Value, name: &str) -> &'a Value {
    out["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == name)
        .unwrap_or_else(|| panic!("no line for {name}: {out}"))
}

#[test]
#[cfg_attr(
    not(real_pi),
    ignore = "real-pi tier: INTERCOM_PANE_REAL_PI names no folder with pi and node 22 (.ci/run installs them)"
)]
fn real_pis_come_back_after_kill_server_on_their_sessions_with_their_flags() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let s = Setup::start();
    // The coordinator talks once, so pi has written its session file.
    wait_ready(&s.server, "=desk:");
    submit_first(&s.server, "=desk:", "hello coordinator");
    let coord_file = wait_for(60_000, || {
        let f = s.registered("Coordinator")["sessionFile"]
            .as_str()?
            .to_string();
        Path::new(&f).is_file().then_some(f)
    })
    .expect("the coordinator's session file");
    // `init --start` started it with no launch spec: its registration recorded how it runs, in
    // the data root (the extension passed pi's own arguments and model).
    let record = wait_for(30_000, || {
        std::fs::read_dir(s.env.path("data/launches"))
            .ok()?
            .flatten()
            .filter_map(|e| serde_json::from_slice::<Value>(&std::fs::read(e.path()).ok()?).ok())
            .find(|v| v["name"] == "Coordinator")
    })
    .expect("no launch record in the data root for the coordinator init started");
    let coord_id = record["sessionId"].as_str().unwrap().to_string();
    assert_eq!(
        record["args"],
        serde_json::json!(["--session-id", coord_id]),
        "{record}"
    );
    assert_eq!(record["model"], "fake/fake-model", "{record}");
    assert!(
        record["note"].as_str().unwrap().contains("registration"),
        "{record}"
    );
    let (code, writer, err) = s.run(
        "spawn",
        &[
            "Writer",
            "--model",
            "fake/other-model",
            "--prompt",
            "remember pelican",
            "--wait-secs",
            "90",
            "--json",
        ],
    );
    assert_eq!(code, 0, "{writer} {err}");
    let (code, plain, err) = s.run("spawn", &["Plain", "--wait-secs", "90", "--json"]);
    assert_eq!(code, 0, "{plain} {err}");
    // Both workers' session files exist once each pi has written (Writer answered its task;
    // Plain is asked once).
    wait_ready(&s.server, plain["pane"].as_str().unwrap());
    submit_first(&s.server, plain["pane"].as_str().unwrap(), "hello plain");
    let files: Vec<String> = ["Writer", "Plain"]
        .iter()
        .map(|n| {
            wait_for(60_000, || {
                let f = s.registered(n)["sessionFile"].as_str()?.to_string();
                Path::new(&f).is_file().then_some(f)
            })
            .unwrap_or_else(|| panic!("{n}'s session file"))
        })
        .collect();

    s.server.tmux(&["kill-server"]);
    wait_for(30_000, || {
        let o = tmux_cmd(&s.server.sock)
            .arg("list-sessions")
            .output()
            .unwrap();
        (!o.status.success()).then_some(())
    })
    .expect("the server stayed");
    // Every pi ended with it (none registered and alive).
    wait_for(30_000, || {
        ["Coordinator", "Writer", "Plain"]
            .iter()
            .all(|n| s.registered(n)["registered"]["alive"] != true)
            .then_some(())
    })
    .expect("a pi outlived its server");

    let (code, out, err) = s.run("restore", &["--wait-secs", "90", "--json"]);
    assert_eq!(code, 0, "{out} {err}");
    for n in ["Coordinator", "Writer", "Plain"] {
        assert_eq!(line(&out, n)["outcome"], "restored", "{n}: {out}");
    }
    let start = |name: &str| {
        let pane = line(&out, name)["pane"].as_str().unwrap().to_string();
        s.server
            .tmux(&[
                "display-message",
                "-p",
                "-t",
                &pane,
                "#{pane_start_command}",
            ])
            .trim_end()
            .to_string()
    };
    assert!(start("Coordinator").contains(&format!("--session {coord_file}")));
    let w = start("Writer");
    assert!(w.contains(&format!("--session {}", files[0])), "{w}");
    assert!(w.contains("--model fake/other-model"), "{w}");
    let p = start("Plain");
    assert!(p.contains(&format!("--session {}", files[1])), "{p}");
    assert!(!p.contains("--model"), "{p}");
    // Each pi registered again on the same session file.
    for (n, f) in [
        ("Coordinator", &coord_file),
        ("Writer", &files[0]),
        ("Plain", &files[1]),
    ] {
        let r = s.registered(n);
        assert_eq!(r["registered"]["alive"], true, "{r}");
        assert_eq!(r["sessionFile"], f.as_str(), "{r}");
    }
    // The coordinator's extension placed the sidebar above it again.
    wait_for(60_000, || {
        let titles = s
            .server
            .tmux(&["list-panes", "-t", "=Coordinator:", "-F", "#{pane_title}"]);
        titles.contains("Intercom monitor").then_some(())
    })
    .expect("the sidebar was not placed again");

    // A second restore starts nothing.
    let (code, again, err) = s.run("restore", &["--json"]);
    assert_eq!(code, 0, "{again} {err}");
    assert_eq!(again["startedNothing"], true, "{again}");
    for n in ["Coordinator", "Writer", "Plain"] {
        assert_eq!(
            line(&again, n)["outcome"],
            "already_running",
            "{n}: {again}"
        );
    }
}
