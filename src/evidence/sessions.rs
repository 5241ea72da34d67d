//! pi session files: read one file from the end (cost independent of its size), and find files
//! by session id.
//!
//! Why from the end: a pi session file only grows, lines of several MiB (images, tool output) and
//! files of many GiB are normal, and the board needs only the newest entries on the current
//! branch plus the task (the first user message, near the start). So a read is: the header line,
//! a short bounded forward read for the task, and a backward scan with `pread` that stops as soon
//! as the newest entries decide the seat's state. Lines longer than a parse cap are skimmed (their
//! first and last 64 KiB), never loaded whole.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::clock::{parse_iso, Ms};
use crate::fsguard::{self, FsError, Kind};
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

/// What kind of entry a line is (its top-level `type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// `message`
    Message,
    /// `model_change`
    ModelChange,
    /// `compaction`
    Compaction,
    /// `context_edit` (pi 1.6.0: written when a retry is scheduled)
    ContextEdit,
    /// `branch_summary`
    BranchSummary,
    /// Any other type (`thinking_level_change`, `label`, `custom`, ...).
    Other,
}

/// `message.role` of a message entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
    ToolResult,
    BashExecution,
    /// pi 1.6.0 writes the system prompt as a message; it is neither user nor assistant.
    System,
    /// Legacy `custom` role.
    Custom,
    Other,
}

/// `message.stopReason` of an assistant message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    Stop,
    Length,
    ToolUse,
    Error,
    Aborted,
    Other,
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
}

// ---------------------------------------------------------------------------------------------
// Line parsing: a serde visitor that records the few fields we need as it goes, so a line cut
// off at a window edge still yields everything before the cut.

#[derive(Debug, Default)]
struct RawEntry {
    typ: Option<String>,
    id: Option<String>,
    parent_id: Option<String>,
    timestamp: Option<String>,
    target_id: Option<String>,
    provider: Option<String>,
    model_id: Option<String>,
    msg: RawMessage,
}

#[derive(Debug, Default)]
struct RawMessage {
    role: Option<String>,
    stop_reason: Option<String>,
    error_message: Option<String>,
    provider: Option<String>,
    model: Option<String>,
    has_tool_call: bool,
    text: String,
}

/// Cut `s` to at most `max` bytes on a char boundary.
fn cap_str(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while end > 0 && !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}

/// A JSON value that is kept only when it is a string (capped); anything else is skipped.
struct MaybeStr(usize);

impl<'de> DeserializeSeed<'de> for MaybeStr {
    type Value = Option<String>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for MaybeStr {
    type Value = Option<String>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any value")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Some(cap_str(v, self.0)))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
        while a.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
        while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(None)
    }
}

/// Top-level entry object.
struct EntrySeed<'a>(&'a mut RawEntry);

impl<'de> DeserializeSeed<'de> for EntrySeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for EntrySeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a session entry object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        let e = self.0;
        while let Some(key) = a.next_key::<KeyName>()? {
            match key.0.as_deref() {
                Some("type") => e.typ = a.next_value_seed(MaybeStr(SHORT_CAP))?,
                Some("id") => e.id = a.next_value_seed(MaybeStr(SHORT_CAP))?,
                Some("parentId") => e.parent_id = a.next_value_seed(MaybeStr(SHORT_CAP))?,
                Some("timestamp") => e.timestamp = a.next_value_seed(MaybeStr(SHORT_CAP))?,
                Some("targetId") => e.target_id = a.next_value_seed(MaybeStr(SHORT_CAP))?,
                Some("provider") => e.provider = a.next_value_seed(MaybeStr(SHORT_CAP))?,
                Some("modelId") => e.model_id = a.next_value_seed(MaybeStr(SHORT_CAP))?,
                Some("message") => a.next_value_seed(MessageSeed(&mut e.msg))?,
                _ => {
                    a.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// A map key, kept only when short (all keys we care about are).
struct KeyName(Option<String>);

impl<'de> de::Deserialize<'de> for KeyName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = KeyName;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<KeyName, E> {
                Ok(KeyName((v.len() <= 32).then(|| v.to_string())))
            }
        }
        d.deserialize_str(V)
    }
}

