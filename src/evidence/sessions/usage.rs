//! Tokens and cost as pi records them: the `usage` of every assistant message in a session file
//! (docs/interop.md §6), summed forward from the start, line by line, each byte read once.
//!
//! Every assistant message counts, on every branch (an attempt pi retried, a branch left by
//! `/tree`): each was a provider call that was paid for. A tally says how far it has read
//! (`counted_to`); it is exact only once that is the file's length. A reader that stops early
//! (a one-shot command's budget) shows its sums as "at least".
//!
//! Finding the numbers: a line is an assistant message when it starts as pi writes one
//! (`{"type":"message"` … the message's first key `"role":"assistant"`); its usage is the last
//! `"usage":{` object of the line, which pi writes after the content. Text inside a JSON string
//! cannot fake either key: quotes there are escaped. A line longer than `LINE_CAP` is judged by
//! its first and last `SKIM` bytes only.

use std::cell::Cell;
use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use memchr::{memchr, memmem};
use serde::{Deserialize, Serialize, Serializer};

use crate::fsguard;

/// Bytes a pass of the sidebar (which keeps a `UsageMemo`) reads forward for usage, over all
/// its seats: a file bigger than what is left is counted on over later passes, each byte once.
pub(crate) const SIDEBAR_PASS_BUDGET: u64 = 16 * 1024 * 1024;
/// Bytes a one-shot command (`scan`, `status`, `explain`) reads forward for usage, over all its
/// seats; what it could not reach is marked "at least".
pub const ONE_SHOT_BUDGET: u64 = 4 * 1024 * 1024;
/// Most files a `UsageMemo` follows (a full memo starts over).
pub(crate) const FILES_KEPT: usize = 4096;

/// Longest line read whole; a longer one is judged by its head and tail.
const LINE_CAP: usize = 1024 * 1024;
/// What is kept of a long line's head and tail.
const SKIM: usize = 64 * 1024;
/// Bytes read per `pread`.
const CHUNK: usize = 1024 * 1024;
/// Largest token count and cost believed for one call (anything above is not pi's).
const MAX_CALL_TOKENS: u64 = 1 << 40;
const MAX_CALL_COST: f64 = 1e6;

/// Sums of `usage` fields: tokens, and the cost in pi's unit (the model's price currency, US
/// dollars for pi's built-in prices) kept in billionths so sums are exact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    /// Provider calls counted (assistant messages with a usage).
    pub calls: u64,
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub cost_nanos: u64,
}

impl Usage {
    pub fn add(&mut self, o: &Usage) {
        self.calls = self.calls.saturating_add(o.calls);
        self.input = self.input.saturating_add(o.input);
        self.output = self.output.saturating_add(o.output);
        self.cache_read = self.cache_read.saturating_add(o.cache_read);
        self.cache_write = self.cache_write.saturating_add(o.cache_write);
        self.cost_nanos = self.cost_nanos.saturating_add(o.cost_nanos);
    }

    /// The cost in pi's unit.
    pub fn cost(&self) -> f64 {
        self.cost_nanos as f64 / 1e9
    }
}

/// How far a file's usage has been counted, and the sums so far.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UsageTally {
    pub usage: Usage,
    /// Bytes `[0, counted_to)` are counted (always at a line start, or inside a long line).
    pub counted_to: u64,
    /// A line longer than `LINE_CAP` that started before `counted_to` and has not ended yet:
    /// its first `SKIM` bytes, and its last `SKIM` bytes read so far.
    long: Option<LongLine>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct LongLine {
    head: Vec<u8>,
    tail: Vec<u8>,
}

impl UsageTally {
    /// A tally that starts at byte `at` (a line start: the header's end).
    pub fn starting_at(at: u64) -> UsageTally {
        UsageTally {
            counted_to: at,
            ..UsageTally::default()
        }
    }

