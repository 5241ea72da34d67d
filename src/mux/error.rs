//! The errors of multiplexer calls: a fixed, content-free code plus a short sanitized detail.

/// Fixed, content-free error codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// The multiplexer program is not installed (or not on PATH).
    NotInstalled,
    /// The installed version is older than we support.
    TooOld,
    /// No server answers on the socket (missing socket, dead socket, refused).
    NoServer,
    /// The call did not finish before its deadline.
    Timeout,
    /// The multiplexer ran and reported a failure.
    Failed,
    /// The pane does not exist.
    PaneNotFound,
    /// The reply could not be parsed or did not validate.
    BadReply,
    /// We refused to send the request (invalid id, text too long, ...).
    BadRequest,
    /// Herdr refused to prompt an agent that shows a dialog.
    AgentBlocked,
    /// The server (its socket or its process) belongs to another user: never typed into or
    /// closed through.
    NotOurs,
}

impl ErrorCode {
    /// The code as users and JSON see it.
    pub fn code(self) -> &'static str {
        match self {
            ErrorCode::NotInstalled => "not_installed",
            ErrorCode::TooOld => "too_old",
            ErrorCode::NoServer => "no_server",
            ErrorCode::Timeout => "timeout",
            ErrorCode::Failed => "failed",
            ErrorCode::PaneNotFound => "pane_not_found",
            ErrorCode::BadReply => "bad_reply",
            ErrorCode::BadRequest => "bad_request",
            ErrorCode::AgentBlocked => "agent_blocked",
            ErrorCode::NotOurs => "not_ours",
        }
    }
}

/// An error from a multiplexer call: a fixed code plus a short, sanitized detail for logs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MuxError {
    pub code: ErrorCode,
    /// Sanitized, at most 200 characters; may quote the multiplexer's own message.
    pub detail: String,
}

impl MuxError {
    /// Build an error, sanitizing and bounding the detail.
    pub fn new(code: ErrorCode, detail: impl AsRef<str>) -> MuxError {
        let clean = crate::text::sanitize(detail.as_ref());
        let e = MuxError {
            code,
            detail: clean.trim().chars().take(200).collect(),
        };
        crate::log::event(
            crate::log::event::MUX_ERROR,
            serde_json::json!({"code": e.code(), "detail": e.detail}),
        );
        e
    }

    /// The fixed code string.
    pub fn code(&self) -> &'static str {
        self.code.code()
    }
}

impl std::fmt::Display for MuxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.detail.is_empty() {
            f.write_str(self.code())
        } else {
            write!(f, "{}: {}", self.code(), self.detail)
        }
    }
}

impl std::error::Error for MuxError {}
