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
    // The coordinator pane runs a shell, not pi: offline, not a guess.
    let coord = last.lines().find(|l| l.contains("/Coordinator")).unwrap();
    assert!(coord.contains("offline"), "{last}");
    assert!(
        last.contains("(5 sessions, 1 waiting on you, 0 seen)"),
        "{last}"
    );
    // Nothing is left behind: no demo folder, so no socket and no server.
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}
