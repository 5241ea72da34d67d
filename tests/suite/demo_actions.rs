//! The demo's actions stay in the demo: `C` (close) hands off and closes a simulated worker
//! through the real close, `R` resumes it and `+` (spawn) starts a simulated worker, and none
//! starts the `pi` on the person's PATH (here a recording script that leaves a marker when run). ⏎ on a worker shows
//! its simulated conversation.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use mux_support::{wait_for, TmuxServer};

/// The demo typed into a shell of a 120×40 terminal outside tmux, with a PATH whose first `pi`
/// (and `sh`, `node`, `git`) writes `marker` when run. Returns the outer server, the demo's temporary folder and the
/// marker's path.
fn demo_with_recording_pi(dir: &Path) -> (TmuxServer, PathBuf, PathBuf) {
    let demo_tmp = dir.join("tmp");
    let bin = dir.join("bin");
    std::fs::create_dir_all(&demo_tmp).unwrap();
    std::fs::create_dir_all(&bin).unwrap();
    let marker = dir.join("pi-was-run");
    use std::os::unix::fs::PermissionsExt;
    // `pi` records and does nothing else; the others record and then do their job (a demo that
    // ran them from PATH still works, and the test names what it ran).
    for (name, then) in [
        ("pi", ""),
        ("sh", "exec /bin/sh \"$@\"\n"),
        ("node", "exit 1\n"),
        ("git", "exit 1\n"),
    ] {
        let path = bin.join(name);
        std::fs::write(
            &path,
            format!(
                "#!/bin/sh\necho {name} \"$@\" >> '{}'\n{then}",
                marker.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let outer = TmuxServer::start("outer", dir, &[]);
    outer.tmux(&["set-option", "-g", "status", "off"]);
    outer.tmux(&["resize-window", "-t", "=outer:", "-x", "120", "-y", "40"]);
    let cmd = format!(
        "env -u TMUX PATH={}:\"$PATH\" TMPDIR={} {} demo",
        bin.display(),
        demo_tmp.display(),
        env!("CARGO_BIN_EXE_intercom-pane")
    );
    outer.tmux(&["send-keys", "-t", "=outer:", "-l", &cmd]);
    outer.tmux(&["send-keys", "-t", "=outer:", "Enter"]);
    (outer, demo_tmp, marker)
}

/// The sidebar's row line for `name` (a selection marker, a state glyph, the name).
fn row<'a>(screen: &'a str, name: &str) -> Option<&'a str> {
    screen.lines().find(|l| {
        let mut c = l.chars();
        matches!(c.next(), Some('›' | ' '))
            && matches!(c.next(), Some('●' | '!' | '✗' | '○' | '·' | '?'))
            && l.split_whitespace().nth(1) == Some(name)
    })
}

/// Move the sidebar's selection (it has the keys) to `name`'s row, bounded.
fn select(outer: &TmuxServer, name: &str) {
    let capture = || outer.tmux(&["capture-pane", "-p", "-t", "=outer:"]);
    for _ in 0..12 {
        if row(&capture(), name).is_some_and(|l| l.starts_with('›')) {
            return;
        }
        outer.tmux(&["send-keys", "-t", "=outer:", "j"]);
        std::thread::sleep(Duration::from_millis(300));
    }
    panic!("cannot select {name}:\n{}", capture());
}

/// Leave the demo and wait until it removed everything.
fn leave(outer: &TmuxServer, demo_tmp: &Path) {
    outer.tmux(&["send-keys", "-t", "=outer:", "C-b", "d"]);
    wait_for(15_000, || {
        std::fs::read_dir(demo_tmp)
            .ok()?
            .next()
            .is_none()
            .then_some(())
    })
    .expect("the demo removed what it started");
}

#[test]
fn close_resume_and_spawn_in_the_demo_are_simulated_and_never_run_the_persons_pi() {
    let tmp = tempfile::tempdir().unwrap();
    let (outer, demo_tmp, marker) = demo_with_recording_pi(tmp.path());
    let capture = || outer.tmux(&["capture-pane", "-p", "-t", "=outer:"]);
    wait_for(20_000, || {
        let s = capture();
        (row(&s, "Builder").is_some() && s.contains("C-b Up: sidebar")).then_some(())
    })
    .unwrap_or_else(|| panic!("no sidebar:\n{}", capture()));
    outer.tmux(&["send-keys", "-t", "=outer:", "C-b", "Up"]);
    wait_for(10_000, || capture().contains("▶ ").then_some(()))
        .unwrap_or_else(|| panic!("C-b Up did not select the sidebar:\n{}", capture()));

    // C: the handoff and the close run quickly; the row reads offline with the close's receipt.
    select(&outer, "Builder");
    outer.tmux(&["send-keys", "-t", "=outer:", "C"]);
    wait_for(5_000, || {
        capture().contains("Close worker Builder?").then_some(())
    })
    .unwrap_or_else(|| panic!("no close dialog:\n{}", capture()));
    outer.tmux(&["send-keys", "-t", "=outer:", "y"]);
    let closed = wait_for(20_000, || {
        let s = capture();
        let r = row(&s, "Builder")?;
        (r.contains("offline") && r.contains("close-worker: closed")).then(|| r.to_string())
    })
    .unwrap_or_else(|| panic!("Builder did not close with a receipt:\n{}", capture()));
    // The simulated worker's question was answered by its handoff: no stale ask on its row.
    assert!(!closed.contains("needs decision"), "{closed}");

    // R: the closed worker resumes its session as a simulated worker again.
    outer.tmux(&["send-keys", "-t", "=outer:", "R"]);
    wait_for(5_000, || capture().contains("Builder?").then_some(()))
        .unwrap_or_else(|| panic!("no resume dialog:\n{}", capture()));
    outer.tmux(&["send-keys", "-t", "=outer:", "y"]);
    wait_for(30_000, || {
        let s = capture();
        let r = row(&s, "Builder")?;
        // Its health answers on the roster's port again.
        (!r.contains("offline") && r.contains(" connected ")).then_some(())
    })
    .unwrap_or_else(|| panic!("Builder did not resume:\n{}", capture()));

    // +: a simulated worker joins the roster and its row appears.
    outer.tmux(&["send-keys", "-t", "=outer:", "+"]);
    wait_for(5_000, || capture().contains("Spawn a worker").then_some(()))
        .unwrap_or_else(|| panic!("no spawn form:\n{}", capture()));
    outer.tmux(&["send-keys", "-t", "=outer:", "-l", "Tester"]);
    outer.tmux(&["send-keys", "-t", "=outer:", "Enter"]);
    wait_for(20_000, || {
        capture()
            .contains("spawn Tester: spawned — running in")
            .then_some(())
    })
    .unwrap_or_else(|| panic!("Tester was not spawned:\n{}", capture()));
    select(&outer, "Tester");
    wait_for(20_000, || {
        let s = capture();
        let r = row(&s, "Tester")?;
        (!r.contains("offline") && r.contains(" connected ")).then_some(())
    })
    .unwrap_or_else(|| panic!("Tester does not run connected:\n{}", capture()));

    assert!(
        !marker.exists(),
        "the demo ran programs from PATH: {:?}",
        std::fs::read_to_string(&marker)
    );
    leave(&outer, &demo_tmp);
    assert!(
        !marker.exists(),
        "the demo ran programs from PATH: {:?}",
        std::fs::read_to_string(&marker)
    );
}

#[test]
fn enter_on_a_demo_worker_shows_its_simulated_conversation() {
    let tmp = tempfile::tempdir().unwrap();
    let (outer, demo_tmp, marker) = demo_with_recording_pi(tmp.path());
    let capture = || outer.tmux(&["capture-pane", "-p", "-t", "=outer:"]);
    wait_for(20_000, || row(&capture(), "Docs").map(|_| ()))
        .unwrap_or_else(|| panic!("no sidebar:\n{}", capture()));
    outer.tmux(&["send-keys", "-t", "=outer:", "C-b", "Up"]);
    wait_for(10_000, || capture().contains("▶ ").then_some(()))
        .unwrap_or_else(|| panic!("C-b Up did not select the sidebar:\n{}", capture()));
    select(&outer, "Docs");
    outer.tmux(&["send-keys", "-t", "=outer:", "Enter"]);
    // Docs's pane, as pi shows a conversation: the prompt, the tool it runs and the answer.
    // (Docs takes a step every 5 s.)
    wait_for(20_000, || {
        let s = capture();
        (s.contains("[Docs]")
            && s.contains("> Work through the next item on the demo checklist.")
            && s.contains("Running the tests.")
            && s.contains("$ cargo test"))
        .then_some(s)
    })
    .unwrap_or_else(|| panic!("⏎ did not show Docs's conversation:\n{}", capture()));
    leave(&outer, &demo_tmp);
    assert!(
        !marker.exists(),
        "the demo ran programs from PATH: {:?}",
        std::fs::read_to_string(&marker)
    );
}
