//! Whole lines of a file, newest first, read backward from a line end with `pread` until the
//! caller has seen enough (`Flow::Stop`) or a budget runs out: what `log --since` reads, so that
//! its cost follows the window asked for, not the file's size.
//!
//! A line longer than `line_cap` is not kept (only counted): its start is still sought, so the
//! lines before it are reached, and every byte read counts against `max_bytes`.

use std::fs::File;

use memchr::memrchr;

use crate::fsguard::{self, FsError};

/// What the caller wants after a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    More,
    Stop,
}

/// Bounds of one backward read.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Bytes read at most, huge lines included.
    pub max_bytes: u64,
    /// Lines handed to the caller at most.
    pub max_lines: usize,
    /// Longest line handed to the caller.
    pub line_cap: usize,
}

/// How a backward read ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct BackStats {
    /// Bytes read.
    pub bytes: u64,
    /// Lines handed over.
    pub lines: usize,
    /// Lines longer than `line_cap`, skipped.
    pub huge: u32,
    /// Where the oldest line handed over (or skipped) starts.
    pub from: u64,
    /// A budget ran out before the caller said stop and before the file's start.
    pub truncated: bool,
}

/// First read, then doubling up to `CHUNK_MAX`: the newest lines are usually a few KiB.
const CHUNK_FIRST: u64 = 16 * 1024;
const CHUNK_MAX: u64 = 1024 * 1024;

/// The offset just past the last newline among `len` bytes of `file` (0 when there is none):
/// where complete lines end. What follows it is a line pi is still writing.
pub(crate) fn complete_end(file: &File, len: u64, max_bytes: u64) -> Result<u64, FsError> {
    let mut pos = len;
    let mut read = 0u64;
    let mut chunk = CHUNK_FIRST;
    while pos > 0 && read < max_bytes {
        let n = chunk.min(pos);
        let buf = fsguard::read_at(file, pos - n, n as usize)?;
        if buf.len() as u64 != n {
            // The file shrank under us: nothing past here is trustworthy.
            return Ok(0);
        }
        read += n;
        if let Some(i) = memrchr(b'\n', &buf) {
            return Ok(pos - n + i as u64 + 1);
        }
        pos -= n;
        chunk = (chunk * 2).min(CHUNK_MAX);
    }
    Ok(0)
}

