//! Scan benchmark (issue 2): one full pass with 256 configured workers whose pi session files are
//! 1 GiB each (sparse, valid tail), 32 observation logs of 3 MiB and 256 reports; the same with
//! 1 MiB session files; median wall time, the ratio, and peak RSS.
//!
//! Then tokens and cost (issue 25): the sidebar's passes (one `ScanMemory`) with worker 0's
//! transcript dense (every line a real assistant message with its usage) at 1 MiB and at
//! 1 GiB: how many passes the first count takes and what they cost, then the steady pass.
//!
//! Run: `cargo bench --bench scan` (prints figures; no assertions, targets are in the issue).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::json;
use sha2::{Digest, Sha256};

use intercom_pane::seam::clock::{format_iso, FixedClock};
use intercom_pane::seam::liveness::LivenessMode;
use intercom_pane::seam::scan::{self, RootChoice, ScanOptions};

// 255 workers + the coordinator = 256 agents, the config limit.
const WORKERS: usize = 255;
const PASSES: usize = 31;
const NOW: i64 = 1_795_994_400_000; // 2026-11-29T23:20:00Z

fn session_tail(id: &str, i: usize) -> String {
    let t = |s: i64| format_iso(NOW - 60_000 + s * 1000);
    let mut lines = vec![
        json!({"type":"model_change","id":"a0000001","parentId":null,"timestamp":t(0),"provider":"fake","modelId":"fake-model"}),
        json!({"type":"message","id":"a0000002","parentId":"a0000001","timestamp":t(1),
            "message":{"role":"user","content":[{"type":"text","text":format!("Task {i} for {id}")}]}}),
        json!({"type":"message","id":"a0000003","parentId":"a0000002","timestamp":t(2),
            "message":{"role":"assistant","content":[{"type":"text","text":"Running."},
              {"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"ls"}}],
              "provider":"fake","model":"fake-model","stopReason":"toolUse"}}),
        json!({"type":"message","id":"a0000004","parentId":"a0000003","timestamp":t(3),
            "message":{"role":"toolResult","toolCallId":"c1","toolName":"bash",
              "content":[{"type":"text","text":"x".repeat(2000)}],"isError":false}}),
    ];
    let last = match i % 3 {
        0 => {
            json!({"role":"assistant","content":[{"type":"text","text":"Input needed: pick one."}],
            "provider":"fake","model":"fake-model","stopReason":"stop"})
        }
        1 => json!({"role":"assistant","content":[{"type":"text","text":"done"}],
            "provider":"fake","model":"fake-model","stopReason":"stop"}),
        _ => json!({"role":"assistant","content":[],"provider":"fake","model":"fake-model",
            "stopReason":"error","errorMessage":"400: no"}),
    };
    lines.push(json!({"type":"message","id":"a0000005","parentId":"a0000004","timestamp":t(4),"message":last}));
    let mut s = String::from("\n");
    for l in lines {
        s.push_str(&l.to_string());
        s.push('\n');
    }
    s
}

fn build(base: &Path, session_len: u64) -> ScanOptions {
    let root = base.join("root");
    let pi = root.join(".pi-intercom");
    let sessions = base.join("sessions").join("--bench--");
    std::fs::create_dir_all(pi.join("logs")).unwrap();
    std::fs::create_dir_all(pi.join("reports")).unwrap();
    std::fs::create_dir_all(&sessions).unwrap();
    std::fs::create_dir_all(base.join("state")).unwrap();
    let mut agents = vec![
        json!({"sessionId":"coord-0","name":"Coordinator","coordinator":true,
        "description":"Coordinates.","port":40000,"projectDirectory":"."}),
    ];
    let ids: Vec<String> = (0..WORKERS)
        .map(|i| format!("01a2f000-0000-7000-8000-{i:012}"))
        .collect();
    for (i, id) in ids.iter().enumerate() {
        agents.push(
            json!({"sessionId":id,"name":format!("worker-{i}"),"coordinator":false,
            "description":"Does work.","port":40001 + i,"projectDirectory":"."}),
        );
        // Session file: header, a hole, a valid tail at the end.
        let f =
            File::create(sessions.join(format!("2026-11-29T23-00-00-000Z_{id}.jsonl"))).unwrap();
        let header = json!({"type":"session","version":3,"id":id,"timestamp":format_iso(NOW - 3_600_000),"cwd":"/work/bench"});
        f.write_all_at(format!("{header}\n").as_bytes(), 0).unwrap();
        let tail = session_tail(id, i);
        f.set_len(session_len).unwrap();
        f.write_all_at(tail.as_bytes(), session_len - tail.len() as u64)
            .unwrap();
        // Report.
        let name: String = Sha256::digest(id.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let rep = json!({"version":1,"sessionId":id,"status":"blocked","summary":"Waiting on a decision.","updatedAt":format_iso(NOW - 5000)});
        std::fs::write(
            pi.join("reports").join(format!("{name}.json")),
            format!("{rep}\n"),
        )
        .unwrap();
    }
    let cfg = json!({"version":1,"multiplexer":"tmux","agents":agents});
    std::fs::write(
        pi.join("config.json"),
        serde_json::to_string_pretty(&cfg).unwrap(),
    )
    .unwrap();
    // 32 logs of 3 MiB each.
    for w in 0..32 {
        let writer = format!("0190aaaa-0000-7000-8000-{w:012}");
        let mut body = String::with_capacity(3 << 20);
        let mut n = 0;
        while body.len() < 3 << 20 {
            let id = &ids[n % WORKERS];
            let line = json!({"version":1,"timestamp":format_iso(NOW - 600_000 + n as i64),"writerId":writer,
                "sessionId":id,"event":"host.activity","busy":true,"phase":"tool","detail":"running_command","outcome":"started"});
            body.push_str(&line.to_string());
            body.push('\n');
            n += 1;
        }
        std::fs::write(pi.join("logs").join(format!("writer-{writer}.jsonl")), body).unwrap();
    }
    ScanOptions {
        data_root: base.join("state"),
        root: RootChoice::Exact(root),
        repo: None,
        fleet: None,
        session_dirs: vec![base.join("sessions")],
        liveness: LivenessMode::AssumeAlive,
        tmux_socket: None,
        usage_reads: intercom_pane::seam::evidence::sessions::usage::ONE_SHOT_BUDGET,
        kept_panes: None,
    }
}

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

/// One real `intercom-pane scan` process (writes board files too): wall time and max RSS (KiB).
// wait4 (below) reaps the child; clippy cannot see that.
#[allow(clippy::zombie_processes)]
fn cli_pass(opts: &ScanOptions) -> (f64, i64) {
    let RootChoice::Exact(root) = &opts.root else {
        unreachable!()
    };
    let cfg = opts.data_root.join("system.json");
    std::fs::write(&cfg, json!({"dataRoot": opts.data_root}).to_string()).unwrap();
    let t = Instant::now();
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_intercom-pane"))
        .args([
            "scan",
            "--liveness",
            "assume-alive",
            "--fleet",
            "none",
            "--config",
        ])
        .arg(&cfg)
        .arg("--root")
        .arg(root)
        .arg("--sessions-dir")
        .arg(&opts.session_dirs[0])
        .arg("--repo")
        .arg(&opts.data_root)
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("spawn intercom-pane");
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: wait4 on our own child with valid out-pointers.
    unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    (t.elapsed().as_secs_f64() * 1000.0, usage.ru_maxrss)
}

/// CPU time this process has used, in ms (robust where the machine is shared: waiting for a
/// core does not count).
fn cpu_ms() -> f64 {
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: a valid out-pointer for the calling process's CPU clock.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 * 1000.0 + ts.tv_nsec as f64 / 1e6
}

fn median_ms(opts: &ScanOptions) -> (f64, f64, usize, usize) {
    let clock = FixedClock(NOW);
    let mut times = Vec::new();
    let mut cpu = Vec::new();
    let mut rows = 0;
    let mut waiting = 0;
    for _ in 0..PASSES {
        let t = Instant::now();
        let c = cpu_ms();
        // Read as a one-shot `scan` reads (no memory): what the sidebar remembers between passes
        // would otherwise hide the cost this bench compares (files settle after 2 s).
        let s = scan::run(opts, &clock, None, None).expect("scan");
        assert!(
            !s.records.is_empty(),
            "bench roster did not load: {:?} {:?}",
            s.snapshot.roster,
            s.snapshot.errors
        );
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        cpu.push(cpu_ms() - c);
        rows = s.records.len();
        waiting = s
            .records
            .iter()
            .filter(|r| r.state == intercom_pane::seam::states::BoardState::Waiting)
            .count();
    }
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    cpu.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (times[times.len() / 2], cpu[cpu.len() / 2], rows, waiting)
}

/// Rewrite worker 0's session file as a dense transcript of `len` bytes: the header, assistant
/// messages with usage (1 input token each, so the sum counts the lines), then the usual tail.
fn densify(opts: &ScanOptions, len: u64) -> u64 {
    let dir = opts.session_dirs[0].join("--bench--");
    let id = "01a2f000-0000-7000-8000-000000000000";
    let path = dir.join(format!("2026-11-29T23-00-00-000Z_{id}.jsonl"));
    let header = json!({"type":"session","version":3,"id":id,"timestamp":format_iso(NOW - 3_600_000),"cwd":"/work/bench"});
    let line = json!({"type":"message","id":"d0000001","parentId":null,"timestamp":format_iso(NOW - 3_000_000),
        "message":{"role":"assistant","content":[{"type":"text","text":"x".repeat(1800)}],
        "provider":"fake","model":"fake-model","usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,
        "totalTokens":3,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0.001}},"stopReason":"stop"}})
    .to_string()
        + "\n";
    let tail = session_tail(id, 0);
    let mut body = format!("{header}\n").into_bytes();
    let block: Vec<u8> = line.repeat(512).into_bytes();
    let f = File::create(&path).unwrap();
    use std::io::Write;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
    w.write_all(&body).unwrap();
    let mut written = body.len() as u64;
    let mut lines = 0u64;
    while written + (block.len() as u64) + (tail.len() as u64) <= len {
        w.write_all(&block).unwrap();
        written += block.len() as u64;
        lines += 512;
    }
    while written + (line.len() as u64) + (tail.len() as u64) <= len {
        w.write_all(line.as_bytes()).unwrap();
        written += line.len() as u64;
        lines += 1;
    }
    body.clear();
    w.write_all(tail.as_bytes()).unwrap();
    w.flush().unwrap();
    lines
}

/// The sidebar's passes over `opts` with one memory: (passes until every byte is counted, CPU
/// ms of each of them, median CPU ms of 31 passes after that, calls counted).
fn usage_passes(opts: &ScanOptions) -> (usize, Vec<f64>, f64, u64) {
    let clock = FixedClock(NOW);
    let memory = intercom_pane::seam::evidence::ScanMemory::new();
    let mut first = Vec::new();
    let mut calls = 0;
    for _ in 0..1000 {
        let c = cpu_ms();
        let s = scan::run(opts, &clock, None, Some(&memory)).expect("scan");
        first.push(cpu_ms() - c);
        calls = s.snapshot.usage.usage.calls;
        if !s.snapshot.usage.at_least {
            break;
        }
    }
    // Every file settled (2 s), so the steady passes remember what did not change.
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let mut steady = Vec::new();
    for _ in 0..PASSES {
        let c = cpu_ms();
        let _ = scan::run(opts, &clock, None, Some(&memory)).expect("scan");
        steady.push(cpu_ms() - c);
    }
    steady.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (first.len(), first, steady[steady.len() / 2], calls)
}

fn usage_bench(small: &ScanOptions, big: &ScanOptions) {
    let lines_small = densify(small, 1 << 20);
    let lines_big = densify(big, 1 << 30);
    // Warm the page cache the same way for both.
    let _ = usage_passes(small);
    let _ = usage_passes(big);
    println!("tokens and cost, the sidebar's passes (one memory), worker 0 dense:");
    for (label, opts, lines) in [("1 MiB", small, lines_small), ("1 GiB", big, lines_big)] {
        let (n, first, steady, calls) = usage_passes(opts);
        let catch_up: f64 = first.iter().sum();
        println!(
            "  {label}: counted in {n} passes ({catch_up:.0} ms CPU in all, first {:.1} ms, most {:.1} ms), {calls} calls ({lines} dense lines); then median {steady:.2} ms CPU a pass",
            first[0],
            first.iter().cloned().fold(0.0, f64::max)
        );
    }
}

fn main() {
    let base = std::env::temp_dir().join(format!("intercom-pane-bench-{}", std::process::id()));
    let big: PathBuf = base.join("big");
    let small: PathBuf = base.join("small");
    let opts_big = build(&big, 1 << 30);
    let opts_small = build(&small, 1 << 20);
    // Warm the page cache the same way for both.
    let _ = median_ms(&opts_small);
    let _ = median_ms(&opts_big);
    let (small_ms, small_cpu, rows_s, wait_s) = median_ms(&opts_small);
    let (big_ms, big_cpu, rows_b, wait_b) = median_ms(&opts_big);
    println!(
        "scan bench: {WORKERS} workers, 32 logs x 3 MiB, {WORKERS} reports, {PASSES} passes each"
    );
    println!(
        "  1 MiB session files: median {small_ms:.1} ms, CPU {small_cpu:.1} ms ({rows_s} rows, {wait_s} waiting)"
    );
    println!(
        "  1 GiB session files: median {big_ms:.1} ms, CPU {big_cpu:.1} ms ({rows_b} rows, {wait_b} waiting)"
    );
    println!("  ratio 1 GiB / 1 MiB: {:.2}", big_ms / small_ms);
    println!(
        "  peak RSS of this bench process (setup included): {:.1} MiB",
        peak_rss_kib() as f64 / 1024.0
    );
    for (label, opts) in [("1 GiB", &opts_big), ("1 MiB", &opts_small)] {
        let (ms, rss) = cli_pass(opts);
        println!(
            "  `intercom-pane scan` process, {label} files: {ms:.1} ms wall, peak RSS {:.1} MiB",
            rss as f64 / 1024.0
        );
    }
    usage_bench(&opts_small, &opts_big);
    if std::env::var_os("SCAN_BENCH_KEEP").is_none() {
        let _ = std::fs::remove_dir_all(&base);
    } else {
        println!("  kept {}", base.display());
    }
}
