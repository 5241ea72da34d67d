//! Intercom observation logs (docs/interop.md §2): bounded tail reads of `writer-<uuid>.jsonl*`.
//!
//! Why so many bounds: writers are other processes, files rotate under us and may be huge or
//! hostile. Each pass scans at most 512 directory entries, opens at most the 32 newest matching
//! regular files, reads at most 128 KiB from the end of each and 2 MiB in all, and keeps the 500
//! newest valid events. Records are validated field by field against fixed allowlists; a bad
//! required field drops the record, a bad optional field drops only that field, and unknown keys
//! are never carried (so nothing outside the allowlists can reach a view).

use std::path::Path;
use std::sync::Arc;

use crate::clock::Ms;
use crate::evidence::config::STATE_DIR;
use crate::evidence::log_event::{is_lower_uuid, Event, LogSnapshot};
use crate::evidence::log_tail::{self, LogMemo};
use crate::fsguard::{self, FsError, Kind};

/// Most directory entries looked at per pass.
pub(crate) const MAX_DIR_ENTRIES: usize = 512;
/// Most log files read per pass (the newest by mtime).
pub const MAX_FILES: usize = 32;
/// Most bytes read from the end of one file.
pub(crate) const MAX_TAIL_PER_FILE: u64 = 128 * 1024;
/// Most bytes read from all files together.
pub const MAX_TAIL_TOTAL: u64 = 2 * 1024 * 1024;
/// Most events kept (the newest).
pub const MAX_EVENTS: usize = 500;

/// Which file of a writer's group a name denotes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogSuffix {
    /// `.jsonl`: the active file.
    Active,
    /// `.jsonl.1` or `.jsonl.2`: rotated.
    Rotated(u8),
    /// `.jsonl.closed`: the writer ended.
    Closed,
}

/// Match `^writer-<lowercase uuid>\.jsonl(\.[12]|\.closed)?$` by hand; returns the UUID and suffix.
pub fn match_log_name(name: &str) -> Option<(&str, LogSuffix)> {
    let rest = name.strip_prefix("writer-")?;
    // A UUID is 36 ASCII bytes; `get` keeps this from panicking on a multi-byte boundary.
    let uuid = rest.get(..36)?;
    if !is_lower_uuid(uuid) {
        return None;
    }
    let suffix = match rest.get(36..)? {
        ".jsonl" => LogSuffix::Active,
        ".jsonl.1" => LogSuffix::Rotated(1),
        ".jsonl.2" => LogSuffix::Rotated(2),
        ".jsonl.closed" => LogSuffix::Closed,
        _ => return None,
    };
    Some((uuid, suffix))
}

/// Read `<root>/.pi-intercom/logs` within every bound. Never fails: problems become `errors`
/// codes and `truncated`. A missing logs folder is simply no evidence (no error).
pub fn read_logs(root: &Path) -> Arc<LogSnapshot> {
    read_logs_with(root, None)
}

/// `read_logs`, reusing what `memo` kept: an unchanged pass hands out the previous result
/// without copying its 500 events, and a grown file is parsed only past what was parsed.
pub(crate) fn read_logs_with(root: &Path, memo: Option<&LogMemo>) -> Arc<LogSnapshot> {
    let mut snap = LogSnapshot::default();
    let dir = root.join(STATE_DIR).join("logs");
    match fsguard::check_under(root, &dir) {
        Ok(()) => {}
        Err(FsError::NotFound) => return Arc::new(snap),
        Err(_) => {
            snap.error("logs_unavailable");
            return Arc::new(snap);
        }
    }
    let listing = match fsguard::list_dir(&dir, MAX_DIR_ENTRIES) {
        Ok(l) => l,
        Err(FsError::NotFound) => return Arc::new(snap),
        Err(_) => {
            snap.error("logs_unavailable");
            return Arc::new(snap);
        }
    };
    if listing.truncated {
        snap.truncated = true;
    }

    let files = choose_logs(&listing, &mut snap);

    let key: log_tail::PassKey = (
        dir.clone(),
        snap.truncated,
        snap.errors.clone(),
        files
            .iter()
            .map(|(e, _, _)| (e.name.clone(), e.ino, e.len, e.mtime_ms))
            .collect(),
    );
    if let Some(same) = memo.and_then(|m| m.recall_pass(&key)) {
        return same;
    }

    // Every file is read backwards from its end, newest line first; the newest event of all
    // heads is taken until 500 are known, so only the lines that can matter are parsed. A file's
    // lines are in the order its writer wrote them.
    let mut budget = MAX_TAIL_TOTAL;
    let mut cursors = Vec::new();
    let mut read = Vec::new();
    for (i, (entry, _, suffix)) in files.iter().enumerate() {
        let path = dir.join(&entry.name);
        let closed = *suffix == LogSuffix::Closed;
        match log_tail::Cursor::open(&path, MAX_TAIL_PER_FILE, closed, &mut budget, memo) {
            Ok(c) => cursors.push((i, Some(c))),
            // Rotated away between listing and reading: not an error, just gone.
            Err(FsError::NotFound) => continue,
            Err(_) => {
                snap.error("log_read_failed");
                continue;
            }
        }
        read.push(path);
    }
    let mut newest = merge_newest(&mut cursors, &mut budget, &mut snap);
    for (_, c) in cursors.into_iter() {
        let Some(c) = c else { continue };
        if !c.whole_file() {
            snap.truncated = true;
        }
        c.finish();
    }
    if let Some(m) = memo {
        m.keep_only(&dir, &read);
    }
    // Equal times keep older files, then earlier lines, first.
    newest.reverse();
    newest.sort_by_key(|(t, i, _)| (*t, std::cmp::Reverse(*i)));
    snap.events = newest.into_iter().map(|(_, _, e)| e).collect();
    let snap = Arc::new(snap);
    if let Some(m) = memo {
        m.remember_pass(key, &snap);
    }
    snap
}

