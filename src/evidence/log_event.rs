//! One Intercom observation record (docs/interop.md §2): the allowlists its fields are checked
//! against, the validated `Event`, what a pass over the logs found (`LogSnapshot`), and the
//! line parser. Below both readers: `observations` (which files, within which bounds) and
//! `log_tail` (a file's end, read backwards).

use serde::Serialize;

use crate::clock::{parse_strict, Ms};
use crate::evidence::log_line::{field, Fields};

/// Longest accepted record line, in bytes (newline excluded).
pub(crate) const MAX_LINE: usize = 4096;
/// Allowlisted `event` values.
pub(crate) const EVENTS: &[&str] = &[
    "runtime.starting",
    "runtime.ready",
    "runtime.closed",
    "runtime.failed",
    "config.changed",
    "config.reloaded",
    "transport.send",
    "transport.receipt",
    "transport.failed",
    "transport.received",
    "transport.rejected",
    "registration.received",
    "status.received",
    "launch.result",
    "host.submission",
    "host.activity",
    "host.ui_prompt",
];
/// Allowlisted `kind` values.
pub(crate) const KINDS: &[&str] = &[
    "message",
    "report",
    "registration",
    "status",
    "request_status",
    "reload",
    "stop",
    "close",
    "close_prepare",
    "close_identity",
    "close_request",
    "handoff_report",
    "close_ready",
    "close_commit",
];
/// Allowlisted `phase` values.
pub(crate) const PHASES: &[&str] = &["working", "thinking", "responding", "tool", "idle"];
/// Allowlisted `detail` values.
pub(crate) const DETAILS: &[&str] = &[
    "processing",
    "thinking",
    "responding",
    "reading_files",
    "editing_files",
    "running_command",
    "using_tool",
    "multiple_tools",
    "settled",
];
/// Allowlisted `role` values (also applied to `piRole`, which the spec lists without its own list).
pub(crate) const ROLES: &[&str] = &["coordinator", "worker", "anonymous"];
/// Allowlisted `outcome` values.
pub(crate) const OUTCOMES: &[&str] = &[
    "attempted",
    "returned",
    "failed",
    "http_receipt",
    "handler_failed",
    "started",
    "settled",
    "snapshot",
    "ended",
    "written",
    "removed",
    "ready",
];
/// Allowlisted `errorCode` values.
pub(crate) const ERROR_CODES: &[&str] = &[
    "operation_failed",
    "ECONNREFUSED",
    "ECONNRESET",
    "ETIMEDOUT",
    "EADDRINUSE",
    "EACCES",
    "EPERM",
    "ENOENT",
    "ENOSPC",
];
/// Allowlisted `operation` values.
pub(crate) const OPERATIONS: &[&str] = &[
    "configure_worker",
    "set_multiplexer",
    "remove_worker",
    "create_worker",
    "resume_worker",
    "port_update",
    "initialize",
];

/// One validated observation record. Only allowlisted fields exist here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    /// Observation time (writer's clock).
    pub timestamp: Ms,
    /// Ephemeral log-writer UUID (one pi runtime start), not agent identity.
    pub writer_id: String,
    /// The writer's pi session id.
    pub session_id: String,
    /// Event type from `EVENTS`.
    pub event: &'static str,
    pub peer_session_id: Option<String>,
    pub peer_name: Option<String>,
    pub correlation_id: Option<String>,
    pub kind: Option<&'static str>,
    pub busy: Option<bool>,
    pub phase: Option<&'static str>,
    pub detail: Option<&'static str>,
    pub port: Option<u16>,
    pub role: Option<&'static str>,
    pub pi_role: Option<&'static str>,
    pub outcome: Option<&'static str>,
    pub error_code: Option<&'static str>,
    pub operation: Option<&'static str>,
    /// The record came from a `.jsonl.closed` file: its writer ended cleanly.
    pub writer_closed: bool,
}

/// What one pass over the logs found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LogSnapshot {
    /// At most `MAX_EVENTS` valid events, oldest first.
    pub events: Vec<Event>,
    /// Writers (UUIDs) whose file was seen with the `.closed` suffix.
    pub closed_writers: Vec<String>,
    /// Some bound was hit: history may be incomplete.
    pub truncated: bool,
    /// Fixed codes, each at most once: `logs_unavailable`, `log_read_failed`.
    pub errors: Vec<&'static str>,
}

impl LogSnapshot {
    pub(super) fn error(&mut self, code: &'static str) {
        if !self.errors.contains(&code) {
            self.errors.push(code);
        }
    }
}

/// `[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`.
pub fn is_lower_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    // The four groups' ends, then the hex digits between them: no branch on a position per byte.
    b.len() == 36
        && [8, 13, 18, 23].iter().all(|&i| b.get(i) == Some(&b'-'))
        && [0..8, 9..13, 14..18, 19..23, 24..36].into_iter().all(|r| {
            b.get(r)
                .is_some_and(|g| g.iter().all(|&c| LOWER_HEX[usize::from(c)]))
        })
}

/// `[0-9a-f]`, by byte.
const LOWER_HEX: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = b'0';
    while c <= b'9' {
        t[c as usize] = true;
        c += 1;
    }
    c = b'a';
    while c <= b'f' {
        t[c as usize] = true;
        c += 1;
    }
    t
};

