//! Benchmark (ignored by default): the real `intercom-pane monitor` with 64 configured workers,
//! each live in its own tmux session (a process named `pi`), 32 observation logs of 3 MiB and a
//! report per worker, probing closed loopback ports:
//! CPU use over 60 s of idle running (from /proc/<pid>/stat) and peak RSS (VmHWM).
//!
//! Run: `cargo test --release --test bench monitor_bench -- --ignored --nocapture`
//! (`MONITOR_BENCH_SECS` shortens the measured window; `MONITOR_BENCH_NO_ALERTS=1` runs it
//! without alerts and the status line.)
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_support;

use std::time::Duration;

use mux_support::{fake_pi, wait_for, TmuxServer};
use serde_json::json;

const WORKERS: usize = 64;

/// (own utime + stime, reaped children's cutime + cstime) in clock ticks.
fn stat_ticks(pid: i32) -> (u64, u64) {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = &s[s.rfind(')').unwrap() + 2..];
    let f: Vec<u64> = after
        .split(' ')
        .map(|x| x.parse::<u64>().unwrap_or(0))
        .collect();
    // Fields 14..17 (utime, stime, cutime, cstime) are at 11..14 counting from the state field.
    (f[11] + f[12], f[13] + f[14])
}

fn vm_hwm_kib(pid: i32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0)
}

/// What runs in each worker's pane: its argv from the worker's session id and the sessions
/// folder.
type PaneArgv<'a> = dyn Fn(&str, &std::path::Path) -> Vec<String> + 'a;

#[test]
#[ignore = "a benchmark: run by hand in release, one module at a time (docs/benchmarks.md)"]
fn monitor_idle_cpu_and_rss_with_64_workers() {
    // `sleep` named `pi`: the pi check refuses it, so each pass walks every pane's tree.
    let bin = tempfile::tempdir().unwrap();
    let pi = fake_pi(bin.path()).display().to_string();
    run_bench("a `sleep` named pi", &|_, _| {
        vec![pi.clone(), "3600".into()]
    });
}

/// The common case: every pane runs a process the pi check accepts (a JavaScript runtime running
/// pi's entry script under the name `pi`, as pi 1.6.0 titles itself, started as the README's
/// setup starts workers: `pi --session-id <id>`), so each pass also works out where each pi
/// writes its session.
#[test]
#[ignore = "a benchmark: run by hand in release, one module at a time (docs/benchmarks.md)"]
fn monitor_idle_cpu_with_64_pi_processes() {
    let bin = tempfile::tempdir().unwrap();
    // A JavaScript runtime's name (a link of bash) running a script at pi's entry path.
    let node = mux_support::program_named("/bin/bash", &bin.path().join("node"));
    let cli = bin
        .path()
        .join("lib/node_modules/@earendil-works/pi-coding-agent/dist/cli.js");
    std::fs::create_dir_all(cli.parent().unwrap()).unwrap();
    std::fs::write(&cli, "sleep 3600\n").unwrap();
    let (node, cli) = (node.display().to_string(), cli.display().to_string());
    run_bench("a process the pi check accepts", &|id, sessions| {
        [
            "bash",
            "-c",
            "exec -a pi \"$@\"",
            "pi",
            &node,
            &cli,
            "--session-dir",
        ]
        .iter()
        .map(|a| a.to_string())
        .chain([
            sessions.display().to_string(),
            "--session-id".into(),
            id.into(),
        ])
        .collect()
    });
}

