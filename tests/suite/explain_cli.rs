//! `intercom-pane explain NAME`: a worker in real tmux whose pi (the stand-in of `pi_support`)
//! recorded a dialog through `register --pi-state` reads `waiting` (`dialog`, its title as the
//! question), and explain names every source with its age and the rule that chose; once its pi
//! is gone, what it reported no longer counts. An unknown or ambiguous name exits 5.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_support;
use crate::pi_support;
use crate::scan_support;

use std::path::Path;

use mux_support::{wait_for, TmuxServer};
use scan_support::*;
use serde_json::{json, Value};

const ID: &str = "01a2f000-0000-7000-8000-00000000e1a1";

/// A session file whose newest entry is a tool call (the dialog asks before it runs), with
/// usage on its assistant message.
fn session(dir: &Path, cwd: &Path) -> std::path::PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let file = dir.join(format!("2026-11-29T23-00-00-000Z_{ID}.jsonl"));
    let lines = [
        json!({"type":"session","version":3,"id":ID,"timestamp":"2026-11-29T23:00:00.000Z","cwd":cwd.display().to_string()}),
        json!({"type":"message","id":"a1","parentId":null,"timestamp":"2026-11-29T23:00:01.000Z","message":{"role":"user","content":"Clean up."}}),
        json!({"type":"message","id":"a2","parentId":"a1","timestamp":"2026-11-29T23:00:02.000Z","message":{"role":"assistant",
            "content":[{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"rm -rf build"}}],
            "provider":"p","model":"m","usage":{"input":120,"output":7,"cacheRead":0,"cacheWrite":0,"totalTokens":127,
            "cost":{"total":0.25}},"stopReason":"toolUse"}}),
    ];
    std::fs::write(
        &file,
        lines.iter().map(|l| format!("{l}\n")).collect::<String>(),
    )
    .unwrap();
    file
}

fn explain(env: &Env, sock: &str, name: &str, json: bool) -> std::process::Output {
    let mut extra = vec!["--tmux-socket", sock];
    if json {
        extra.push("--json");
    }
    env.run(&layout_args(env, &["explain", name], &extra))
}

#[test]
fn explain_names_every_source_and_the_rule_and_a_dead_pis_report_stops_counting() {
    let env = Env::new().with_system_path();
    let root = env.path("root");
    write_roster(&root, &[(ID, "Worker")]);
    let file = session(&env.path("sessions/--root--"), &root);
    let state =
        json!({"dialog": {"kind": "confirm", "title": "Allow rm -rf build?", "since": now_iso()},
        "tool": {"name": "bash", "since": now_iso(), "running": 1}})
        .to_string();
    // The stand-in registers, reports the dialog, then stays until `stop` exists.
    let stop = env.path("stop");
    let script = format!(
        "cd {r} && {bin} register --config {sys} --event session_start --seq 1 --pi-pid $$ --session-id {ID} --cwd {r} --session-file {f} >/dev/null 2>&1; \
         {bin} register --config {sys} --event ui_prompt_start --seq 2 --pi-pid $$ --session-id {ID} --cwd {r} --session-file {f} --pi-state '{state}' >/dev/null 2>&1; \
         while [ ! -e {stop} ]; do sleep 0.1; done",
        r = root.display(),
        bin = env!("CARGO_BIN_EXE_intercom-pane"),
        sys = env.system_config(),
        f = file.display(),
        stop = stop.display(),
    );
    let argv = pi_support::pi_pane_argv(&env.path("pi-bin"), &script);
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let server = TmuxServer::start("Worker", &root, &argv);
    let sock = server.sock.display().to_string();
    let idx = wait_for(15_000, || {
        let idx = scan_json(&env, &["--tmux-socket", &sock]);
        (record(&idx, "Worker")["stateReason"] == "dialog").then_some(idx)
    })
    .unwrap_or_else(|| panic!("{}", scan_json(&env, &["--tmux-socket", &sock])));
    let w = record(&idx, "Worker");
    assert_eq!(w["state"], "waiting", "{w}");
    assert_eq!(w["question"], "Allow rm -rf build?", "{w}");
    assert_eq!(w["stateSource"], "pi extension: dialog", "{w}");
    assert!(w["stateAt"].is_string(), "{w}");
    assert_eq!(w["usage"]["input"], 120, "{w}");
    assert_eq!(w["usage"]["cost"], 0.25, "{w}");
    assert_eq!(w["usage"]["atLeast"], false, "{w}");
    assert_eq!(idx["usage"]["calls"], 1, "{idx}");

    let o = explain(&env, &sock, "worker", false);
    assert!(o.status.success(), "{o:?}");
    let text = String::from_utf8(o.stdout).unwrap();
    for want in [
        "waiting — pi waits on a dialog [dialog]",
        "rule          what pi told its extension outranks the file",
        "source        pi extension: dialog, evidence",
        "asks          Allow rm -rf build?",
        "newest entry: a reply calling a tool",
        "registration ",
        " live; run idle since session_start",
        "pi events     ui_prompt_start",
        "dialog confirm \"Allow rm -rf build?\"",
        "tool bash running",
        "pane          runs its pi (tmux %",
        "observations  unknown (missing)",
        "connection    not checked by this command (the sidebar checks it every 15 s; `status --probe` once)",
        "usage         120 in · 7 out · $0.2500 over 1 calls (m)",
    ] {
        assert!(text.contains(want), "{want:?} in\n{text}");
    }
    let o = explain(&env, &sock, "root/Worker", true);
    assert!(o.status.success(), "{o:?}");
    let e: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(e["seat"], "root/Worker", "{e}");
    assert_eq!(e["extension"]["counted"], true, "{e}");
    assert_eq!(
        e["extension"]["picture"]["dialog"]["kind"], "confirm",
        "{e}"
    );
    assert_eq!(
        e["transcript"]["newestEntry"]["stopReason"], "toolUse",
        "{e}"
    );
    assert!(
        e["transcript"]["lastActivity"]["ageSeconds"].is_i64(),
        "{e}"
    );

    // Unknown and ambiguous names.
    let o = explain(&env, &sock, "nobody", false);
    assert_eq!(o.status.code(), Some(5), "{o:?}");

    // The pi is gone: its report no longer counts.
    std::fs::write(&stop, "").unwrap();
    let idx = wait_for(15_000, || {
        let idx = scan_json(&env, &["--tmux-socket", &sock]);
        (record(&idx, "Worker")["registered"]["alive"] == false).then_some(idx)
    })
    .unwrap_or_else(|| panic!("{}", scan_json(&env, &["--tmux-socket", &sock])));
    let w = record(&idx, "Worker");
    assert_ne!(w["stateReason"], "dialog", "{w}");
    assert!(w["question"].is_null(), "{w}");
    let o = explain(&env, &sock, "Worker", true);
    let e: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(e["extension"]["counted"], false, "{e}");
}
