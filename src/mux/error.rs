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
        if let Some(repeated) = first_in_a_while(e.code(), &e.detail) {
            crate::log::write(&crate::log::MuxError {
                code: e.code(),
                detail: &e.detail,
                repeated,
            });
        }
        e
    }

    /// The fixed code string.
    pub fn code(&self) -> &'static str {
        self.code.code()
    }
}

/// The same error (code and detail) is logged at most once per this long (`no_server`: once
/// per run).
const LOG_AGAIN_AFTER: std::time::Duration = std::time::Duration::from_secs(60);
/// Most distinct errors remembered (the oldest is forgotten first).
const LOG_MEMORY: usize = 64;

type LogMemory = Vec<(&'static str, String, std::time::Instant, u64)>;
static LOGGED: std::sync::Mutex<LogMemory> = std::sync::Mutex::new(Vec::new());

/// Whether to log this error now: `Some(n)`, the times it came since it was last logged (not
/// logged), or `None` while it was logged less than `LOG_AGAIN_AFTER` ago.
fn first_in_a_while(code: &'static str, detail: &str) -> Option<u64> {
    let Ok(mut g) = LOGGED.lock() else {
        return Some(0);
    };
    let now = std::time::Instant::now();
    if let Some(e) = g.iter_mut().find(|e| e.0 == code && e.1 == detail) {
        // A server that is not there (the default tmux socket of a roster whose seats run on
        // Herdr is asked every pass) is said once per run: it says nothing new later.
        if code == ErrorCode::NoServer.code() || now.duration_since(e.2) < LOG_AGAIN_AFTER {
            e.3 += 1;
            return None;
        }
        let n = e.3;
        e.2 = now;
        e.3 = 0;
        return Some(n);
    }
    if g.len() >= LOG_MEMORY {
        g.remove(0);
    }
    g.push((code, detail.to_string(), now, 0));
    Some(0)
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

#[cfg(test)]
mod log_tests {
    use super::*;

    #[test]
    fn the_same_error_is_logged_once_a_while_and_a_missing_server_once() {
        let d = "no server at /tmp/log-once-test.sock";
        assert_eq!(first_in_a_while("no_server", d), Some(0));
        assert_eq!(first_in_a_while("no_server", d), None);
        assert_eq!(first_in_a_while("no_server", d), None);
        assert_eq!(first_in_a_while("timeout", d), Some(0), "another code");
        assert_eq!(first_in_a_while("timeout", d), None);
        assert_eq!(
            first_in_a_while("no_server", "no server at /tmp/other.sock"),
            Some(0)
        );
        // Past the minute: another code again; a missing server never again.
        if let Ok(mut g) = LOGGED.lock() {
            for e in g.iter_mut().filter(|e| e.1.contains("log-once-test")) {
                e.2 = e.2.checked_sub(LOG_AGAIN_AFTER).unwrap_or(e.2);
            }
        }
        assert_eq!(first_in_a_while("timeout", d), Some(1));
        assert_eq!(first_in_a_while("no_server", d), None);
    }
}
