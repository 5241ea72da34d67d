//! Benchmark (ignored by default): the live sidebar, end to end. The real `intercom-pane monitor`
//! runs in a tmux pane over N control-board seats (a checkout's `.pi/state/w<i>/sessions`), each
//! live in its own tmux session running a process the pi check accepts; the frame times come
//! from the monitor's own `live_frame` log events (`INTERCOM_PANE_LOG`), written right after the
//! frame that shows a seat's new state is drawn.
//!
//! It prints (p50 / p95 / max, in ms, from the write or the kill to the frame):
//! - a complete transcript line appended (the seat flips between waiting and working);
//! - a worker's pi exits (its process group killed; its pane and session close): `offline`;
//! - a worker's tmux session closed (`kill-session`), and opened again (`new-session`);
//! - every worker changing at once: the last seat's frame;
//! - idle: CPU of the monitor and of everything it started (its tmux control client) over
//!   `LIVE_BENCH_IDLE_SECS` (120), the passes it ran and why, processes started, peak RSS.
//!
//! Run: `cargo test --release --test bench live_bench -- --ignored --nocapture --test-threads 1`
//! (`LIVE_BENCH_WORKERS`: 64 by default, 255 for the large case; `LIVE_BENCH_SAMPLES`: 40.)

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::live_support::{sid, Fleet};
use crate::mux_support::TmuxServer;
use intercom_pane::seam::clock::{parse_iso, Clock, Ms, SystemClock};
use serde_json::Value;

fn env_num(k: &str, d: u64) -> u64 {
    std::env::var(k)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(d)
}

fn now() -> Ms {
    SystemClock.now_ms()
}

/// The monitor's log, read as it grows (a rotation starts it over).
struct Log {
    path: PathBuf,
    offset: u64,
    /// Frame time of each (seat, state), newest.
    frames: HashMap<(String, String), Vec<Ms>>,
    passes: Vec<Value>,
}

