//! pi session files: read one file from the end (cost independent of its size), and find files
//! by session id.
//!
//! Why from the end: a pi session file only grows, lines of several MiB (images, tool output) and
//! files of many GiB are normal, and the board needs only the newest entries on the current
//! branch plus the task (the first user message, near the start). So a read is: the header line,
//! a short bounded forward read for the task, and a backward scan with `pread` that stops as soon
//! as the newest entries decide the seat's state. Lines longer than a parse cap are skimmed (their
//! first and last 64 KiB), never loaded whole.

use std::fmt;
use std::path::{Path, PathBuf};

use memchr::memchr;

use crate::clock::{parse_iso, Ms};
use crate::evidence::memo::Memo;
use crate::fsguard::{self, FsError};
use crate::text;

/// Longest header line accepted.
const HEADER_MAX: usize = 64 * 1024;
/// Forward read budget for the task (first user message).
const HEAD_MAX: u64 = 1024 * 1024;
/// Chunk size for forward and normal backward reads.
const CHUNK: u64 = 64 * 1024;
/// First read at each end: small, since the header, the task and the deciding entries are
/// usually within a few KiB; later reads double up to CHUNK.
const FIRST_READ: u64 = 16 * 1024;
/// Lines up to this size are parsed whole; longer ones are skimmed.
const LINE_PARSE_CAP: usize = 1024 * 1024;
/// How much of each end of a skimmed line is read.
const SKIM_WINDOW: usize = 64 * 1024;
/// Chunk size used while seeking the start of a huge line.
const SEEK_CHUNK: u64 = 1024 * 1024;
/// Total bytes a backward scan may read, huge lines included.
const TAIL_BUDGET: u64 = 64 * 1024 * 1024;
/// The most one `read_session` reads from a file, however large: header, head and tail budgets.
pub const READ_BUDGET: u64 = HEADER_MAX as u64 + 1 + HEAD_MAX + TAIL_BUDGET;
/// Most entries kept from the tail.
const MAX_ENTRIES: usize = 256;
/// Cap on captured text per entry (bytes, cut on a char boundary).
const TEXT_CAP: usize = 8 * 1024;
/// Cap on captured short strings (ids, types, models).
const SHORT_CAP: usize = 256;
/// Cap on captured error messages.
const ERROR_CAP: usize = 2 * 1024;
/// Public length limits of summary fields, in characters.
const TASK_CHARS: usize = 240;
const ASSISTANT_CHARS: usize = 500;
const ERROR_CHARS: usize = 500;
/// The newest user text kept for the sidebar's preview, in characters.
const USER_CHARS: usize = 1000;
const FIRST_LINE_CHARS: usize = 512;
/// Once this many branch entries are known, stop looking further back for assistant text.
const ENOUGH_BRANCH: usize = 32;
/// Nor read more than this looking for it (big tool results between wordless tool calls).
const TEXT_SEARCH_BUDGET: u64 = 1024 * 1024;

/// Why a session file could not be read. `code()` is fixed and content-free.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionError {
    /// The file itself was refused or unreadable (see `FsError::code`).
    Fs(FsError),
    /// The file has no bytes at all.
    Empty,
    /// The first line is not a pi session header (`{"type":"session","id":..,"cwd":..}`).
    InvalidHeader,
}

impl SessionError {
    /// Fixed error code for users and JSON.
    pub fn code(self) -> &'static str {
        match self {
            SessionError::Fs(e) => e.code(),
            SessionError::Empty => "empty_file",
            SessionError::InvalidHeader => "invalid_header",
        }
    }
}

impl fmt::Display for SessionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

impl std::error::Error for SessionError {}

impl From<FsError> for SessionError {
    fn from(e: FsError) -> Self {
        SessionError::Fs(e)
    }
}

/// Why the newest lines of a session file could not be read (met before any readable entry).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TailDamage {
    /// NUL bytes (a zero-filled or sparse tail, as a crash can leave).
    Hole,
    /// The last line is cut: no newline, and not a whole entry.
    Cut,
    /// The newest complete line is not a valid entry (garbage after valid lines).
    Malformed,
}

impl TailDamage {
    /// Fixed reason code.
    pub fn code(self) -> &'static str {
        match self {
            TailDamage::Hole => "session_tail_hole",
            TailDamage::Cut => "session_tail_cut",
            TailDamage::Malformed => "session_tail_malformed",
        }
    }
}