    /// Every byte of a file of `len` bytes is counted.
    pub fn complete(&self, len: u64) -> bool {
        self.counted_to >= len && self.long.is_none()
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawUsage {
    #[serde(default)]
    input: u64,
    #[serde(default)]
    output: u64,
    #[serde(default)]
    cache_read: u64,
    #[serde(default)]
    cache_write: u64,
    #[serde(default)]
    cost: Option<RawCost>,
}

#[derive(Deserialize)]
struct RawCost {
    #[serde(default)]
    total: f64,
}

/// The usage of one line (whole, or a long line's head and tail), if it is an assistant
/// message with one.
fn usage_of(head: &[u8], tail: &[u8]) -> Option<Usage> {
    let head = head.trim_ascii_start();
    if !head.starts_with(b"{\"type\":\"message\"") {
        return None;
    }
    // The message's own role: the first `"role":` of the line (pi writes `message` with `role`
    // first, after the entry's type, id, parentId and timestamp).
    let r = memmem::find(head, b"\"role\":")?;
    if !head[r + 7..].starts_with(b"\"assistant\"") {
        return None;
    }
    let key = b"\"usage\":";
    let at = memmem::rfind(tail, key)?;
    let mut it =
        serde_json::Deserializer::from_slice(&tail[at + key.len()..]).into_iter::<RawUsage>();
    let u = it.next()?.ok()?;
    let cost = u.cost.map_or(0.0, |c| c.total);
    let tokens = [u.input, u.output, u.cache_read, u.cache_write];
    if tokens.iter().any(|t| *t > MAX_CALL_TOKENS)
        || !cost.is_finite()
        || !(0.0..=MAX_CALL_COST).contains(&cost)
    {
        return None;
    }
    Some(Usage {
        calls: 1,
        input: u.input,
        output: u.output,
        cache_read: u.cache_read,
        cache_write: u.cache_write,
        cost_nanos: (cost * 1e9).round() as u64,
    })
}

/// Count the lines of `buf`, which starts at `tally.counted_to`, and advance `counted_to` past
/// every line counted. A line counts once its newline is read (pi writes whole lines, each
/// ending in one): an unfinished line is left for the next read, a long one carried.
pub fn count(tally: &mut UsageTally, buf: &[u8]) {
    let mut pos = 0usize;
    // Bounded: each iteration consumes at least one byte or ends.
    while pos < buf.len() {
        let rest = &buf[pos..];
        let nl = memchr(b'\n', rest);
        if let Some(long) = tally.long.as_mut() {
            let end = nl.unwrap_or(rest.len());
            keep_tail(&mut long.tail, &rest[..end]);
            let Some(i) = nl else {
                tally.counted_to += rest.len() as u64;
                return;
            };
            if let Some(u) = tally.long.take().and_then(|l| usage_of(&l.head, &l.tail)) {
                tally.usage.add(&u);
            }
            tally.counted_to += i as u64 + 1;
            pos += i + 1;
            continue;
        }
        match nl {
            Some(i) if i <= LINE_CAP => {
                let line = &rest[..i];
                if let Some(u) = usage_of(line, line) {
                    tally.usage.add(&u);
                }
                tally.counted_to += i as u64 + 1;
                pos += i + 1;
            }
            // A line longer than LINE_CAP: carry its head and go on with its tail.
            _ if nl.is_some() || rest.len() > LINE_CAP => {
                let skip = SKIM.min(rest.len());
                tally.long = Some(LongLine {
                    head: rest[..skip].to_vec(),
                    tail: Vec::new(),
                });
                tally.counted_to += skip as u64;
                pos += skip;
            }
            // An unfinished line that may still fit: read it again whole next time.
            _ => return,
        }
    }
}

fn keep_tail(tail: &mut Vec<u8>, more: &[u8]) {
    if more.len() >= SKIM {
        tail.clear();
        tail.extend_from_slice(&more[more.len() - SKIM..]);
        return;
    }
    let over = (tail.len() + more.len()).saturating_sub(SKIM);
    tail.drain(..over);
    tail.extend_from_slice(more);
}

/// Read `file` (of `len` bytes) forward from where `tally` stopped, about `budget` bytes (a
/// line that does not fit is read whole, up to `LINE_CAP`); the bytes read. A read error
/// leaves the tally where the last good read left it.
pub fn advance(file: &File, len: u64, tally: &mut UsageTally, budget: u64) -> u64 {
    let mut read = 0u64;
    // Bounded: each iteration reads up to CHUNK more and counts at least one line, until
    // `budget` or the end.
    while tally.counted_to < len && read < budget {
        // A hole right here is jumped over (below); one further on ends this read there.
        let hole = next_hole(file, tally.counted_to).unwrap_or(len);
        let left = len.min(hole.max(tally.counted_to + 1)) - tally.counted_to;
        let want = left
            .min((budget - read).max(LINE_CAP as u64 + 1))
            .min(CHUNK as u64 * 2);
        let Ok(buf) = fsguard::read_at(file, tally.counted_to, want as usize) else {
            break;
        };
        if buf.is_empty() {
            break;
        }
        read += buf.len() as u64;
        // A hole (a sparse or zero-filled region) where a line should start: pi never writes a
        // NUL, so it holds no usage. Jump to the next data the file system knows of; what is
        // left of the region up to the next newline is skipped as one long line.
        let in_hole = tally
            .long
            .as_ref()
            .is_some_and(|l| l.head.first() == Some(&0));
        if buf[0] == 0 && (tally.long.is_none() || in_hole) {
            tally.long = Some(LongLine {
                head: vec![0],
                tail: Vec::new(),
            });
            if let Some(next) = next_data(file, tally.counted_to).filter(|n| *n > tally.counted_to)
            {
                tally.counted_to = next.min(len);
                continue;
            }
        }
        let before = tally.counted_to;
        count(tally, &buf);
        if tally.counted_to == before {
            // An unfinished last line: pi is writing it.
            break;
        }
    }
    read
}

/// The next hole at or after `at` (`SEEK_HOLE`; the file's end when it has none); `None` when
/// the file system cannot say.
fn next_hole(file: &File, at: u64) -> Option<u64> {
    seek(file, at, nix::unistd::Whence::SeekHole)
}

/// The next offset at or after `at` that holds data (`SEEK_DATA`); `None` when the file system
/// cannot say.
fn next_data(file: &File, at: u64) -> Option<u64> {
    seek(file, at, nix::unistd::Whence::SeekData)
}

fn seek(file: &File, at: u64, whence: nix::unistd::Whence) -> Option<u64> {
    use std::os::fd::AsRawFd;
    let off = nix::unistd::lseek(file.as_raw_fd(), i64::try_from(at).ok()?, whence).ok()?;
    u64::try_from(off).ok()
}

/// Each followed session file's tally, by path, with the file's identity (device, inode): a
/// file replaced under the same name starts over. Kept in the sidebar's `ScanMemory`.
pub struct UsageMemo {
    max: usize,
    entries: Mutex<HashMap<PathBuf, (FileId, UsageTally)>>,
}

/// A file's device and inode.
type FileId = (u64, u64);

impl Default for UsageMemo {
    fn default() -> Self {
        UsageMemo {
            max: FILES_KEPT,
            entries: Mutex::new(HashMap::new()),
        }
    }
}

/// A seat's tokens and cost, and whether every byte of its file is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct UsageView {
    pub usage: Usage,
    /// Part of the file was not read (a budget): the sums are a lower bound.
    pub at_least: bool,
}

impl Serialize for UsageView {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let u = &self.usage;
        UsageJson {
            calls: u.calls,
            input: u.input,
            output: u.output,
            cache_read: u.cache_read,
            cache_write: u.cache_write,
            cost: u.cost(),
            at_least: self.at_least,
        }
        .serialize(s)
    }
}

