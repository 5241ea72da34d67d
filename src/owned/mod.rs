//! The files and reports intercom-pane owns, one typed schema each: a serde-derived struct that
//! the writer encodes and the reader decodes (a renamed field fails to compile, never reads
//! `None`), its field caps in one `validate()`, and its stages as an enum with one legal-step
//! function (as `actions/close/stage.rs` does for the close job in config).
//!
//! - `monitor`: the sidebar's ownership record `<root>/.pi-intercom/monitor-<hash>.json`, shared
//!   with Intercom's own Herdr launcher (its stages and fields read, foreign keys kept);
//! - `job_record`: the close job's machine-local record `<root>/.pi-intercom/jobs/<job>.json`;
//! - `resume_fence`: a resume's fence `<root>/.pi-intercom/jobs/resume-<hash>.json`;
//! - `retire_record`: what `retire` keeps of a worker, `<root>/.pi-intercom/retired/<id>-<ms>.json`;
//! - `close_report`, `resume_report`: what close-worker and resume-worker print (`--json`), log
//!   and hand to the sidebar and the coordinator's tools;
//! - `spawn_report`, `retire_report`: what `spawn` and `retire` print (`--json`) and hand to the
//!   sidebar.
//!
//! Typed elsewhere already, with the same rules: the launch spec (`actions::launch_spec`), the
//! alert memory (`alerts::memory`), seen marks (`evidence::seen`). Not here: `config.json`, which
//! is Intercom's and is changed by a splice that keeps every foreign byte
//! (`actions::config_write`), and the registration (`evidence::registrations`).
//!
//! Only schemas live here: reading and writing the files stays with their callers (`fsguard`,
//! `store`).

pub(crate) mod close_report;
pub(crate) mod job_record;
pub(crate) mod monitor;
pub(crate) mod restore_report;
pub(crate) mod resume_fence;
pub(crate) mod resume_report;
pub(crate) mod retire_record;
pub(crate) mod retire_report;
pub(crate) mod spawn_report;

use serde::de::DeserializeOwned;
use serde::Serialize;

/// A field that is not what our writer writes: over its cap, or empty where it may not be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// The field's name in the file.
    pub field: &'static str,
    pub why: &'static str,
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.why)
    }
}

impl std::error::Error for FieldError {}

/// The one check of every field of a file, run before it is written and after it is read.
pub(crate) trait Validate {
    fn validate(&self) -> Result<(), FieldError>;
}

/// Longest id (pane, window, workspace, job, session, marker, terminal) in an owned file.
pub(crate) const MAX_ID: usize = 512;
/// Longest path or free text (socket, session file, a detail) in an owned file.
pub(crate) const MAX_TEXT: usize = 4096;

/// `s` is at most `max` bytes and holds no NUL.
pub(crate) fn cap(field: &'static str, s: &str, max: usize) -> Result<(), FieldError> {
    if s.len() > max {
        return Err(FieldError {
            field,
            why: "too long",
        });
    }
    if s.contains('\0') {
        return Err(FieldError {
            field,
            why: "holds NUL",
        });
    }
    Ok(())
}

/// `cap` for a field that may be absent.
pub(crate) fn cap_opt(field: &'static str, s: Option<&str>, max: usize) -> Result<(), FieldError> {
    s.map_or(Ok(()), |s| cap(field, s, max))
}

/// Why an owned file's bytes are not a usable record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// Not JSON at all.
    NotJson,
    /// JSON, but not this file's shape (serde's words: which field, what it expected).
    Shape(String),
    /// The shape, with a field our writer never writes.
    Field(FieldError),
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DecodeError::NotJson => f.write_str("not JSON"),
            DecodeError::Shape(e) => write!(f, "not the expected shape ({e})"),
            DecodeError::Field(e) => write!(f, "a field is not valid ({e})"),
        }
    }
}

impl std::error::Error for DecodeError {}

/// Decode and validate a file's bytes.
pub(crate) fn decode<T: DeserializeOwned + Validate>(bytes: &[u8]) -> Result<T, DecodeError> {
    let t: T = serde_json::from_slice(bytes).map_err(|e| match e.classify() {
        serde_json::error::Category::Data => DecodeError::Shape(e.to_string()),
        _ => DecodeError::NotJson,
    })?;
    t.validate().map_err(DecodeError::Field)?;
    Ok(t)
}

/// Validate and encode a record for its file: pretty JSON and a final newline.
pub(crate) fn encode<T: Serialize + Validate>(t: &T) -> Result<Vec<u8>, EncodeError> {
    t.validate().map_err(EncodeError::Field)?;
    let mut bytes = serde_json::to_vec_pretty(t).map_err(|e| EncodeError::Json(e.to_string()))?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// Why a record was not encoded (nothing is written then).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EncodeError {
    Field(FieldError),
    Json(String),
}

impl std::fmt::Display for EncodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EncodeError::Field(e) => write!(f, "not written: {e}"),
            EncodeError::Json(e) => write!(f, "not encoded: {e}"),
        }
    }
}

impl std::error::Error for EncodeError {}