/// One entry on the conversational branch, reduced to what classification needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BranchEntry {
    /// Top-level `type`.
    pub kind: EntryKind,
    /// Entry id (absent in old v1 files).
    pub id: Option<String>,
    /// When the entry was appended (top-level `timestamp`).
    pub timestamp: Option<Ms>,
    /// For messages.
    pub role: Option<Role>,
    /// For assistant messages.
    pub stop_reason: Option<StopReason>,
    /// The message has at least one `toolCall` content block.
    pub has_tool_call: bool,
    /// First non-blank line of the message's text blocks (thinking excluded), raw, ≤ 512 chars.
    pub first_text_line: Option<String>,
    /// `context_edit`: the entry it edits.
    pub target_id: Option<String>,
    /// The line was too long to parse whole; fields come from its first and last 64 KiB.
    pub skimmed: bool,
}

/// A tool call pi is running: the last call's name (unknown for a skimmed line) and when the
/// assistant message that made it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunningTool {
    pub name: Option<String>,
    pub since: Option<Ms>,
}

/// What the board needs from one pi session file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionSummary {
    /// The file read.
    pub path: PathBuf,
    /// Header `id`: confirm a file found by name with this.
    pub session_id: String,
    /// Header `cwd` (raw; views sanitize).
    pub cwd: String,
    /// Header `timestamp` (when pi started).
    pub header_timestamp: Option<Ms>,
    /// File length when opened.
    pub file_len: u64,
    /// File mtime when opened.
    pub mtime_ms: Ms,
    /// First user message, collapsed to one line, ≤ 240 chars.
    pub task: Option<String>,
    /// Timestamp of the newest message entry.
    pub last_activity: Option<Ms>,
    /// Latest `model_change` or assistant turn on the branch, whichever is later.
    pub model: Option<String>,
    /// Provider of that same entry.
    pub provider: Option<String>,
    /// Newest assistant text on the branch, ≤ 500 chars, raw (views sanitize).
    pub last_assistant_text: Option<String>,
    /// `errorMessage` when the newest turn ended in `error` or `aborted`, ≤ 500 chars, raw.
    pub last_error: Option<String>,
    /// What the newest reply asks when it asks for input (`question::question_of`),
    /// raw (views sanitize).
    pub question: Option<String>,
    /// Newest user text on the branch (within the entries read), ≤ 1000 chars, raw.
    pub last_user_text: Option<String>,
    /// The tool the newest turn is running: the deciding entry is an assistant message with
    /// tool calls and no result has come back yet.
    pub running_tool: Option<RunningTool>,
    /// Malformed lines met in the tail window.
    pub skipped_lines: u32,
    /// Id of the newest entry (the branch tip).
    pub newest_entry_id: Option<String>,
    /// The conversational branch within the tail window, newest first.
    pub branch: Vec<BranchEntry>,
    /// Entries without ids (old v1 files): the whole tail is one linear branch.
    pub linear: bool,
    /// The backward scan hit a byte budget, a hole (NUL bytes) or the entry cap before the
    /// branch was complete.
    pub tail_truncated: bool,
    /// The newest lines could not be read: the state they would decide is unknown.
    pub tail_damage: Option<TailDamage>,
    /// Tokens and cost of the lines the first read held (`usage::count`): the whole file when
    /// it was that small, else a start that the scan's memory continues (or "at least").
    pub usage: usage::UsageTally,
}

pub(crate) mod backward;
mod entry;
mod index;
mod parse;
pub(crate) mod question;
mod skim;
mod tail;
pub(crate) mod timeline;
mod timeline_line;
pub(crate) mod usage;

pub(crate) use entry::{EntryKind, Role, StopReason};
pub(crate) use index::{default_session_dirs, SessionIndex};
pub use index::{index_sessions, newest_session_in, session_dirs_from, session_id_from_name};
use parse::parse_line;
use tail::{scan_tail, Tail};
// The observation logs split lines with the same word-at-a-time search.

// ---------------------------------------------------------------------------------------------
// Header and head.

struct Header {
    id: String,
    cwd: String,
    timestamp: Option<Ms>,
    /// Offset just past the header's newline (or the file end).
    end: u64,
    /// Bytes already read after the header (the start of the head).
    rest: Vec<u8>,
}