/// A seat's usage as the views show it: the counts, the cost in dollars, and `atLeast`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct UsageJson {
    calls: u64,
    input: u64,
    output: u64,
    cache_read: u64,
    cache_write: u64,
    cost: f64,
    at_least: bool,
}

/// A count as people read it: `950`, `12.3k`, `4.1M`.
pub(crate) fn short_count(n: u64) -> String {
    match n {
        n if n < 1000 => n.to_string(),
        n if n < 1_000_000 => format!("{:.1}k", n as f64 / 1e3),
        n => format!("{:.1}M", n as f64 / 1e6),
    }
}

/// `≥ 12.3k in · 3.1k out · $0.1234` (`≥` while part of a file is not counted yet). The
/// cost's unit is pi's (US dollars for its built-in prices).
impl std::fmt::Display for UsageView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let u = &self.usage;
        let tokens_in = u
            .input
            .saturating_add(u.cache_read)
            .saturating_add(u.cache_write);
        write!(
            f,
            "{}{} in · {} out · ",
            if self.at_least { "≥ " } else { "" },
            short_count(tokens_in),
            short_count(u.output),
        )?;
        // pi records a cost only for a model with pricing: none at all is not "$0.0000".
        match u.cost() {
            c if c > 0.0 => write!(f, "${c:.4}"),
            _ if u.calls > 0 => f.write_str("cost unknown (no pricing)"),
            _ => f.write_str("$0"),
        }
    }
}

