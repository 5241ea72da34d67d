//! The opt-in log: `INTERCOM_PANE_LOG=path` appends one JSON line per named event (a pass's
//! timing, a multiplexer error with its detail, ensure-monitor and close-worker stages). Off by
//! default; when set, bounded: the file rotates to `<path>.1` at `CAP` bytes.
//!
//! Why a log and not more on screen: the sidebar shows the fixed code of a background error, and a
//! close or a placement that went wrong is over by the time someone looks. Logging never fails a
//! command: a log that cannot be written is skipped silently.

use std::path::PathBuf;
use std::sync::OnceLock;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::clock::{format_iso, Clock, SystemClock};

/// Rotate at 1 MiB.
pub(crate) const CAP: u64 = 1024 * 1024;
/// One line is at most this long; longer field values are cut.
const MAX_FIELD_CHARS: usize = 1000;

/// The events: one type each, the name and its fields (`events.rs`).
mod events;
pub(crate) use events::*;

/// One event: its fixed name, then its fields (a struct serialized as an object).
pub(crate) trait Event: Serialize {
    const NAME: &'static str;
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

/// The line for one event: time, pid, command, event name, then its fields.
pub(crate) fn line<E: Event>(e: &E, now_ms: i64) -> Vec<u8> {
    let mut m = Map::new();
    m.insert("at".into(), Value::String(format_iso(now_ms)));
    m.insert("pid".into(), Value::from(std::process::id()));
    let command = std::env::args().nth(1).unwrap_or_default();
    m.insert("command".into(), Value::String(command));
    m.insert("event".into(), Value::String(E::NAME.into()));
    if let Ok(Value::Object(f)) = serde_json::to_value(e).map(bounded) {
        m.extend(f);
    }
    let mut out = serde_json::to_vec(&Value::Object(m)).unwrap_or_default();
    out.push(b'\n');
    out
}

/// A `.gitignore` under `.pi-intercom/` cannot be kept (the store tells, through
/// `store::on_ignore_problem`).
pub(crate) fn gitignore_problem(file: &std::path::Path, why: &str) {
    write(&GitignoreProblem {
        path: file.display().to_string(),
        problem: why,
    });
}

/// Record one event when `INTERCOM_PANE_LOG` names an absolute path; otherwise nothing.
pub(crate) fn write<E: Event>(e: &E) {
    let Some(path) = target() else { return };
    let bytes = line(e, SystemClock.now_ms());
    let _ = crate::store::append_line_capped(path, &bytes, CAP);
}