/// The logs a pass reads: files with a log name only (a link, FIFO, device or socket wearing
/// one is never opened and does not take one of the 32 slots, or a row of FIFOs could hide the
/// real logs), newest first; the writers that closed their logs are noted in `snap`.
fn choose_logs<'l>(
    listing: &'l fsguard::Listing,
    snap: &mut LogSnapshot,
) -> Vec<(&'l fsguard::Entry, &'l str, LogSuffix)> {
    let mut files: Vec<(&fsguard::Entry, &str, LogSuffix)> = Vec::new();
    for e in &listing.entries {
        let Some((uuid, suffix)) = e.name_str().and_then(match_log_name) else {
            continue;
        };
        if e.kind == Kind::File {
            files.push((e, uuid, suffix));
        } else {
            snap.error("log_read_failed");
        }
    }
    // Newest mtime first, name as a deterministic tie-break.
    files.sort_by(|a, b| {
        b.0.mtime_ms
            .cmp(&a.0.mtime_ms)
            .then_with(|| a.0.name.cmp(&b.0.name))
    });
    if files.len() > MAX_FILES {
        files.truncate(MAX_FILES);
        snap.truncated = true;
    }
    for (_, uuid, suffix) in &files {
        if *suffix == LogSuffix::Closed && !snap.closed_writers.iter().any(|w| w == uuid) {
            snap.closed_writers.push((*uuid).to_string());
        }
    }

    files
}

