//! `intercom-pane spawn` on Herdr, against the protocol-faithful fake Herdr server (the real
//! Herdr 0.8.2 is in `spawn_herdr_real`): the coordinator is registered from its Herdr pane; the
//! spawn opens one tab in the coordinator's workspace without focus, types the exact quoted pi
//! command into it once, and the stand-in pi started there registers with its own channel and
//! gets the first task. The tab's shell is a real bash given the folder and environment the
//! `tab.create` asked for, as Herdr's shell would be.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_herdr_fake;
use crate::pi_support;
use crate::scan_support;
use crate::spawn_support;

use std::time::{Duration, Instant};

use mux_herdr_fake::{FakeHerdr, TabShell};
use scan_support::*;
use serde_json::Value;
use spawn_support::{lines, stand_in_pi};

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[test]
fn spawn_on_herdr_opens_a_tab_beside_the_coordinator_without_focus() {
    let env = Env::new().with_system_path();
    let root = env.path("root");
    for d in ["root", "sessions", "rec"] {
        std::fs::create_dir_all(env.path(d)).unwrap();
    }
    let o = env.run(&["init", "--root", "root", "--multiplexer", "herdr", "--json"]);
    let coord_id = stdout_json(&o)["sessionId"].as_str().unwrap().to_string();
    let mut coord = pi_support::FakePi::start(&env);
    let herdr = FakeHerdr::start(coord.pid() as u32);
    // The coordinator's pi runs in the root (`register` records pi's real folder).
    coord.cd(&root.display().to_string());
    let sock = herdr.socket.display().to_string();
    let o = coord.register_in_herdr(&env, &sock, "w1:p1", &coord_id, &root);
    assert!(o.status.success(), "{o:?}");
    wait_registered(&root.join(".pi-intercom/seats"));

    let mut shell = TabShell::start(
        &herdr,
        env.dir.path(),
        &[
            ("HOME", env.path("home").display().to_string()),
            ("PATH", env.path_env.clone()),
        ],
    );

    let pi = stand_in_pi(
        &env.path("py pi's"),
        &env.path("rec"),
        &env.path("sessions"),
    );
    let before = herdr.with(|s| (s.focused_ws.clone(), s.focused.clone()));
    let o = env.run(&layout_args(
        &env,
        &["spawn"],
        &[
            "--pi",
            &pi.display().to_string(),
            "--json",
            "--wait-secs",
            "20",
            "Docs",
            "--model",
            "fake/m",
            "--prompt",
            "Start with the README.",
        ],
    ));
    let out: Value = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    assert!(shell.typed(), "nothing was typed into the tab");
    let texts = lines(&env.path("rec/texts.jsonl"));
    drop(shell);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{out} {} launches {:?} registers {:?}",
        String::from_utf8_lossy(&o.stderr),
        lines(&env.path("rec/launches.jsonl")),
        lines(&env.path("rec/registers.jsonl"))
    );
    assert_eq!(out["multiplexer"], "herdr");
    assert_eq!(out["placement"], "tab");
    assert_eq!(out["beside"], "w1:p1");
    let create: Vec<Value> = herdr.with(|s| {
        s.requests
            .iter()
            .filter(|r| r["method"] == "tab.create")
            .map(|r| r["params"].clone())
            .collect()
    });
    assert_eq!(create.len(), 1, "{create:?}");
    assert_eq!(create[0]["workspace_id"], "w1");
    assert_eq!(create[0]["focus"], false);
    assert_eq!(create[0]["label"], "Docs");
    assert_eq!(create[0]["cwd"], root.display().to_string());
    let id = out["sessionId"].as_str().unwrap();
    let inputs = herdr.with(|s| s.inputs.clone());
    assert_eq!(
        inputs.first(),
        Some(&(
            "w1:p2".to_string(),
            format!(
                "{} --session-id {id} --model fake/m",
                quote(&pi.display().to_string())
            ),
            vec!["Enter".to_string()]
        ))
    );
    // The roster's first worker: the coordinator's sidebar is placed above it (split down,
    // swapped, the monitor typed into its own pane), as its start would have.
    let sidebar = out["sidebar"].as_str().unwrap_or_default();
    assert!(
        sidebar.starts_with("placed above the coordinator in w1:"),
        "{out}"
    );
    let pane = sidebar.rsplit(' ').next().unwrap();
    assert_eq!(inputs.len(), 2, "{inputs:?}");
    assert_eq!(inputs[1].0, pane);
    assert!(
        inputs[1].1.contains(" monitor --root ") && inputs[1].2 == ["Enter"],
        "{inputs:?}"
    );
    // The person's focus did not move; the first task went through the channel once.
    assert_eq!(
        herdr.with(|s| (s.focused_ws.clone(), s.focused.clone())),
        before
    );
    assert_eq!(out["prompt"]["transport"], "channel", "{out}");
    assert_eq!(texts.len(), 1, "{texts:?}");
    drop(coord);
}