/// `message` object. Not a map (e.g. null) is tolerated and yields nothing.
struct MessageSeed<'a>(&'a mut RawMessage);

impl<'de> DeserializeSeed<'de> for MessageSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for MessageSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a message object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        let m = self.0;
        while let Some(key) = a.next_key::<KeyName>()? {
            match key.0.as_deref() {
                Some("role") => m.role = a.next_value_seed(MaybeStr(SHORT_CAP))?,
                Some("stopReason") => m.stop_reason = a.next_value_seed(MaybeStr(SHORT_CAP))?,
                Some("errorMessage") => m.error_message = a.next_value_seed(MaybeStr(ERROR_CAP))?,
                Some("provider") => m.provider = a.next_value_seed(MaybeStr(SHORT_CAP))?,
                Some("model") => m.model = a.next_value_seed(MaybeStr(SHORT_CAP))?,
                Some("content") => a.next_value_seed(ContentSeed(m))?,
                _ => {
                    a.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        while a.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
    }
}

/// Only user and assistant text is ever shown or matched; skipping the rest (tool output is most
/// of a session's bytes) saves unescaping it. Pi writes `role` before `content`.
fn wants_text(m: &RawMessage) -> bool {
    matches!(m.role.as_deref(), None | Some("user" | "assistant"))
}

fn push_text(m: &mut RawMessage, t: &str) {
    if m.text.len() >= TEXT_CAP {
        return;
    }
    if !m.text.is_empty() {
        m.text.push('\n');
    }
    let room = TEXT_CAP.saturating_sub(m.text.len());
    m.text.push_str(&cap_str(t, room));
}

/// `content`: a string (user) or an array of blocks.
struct ContentSeed<'a>(&'a mut RawMessage);

impl<'de> DeserializeSeed<'de> for ContentSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ContentSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("message content")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        if wants_text(self.0) {
            push_text(self.0, v);
        }
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        let m = self.0;
        loop {
            let mut block = Block::default();
            if a.next_element_seed(BlockSeed(&mut block, wants_text(m)))?
                .is_none()
            {
                break;
            }
            match block.typ.as_deref() {
                Some("text") if wants_text(m) => {
                    if let Some(t) = block.text {
                        push_text(m, &t);
                    }
                }
                Some("toolCall") => m.has_tool_call = true,
                _ => {}
            }
        }
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
}

#[derive(Default)]
struct Block {
    typ: Option<String>,
    text: Option<String>,
}

/// The block, and whether its text is wanted.
struct BlockSeed<'a>(&'a mut Block, bool);

