//! ProbeCache batches against real loopback servers: expiry, port changes, rotation, budget,
//! cancellation and the 16-connection ceiling.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::probe_common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use intercom_pane::seam::probe::{sort_disconnected_last, ProbeCache, ProbeLimits, ProbeTarget};
use intercom_pane::seam::states::ConnState;
use probe_common::{closed_ports, healthy, wall_ms, Behaviour, Servers, Tracker};
use tokio::sync::watch;

fn target(sid: &str, port: u16) -> ProbeTarget {
    ProbeTarget {
        session_id: sid.to_string(),
        port,
    }
}

/// A cancel receiver whose sender stays alive (and never cancels) for the test's duration.
fn no_cancel() -> (watch::Sender<bool>, watch::Receiver<bool>) {
    watch::channel(false)
}

const T0: i64 = 1_764_410_400_000;

#[test]
fn checks_expire_after_30s_with_an_injected_clock() {
    let servers = Servers::new();
    let s = servers.start(healthy("w1"), None);
    let mut cache = ProbeCache::new();
    let (_tx, rx) = no_cancel();
    let stats = cache
        .run_batch_blocking(&[target("w1", s.port)], || T0, rx)
        .unwrap();
    assert_eq!((stats.completed, stats.connected), (1, 1));
    let c = cache.get("w1", s.port, T0 + 30_000);
    assert_eq!(
        (c.state, c.reason, c.checked_at),
        (ConnState::Connected, "verified", Some(T0))
    );
    assert_eq!(
        c.to_json().to_string(),
        r#"{"sessionId":"w1","state":"connected","checkedAt":"2025-11-29T10:00:00.000Z","reason":"verified"}"#
    );
    let old = cache.get("w1", s.port, T0 + 30_001);
    assert_eq!((old.state, old.reason), (ConnState::Unknown, "stale"));
    let future = cache.get("w1", s.port, T0 - 1);
    assert_eq!((future.state, future.reason), (ConnState::Unknown, "stale"));
}

#[test]
fn changed_or_removed_port_drops_the_check() {
    let servers = Servers::new();
    let a = servers.start(healthy("w1"), None);
    let b = servers.start(healthy("w2"), None);
    let mut cache = ProbeCache::new();
    let (_tx, rx) = no_cancel();
    cache
        .run_batch_blocking(
            &[target("w1", a.port), target("w2", b.port)],
            || T0,
            rx.clone(),
        )
        .unwrap();
    assert_eq!(cache.get("w1", a.port, T0).reason, "verified");
    // The same session on another port never inherits the check, even before the next batch.
    let moved = closed_ports(1)[0];
    assert_eq!(cache.get("w1", moved, T0).reason, "not_checked");
    // Next pass: w1 moved to a closed port, w2 removed from the roster.
    cache
        .run_batch_blocking(&[target("w1", moved)], || T0 + 1000, rx)
        .unwrap();
    let now = cache.get("w1", moved, T0 + 1000);
    assert_eq!(
        (now.state, now.reason),
        (ConnState::Disconnected, "refused")
    );
    assert_eq!(cache.get("w1", a.port, T0 + 1000).reason, "not_checked");
    assert_eq!(cache.get("w2", b.port, T0 + 1000).reason, "not_checked");
    assert_eq!(cache.len(), 1);
}

