//! A quiet board's timer passes draw nothing: the live sidebar's full pass runs (here every
//! second) and finds nothing new, and not a byte reaches the terminal; a change still does.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

use crate::live_support::Fleet;
use crate::mux_support::wait_for;

/// Full passes the sidebar logged so far (`live_pass` with `timer` among its reasons).
fn timer_passes(log: &Path) -> usize {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| e["event"] == "live_pass")
        .filter(|e| {
            e["why"]
                .as_array()
                .is_some_and(|w| w.iter().any(|r| r == "timer"))
        })
        .count()
}

fn size(p: &Path) -> u64 {
    std::fs::metadata(p).map_or(0, |m| m.len())
}

#[test]
fn a_timer_pass_that_finds_nothing_new_draws_nothing() {
    let f = Fleet::new(2);
    let server = f.tmux(2);
    let log = f.tmp.path().join("monitor.log");
    f.start_monitor(
        &server,
        &[format!("INTERCOM_PANE_LOG={}", log.display())],
        &["--full-pass-secs", "1", "--no-desktop", "--no-status-line"],
    );
    // Everything the sidebar writes to its terminal from now on.
    let out = f.tmp.path().join("terminal.out");
    let pipe = format!("cat >> '{}'", out.display());
    server.tmux(&["pipe-pane", "-o", "-t", "=mon:", &pipe]);
    // Settled: two timer passes after the board first showed both seats (their transcripts are
    // days old: no age on screen ticks within minutes).
    wait_for(20_000, || (timer_passes(&log) >= 2).then_some(()))
        .expect("the sidebar ran no timer pass");
    let (bytes, passes) = (size(&out), timer_passes(&log));
    wait_for(20_000, || (timer_passes(&log) >= passes + 3).then_some(()))
        .expect("no more timer passes");
    assert_eq!(
        size(&out),
        bytes,
        "three timer passes that found nothing new wrote to the terminal"
    );
    // A change is drawn.
    f.start_turn(1, 1);
    wait_for(10_000, || (size(&out) > bytes).then_some(())).expect("a new state was never drawn");
    server.tmux(&["kill-session", "-t", "=mon"]);
}
