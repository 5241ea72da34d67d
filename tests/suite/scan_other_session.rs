//! A configured worker whose pane runs a live pi registered in another session is `unknown`,
//! with both sessions named, never `idle` for lack of a file: that pi's state is not the
//! worker's. Real tmux on a private socket; the pane's pi is a program named `pi`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_support;
use crate::pi_support;
use crate::scan_support;

use std::path::Path;

use mux_support::{fake_pi, wait_for, TmuxServer};
use scan_support::*;

#[test]
fn a_worker_whose_pane_runs_another_session_is_unknown_not_idle() {
    let env = Env::new().with_system_path();
    let root = env.path("root");
    write_roster(&root, &[("configured-1", "W")]);
    std::fs::create_dir_all(env.path("sessions")).unwrap();
    let bin = env.path("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let pi = fake_pi(&bin).display().to_string();
    let server = TmuxServer::start("W", &root, &[&pi, "600"]);
    wait_for(10_000, || {
        let l = server.tmux(&["list-panes", "-a", "-F", "#{pane_current_command}"]);
        (l.trim() == "pi").then_some(())
    })
    .expect("the pane runs pi");
    let sock = server.sock.display().to_string();
    let st = |idx: &serde_json::Value| {
        let r = record(idx, "W");
        (
            r["state"].as_str().unwrap().to_string(),
            r["stateReason"].as_str().unwrap().to_string(),
            r["stateSource"].as_str().unwrap().to_string(),
        )
    };
    // Without any registration: a live pi with no file yet is idle, as pi writes nothing until
    // its first prompt.
    let before = st(&scan_json(&env, &["--tmux-socket", &sock]));
    assert_eq!(
        (before.0.as_str(), before.1.as_str()),
        ("idle", "no_session_file")
    );

    let line = server.tmux(&["list-panes", "-a", "-F", "#{pane_id} #{pane_pid}"]);
    let mut parts = line.split_whitespace();
    let pane_id = parts.next().unwrap().to_string();
    let pid: i32 = parts.next().unwrap().parse().unwrap();
    register_in_pane(&env, "other-2", pid, &pane_id, &sock);
    let (state, reason, source) = st(&scan_json(&env, &["--tmux-socket", &sock]));
    assert_eq!(
        (state.as_str(), reason.as_str()),
        ("unknown", "pane_runs_other_session")
    );
    assert!(
        source.contains("other-2") && source.contains("configured-1"),
        "{source}"
    );
}

/// The worker's pane runs the stand-in with `extra` words after its script (where a real pi's
/// own flags would be), its sessions in `flat` holding one file of another session; returns
/// the scan and that session's id.
fn scan_with_pane_pi(
    env: &Env,
    extra: impl Fn(&Path) -> Vec<String>,
) -> (serde_json::Value, String) {
    let root = env.path("root");
    write_roster(&root, &[("configured-1", "W")]);
    std::fs::create_dir_all(env.path("sessions")).unwrap();
    let flat = env.path("flat");
    std::fs::create_dir_all(&flat).unwrap();
    let src = Path::new(FIXTURES).join("pi-sessions/waiting.jsonl");
    let other = header_id(&src);
    let file = flat.join(format!("2026-11-29T23-13-49-000Z_{other}.jsonl"));
    std::fs::copy(&src, &file).unwrap();
    // Last written an hour ago: before the pane's pi started, so not its by being written.
    std::fs::File::options()
        .append(true)
        .open(&file)
        .unwrap()
        .set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(3600))
        .unwrap();
    let flat_s = flat.display().to_string();
    let mut argv = pi_support::pi_pane_argv_with(
        &env.path("pi-bin"),
        &[("PI_CODING_AGENT_SESSION_DIR", &flat_s)],
        "sleep 600",
    );
    argv.extend(extra(&file));
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let server = TmuxServer::start("W", &root, &argv);
    wait_for(10_000, || {
        let l = server.tmux(&["list-panes", "-a", "-F", "#{pane_current_command}"]);
        (l.trim() == "pi").then_some(())
    })
    .expect("the pane runs pi");
    let idx = scan_json(env, &["--tmux-socket", &server.sock.display().to_string()]);
    drop(server);
    (idx, other)
}