fn read_header(file: &std::fs::File, file_len: u64) -> Result<Header, SessionError> {
    if file_len == 0 {
        return Err(SessionError::Empty);
    }
    let mut buf = fsguard::read_at(file, 0, FIRST_READ.min(file_len) as usize)?;
    if memchr(b'\n', &buf).is_none() && (buf.len() as u64) < file_len {
        let want = (HEADER_MAX as u64 + 1).min(file_len) as usize;
        buf = fsguard::read_at(file, 0, want)?;
    }
    let (line, end) = match memchr(b'\n', &buf) {
        Some(i) => (&buf[..i], i as u64 + 1),
        None if (buf.len() as u64) == file_len && buf.len() <= HEADER_MAX => (&buf[..], file_len),
        None => return Err(SessionError::InvalidHeader),
    };
    const FIELDS: [&str; 4] = ["type", "id", "cwd", "timestamp"];
    let obj = crate::evidence::log_line::Fields::parse_named(line, &FIELDS)
        .ok_or(SessionError::InvalidHeader)?;
    if obj.str("type").as_deref() != Some("session") {
        return Err(SessionError::InvalidHeader);
    }
    let id = obj
        .str("id")
        .filter(|s| !s.is_empty() && s.len() <= SHORT_CAP)
        .ok_or(SessionError::InvalidHeader)?;
    let cwd = obj.str("cwd").ok_or(SessionError::InvalidHeader)?;
    Ok(Header {
        id: id.into_owned(),
        cwd: cwd.into_owned(),
        timestamp: obj.str("timestamp").as_deref().and_then(parse_iso),
        end,
        rest: buf.get(end as usize..).unwrap_or_default().to_vec(),
    })
}

/// The first user message with text, read forward from the header within HEAD_MAX bytes.
/// Stops at the first malformed or oversize line: the task is then unknown.
fn read_task(file: &std::fs::File, file_len: u64, from: u64, rest: Vec<u8>) -> Option<String> {
    let limit = file_len.min(from.saturating_add(HEAD_MAX));
    let mut pos = from + rest.len() as u64;
    let mut buf = rest;
    // Bounded: each iteration reads up to CHUNK more until `limit`.
    loop {
        let mut start = 0;
        while let Some(i) = memchr(b'\n', &buf[start..]) {
            let line = &buf[start..start + i];
            start += i + 1;
            if let Some(task) = task_from(line)? {
                return Some(task);
            }
        }
        buf.drain(..start);
        if memchr(0, &buf).is_some() {
            // A hole (sparse or zeroed region) where the next line should be.
            return None;
        }
        if pos >= limit {
            // The remainder has no newline: a last line, or beyond the budget.
            if limit == file_len && !buf.is_empty() {
                return task_from(&buf)?;
            }
            return None;
        }
        let n = CHUNK.min(limit - pos) as usize;
        let chunk = fsguard::read_at(file, pos, n).ok()?;
        if chunk.is_empty() {
            return None;
        }
        pos += chunk.len() as u64;
        buf.extend_from_slice(&chunk);
    }
}

/// None: malformed (stop). Some(None): not the task, go on. Some(Some(task)): found.
fn task_from(line: &[u8]) -> Option<Option<String>> {
    if line.iter().all(|b| b.is_ascii_whitespace()) {
        return Some(None);
    }
    let raw = parse_line(line)?;
    // A reply sent by an earlier version ends with its trailer line: not the person's words.
    let said = crate::reply_text::without_legacy_trailer(&raw.msg.text);
    let is_task = raw.typ.as_deref() == Some("message")
        && raw.msg.role.as_deref() == Some("user")
        && !said.trim().is_empty();
    Some(is_task.then(|| text::one_line(said, TASK_CHARS)))
}

// ---------------------------------------------------------------------------------------------
// Public entry points.

/// Read one pi session file: header, task, and the newest entries on the current branch.
/// Refuses links, FIFOs and devices; cost does not grow with the file's size.
pub fn read_session(path: &Path) -> Result<SessionSummary, SessionError> {
    read_session_with(path, None)
}

/// `read_session`, reusing what `memo` kept while the file is unchanged.
pub fn read_session_with(
    path: &Path,
    memo: Option<&SessionMemo>,
) -> Result<SessionSummary, SessionError> {
    read_session_at(path, None, memo)
}