impl<'de> DeserializeSeed<'de> for BlockSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for BlockSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a content block")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        let b = self.0;
        while let Some(key) = a.next_key::<KeyName>()? {
            match key.0.as_deref() {
                Some("type") => b.typ = a.next_value_seed(MaybeStr(SHORT_CAP))?,
                Some("text") if self.1 => b.text = a.next_value_seed(MaybeStr(TEXT_CAP))?,
                _ => {
                    a.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        while a.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
    }
}

/// Parse one whole line. `None` when it is not a complete JSON object with a string `type`.
fn parse_line(line: &[u8]) -> Option<RawEntry> {
    let mut e = RawEntry::default();
    let mut de = serde_json::Deserializer::from_slice(line);
    EntrySeed(&mut e).deserialize(&mut de).ok()?;
    de.end().ok()?;
    e.typ.is_some().then_some(e)
}

/// Parse as much of a line's first bytes as possible (the rest is cut off).
fn parse_prefix(head: &[u8]) -> RawEntry {
    let mut e = RawEntry::default();
    let mut de = serde_json::Deserializer::from_slice(head);
    // An error here is expected: the window ends mid-value. What was seen before it is kept.
    let _ = EntrySeed(&mut e).deserialize(&mut de);
    e
}

/// The last occurrence of `"key":"` in `hay` and the JSON string value after it.
fn last_string_field(hay: &[u8], key: &str) -> Option<String> {
    let pat = format!("\"{key}\":");
    let at = rfind(hay, pat.as_bytes())?;
    let rest = &hay[at + pat.len()..];
    let mut it = serde_json::Deserializer::from_slice(rest).into_iter::<String>();
    match it.next() {
        Some(Ok(s)) => Some(cap_str(&s, ERROR_CAP)),
        _ => None,
    }
}

fn rfind(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || hay.len() < needle.len() {
        return None;
    }
    (0..=hay.len() - needle.len())
        .rev()
        .find(|&i| &hay[i..i + needle.len()] == needle)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || hay.len() < needle.len() {
        return None;
    }
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Fields of a line too long to parse: its head parsed as a prefix, stop reason and error from
/// its tail (pi writes them after `content`). Structural keys cannot be faked by text inside a
/// string, since quotes there are escaped.
fn skim_line(head: &[u8], tail: &[u8]) -> Option<RawEntry> {
    let mut e = parse_prefix(head);
    e.typ.as_ref()?;
    if e.msg.stop_reason.is_none() {
        e.msg.stop_reason = last_string_field(tail, "stopReason");
    }
    if e.msg.error_message.is_none() {
        e.msg.error_message = last_string_field(tail, "errorMessage");
    }
    if find(tail, b"\"type\":\"toolCall\"").is_some() {
        e.msg.has_tool_call = true;
    }
    Some(e)
}

// ---------------------------------------------------------------------------------------------
// Entries as the summary keeps them.

#[derive(Debug, Clone)]
struct Entry {
    branch: BranchEntry,
    parent_id: Option<String>,
    provider: Option<String>,
    model: Option<String>,
    text: Option<String>,
    error_message: Option<String>,
}

fn role_of(s: &str) -> Role {
    match s {
        "user" => Role::User,
        "assistant" => Role::Assistant,
        "toolResult" => Role::ToolResult,
        "bashExecution" => Role::BashExecution,
        "system" => Role::System,
        "custom" => Role::Custom,
        _ => Role::Other,
    }
}

fn stop_of(s: &str) -> StopReason {
    match s {
        "stop" => StopReason::Stop,
        "length" => StopReason::Length,
        "toolUse" => StopReason::ToolUse,
        "error" => StopReason::Error,
        "aborted" => StopReason::Aborted,
        _ => StopReason::Other,
    }
}

fn first_non_blank_line(t: &str) -> Option<String> {
    t.lines()
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .find(|l| !l.trim().is_empty())
        .map(|l| l.chars().take(FIRST_LINE_CHARS).collect())
}

fn to_entry(raw: RawEntry, skimmed: bool) -> Entry {
    let kind = match raw.typ.as_deref() {
        Some("message") => EntryKind::Message,
        Some("model_change") => EntryKind::ModelChange,
        Some("compaction") => EntryKind::Compaction,
        Some("context_edit") => EntryKind::ContextEdit,
        Some("branch_summary") => EntryKind::BranchSummary,
        _ => EntryKind::Other,
    };
    let m = raw.msg;
    let is_msg = kind == EntryKind::Message;
    let role = if is_msg {
        Some(m.role.as_deref().map(role_of).unwrap_or(Role::Other))
    } else {
        None
    };
    let stop_reason = if is_msg {
        m.stop_reason.as_deref().map(stop_of)
    } else {
        None
    };
    // A skimmed line whose content array was cut off: stopReason `toolUse` is the best evidence
    // of tool calls we have.
    let has_tool_call =
        is_msg && (m.has_tool_call || (skimmed && stop_reason == Some(StopReason::ToolUse)));
    let text = (is_msg && !m.text.trim().is_empty()).then_some(m.text);
    let (provider, model) = match kind {
        EntryKind::ModelChange => (raw.provider, raw.model_id),
        EntryKind::Message if role == Some(Role::Assistant) => (m.provider, m.model),
        _ => (None, None),
    };
    Entry {
        branch: BranchEntry {
            kind,
            id: raw.id,
            timestamp: raw.timestamp.as_deref().and_then(parse_iso),
            role,
            stop_reason,
            has_tool_call,
            first_text_line: text.as_deref().and_then(first_non_blank_line),
            target_id: raw.target_id,
            skimmed,
        },
        parent_id: raw.parent_id,
        provider,
        model,
        text,
        error_message: if is_msg { m.error_message } else { None },
    }
}

// ---------------------------------------------------------------------------------------------
// The backward scan.

/// Collects entries newest first and follows the branch as it goes.
struct Tail {
    /// Entries met so far (≤ MAX_ENTRIES).
    seen: usize,
    /// The entries on the branch, newest first.
    branch: Vec<Entry>,
    want: Option<String>,
    linear: bool,
    branch_done: bool,
    skipped: u32,
    newest_entry_id: Option<String>,
    last_activity: Option<Ms>,
}

impl Tail {
    fn new() -> Tail {
        Tail {
            seen: 0,
            branch: Vec::new(),
            want: None,
            linear: false,
            branch_done: false,
            skipped: 0,
            newest_entry_id: None,
            last_activity: None,
        }
    }

    fn push(&mut self, e: Entry) {
        let first = self.seen == 0;
        self.seen += 1;
        if self.last_activity.is_none() && e.branch.kind == EntryKind::Message {
            self.last_activity = e.branch.timestamp;
        }
        let on_branch = if first {
            self.newest_entry_id = e.branch.id.clone();
            self.linear = e.branch.id.is_none();
            true
        } else if self.linear {
            true
        } else {
            !self.branch_done && self.want.is_some() && self.want == e.branch.id
        };
        if !on_branch {
            return;
        }
        if !self.linear {
            self.want = e.parent_id.clone();
            self.branch_done = self.want.is_none();
        }
        self.branch.push(e);
    }

    /// True when older entries cannot change the summary: the deciding entries, the model and
    /// some assistant text are known (or the branch is complete). Past `TEXT_SEARCH_BUDGET`
    /// bytes `scanned`, the last assistant text is left unknown rather than searched for.
    fn enough(&self, scanned: u64) -> bool {
        if self.branch_done {
            return true;
        }
        let mut decided = false;
        let mut errors = 0;
        for e in &self.branch {
            let b = &e.branch;
            let Some(role) = b.role else { continue };
            match role {
                Role::User | Role::ToolResult | Role::BashExecution => {
                    decided = true;
                    break;
                }
                Role::Assistant => {
                    let failed = !b.has_tool_call
                        && matches!(b.stop_reason, Some(StopReason::Error | StopReason::Length));
                    if !failed {
                        decided = true;
                        break;
                    }
                    errors += 1;
                    if errors >= 4 {
                        decided = true;
                        break;
                    }
                }
                _ => {}
            }
        }
        if !decided {
            return false;
        }
        let has_model = self.branch.iter().any(|e| e.model.is_some());
        let has_text = self
            .branch
            .iter()
            .any(|e| e.branch.role == Some(Role::Assistant) && e.text.is_some());
        has_model
            && (has_text || self.branch.len() >= ENOUGH_BRANCH || scanned >= TEXT_SEARCH_BUDGET)
    }
}

/// Scan backwards from the end of the file down to (not into) the header line.
///
/// `window` always holds file bytes `[win_start, win_start + len)` whose end is the end of the
/// newest unprocessed line (its newline already consumed).
fn scan_tail(file: &std::fs::File, file_len: u64, header_end: u64) -> (Tail, bool) {
    let mut tail = Tail::new();
    let mut scanned: u64 = 0;
    let mut win_start = file_len;
    let mut window: Vec<u8> = Vec::new();
    let mut at_end = true; // the line being assembled is the last one in the file
    let mut truncated = false;
    let mut chunk_size = FIRST_READ;
    // Every iteration either consumes a line, reads a chunk (bounded by TAIL_BUDGET) or ends.
    loop {
        if tail.seen > 0 && tail.enough(scanned) {
            break;
        }
        if tail.seen >= MAX_ENTRIES {
            truncated = true;
            break;
        }
        let found = memrchr(b'\n', &window);
        if found.is_none() && win_start <= header_end {
            // The window is the first entry line, right after the header.
            if !window.is_empty() && !take_line(&mut tail, &window, !at_end) {
                truncated = true;
            }
            break;
        }
        if let Some(i) = found {
            let ended_by_newline = !at_end;
            at_end = false;
            if !take_line(&mut tail, &window[i + 1..], ended_by_newline) {
                truncated = true;
                break;
            }
            window.truncate(i);
            continue;
        }
        // No line start in the window: the window is one partial line.
        if window.contains(&0) {
            // A hole (sparse or zeroed region): nothing before it is worth the budget.
            tail.skipped += 1;
            truncated = true;
            break;
        }
        if window.len() > LINE_PARSE_CAP {
            match skim_huge(file, win_start, &window, header_end, &mut scanned) {
                Some(sk) => {
                    match sk.entry {
                        Some(r) => tail.push(to_entry(r, true)),
                        None => tail.skipped += 1,
                    }
                    at_end = false;
                    win_start = sk.before_start;
                    window = sk.before;
                    continue;
                }
                None => {
                    truncated = true;
                    break;
                }
            }
        }
        let n = chunk_size.min(win_start - header_end);
        chunk_size = (chunk_size * 2).min(CHUNK);
        if scanned + n > TAIL_BUDGET {
            truncated = true;
            break;
        }
        let Ok(chunk) = fsguard::read_at(file, win_start - n, n as usize) else {
            truncated = true;
            break;
        };
        if chunk.len() as u64 != n {
            // The file shrank under us: what we have is what there is.
            truncated = true;
            break;
        }
        scanned += n;
        win_start -= n;
        let mut joined = chunk;
        joined.extend_from_slice(&window);
        window = joined;
    }
    (tail, truncated)
}

/// Parse one complete line into the tail. False when the line holds NUL bytes: a hole (sparse
/// or zeroed region), and nothing before it is worth the budget.
fn take_line(tail: &mut Tail, line: &[u8], ended_by_newline: bool) -> bool {
    if line.contains(&0) {
        tail.skipped += 1;
        return false;
    }
    if line.iter().all(|b| b.is_ascii_whitespace()) {
        return true;
    }
    match parse_line(line) {
        Some(raw) => tail.push(to_entry(raw, false)),
        // A last line without its newline may still be being written: not malformed yet.
        None if !ended_by_newline => {}
        None => tail.skipped += 1,
    }
    true
}

/// A huge line, skimmed, and what was read before it.
struct Skimmed {
    /// None when even its head names no `type` (malformed).
    entry: Option<RawEntry>,
    /// File offset of `before`.
    before_start: u64,
    /// Bytes read before the line's newline: the next window.
    before: Vec<u8>,
}

/// The window holds the last part (> LINE_PARSE_CAP bytes) of one line that starts before
/// `win_start`. Find its start within the budget and skim it. None: budget, hole or read error.
fn skim_huge(
    file: &std::fs::File,
    win_start: u64,
    window: &[u8],
    header_end: u64,
    scanned: &mut u64,
) -> Option<Skimmed> {
    let tail_win = &window[window.len().saturating_sub(SKIM_WINDOW)..];
    let line_end = win_start + window.len() as u64;
    let mut pos = win_start;
    // Bounded by TAIL_BUDGET: each iteration reads SEEK_CHUNK more or ends.
    let (line_start, new_start, before) = loop {
        if pos <= header_end {
            // The line starts right after the header.
            break (header_end, header_end, Vec::new());
        }
        let n = SEEK_CHUNK.min(pos - header_end);
        if *scanned + n > TAIL_BUDGET {
            return None;
        }
        let mut buf = fsguard::read_at(file, pos - n, n as usize).ok()?;
        if buf.len() as u64 != n {
            return None;
        }
        *scanned += n;
        if let Some(i) = memrchr(b'\n', &buf) {
            if buf[i + 1..].contains(&0) {
                return None;
            }
            buf.truncate(i);
            break (pos - n + i as u64 + 1, pos - n, buf);
        }
        if buf.contains(&0) {
            return None;
        }
        pos -= n;
    };
    let head_len = SKIM_WINDOW.min((line_end - line_start) as usize);
    let head = fsguard::read_at(file, line_start, head_len).ok()?;
    *scanned += head.len() as u64;
    Some(Skimmed {
        entry: skim_line(&head, tail_win),
        before_start: new_start,
        before,
    })
}

/// Word-at-a-time byte search: a per-byte loop over 64 KiB windows of zeros or long lines was
/// the main cost of a read, and no memchr crate is available.
const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

fn word_has(word: u64, needle: u8) -> bool {
    let x = word ^ (LO * needle as u64);
    (x.wrapping_sub(LO) & !x & HI) != 0
}

fn word_at(hay: &[u8], i: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&hay[i..i + 8]);
    u64::from_ne_bytes(b)
}

/// Position of the first `needle` byte.
fn memchr(needle: u8, hay: &[u8]) -> Option<usize> {
    let mut i = 0;
    while i + 8 <= hay.len() {
        if word_has(word_at(hay, i), needle) {
            break;
        }
        i += 8;
    }
    hay[i..].iter().position(|&b| b == needle).map(|p| p + i)
}

/// Position of the last `needle` byte.
fn memrchr(needle: u8, hay: &[u8]) -> Option<usize> {
    let mut end = hay.len();
    while end >= 8 {
        if word_has(word_at(hay, end - 8), needle) {
            break;
        }
        end -= 8;
    }
    hay[..end].iter().rposition(|&b| b == needle)
}

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
    let v: serde_json::Value =
        serde_json::from_slice(line).map_err(|_| SessionError::InvalidHeader)?;
    let obj = v.as_object().ok_or(SessionError::InvalidHeader)?;
    if obj.get("type").and_then(|t| t.as_str()) != Some("session") {
        return Err(SessionError::InvalidHeader);
    }
    let id = obj
        .get("id")
        .and_then(|t| t.as_str())
        .filter(|s| !s.is_empty() && s.len() <= SHORT_CAP)
        .ok_or(SessionError::InvalidHeader)?;
    let cwd = obj
        .get("cwd")
        .and_then(|t| t.as_str())
        .ok_or(SessionError::InvalidHeader)?;
    Ok(Header {
        id: id.to_string(),
        cwd: cwd.to_string(),
        timestamp: obj
            .get("timestamp")
            .and_then(|t| t.as_str())
            .and_then(parse_iso),
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
        if buf.contains(&0) {
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
    let is_task = raw.typ.as_deref() == Some("message")
        && raw.msg.role.as_deref() == Some("user")
        && !raw.msg.text.trim().is_empty();
    Some(is_task.then(|| text::one_line(&raw.msg.text, TASK_CHARS)))
}

// ---------------------------------------------------------------------------------------------
// Public entry points.

/// Read one pi session file: header, task, and the newest entries on the current branch.
/// Refuses links, FIFOs and devices; cost does not grow with the file's size.
pub fn read_session(path: &Path) -> Result<SessionSummary, SessionError> {
    let f = fsguard::open_regular(path, None)?;
    let mut header = read_header(&f.file, f.len)?;
    let rest = std::mem::take(&mut header.rest);
    let task = read_task(&f.file, f.len, header.end, rest);
    let (tail, truncated) = scan_tail(&f.file, f.len, header.end);
    Ok(summarize(
        path, header, task, f.len, f.mtime_ms, tail, truncated,
    ))
}

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
    let decisive = tail.branch.iter().find(|e| {
        matches!(
            e.branch.role,
            Some(Role::User | Role::Assistant | Role::ToolResult | Role::BashExecution)
        )
    });
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
        skipped_lines: tail.skipped,
        newest_entry_id: tail.newest_entry_id,
        linear: tail.linear,
        tail_truncated: truncated,
        branch: tail.branch.into_iter().map(|e| e.branch).collect(),
    }
}

// ---------------------------------------------------------------------------------------------
// Discovery.

/// Most top-level session folders indexed.
const MAX_DIRS: usize = 64;
/// Most entries listed per folder.
const MAX_DIR_ENTRIES: usize = 4096;
/// Most per-cwd subfolders visited in all.
const MAX_SUBDIRS: usize = 1024;
/// Most session files indexed in all.
const MAX_FILES: usize = 65_536;

/// Session folders to index: `$PI_CODING_AGENT_SESSION_DIR` (flat) when set, then
/// `$PI_CODING_AGENT_DIR/sessions`, else `~/.pi/agent/sessions`.
pub fn default_session_dirs() -> Vec<PathBuf> {
    session_dirs_from(|k| std::env::var(k).ok())
}

/// `default_session_dirs` with the environment passed in (testable).
pub fn session_dirs_from(env: impl Fn(&str) -> Option<String>) -> Vec<PathBuf> {
    let set = |k: &str| env(k).filter(|v| !v.is_empty());
    let mut dirs = Vec::new();
    if let Some(d) = set("PI_CODING_AGENT_SESSION_DIR") {
        dirs.push(PathBuf::from(d));
    }
    if let Some(d) = set("PI_CODING_AGENT_DIR") {
        dirs.push(PathBuf::from(d).join("sessions"));
    } else if let Some(h) = set("HOME") {
        dirs.push(PathBuf::from(h).join(".pi").join("agent").join("sessions"));
    }
    dirs
}

/// One indexed session file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexedFile {
    /// Where it is.
    pub path: PathBuf,
    /// Its mtime when listed.
    pub mtime_ms: Ms,
    /// Its length when listed.
    pub len: u64,
}

