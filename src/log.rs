//! The opt-in log: `INTERCOM_PANE_LOG=path` appends one JSON line per named event (a pass's
//! timing, a multiplexer error with its detail, ensure-monitor and close-worker stages). Off by
//! default; when set, bounded: the file rotates to `<path>.1` at `CAP` bytes.
//!
//! Why a log and not more on screen: the sidebar shows the fixed code of a background error, and a
//! close or a placement that went wrong is over by the time someone looks. Logging never fails a
//! command: a log that cannot be written is skipped silently.

use std::path::PathBuf;
use std::sync::OnceLock;

use serde_json::{json, Map, Value};

use crate::clock::{format_iso, Clock, SystemClock};

/// Rotate at 1 MiB.
pub(crate) const CAP: u64 = 1024 * 1024;
/// One line is at most this long; longer field values are cut.
const MAX_FIELD_CHARS: usize = 1000;

/// The events, by name (each name is fixed; fields vary).
pub(crate) mod event {
    /// One scan pass: `ms`, `seats`, `errors`.
    pub(crate) const SCAN_PASS: &str = "scan_pass";
    /// A tmux or Herdr call failed: `code`, `detail`.
    pub(crate) const MUX_ERROR: &str = "mux_error";
    /// ensure-monitor recorded a stage: `stage`, `record`.
    pub(crate) const ENSURE_MONITOR_STAGE: &str = "ensure_monitor_stage";
    /// ensure-monitor ended: `outcome`, `detail`, `exit`.
    pub(crate) const ENSURE_MONITOR_DONE: &str = "ensure_monitor_done";
    /// close-worker ended: `worker`, `exit`, `report`.
    pub(crate) const CLOSE_WORKER_DONE: &str = "close_worker_done";
    /// A live engine's pass: `ms`, `full`, `why` (what woke it), `files`, `exited`, `polls`;
    /// `check` when the long timer's check ran first (docs/behaviour.md §3a): `same` (then no
    /// scan ran), `first` (the first check after its pass), `inRow`, `us` (µs on `panes`,
    /// `procs`, `folders`), `folders`.
    pub(crate) const LIVE_PASS: &str = "live_pass";
    /// How a live engine watches changed: its health (`mode` `events`/`polling`, `watches`,
    /// `limit`, `unwatched`, `overflows`, `pids`, `servers`, `fullEverySecs`).
    pub(crate) const LIVE_WATCH: &str = "live_watch";
    /// The kernel's inotify queue overflowed (events lost; a full pass follows): `overflows`.
    pub(crate) const LIVE_OVERFLOW: &str = "live_overflow";
    /// The sidebar drew a frame showing new states: `changed` (`[{id, state}]`), `passAt`.
    pub(crate) const LIVE_FRAME: &str = "live_frame";
    /// A coordinator's tool call ended (or was refused): `tool`, `piPid`, `exit`, `refused`.
    pub(crate) const TOOL_CALL: &str = "tool_call";
    /// A `.pi-intercom/.gitignore` could not be kept: `path`, `problem`.
    pub(crate) const GITIGNORE_PROBLEM: &str = "gitignore_problem";
    /// An alert went out (or was held back): `seat`, `session`, `state`, `key`, `outcome`,
    /// `channels` (the channels this process sent it on).
    pub(crate) const ALERT: &str = "alert";
    /// An alert channel failed (never fatal): `channel`, `detail`.
    pub(crate) const ALERT_CHANNEL_FAILED: &str = "alert_channel_failed";
    /// The tmux status option was set: `value`, `servers`.
    pub(crate) const ALERT_STATUS_SET: &str = "alert_status_set";
    /// A desktop notification's Jump was clicked and the jump ran: `argv`, `detail`.
    pub(crate) const ALERT_DESKTOP_JUMP: &str = "alert_desktop_jump";
    /// The alert memory was not usable and was started again: `detail`.
    pub(crate) const ALERT_MEMORY_INVALID: &str = "alert_memory_invalid";
    /// One ssh call to a host ended: `host`, `exit`, `ssh` (ssh's own words, never shown on the
    /// screen), `stderr` (the program's there).
    pub(crate) const HOST_CALL: &str = "host_call";
    /// The usual ssh control folder was refused and the fallback is used: `dir`, `refused`.
    pub(crate) const HOST_CONTROL: &str = "host_control";
    /// A host's state changed on the board: `host`, `state`, `detail`.
    pub(crate) const HOST_STATE: &str = "host_state";
}

fn target() -> Option<&'static PathBuf> {
    static PATH: OnceLock<Option<PathBuf>> = OnceLock::new();
    PATH.get_or_init(|| {
        std::env::var_os("INTERCOM_PANE_LOG")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    })
    .as_ref()
}

/// Whether the log is on (lets a caller skip building costly fields).
pub(crate) fn enabled() -> bool {
    target().is_some()
}

fn bounded(v: Value) -> Value {
    match v {
        Value::String(s) if s.chars().count() > MAX_FIELD_CHARS => {
            Value::String(s.chars().take(MAX_FIELD_CHARS).collect())
        }
        Value::Object(m) => Value::Object(m.into_iter().map(|(k, v)| (k, bounded(v))).collect()),
        Value::Array(a) => Value::Array(a.into_iter().take(32).map(bounded).collect()),
        other => other,
    }
}

/// The line for one event: time, pid, command, event name, then `fields` (an object).
pub(crate) fn line(name: &str, fields: Value, now_ms: i64) -> Vec<u8> {
    let mut m = Map::new();
    m.insert("at".into(), json!(format_iso(now_ms)));
    m.insert("pid".into(), json!(std::process::id()));
    m.insert(
        "command".into(),
        json!(std::env::args().nth(1).unwrap_or_default()),
    );
    m.insert("event".into(), json!(name));
    if let Value::Object(f) = bounded(fields) {
        m.extend(f);
    }
    let mut out = serde_json::to_vec(&Value::Object(m)).unwrap_or_default();
    out.push(b'\n');
    out
}

/// A `.gitignore` under `.pi-intercom/` cannot be kept (the store tells, through
/// `store::on_ignore_problem`): `path`, `problem`.
pub(crate) fn gitignore_problem(file: &std::path::Path, why: &str) {
    event(
        event::GITIGNORE_PROBLEM,
        json!({"path": file.display().to_string(), "problem": why}),
    );
}

/// Record one event when `INTERCOM_PANE_LOG` names an absolute path; otherwise nothing.
pub(crate) fn event(name: &str, fields: Value) {
    let Some(path) = target() else { return };
    let bytes = line(name, fields, SystemClock.now_ms());
    let _ = crate::store::append_line_capped(path, &bytes, CAP);
}
