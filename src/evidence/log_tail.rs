//! The end of one observation log as parsed events, remembered per file between passes.
//!
//! Why: the sidebar scans every ~3 s and the logs mostly do not change; parsing every line of
//! 32 × 128 KiB tails again each pass was most of its idle CPU. A file is known by device,
//! inode, length and mtime: unchanged → its events are reused without reading; grown (the same
//! inode, appended to) → only the bytes after the last complete line are read and parsed;
//! anything else (truncated, rotated, replaced, rewritten) → read from scratch. The result is
//! exactly what a fresh read of the same window gives: the same events, the same `cut`.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use crate::evidence::observations::{parse_line, Event, LogSnapshot};
use crate::fsguard::{self, FsError};

/// Files remembered at most (a few passes' worth of the 32 newest logs).
const MAX_CACHED: usize = 128;

/// One file's parsed window.
#[derive(Clone)]
struct Cached {
    dev: u64,
    ino: u64,
    len: u64,
    mtime_ms: i64,
    closed: bool,
    /// Where the window started.
    start: u64,
    /// Offset just past the last complete line parsed (where the next read begins).
    parsed_to: u64,
    /// Nothing complete was parsed yet and the window began mid-line: the bytes at
    /// `parsed_to` still start with that cut line.
    cut_line_pending: bool,
    /// Every complete line's start offset and its event (invalid lines have none).
    events: Vec<(u64, Event)>,
}

fn cache() -> &'static Mutex<HashMap<PathBuf, Cached>> {
    static C: OnceLock<Mutex<HashMap<PathBuf, Cached>>> = OnceLock::new();
    C.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The parsed end of one log.
pub struct Tail {
    pub events: Vec<Event>,
    /// Bytes the window covers (counted against the pass's byte budget).
    pub window: u64,
    /// The window did not cover the whole file.
    pub cut: bool,
}

/// Parse the last `cap` bytes of `path`: complete lines only; a first line cut by the window
/// start and a last line without its newline are dropped.
pub fn read_tail(path: &Path, cap: u64, closed: bool) -> Result<Tail, FsError> {
    let f = fsguard::open_regular(path, None)?;
    let (dev, ino, len) = (f.dev, f.ino, f.len);
    let start = len.saturating_sub(cap);
    // The window's first byte only tells whether the line after it is whole (a newline there
    // means it is); data begins right after it.
    let data_start = start + u64::from(start > 0);
    let prior = cache().lock().ok().and_then(|c| c.get(path).cloned());
    let reusable = prior.filter(|p| {
        p.dev == dev
            && p.ino == ino
            && p.closed == closed
            && len >= p.len
            && start >= p.start
            && data_start <= p.parsed_to
            && (len > p.len || p.mtime_ms == f.mtime_ms)
    });
    let entry = match reusable {
        Some(mut p) => {
            // Lines that the window moved past are dropped; a line starting exactly where the
            // data starts follows a newline, so a fresh read would keep it too.
            p.events.retain(|(at, _)| *at >= data_start);
            if len > p.len {
                let bytes = fsguard::read_at(&f.file, p.parsed_to, (len - p.parsed_to) as usize)?;
                let (more, to) = parse_lines(&bytes, p.parsed_to, p.cut_line_pending, closed);
                p.cut_line_pending &= to == p.parsed_to;
                p.events.extend(more);
                p.parsed_to = to;
            }
            p.start = start;
            p.len = len;
            p.mtime_ms = f.mtime_ms;
            p
        }
        None => {
            let buf = fsguard::read_at(&f.file, start, (len - start) as usize)?;
            let (body, base, partial) = match (start > 0, buf.first()) {
                (true, Some(b'\n')) => (buf.get(1..).unwrap_or_default(), data_start, false),
                (true, Some(_)) => (buf.get(1..).unwrap_or_default(), data_start, true),
                _ => (&buf[..], start, false),
            };
            let (events, parsed_to) = parse_lines(body, base, partial, closed);
            Cached {
                cut_line_pending: partial && parsed_to == base,
                dev,
                ino,
                len,
                mtime_ms: f.mtime_ms,
                closed,
                start,
                parsed_to,
                events,
            }
        }
    };
    let tail = Tail {
        events: entry.events.iter().map(|(_, e)| e.clone()).collect(),
        window: len - start,
        cut: start > 0,
    };
    if let Ok(mut c) = cache().lock() {
        if c.len() >= MAX_CACHED && !c.contains_key(path) {
            c.clear();
        }
        c.insert(path.to_path_buf(), entry);
    }
    Ok(tail)
}