/// Split a tail into complete lines and parse each. `partial_start`: the tail began mid-file, so
/// its first line is probably cut and is dropped. A last line without `\n` is still being written
/// (or was cut) and is dropped too.
pub fn parse_tail(bytes: &[u8], partial_start: bool, closed: bool) -> Vec<Event> {
    let Some(last) = memchr::memrchr(b'\n', bytes) else {
        return Vec::new();
    };
    let mut lines = bytes.get(..last).unwrap_or_default().split(|&b| b == b'\n');
    if partial_start {
        lines.next();
    }
    lines.filter_map(|l| parse_line(l, closed)).collect()
}

/// Parse one record line (≤ `MAX_LINE` bytes) into an `Event`, or `None` when a required field
/// is missing or invalid.
pub(crate) fn parse_line(line: &[u8], closed: bool) -> Option<Event> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.is_empty() || line.len() > MAX_LINE {
        return None;
    }
    let o = Fields::parse(line)?;
    if o.u64_at(const { field("version") })? != 1 {
        return None;
    }
    let timestamp = parse_strict(&o.str_at(const { field("timestamp") })?)?;
    let writer_id = o.str_at(const { field("writerId") })?;
    if !is_lower_uuid(&writer_id) {
        return None;
    }
    let session_id = bounded_text(&o, const { field("sessionId") }, 256)?;
    let event = allowed(&o, const { field("event") }, EVENTS)?;
    Some(Event {
        timestamp,
        writer_id: writer_id.into_owned(),
        session_id,
        event,
        peer_session_id: bounded_text(&o, const { field("peerSessionId") }, 256),
        peer_name: bounded_text(&o, const { field("peerName") }, 128),
        correlation_id: o
            .str_at(const { field("correlationId") })
            .filter(|s| crate::evidence::config::valid_job_id(s))
            .map(|s| s.into_owned()),
        kind: allowed(&o, const { field("kind") }, KINDS),
        busy: o.bool_at(const { field("busy") }),
        phase: allowed(&o, const { field("phase") }, PHASES),
        detail: allowed(&o, const { field("detail") }, DETAILS),
        port: o
            .u64_at(const { field("port") })
            .filter(|p| (1..=65535).contains(p))
            .and_then(|p| u16::try_from(p).ok()),
        role: allowed(&o, const { field("role") }, ROLES),
        pi_role: allowed(&o, const { field("piRole") }, ROLES),
        outcome: allowed(&o, const { field("outcome") }, OUTCOMES),
        error_code: allowed(&o, const { field("errorCode") }, ERROR_CODES),
        operation: allowed(&o, const { field("operation") }, OPERATIONS),
        writer_closed: closed,
    })
}

/// The field's value when it is one of `list` (the allowlists hold every value shown).
fn allowed(o: &Fields, slot: usize, list: &[&'static str]) -> Option<&'static str> {
    let s = o.str_at(slot)?;
    list.iter().copied().find(|x| *x == s)
}

/// A string field of 1..=max characters without control characters.
fn bounded_text(o: &Fields, slot: usize, max: usize) -> Option<String> {
    let s = o.str_at(slot)?;
    // Printable ASCII (nearly every id and name): one byte a character, none a control.
    if s.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        return (1..=max).contains(&s.len()).then(|| s.into_owned());
    }
    // One pass: a control character or the max+1-th character ends it.
    let mut n = 0;
    for c in s.chars() {
        n += 1;
        if n > max || c.is_control() {
            return None;
        }
    }
    (n > 0).then(|| s.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lower_uuid_is_exactly_its_shape() {
        let ok = "0190aaaa-0000-7000-8000-00000000000f";
        assert!(is_lower_uuid(ok));
        for bad in [
            "0190AAAA-0000-7000-8000-00000000000f",
            "0190aaaa-0000-7000-8000-00000000000",
            "0190aaaa-0000-7000-8000-00000000000fa",
            "0190aaaa00000-7000-8000-00000000000f",
            "0190aaag-0000-7000-8000-00000000000f",
            "0190aaa-00000-7000-8000-00000000000f",
            "0190aaaa-0000-7000-8000-0000000000é",
            "",
        ] {
            assert!(!is_lower_uuid(bad), "{bad}");
        }
    }

    #[test]
    fn a_bounded_text_is_one_to_max_characters_without_controls() {
        let line = |v: &str| format!(r#"{{"version":1,"peerName":{v}}}"#);
        let read = |v: &str, max| {
            let l = line(v);
            let f = Fields::parse(l.as_bytes()).unwrap();
            bounded_text(&f, const { field("peerName") }, max)
        };
        assert_eq!(read(r#""abc""#, 3).as_deref(), Some("abc"));
        assert_eq!(read(r#""abcd""#, 3), None);
        assert_eq!(read(r#""""#, 3), None);
        assert_eq!(read(r#""a\u0007b""#, 3), None);
        assert_eq!(read("\"a\u{7f}b\"", 3), None);
        // Characters, not bytes: three of two bytes each fit a max of 3.
        assert_eq!(read(r#""ééé""#, 3).as_deref(), Some("ééé"));
        assert_eq!(read(r#""éééé""#, 3), None);
        assert_eq!(read("\"a\u{85}b\"", 3), None, "a C1 control");
    }
}