fn run_bench(what: &str, pane_argv: &PaneArgv<'_>) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    let sessions = tmp.path().join("sessions");
    let data = tmp.path().join("data");
    for d in [&root.join(".pi-intercom"), &sessions, &data] {
        std::fs::create_dir_all(d).unwrap();
    }
    let mut agents = vec![
        json!({"sessionId": "coord", "name": "Coordinator", "coordinator": true,
        "description": "C.", "port": 1, "projectDirectory": "."}),
    ];
    // Closed ports: bind then drop so nothing listens there.
    let ports: Vec<u16> = (0..WORKERS)
        .map(|_| {
            std::net::TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port()
        })
        .collect();
    for (i, port) in ports.iter().enumerate() {
        let id = format!("01a2f000-0000-7000-8000-{i:012}");
        agents.push(
            json!({"sessionId": id, "name": format!("w{i}"), "coordinator": false,
            "description": "Works.", "port": port, "projectDirectory": "."}),
        );
        let body = [
            json!({"type":"session","version":3,"id":id,"timestamp":"2026-11-29T23:00:00.000Z","cwd":"/w"}),
            json!({"type":"message","id":"a1","parentId":null,"timestamp":"2026-11-29T23:00:01.000Z",
                "message":{"role":"user","content":"Do the thing."}}),
            json!({"type":"message","id":"a2","parentId":"a1","timestamp":"2026-11-29T23:00:02.000Z",
                "message":{"role":"assistant","content":[{"type":"text","text":"Input needed: which?"}],
                "provider":"p","model":"m","stopReason":"stop"}}),
        ]
        .iter()
        .map(|l| format!("{l}\n"))
        .collect::<String>();
        std::fs::write(
            sessions.join(format!("2026-11-29T23-00-00-000Z_{id}.jsonl")),
            body,
        )
        .unwrap();
    }
    std::fs::write(
        root.join(".pi-intercom/config.json"),
        json!({"version": 1, "agents": agents}).to_string(),
    )
    .unwrap();
    // The observation logs a busy Intercom root has (as `shared/bench/make_scale_root.py` makes
    // them): 32 writers of 3 MiB each, so every pass meets the byte budgets.
    let logs = root.join(".pi-intercom/logs");
    std::fs::create_dir_all(&logs).unwrap();
    for j in 0..32 {
        let writer = format!("00000000-0000-0000-0000-{:012x}", 0x100000 + j);
        let rec = json!({"version": 1, "timestamp": "2026-11-29T23:00:02.000Z", "writerId": writer,
            "sessionId": format!("01a2f000-0000-7000-8000-{:012}", j % WORKERS),
            "event": "host.activity", "busy": true, "phase": "tool", "detail": "reading_files",
            "outcome": "started"})
        .to_string();
        let n = (3 << 20) / (rec.len() + 1);
        std::fs::write(
            logs.join(format!("writer-{writer}.jsonl")),
            format!("{rec}\n").repeat(n),
        )
        .unwrap();
    }
    // A report per worker, as a busy root has them (read by every pass).
    let reports = root.join(".pi-intercom/reports");
    std::fs::create_dir_all(&reports).unwrap();
    for i in 0..WORKERS {
        let id = format!("01a2f000-0000-7000-8000-{i:012}");
        let rep = json!({"version": 1, "sessionId": id, "status": "blocked",
            "summary": "Waiting for the schema decision.", "updatedAt": "2026-11-29T23:00:03.000Z"});
        std::fs::write(
            reports.join(intercom_pane::seam::evidence::reports::report_file_name(
                &id,
            )),
            rep.to_string(),
        )
        .unwrap();
    }
    let sys = tmp.path().join("system.json");
    std::fs::write(&sys, json!({"dataRoot": data}).to_string()).unwrap();

    let argv = |i: usize| pane_argv(&format!("01a2f000-0000-7000-8000-{i:012}"), &sessions);
    let first = argv(0);
    let first: Vec<&str> = first.iter().map(String::as_str).collect();
    let mut server = TmuxServer::start("w0", tmp.path(), &first);
    for i in 1..WORKERS {
        let a = argv(i);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        server.new_session(&format!("w{i}"), tmp.path(), &a);
    }
    // `MONITOR_BENCH_NO_ALERTS=1`: the same run without alerts and status line (the plugin's
    // options, read by the monitor at start), to weigh what they cost.
    let alerts = std::env::var_os("MONITOR_BENCH_NO_ALERTS").is_none();
    if !alerts {
        server.tmux(&["set-option", "-g", "@intercom-pane-alerts", "off"]);
        server.tmux(&["set-option", "-g", "@intercom-pane-alert-status", "off"]);
    }
    server.start_monitor(tmp.path(), &sys, &root, &sessions, 40);
    let pid: i32 = server
        .tmux(&["list-panes", "-t", "=mon:", "-F", "#{pane_pid}"])
        .trim()
        .parse()
        .unwrap();
    wait_for(15_000, || {
        let s = server.tmux(&["capture-pane", "-p", "-t", "=mon:"]);
        s.contains("w63").then_some(())
    })
    .or_else(|| {
        wait_for(15_000, || {
            let s = server.tmux(&["capture-pane", "-p", "-t", "=mon:"]);
            s.contains("more").then_some(())
        })
    })
    .expect("monitor shows the workers");
    let screen = server.tmux(&["capture-pane", "-p", "-t", "=mon:"]);
    std::thread::sleep(Duration::from_secs(4));
    let secs: u64 = std::env::var("MONITOR_BENCH_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    let t0 = stat_ticks(pid);
    std::thread::sleep(Duration::from_secs(secs));
    let t1 = stat_ticks(pid);
    let hz = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .unwrap_or(100) as f64;
    let pct = |ticks: u64| ticks as f64 / hz / secs as f64 * 100.0;
    let (own, kids) = (t1.0 - t0.0, t1.1 - t0.1);
    println!(
        "monitor bench: {WORKERS} workers live in tmux ({what} in each pane), probes on closed \
         ports, {secs} s idle, alerts {}",
        if alerts { "on" } else { "off" }
    );
    println!("  CPU: {:.2} % of one core ({own} ticks)", pct(own));
    println!(
        "  CPU incl. the tmux clients it spawned: {:.2} % ({} ticks)",
        pct(own + kids),
        own + kids
    );
    println!(
        "  peak RSS (VmHWM): {:.1} MiB",
        vm_hwm_kib(pid) as f64 / 1024.0
    );
    println!(
        "  first screen line: {}",
        screen.lines().next().unwrap_or("")
    );
    server.kill();
}