/// A path that could not be indexed, with a fixed code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexError {
    /// The folder or file refused.
    pub path: PathBuf,
    /// An `FsError` code.
    pub code: &'static str,
}

/// Session id → newest file named `<anything>_<sessionId>.jsonl`.
#[derive(Debug, Default)]
pub struct SessionIndex {
    /// Session id → its newest file (by mtime, then path).
    pub files: HashMap<String, IndexedFile>,
    /// Some folder had more entries than listed, or a total cap was hit.
    pub truncated: bool,
    /// Folders that could not be listed and session-named entries that are not regular files.
    pub errors: Vec<IndexError>,
}

impl SessionIndex {
    /// The newest file whose name ends with this session id. Confirm with the header's id.
    pub fn find(&self, session_id: &str) -> Option<&Path> {
        self.files.get(session_id).map(|f| f.path.as_path())
    }
}

/// The session id in a file name `<anything>_<sessionId>.jsonl`, if it has that shape.
pub fn session_id_from_name(name: &str) -> Option<&str> {
    let stem = name.strip_suffix(".jsonl")?;
    let (_, id) = stem.rsplit_once('_')?;
    let ok = !id.is_empty()
        && id.len() <= 128
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    ok.then_some(id)
}

/// Index session files directly in each folder or one level down, bounded; links never followed.
pub fn index_sessions(dirs: &[PathBuf]) -> SessionIndex {
    let mut idx = SessionIndex::default();
    if dirs.len() > MAX_DIRS {
        idx.truncated = true;
    }
    let mut subdirs_left = MAX_SUBDIRS;
    for dir in dirs.iter().take(MAX_DIRS) {
        let listing = match fsguard::list_dir(dir, MAX_DIR_ENTRIES) {
            Ok(l) => l,
            Err(e) => {
                idx.errors.push(IndexError {
                    path: dir.clone(),
                    code: e.code(),
                });
                continue;
            }
        };
        idx.truncated |= listing.truncated;
        let mut subs = Vec::new();
        for ent in &listing.entries {
            if ent.kind == Kind::Dir {
                subs.push(dir.join(&ent.name));
            } else {
                add_file(&mut idx, dir, ent);
            }
        }
        for sub in subs {
            if subdirs_left == 0 {
                idx.truncated = true;
                break;
            }
            subdirs_left -= 1;
            match fsguard::list_dir(&sub, MAX_DIR_ENTRIES) {
                Ok(l) => {
                    idx.truncated |= l.truncated;
                    for ent in &l.entries {
                        if ent.kind != Kind::Dir {
                            add_file(&mut idx, &sub, ent);
                        }
                    }
                }
                Err(e) => idx.errors.push(IndexError {
                    path: sub,
                    code: e.code(),
                }),
            }
        }
    }
    idx
}