/// Hand the lines of `file` that end at or before `end` (a line end, or 0) to `each`, newest
/// first, without their newline. Empty lines are skipped silently.
pub(crate) fn read_back(
    file: &File,
    end: u64,
    lim: &Limits,
    mut each: impl FnMut(&[u8]) -> Flow,
) -> Result<BackStats, FsError> {
    let mut st = BackStats {
        from: end,
        ..BackStats::default()
    };
    let mut pos = end;
    // The newer part of the line being assembled: pieces newest first.
    let mut pieces: Vec<Vec<u8>> = Vec::new();
    let mut pending = 0usize;
    let mut huge = false;
    let mut chunk = CHUNK_FIRST;
    let mut line = Vec::new();
    // Hands one line over; false when the caller or a budget stops the read.
    let mut emit = |first: &[u8], pieces: &mut Vec<Vec<u8>>, huge: bool, st: &mut BackStats| {
        if huge {
            st.huge = st.huge.saturating_add(1);
            return true;
        }
        line.clear();
        line.extend_from_slice(first);
        for p in pieces.iter().rev() {
            line.extend_from_slice(p);
        }
        if line.is_empty() {
            return true;
        }
        st.lines += 1;
        if each(&line) == Flow::Stop {
            return false;
        }
        if st.lines >= lim.max_lines {
            st.truncated = true;
            return false;
        }
        true
    };
    while pos > 0 {
        if st.bytes >= lim.max_bytes {
            st.truncated = true;
            return Ok(st);
        }
        let n = chunk.min(pos).min(lim.max_bytes - st.bytes);
        let buf = fsguard::read_at(file, pos - n, n as usize)?;
        if buf.len() as u64 != n {
            // Shrunk under us: stop with what was handed over.
            st.truncated = true;
            return Ok(st);
        }
        st.bytes += n;
        let base = pos - n;
        pos = base;
        chunk = (chunk * 2).min(CHUNK_MAX);
        let mut hi = buf.len();
        while let Some(i) = memrchr(b'\n', &buf[..hi]) {
            let piece = &buf[i + 1..hi];
            let too_long = huge || pending + piece.len() > lim.line_cap;
            let go_on = emit(piece, &mut pieces, too_long, &mut st);
            st.from = base + i as u64 + 1;
            pieces.clear();
            pending = 0;
            huge = false;
            if !go_on {
                return Ok(st);
            }
            hi = i;
        }
        let rest = &buf[..hi];
        if huge || pending + rest.len() > lim.line_cap {
            huge = true;
            pieces.clear();
            pending = 0;
        } else if !rest.is_empty() {
            pending += rest.len();
            pieces.push(rest.to_vec());
        }
    }
    // The file's first line.
    if huge || pending > 0 {
        emit(&[], &mut pieces, huge, &mut st);
        st.from = 0;
    }
    Ok(st)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn file(bytes: &[u8]) -> File {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(bytes).unwrap();
        f
    }

    fn lines(bytes: &[u8], lim: Limits, stop_at: Option<&str>) -> (Vec<String>, BackStats) {
        let f = file(bytes);
        let end = complete_end(&f, bytes.len() as u64, u64::MAX).unwrap();
        let mut got = Vec::new();
        let st = read_back(&f, end, &lim, |l| {
            let s = String::from_utf8_lossy(l).into_owned();
            let stop = Some(s.as_str()) == stop_at;
            got.push(s);
            if stop {
                Flow::Stop
            } else {
                Flow::More
            }
        })
        .unwrap();
        (got, st)
    }

    const WIDE: Limits = Limits {
        max_bytes: u64::MAX,
        max_lines: usize::MAX,
        line_cap: usize::MAX,
    };

    #[test]
    fn lines_come_newest_first_and_a_torn_tail_waits() {
        let (got, st) = lines(b"a\nbb\n\nccc\ntorn", WIDE, None);
        assert_eq!(got, ["ccc", "bb", "a"]);
        assert_eq!((st.from, st.truncated, st.huge), (0, false, 0));
        let (got, st) = lines(b"a\nbb\nccc\n", WIDE, Some("bb"));
        assert_eq!(got, ["ccc", "bb"]);
        assert_eq!(st.from, 2);
    }

    #[test]
    fn lines_across_chunks_are_whole_and_huge_ones_are_counted() {
        let long = "x".repeat(100_000);
        let text = format!("first\n{long}\nlast\n");
        let (got, st) = lines(text.as_bytes(), WIDE, None);
        assert_eq!(got, ["last".to_string(), long.clone(), "first".into()]);
        assert_eq!(st.bytes, text.len() as u64);
        let cap = Limits {
            line_cap: 1000,
            ..WIDE
        };
        let (got, st) = lines(text.as_bytes(), cap, None);
        assert_eq!(got, ["last", "first"]);
        assert_eq!(st.huge, 1);
        // The first line huge too.
        let text = format!("{long}\nlast\n");
        let (got, st) = lines(text.as_bytes(), cap, None);
        assert_eq!((got, st.huge, st.from), (vec!["last".to_string()], 1, 0));
    }

    #[test]
    fn budgets_end_the_read() {
        let text = "line\n".repeat(10_000);
        let (got, st) = lines(
            text.as_bytes(),
            Limits {
                max_bytes: 1000,
                ..WIDE
            },
            None,
        );
        assert!(st.truncated && st.bytes == 1000, "{st:?}");
        assert_eq!(got.len(), 199);
        let (got, st) = lines(
            text.as_bytes(),
            Limits {
                max_lines: 7,
                ..WIDE
            },
            None,
        );
        assert_eq!((got.len(), st.truncated), (7, true));
    }
}
