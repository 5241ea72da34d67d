//! Benchmark (ignored by default): the one board stream's latencies and the idle budget
//! (issue 41, docs/benchmarks.md "The board stream and the idle budget").
//!
//! Over N control-board seats live in tmux (a process the pi check accepts in each; 64 by
//! default, `STREAM_BENCH_WORKERS`) it prints:
//! - `wait` latency: a real `intercom-pane wait w<k> --state working` is started, and once its
//!   first pass is done (its live view record is written) the seat's turn starts; from that
//!   write to the process's exit (`STREAM_BENCH_SAMPLES`, 10);
//! - alert latency: a real `watch --on-alert` whose program records the time it ran; from the
//!   write that makes a seat waiting to the program's own clock reading, with `--settle-secs 0`
//!   and with `--settle-secs 1` (then the figure minus the second);
//! - idle: the real sidebar (`monitor`, no probes) over the seats, nothing changing for
//!   `STREAM_BENCH_IDLE_SECS` (60) starting 10 s after the last change: voluntary context
//!   switches of all its threads (`/proc/<pid>/task/*/status`), programs started (the sidebar
//!   runs under `strace -f --seccomp-bpf -e trace=execve,fork,vfork,clone,clone3`, which stops
//!   it only on those calls: every `execve` and process creation is in its output; threads are
//!   counted apart), CPU % of a core (the threads' own clocks, schedstat) — once as built, then
//!   once with each idle-only mechanism switched off (`INTERCOM_PANE_TEST_LIVE_OFF`).
//!
//! Run: `cargo test --release --test bench stream_bench -- --ignored --nocapture --test-threads 1`
//! (`STREAM_BENCH_PTYS=30` makes and removes 30 ptys a minute in each window, as other programs
//! would; `STREAM_BENCH_OFF="check kept pts pty-owner ages"` picks the switched-off runs, one
//! window each, runs apart by spaces and mechanisms off together by commas: `"pts pts,check"`;
//! `none` for none).

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::live_support::Fleet;
use crate::mux_support::TmuxServer;
use serde_json::json;

fn env_num(k: &str, d: u64) -> u64 {
    std::env::var(k)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(d)
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

fn iso(ms: i64) -> String {
    intercom_pane::seam::clock::format_iso(ms)
}

fn pcts(mut v: Vec<f64>) -> String {
    if v.is_empty() {
        return "no samples".into();
    }
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let p = |q: f64| v[((v.len() as f64 * q).ceil() as usize).clamp(1, v.len()) - 1];
    format!(
        "p50 {:.0} ms, p95 {:.0} ms, max {:.0} ms ({} samples)",
        p(0.5),
        p(0.95),
        v[v.len() - 1],
        v.len()
    )
}

/// Turns with now-dated lines (an alert's settle delay counts from them).
struct Turns<'a> {
    f: &'a Fleet,
    n: usize,
}

impl Turns<'_> {
    fn user(&mut self, i: usize) {
        self.n += 1;
        self.f.append(
            i,
            &json!({"type":"message","id":format!("bu{}", self.n),"parentId":"a2",
                "timestamp":iso(now_ms()),"message":{"role":"user","content":"Go on."}}),
        );
    }

    fn ask(&mut self, i: usize) {
        self.f.append(
            i,
            &json!({"type":"message","id":format!("br{}", self.n),"parentId":format!("bu{}", self.n),
                "timestamp":iso(now_ms()),"message":{"role":"assistant",
                "content":[{"type":"text","text":"Input needed: which one?"}],
                "provider":"p","model":"m","stopReason":"stop"}}),
        );
    }
}

/// The flags every command takes for the fleet.
fn flags(f: &Fleet, server: &TmuxServer) -> Vec<String> {
    let sys = f.tmp.path().join("sys.json");
    std::fs::write(&sys, json!({"dataRoot": f.data}).to_string()).unwrap();
    vec![
        "--config".into(),
        sys.display().to_string(),
        "--repo".into(),
        f.root.display().to_string(),
        "--fleet".into(),
        "none".into(),
        "--tmux-socket".into(),
        server.sock.display().to_string(),
    ]
}

