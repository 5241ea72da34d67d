//! Loopback health probes (docs/interop.md §5): `GET /intercom/health` on `127.0.0.1:<port>` only.
//!
//! A probe answers one question: does the pi that config says owns this port answer as that
//! session? The answer is a [`ConnState`] plus a fixed reason. Anything we cannot prove is
//! `unknown`; only a refusal, a missed deadline or another session answering is `disconnected`,
//! and even that never proves the process is gone. Probes write nothing anywhere.

mod blocking;
mod cache;
mod http;

pub(crate) use blocking::Blocking;
pub use cache::{ProbeCache, ProbeLimits, ProbeTarget};
pub use http::{classify_response, probe_one};

use crate::clock::{format_iso, Ms};
use crate::states::ConnState;

/// Per-request deadline, connect to last body byte (docs/interop.md §5).
pub(crate) const REQUEST_DEADLINE_MS: u64 = 750;
/// Wall-time budget of one batch.
pub(crate) const BATCH_BUDGET_MS: u64 = 4_000;
/// Probes in flight at once.
pub(crate) const MAX_IN_FLIGHT: usize = 16;
/// Only the first this many targets of a roster are ever probed.
pub(crate) const MAX_TARGETS: usize = 256;
/// A check older than this (or dated in the future) reads as `unknown`/`stale`.
pub(crate) const CHECK_TTL_MS: Ms = 30_000;
/// Response header section cap (status line through the blank line).
pub(crate) const MAX_HEADER_BYTES: usize = 4 * 1024;
/// Response body cap.
pub(crate) const MAX_BODY_BYTES: usize = 1024;

/// The fixed reason strings, one per classification in docs/interop.md §5.
pub(crate) mod reason {
    /// 200 with version 1 and the expected session id.
    pub(crate) const VERIFIED: &str = "verified";
    /// Another session id answered on the configured port.
    pub(crate) const IDENTITY_MISMATCH: &str = "identity_mismatch";
    /// Nothing listens on the port (connect refused).
    pub(crate) const REFUSED: &str = "refused";
    /// The request did not finish within its deadline (slow bodies included).
    pub(crate) const TIMEOUT: &str = "timeout";
    /// 404: an extension without the health route.
    pub(crate) const LEGACY: &str = "legacy";
    /// Any other status, redirects included (never followed).
    pub(crate) const HTTP_ERROR: &str = "http_error";
    /// Not HTTP/1.x, bad headers, not JSON, or JSON without the expected fields.
    pub(crate) const MALFORMED: &str = "malformed";
    /// JSON with an integer `version` other than 1.
    pub(crate) const UNSUPPORTED_VERSION: &str = "unsupported_version";
    /// Headers over 4 KiB or body over 1 KiB.
    pub(crate) const OVERSIZE: &str = "oversize";
    /// The connection failed after connecting (reset, early close) or could not be made.
    pub(crate) const NETWORK_ERROR: &str = "network_error";
    /// The batch was cancelled while this probe was in flight.
    pub(crate) const ABORTED: &str = "aborted";
    /// No check has been made (or it was skipped for budget, or dropped by a port change).
    pub(crate) const NOT_CHECKED: &str = "not_checked";
    /// The last check is older than 30 s or dated in the future.
    pub(crate) const STALE: &str = "stale";
    /// Port 0, or a blank, over-long or control-character session id.
    pub(crate) const INVALID_INPUT: &str = "invalid_input";
}

/// One worker's connection as the views show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Connection {
    /// The configured session id this row is about.
    pub session_id: String,
    /// Connected, disconnected or unknown.
    pub state: ConnState,
    /// One of the fixed strings in [`reason`].
    pub reason: &'static str,
    /// When the check shown was made; kept on `stale` so its age can be shown, else `None`.
    pub checked_at: Option<Ms>,
}

impl Connection {
    /// The default before any probe: `unknown`, `not_checked`, no check time.
    pub fn not_checked(session_id: &str) -> Connection {
        Connection {
            session_id: session_id.to_string(),
            state: ConnState::Unknown,
            reason: reason::NOT_CHECKED,
            checked_at: None,
        }
    }

    /// `{"sessionId","state","checkedAt","reason"}`, the shape of Intercom's own status tool.
    pub fn to_json(&self) -> serde_json::Value {
        self.json().value()
    }

    /// The same, typed.
    pub(crate) fn json(&self) -> ConnectionJson<'_> {
        ConnectionJson::new(&self.session_id, self.state, self.checked_at, self.reason)
    }
}

/// A connection as Intercom's own status tool shows it (a record's, and `status --json`'s).
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ConnectionJson<'a> {
    session_id: &'a str,
    state: &'static str,
    checked_at: Option<String>,
    reason: &'a str,
}

impl<'a> ConnectionJson<'a> {
    pub(crate) fn new(
        session_id: &'a str,
        state: ConnState,
        checked_at: Option<Ms>,
        reason: &'a str,
    ) -> Self {
        ConnectionJson {
            session_id,
            state: state.as_str(),
            checked_at: checked_at.map(format_iso),
            reason,
        }
    }

    pub(crate) fn value(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}

/// Longest session id we accept as probe input; pi ids are UUIDs, so this is generous.
const MAX_SESSION_ID_BYTES: usize = 256;

/// Whether a (session id, port) pair can be probed at all; otherwise it is `invalid_input`.
pub(crate) fn valid_target(session_id: &str, port: u16) -> bool {
    port != 0
        && !session_id.trim().is_empty()
        && session_id.len() <= MAX_SESSION_ID_BYTES
        && !session_id.chars().any(char::is_control)
}

/// Stable sort: disconnected last, configured order kept inside both groups.
///
/// Why stable and two-valued: the seed wants config order preserved within connected-or-unknown
/// and within disconnected, so nothing else may influence the order.
pub fn sort_disconnected_last<T>(items: &mut [T], state_of: impl Fn(&T) -> ConnState) {
    items.sort_by_key(|item| state_of(item) == ConnState::Disconnected);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_shape_matches_intercom_status() {
        let c = Connection::not_checked("abc");
        assert_eq!(
            c.to_json().to_string(),
            r#"{"sessionId":"abc","state":"unknown","checkedAt":null,"reason":"not_checked"}"#
        );
        let c = Connection {
            session_id: "s".into(),
            state: ConnState::Connected,
            reason: reason::VERIFIED,
            checked_at: Some(1_764_410_403_000),
        };
        assert_eq!(
            c.to_json().to_string(),
            r#"{"sessionId":"s","state":"connected","checkedAt":"2025-11-29T10:00:03.000Z","reason":"verified"}"#
        );
    }

    #[test]
    fn sort_keeps_config_order_in_both_groups() {
        use ConnState::*;
        let mut v = vec![
            ("a", Disconnected),
            ("b", Connected),
            ("c", Unknown),
            ("d", Disconnected),
            ("e", Connected),
        ];
        sort_disconnected_last(&mut v, |x| x.1);
        let names: Vec<&str> = v.iter().map(|x| x.0).collect();
        assert_eq!(names, ["b", "c", "e", "a", "d"]);
    }

    #[test]
    fn invalid_inputs() {
        assert!(valid_target("abc", 1));
        assert!(!valid_target("abc", 0));
        assert!(!valid_target("  ", 80));
        assert!(!valid_target("", 80));
        assert!(!valid_target("a\nb", 80));
        assert!(!valid_target(&"x".repeat(257), 80));
    }
}
