//! Probe batch figures (ignored by default):
//! `cargo test --release --test bench probe_bench -- --ignored --nocapture --test-threads 1`
//!
//! Three rosters of 256 workers: all on closed ports, all on servers that accept and never
//! answer, all healthy. Open connections are counted server-side from the kernel's TCP state.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::probe_common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use intercom_pane::seam::probe::{ProbeCache, ProbeTarget};
use intercom_pane::seam::states::ConnState;
use probe_common::{closed_ports, healthy, wall_ms, Behaviour, Servers, Tracker};
use tokio::sync::watch;

fn roster(ports: &[u16]) -> Vec<ProbeTarget> {
    ports
        .iter()
        .enumerate()
        .map(|(i, p)| ProbeTarget {
            session_id: format!("worker-{i}"),
            port: *p,
        })
        .collect()
}

fn count(cache: &ProbeCache, r: &[ProbeTarget], state: ConnState) -> usize {
    let now = wall_ms();
    r.iter()
        .filter(|t| cache.get(&t.session_id, t.port, now).state == state)
        .count()
}

#[test]
#[ignore = "a benchmark: run by hand in release, one module at a time (docs/benchmarks.md)"]
fn bench_256_closed_ports() {
    let r = roster(&closed_ports(256));
    let (_tx, rx) = watch::channel(false);
    let mut times = Vec::new();
    for _ in 0..5 {
        let mut cache = ProbeCache::new();
        let t = Instant::now();
        let stats = cache.run_batch_blocking(&r, wall_ms, rx.clone()).unwrap();
        times.push(t.elapsed());
        assert_eq!(stats.disconnected, 256, "{stats:?}");
        assert_eq!(count(&cache, &r, ConnState::Disconnected), 256);
    }
    times.sort();
    println!(
        "closed ports x256: min {:?} median {:?} max {:?} (target < 200 ms)",
        times[0], times[2], times[4]
    );
    assert!(times[4] < Duration::from_millis(200));
}

#[test]
#[ignore = "a benchmark: run by hand in release, one module at a time (docs/benchmarks.md)"]
fn bench_256_silent_servers() {
    let servers = Servers::new();
    let tracker = Arc::new(Tracker::default());
    let ports: Vec<u16> = (0..256)
        .map(|_| servers.start(Behaviour::Silent, Some(tracker.clone())).port)
        .collect();
    let r = roster(&ports);
    let (_tx, rx) = watch::channel(false);
    let mut cache = ProbeCache::new();
    for pass in 0..2 {
        let t = Instant::now();
        let stats = cache.run_batch_blocking(&r, wall_ms, rx.clone()).unwrap();
        let took = t.elapsed();
        println!(
            "silent x256 pass {pass}: {took:?} (target 4 s ±10%), start {} completed {} (timeout) cut {} not started {}, \
             unknown rows {}, client max in flight {}, server peak open {}",
            stats.start_index,
            stats.completed,
            stats.cut_by_budget,
            stats.not_started,
            count(&cache, &r, ConnState::Unknown),
            stats.max_in_flight,
            tracker.peak()
        );
        assert!(took >= Duration::from_millis(3600) && took <= Duration::from_millis(4400));
        assert!(stats.budget_exhausted);
        assert_eq!(stats.completed, stats.disconnected);
        assert!(tracker.peak() <= 16);
    }
}

#[test]
#[ignore = "a benchmark: run by hand in release, one module at a time (docs/benchmarks.md)"]
fn bench_256_healthy_servers() {
    let servers = Servers::new();
    let tracker = Arc::new(Tracker::default());
    let ports: Vec<u16> = (0..256)
        .map(|i| {
            servers
                .start(healthy(&format!("worker-{i}")), Some(tracker.clone()))
                .port
        })
        .collect();
    let r = roster(&ports);
    let (_tx, rx) = watch::channel(false);
    let mut times = Vec::new();
    for _ in 0..5 {
        let mut cache = ProbeCache::new();
        let t = Instant::now();
        let stats = cache.run_batch_blocking(&r, wall_ms, rx.clone()).unwrap();
        times.push((t.elapsed(), stats.max_in_flight));
        assert_eq!(stats.connected, 256, "{stats:?}");
    }
    times.sort();
    println!(
        "healthy x256: min {:?} median {:?} max {:?}; client max in flight {:?}; server peak open {}",
        times[0].0,
        times[2].0,
        times[4].0,
        times.iter().map(|t| t.1).max(),
        tracker.peak()
    );
    assert!(tracker.peak() <= 16);
}