fn command(f: &Fleet, args: &[String]) -> Command {
    let home = f.tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let mut c = Command::new(env!("CARGO_BIN_EXE_intercom-pane"));
    c.args(args)
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env_remove("TMUX")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    c
}

/// Wait until process `pid`'s board stream ran its first pass (its live view record).
fn await_record(f: &Fleet, pid: u32) {
    let rec = f.data.join("live").join(format!("{pid}.json"));
    crate::mux_support::wait_for(60_000, || rec.exists().then_some(()))
        .unwrap_or_else(|| panic!("process {pid} never wrote its live view record"));
}

fn wait_exit(c: &mut Child, ms: u64) -> Option<Instant> {
    let end = Instant::now() + Duration::from_millis(ms);
    while Instant::now() < end {
        if c.try_wait().unwrap().is_some() {
            return Some(Instant::now());
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let _ = c.kill();
    let _ = c.wait();
    None
}

/// `wait` latency: from the write that starts the turn to the process's exit.
fn wait_latency(f: &Fleet, server: &TmuxServer, turns: &mut Turns, samples: usize) -> Vec<f64> {
    let mut out = Vec::new();
    for s in 0..samples {
        let k = (s * 7 + 1) % f.dirs.len();
        let mut args = vec![
            "wait".to_string(),
            format!("w{k}"),
            "--state".into(),
            "working".into(),
            "--timeout-secs".into(),
            "30".into(),
        ];
        args.extend(flags(f, server));
        let mut c = command(f, &args).spawn().unwrap();
        await_record(f, c.id());
        // Its first pass showed the seat waiting; the turn starts now.
        std::thread::sleep(Duration::from_millis(200));
        let t0 = Instant::now();
        turns.user(k);
        match wait_exit(&mut c, 30_000) {
            Some(t) => out.push((t - t0).as_secs_f64() * 1000.0),
            None => println!("  wait sample {s}: w{k} never answered"),
        }
        turns.ask(k);
        std::thread::sleep(Duration::from_millis(300));
    }
    out
}

/// Alert latency with `settle` seconds: from the write that makes a seat waiting to the
/// `--on-alert` program's own clock reading, minus the settle delay.
fn alert_latency(
    f: &Fleet,
    server: &TmuxServer,
    turns: &mut Turns,
    samples: usize,
    settle: u64,
) -> Vec<f64> {
    let out = f.tmp.path().join(format!("ran-{settle}.txt"));
    let mut args = vec![
        "watch".to_string(),
        "--settle-secs".into(),
        settle.to_string(),
        "--no-desktop".into(),
        "--no-status-line".into(),
    ];
    args.extend(flags(f, server));
    args.extend([
        "--on-alert".into(),
        "/bin/sh".into(),
        "-c".into(),
        "date +%s%N >> \"$0\"".into(),
        out.display().to_string(),
    ]);
    let mut w = command(f, &args).spawn().unwrap();
    await_record(f, w.id());
    let mut lat = Vec::new();
    for s in 0..samples {
        let k = (s * 5 + 2) % f.dirs.len();
        turns.user(k);
        std::thread::sleep(Duration::from_millis(300));
        let before = std::fs::read_to_string(&out).map_or(0, |t| t.lines().count());
        let t0 = now_ms() as f64;
        turns.ask(k);
        let ran = crate::mux_support::wait_for(settle * 1000 + 30_000, || {
            let t = std::fs::read_to_string(&out).ok()?;
            let l: Vec<&str> = t.lines().collect();
            (l.len() > before).then(|| l[before].trim().parse::<f64>().ok())?
        });
        match ran {
            Some(ns) => lat.push(ns / 1e6 - t0 - settle as f64 * 1000.0),
            None => println!("  alert sample {s}: w{k} never alerted"),
        }
    }
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(w.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    );
    wait_exit(&mut w, 10_000);
    lat
}

/// Voluntary context switches of each live thread of `pid` (by thread id, with its name).
fn voluntary(pid: i32) -> std::collections::BTreeMap<String, (String, u64)> {
    crate::threads::threads(pid)
        .into_iter()
        .map(|(id, t)| (id, (t.name, t.voluntary)))
        .collect()
}

/// The switches between two readings: in all, and by thread name.
fn switches(
    a: &std::collections::BTreeMap<String, (String, u64)>,
    b: &std::collections::BTreeMap<String, (String, u64)>,
) -> (u64, Vec<String>) {
    let mut by = Vec::new();
    let mut sum = 0;
    for (id, (name, v1)) in b {
        let v0 = a.get(id).map_or(0, |x| x.1);
        let d = v1.saturating_sub(v0);
        sum += d;
        if d > 0 {
            by.push(format!("{name} {d}"));
        }
    }
    (sum, by)
}

/// Nanoseconds on a CPU of every live thread of `pid`.
fn cpu_ns(pid: i32) -> u64 {
    crate::threads::threads(pid)
        .values()
        .map(|t| t.cpu_ns)
        .sum()
}

/// Lines of the strace output that started a program or a process (threads apart).
fn started(trace: &Path) -> (usize, usize) {
    let t = std::fs::read_to_string(trace).unwrap_or_default();
    let execs = t
        .lines()
        .filter(|l| l.contains("execve(") && !l.contains("resumed"))
        .count();
    let procs = t
        .lines()
        .filter(|l| {
            (l.contains("clone(") || l.contains("clone3(") || l.contains("fork("))
                && !l.contains("CLONE_THREAD")
                && !l.contains("resumed")
        })
        .count();
    (execs, procs)
}

/// Ptys made and removed on this machine during a window (other programs' ones wake the
/// engine's pty watch): an inotify watch on `/dev/pts` opened before it, read after it.
struct PtyCount(Option<nix::sys::inotify::Inotify>);

impl PtyCount {
    fn open() -> PtyCount {
        use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify};
        let ino = Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC).ok();
        let ino = ino.filter(|i| {
            i.add_watch(
                "/dev/pts",
                AddWatchFlags::IN_CREATE | AddWatchFlags::IN_DELETE,
            )
            .is_ok()
        });
        PtyCount(ino)
    }

    /// Events since it opened (`None`: no watch); the kernel keeps up to 16,384 queued.
    fn count(&self) -> Option<usize> {
        let ino = self.0.as_ref()?;
        let mut n = 0;
        while let Ok(ev) = ino.read_events() {
            if ev.is_empty() {
                break;
            }
            n += ev.len();
        }
        Some(n)
    }
}