#[test]
fn a_roster_larger_than_the_budget_rotates_so_the_tail_is_checked() {
    // Paused clock: exactly 3 of the 80 ms probes finish inside each 300 ms budget.
    let servers = Servers::paused();
    let ports: Vec<u16> = (0..12)
        .map(|_| servers.start(Behaviour::Silent, None).port)
        .collect();
    let roster: Vec<ProbeTarget> = ports
        .iter()
        .enumerate()
        .map(|(i, p)| target(&format!("w{i}"), *p))
        .collect();
    // One probe at a time, 80 ms each, 300 ms budget: about 3 finish per batch.
    let mut cache = ProbeCache::with_limits(ProbeLimits {
        request_deadline: Duration::from_millis(80),
        batch_budget: Duration::from_millis(300),
        max_in_flight: 1,
        ..ProbeLimits::default()
    });
    let (_tx, rx) = no_cancel();
    let first = servers.block_on(cache.run_batch(&roster, || T0, rx.clone()));
    assert_eq!(first.start_index, 0);
    assert!(first.budget_exhausted);
    assert!(first.completed >= 1 && first.completed < 12, "{first:?}");
    // Unchecked rows are unknown, never disconnected.
    let tail = cache.get("w11", ports[11], T0);
    assert_eq!(
        (tail.state, tail.reason),
        (ConnState::Unknown, "not_checked")
    );

    let second = servers.block_on(cache.run_batch(&roster, || T0 + 1, rx.clone()));
    assert_eq!(
        second.start_index, first.completed,
        "next batch starts where the last stopped"
    );
    // What the second batch skipped keeps its earlier, unexpired evidence.
    let w0 = cache.get("w0", ports[0], T0 + 2);
    assert_eq!((w0.reason, w0.checked_at), ("timeout", Some(T0)));

    for pass in 2..10 {
        if roster
            .iter()
            .all(|t| cache.get(&t.session_id, t.port, T0 + 10).reason == "timeout")
        {
            break;
        }
        servers.block_on(cache.run_batch(&roster, || T0 + pass, rx.clone()));
    }
    for t in &roster {
        let c = cache.get(&t.session_id, t.port, T0 + 10);
        assert_eq!(
            (c.state, c.reason),
            (ConnState::Disconnected, "timeout"),
            "{}",
            t.session_id
        );
    }
}

#[test]
fn the_budget_stops_a_batch_on_time_and_the_rest_stays_unknown() {
    // Paused clock: the budget and the deadlines are exact, so is what finished before the cut.
    let servers = Servers::paused();
    let roster: Vec<ProbeTarget> = (0..30)
        .map(|i| {
            target(
                &format!("w{i}"),
                servers.start(Behaviour::Silent, None).port,
            )
        })
        .collect();
    let mut cache = ProbeCache::with_limits(ProbeLimits {
        request_deadline: Duration::from_millis(200),
        batch_budget: Duration::from_millis(500),
        max_in_flight: 4,
        ..ProbeLimits::default()
    });
    let (_tx, rx) = no_cancel();
    let (stats, took) = servers.block_on(async {
        let t = tokio::time::Instant::now();
        let stats = cache.run_batch(&roster, || T0, rx).await;
        (stats, t.elapsed())
    });
    // Stopped by the budget, and at once: the 200 ms guard on the aborted tasks never ran out.
    assert!(
        took >= Duration::from_millis(500) && took < Duration::from_millis(510),
        "{took:?}"
    );
    assert!(stats.budget_exhausted);
    // 4 at a time, 200 ms each: two rounds finished (8), the third was cut, 18 never started.
    assert_eq!(
        (stats.completed, stats.cut_by_budget, stats.not_started),
        (8, 4, 18),
        "{stats:?}"
    );
    assert_eq!(
        stats.completed + stats.cut_by_budget + stats.not_started,
        30,
        "{stats:?}"
    );
    assert_eq!(stats.disconnected, stats.completed);
    let unknown = roster
        .iter()
        .filter(|t| cache.get(&t.session_id, t.port, T0).state == ConnState::Unknown)
        .count();
    assert_eq!(unknown, 30 - stats.completed);
}

