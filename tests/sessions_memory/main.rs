//! Memory stays bounded while reading a session whose newest line is 16 MiB. Its own test
//! binary (one test) so the process's peak resident size measures this read alone.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../support/sessions_common/mod.rs"]
mod sessions_common;

use intercom_pane::seam::board::classify::{classify, Activity};
use intercom_pane::seam::evidence::sessions::read_session;
use sessions_common::Session;
use std::io::Write;

/// Peak resident set size of this process, in KiB (`VmHWM` in /proc/self/status).
fn peak_rss_kib() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    s.lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

#[test]
fn reading_a_16_mib_line_keeps_memory_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Session::new("0190cccc-0000-7000-8000-000000000001");
    s.user("Dump the logs");
    let call = s.tool_call("Reading logs.");
    let p = dir.path().join(format!("x_{}.jsonl", s.id));
    let mut f = std::fs::File::create(&p).unwrap();
    f.write_all(s.text().as_bytes()).unwrap();
    write!(
        f,
        r#"{{"type":"message","id":"aaaa0001","parentId":"{call}","timestamp":"2026-11-29T11:00:00.000Z","message":{{"role":"toolResult","toolCallId":"call_1","toolName":"bash","content":[{{"type":"text","text":""#
    )
    .unwrap();
    let block = vec![b'z'; 64 * 1024];
    for _ in 0..256 {
        f.write_all(&block).unwrap();
    }
    f.write_all(br#""}],"isError":false}}"#).unwrap();
    f.write_all(b"\n").unwrap();
    drop(f);
    drop(block);

    let before = peak_rss_kib();
    let sum = read_session(&p).unwrap();
    let after = peak_rss_kib();
    assert_eq!(classify(&sum, s.clock).activity, Activity::Working);
    let grew = after.saturating_sub(before);
    println!("peak RSS before {before} KiB, after {after} KiB, grew {grew} KiB");
    // Window ≤ 1 MiB + a chunk, seek buffer 1 MiB, skim windows 2 × 64 KiB: well under 8 MiB.
    assert!(grew < 8 * 1024, "peak RSS grew by {grew} KiB");
}