/// The sidebar under strace in session `mon`; its pid (strace's child).
fn start_sidebar(f: &Fleet, server: &TmuxServer, off: &str, trace: &Path) -> i32 {
    let home = f.tmp.path().join("home");
    let mut argv: Vec<String> = vec![
        "env".into(),
        format!("HOME={}", home.display()),
        format!("XDG_CONFIG_HOME={}", home.join(".config").display()),
        format!("INTERCOM_PANE_TEST_LIVE_OFF={off}"),
        "TERM=xterm-256color".into(),
        "strace".into(),
        "-f".into(),
        "--seccomp-bpf".into(),
        "-qq".into(),
        "-e".into(),
        "trace=execve,fork,vfork,clone,clone3".into(),
        "-o".into(),
        trace.display().to_string(),
        env!("CARGO_BIN_EXE_intercom-pane").into(),
        "monitor".into(),
        "--no-probe".into(),
        "--no-desktop".into(),
    ];
    argv.extend(flags(f, server));
    let a: Vec<&str> = argv.iter().map(String::as_str).collect();
    server.new_session("mon", &f.root, &a);
    let rows = (f.dirs.len() + 8).min(400).to_string();
    server.tmux(&["resize-window", "-t", "=mon:", "-x", "160", "-y", &rows]);
    let pane: i32 = server
        .tmux(&["display-message", "-p", "-t", "=mon:", "#{pane_pid}"])
        .trim()
        .parse()
        .unwrap();
    crate::mux_support::wait_for(30_000, || {
        intercom_pane::seam::proc::children_of(pane)
            .unwrap_or_default()
            .into_iter()
            .find(|c| {
                std::fs::read_to_string(format!("/proc/{c}/comm"))
                    .is_ok_and(|n| n.trim() == "intercom-pane")
            })
    })
    .expect("the sidebar runs under strace")
}

