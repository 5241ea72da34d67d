//! Tests of the log cursor (`log_tail.rs`) and of the merge in `observations::read_logs`:
//! remembered reads equal fresh ones, and newest-first reading keeps what reading everything
//! keeps. Test code only (the architecture test reads a file up to its first `cfg(test)`).
#[cfg(test)]
use super::*;
use std::io::Write;

fn line(i: usize) -> String {
    format!(
        "{{\"version\":1,\"timestamp\":\"2026-11-29T10:00:{:02}.{:03}Z\",\"writerId\":\"01900000-0000-7000-8000-000000000001\",\"sessionId\":\"s{i}\",\"event\":\"host.activity\",\"busy\":true}}\n",
        i % 60,
        i % 1000
    )
}

/// What a read without any remembered state gives.
fn fresh(path: &Path, cap: u64, closed: bool) -> (Vec<Event>, bool) {
    read_window(path, cap, closed, None)
}

/// A cursor that hands out only the `n` newest events, so the next read starts from a
/// partly read memo.
fn read_some(path: &Path, cap: u64, n: usize, memo: &LogMemo) {
    let mut budget = u64::MAX;
    let mut c = Cursor::open(path, cap, false, &mut budget, Some(memo)).unwrap();
    for _ in 0..n {
        if c.head(&mut budget).unwrap().is_none() {
            break;
        }
        c.take();
    }
    let _ = c.head(&mut budget).unwrap();
    c.finish();
}

#[test]
fn remembered_reads_equal_fresh_reads_through_appends_cuts_and_rotation() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("writer.jsonl");
    std::fs::write(&path, "").unwrap();
    let memo = LogMemo::default();
    let mut seed = 0x9e37_79b9_u64;
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut n = 0usize;
    for step in 0..600 {
        let cap = [300, 1000, 4096, 20_000][step % 4];
        match rnd() % 10 {
            // Append whole lines, sometimes ending mid-line (a writer caught mid-write),
            // sometimes a line longer than a block.
            0..=6 => {
                let mut f = std::fs::OpenOptions::new()
                    .append(true)
                    .open(&path)
                    .unwrap();
                for _ in 0..(rnd() % 40) {
                    n += 1;
                    let l = if rnd() % 9 == 0 {
                        format!("{}\n", "x".repeat((rnd() % 9000) as usize))
                    } else {
                        line(n)
                    };
                    let cut = if rnd() % 5 == 0 {
                        (rnd() as usize) % l.len()
                    } else {
                        l.len()
                    };
                    f.write_all(&l.as_bytes()[..cut]).unwrap();
                }
            }
            // Truncated in place.
            7 => std::fs::write(&path, line(n)).unwrap(),
            // Replaced by a new file (rotation).
            8 => {
                let tmp = dir.path().join("new");
                std::fs::write(&tmp, format!("{}{}", line(n + 1), line(n + 2))).unwrap();
                std::fs::rename(&tmp, &path).unwrap();
                n += 2;
            }
            _ => {}
        }
        let remembered = read_window(&path, cap, false, Some(&memo));
        let expect = fresh(&path, cap, false);
        assert_eq!(remembered, expect, "step {step}");
        // The same window parsed in one piece, the old way.
        let bytes = std::fs::read(&path).unwrap();
        let start = bytes.len().saturating_sub(cap as usize);
        let whole = crate::evidence::log_event::parse_tail(&bytes[start..], start > 0, false);
        assert_eq!(expect, (whole, start == 0), "step {step}");
        // Leave a partly read memo behind for the next step.
        read_some(&path, cap, (rnd() % 5) as usize, &memo);
    }
}

