//! close-worker against a pi that is replaced by another program at every stage boundary, on a
//! real tmux server with the simulated pi: the impostor's pane survives every time.
//!
//! The test gates the run through the config lock (the same `flock` every writer of ours takes):
//! it holds the lock, lets exactly one stage write through at a time, and at boundary `k` (after
//! `k` writes: requested, awaiting_handoff, the worker's handoff, ready) swaps the pi while it
//! holds the lock for 2 s, so the run is stopped right before its next recorded step.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::close_support;
use crate::lock_step;
use crate::mux_support;
use crate::scan_support;

use std::process::Stdio;
use std::time::Duration;

use close_support::*;
use lock_step::{hold_config_lock as hold, let_through_until};
use mux_support::{wait_for, TmuxServer};
use scan_support::*;
use serde_json::Value;

fn worker_pane(server: &TmuxServer) -> String {
    server
        .tmux(&["list-panes", "-t", "work", "-F", "#{pane_id}"])
        .trim()
        .to_string()
}

fn current_command(server: &TmuxServer, pane: &str) -> Option<String> {
    let out = std::process::Command::new("tmux")
        .arg("-S")
        .arg(&server.sock)
        .args([
            "list-panes",
            "-a",
            "-F",
            "#{pane_id} #{pane_current_command}",
        ])
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{pane} ")).map(str::to_string))
}

/// Replace the pi by the impostor in the same pane.
fn swap(server: &TmuxServer, pane: &str, layout: Layout, env: &Env) {
    let impostor = env.path("impostor").display().to_string();
    match layout {
        Layout::Own => {
            server.tmux(&["respawn-pane", "-k", "-t", pane, &impostor, "600"]);
        }
        Layout::Shell => {
            let shell: i32 = server
                .tmux(&["display-message", "-p", "-t", pane, "#{pane_pid}"])
                .trim()
                .parse()
                .unwrap();
            let kids =
                std::fs::read_to_string(format!("/proc/{shell}/task/{shell}/children")).unwrap();
            for k in kids.split_whitespace() {
                unsafe { libc::kill(k.parse().unwrap(), libc::SIGKILL) };
            }
        }
    }
    wait_for(5_000, || {
        (current_command(server, pane).as_deref() == Some("impostor")).then_some(())
    })
    .expect("the impostor runs in the worker's pane");
}

/// One run: the pi swapped once the job reached stage `k` (0: before `requested`; then
/// requested, awaiting_handoff, awaiting_settlement, ready). Returns the report.
fn case(layout: Layout, k: usize) -> Value {
    let env = Env::new().with_system_path();
    let file = setup(&env, None);
    let server = worker_in(&env, &file, true, layout);
    server.new_session("bystander", &env.path("root"), &[]);
    let pane = worker_pane(&server);
    let cfg_path = env.path("root/.pi-intercom/config.json");
    let lock_path = env.path("root/.pi-intercom/config.json.lock");
    // k = 0: the pi is swapped before the run starts, so its pane's process is not the
    // registered pi: refused before anything is recorded or sent.
    if k == 0 {
        swap(&server, &pane, layout, &env);
    }
    let before_run = std::fs::read(&cfg_path).unwrap();
    let mut held = hold(&lock_path);
    let sock = server.sock.display().to_string();
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_intercom-pane"))
        .args(layout_args(
            &env,
            &["close-worker"],
            &[
                "--tmux-socket",
                &sock,
                "Worker",
                // Far beyond the run's own pace on a loaded runner: a pi that is gone must end
                // the wait at once, and a deadline reached first would hide whether it did.
                "--deadline-secs",
                "60",
                "--json",
            ],
        ))
        .current_dir(env.dir.path())
        .env("HOME", env.path("home"))
        .env("TMUX_TMPDIR", env.path("tmux-tmp"))
        .env_remove("TMUX")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Let one write through at a time until the job reaches the target stage.
    held = let_through_until(
        &cfg_path,
        &lock_path,
        held,
        k,
        10_000,
        &format!("{layout:?}/{k}"),
    );
    if k > 0 {
        swap(&server, &pane, layout, &env);
    }
    std::thread::sleep(Duration::from_secs(2));
    drop(held);
    let out = child.wait_with_output().unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        current_command(&server, &pane).as_deref(),
        Some("impostor"),
        "{layout:?}/{k}: the impostor's pane survives: {report} {err}"
    );
    assert_ne!(out.status.code(), Some(0), "{layout:?}/{k}: {report} {err}");
    assert_ne!(report["state"], "closed", "{layout:?}/{k}: {report}");
    assert!(report["closed"].is_null(), "{layout:?}/{k}: {report}");
    assert!(err.is_empty(), "--json prints nothing else: {err}");
    if k == 0 {
        // 6: its registration is stale (its pi is gone), a refusal like 2.
        assert!(
            matches!(out.status.code(), Some(2 | 6)) && report["refused"].is_string(),
            "{layout:?}/0: {report} {err}"
        );
        assert_eq!(
            std::fs::read(&cfg_path).unwrap(),
            before_run,
            "nothing recorded"
        );
        assert!(
            !env.path("root/.pi-intercom/jobs").exists(),
            "no job record"
        );
        let shown = server.tmux(&["capture-pane", "-p", "-t", &pane]);
        assert!(!shown.contains("close requested"), "nothing sent: {shown}");
    }
    // Whatever the run reports as its final stage is what config says.
    if report["recorded"] == true {
        let c: Value = serde_json::from_slice(&std::fs::read(&cfg_path).unwrap()).unwrap();
        assert_eq!(c["agents"][1]["closeJob"]["state"], report["state"]);
    }
    report
}

