//! Taking the person to a pane (the sidebar's ⏎) and keeping the sidebar's own pane tall enough.
//!
//! Which client: the one whose active pane is the sidebar's own pane (the person just pressed a
//! key there), the most recently active when several show it. `switch-client -c C -t %N` then
//! makes that pane's session the client's, its window the session's current window and the pane
//! its window's active pane, in one server command (tmux ≥ 3.2); a fresh client listing checks
//! that the client now shows it. Targets are only validated `%N` ids and a client name checked
//! below; the only formats are the constants here.

use std::time::Instant;

use super::args::Args;
use super::{PaneId, Tmux, SMALL_CAP};
use crate::mux::{ErrorCode, Multiplexer, MuxError};

/// Each client's active pane, activity time and name (last: the name is the free-text field).
const CLIENT_FORMAT: &str = "#{pane_id}|#{client_activity}|#{client_name}";
/// Longest client name accepted (tty paths, `client-<pid>` for control clients).
const MAX_CLIENT_NAME: usize = 256;

/// One attached client as `list-clients` prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Client {
    pane: String,
    activity: i64,
    name: String,
}

/// A client name we pass back to tmux as `-c`: printable, no spaces, bounded.
fn valid_client_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_CLIENT_NAME
        && !name.chars().any(|c| c.is_control() || c.is_whitespace())
}

/// Parse `list-clients -F CLIENT_FORMAT`; lines that do not validate are skipped.
fn parse_clients(out: &[u8]) -> Vec<Client> {
    String::from_utf8_lossy(out)
        .lines()
        .filter_map(|l| {
            let mut parts = l.splitn(3, '|');
            let pane = parts.next()?;
            let activity = parts.next()?.parse().ok()?;
            let name = parts.next()?;
            (super::is_pane_id(pane) && valid_client_name(name)).then(|| Client {
                pane: pane.to_string(),
                activity,
                name: name.to_string(),
            })
        })
        .collect()
}

impl Tmux {
    fn clients(&self, deadline: Instant) -> Result<Vec<Client>, MuxError> {
        let args = Args::new("list-clients").arg("-F").arg(CLIENT_FORMAT);
        let out = self.run(args, None, deadline, SMALL_CAP)?;
        Ok(parse_clients(&out.stdout))
    }

    /// Switch the client showing `from` (the caller's own pane) to `target`: its session,
    /// window and pane. Checked afterwards with a fresh client listing.
    pub(super) fn jump(&self, target: &str, from: &str, deadline: Instant) -> Result<(), MuxError> {
        let target = PaneId::parse(target)?;
        let from = PaneId::parse(from)?;
        let client = self
            .clients(deadline)?
            .into_iter()
            .filter(|c| c.pane == from.as_str())
            .max_by_key(|c| c.activity)
            .ok_or_else(|| {
                MuxError::new(
                    ErrorCode::Failed,
                    format!("no tmux client shows the sidebar's pane {from}"),
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
            Some(p) if p == target.as_str() => Ok(()),
            other => Err(MuxError::new(
                ErrorCode::Failed,
                format!(
                    "the client shows {} after switching to {target}",
                    other.as_deref().unwrap_or("nothing")
                ),
            )),
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clients_parse_and_refuse_odd_names() {
        let out = b"%3|1700000000|/dev/pts/4\n%3|1700000005|client-99\n%x|1|/dev/pts/5\n%4|1|a b\n%5|1|/dev/pts/9|odd\n";
        let c = parse_clients(out);
        assert_eq!(c.len(), 3, "{c:?}");
        assert_eq!(c[0].name, "/dev/pts/4");
        assert_eq!(c[1].activity, 1_700_000_005);
        // The name is the last field: a `|` in it stays in it (and is passed on as is).
        assert_eq!(c[2].name, "/dev/pts/9|odd");
        assert!(!valid_client_name("x\ty"));
        assert!(!valid_client_name(""));
    }
}