/// Nothing ties the pi in the worker's pane to a session (no registration, no `--session` on
/// its command line, no open file), though its folder holds another session's file: that file
/// is not taken to be its ("never the newest file in the folder"). The pane is the worker's by
/// the roster's layout: the worker's row is its own evidence (no file yet: idle), live, and
/// the pane is not listed a second time.
#[test]
fn a_pi_nothing_ties_to_a_session_in_the_workers_pane_is_not_given_a_file_of_its_folder() {
    let env = Env::new().with_system_path();
    let (idx, other) = scan_with_pane_pi(&env, |_| Vec::new());
    let w = record(&idx, "W");
    assert_eq!(
        (w["state"].as_str(), w["stateReason"].as_str()),
        (Some("idle"), Some("no_session_file")),
        "{w}"
    );
    assert_eq!(w["alive"], true, "{w}");
    let text = idx.to_string();
    assert!(
        !text.contains(&other),
        "no row names the other session: {idx:#}"
    );
    assert!(
        !idx["records"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["project"] == "panes"),
        "{idx:#}"
    );
}

/// With no registration, the pi in the worker's pane names its session on its command line
/// (`--session <file>`): it runs another session (waiting for input), so the worker is unknown
/// and that pi is its own seat, tied by its command line.
#[test]
fn a_worker_whose_pane_pi_runs_another_session_is_unknown_and_that_pi_is_its_own_seat() {
    let env = Env::new().with_system_path();
    let (idx, other) = scan_with_pane_pi(&env, |file| {
        vec!["--session".into(), file.display().to_string()]
    });
    let w = record(&idx, "W");
    assert_eq!(w["state"], "unknown", "{w}");
    assert_eq!(w["stateReason"], "pane_runs_other_session", "{w}");
    let source = w["stateSource"].as_str().unwrap();
    assert!(
        source.contains(&other) && source.contains("configured-1"),
        "{source}"
    );
    let pane = idx["records"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["project"] == "panes")
        .unwrap_or_else(|| panic!("{idx:#}"));
    assert_eq!(pane["state"], "waiting", "{pane}");
    assert_eq!(pane["sessionId"], other.as_str());
    assert_eq!(pane["sessionTie"], "command-line", "{pane}");
}

/// A pi with no file yet in the worker's pane cannot be told apart by its session: it is taken
/// to be the worker's (idle, nothing written), neither listed twice nor called another session.
#[test]
fn a_pi_with_no_file_yet_in_the_workers_pane_is_the_workers() {
    let env = Env::new().with_system_path();
    let root = env.path("root");
    write_roster(&root, &[("configured-1", "W")]);
    std::fs::create_dir_all(env.path("sessions")).unwrap();
    let home = env.path("pi-home").display().to_string();
    let argv = pi_support::pi_pane_argv_with(&env.path("pi-bin"), &[("HOME", &home)], "sleep 600");
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let server = TmuxServer::start("W", &root, &argv);
    wait_for(10_000, || {
        let l = server.tmux(&["list-panes", "-a", "-F", "#{pane_current_command}"]);
        (l.trim() == "pi").then_some(())
    })
    .expect("the pane runs pi");
    let idx = scan_json(&env, &["--tmux-socket", &server.sock.display().to_string()]);
    let w = record(&idx, "W");
    assert_eq!(
        (w["state"].as_str(), w["stateReason"].as_str()),
        (Some("idle"), Some("no_session_file")),
        "{w}"
    );
    assert_eq!(w["alive"], true);
    assert!(
        !idx["records"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["project"] == "panes"),
        "{idx:#}"
    );
}