/// One idle window of the sidebar with `off` switched off; the line it prints.
fn idle(f: &Fleet, server: &TmuxServer, turns: &mut Turns, off: &str, secs: u64) -> String {
    let trace = f.tmp.path().join(format!("strace-{off}.txt"));
    let pid = start_sidebar(f, server, off, &trace);
    await_record(f, pid as u32);
    // A last change the sidebar shows, then nothing for 10 s (its alerts went out).
    turns.user(0);
    turns.ask(0);
    std::thread::sleep(Duration::from_secs(10));
    let v0 = voluntary(pid);
    let c0 = cpu_ns(pid);
    let s0 = started(&trace);
    let ptys = PtyCount::open();
    // Other programs' ptys at a known rate (`STREAM_BENCH_PTYS` a minute, each made and removed):
    // what each costs the pty watch, apart from this machine's own churn.
    let per_min = env_num("STREAM_BENCH_PTYS", 0);
    let end = Instant::now() + Duration::from_secs(secs);
    if per_min > 0 {
        let every = Duration::from_secs_f64(60.0 / per_min as f64);
        while Instant::now() + every < end {
            std::thread::sleep(every);
            drop(
                std::fs::File::options()
                    .read(true)
                    .write(true)
                    .open("/dev/ptmx"),
            );
        }
    }
    std::thread::sleep(end.saturating_duration_since(Instant::now()));
    let ptys = ptys.count();
    let v1 = voluntary(pid);
    let c1 = cpu_ns(pid);
    let s1 = started(&trace);
    server.tmux(&["kill-session", "-t", "=mon"]);
    let (n0, n1) = (v0.len(), v1.len());
    let (woke, by) = switches(&v0, &v1);
    let per_min = woke as f64 * 60.0 / secs as f64;
    let pct = c1.saturating_sub(c0) as f64 / 1e9 / secs as f64 * 100.0;
    std::thread::sleep(Duration::from_secs(1));
    format!(
        "  idle {secs} s, off: {:<6} wakeups {per_min:.1}/min (threads {n0}→{n1}), programs \
         started {} (processes {}), CPU {pct:.3} % of a core; switches by thread {by:?}; \
         ptys made or removed on the machine meanwhile {ptys:?}",
        if off.is_empty() { "none" } else { off },
        s1.0 - s0.0,
        s1.1 - s0.1
    )
}

#[test]
#[ignore = "a benchmark: run by hand in release, one module at a time (docs/benchmarks.md)"]
fn stream_bench() {
    let workers = env_num("STREAM_BENCH_WORKERS", 64) as usize;
    let samples = env_num("STREAM_BENCH_SAMPLES", 10) as usize;
    let secs = env_num("STREAM_BENCH_IDLE_SECS", 60);
    let offs = std::env::var("STREAM_BENCH_OFF").unwrap_or_else(|_| "check kept pts ages".into());
    let f = Fleet::layout(workers);
    let server = f.tmux(workers);
    let mut turns = Turns { f: &f, n: 0 };
    println!(
        "stream bench: {workers} control-board seats live in tmux; load average {}",
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
    let w = wait_latency(&f, &server, &mut turns, samples);
    println!("  wait: turn started → process exits: {}", pcts(w));
    for settle in [0, 1] {
        let a = alert_latency(&f, &server, &mut turns, samples, settle);
        println!(
            "  alert (--settle-secs {settle}): seat waiting → hook ran, minus the delay: {}",
            pcts(a)
        );
    }
    println!("{}", idle(&f, &server, &mut turns, "", secs));
    // Runs apart by spaces; mechanisms switched off together by commas.
    for off in offs.split(' ').filter(|o| !o.is_empty() && *o != "none") {
        println!("{}", idle(&f, &server, &mut turns, off, secs));
    }
}