impl UsageView {
    /// The view a record's `usage` member holds (as `Serialize` writes it; another host's
    /// board): `None` unless every count is a whole number and the cost a finite number ≥ 0,
    /// each within what one seat could hold.
    pub fn from_json(v: &serde_json::Value) -> Option<UsageView> {
        let n = |k: &str| v.get(k)?.as_u64().filter(|n| *n <= MAX_CALL_TOKENS << 20);
        let cost = v.get("cost")?.as_f64().filter(|c| c.is_finite())?;
        if !(0.0..=MAX_CALL_COST * 1e6).contains(&cost) {
            return None;
        }
        Some(UsageView {
            usage: Usage {
                calls: n("calls")?,
                input: n("input")?,
                output: n("output")?,
                cache_read: n("cacheRead")?,
                cache_write: n("cacheWrite")?,
                cost_nanos: (cost * 1e9).round() as u64,
            },
            at_least: v.get("atLeast")?.as_bool()?,
        })
    }

    /// Add another seat's (totals).
    pub fn add(&mut self, o: &UsageView) {
        self.usage.add(&o.usage);
        self.at_least |= o.at_least;
    }
}

/// The usage of the session file at `path` (`read_len` bytes when its summary was read),
/// whose first read counted `head` (the summary's `usage`), read forward from where `memo` (or
/// `head`, without one) stopped, within what is left of the pass's `budget` (which it lowers
/// by what it reads). Without a memo and a budget, `head` is all: nothing more is looked at.
pub(crate) fn tally(
    path: &Path,
    head: &UsageTally,
    read_len: u64,
    memo: Option<&UsageMemo>,
    budget: &Cell<u64>,
) -> UsageView {
    if memo.is_none() && budget.get() == 0 {
        return view(head, read_len);
    }
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return view(head, u64::MAX);
    };
    use std::os::unix::fs::MetadataExt;
    let (id, len) = ((meta.dev(), meta.ino()), meta.len());
    let known = memo.and_then(|m| {
        let map = m.entries.lock().ok()?;
        map.get(path)
            .filter(|(k, t)| *k == id && t.counted_to <= len)
            .map(|(_, t)| t.clone())
    });
    // Where to go on from: what was counted before, else the summary's first read (when it is
    // of this file as it is now: no longer than it).
    let mut t = match known {
        Some(t) => t,
        None if head.counted_to <= len && head.counted_to > 0 => head.clone(),
        None => UsageTally::default(),
    };
    if !t.complete(len) && budget.get() > 0 {
        if let Ok(f) = fsguard::open_regular(path, None) {
            if (f.dev, f.ino) == id {
                let read = advance(&f.file, f.len, &mut t, budget.get());
                budget.set(budget.get().saturating_sub(read));
            }
        }
    }
    if let Some(m) = memo {
        if let Ok(mut map) = m.entries.lock() {
            if map.len() >= m.max && !map.contains_key(path) {
                map.clear();
            }
            map.insert(path.to_path_buf(), (id, t.clone()));
        }
    }
    view(&t, len)
}