/// Like `read_session`, but the current branch ends at entry `leaf` rather than at the last
/// line: pi's `/tree` moves its leaf without writing anything until the next entry. `Ok(None)`
/// when that entry is not among the newest entries the tail scan reaches (or has no id).
pub fn read_session_from_leaf(
    path: &Path,
    leaf: &str,
    memo: Option<&SessionMemo>,
) -> Result<Option<SessionSummary>, SessionError> {
    let s = read_session_at(path, Some(leaf), memo)?;
    Ok((!s.branch.is_empty()).then_some(s))
}

fn read_session_at(
    path: &Path,
    leaf: Option<&str>,
    memo: Option<&SessionMemo>,
) -> Result<SessionSummary, SessionError> {
    // A link, FIFO or device has no key, so it always reaches `open_regular`, which refuses it.
    Memo::read_through(
        memo,
        path,
        || Some((leaf.map(str::to_string), fsguard::settled_key_at(path)?)),
        || {
            let f = fsguard::open_regular(path, None)?;
            let mut header = read_header(&f.file, f.len)?;
            let rest = std::mem::take(&mut header.rest);
            // The first read's lines, counted for tokens and cost while they are here anyway.
            let mut head_usage = usage::UsageTally::starting_at(header.end);
            usage::count(&mut head_usage, &rest);
            let task = read_task(&f.file, f.len, header.end, rest);
            let (tail, truncated) = scan_tail(&f.file, f.len, header.end, leaf);
            let mut summary = summarize(path, header, task, f.len, f.mtime_ms, tail, truncated);
            summary.usage = head_usage;
            Ok(summary)
        },
    )
}

/// Summaries of files that did not change since they were read (pi appends to a session file,
/// so an unchanged identity, length and times mean unchanged content), by the leaf asked for
/// and the file's settled key.
pub(crate) type SessionMemo = Memo<(Option<String>, fsguard::SettledKey), SessionSummary>;

/// Session files a `SessionMemo` keeps: the sidebar reads every seat's each pass.
pub(crate) const SESSIONS_KEPT: usize = 1024;

