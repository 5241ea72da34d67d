//! A dialog pi waits on is its own turn for the alerts (issue 25): a worker in real tmux whose
//! pi (the stand-in of `pi_support`) reports a dialog, answers it, and reports a second one
//! before the same tool call — the session file's newest entry, two days old, never changes —
//! alerts twice, once per dialog, each with its title and the time pi opened it; the same open
//! dialog, pass after pass, alerts once.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::alerts_support::{lines, stop};
use crate::mux_support::{wait_for, TmuxServer};
use crate::pi_support;
use crate::scan_support::*;

use serde_json::json;

const ID: &str = "01a2f000-0000-7000-8000-00000000d1a2";

#[test]
fn each_dialog_before_the_same_tool_call_alerts_once() {
    let env = Env::new().with_system_path();
    let root = env.path("root");
    write_roster(&root, &[(ID, "Worker")]);
    let dir = env.path("sessions/--root--");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("2026-11-29T23-00-00-000Z_{ID}.jsonl"));
    let lines_of = [
        json!({"type":"session","version":3,"id":ID,"timestamp":"2026-11-29T23:00:00.000Z","cwd":root.display().to_string()}),
        json!({"type":"message","id":"a1","parentId":null,"timestamp":"2026-11-29T23:00:01.000Z","message":{"role":"user","content":"Clean up."}}),
        json!({"type":"message","id":"a2","parentId":"a1","timestamp":"2026-11-29T23:00:02.000Z","message":{"role":"assistant",
            "content":[{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"rm -rf build"}}],
            "provider":"p","model":"m","stopReason":"toolUse"}}),
    ];
    std::fs::write(
        &file,
        lines_of
            .iter()
            .map(|l| format!("{l}\n"))
            .collect::<String>(),
    )
    .unwrap();
    // The stand-in registers, then reports: dialog one; on `next`, no dialog; on `again`,
    // dialog two (each opened at the time it is reported); then stays until `stop`.
    let reg = |event: &str, seq: u32, state: &str| {
        format!(
            "{bin} register --config {sys} --event {event} --seq {seq} --pi-pid $$ --session-id {ID} --cwd {r} --session-file {f} --pi-state {state} >/dev/null 2>&1",
            bin = env!("CARGO_BIN_EXE_intercom-pane"),
            sys = env.system_config(),
            r = root.display(),
            f = file.display(),
        )
    };
    let dialog = |title: &str| {
        format!(
            "\"{{\\\"dialog\\\":{{\\\"kind\\\":\\\"confirm\\\",\\\"title\\\":\\\"{title}\\\",\\\"since\\\":\\\"$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)\\\"}}}}\""
        )
    };
    let wait = |name: &str| {
        format!(
            "while [ ! -e {} ]; do sleep 0.1; done",
            env.path(name).display()
        )
    };
    let script = [
        format!("cd {}", root.display()),
        reg("session_start", 1, "'{}'"),
        reg("ui_prompt_start", 2, &dialog("Allow rm -rf build?")),
        wait("next"),
        reg("ui_prompt_end", 3, "'{}'"),
        wait("again"),
        reg("ui_prompt_start", 4, &dialog("Really allow it?")),
        wait("stop"),
    ]
    .join("; ");
    let argv = pi_support::pi_pane_argv(&env.path("pi-bin"), &script);
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let server = TmuxServer::start("Worker", &root, &argv);
    let sock = server.sock.display().to_string();
    let reason = || {
        let idx = scan_json(&env, &["--tmux-socket", &sock]);
        record(&idx, "Worker")["stateReason"].clone()
    };
    wait_for(15_000, || (reason() == "dialog").then_some(()))
        .unwrap_or_else(|| panic!("{}", scan_json(&env, &["--tmux-socket", &sock])));
    let opened = record(&scan_json(&env, &["--tmux-socket", &sock]), "Worker")["stateAt"].clone();

    let out = env.path("alerts.jsonl");
    let args = layout_args(
        &env,
        &["watch"],
        &[
            "--tmux-socket",
            &sock,
            "--settle-secs",
            "0",
            "--no-desktop",
            "--no-status-line",
            "--on-alert",
            "/bin/sh",
            "-c",
            "cat >> \"$0\"",
            &out.display().to_string(),
        ],
    );
    let mut w = env
        .command(&args)
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(env.path("watch.err")).unwrap())
        .spawn()
        .unwrap();
    let got = |n: usize| {
        wait_for(30_000, || Some(lines(&out)).filter(|l| l.len() >= n)).unwrap_or_else(|| {
            panic!(
                "no {n} alert lines: {:?}\nwatch: {}\n{}",
                lines(&out),
                std::fs::read_to_string(env.path("watch.err")).unwrap_or_default(),
                scan_json(&env, &["--tmux-socket", &sock])
            )
        })
    };
    let l = got(1);
    assert_eq!(
        (&l[0]["seat"], &l[0]["state"], &l[0]["reason"]),
        (&json!("Worker"), &json!("waiting"), &json!("dialog")),
        "{}",
        l[0]
    );
    assert_eq!(l[0]["text"], "Allow rm -rf build?", "{}", l[0]);
    // Entered when pi opened the dialog, not at the file's tool call two days before (which
    // a watcher that never saw the seat would take for last night's turn, and not alert).
    assert_eq!(l[0]["since"], opened, "{}", l[0]);
    assert_ne!(opened, "2026-11-29T23:00:02.000Z");

    // Answered: the tool call the file shows runs (working); no alert.
    std::fs::write(env.path("next"), "").unwrap();
    wait_for(15_000, || (reason() == "tool_running").then_some(()))
        .unwrap_or_else(|| panic!("{}", scan_json(&env, &["--tmux-socket", &sock])));
    // A second dialog before the same tool call: a new turn, a second alert.
    std::fs::write(env.path("again"), "").unwrap();
    let l = got(2);
    assert_eq!(l[1]["reason"], "dialog", "{}", l[1]);
    assert_eq!(l[1]["text"], "Really allow it?", "{}", l[1]);
    // Still open, pass after pass: nothing more (the watch's passes run on changes and at
    // least every full pass; a scan here and a moment are enough for a repeat to show).
    wait_for(3_000, || (lines(&out).len() > 2).then_some(()));
    assert_eq!(lines(&out).len(), 2, "{:?}", lines(&out));
    let st = stop(&mut w);
    assert_eq!(st.code(), Some(0));
    std::fs::write(env.path("stop"), "").unwrap();
}