/// What decides a whole pass over a logs folder: the folder, what the listing already said
/// (truncation, errors) and each chosen file's name, inode, length and mtime.
pub type PassKey = (
    PathBuf,
    bool,
    Vec<&'static str>,
    Vec<(OsString, u64, u64, i64)>,
);

fn last_pass() -> &'static Mutex<Option<(PassKey, LogSnapshot)>> {
    static P: OnceLock<Mutex<Option<(PassKey, LogSnapshot)>>> = OnceLock::new();
    P.get_or_init(|| Mutex::new(None))
}

/// The previous pass's result when nothing it read has changed since: the same files, none
/// appended to, rotated or replaced (the same rule as for one file, applied to the whole pass).
pub fn recall_pass(key: &PassKey) -> Option<LogSnapshot> {
    let last = last_pass().lock().ok()?;
    last.as_ref()
        .filter(|(k, _)| k == key)
        .map(|(_, s)| s.clone())
}

/// Remember a pass that read everything it chose without an error.
pub fn remember_pass(key: PassKey, snap: &LogSnapshot) {
    if let Ok(mut last) = last_pass().lock() {
        *last = snap.errors.is_empty().then(|| (key, snap.clone()));
    }
}

/// Forget every file under `dir` that this pass did not read (rotated away, no longer among the
/// newest), so the cache holds what the next pass may need and nothing else.
pub fn keep_only(dir: &Path, read: &[PathBuf]) {
    if let Ok(mut c) = cache().lock() {
        c.retain(|p, _| !p.starts_with(dir) || read.contains(p));
    }
}

/// Complete lines of `bytes` (which starts at file offset `base`), each with its start offset.
/// `partial`: the first line is cut and dropped. Returns the events and the offset just past
/// the last newline (the unterminated rest is read again next time).
pub(crate) fn parse_lines(
    bytes: &[u8],
    base: u64,
    partial: bool,
    closed: bool,
) -> (Vec<(u64, Event)>, u64) {
    let mut out = Vec::new();
    let mut pos = 0usize;
    if partial {
        match bytes.iter().position(|&b| b == b'\n') {
            Some(i) => pos = i + 1,
            None => return (out, base),
        }
    }
    while let Some(rel) = bytes
        .get(pos..)
        .and_then(|r| r.iter().position(|&b| b == b'\n'))
    {
        let line = &bytes[pos..pos + rel];
        if let Some(ev) = parse_line(line, closed) {
            out.push((base + pos as u64, ev));
        }
        pos += rel + 1;
    }
    (out, base + pos as u64)
}

/// Forget everything remembered (tests compare remembered passes with fresh ones).
#[cfg(test)]
pub(crate) fn forget_all() {
    if let Ok(mut c) = cache().lock() {
        c.clear();
    }
    if let Ok(mut p) = last_pass().lock() {
        *p = None;
    }
}

#[cfg(test)]
mod tests {
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
    fn fresh(path: &Path, cap: u64, closed: bool) -> (Vec<Event>, u64, bool) {
        if let Ok(mut c) = cache().lock() {
            c.remove(path);
        }
        let t = read_tail(path, cap, closed).unwrap();
        (t.events, t.window, t.cut)
    }

    #[test]
    fn remembered_reads_equal_fresh_reads_through_appends_cuts_and_rotation() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("writer.jsonl");
        std::fs::write(&path, "").unwrap();
        let mut seed = 0x9e37_79b9_u64;
        let mut rnd = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut n = 0usize;
        for step in 0..400 {
            let cap = [300, 1000, 4096][step % 3];
            match rnd() % 10 {
                // Append whole lines, sometimes ending mid-line (a writer caught mid-write).
                0..=6 => {
                    let mut f = std::fs::OpenOptions::new()
                        .append(true)
                        .open(&path)
                        .unwrap();
                    for _ in 0..(rnd() % 4) {
                        n += 1;
                        let l = line(n);
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
            let t = read_tail(&path, cap, false).unwrap();
            let remembered = (t.events, t.window, t.cut);
            assert_eq!(remembered, fresh(&path, cap, false), "step {step}");
            // Read again through the cache, with the same window, so the next step starts
            // from remembered state.
            let _ = read_tail(&path, cap, false).unwrap();
        }
    }
}