/// The old way: every line of every window parsed, older files first, a stable sort by time,
/// the 500 newest kept. Files here are written in time order, as writers write them.
fn read_all_then_sort(root: &Path) -> (Vec<Event>, bool) {
    let dir = root.join(".pi-intercom/logs");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| {
            (
                e.metadata().unwrap().modified().unwrap(),
                e.file_name(),
                e.path(),
            )
        })
        .collect();
    files.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let mut truncated = files.len() > crate::evidence::observations::MAX_FILES;
    files.truncate(crate::evidence::observations::MAX_FILES);
    let mut per_file = Vec::new();
    for (_, _, p) in &files {
        let b = std::fs::read(p).unwrap();
        let start = b
            .len()
            .saturating_sub(crate::evidence::observations::MAX_TAIL_PER_FILE as usize);
        truncated |= start > 0;
        per_file.push(crate::evidence::log_event::parse_tail(
            &b[start..],
            start > 0,
            false,
        ));
    }
    let mut all: Vec<Event> = per_file.into_iter().rev().flatten().collect();
    all.sort_by_key(|e| e.timestamp);
    if all.len() > crate::evidence::observations::MAX_EVENTS {
        all.drain(..all.len() - crate::evidence::observations::MAX_EVENTS);
        truncated = true;
    }
    (all, truncated)
}

#[test]
fn newest_first_reading_keeps_what_reading_everything_keeps() {
    use std::io::Write;
    let mut seed = 0x2545_f491_u64;
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for round in 0..12 {
        let memo = LogMemo::default();
        let root = tempfile::tempdir().unwrap();
        let logs = root.path().join(".pi-intercom/logs");
        std::fs::create_dir_all(&logs).unwrap();
        let nfiles = 1 + rnd() % 36;
        let base =
            std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_800_000_000);
        for f in 0..nfiles {
            let w = format!("0190aaaa-0000-7000-8000-{f:012}");
            let path = logs.join(format!("writer-{w}.jsonl"));
            let mut out = std::fs::File::create(&path).unwrap();
            // Few or many lines; times rise in steps that often tie across files.
            let lines = [0, 3, 40, 300, 900][(rnd() % 5) as usize] + rnd() % 20;
            let mut t = rnd() % 50;
            for i in 0..lines {
                t += rnd() % 3;
                let l = match rnd() % 12 {
                    0 => "not json".to_string(),
                    1 => format!("{{\"pad\":\"{}\"}}", "p".repeat((rnd() % 6000) as usize)),
                    _ => format!(
                        r#"{{"version":1,"timestamp":"2026-11-29T10:{:02}:{:02}.000Z","writerId":"{w}","sessionId":"s1","event":"host.activity","busy":{},"port":{}}}"#,
                        t / 60 % 60,
                        t % 60,
                        i % 2 == 0,
                        1 + i % 9000
                    ),
                };
                writeln!(out, "{l}").unwrap();
            }
            if rnd() % 4 == 0 {
                write!(out, "{{\"cut").unwrap();
            }
            out.set_modified(base + std::time::Duration::from_secs(rnd() % 8))
                .unwrap();
        }
        let snap = crate::evidence::observations::read_logs_with(root.path(), Some(&memo));
        let (events, truncated) = read_all_then_sort(root.path());
        assert_eq!(snap.events, events, "round {round}");
        assert_eq!(snap.truncated, truncated, "round {round}");
        // Remembered: the same again.
        assert_eq!(
            crate::evidence::observations::read_logs_with(root.path(), Some(&memo)).events,
            events,
            "round {round}"
        );
    }
}

#[test]
fn a_line_longer_than_a_block_is_skipped_not_read_again_and_again() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("writer.jsonl");
    let long = format!("{}\n", "x".repeat(100 * 1024));
    let body: String =
        (0..10).map(line).collect::<String>() + &long + &(10..20).map(line).collect::<String>();
    for text in [body.clone(), format!("{body}{}", &long[..long.len() - 1])] {
        std::fs::write(&path, &text).unwrap();
        let expect = crate::evidence::log_event::parse_tail(text.as_bytes(), false, false);
        assert_eq!(expect.len(), 20);
        let mut budget = 4 * 1024 * 1024;
        let mut c = Cursor::open(&path, 1 << 20, false, &mut budget, None).unwrap();
        let mut got = Vec::new();
        while c.head(&mut budget).unwrap().is_some() {
            got.extend(c.take());
        }
        got.reverse();
        assert_eq!(got, expect);
        assert!(c.whole_file());
        // Each byte read about twice at most, not the budget's worth.
        assert!(4 * 1024 * 1024 - budget < 3 * text.len() as u64, "{budget}");
        c.finish();
    }
}
