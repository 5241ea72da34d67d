//! The end of one observation log, read backwards: newest line first, only as far as a pass asks.
//!
//! Why: a pass keeps the 500 newest events of all logs, so reading and parsing every line of 32
//! tails (about 8,000 lines for 32 busy logs) was most of a one-shot command's time and of the
//! sidebar's idle CPU. A `Cursor` hands out a file's events newest first and reads an earlier
//! block (4 KiB, doubling up to 64 KiB) only when the one before is used up.
//!
//! What was parsed is remembered per file (in the `LogMemo` of whoever makes passes again; a
//! one-shot command keeps none), known by device, inode, length and mtime: unchanged →
//! reused without reading; grown (the same inode, appended to) → only the bytes after the last
//! complete line are parsed; anything else (truncated, rotated, replaced, rewritten) → read from
//! scratch. Either way a file yields exactly the events a fresh read of the same window yields.
//!
//! The window is the last `cap` bytes: a line belongs to it when it starts after the window's
//! first byte (or at the file's start), so a line cut by the window start is skipped; so is a last
//! line without its newline (still being written).

use std::collections::{HashMap, VecDeque};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use memchr::{memchr, memrchr};

use crate::clock::Ms;
use crate::evidence::log_event::{parse_line, Event, LogSnapshot};
use crate::fsguard::{self, FsError, OpenFile};

/// Files remembered at most (a few passes' worth of the 32 newest logs).
const MAX_CACHED: usize = 128;
/// The first block read from a file's end, then doubled up to `MAX_BLOCK`.
const FIRST_BLOCK: u64 = 4 * 1024;
const MAX_BLOCK: u64 = 64 * 1024;

/// What is known of one file: every valid line in `from..parsed_to` as (start offset, event).
#[derive(Clone)]
struct Memo {
    dev: u64,
    ino: u64,
    len: u64,
    mtime_ms: i64,
    closed: bool,
    /// A line start: lines before it are not parsed yet.
    from: u64,
    /// No line starts after this offset and before `from` (the bytes between were read).
    scanned: u64,
    /// Just past the last complete line.
    parsed_to: u64,
    events: VecDeque<(u64, Event)>,
}

/// What passes over a logs folder read: each file's parsed lines, and the last whole pass with
/// what decided it.
#[derive(Default)]
pub struct LogMemo {
    files: Mutex<HashMap<PathBuf, Memo>>,
    last_pass: Mutex<Option<(PassKey, Arc<LogSnapshot>)>>,
}

/// One file's events, newest first, read backwards on demand.
pub(crate) struct Cursor<'m> {
    path: PathBuf,
    file: OpenFile,
    memo: Memo,
    /// The window's first byte: lines must start after it (or at 0).
    lo: u64,
    /// `memo.events[skip..next]` are not handed out yet; the head is `memo.events[next - 1]`.
    next: usize,
    /// `memo.events[..skip]` lie before the window.
    skip: usize,
    block: u64,
    /// The last block read (it starts at `staged_at`) and its whole lines not parsed yet, as
    /// (start, end) in it, oldest first: a line is parsed only when it is about to be the head.
    staged: Vec<u8>,
    staged_at: u64,
    lines: Vec<(usize, usize)>,
    /// The staged block starts at the window's first byte.
    staged_bottom: bool,
    /// Read down to the window's first byte.
    bottom: bool,
    /// Stopped early: the pass's byte budget ran out, or the file changed under the read.
    stopped: bool,
    /// What was read is worth remembering for the next pass.
    keep: bool,
    /// Where what was read is remembered (none: a one-shot pass).
    remember: Option<&'m LogMemo>,
}