fn summarize(
    path: &Path,
    header: Header,
    task: Option<String>,
    file_len: u64,
    mtime_ms: Ms,
    tail: Tail,
    truncated: bool,
) -> SessionSummary {
    let mut model = None;
    let mut provider = None;
    if let Some(e) = tail.branch.iter().find(|e| e.model.is_some()) {
        model = e.model.clone();
        provider = e.provider.clone();
    }
    let last_assistant_text = tail
        .branch
        .iter()
        .filter(|e| e.branch.role == Some(Role::Assistant))
        .find_map(|e| e.text.as_deref())
        .map(|t| t.chars().take(ASSISTANT_CHARS).collect::<String>());
    // The newest turn-deciding message: only its error counts as the last error.
    let decisive = tail
        .branch
        .iter()
        .find(|e| e.branch.role.is_some_and(Role::decides_turn));
    let last_error = decisive
        .filter(|e| {
            e.branch.role == Some(Role::Assistant)
                && matches!(
                    e.branch.stop_reason,
                    Some(StopReason::Error | StopReason::Aborted)
                )
        })
        .and_then(|e| e.error_message.as_deref())
        .map(|t| t.chars().take(ERROR_CHARS).collect::<String>());
    let reply = decisive.filter(|e| e.branch.role == Some(Role::Assistant));
    // Only a completed reply whose first line asks is a question (the waiting rule).
    let question = reply
        .filter(|e| !e.branch.has_tool_call)
        .filter(|e| {
            e.branch
                .first_text_line
                .as_deref()
                .is_some_and(question::is_input_request)
        })
        .and_then(|e| e.text.as_deref())
        .and_then(question::question_of);
    let running_tool = reply
        .filter(|e| {
            e.branch.has_tool_call
                && !matches!(
                    e.branch.stop_reason,
                    Some(StopReason::Error | StopReason::Aborted)
                )
        })
        .map(|e| RunningTool {
            name: e.tool_name.clone(),
            since: e.branch.timestamp,
        });
    let last_user_text = tail
        .branch
        .iter()
        .filter(|e| e.branch.role == Some(Role::User))
        .find_map(|e| e.text.as_deref())
        .map(|t| t.chars().take(USER_CHARS).collect::<String>());
    SessionSummary {
        path: path.to_path_buf(),
        session_id: header.id,
        cwd: header.cwd,
        header_timestamp: header.timestamp,
        file_len,
        mtime_ms,
        task,
        last_activity: tail.last_activity,
        model,
        provider,
        last_assistant_text,
        last_error,
        question,
        last_user_text,
        running_tool,
        skipped_lines: tail.skipped,
        newest_entry_id: tail.newest_entry_id,
        linear: tail.linear,
        tail_truncated: truncated,
        tail_damage: tail.damage,
        branch: tail.branch.into_iter().map(|e| e.branch).collect(),
        usage: usage::UsageTally::default(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_remembered_summary_is_used_only_while_the_file_is_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("2026-11-29T23-00-00-000Z_s1.jsonl");
        let line = |id: &str, text: &str| {
            format!(
                r#"{{"type":"message","id":"{id}","parentId":null,"timestamp":"2026-11-29T23:00:02.000Z","message":{{"role":"assistant","content":[{{"type":"text","text":"{text}"}}],"provider":"p","model":"m","stopReason":"stop"}}}}"#
            ) + "\n"
        };
        let head = r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-11-29T23:00:00.000Z","cwd":"/w"}"#.to_string() + "\n";
        std::fs::write(&p, format!("{head}{}", line("a1", "first"))).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(2100));
        let text = |s: SessionSummary| s.last_assistant_text.unwrap_or_default();
        let memo = SessionMemo::new(SESSIONS_KEPT);
        let read_session = |p: &Path| read_session_with(p, Some(&memo));
        assert_eq!(text(read_session(&p).unwrap()), "first");
        assert_eq!(text(read_session(&p).unwrap()), "first");
        // Rewritten in place with the same length: read again (a new ctime).
        std::fs::OpenOptions::new()
            .write(true)
            .open(&p)
            .and_then(|mut f| {
                std::io::Write::write_all(
                    &mut f,
                    format!("{head}{}", line("a1", "fixed")).as_bytes(),
                )
            })
            .unwrap();
        assert_eq!(text(read_session(&p).unwrap()), "fixed");
        // Appended to.
        let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
        std::io::Write::write_all(&mut f, line("a2", "second").as_bytes()).unwrap();
        assert_eq!(text(read_session(&p).unwrap()), "second");
    }

    use super::parse::{last_string_field, parse_prefix};
    use super::*;

    #[test]
    fn parses_fields_and_survives_cut_lines() {
        let line = br#"{"type":"message","id":"a1","parentId":"p0","timestamp":"2026-11-29T10:00:00.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"Input needed: no"},{"type":"text","text":"hello\nworld"},{"type":"toolCall","id":"c","name":"bash","arguments":{"stopReason":"x"}}],"provider":"p","model":"m","stopReason":"toolUse"}}"#;
        let e = parse_line(line).unwrap();
        assert_eq!(e.typ.as_deref(), Some("message"));
        assert_eq!(e.msg.text, "hello\nworld");
        assert!(e.msg.has_tool_call);
        assert_eq!(e.msg.stop_reason.as_deref(), Some("toolUse"));
        let cut = parse_prefix(&line[..90]);
        assert_eq!(cut.id.as_deref(), Some("a1"));
        assert_eq!(cut.msg.role, None);
        assert!(parse_line(&line[..line.len() - 1]).is_none());
        assert!(parse_line(b"[1,2]").is_none());
        assert!(parse_line(b"{\"type\":\"x\"} trailing").is_none());
        assert!(parse_line(b"{\"type\":\"x\xff\"}").is_none());
        assert_eq!(
            last_string_field(
                br#"..."stopReason":"stop","x":{"stopReason":"error"}}"#,
                "stopReason"
            )
            .as_deref(),
            Some("error")
        );
    }

    #[test]
    fn session_ids_from_names() {
        assert_eq!(
            session_id_from_name("2026-11-29T23-13-49-456Z_01a22996-0d90.jsonl"),
            Some("01a22996-0d90")
        );
        assert_eq!(session_id_from_name("x_.jsonl"), None);
        assert_eq!(session_id_from_name("noid.jsonl"), None);
        assert_eq!(session_id_from_name("a_b.json"), None);
        assert_eq!(session_id_from_name("a_b/c.jsonl"), None);
    }
}