#[test]
fn cancelling_aborts_in_flight_probes_at_once() {
    // Paused clock: no probe can reach its 750 ms deadline while the test waits (really) for
    // its 16 connections, so the cancel is what ends the batch, and the lag is exact.
    let servers = Servers::paused();
    let tracker = Arc::new(Tracker::default());
    let roster: Vec<ProbeTarget> = (0..20)
        .map(|i| {
            let s = servers.start(Behaviour::Silent, Some(tracker.clone()));
            target(&format!("w{i}"), s.port)
        })
        .collect();
    let mut cache = ProbeCache::new();
    let (tx, rx) = watch::channel(false);
    let counted = tracker.clone();
    let (stats, open_at_cancel, lag) = servers.block_on(async {
        let batch = async {
            let stats = cache.run_batch(&roster, wall_ms, rx).await;
            (stats, tokio::time::Instant::now())
        };
        let flip = async {
            // A blocking task holds the paused clock still while the connections really open.
            let open = tokio::task::spawn_blocking(move || {
                let deadline = Instant::now() + Duration::from_millis(10_000);
                while counted.open_now() < 16 && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(5));
                }
                counted.open_now()
            })
            .await
            .unwrap();
            let at = tokio::time::Instant::now();
            tx.send(true).unwrap();
            (open, at)
        };
        let ((stats, returned), (open, flipped)) = tokio::join!(batch, flip);
        (stats, open, returned - flipped)
    });
    assert_eq!(open_at_cancel, 16, "the in-flight probes held connections");
    // At once: not a tick of the clock passed between the cancel and the return.
    assert_eq!(lag, Duration::ZERO, "returned {lag:?} after cancel");
    assert!(stats.cancelled && !stats.budget_exhausted);
    assert_eq!(
        (stats.completed, stats.aborted, stats.not_started),
        (0, 16, 4),
        "{stats:?}"
    );
    let reasons: Vec<&str> = roster
        .iter()
        .map(|t| cache.get(&t.session_id, t.port, wall_ms()).reason)
        .collect();
    assert_eq!(reasons.iter().filter(|r| **r == "aborted").count(), 16);
    assert_eq!(reasons.iter().filter(|r| **r == "not_checked").count(), 4);
    assert!(roster
        .iter()
        .all(|t| cache.get(&t.session_id, t.port, wall_ms()).state == ConnState::Unknown));
    // The aborted sockets are really closed: the servers see every connection end promptly.
    // Bounded generously: a loaded 2-core runner may schedule the servers' threads late.
    let deadline = Instant::now() + Duration::from_millis(3000);
    while tracker.open_now() > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(tracker.open_now(), 0);
}

#[test]
fn an_already_cancelled_batch_starts_nothing() {
    let servers = Servers::new();
    let s = servers.start(healthy("w1"), None);
    let mut cache = ProbeCache::new();
    let (_tx, rx) = watch::channel(true);
    let stats = cache
        .run_batch_blocking(&[target("w1", s.port)], || T0, rx)
        .unwrap();
    assert_eq!(
        (stats.started, stats.not_started, stats.cancelled),
        (0, 1, true)
    );
    assert_eq!(s.accepted.load(std::sync::atomic::Ordering::SeqCst), 0);
}

#[test]
fn a_dropped_cancel_sender_is_not_a_cancel() {
    let servers = Servers::new();
    let s = servers.start(healthy("w1"), None);
    let mut cache = ProbeCache::new();
    let (tx, rx) = watch::channel(false);
    drop(tx);
    let stats = cache
        .run_batch_blocking(&[target("w1", s.port)], || T0, rx)
        .unwrap();
    assert_eq!((stats.connected, stats.cancelled), (1, false));
}

