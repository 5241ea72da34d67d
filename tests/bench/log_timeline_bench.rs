//! Benchmark (ignored by default): `log NAME --since 30m` reads a 1 GiB session for what it
//! reads on a 1 MiB one: the backward read stops at the first line older than the cutoff.
//! Run: cargo test --release --test bench log_timeline_bench -- --ignored --nocapture
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use intercom_pane::seam::clock::format_iso;
use intercom_pane::seam::evidence::sessions::timeline::{read_timeline, READ_LIMITS};
use serde_json::json;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

const RUNS: usize = 31;

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// One turn at `at`: a prompt, a tool call with its ~4 KiB result, a reply.
fn turn(at: i64, i: usize) -> String {
    let t = |d: i64| format_iso(at + d);
    let out = "test result line ok\n".repeat(200);
    [
        json!({"type":"message","id":format!("u{i}"),"timestamp":t(0),"message":{"role":"user","content":"run the tests"}}),
        json!({"type":"message","id":format!("a{i}"),"timestamp":t(100),"message":{"role":"assistant","content":[{"type":"toolCall","id":format!("c{i}"),"name":"bash","arguments":{"command":"cargo test"}}],"model":"m","usage":{"input":1000,"output":20,"cost":{"total":0.01}},"stopReason":"toolUse"}}),
        json!({"type":"message","id":format!("r{i}"),"timestamp":t(2000),"message":{"role":"toolResult","toolCallId":format!("c{i}"),"toolName":"bash","content":[{"type":"text","text":out}],"isError":false,"durationMs":1900}}),
        json!({"type":"message","id":format!("b{i}"),"timestamp":t(2100),"message":{"role":"assistant","content":[{"type":"text","text":"All tests pass."}],"model":"m","usage":{"input":1200,"output":5,"cost":{"total":0.01}},"stopReason":"stop"}}),
    ]
    .iter()
    .map(|l| format!("{l}\n"))
    .collect()
}

/// Turns every `step` ms from `from`, `bytes` of them at least.
fn turns(from: i64, step: i64, bytes: usize) -> String {
    let mut s = String::new();
    let mut i = 0;
    while s.len() < bytes {
        s.push_str(&turn(from + i as i64 * step, i));
        i += 1;
    }
    s
}

/// A session of `len` bytes: the header, old turns (over an hour ago) up to the last 30
/// minutes, which hold `recent` (the same in every file). A large file is sparse before its last
/// 8 MiB of old turns (the reader must never reach that far: it stops at the first old line).
fn session(dir: &Path, name: &str, len: u64, recent: &str, now: i64) -> PathBuf {
    let p = dir.join(name);
    let header = format!(
        "{}\n",
        json!({"type":"session","version":3,"id":"bench","timestamp":format_iso(now - 7_200_000),"cwd":"/w"})
    );
    let dense_old = (len as usize)
        .saturating_sub(header.len() + recent.len())
        .min(8 << 20);
    let old = turns(now - 5_400_000, 1000, dense_old);
    let old = &old[..old.len().min(dense_old)];
    // Cut at a line end so what follows the hole starts a line.
    let old = &old[old.find('\n').map_or(0, |i| i + 1)..];
    let f = std::fs::File::create(&p).unwrap();
    f.write_all_at(header.as_bytes(), 0).unwrap();
    let tail_len = (old.len() + recent.len() + 1) as u64;
    let start = len.saturating_sub(tail_len).max(header.len() as u64);
    f.set_len(start).unwrap();
    let mut w = std::io::BufWriter::new(&f);
    use std::io::Seek;
    w.seek(std::io::SeekFrom::Start(start)).unwrap();
    w.write_all(b"\n").unwrap();
    w.write_all(old.as_bytes()).unwrap();
    w.write_all(recent.as_bytes()).unwrap();
    w.flush().unwrap();
    drop(w);
    p
}

fn median_us(p: &Path, since: i64) -> (f64, u64, usize) {
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..RUNS {
        let t = Instant::now();
        let tl = read_timeline(p, Some(since), &READ_LIMITS).unwrap();
        times.push(t.elapsed().as_secs_f64() * 1e6);
        last = Some(tl);
    }
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let tl = last.unwrap();
    assert!(!tl.truncated);
    (times[RUNS / 2], tl.bytes, tl.entries.len())
}

#[test]
#[ignore = "benchmark: run with --release -- --ignored --nocapture"]
fn since_30m_costs_the_same_on_1_gib_as_on_1_mib() {
    let dir = tempfile::tempdir().unwrap();
    let now = now_ms();
    // 25 minutes of turns, one a minute: what `--since 30m` shows.
    let mut recent = String::new();
    for i in 0..25 {
        recent.push_str(&turn(now - 1_500_000 + i * 60_000, 10_000 + i as usize));
    }
    let small = session(dir.path(), "small.jsonl", 1 << 20, &recent, now);
    let big = session(dir.path(), "big.jsonl", 1 << 30, &recent, now);
    assert_eq!(std::fs::metadata(&big).unwrap().len(), 1 << 30);
    let since = now - 1_800_000;
    let (s_us, s_bytes, s_n) = median_us(&small, since);
    let (b_us, b_bytes, b_n) = median_us(&big, since);
    assert_eq!(s_n, b_n);
    assert_eq!(s_n, 25 * 2, "25 turns, each with its tool");
    let ratio = b_us / s_us;
    println!(
        "log --since 30m: 1 MiB {s_us:.0} µs ({s_bytes} bytes read), 1 GiB {b_us:.0} µs ({b_bytes} bytes read), ratio {ratio:.2}"
    );
    assert!(ratio <= 1.2, "ratio {ratio:.2}");
}