#[test]
fn a_pi_replaced_at_any_stage_boundary_never_gets_its_pane_closed() {
    let cases: Vec<(Layout, usize)> = [Layout::Own, Layout::Shell]
        .into_iter()
        .flat_map(|l| (0..=4).map(move |k| (l, k)))
        .collect();
    let reports: Vec<Value> = std::thread::scope(|sc| {
        let hs: Vec<_> = cases
            .iter()
            .map(|&(l, k)| sc.spawn(move || case(l, k)))
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for ((l, k), r) in cases.iter().zip(&reports) {
        eprintln!(
            "{l:?} swapped after {k} writes: {} ({})",
            r["state"], r["detail"]
        );
        // Once the request is out, a pi that is gone ends the wait at once (no deadline wait).
        if *k >= 1 {
            assert_eq!(r["state"], "failed", "{l:?}/{k}: {r}");
        }
        if *k >= 2 {
            assert_eq!(r["reason"], "identity_failed", "{l:?}/{k}: {r}");
        }
    }
}

/// The pi under a shell that would start another program the moment it exits: the pane is
/// closed while the pi is frozen, so the shell never gets to start it.
#[test]
fn a_pi_under_a_shell_is_closed_with_its_pane_and_nothing_else_runs() {
    let env = Env::new().with_system_path();
    let file = setup(&env, None);
    let server = worker_in(&env, &file, true, Layout::Shell);
    server.new_session("bystander", &env.path("root"), &[]);
    // As a person runs it: progress on stderr, a readable receipt on stdout.
    let (code, receipt, err) = close_text(&env, &server, &["Worker", "--deadline-secs", "30"]);
    assert_eq!(code, 0, "{receipt} {err}");
    assert!(receipt.starts_with("closed: Worker (job "), "{receipt}");
    assert!(
        receipt.contains("\n  pane %") && receipt.contains(", pi pid "),
        "the receipt names the pane and pi closed: {receipt}"
    );
    assert!(!receipt.contains('{'), "no JSON without --json: {receipt}");
    assert_eq!(panes(&server), 1, "only the worker's pane is gone");
    assert!(
        err.contains("close-worker: awaiting"),
        "progress lines without --json: {err}"
    );
    assert!(
        err.contains("close-worker: asked Worker (delivered through typed) to save its handoff: its model must run `intercom-pane handoff --job ")
            && err.contains("Ctrl-C stops waiting, nothing is closed"),
        "the progress says what it waits for: {err}"
    );
    // No impostor was ever started by the shell.
    let impostors = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            std::fs::read_link(e.path().join("exe")).is_ok_and(|x| x == env.path("impostor"))
        })
        .count();
    assert_eq!(impostors, 0);
}