#[test]
fn never_more_than_16_connections_open_at_once() {
    let servers = Servers::new();
    let tracker = Arc::new(Tracker::default());
    let roster: Vec<ProbeTarget> = (0..48)
        .map(|i| {
            let sid = format!("w{i}");
            let body = format!(r#"{{"version":1,"sessionId":"{sid}"}}"#);
            let resp = probe_common::http("200 OK", "", &body);
            let b = Behaviour::RespondAfter(Duration::from_millis(60), resp);
            target(&sid, servers.start(b, Some(tracker.clone())).port)
        })
        .collect();
    let mut cache = ProbeCache::new();
    let (_tx, rx) = no_cancel();
    let stats = cache.run_batch_blocking(&roster, wall_ms, rx).unwrap();
    assert_eq!(stats.connected, 48, "{stats:?}");
    assert!(tracker.peak() <= 16, "server saw {} open", tracker.peak());
    // The ceiling is actually used, not avoided by being slow.
    assert!(
        tracker.peak() >= 12,
        "server saw only {} open",
        tracker.peak()
    );
    assert!(
        stats.max_in_flight <= 16 && stats.max_in_flight >= 12,
        "{stats:?}"
    );
}

#[test]
fn only_the_first_256_targets_are_probed() {
    let ports = closed_ports(300);
    let roster: Vec<ProbeTarget> = ports
        .iter()
        .enumerate()
        .map(|(i, p)| target(&format!("w{i}"), *p))
        .collect();
    let mut cache = ProbeCache::new();
    let (_tx, rx) = no_cancel();
    let stats = cache.run_batch_blocking(&roster, || T0, rx).unwrap();
    assert_eq!(
        (stats.considered, stats.over_cap, stats.completed),
        (256, 44, 256)
    );
    assert_eq!(cache.get("w255", ports[255], T0).reason, "refused");
    assert_eq!(cache.get("w256", ports[256], T0).reason, "not_checked");
}

#[test]
fn disconnected_rows_sort_last_in_config_order() {
    let servers = Servers::new();
    let closed = closed_ports(2);
    let roster = vec![
        target("a", closed[0]),
        target("b", servers.start(healthy("b"), None).port),
        target("c", closed[1]),
        target(
            "d",
            servers
                .start(
                    Behaviour::Respond(probe_common::http("404 Not Found", "", "")),
                    None,
                )
                .port,
        ),
        target("e", servers.start(healthy("e"), None).port),
    ];
    let mut cache = ProbeCache::new();
    let (_tx, rx) = no_cancel();
    cache.run_batch_blocking(&roster, || T0, rx).unwrap();
    let mut rows: Vec<_> = roster
        .iter()
        .map(|t| cache.get(&t.session_id, t.port, T0))
        .collect();
    sort_disconnected_last(&mut rows, |c| c.state);
    let order: Vec<(&str, &str)> = rows
        .iter()
        .map(|c| (c.session_id.as_str(), c.reason))
        .collect();
    assert_eq!(
        order,
        [
            ("b", "verified"),
            ("d", "legacy"),
            ("e", "verified"),
            ("a", "refused"),
            ("c", "refused")
        ]
    );
}

/// The measuring tool itself: 20 raw client connections held open read as 20, and 0 once closed.
#[test]
fn tracker_counts_what_is_really_open() {
    let servers = Servers::new();
    let tracker = Arc::new(Tracker::default());
    let s = servers.start(Behaviour::Silent, Some(tracker.clone()));
    let clients: Vec<_> = (0..20)
        .map(|_| std::net::TcpStream::connect(("127.0.0.1", s.port)).unwrap())
        .collect();
    let deadline = Instant::now() + Duration::from_millis(500);
    while tracker.peak() < 20 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(tracker.peak(), 20);
    drop(clients);
    // Bounded generously: a loaded 2-core runner may schedule the servers' threads late.
    let deadline = Instant::now() + Duration::from_millis(3000);
    while tracker.open_now() > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(tracker.open_now(), 0);
}

/// Probes write nothing: the probe sources use no file, logging or process API at all.
#[test]
fn probe_sources_write_nothing() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/probe");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        for banned in [
            "std::fs",
            "File::",
            "OpenOptions",
            "println!",
            "eprintln!",
            "Command::",
            "fsguard",
        ] {
            assert!(!text.contains(banned), "{} uses {banned}", path.display());
        }
        checked += 1;
    }
    assert!(checked >= 3);
}
