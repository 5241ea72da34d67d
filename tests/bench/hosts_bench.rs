//! Benchmark (ignored by default): one board over 8 hosts × 32 stand-in workers, each host a
//! network namespace with its own sshd, tmux server and workers (the multi-host tier's
//! `hosts_support`), the board in this process as the sidebar runs it (`HostsSource`):
//! - update latency: a line written to a worker's session file on a host → the board showing
//!   the new state (40 samples over all hosts; the target is p95 ≤ 250 ms);
//! - the same with one host hung (its sshd tree stopped with SIGSTOP: its connection open,
//!   nothing answering): 40 samples over the 7 others, from the moment it hangs;
//! - this machine's idle CPU: this process (the board's threads, and the ssh clients it ran and
//!   reaped) plus the shared ssh connections (ControlMaster processes), over a window in which
//!   nothing changes; the hosts' own CPU (sshd and the commands it runs) beside it;
//! - frames while idle, and the cost of one frame's merge of 256 rows.
//!
//! Run: `cargo test --release --test bench hosts_bench -- --ignored --nocapture`
//! (`HOSTS_BENCH_SECS` sets the idle window, default 60). Needs root, sshd and `ip netns`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::{Duration, Instant};

use intercom_pane::seam::snapshot::HostState;
use intercom_pane::seam::states::BoardState;
use intercom_pane::seam::ui::ports::SnapshotSource;

use crate::hosts_support::{all_answering, board, row, until, Net};
use crate::threads::{threads, Thread};

const HOSTS: usize = 8;
const WORKERS: usize = 32;

/// utime + stime (+ cutime + cstime when `children`) of `pid`, in clock ticks.
fn ticks(pid: i32, children: bool) -> u64 {
    let Ok(s) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0;
    };
    let Some(i) = s.rfind(')') else { return 0 };
    let f: Vec<u64> = s[i + 2..]
        .split(' ')
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    f[11] + f[12] + if children { f[13] + f[14] } else { 0 }
}

/// Between two readings, by thread kind (a host's thread counts as `ip-host-*`): µs on a CPU and
/// voluntary switches.
fn by_kind(
    a: &std::collections::BTreeMap<String, Thread>,
    b: &std::collections::BTreeMap<String, Thread>,
) -> std::collections::BTreeMap<String, (u64, u64)> {
    let mut out: std::collections::BTreeMap<String, (u64, u64)> = Default::default();
    for (id, t) in b {
        let (t0, v0) = a.get(id).map_or((0, 0), |x| (x.cpu_ns, x.voluntary));
        let kind = if t.name.starts_with("ip-host-") {
            "ip-host-*".to_string()
        } else {
            t.name.clone()
        };
        let e = out.entry(kind).or_default();
        e.0 += t.cpu_ns.saturating_sub(t0) / 1000;
        e.1 += t.voluntary.saturating_sub(v0);
    }
    out.retain(|_, v| *v != (0, 0));
    out
}

/// This process's live `ssh` children (a host's stream, a call): their pids.
fn ssh_children() -> Vec<i32> {
    let me = std::process::id().to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<i32>().ok())
        .filter(|pid| {
            let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            s.contains("(ssh)")
                && s.rfind(')')
                    .is_some_and(|i| s[i + 2..].split(' ').nth(1) == Some(me.as_str()))
        })
        .collect()
}

/// The shared ssh connections of this machine (their process title names the control folder).
fn masters() -> Vec<i32> {
    let ctl = intercom_pane::seam::hosts::ssh::control_dir()
        .unwrap()
        .display()
        .to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|c| String::from_utf8_lossy(&c).starts_with(&format!("ssh: {ctl}")))
                .unwrap_or(false)
        })
        .collect()
}

/// `n` questions written on the hosts (never on `skip`), numbered from `first`, each waited
/// for on the board; their latencies, sorted.
fn latencies(
    net: &Net,
    src: &mut intercom_pane::seam::hosts::board::HostsSource,
    names: &[&str],
    n: usize,
    skip: Option<usize>,
    first: usize,
) -> Vec<Duration> {
    let hosts: Vec<usize> = (0..HOSTS).filter(|h| Some(*h) != skip).collect();
    let mut lat = Vec::with_capacity(n);
    for i in first..first + n {
        let (h, w) = (hosts[i % hosts.len()], (i * 5 + i / HOSTS) % WORKERS);
        let host = &net.hosts[h];
        let t = Instant::now();
        host.ask(w, &format!("bench question {i}"));
        until(src, 20_000, "the question", |s| {
            row(s, &host.name, names[w]).is_some_and(|r| {
                r.state == BoardState::Waiting
                    && r.question
                        .as_deref()
                        .is_some_and(|q| q.contains(&format!("bench question {i}")))
            })
        });
        lat.push(t.elapsed());
    }
    lat.sort();
    lat
}

/// `N samples: median, p95, max` of sorted latencies.
fn summary(lat: &[Duration]) -> String {
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let at = |q: f64| lat[((lat.len() as f64 * q).ceil() as usize).clamp(1, lat.len()) - 1];
    format!(
        "{} samples: median {:.0} ms, p95 {:.0} ms, max {:.0} ms",
        lat.len(),
        ms(at(0.5)),
        ms(at(0.95)),
        ms(lat[lat.len() - 1])
    )
}

fn pct(ticks: u64, secs: f64) -> f64 {
    let hz = 100.0; // USER_HZ on Linux
    ticks as f64 / hz / secs * 100.0
}