impl<'m> Cursor<'m> {
    /// Open `path` with a window of its last `cap` bytes; bytes read count against `budget`.
    /// What `remember` kept of the file is reused, and `finish` puts it back.
    pub(crate) fn open(
        path: &Path,
        cap: u64,
        closed: bool,
        budget: &mut u64,
        remember: Option<&'m LogMemo>,
    ) -> Result<Cursor<'m>, FsError> {
        let file = fsguard::open_regular(path, None)?;
        let (len, mtime_ms) = (file.len, file.mtime_ms);
        let lo = len.saturating_sub(cap);
        let reusable = remember.and_then(|m| m.recall(path, &file, closed, lo));
        let fresh = reusable.is_none();
        let memo = reusable.unwrap_or(Memo {
            dev: file.dev,
            ino: file.ino,
            len,
            mtime_ms,
            closed,
            from: len,
            scanned: len,
            parsed_to: len,
            events: VecDeque::new(),
        });
        let mut c = Cursor {
            path: path.to_path_buf(),
            file,
            memo,
            lo,
            next: 0,
            skip: 0,
            block: FIRST_BLOCK,
            staged: Vec::new(),
            staged_at: 0,
            lines: Vec::new(),
            staged_bottom: false,
            bottom: false,
            stopped: false,
            keep: true,
            remember,
        };
        if fresh {
            c.read_last_line_end(budget)?;
        } else {
            c.read_appended(budget)?;
        }
        // Remembered lines the window has moved past stay remembered but are not handed out.
        c.skip = c
            .memo
            .events
            .iter()
            .take_while(|(at, _)| *at <= lo && lo > 0)
            .count();
        c.memo.len = len;
        c.memo.mtime_ms = mtime_ms;
        c.bottom |= c.memo.scanned <= lo;
        c.next = c.memo.events.len();
        Ok(c)
    }

    /// A fresh file: find its last newline (reading back as far as the window allows) and stage
    /// the whole lines of what was read.
    fn read_last_line_end(&mut self, budget: &mut u64) -> Result<(), FsError> {
        let end = self.memo.len;
        loop {
            let Some((a, buf)) = self.read_before(end, budget)? else {
                return Ok(());
            };
            match memrchr(b'\n', &buf) {
                Some(i) => {
                    let to = a + i as u64 + 1;
                    self.memo.parsed_to = to;
                    self.memo.from = to;
                    self.memo.scanned = to;
                    let mut buf = buf;
                    buf.truncate(i + 1);
                    self.stage(a, buf);
                    return Ok(());
                }
                // No newline since `a`: the window's start reached means no whole line at all.
                None if a <= self.lo => {
                    self.bottom = true;
                    // No whole line in the window: nothing worth remembering.
                    self.keep = false;
                    return Ok(());
                }
                // A line longer than the block: a bigger one (the window bounds it).
                None => self.block = self.block.saturating_mul(2),
            }
        }
    }

    /// A remembered file that grew: parse the complete lines appended since.
    fn read_appended(&mut self, budget: &mut u64) -> Result<(), FsError> {
        let (from, len) = (self.memo.parsed_to, self.file.len);
        if len <= from {
            return Ok(());
        }
        let want = len - from;
        if want > *budget {
            self.stopped = true;
            self.memo.events.clear();
            self.memo.from = self.memo.parsed_to;
            return Ok(());
        }
        *budget -= want;
        let bytes = fsguard::read_at(&self.file.file, from, want as usize)?;
        let mut pos = 0usize;
        while let Some(n) = bytes.get(pos..).and_then(|r| memchr(b'\n', r)) {
            let line = bytes.get(pos..pos + n).unwrap_or_default();
            if let Some(ev) = parse_line(line, self.memo.closed) {
                self.memo.events.push_back((from + pos as u64, ev));
            }
            pos += n + 1;
        }
        self.memo.parsed_to = from + pos as u64;
        Ok(())
    }

    /// Read the block that ends at `end`, within the window and the budget. `None`: nothing left
    /// to read (the cursor is at its bottom, or stopped).
    fn read_before(
        &mut self,
        end: u64,
        budget: &mut u64,
    ) -> Result<Option<(u64, Vec<u8>)>, FsError> {
        if end <= self.lo {
            self.bottom = true;
            return Ok(None);
        }
        let want = self.block.min(end - self.lo).min(*budget);
        if want == 0 {
            self.stopped = true;
            return Ok(None);
        }
        *budget -= want;
        let a = end - want;
        let buf = fsguard::read_at(&self.file.file, a, want as usize)?;
        if buf.len() as u64 != want {
            // Shrunk while we read: what is left is not this file's tail any more.
            self.stopped = true;
            return Ok(None);
        }
        Ok(Some((a, buf)))
    }

    /// Keep `buf` (bytes `a..from`, ending with a newline) and where its whole lines are; the
    /// first, possibly cut, segment is not one unless the block starts at the file's start.
    fn stage(&mut self, a: u64, buf: Vec<u8>) {
        self.lines.clear();
        let mut pos = 0usize;
        let mut first = a != 0;
        while let Some(n) = buf.get(pos..).and_then(|r| memchr(b'\n', r)) {
            if !first {
                self.lines.push((pos, pos + n));
            }
            first = false;
            pos += n + 1;
        }
        self.staged_bottom = a <= self.lo || a == 0;
        self.staged_at = a;
        self.staged = buf;
    }

    /// The newest event not handed out yet, parsing staged lines and reading earlier blocks
    /// only as needed.
    pub(crate) fn head(&mut self, budget: &mut u64) -> Result<Option<Ms>, FsError> {
        while self.next == self.skip {
            if let Some((s, e)) = self.lines.pop() {
                let at = self.staged_at + s as u64;
                self.memo.from = at;
                self.memo.scanned = at;
                let line = self.staged.get(s..e).unwrap_or_default();
                if let Some(ev) = parse_line(line, self.memo.closed) {
                    self.memo.events.push_front((at, ev));
                    self.next += 1;
                }
                continue;
            }
            if self.staged_bottom {
                self.staged_bottom = false;
                self.bottom = true;
                self.memo.scanned = self.staged_at;
            }
            if self.bottom || self.stopped {
                return Ok(None);
            }
            let Some((a, buf)) = self.read_before(self.memo.from, budget)? else {
                continue;
            };
            // A block with one newline (a line longer than the block) stages nothing and
            // leaves `from` where it was: the next, doubled, block reads further back.
            self.stage(a, buf);
            // No whole line in the block: the one ending at `from` is longer than it, so the
            // next block grows past `MAX_BLOCK` if need be (the window bounds it) rather than
            // reading the same bytes again.
            self.block = if self.lines.is_empty() && !self.staged_bottom {
                self.block.saturating_mul(2)
            } else {
                (self.block * 2).min(MAX_BLOCK)
            };
        }
        Ok(self
            .next
            .checked_sub(1)
            .and_then(|i| self.memo.events.get(i))
            .map(|(_, e)| e.timestamp))
    }

    /// Hand out the head (call `head` first).
    pub(crate) fn take(&mut self) -> Option<Event> {
        if self.next == self.skip {
            return None;
        }
        let i = self.next.checked_sub(1)?;
        self.next = i;
        // A one-shot pass keeps nothing: the event moves out (every one handed out before it
        // went the same way, so it is the last).
        if self.remember.is_none() && i + 1 == self.memo.events.len() {
            return self.memo.events.pop_back().map(|(_, e)| e);
        }
        self.memo.events.get(i).map(|(_, e)| e.clone())
    }

    /// Every line of the file was considered: read down to its first byte, nothing stopped it.
    pub(crate) fn whole_file(&self) -> bool {
        self.bottom && self.lo == 0 && !self.stopped
    }

    /// Remember what was read for the next pass, without the events this pass never reached.
    pub(crate) fn finish(mut self) {
        let Some(memo) = self.remember else {
            return;
        };
        if self.stopped || !self.keep {
            if let Ok(mut c) = memo.files.lock() {
                c.remove(&self.path);
            }
            return;
        }
        // Keep the head (the newest event not handed out) and everything newer.
        let drop = self.next.saturating_sub(1);
        if drop > 0 {
            self.memo.events.drain(..drop);
            if let Some((at, _)) = self.memo.events.front() {
                self.memo.from = *at;
                self.memo.scanned = *at;
            }
        }
        if let Ok(mut c) = memo.files.lock() {
            if c.len() >= MAX_CACHED && !c.contains_key(&self.path) {
                c.clear();
            }
            c.insert(self.path, self.memo);
        }
    }
}

