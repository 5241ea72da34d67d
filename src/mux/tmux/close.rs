//! tmux's compare-and-close: a fresh look, then the check and the kill in one server pass (no
//! gap between them), then a fresh listing to verify.

use std::time::Instant;

use super::args::{close_condition, filter_for, Args};
use super::listing::bad;
use super::literal::{is_id, PaneId};
use super::{Tmux, SMALL_CAP};
use crate::mux::{CloseOutcome, ErrorCode, MuxError, PaneIdentity, ServerIdentity};

/// What the else branch of the compare-and-close prints.
const REFUSED_TOKEN: &str = "intercom-pane:close-refused";

impl Tmux {
    /// Close the pane only if it still matches `expected` in every field, then verify.
    pub(super) fn compare_and_close(
        &self,
        expected: &PaneIdentity,
        deadline: Instant,
    ) -> Result<CloseOutcome, MuxError> {
        let ServerIdentity::Tmux {
            server_pid,
            start_time,
            ..
        } = expected.server
        else {
            return Ok(CloseOutcome::Refused("not_a_tmux_identity".into()));
        };
        let id = PaneId::parse(&expected.pane_id).ok();
        let valid = is_id(&expected.session_id, '$') && is_id(&expected.window_id, '@');
        let (Some(id), Some(pane_pid)) = (id, expected.pane_pid.filter(|_| valid)) else {
            return Ok(CloseOutcome::Refused("invalid_identity".into()));
        };
        // 1. A fresh look: gone, or different in any field, ends here without a kill.
        let list = self.list(Some(&filter_for(&id)), deadline)?;
        let Some(pane) = list.panes.iter().find(|p| p.id == expected.pane_id) else {
            return Ok(CloseOutcome::AlreadyGone);
        };
        let Some(server) = list.server.as_ref() else {
            return Err(bad("listing without server identity"));
        };
        if let Some(field) = expected.mismatch(server, pane) {
            return Ok(CloseOutcome::Refused(format!("{field}_differs")));
        }
        // Another user's server is never closed through (its socket, or the process the fresh
        // look found, which the recorded identity just matched).
        crate::mux::server_is_ours(&self.socket, Some(server_pid))?;
        // 2. Compare and kill in one server pass: no gap between the check and the kill.
        let cond = close_condition(expected, server_pid, start_time, pane_pid);
        let args = Args::new("if-shell")
            .arg("-F")
            .arg("-t")
            .arg(id.as_str())
            .arg(&cond)
            .arg(&format!("kill-pane -t {id}"))
            .arg(&format!("display-message -p {REFUSED_TOKEN}"));
        let refused = match self.run(args, None, deadline, SMALL_CAP) {
            Ok(out) => String::from_utf8_lossy(&out.stdout).contains(REFUSED_TOKEN),
            Err(e) if e.code == ErrorCode::PaneNotFound => return Ok(CloseOutcome::AlreadyGone),
            Err(e) => return Err(e),
        };
        // 3. Verify from a fresh listing.
        match self.list(Some(&filter_for(&id)), deadline) {
            Ok(l) if l.panes.iter().any(|p| p.id == expected.pane_id) => Ok(if refused {
                CloseOutcome::Refused("changed_before_close".into())
            } else {
                CloseOutcome::Unverified("still_listed".into())
            }),
            Ok(_) if refused => Ok(CloseOutcome::AlreadyGone),
            Ok(_) => Ok(CloseOutcome::Closed),
            // Killing the last pane ends the server: no server means no pane.
            Err(e) if e.code == ErrorCode::NoServer && !refused => Ok(CloseOutcome::Closed),
            Err(e) => Ok(CloseOutcome::Unverified(e.code().to_string())),
        }
    }
}
