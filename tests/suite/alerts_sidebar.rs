//! The sidebar's alerts ride on the live engine: a worker that goes to waiting alerts once the
//! settle delay has passed, not at the next pass — with nothing else changing, the next pass is
//! the full pass (here set to 5 minutes), which alerts used to wait for.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::{Duration, Instant};

use crate::alerts_support::lines;
use crate::live_support::Fleet;
use crate::mux_support::wait_for;

#[test]
fn a_settled_state_alerts_at_once_not_at_the_next_full_pass() {
    let f = Fleet::new(2);
    let server = f.tmux(2);
    let out = f.tmp.path().join("alerts.jsonl");
    let out_s = out.display().to_string();
    f.start_monitor(
        &server,
        &[],
        &[
            "--full-pass-secs",
            "300",
            "--settle-secs",
            "2",
            "--no-desktop",
            "--no-status-line",
            "--on-alert",
            "/bin/sh",
            "-c",
            "cat >> \"$0\"",
            &out_s,
        ],
    );
    // The sidebar has seen both seats (their turns from before it started are not alerted).
    let memory = f.data.join("alerts/memory.json");
    wait_for(15_000, || {
        let m = std::fs::read_to_string(&memory).ok()?;
        (m.contains(&crate::live_support::sid(0)) && m.contains(&crate::live_support::sid(1)))
            .then_some(())
    })
    .expect("the sidebar never recorded its seats");
    assert!(lines(&out).is_empty(), "{:?}", lines(&out));

    // w1 works, then asks: one alert, about 2 s after the question, with no other change.
    f.start_turn(1, 1);
    std::thread::sleep(Duration::from_millis(500));
    let t0 = Instant::now();
    f.ask(1, 1);
    let got = wait_for(20_000, || Some(lines(&out)).filter(|l| !l.is_empty()))
        .unwrap_or_else(|| panic!("no alert: {:?}", lines(&out)));
    let took = t0.elapsed();
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0]["seat"], "w1", "{}", got[0]);
    assert_eq!(got[0]["state"], "waiting", "{}", got[0]);
    assert!(
        took >= Duration::from_millis(1500) && took < Duration::from_secs(10),
        "alerted after {took:?} (settle 2 s)"
    );
    server.tmux(&["kill-session", "-t", "=mon"]);
}
