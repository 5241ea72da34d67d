//! Benchmark (ignored by default): is the hand-written observation-line reader
//! (`evidence::log_line`, issue 21 item 9) worth keeping over a serde-derived one?
//! Run: cargo test --release --test bench log_line_bench -- --ignored --nocapture
//!
//! Three readers of the same 18 fields on the same lines (shaped like Intercom's observation
//! log): `Fields::parse` (the hand scan, serde_json for anything not flat), a derived struct
//! with typed fields (`Cow<str>`, `u64`, `bool`: a mistyped field drops the whole line, which
//! the hand reader does not), and a derived struct of raw values (the hand reader's semantics).
//! Prints ns per line, the median of 7 rounds.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::borrow::Cow;
use std::hint::black_box;
use std::time::Instant;

use intercom_pane::seam::evidence::log_line::{field, Fields};
use serde::Deserialize;
use serde_json::value::RawValue;

const LINES: usize = 50_000;
const ROUNDS: usize = 7;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct Typed<'a> {
    version: Option<u64>,
    #[serde(borrow)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(borrow)]
    writer_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    session_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    event: Option<Cow<'a, str>>,
    #[serde(borrow)]
    peer_session_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    peer_name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    correlation_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    kind: Option<Cow<'a, str>>,
    busy: Option<bool>,
    #[serde(borrow)]
    phase: Option<Cow<'a, str>>,
    #[serde(borrow)]
    detail: Option<Cow<'a, str>>,
    port: Option<u64>,
    #[serde(borrow)]
    role: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pi_role: Option<Cow<'a, str>>,
    #[serde(borrow)]
    outcome: Option<Cow<'a, str>>,
    #[serde(borrow)]
    error_code: Option<Cow<'a, str>>,
    #[serde(borrow)]
    operation: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct Raw<'a> {
    #[serde(borrow)]
    version: Option<&'a RawValue>,
    #[serde(borrow)]
    timestamp: Option<&'a RawValue>,
    #[serde(borrow)]
    writer_id: Option<&'a RawValue>,
    #[serde(borrow)]
    session_id: Option<&'a RawValue>,
    #[serde(borrow)]
    event: Option<&'a RawValue>,
    #[serde(borrow)]
    peer_session_id: Option<&'a RawValue>,
    #[serde(borrow)]
    peer_name: Option<&'a RawValue>,
    #[serde(borrow)]
    correlation_id: Option<&'a RawValue>,
    #[serde(borrow)]
    kind: Option<&'a RawValue>,
    #[serde(borrow)]
    busy: Option<&'a RawValue>,
    #[serde(borrow)]
    phase: Option<&'a RawValue>,
    #[serde(borrow)]
    detail: Option<&'a RawValue>,
    #[serde(borrow)]
    port: Option<&'a RawValue>,
    #[serde(borrow)]
    role: Option<&'a RawValue>,
    #[serde(borrow)]
    pi_role: Option<&'a RawValue>,
    #[serde(borrow)]
    outcome: Option<&'a RawValue>,
    #[serde(borrow)]
    error_code: Option<&'a RawValue>,
    #[serde(borrow)]
    operation: Option<&'a RawValue>,
}

