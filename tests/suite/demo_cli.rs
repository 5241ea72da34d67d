//! `intercom-pane demo --print`: simulated workers in a real private tmux server, classified by
//! the real scan, and everything torn down afterwards.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::Command;

#[test]
fn demo_prints_changing_states_from_real_tmux_and_cleans_up() {
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_intercom-pane"))
        .args(["demo", "--print", "--passes", "4", "--interval", "2"])
        .env("TMPDIR", tmp.path())
        .env_remove("TMUX")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let passes: Vec<&str> = text.split("— pass ").skip(1).collect();
    assert_eq!(passes.len(), 4, "{text}");
    let last = passes[3];
    // Reviewer asks for input and stays waiting; Release ends in a final error.
    let reviewer = last.lines().find(|l| l.contains("/Reviewer")).unwrap();
    assert!(
        reviewer.starts_with("* ") && reviewer.contains("waiting"),
        "{last}"
    );
    let release = last.lines().find(|l| l.contains("/Release")).unwrap();
    assert!(release.contains("error"), "{last}");
    // The coordinator is a (simulated) pi too, with its own task: idle after its turn.
    let coord = last.lines().find(|l| l.contains("/Coordinator")).unwrap();
    assert!(
        coord.contains("idle") && coord.contains("Coordinate the demo workers"),
        "{last}"
    );
    assert!(
        last.contains("(5 sessions, 1 waiting on you, 0 seen)"),
        "{last}"
    );
    // Nothing is left behind: no demo folder, so no socket and no server.
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    // And it says so, and what to do next.
    let end: Vec<&str> = text.lines().rev().take(2).collect();
    assert_eq!(
        end,
        [
            "Next: run your own coordinator and workers (README, \"Setup\"), then check every link with `intercom-pane doctor`.",
            "intercom-pane demo: ended; its tmux server, simulated agents and files are removed.",
        ],
        "{text}"
    );
}

#[test]
fn a_terminated_demo_still_removes_its_server_and_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_intercom-pane"))
        .args(["demo", "--print", "--passes", "0", "--interval", "1"])
        .env("TMPDIR", tmp.path())
        .env_remove("TMUX")
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until the demo's private tmux socket exists.
    let mut sock = None;
    for _ in 0..100 {
        sock = std::fs::read_dir(tmp.path())
            .unwrap()
            .flatten()
            .map(|e| e.path().join("tmux.sock"))
            .find(|p| p.exists());
        if sock.is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let sock = sock.expect("demo started its tmux server");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(128 + 15));
    assert!(!sock.exists());
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    // The server really is gone, not just its socket file.
    let out = Command::new("tmux")
        .arg("-S")
        .arg(&sock)
        .arg("list-sessions")
        .output()
        .unwrap();
    assert!(!out.status.success());
}

/// A simulated pi whose lifetime ends says why, where a person looks: its report (the sidebar's
/// Report column and details) and its pane; and it records its exit as pi's extension would.
#[test]
fn a_demo_agent_that_ends_says_why() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    let data = tmp.path().join("data");
    std::fs::create_dir_all(root.join(".pi-intercom")).unwrap();
    std::fs::create_dir_all(&data).unwrap();
    let id = "5e551011-0000-4000-8000-000000000001";
    let agents = serde_json::json!([
        {"sessionId": "c", "name": "Coordinator", "coordinator": true, "description": "C.",
         "port": 1, "projectDirectory": "."},
        {"sessionId": id, "name": "Release", "coordinator": false, "description": "R.",
         "port": 2, "projectDirectory": "."}]);
    std::fs::write(
        root.join(".pi-intercom/config.json"),
        serde_json::json!({"version": 1, "agents": agents}).to_string(),
    )
    .unwrap();
    let sys = tmp.path().join("system.json");
    std::fs::write(&sys, serde_json::json!({"dataRoot": data}).to_string()).unwrap();
    let reason = "The demo ends Release's pi after 2 s, to show a seat that went offline.";
    let out = Command::new(env!("CARGO_BIN_EXE_intercom-pane"))
        .args([
            "demo-agent",
            "--session-id",
            id,
            "--scenario",
            "error",
            "--step",
            "1",
        ])
        .args(["--lifetime", "2", "--end-reason", reason])
        .arg("--session-file")
        // pi's own name for a session file: `register` accepts no other.
        .arg(
            tmp.path()
                .join(format!("2026-11-30T10-00-00-000Z_{id}.jsonl")),
        )
        .arg("--cwd")
        .arg(&root)
        .arg("--root")
        .arg(&root)
        .arg("--register-config")
        .arg(&sys)
        // The simulated pi runs in the root, as in the demo's panes (`register` records the
        // folder it really runs in).
        .current_dir(&root)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains(reason));
    let reports: Vec<String> = std::fs::read_dir(root.join(".pi-intercom/reports"))
        .unwrap()
        .flatten()
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect();
    assert!(
        reports
            .iter()
            .any(|r| r.contains(reason) && r.contains("blocked")),
        "{reports:?}"
    );
    let seats: Vec<String> = std::fs::read_dir(root.join(".pi-intercom/seats"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect();
    assert!(
        seats.iter().any(|s| s.contains("session_shutdown")),
        "the exit is recorded: {seats:?}"
    );
}