#[test]
#[ignore = "a benchmark: run by hand in release, one module at a time (docs/benchmarks.md)"]
fn eight_hosts_of_32_workers() {
    let secs: u64 = std::env::var("HOSTS_BENCH_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    let names: Vec<String> = (0..WORKERS).map(|i| format!("w{i:02}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let hosts: Vec<String> = (0..HOSTS).map(|i| format!("h{i}")).collect();
    let spec: Vec<(&str, &[&str])> = hosts.iter().map(|h| (h.as_str(), &names[..])).collect();
    let t0 = Instant::now();
    let net = Net::new(&spec, &[]);
    eprintln!(
        "setup: {} hosts × {WORKERS} workers in {:.1} s",
        HOSTS,
        t0.elapsed().as_secs_f64()
    );
    let mut src = board(&net);
    let t1 = Instant::now();
    let s = until(
        &mut src,
        180_000,
        "every host answering with all its rows",
        |s| all_answering(s) && s.rows.len() == HOSTS * WORKERS,
    );
    let via = s.hosts.first().and_then(|h| h.via).unwrap_or("?");
    eprintln!(
        "board complete ({} rows, via {via}) after {:.1} s",
        s.rows.len(),
        t1.elapsed().as_secs_f64()
    );

    // Update latency: a question written on a host → the board showing the worker waiting.
    let lat = latencies(&net, &mut src, &names, 40, None, 0);
    eprintln!(
        "update latency (session file write on a host → board), {}: target p95 ≤ 250 ms",
        summary(&lat)
    );

    // One host hangs (its whole sshd tree stopped: the connection and the stream there stay
    // open, nothing answers): the others' changes measured from the moment it hangs, before
    // and after the board notices, and this machine's passes.
    let hung = HOSTS - 1;
    net.hosts[hung].signal_sshd(nix::sys::signal::Signal::SIGSTOP);
    let t_hang = Instant::now();
    let lat_hung = latencies(&net, &mut src, &names, 40, Some(hung), 40);
    until(&mut src, 20_000, "the hung host not answering", |s| {
        s.hosts
            .iter()
            .any(|h| h.name == net.hosts[hung].name && h.state != HostState::Answering)
    });
    eprintln!(
        "with host {} hung ({:.1} s of it measured, noticed by then): the other hosts' updates {}",
        net.hosts[hung].name,
        t_hang.elapsed().as_secs_f64(),
        summary(&lat_hung)
    );
    net.hosts[hung].signal_sshd(nix::sys::signal::Signal::SIGCONT);
    until(
        &mut src,
        60_000,
        "every host answering again",
        all_answering,
    );

    // Idle: nothing changes anywhere; the board keeps following every host.
    let me = std::process::id() as i32;
    let mut m = masters();
    let remote = |net: &Net| -> u64 {
        net.hosts
            .iter()
            .flat_map(|h| h.sshd_tree())
            .map(|p| ticks(p, true))
            .sum()
    };
    let kids = ssh_children();
    let kids0: u64 = kids.iter().map(|p| ticks(*p, false)).sum();
    let (m0, r0) = (
        m.iter().map(|p| ticks(*p, false)).sum::<u64>(),
        remote(&net),
    );
    // This process's own readings last before the window and first after it: the readings
    // of other processes walk /proc, which is not the board's cost.
    let (tasks0, self0) = (threads(me), ticks(me, true));
    let start = Instant::now();
    let mut frames = 0u32;
    while start.elapsed() < Duration::from_secs(secs) {
        let left = Duration::from_secs(secs).saturating_sub(start.elapsed());
        if src.changed_within(left).is_some() {
            frames += 1;
        }
    }
    let wall = start.elapsed().as_secs_f64();
    let (tasks1, self1) = (threads(me), ticks(me, true));
    m.retain(|p| std::path::Path::new(&format!("/proc/{p}")).exists());
    let kids1 = kids.iter().map(|p| ticks(*p, false)).sum::<u64>();
    let (m1, r1) = (
        m.iter().map(|p| ticks(*p, false)).sum::<u64>(),
        remote(&net),
    );
    eprintln!(
        "idle {wall:.0} s: this process (board threads + reaped ssh clients) {:.2} % of a core, \
         shared ssh connections ({} processes) {:.2} %, together {:.2} %; the hosts' side \
         (8 sshd with what they run) {:.2} %; {frames} boards ({:.1}/s: the hosts' probe rounds)",
        pct(self1 - self0, wall),
        m.len(),
        pct(m1.saturating_sub(m0), wall),
        pct(self1 - self0 + m1.saturating_sub(m0), wall),
        pct(r1.saturating_sub(r0), wall),
        frames as f64 / wall
    );
    let kinds = by_kind(&tasks0, &tasks1);
    let (us, woke) = kinds.values().fold((0, 0), |(a, b), (u, w)| (a + u, b + w));
    eprintln!(
        "  this process's threads: {:.3} % of a core (on-CPU time), {:.0} wakeups a minute; by \
         thread (µs on a CPU, voluntary switches): {kinds:?}; the {} live ssh clients (streams): \
         {:.2} %",
        us as f64 / 1e6 / wall * 100.0,
        woke as f64 * 60.0 / wall,
        kids.len(),
        pct(kids1.saturating_sub(kids0), wall)
    );
    // One frame: 256 remote rows merged into the sidebar's snapshot (what a change costs here,
    // whatever the number of hosts that did not change).
    let n = 200;
    let t = Instant::now();
    for _ in 0..n {
        std::hint::black_box(src.next_snapshot());
    }
    eprintln!(
        "one frame's merge of {} rows: {:.0} µs",
        HOSTS * WORKERS,
        t.elapsed().as_secs_f64() * 1e6 / n as f64
    );
}
