//! The long timer's check (docs/behaviour.md §3a) on real files and a real tmux server: while
//! nothing moved the timer makes no pass (the check says `same`), and a change no event reports
//! — a pi started in a shell pane, writing nothing — is found by the next timer all the same.

use std::time::{Duration, Instant};

use crate::live_support::{engine, state, until, Fleet};
use intercom_pane::seam::live::board::BoardPass;
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
