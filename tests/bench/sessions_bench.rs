//! Benchmark (ignored by default): `read_session` cost must not grow with file size.
//! Run: cargo test --release --test bench sessions_bench -- --ignored --nocapture
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::sessions_common;

use intercom_pane::seam::board::classify::{classify, Activity};
use intercom_pane::seam::evidence::sessions::read_session;
use sessions_common::Session;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

const FILES: usize = 256;
const PASSES: usize = 9;

/// A realistic session: tool turns with ~4 KiB results until `target` bytes, then a reply.
fn dense(id: &str, target: usize) -> Session {
    dense_with(id, target, true)
}

/// `worded`: tool calls carry a sentence; without it the reader must look further back for the
/// last assistant text (up to its 32-entry branch limit).
fn dense_with(id: &str, target: usize, worded: bool) -> Session {
    let mut s = Session::new(id);
    s.user("Refactor the parser and run the tests");
    let out = "test result line ok\n".repeat(200);
    while s.lines.iter().map(|l| l.len() + 1).sum::<usize>() < target {
        if worded {
            s.tool_call("Running the tests.");
        } else {
            s.assistant_blocks(
                serde_json::json!([{"type":"toolCall","id":"c","name":"bash","arguments":{"command":"cargo test"}}]),
                "toolUse",
            );
        }
        s.entry(serde_json::json!({"type":"message","message":{"role":"toolResult","toolCallId":"call_1","toolName":"bash","content":[{"type":"text","text":out}],"isError":false}}));
    }
    s.assistant_blocks(
        serde_json::json!([{"type":"thinking","thinking":"done"}]),
        "stop",
    );
    if worded {
        s.reply("All tests pass.");
    }
    s
}

fn make_dense(dir: &Path, i: usize) -> PathBuf {
    let s = dense(&format!("0190ffff-0000-7000-8000-{i:012}"), 1 << 20);
    s.write_in(dir)
}

/// 1 GiB sparse: the real header at the start, the same session's last 8 entries at the end.
fn make_sparse(dir: &Path, i: usize) -> PathBuf {
    let s = dense(&format!("0190ffff-0000-7000-9000-{i:012}"), 64 << 10);
    let p = dir.join(format!("2026-11-29T10-00-00-000Z_{}.jsonl", s.id));
    let f = std::fs::File::create(&p).unwrap();
    let header = format!("{}\n", s.lines[0]);
    f.write_all_at(header.as_bytes(), 0).unwrap();
    let len: u64 = 1 << 30;
    f.set_len(len).unwrap();
    let mut tail = String::from("\n");
    for l in &s.lines[s.lines.len() - 8..] {
        tail.push_str(l);
        tail.push('\n');
    }
    f.write_all_at(tail.as_bytes(), len - tail.len() as u64)
        .unwrap();
    p
}

fn median_pass_ms(files: &[PathBuf]) -> f64 {
    let mut times = Vec::new();
    for pass in 0..=PASSES {
        let t = Instant::now();
        for p in files {
            let s = read_session(p).unwrap();
            assert_eq!(classify(&s, 0).activity, Activity::Idle);
        }
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        // Pass 0 warms the page cache.
        if pass > 0 {
            times.push(ms);
        }
    }
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    times[times.len() / 2]
}

#[test]
#[ignore = "a benchmark: run by hand in release, one module at a time (docs/benchmarks.md)"]
fn read_session_cost_does_not_grow_with_file_size() {
    let dir = tempfile::tempdir().unwrap();
    let dense_dir = dir.path().join("dense");
    let sparse_dir = dir.path().join("sparse");
    std::fs::create_dir(&dense_dir).unwrap();
    std::fs::create_dir(&sparse_dir).unwrap();
    let dense_files: Vec<PathBuf> = (0..FILES).map(|i| make_dense(&dense_dir, i)).collect();
    let sparse_files: Vec<PathBuf> = (0..FILES).map(|i| make_sparse(&sparse_dir, i)).collect();

    let d = median_pass_ms(&dense_files);
    let s = median_pass_ms(&sparse_files);
    let wordless_dir = dir.path().join("wordless");
    std::fs::create_dir(&wordless_dir).unwrap();
    let wordless: Vec<PathBuf> = (0..FILES)
        .map(|i| {
            dense_with(&format!("0190ffff-0000-7000-a000-{i:012}"), 1 << 20, false)
                .write_in(&wordless_dir)
        })
        .collect();
    let w = median_pass_ms(&wordless);
    println!(
        "read_session x{FILES}: 1 MiB files whose tool calls carry no text (scan goes back 32 \
         branch entries): median pass {w:.2} ms ({:.1} us/file)",
        w * 1000.0 / FILES as f64
    );
    let ratio = s / d;
    println!(
        "read_session x{FILES}: 1 MiB files median pass {d:.2} ms ({:.1} us/file); \
         1 GiB sparse files median pass {s:.2} ms ({:.1} us/file); ratio sparse/dense {ratio:.2}",
        d * 1000.0 / FILES as f64,
        s * 1000.0 / FILES as f64
    );
    assert!(d < 100.0 && s < 100.0, "pass over 100 ms");
    assert!(ratio <= 1.5, "ratio {ratio:.2}");
}