impl Log {
    fn read(&mut self) {
        let Ok(bytes) = std::fs::read(&self.path) else {
            return;
        };
        if (bytes.len() as u64) < self.offset {
            self.offset = 0;
        }
        let new = &bytes[self.offset as usize..];
        let Some(end) = new.iter().rposition(|&b| b == b'\n') else {
            return;
        };
        for line in new[..=end].split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            let Ok(v) = serde_json::from_slice::<Value>(line) else {
                continue;
            };
            let at = v["at"].as_str().and_then(parse_iso).unwrap_or(0);
            match v["event"].as_str() {
                Some("live_frame") => {
                    for c in v["changed"].as_array().into_iter().flatten() {
                        let id = c["id"].as_str().unwrap_or("").to_string();
                        let st = c["state"].as_str().unwrap_or("").to_string();
                        self.frames.entry((id, st)).or_default().push(at);
                    }
                }
                Some("live_pass") => self.passes.push(v),
                _ => {}
            }
        }
        self.offset += end as u64 + 1;
    }

    /// The first frame at or after `since` showing worker `k` in `state`.
    fn frame(&self, k: usize, state: &str, since: Ms) -> Option<Ms> {
        let (id, key) = (sid(k), format!("/w{k}"));
        self.frames
            .iter()
            .filter(|((i, st), _)| st == state && (*i == id || i.ends_with(&key)))
            .flat_map(|(_, ts)| ts.iter().copied())
            .filter(|&t| t >= since)
            .min()
    }

    /// Wait (bounded) for that frame; its latency from `since`.
    fn wait(&mut self, k: usize, state: &str, since: Ms) -> Option<Ms> {
        let end = Instant::now() + Duration::from_secs(15);
        loop {
            self.read();
            if let Some(t) = self.frame(k, state, since) {
                return Some(t - since);
            }
            if Instant::now() >= end {
                return None;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// (own utime + stime, reaped children's) in clock ticks.
fn ticks(pid: i32) -> (u64, u64) {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let Some(i) = s.rfind(')') else { return (0, 0) };
    let f: Vec<u64> = s[i + 2..]
        .split(' ')
        .map(|x| x.parse::<u64>().unwrap_or(0))
        .collect();
    (f[11] + f[12], f[13] + f[14])
}

fn children(pid: i32) -> Vec<i32> {
    intercom_pane::seam::proc::children_of(pid).unwrap_or_default()
}

/// CPU ticks of `pid` and every live descendant, plus what they reaped.
fn tree_ticks(pid: i32) -> u64 {
    let (own, reaped) = ticks(pid);
    own + reaped + children(pid).into_iter().map(tree_ticks).sum::<u64>()
}

/// Nanoseconds on a CPU of every live thread of `pid` and of its live descendants
/// (`/proc/<pid>/task/*/schedstat`, exact where ticks are 10 ms steps); threads and children
/// that ended are not in it, so the idle figure also says how many processes started (none).
fn tree_cpu_ns(pid: i32) -> u64 {
    let own: u64 = crate::threads::threads(pid)
        .values()
        .map(|t| t.cpu_ns)
        .sum();
    own + children(pid).into_iter().map(tree_cpu_ns).sum::<u64>()
}

/// Nanoseconds on a CPU of each live thread of `pid`, by thread name.
fn threads_cpu_ns(pid: i32) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for t in crate::threads::threads(pid).into_values() {
        *out.entry(t.name).or_insert(0) += t.cpu_ns;
    }
    out
}

fn status_kib(pid: i32, key: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0)
}

fn pcts(mut v: Vec<Ms>) -> String {
    if v.is_empty() {
        return "no samples".into();
    }
    v.sort_unstable();
    let p = |q: f64| v[((v.len() as f64 * q).ceil() as usize).clamp(1, v.len()) - 1];
    format!(
        "p50 {} ms, p95 {} ms, max {} ms ({} samples)",
        p(0.5),
        p(0.95),
        v[v.len() - 1],
        v.len()
    )
}

fn pane_pid(server: &TmuxServer, session: &str) -> i32 {
    server
        .tmux(&[
            "display-message",
            "-p",
            "-t",
            &format!("={session}:"),
            "#{pane_pid}",
        ])
        .trim()
        .parse()
        .unwrap()
}

/// The file the tmux wrapper appends one line to per run.
fn tmux_runs(f: &Fleet) -> PathBuf {
    f.tmp.path().join("tmux-runs.txt")
}

fn count_lines(p: &Path) -> usize {
    std::fs::read_to_string(p).map_or(0, |s| s.lines().count())
}

fn start_monitor(f: &Fleet, server: &TmuxServer, rows: usize, log: &Path) -> i32 {
    let sys = f.tmp.path().join("sys.json");
    std::fs::write(&sys, serde_json::json!({"dataRoot": f.data}).to_string()).unwrap();
    let home = f.tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    // Every tmux the monitor runs goes through a wrapper that counts it (a sampled process
    // list misses a `tmux` that lives a few milliseconds).
    let wrap = f.tmp.path().join("wrap");
    std::fs::create_dir_all(&wrap).unwrap();
    let real = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join("tmux"))
        .find(|p| p.is_file())
        .expect("tmux on PATH");
    let script = wrap.join("tmux");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
            tmux_runs(f).display(),
            real.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!(
        "PATH={}:{}",
        wrap.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let argv = [
        "env".to_string(),
        path,
        format!("INTERCOM_PANE_LOG={}", log.display()),
        format!("HOME={}", home.display()),
        env!("CARGO_BIN_EXE_intercom-pane").to_string(),
        "monitor".into(),
        "--config".into(),
        sys.display().to_string(),
        "--repo".into(),
        f.root.display().to_string(),
        "--fleet".into(),
        "none".into(),
        "--tmux-socket".into(),
        server.sock.display().to_string(),
    ];
    let a: Vec<&str> = argv.iter().map(String::as_str).collect();
    server.new_session("mon", &f.root, &a);
    let h = (rows + 8).min(400).to_string();
    server.tmux(&["resize-window", "-t", "=mon:", "-x", "160", "-y", &h]);
    pane_pid(server, "mon")
}

#[test]
#[ignore = "a benchmark: run by hand in release, one module at a time (docs/benchmarks.md)"]
fn live_bench() {
    let workers = env_num("LIVE_BENCH_WORKERS", 64) as usize;
    let samples = env_num("LIVE_BENCH_SAMPLES", 40) as usize;
    let idle_secs = env_num("LIVE_BENCH_IDLE_SECS", 120);
    let f = Fleet::layout(workers);
    let mut server = f.tmux(workers);
    let log_path = f.tmp.path().join("monitor.log");
    let mon = start_monitor(&f, &server, workers, &log_path);
    let mut log = Log {
        path: log_path,
        offset: 0,
        frames: HashMap::new(),
        passes: Vec::new(),
    };
    // Every seat shown waiting first.
    for k in 0..workers {
        assert!(
            log.wait(k, "waiting", 0).is_some(),
            "w{k} never shown waiting"
        );
    }
    println!(
        "live bench: {workers} control-board seats live in tmux (a process the pi check \
         accepts in each), the monitor in a {}-row pane; load average {}",
        (workers + 8).min(400),
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );

    // 1. A transcript line appended → its frame.
    let mut turn: Vec<usize> = vec![0; workers];
    let mut working = vec![false; workers];
    let mut lat = Vec::new();
    for s in 0..samples {
        let k = (s * 7 + 3) % workers;
        let t0 = now();
        let want = if working[k] {
            f.ask(k, turn[k]);
            "waiting"
        } else {
            turn[k] += 1;
            f.start_turn(k, turn[k]);
            "working"
        };
        working[k] = !working[k];
        match log.wait(k, want, t0) {
            Some(ms) => lat.push(ms),
            None => println!("  sample {s}: w{k} never shown {want}"),
        }
        std::thread::sleep(Duration::from_millis(150));
    }
    println!("  transcript line appended → frame: {}", pcts(lat));

    // 2. Every worker changing at once → the last seat's frame.
    let mut all = Vec::new();
    for round in 0..3 {
        std::thread::sleep(Duration::from_millis(500));
        let t0 = now();
        let mut want = Vec::new();
        for k in 0..workers {
            if working[k] {
                f.ask(k, turn[k]);
                want.push("waiting");
            } else {
                turn[k] += 1;
                f.start_turn(k, turn[k]);
                want.push("working");
            }
            working[k] = !working[k];
        }
        let wrote = now() - t0;
        let last = (0..workers)
            .map(|k| log.wait(k, want[k], t0).unwrap_or(i64::MAX))
            .max()
            .unwrap_or(0);
        println!(
            "  round {round}: all {workers} changed (writes took {wrote} ms) → last frame after {last} ms"
        );
        all.push(last);
    }
    println!("  all at once → every new state shown: {}", pcts(all));

    // 3. A pi exits (its process group killed: pane and session close) → offline; then the
    //    session opened again → shown again; and a session closed with kill-session.
    let (mut exit, mut opened, mut closed) = (Vec::new(), Vec::new(), Vec::new());
    for s in 0..(samples / 4).max(3) {
        let k = (s * 11 + 5) % workers;
        let pid = pane_pid(&server, &format!("w{k}"));
        let t0 = now();
        nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        )
        .unwrap();
        match log.wait(k, "offline", t0) {
            Some(ms) => exit.push(ms),
            None => println!("  w{k}: never shown offline after its pi exited"),
        }
        let want = if working[k] { "working" } else { "waiting" };
        let argv = f.pi_argv(k);
        let a: Vec<&str> = argv.iter().map(String::as_str).collect();
        let t0 = now();
        server.new_session(&format!("w{k}"), f.tmp.path(), &a);
        match log.wait(k, want, t0) {
            Some(ms) => opened.push(ms),
            None => println!("  w{k}: never shown {want} after its session opened"),
        }
        std::thread::sleep(Duration::from_millis(300));
        let t0 = now();
        server.tmux(&["kill-session", "-t", &format!("=w{k}")]);
        match log.wait(k, "offline", t0) {
            Some(ms) => closed.push(ms),
            None => println!("  w{k}: never shown offline after kill-session"),
        }
        server.new_session(&format!("w{k}"), f.tmp.path(), &a);
        log.wait(k, want, now());
        std::thread::sleep(Duration::from_millis(200));
    }
    println!("  pi exits → offline: {}", pcts(exit));
    println!("  session opened (new-session) → shown: {}", pcts(opened));
    println!(
        "  session closed (kill-session) → offline: {}",
        pcts(closed)
    );

    // 4. Idle: after the alerts for the last changes went out (they wait 5 s to settle).
    std::thread::sleep(Duration::from_secs(10));
    log.read();
    let passes_before = log.passes.len();
    let runs_before = count_lines(&tmux_runs(&f));
    let kids0: BTreeSet<i32> = children(mon).into_iter().collect();
    let t0 = tree_ticks(mon);
    let ns0 = tree_cpu_ns(mon);
    let threads0 = threads_cpu_ns(mon);
    // This machine's memory after the same idle window, for reading the figure: a process
    // that wakes touches memory left alone since its last wake (measured slow and very
    // variable in virtual machines).
    let mut probe = vec![1u8; 8 << 20];
    let mut seen = kids0.clone();
    let end = Instant::now() + Duration::from_secs(idle_secs);
    while Instant::now() < end {
        seen.extend(children(mon));
        std::thread::sleep(Duration::from_millis(100));
    }
    let t1 = tree_ticks(mon);
    let ns1 = tree_cpu_ns(mon);
    let read_all = |v: &mut Vec<u8>| {
        let t = Instant::now();
        let sum = v.iter().step_by(64).map(|&b| u64::from(b)).sum::<u64>();
        v[0] = v[0].wrapping_add(sum as u8);
        t.elapsed().as_secs_f64() * 1e3
    };
    let (cold, hot) = (read_all(&mut probe), read_all(&mut probe));
    println!(
        "  this machine: 8 MiB read after the idle window untouched {cold:.1} ms, at once again {hot:.1} ms"
    );
    let threads: Vec<String> = threads_cpu_ns(mon)
        .into_iter()
        .map(|(name, ns)| {
            let was = threads0.get(&name).copied().unwrap_or(0);
            format!("{name} {:.1} ms", ns.saturating_sub(was) as f64 / 1e6)
        })
        .collect();
    let runs = std::fs::read_to_string(tmux_runs(&f)).unwrap_or_default();
    let idle_runs: Vec<&str> = runs.lines().skip(runs_before).collect();
    log.read();
    let hz = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .unwrap_or(100) as f64;
    let pct = (t1 - t0) as f64 / hz / idle_secs as f64 * 100.0;
    // The engine's passes; a timer's pass whose check found everything as it was ran no scan.
    let idle_passes: Vec<String> = log.passes[passes_before..]
        .iter()
        .map(|p| match p["check"]["same"].as_bool() {
            Some(same) => format!(
                "{} ms {} (check: same={same}, µs {})",
                p["ms"], p["why"], p["check"]["us"]
            ),
            None => format!("{} ms {}", p["ms"], p["why"]),
        })
        .collect();
    println!(
        "  idle {idle_secs} s: CPU of the monitor and its children {pct:.3} % of a core ({} ticks; \
         {:.3} % by the threads' own clocks, {:.1} ms); \
         by thread {threads:?}; \
         processes started {} (children seen {:?}; tmux runs {} {:?}); passes {} {:?}; peak RSS {:.1} MiB",
        t1 - t0,
        ns1.saturating_sub(ns0) as f64 / 1e9 / idle_secs as f64 * 100.0,
        ns1.saturating_sub(ns0) as f64 / 1e6,
        seen.len() - kids0.len(),
        seen,
        idle_runs.len(),
        idle_runs.iter().map(|l| l.split_whitespace().take(6).collect::<Vec<_>>().join(" ")).collect::<Vec<_>>(),
        idle_passes.len(),
        idle_passes,
        status_kib(mon, "VmHWM:") as f64 / 1024.0
    );
    server.kill();
}

/// The engine alone (no sidebar): how long from one appended line to the end of the pass it
/// woke, over `LIVE_BENCH_WORKERS` (255) seats live in tmux. Run it under `perf record -p` to
/// see where a pass goes.
#[test]
#[ignore = "a benchmark: run by hand in release, one module at a time (docs/benchmarks.md)"]
fn live_pass_profile() {
    let workers = env_num("LIVE_BENCH_WORKERS", 255) as usize;
    let f = Fleet::layout(workers);
    let server = f.tmux(workers);
    let mut e = crate::live_support::engine(
        f.opts(&server.sock),
        intercom_pane::seam::live::Settings::default(),
    );
    crate::live_support::until(&mut e, |s| s.records.len() >= workers);
    std::thread::sleep(Duration::from_secs(3));
    let mut times = Vec::new();
    for n in 1..=env_num("LIVE_BENCH_SAMPLES", 30) as usize {
        f.start_turn(n % workers, n);
        let t0 = Instant::now();
        crate::live_support::until(&mut e, |_| true);
        times.push(t0.elapsed().as_millis() as i64);
    }
    println!("pass after one line, {workers} seats: {}", pcts(times));
}
