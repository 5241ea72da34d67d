//! Mutated real pi session files (flipped bytes, cuts, stray quotes and backslashes, split lines,
//! repeated spans, appended multi-MiB lines with odd ends) through the reader and the classifier:
//! whatever the bytes, no panic. `INTERCOM_PANE_FUZZ_ITERS` runs more (default 300, seeded, so a
//! failure repeats).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use intercom_pane::seam::board::classify::classify;
use intercom_pane::seam::evidence::sessions::read_session;
use std::io::Write;
use std::path::Path;

#[test]
fn mutated_real_sessions_never_panic_the_reader() {
    let iters: u64 = std::env::var("INTERCOM_PANE_FUZZ_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pi-1.6.0-runs");
    let files: Vec<Vec<u8>> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
        .map(|e| std::fs::read(e.path()).unwrap())
        .collect();
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("x_y.jsonl");
    let mut seed: u64 = 0x1234_5678;
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..iters {
        let mut b = files[(rnd() as usize) % files.len()].clone();
        let n = 1 + rnd() % 8;
        for _ in 0..n {
            let len = b.len().max(1);
            match rnd() % 7 {
                0 => {
                    let i = (rnd() as usize) % len;
                    if i < b.len() {
                        b[i] = rnd() as u8;
                    }
                }
                1 => {
                    let i = (rnd() as usize) % len;
                    b.truncate(i);
                }
                2 => {
                    let i = (rnd() as usize) % len;
                    if i < b.len() {
                        b.insert(i, b'"');
                    }
                }
                3 => {
                    let i = (rnd() as usize) % len;
                    if i < b.len() {
                        b.insert(i, b'\\');
                    }
                }
                4 => {
                    // a huge line
                    let mut l = br#"{"type":"message","id":"zz","parentId":null,"timestamp":"2026-11-30T00:00:00.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":""#.to_vec();
                    l.extend(std::iter::repeat_n(
                        b'q',
                        1_100_000 + (rnd() % 100_000) as usize,
                    ));
                    let tails: [&[u8]; 4] = [
                        br#""},{"type":"text","text":"Input needed: x"}],"stopReason":"stop"}}"#,
                        br#"\"},{\"type\":\"text"#,
                        b"",
                        br#""}],"stopReason":"error","errorMessage":"413"}}"#,
                    ];
                    l.extend_from_slice(tails[(rnd() % 4) as usize]);
                    l.push(b'\n');
                    b.extend(l);
                }
                5 => {
                    let i = (rnd() as usize) % len;
                    if i < b.len() {
                        b.insert(i, b'\n');
                    }
                }
                _ => {
                    let i = (rnd() as usize) % len;
                    let j = (rnd() as usize) % len;
                    if i < j && j <= b.len() {
                        let seg = b[i..j].to_vec();
                        b.extend(seg);
                    }
                }
            }
        }
        let mut f = std::fs::File::create(&p).unwrap();
        f.write_all(&b).unwrap();
        drop(f);
        if let Ok(s) = read_session(&p) {
            let _ = classify(&s, 1_796_000_000_000);
            let _ = intercom_pane::seam::board::classify::recovery_marked_at(&s);
        }
    }
}

/// The other readers' parsers (config, observation logs, reports, registrations) on mutated
/// fixture bytes: refused or parsed, never a panic.
#[test]
fn mutated_intercom_files_never_panic_their_parsers() {
    let root =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/intercom-root/.pi-intercom");
    let mut inputs: Vec<Vec<u8>> = vec![std::fs::read(root.join("config.json")).unwrap()];
    for d in ["logs", "reports"] {
        for e in std::fs::read_dir(root.join(d)).unwrap().flatten() {
            if e.path().is_file() {
                inputs.push(std::fs::read(e.path()).unwrap());
            }
        }
    }
    inputs.push(br#"{"sessionId":"s","pid":1,"startTicks":5,"bootId":"b","runState":{"state":"working","seq":2,"at":"2026-11-29T10:00:01.000Z","event":"agent_start"},"mux":{"kind":"tmux","session":"x"}}"#.to_vec());
    let mut seed: u64 = 0x9e37_79b9;
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..20_000 {
        let mut b = inputs[(rnd() as usize) % inputs.len()].clone();
        for _ in 0..(1 + rnd() % 6) {
            let len = b.len().max(1);
            let i = (rnd() as usize) % len;
            match rnd() % 5 {
                0 => {
                    if i < b.len() {
                        b[i] = rnd() as u8
                    }
                }
                1 => b.truncate(i),
                2 => {
                    if i < b.len() {
                        b.insert(i, b"\"\\{}[],:0-e"[(rnd() % 11) as usize])
                    }
                }
                3 => {
                    if i < b.len() {
                        b.remove(i);
                    }
                }
                _ => {
                    let j = (rnd() as usize) % len;
                    if i < j && j <= b.len() {
                        let s = b[i..j].to_vec();
                        b.splice(i..i, s);
                    }
                }
            }
        }
        let _ = intercom_pane::seam::evidence::config::parse(Path::new("/r"), &b);
        let _ = intercom_pane::seam::evidence::log_event::parse_tail(
            &b,
            rnd() % 2 == 0,
            rnd() % 2 == 0,
        );
        let _ = intercom_pane::seam::evidence::reports::parse_report(
            &b,
            "0b1d0000-0000-7000-8000-000000000001",
        );
        let _ = intercom_pane::seam::evidence::registrations::parse(Path::new("/r/x.json"), &b);
    }
}
