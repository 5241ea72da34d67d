//! The live sidebar with probes on (a roster of Intercom workers with ports): the probe timer's
//! wake makes no scan while the board's check finds nothing else moved — it probes, and shows
//! the new checks on the rows shown — and a worker whose listener went away, with no file
//! changing, reads disconnected at the next probe.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

use crate::live_support::{sid, Fleet};
use crate::mux_support::wait_for;
use crate::probe_common::{healthy, Servers};

/// The sidebar's `live_pass` log events.
fn passes(log: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| e["event"] == "live_pass")
        .collect()
}

/// Probe wakes that the check answered (no scan ran).
fn probe_checks(log: &Path) -> usize {
    passes(log)
        .iter()
        .filter(|e| {
            let why = e["why"].as_array().cloned().unwrap_or_default();
            why.iter().any(|r| r == "probe") && e["check"]["same"] == true
        })
        .count()
}

#[test]
fn a_probe_wake_on_a_quiet_board_checks_instead_of_scanning_and_shows_a_lost_connection() {
    let f = Fleet::new(2);
    let server = f.tmux(2);
    let kept = Servers::new();
    let a = kept.start(healthy(&sid(0)), None);
    let going = Servers::new();
    let b = going.start(healthy(&sid(1)), None);
    // The roster's workers on these two listeners.
    let cfg_path = f.root.join(".pi-intercom/config.json");
    let mut cfg: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&cfg_path).unwrap()).unwrap();
    for agent in cfg["agents"].as_array_mut().unwrap() {
        if agent["sessionId"] == sid(0) {
            agent["port"] = a.port.into();
        } else if agent["sessionId"] == sid(1) {
            agent["port"] = b.port.into();
        }
    }
    std::fs::write(&cfg_path, cfg.to_string()).unwrap();

    let log = f.tmp.path().join("monitor.log");
    f.start_monitor_with(
        &server,
        &[format!("INTERCOM_PANE_LOG={}", log.display())],
        &["--no-desktop", "--no-status-line"],
        true,
    );
    let screen = || server.tmux(&["capture-pane", "-p", "-t", "=mon:"]);
    wait_for(20_000, || {
        let s = screen();
        (s.matches("connected").count() >= 2 && !s.contains("disconnected")).then_some(())
    })
    .unwrap_or_else(|| panic!("both workers never shown connected:\n{}", screen()));

    // Quiet: a probe wake (every 15 s) is answered by the check, not a scan. A pass slower
    // than a second (a loaded CI machine) is no baseline, so the wake after it scans and the
    // one after that checks: allow several probe periods.
    wait_for(90_000, || (probe_checks(&log) >= 1).then_some(()))
        .unwrap_or_else(|| panic!("no probe wake was checked: {:#?}", passes(&log)));

    // w1's listener goes away; nothing on disk changes. Probe wakes show it, and they are
    // still answered by the check (the listener is no file: nothing made a scan necessary).
    let before = probe_checks(&log);
    drop(going);
    wait_for(90_000, || {
        (screen().contains("disconnected") && probe_checks(&log) > before).then_some(())
    })
    .unwrap_or_else(|| {
        panic!(
            "the lost connection was never shown by a checked probe wake:\n{}\n{:#?}",
            screen(),
            passes(&log)
        )
    });
    drop(kept);
    server.tmux(&["kill-session", "-t", "=mon"]);
}