/// Real-Herdr tier: a private headless `herdr server`, the coordinator registered in a
/// background workspace while the person works in another: spawn opens one tab there, labelled
/// after the worker, the focus stays where it was, and the stand-in pi registers from that tab.
#[test]
#[cfg_attr(not(real_herdr), ignore = "real-Herdr tier: no `herdr` on PATH")]
fn real_herdr_spawn_opens_a_tab_in_the_coordinators_workspace_without_moving_focus() {
    use mux_herdr_fake::real::RealHerdr;
    use serde_json::json;
    let soon = || Instant::now() + Duration::from_secs(5);
    let h = RealHerdr::start();
    let env = Env::new().with_system_path();
    let root = env.path("root");
    for d in ["root", "sessions", "rec"] {
        std::fs::create_dir_all(env.path(d)).unwrap();
    }
    let o = env.run(&["init", "--root", "root", "--multiplexer", "herdr", "--json"]);
    let coord_id = stdout_json(&o)["sessionId"].as_str().unwrap().to_string();
    h.result(&["workspace", "create", "--cwd", "/tmp", "--label", "front"]);
    let (coord, _) = h.coordinator_seat(&root, &coord_id, "back", json!({}));
    let tabs_before = h.result(&["tab", "list"])["tabs"].as_array().unwrap().len();
    let before = h.client().focus(soon()).unwrap();
    let pi = stand_in_pi(&env.path("py-pi"), &env.path("rec"), &env.path("sessions"));
    let o = env.run(&layout_args(
        &env,
        &["spawn"],
        &[
            "--pi",
            &pi.display().to_string(),
            "--json",
            "--wait-secs",
            "30",
            "Docs",
        ],
    ));
    let out: Value = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{out} {} {:?}",
        String::from_utf8_lossy(&o.stderr),
        lines(&env.path("rec/registers.jsonl"))
    );
    let after = h.client().focus(soon()).unwrap();
    assert_eq!(
        (&after.workspace, &after.pane),
        (&before.workspace, &before.pane)
    );
    let tabs = h.result(&["tab", "list"]);
    let tabs = tabs["tabs"].as_array().unwrap();
    assert_eq!(tabs.len(), tabs_before + 1, "{tabs:?}");
    let new = tabs
        .iter()
        .find(|t| t["label"] == "Docs")
        .expect("a tab labelled Docs");
    let ws = h.result(&["pane", "get", &coord])["pane"]["workspace_id"].clone();
    assert_eq!(new["workspace_id"], ws, "{new}");
    let l = lines(&env.path("rec/launches.jsonl"));
    assert_eq!(l.len(), 1, "{l:?}");
    assert_eq!(l[0]["cwd"], root.display().to_string());
    assert_eq!(l[0]["argv"], json!(["--session-id", out["sessionId"]]));
}
