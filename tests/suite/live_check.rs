//! The long timer's check (docs/behaviour.md §3a) on real files and a real tmux server: while
//! nothing moved the timer makes no pass (the check says `same`), and a change no event reports
//! — a pi started in a shell pane, writing nothing; a session file written where nothing
//! listens — is found by the next timer all the same.

use std::time::{Duration, Instant};

use crate::live_support::{engine, state, until, Fleet};
use intercom_pane::seam::live::board::BoardPass;
use intercom_pane::seam::live::engine::Why;
use intercom_pane::seam::live::{Settings, Wake};

#[test]
fn the_timer_makes_no_pass_while_nothing_moved_and_finds_a_pi_started_in_a_shell_pane() {
    let f = Fleet::new(2);
    let server = f.tmux(1);
    server.new_session("w1", f.tmp.path(), &["bash", "--norc", "--noprofile"]);
    let settings = Settings {
        full_every: Duration::from_secs(3),
        ..Settings::default()
    };
    let mut e = engine(f.opts(&server.sock), settings);
    let (first, _) = until(&mut e, |s| {
        state(s, "w0") == "waiting/input_needed" && state(s, "w1").starts_with("offline")
    });
    assert!(state(&first, "w1").starts_with("offline"));

    // Nothing moves: within a few timers one finds everything as the last full pass left it.
    let end = Instant::now() + Duration::from_secs(20);
    let mut outcomes = Vec::new();
    while Instant::now() < end && !outcomes.contains(&"same") {
        if e.wait(Some(end)) == Wake::Pass {
            outcomes.push(match e.pass() {
                BoardPass::Same { .. } => "same",
                BoardPass::Scanned(Ok(_)) => "scanned",
                BoardPass::Scanned(Err(_)) => "refused",
            });
        }
    }
    assert!(
        outcomes.contains(&"same"),
        "no timer found the board unchanged: {outcomes:?}"
    );

    // A session opened (not a pi): its pass lists the server with tmux. The next timer's check
    // reads that listing's `/proc` side, finds it as tmux gave it, and makes no pass either.
    server.new_session("idle", f.tmp.path(), &["sleep", "600"]);
    let end = Instant::now() + Duration::from_secs(20);
    let mut after: Vec<(Vec<&str>, &str)> = Vec::new();
    while Instant::now() < end && !after.iter().any(|(why, _)| why == &["timer"]) {
        if e.wait(Some(end)) == Wake::Pass {
            let out = match e.pass() {
                BoardPass::Same { .. } => "same",
                BoardPass::Scanned(Ok(_)) => "scanned",
                BoardPass::Scanned(Err(_)) => "refused",
            };
            after.push((e.last_why().reasons.iter().copied().collect(), out));
        }
    }
    assert!(
        after.first().is_some_and(|(why, _)| why != &["timer"]),
        "the session woke a pass of its own: {after:?}"
    );
    assert_eq!(
        after.last().map(|(_, out)| *out),
        Some("same"),
        "the timer after a listing tmux gave: {after:?}"
    );

    // A pi started in the shell pane: no file written, no pane opened or closed.
    let argv = f.pi_argv(1);
    let command = format!("exec -a pi {}", argv[4..].join(" "));
    server.tmux(&["send-keys", "-t", "=w1:", "-l", &command]);
    server.tmux(&["send-keys", "-t", "=w1:", "Enter"]);
    let (found, _) = until(&mut e, |s| state(s, "w1") == "waiting/input_needed");
    assert_eq!(state(&found, "w0"), "waiting/input_needed");
    let why = &e.last_why().reasons;
    assert!(
        why.contains("timer"),
        "found by the timer's pass, not an event: {why:?}"
    );
}