fn lines() -> Vec<Vec<u8>> {
    let w = "0190aaaa-0000-7000-8000-000000000001";
    let s = "01a2f000-0000-7000-8000-00000000c0de";
    let p = "01a2f000-0000-7000-8000-0000000000b1";
    (0..LINES)
        .map(|i| {
            let ts = format!("2026-11-29T10:{:02}:{:02}.{:03}Z", i / 3600 % 60, i / 60 % 60, i % 1000);
            match i % 4 {
                0 => format!(r#"{{"version":1,"timestamp":"{ts}","writerId":"{w}","sessionId":"{s}","event":"runtime.ready","busy":false,"role":"coordinator","port":41001}}"#),
                1 => format!(r#"{{"version":1,"timestamp":"{ts}","writerId":"{w}","sessionId":"{s}","event":"transport.send","kind":"message","peerSessionId":"{p}","peerName":"Builder","correlationId":"a1b2c3d4-0000-4000-8000-{i:012}","outcome":"attempted"}}"#),
                2 => format!(r#"{{"version":1,"timestamp":"{ts}","writerId":"{w}","sessionId":"{s}","event":"transport.receipt","kind":"message","peerSessionId":"{p}","correlationId":"a1b2c3d4-0000-4000-8000-{i:012}","outcome":"http_receipt"}}"#),
                // One line in four with an escape and a nested value (the slow path of both).
                _ => format!(r#"{{"version":1,"timestamp":"{ts}","writerId":"{w}","sessionId":"{s}","event":"runtime.phase","phase":"turn","peerName":"Build\u00e9r","extra":{{"a":[1,2]}},"busy":true}}"#),
            }
            .into_bytes()
        })
        .collect()
}

type Reader = fn(&[u8]) -> usize;

fn hand(l: &[u8]) -> usize {
    let f = Fields::parse(l).unwrap();
    usize::from(f.str_at(const { field("event") }).is_some())
        + usize::from(f.u64_at(const { field("version") }).is_some())
}

fn typed(l: &[u8]) -> usize {
    let t: Typed = serde_json::from_slice(l).unwrap();
    usize::from(t.event.is_some()) + usize::from(t.version.is_some())
}

fn raw(l: &[u8]) -> usize {
    let r: Raw = serde_json::from_slice(l).unwrap();
    usize::from(r.event.is_some()) + usize::from(r.version.is_some())
}

fn value(l: &[u8]) -> usize {
    let v: serde_json::Value = serde_json::from_slice(l).unwrap();
    usize::from(v["event"].is_string()) + usize::from(v["version"].is_u64())
}

/// ns per line of each reader, the median of `ROUNDS` rounds run interleaved (a shared machine's
/// load then weighs on every reader alike).
fn interleaved(lines: &[&[u8]], readers: &[Reader]) -> Vec<f64> {
    let mut runs = vec![Vec::new(); readers.len()];
    for _ in 0..ROUNDS {
        for (i, read) in readers.iter().enumerate() {
            let t = Instant::now();
            let mut n = 0;
            for l in lines {
                n += read(black_box(l));
            }
            assert!(n >= lines.len(), "every line must read ({n})");
            runs[i].push(t.elapsed().as_nanos() as f64 / lines.len() as f64);
        }
    }
    runs.into_iter()
        .map(|mut r| {
            r.sort_by(|a, b| a.total_cmp(b));
            r[ROUNDS / 2]
        })
        .collect()
}

#[test]
#[ignore = "benchmark: cargo test --release --test bench log_line_bench -- --ignored --nocapture"]
fn hand_reader_against_derived_readers() {
    let all = lines();
    let mixed: Vec<&[u8]> = all.iter().map(Vec::as_slice).collect();
    // Only the flat lines (no escape, nothing nested): the hand scan's own path.
    let flat: Vec<&[u8]> = all
        .iter()
        .step_by(4)
        .map(Vec::as_slice)
        .chain(all.iter().skip(1).step_by(4).map(Vec::as_slice))
        .chain(all.iter().skip(2).step_by(4).map(Vec::as_slice))
        .collect();
    for (name, lines) in [
        ("mixed (1 in 4 escaped and nested)", &mixed),
        ("flat", &flat),
    ] {
        let r = interleaved(lines, &[hand, typed, raw, value]);
        println!(
            "ns per observation line, {name}, {} lines, median of {ROUNDS} interleaved rounds: hand {:.0}, derived typed {:.0} ({:.2}x), derived raw {:.0} ({:.2}x), Value {:.0} ({:.2}x)",
            lines.len(), r[0], r[1], r[1] / r[0], r[2], r[2] / r[0], r[3], r[3] / r[0]
        );
    }
}
