//! `intercom-pane demo --print`: simulated workers in a real private tmux server, classified by
//! the real scan, and everything torn down afterwards.

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
