//! The live engine on real files and a real tmux server: a transcript line, a pi's exit and a
//! window opened each wake one pass at once; nothing runs while nothing changes; a session
//! folder deleted and made again, or replaced by a link, is watched again (or refused) and the
//! board is right after one pass.

use std::time::{Duration, Instant};

use crate::live_support::{engine, quiet, state, until, Fleet};
use intercom_pane::seam::live::Settings;

#[test]
fn a_line_a_pi_exit_and_a_window_each_wake_one_pass_and_quiet_wakes_none() {
    let f = Fleet::new(3);
    let server = f.tmux(3);
    let mut e = engine(f.opts(&server.sock), Settings::default());
    let (first, _) = until(&mut e, |s| state(s, "w0") == "waiting/input_needed");
    assert_eq!(state(&first, "w2"), "waiting/input_needed");
    // Settle: the client attaches (it says so once), then nothing happens.
    let _ = quiet(&mut e, Duration::from_millis(1500)) || {
        let _ = e.pass();
        true
    };
    assert!(
        quiet(&mut e, Duration::from_millis(1500)),
        "a pass while nothing changed"
    );
    let h = e.health();
    assert_eq!(h.mode, "events");
    assert_eq!(h.pids, 3, "{h:?}");
    assert_eq!(h.servers.len(), 1);
    assert!(h.servers[0].listening, "{h:?}");
    // tmux 3.7+: its control client; before: the pty folder's events (never the 400 ms timer
    // where /dev/pts can be watched, as here).
    assert!(
        ["control-mode", "pty-events"].contains(&h.servers[0].by),
        "{h:?}"
    );

    // A transcript line: one pass shows it.
    let t0 = Instant::now();
    f.start_turn(1, 1);
    let (s, n) = until(&mut e, |s| state(s, "w1") == "working/user_message");
    assert_eq!(n, 1, "one pass");
    assert!(t0.elapsed() < Duration::from_secs(5));
    assert!(
        e.last_why().files.contains(&f.file(1)),
        "{:?}",
        e.last_why()
    );
    assert_eq!(state(&s, "w0"), "waiting/input_needed");

    // A pi exits: its pidfd wakes the engine; the seat is no longer shown waiting (an Intercom
    // worker without a registration whose session is gone reads unknown, by the rules).
    let pid: i32 = server
        .tmux(&["display-message", "-p", "-t", "=w2:", "#{pane_pid}"])
        .trim()
        .parse()
        .unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let (s, _) = until(&mut e, |s| state(s, "w2") == "unknown/pane_not_identified");
    assert!(e.last_why().reasons.contains("exit") || e.last_why().reasons.contains("panes"));
    assert_eq!(state(&s, "w1"), "working/user_message");

    // A window opened with w2's pi in it: the control client says so; the seat is back.
    let argv = f.pi_argv(2);
    let mut args = vec!["new-window", "-d", "-t", "=w0:", "--"];
    args.extend(argv.iter().map(String::as_str));
    let t0 = Instant::now();
    server.tmux(&args);
    until(&mut e, |s| state(s, "w2") == "waiting/input_needed");
    // Told, not found by the 5 s backstop compare or the 30 s full pass.
    assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
    assert_eq!(e.health().pids, 3);
}

#[test]
fn a_session_folder_deleted_made_again_or_replaced_by_a_link_is_right_after_one_pass() {
    let f = Fleet::new(1);
    let server = f.tmux(1);
    let mut e = engine(f.opts(&server.sock), Settings::default());
    until(&mut e, |s| state(s, "w0") == "waiting/input_needed");
    // Deleted and made again with the worker working: watched anew, then a line shows.
    let saved = std::fs::read(f.file(0)).unwrap();
    std::fs::remove_dir_all(&f.sessions).unwrap();
    let (s, _) = until(&mut e, |s| state(s, "w0") != "waiting/input_needed");
    assert!(
        state(&s, "w0").starts_with("idle") || state(&s, "w0").starts_with("unknown"),
        "{}",
        state(&s, "w0")
    );
    std::fs::create_dir(&f.sessions).unwrap();
    std::fs::write(f.file(0), &saved).unwrap();
    until(&mut e, |s| state(s, "w0") == "waiting/input_needed");
    f.start_turn(0, 1);
    until(&mut e, |s| state(s, "w0") == "working/user_message");
    // Replaced by a link to a folder with the same file: refused, never followed.
    let elsewhere = f.tmp.path().join("elsewhere");
    std::fs::rename(&f.sessions, &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &f.sessions).unwrap();
    let (s, _) = until(&mut e, |s| state(s, "w0") != "working/user_message");
    let shown = state(&s, "w0");
    assert!(!shown.starts_with("working"), "{shown}");
    // Writes behind the link wake nothing (the link is not watched).
    let _ = quiet(&mut e, Duration::from_millis(500)) || {
        let _ = e.pass();
        true
    };
    f.start_turn(0, 2);
    assert!(
        quiet(&mut e, Duration::from_millis(800)),
        "a write behind a link woke a pass"
    );
}