fn view(t: &UsageTally, len: u64) -> UsageView {
    UsageView {
        usage: t.usage,
        at_least: !t.complete(len),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assistant(input: u64, output: u64, cost: f64, text: &str) -> String {
        serde_json::json!({"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:00Z",
            "message":{"role":"assistant","content":[{"type":"text","text":text}],"provider":"p",
            "model":"m","usage":{"input":input,"output":output,"cacheRead":1,"cacheWrite":2,
            "totalTokens":input+output,"cost":{"input":0,"output":0,"total":cost}},"stopReason":"stop"}})
        .to_string()
    }

    fn user(text: &str) -> String {
        serde_json::json!({"type":"message","id":"u","parentId":null,"timestamp":"2026-01-01T00:00:00Z",
            "message":{"role":"user","content":text,"usage":{"input":999}}})
        .to_string()
    }

    fn file_of(lines: &[String]) -> Vec<u8> {
        lines
            .iter()
            .flat_map(|l| format!("{l}\n").into_bytes())
            .collect()
    }

    #[test]
    fn a_view_reads_back_what_it_wrote_and_refuses_what_no_seat_holds() {
        let v = UsageView {
            usage: Usage {
                calls: 3,
                input: 1200,
                output: 340,
                cache_read: 5,
                cache_write: 7,
                cost_nanos: 123_456_789,
            },
            at_least: true,
        };
        let json = serde_json::to_value(v).unwrap();
        assert_eq!(UsageView::from_json(&json), Some(v));
        for bad in [
            serde_json::json!({"calls": -1, "input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "cost": 0.0, "atLeast": false}),
            serde_json::json!({"calls": 1, "input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "cost": -0.5, "atLeast": false}),
            serde_json::json!({"calls": 1, "input": "9", "output": 0, "cacheRead": 0, "cacheWrite": 0, "cost": 0.0, "atLeast": false}),
            serde_json::json!({"calls": 1, "input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "cost": 1e300, "atLeast": false}),
            serde_json::json!({"calls": 1}),
            serde_json::json!(null),
        ] {
            assert_eq!(UsageView::from_json(&bad), None, "{bad}");
        }
    }

    #[test]
    fn assistant_usages_are_summed_and_nothing_else() {
        let bytes = file_of(&[
            r#"{"type":"session","version":3,"id":"s","cwd":"/"}"#.into(),
            user(r#"fake "usage":{"input":5} and "role":"assistant""#),
            assistant(100, 3, 0.25, r#"text with "usage":{"input":7}"#),
            assistant(10, 1, 0.5, "x"),
        ]);
        let mut t = UsageTally::default();
        count(&mut t, &bytes);
        assert_eq!(t.counted_to, bytes.len() as u64);
        assert!(t.complete(bytes.len() as u64));
        assert_eq!(
            t.usage,
            Usage {
                calls: 2,
                input: 110,
                output: 4,
                cache_read: 2,
                cache_write: 4,
                cost_nanos: 750_000_000
            }
        );
    }

    #[test]
    fn a_tally_continues_where_it_stopped_and_reads_each_byte_once() {
        let lines: Vec<String> = (0..50).map(|i| assistant(i, 1, 0.01, "y")).collect();
        let bytes = file_of(&lines);
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        std::fs::write(&p, &bytes).unwrap();
        let f = File::open(&p).unwrap();
        let len = bytes.len() as u64;
        let mut t = UsageTally::default();
        let mut total_read = 0;
        // Small budgets: many reads, each ending mid-line.
        for _ in 0..1000 {
            if t.complete(len) {
                break;
            }
            total_read += advance(&f, len, &mut t, 333);
        }
        assert!(t.complete(len));
        assert_eq!(t.usage.calls, 50);
        assert_eq!(t.usage.input, (0..50).sum::<u64>());
        // Each unfinished line is read again once more at most.
        assert!(total_read < len + 50 * 333, "{total_read}");
        // Appended later: only the new line is read.
        let more = format!("{}\n", assistant(1000, 1, 1.0, "z"));
        let mut all = bytes.clone();
        all.extend_from_slice(more.as_bytes());
        std::fs::write(&p, &all).unwrap();
        let f = File::open(&p).unwrap();
        let read = advance(&f, all.len() as u64, &mut t, 1 << 20);
        assert_eq!(read, more.len() as u64);
        assert_eq!(t.usage.calls, 51);
    }

    #[test]
    fn a_hole_is_jumped_over_and_holds_no_usage() {
        use std::os::unix::fs::FileExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(true)
            .read(true)
            .write(true)
            .open(&p)
            .unwrap();
        let head = format!("{}\n", assistant(5, 1, 0.5, "a"));
        let tail = format!("\n{}\n", assistant(7, 1, 0.25, "b"));
        let len: u64 = 1 << 30;
        f.write_all_at(head.as_bytes(), 0).unwrap();
        f.set_len(len).unwrap();
        f.write_all_at(tail.as_bytes(), len - tail.len() as u64)
            .unwrap();
        let mut t = UsageTally::default();
        let mut read = 0;
        for _ in 0..10 {
            read += advance(&f, len, &mut t, 8 << 20);
        }
        assert!(t.complete(len));
        assert_eq!((t.usage.calls, t.usage.input), (2, 12));
        assert!(read < 16 << 20, "read {read} bytes of a 1 GiB sparse file");
    }

    #[test]
    fn a_huge_line_is_judged_by_its_head_and_tail() {
        let big = "w".repeat(3 * 1024 * 1024);
        let bytes = file_of(&[assistant(40, 2, 1.5, &big), assistant(1, 1, 0.0, "s")]);
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        std::fs::write(&p, &bytes).unwrap();
        let f = File::open(&p).unwrap();
        let len = bytes.len() as u64;
        let mut t = UsageTally::default();
        for _ in 0..100 {
            advance(&f, len, &mut t, 1024 * 1024);
        }
        assert!(t.complete(len), "{:?}", t.counted_to);
        assert_eq!((t.usage.calls, t.usage.input, t.usage.cost()), (2, 41, 1.5));
    }
}
