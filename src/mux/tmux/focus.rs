//! Taking the person to a pane (the sidebar's ⏎) and keeping the sidebar's own pane tall enough.
//!
//! Which client: the one whose active pane is the sidebar's own pane (the person just pressed a
//! key there), the most recently active when several show it. `switch-client -c C -t %N` then
//! makes that pane's session the client's, its window the session's current window and the pane
//! its window's active pane, in one server command (tmux ≥ 3.2); a fresh client listing checks
//! that the client now shows it. Targets are only validated `%N` ids and a client name checked
//! in `clients.rs`; the only formats are the constants there. Control clients (programs) are
//! never switched.

use std::time::Instant;

use super::args::Args;
use super::{PaneId, Tmux, SMALL_CAP};
use crate::mux::{ErrorCode, Multiplexer, MuxError};

/// The pane option a jump leaves on the pane it went to: the sidebar it came from.
pub(crate) const BACK_OPTION: &str = "@intercom-pane-back";
/// The server option the tmux plugin sets to the key it bound for the way back.
const BACK_KEY_OPTION: &str = "@intercom-pane-back-key";

impl Tmux {
    /// Switch the client showing `from` (the caller's own pane; without one, the attached
    /// client used last) to `target`: its session, window and pane. Checked afterwards with a
    /// fresh client listing.
    pub(super) fn jump(
        &self,
        target: &str,
        from: Option<&str>,
        deadline: Instant,
    ) -> Result<(), MuxError> {
        let target = PaneId::parse(target)?;
        let from = from.map(PaneId::parse).transpose()?;
        let client = self
            .clients(deadline)?
            .into_iter()
            .filter(|c| !c.control && from.as_ref().is_none_or(|f| c.pane == f.as_str()))
            .max_by_key(|c| c.activity)
            .ok_or_else(|| {
                MuxError::new(
                    ErrorCode::Failed,
                    match &from {
                        Some(f) => format!("no tmux client shows the pane {f}"),
                        None => "no tmux client is attached".to_string(),
                    },
                )
            })?;
        let args = Args::new("switch-client")
            .arg("-c")
            .arg(&client.name)
            .arg("-t")
            .arg(target.as_str());
        self.run(args, None, deadline, SMALL_CAP)?;
        let now = self
            .clients(deadline)?
            .into_iter()
            .find(|c| c.name == client.name)
            .map(|c| c.pane);
        match now {
            Some(p) if p == target.as_str() => {
                // The way back: the plugin's key pressed in that pane returns to this sidebar
                // (`@intercom-pane-back`, a validated `%N`, stored as given without `-F`). A
                // failure here costs only the way back, never the move.
                if let Some(f) = &from {
                    let set = Args::new("set-option")
                        .arg("-p")
                        .arg("-t")
                        .arg(target.as_str())
                        .arg(BACK_OPTION)
                        .arg(f.as_str());
                    let _ = self.run(set, None, deadline, SMALL_CAP);
                    // Named where the person now looks, when the plugin's key is bound.
                    if let Some(key) = self.back_key(deadline) {
                        let text = format!("intercom-pane: prefix {key} comes back to the sidebar");
                        let _ = self.display_message(&client.name, &text, 4000, deadline);
                    }
                }
                Ok(())
            }
            other => Err(MuxError::new(
                ErrorCode::Failed,
                format!(
                    "the client shows {} after switching to {target}",
                    other.as_deref().unwrap_or("nothing")
                ),
            )),
        }
    }

    /// The tmux plugin's pane key, as the plugin records it when it binds it
    /// (`@intercom-pane-back-key`): a plain key name only (letters, digits, `-`, `_`).
    fn back_key(&self, deadline: Instant) -> Option<String> {
        let key = self
            .user_options(&[BACK_KEY_OPTION], deadline)
            .ok()?
            .into_iter()
            .next()??;
        let plain = key.len() <= 16
            && key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        plain.then_some(key)
    }

    /// Make `pane` at least `lines` tall (`resize-pane -y`); `Ok(false)` when it already is.
    /// tmux takes the rows from its neighbours and never makes a pane taller than its window.
    pub(super) fn grow_to(
        &self,
        pane: &str,
        lines: u16,
        deadline: Instant,
    ) -> Result<bool, MuxError> {
        let pane = PaneId::parse(pane)?;
        let now = Multiplexer::find_pane(self, pane.as_str(), deadline)?
            .ok_or_else(|| MuxError::new(ErrorCode::PaneNotFound, pane.as_str()))?;
        if now.height.is_some_and(|h| h >= u32::from(lines)) {
            return Ok(false);
        }
        let args = Args::new("resize-pane")
            .arg("-t")
            .arg(pane.as_str())
            .arg("-y")
            .arg(&lines.to_string());
        self.run(args, None, deadline, SMALL_CAP).map(|_| true)
    }
}