fn add_file(idx: &mut SessionIndex, dir: &Path, ent: &fsguard::Entry) {
    let Some(id) = ent.name_str().and_then(session_id_from_name) else {
        return;
    };
    let path = dir.join(&ent.name);
    if ent.kind != Kind::File {
        let code = match ent.kind {
            Kind::Link => FsError::Link.code(),
            Kind::Fifo => FsError::Fifo.code(),
            Kind::Device => FsError::Device.code(),
            Kind::Socket => FsError::Socket.code(),
            _ => FsError::NotRegular.code(),
        };
        idx.errors.push(IndexError { path, code });
        return;
    }
    if idx.files.len() >= MAX_FILES && !idx.files.contains_key(id) {
        idx.truncated = true;
        return;
    }
    let cand = IndexedFile {
        path,
        mtime_ms: ent.mtime_ms,
        len: ent.len,
    };
    match idx.files.get(id) {
        Some(old) if (old.mtime_ms, &old.path) >= (cand.mtime_ms, &cand.path) => {}
        _ => {
            idx.files.insert(id.to_string(), cand);
        }
    }
}

/// The newest `*.jsonl` regular file in one folder, by name then mtime (pi names start with the
/// ISO start time). Links and other non-regular entries are ignored. Bounded listing.
pub fn newest_session_in(dir: &Path) -> Result<Option<PathBuf>, FsError> {
    let listing = fsguard::list_dir(dir, MAX_DIR_ENTRIES)?;
    let best = listing
        .entries
        .iter()
        .filter(|e| e.kind == Kind::File)
        .filter_map(|e| {
            let n = e.name_str()?;
            n.ends_with(".jsonl").then_some((n, e.mtime_ms))
        })
        .max();
    Ok(best.map(|(n, _)| dir.join(n)))
}

#[cfg(test)]
mod tests {
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
    fn byte_search_matches_the_plain_loop() {
        let mut hay = vec![b'a'; 100];
        for pos in [0usize, 1, 7, 8, 9, 50, 63, 64, 99] {
            hay.iter_mut().for_each(|b| *b = b'a');
            hay[pos] = b'\n';
            for len in [pos + 1, pos + 8, 100] {
                let h = &hay[..len.min(100)];
                assert_eq!(memchr(b'\n', h), Some(pos));
                assert_eq!(memrchr(b'\n', h), Some(pos));
            }
            assert_eq!(memchr(b'\n', &hay[..pos]), None);
            assert_eq!(memrchr(b'\n', &hay[..pos]), None);
        }
        hay.iter_mut().for_each(|b| *b = b'a');
        hay[3] = b'\n';
        hay[90] = b'\n';
        assert_eq!(memchr(b'\n', &hay), Some(3));
        assert_eq!(memrchr(b'\n', &hay), Some(90));
        assert_eq!(memchr(0, &[0x80u8, 0xff, 1, 2, 3, 4, 5, 6, 7, 0]), Some(9));
        assert_eq!(memrchr(0x80, &[0u8; 16]), None);
        assert_eq!(memchr(b'x', &[]), None);
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