/// The board's passes driven by hand: a file rewritten where no event is heard (nothing here
/// listens) is found by the timer's check, which then makes the pass; untouched, it makes none.
#[test]
fn the_check_finds_a_file_that_moved_without_an_event() {
    use intercom_pane::seam::live::engine::Passes;
    use intercom_pane::seam::liveness::LivenessMode;
    let f = Fleet::new(1);
    let mut opts = f.opts(&f.tmp.path().join("no-tmux"));
    opts.liveness = LivenessMode::AssumeAlive;
    let mut board = crate::live_support::board_passes(opts);
    // The fleet's files are fresh: a check would not trust their times yet.
    std::thread::sleep(Duration::from_millis(2100));
    let (first, _) = board.pass(&full_why("start"));
    assert!(matches!(first, BoardPass::Scanned(Ok(_))));
    let (checked, plan) = board.pass(&full_why("timer"));
    assert!(matches!(checked, BoardPass::Same { .. }), "nothing moved");
    assert!(
        plan.is_none(),
        "a check that found nothing keeps what is watched"
    );

    f.start_turn(0, 1);
    let (moved, plan) = board.pass(&full_why("timer"));
    let BoardPass::Scanned(Ok(scan)) = moved else {
        panic!("the check let a moved file pass");
    };
    assert!(plan.is_some());
    assert_eq!(state(&scan, "w0"), "working/user_message");

    // A pass for a changed file is a baseline too, once what it read has settled: the first
    // timer after activity need not scan again.
    f.start_turn(0, 2);
    std::thread::sleep(Duration::from_millis(50));
    let (event, _) = board.pass(&Why::default());
    assert!(matches!(event, BoardPass::Scanned(Ok(_))));
    std::thread::sleep(Duration::from_millis(2100));
    let (after_event, _) = board.pass(&full_why("timer"));
    assert!(
        matches!(after_event, BoardPass::Same { .. }),
        "a settled event pass holds"
    );

    // A file written after a pass began (it may have read the file before) is never vouched
    // for: the next timer scans, however long ago the write was.
    let (event, _) = board.pass(&Why::default());
    assert!(matches!(event, BoardPass::Scanned(Ok(_))));
    f.ask(0, 3);
    std::thread::sleep(Duration::from_millis(2100));
    let (after_write, _) = board.pass(&full_why("timer"));
    let BoardPass::Scanned(Ok(scan)) = after_write else {
        panic!("the check vouched for a file written after its pass began");
    };
    assert_eq!(state(&scan, "w0"), "waiting/input_needed");
}

/// A seat whose tmux server is gone (nothing listens on its socket) no longer makes every timer
/// a full pass: the check looks at the socket's path, and a server started there (which makes
/// the socket anew) is found by the next timer, though nothing watches that server.
#[test]
fn a_server_nothing_listens_for_is_checked_by_its_socket_and_found_when_it_starts() {
    use intercom_pane::seam::live::engine::Passes;
    let f = Fleet::new(1);
    let mut server = f.tmux(1);
    // (tmux may leave its socket behind: nothing listens on it either way.)
    server.tmux(&["kill-server"]);
    let mut board = crate::live_support::board_passes(f.opts(&server.sock));
    // The fleet's files are fresh: a check would not trust their times yet.
    std::thread::sleep(Duration::from_millis(2100));
    let (first, _) = board.pass(&full_why("start"));
    let BoardPass::Scanned(Ok(scan)) = first else {
        panic!("the first pass was refused");
    };
    assert!(
        !state(&scan, "w0").starts_with("waiting"),
        "no server, no pi: {}",
        state(&scan, "w0")
    );
    let (checked, _) = board.pass(&full_why("timer"));
    assert!(
        matches!(checked, BoardPass::Same { .. }),
        "nothing listens on the socket, as before"
    );

    let argv = f.pi_argv(0);
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    server.launch("w0", f.tmp.path(), &argv);
    f.await_pi(&server, "=w0:");
    let (found, _) = board.pass(&full_why("timer"));
    let BoardPass::Scanned(Ok(scan)) = found else {
        panic!("the check let a server started on the socket pass");
    };
    assert_eq!(state(&scan, "w0"), "waiting/input_needed");
}

/// What the engine hands the board for a full pass asked for by `reason` alone.
fn full_why(reason: &'static str) -> Why {
    let mut w = Why {
        full: true,
        ..Default::default()
    };
    w.reasons.insert(reason);
    w
}