/// The newest events of all files, taking the newest head of all cursors until 500 are known:
/// (timestamp, file index, event), newest first. The heads wait in a heap (newest first; on a
/// tie the earlier cursor, which is the newer file): one pick costs a heap step, not a look at
/// every file.
fn merge_newest(
    cursors: &mut [(usize, Option<log_tail::Cursor>)],
    budget: &mut u64,
    snap: &mut LogSnapshot,
) -> Vec<(Ms, usize, Event)> {
    use std::cmp::Reverse;
    let mut newest: Vec<(Ms, usize, Event)> = Vec::with_capacity(MAX_EVENTS);
    let mut heads = std::collections::BinaryHeap::with_capacity(cursors.len());
    // The head of cursor `k` joins the heap (a cursor that cannot be read is dropped).
    let mut push =
        |k: usize,
         slot: &mut Option<log_tail::Cursor>,
         heads: &mut std::collections::BinaryHeap<(Ms, Reverse<usize>)>| {
            let Some(c) = slot else { return };
            match c.head(budget) {
                Ok(Some(t)) => heads.push((t, Reverse(k))),
                Ok(None) => {}
                Err(_) => {
                    snap.error("log_read_failed");
                    *slot = None;
                }
            }
        };
    for (k, (_, slot)) in cursors.iter_mut().enumerate() {
        push(k, slot, &mut heads);
    }
    // Bounded: every round takes one event, and at most `MAX_EVENTS` are taken.
    while let Some((t, Reverse(k))) = heads.pop() {
        if newest.len() == MAX_EVENTS {
            snap.truncated = true;
            break;
        }
        let Some((i, slot)) = cursors.get_mut(k) else {
            break;
        };
        let Some(c) = slot.as_mut() else { continue };
        if let Some(e) = c.take() {
            newest.push((t, *i, e));
        }
        push(k, slot, &mut heads);
    }
    newest
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::log_event::{parse_line, parse_tail};

    const W: &str = "0190aaaa-0000-7000-8000-000000000002";

    #[test]
    fn name_matcher_is_exact() {
        let ok = format!("writer-{W}.jsonl");
        assert_eq!(match_log_name(&ok), Some((W, LogSuffix::Active)));
        assert_eq!(
            match_log_name(&format!("writer-{W}.jsonl.2")),
            Some((W, LogSuffix::Rotated(2)))
        );
        assert_eq!(
            match_log_name(&format!("writer-{W}.jsonl.closed")),
            Some((W, LogSuffix::Closed))
        );
        for bad in [
            format!("writer-{W}.jsonl.3"),
            format!("writer-{W}.json"),
            format!("writer-{W}.jsonl "),
            format!("writer-{}.jsonl", W.to_uppercase()),
            format!("xwriter-{W}.jsonl"),
            "writer-é.jsonl".to_string(),
            "writer-".to_string(),
            format!("writer-{}é.jsonl", &W[..35]),
        ] {
            assert_eq!(match_log_name(&bad), None, "{bad}");
        }
    }

    fn rec(extra: &str) -> String {
        format!(
            r#"{{"version":1,"timestamp":"2026-11-29T10:00:00.000Z","writerId":"{W}","sessionId":"s1","event":"host.activity"{extra}}}"#
        )
    }

    #[test]
    fn optional_fields_dropped_individually() {
        let line = rec(
            r#","busy":"yes","phase":"tool","detail":"juggling","port":70000,"kind":"message","peerName":"a\u0007b","secretField":"x""#,
        );
        let e = parse_line(line.as_bytes(), false).unwrap();
        assert_eq!(e.busy, None);
        assert_eq!(e.phase, Some("tool"));
        assert_eq!(e.detail, None);
        assert_eq!(e.port, None);
        assert_eq!(e.kind, Some("message"));
        assert_eq!(e.peer_name, None);
        assert!(!serde_json::to_string(&e).unwrap().contains("secret"));
    }

    #[test]
    fn required_fields_strict() {
        for bad in [
            rec("").replace("\"version\":1", "\"version\":2"),
            rec("").replace(".000Z", "Z"),
            rec("").replace(W, &W.to_uppercase()),
            rec("").replace("\"s1\"", "\"\""),
            rec("").replace("host.activity", "host.unknown"),
            rec("").replace("\"s1\"", "\"a\\u001bb\""),
        ] {
            assert!(parse_line(bad.as_bytes(), false).is_none(), "{bad}");
        }
        let long = rec(&format!(r#","peerName":"{}""#, "x".repeat(5000)));
        assert!(parse_line(long.as_bytes(), false).is_none());
    }

    #[test]
    fn window_keeps_a_first_line_that_starts_on_a_boundary() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        let l = format!("{}\n", rec(""));
        let n = l.len() as u64;
        std::fs::write(&p, l.repeat(3)).unwrap();
        // The window's first byte is the newline ending the first line: two whole lines.
        let (ev, whole) = log_tail::read_window(&p, 2 * n + 1, false, None);
        assert_eq!((ev.len(), whole), (2, false));
        // One byte less: the second line is cut and dropped.
        let (ev, whole) = log_tail::read_window(&p, 2 * n, false, None);
        assert_eq!((ev.len(), whole), (1, false));
        let (ev, whole) = log_tail::read_window(&p, 100 * n, false, None);
        assert_eq!((ev.len(), whole), (3, true));
    }

    #[test]
    fn tail_drops_partial_lines() {
        let full = format!(
            "{}\n{}\n{}",
            rec(""),
            rec(r#","busy":true"#),
            &rec("")[..20]
        );
        assert_eq!(parse_tail(full.as_bytes(), false, false).len(), 2);
        // Mid-file tail: the first (cut) line goes too.
        assert_eq!(parse_tail(full.as_bytes(), true, false).len(), 1);
        assert!(parse_tail(b"no newline at all", true, false).is_empty());
        assert!(parse_tail(b"", false, false).is_empty());
    }

    #[test]
    fn a_remembered_pass_equals_a_fresh_one_and_sees_every_change() {
        use std::io::Write;
        let root = tempfile::tempdir().unwrap();
        let logs = root.path().join(".pi-intercom/logs");
        std::fs::create_dir_all(&logs).unwrap();
        let a = logs.join(format!("writer-{W}.jsonl"));
        std::fs::write(&a, format!("{}\n", rec(r#","busy":true"#))).unwrap();
        let memo = log_tail::LogMemo::default();
        let fresh = || read_logs(root.path());
        let read_logs = |r: &Path| read_logs_with(r, Some(&memo));
        let first = read_logs(root.path());
        assert_eq!(first.events.len(), 1);
        // Nothing changed: the same result, remembered.
        assert_eq!(read_logs(root.path()), first);
        // Appended to: the new event is seen, exactly as a fresh read sees it.
        let mut f = std::fs::OpenOptions::new().append(true).open(&a).unwrap();
        f.write_all(format!("{}\n", rec(r#","busy":false"#)).as_bytes())
            .unwrap();
        drop(f);
        let grown = read_logs(root.path());
        assert_eq!(grown.events.len(), 2);
        assert_eq!(grown, fresh());
        // Replaced by another file of the same length (a rotation): read again.
        let tmp = logs.join("tmp");
        let body = std::fs::read_to_string(&a)
            .unwrap()
            .replace("\"s1\"", "\"s2\"");
        std::fs::write(&tmp, body).unwrap();
        std::fs::rename(&tmp, &a).unwrap();
        let rotated = read_logs(root.path());
        assert!(rotated.events.iter().all(|e| e.session_id == "s2"));
        assert_eq!(rotated, fresh());
    }
}