/// What decides a whole pass over a logs folder: the folder, what the listing already said
/// (truncation, errors) and each chosen file's name, inode, length and mtime.
pub(crate) type PassKey = (
    PathBuf,
    bool,
    Vec<&'static str>,
    Vec<(OsString, u64, u64, i64)>,
);

impl LogMemo {
    /// What was parsed of `path` when it is still good for `file` (opened now, its window
    /// starting at `lo`): the same file, not shrunk, only appended to, parsed far enough back.
    fn recall(&self, path: &Path, file: &OpenFile, closed: bool, lo: u64) -> Option<Memo> {
        let files = self.files.lock().ok()?;
        let p = files.get(path)?;
        let same = p.dev == file.dev
            && p.ino == file.ino
            && p.closed == closed
            && file.len >= p.len
            && p.parsed_to >= lo
            && (file.len > p.len || p.mtime_ms == file.mtime_ms);
        same.then(|| p.clone())
    }

    /// The previous pass's result when nothing it read has changed since: the same files, none
    /// appended to, rotated or replaced (the same rule as for one file, applied to the whole
    /// pass).
    pub(crate) fn recall_pass(&self, key: &PassKey) -> Option<Arc<LogSnapshot>> {
        let last = self.last_pass.lock().ok()?;
        last.as_ref()
            .filter(|(k, _)| k == key)
            .map(|(_, s)| s.clone())
    }

    /// Remember a pass that read everything it chose without an error.
    pub(crate) fn remember_pass(&self, key: PassKey, snap: &Arc<LogSnapshot>) {
        if let Ok(mut last) = self.last_pass.lock() {
            *last = snap.errors.is_empty().then(|| (key, snap.clone()));
        }
    }

    /// Forget every file under `dir` that this pass did not read (rotated away, no longer among
    /// the newest), so the memo holds what the next pass may need and nothing else.
    pub(crate) fn keep_only(&self, dir: &Path, read: &[PathBuf]) {
        if let Ok(mut c) = self.files.lock() {
            c.retain(|p, _| !p.starts_with(dir) || read.contains(p));
        }
    }
}

/// All events of a file's window, oldest first, and whether the window covered the whole file.
#[cfg(test)]
pub(crate) fn read_window(
    path: &Path,
    cap: u64,
    closed: bool,
    memo: Option<&LogMemo>,
) -> (Vec<Event>, bool) {
    let mut budget = u64::MAX;
    let mut c = Cursor::open(path, cap, closed, &mut budget, memo).unwrap();
    let mut out = Vec::new();
    while c.head(&mut budget).unwrap().is_some() {
        out.extend(c.take());
    }
    let whole = c.whole_file();
    c.finish();
    out.reverse();
    (out, whole)
}

#[cfg(test)]
#[path = "log_tail_tests.rs"]
mod tests;
