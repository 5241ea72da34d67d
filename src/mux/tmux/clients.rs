//! What the alerts ask of tmux (docs/behaviour.md §3b): which panes the people attached look at,
//! the status line's option, a message on each attached client, the plugin's options.
//!
//! Data reaches tmux only as: a user option's value without `-F` (stored as given, never
//! expanded), a client name checked here, and a message through `literal::message_literal`
//! (display-message expands its text and draws it). Formats are the constants below.

use std::time::Instant;

use super::args::Args;
use super::{literal, Tmux, SMALL_CAP};
use crate::mux::{ErrorCode, MuxError};

/// Each client: whether it is a control client, its active pane, its activity time, its name
/// (last: the name is the free-text field).
const CLIENT_FORMAT: &str = "#{client_control_mode}|#{pane_id}|#{client_activity}|#{client_name}";
/// Longest client name accepted (tty paths, `client-<pid>` for control clients).
const MAX_CLIENT_NAME: usize = 256;
/// Longest option value we set or read.
pub(crate) const MAX_OPTION_VALUE: usize = 1024;
/// Longest message shown.
pub(crate) const MAX_MESSAGE: usize = 400;

/// One attached client as `list-clients` prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Client {
    /// A control-mode client (`tmux -C`: a program, not a person).
    pub control: bool,
    /// The pane its current window shows as active.
    pub pane: String,
    /// When the person last used it (seconds since the epoch).
    pub activity: i64,
    pub name: String,
}

/// A client name we pass back to tmux as `-c`: printable, no spaces, bounded.
pub(super) fn valid_client_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_CLIENT_NAME
        && !name.chars().any(|c| c.is_control() || c.is_whitespace())
}

/// A user option we set or read: `@`, then letters, digits, `-` and `_`.
fn valid_user_option(name: &str) -> bool {
    name.len() > 1
        && name.len() <= 64
        && name.starts_with('@')
        && name[1..]
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Parse `list-clients -F CLIENT_FORMAT`; lines that do not validate are skipped.
pub(crate) fn parse_clients(out: &[u8]) -> Vec<Client> {
    String::from_utf8_lossy(out)
        .lines()
        .filter_map(|l| {
            let mut parts = l.splitn(4, '|');
            // tmux 3.3a prints this flag as `1` or nothing.
            let control = match parts.next()? {
                "1" => true,
                "0" | "" => false,
                _ => return None,
            };
            let pane = parts.next()?;
            let activity = parts.next()?.parse().ok()?;
            let name = parts.next()?;
            (super::is_pane_id(pane) && valid_client_name(name)).then(|| Client {
                control,
                pane: pane.to_string(),
                activity,
                name: name.to_string(),
            })
        })
        .collect()
}

impl Tmux {
    /// The attached clients, control clients included (`Client::control` says which).
    pub fn clients(&self, deadline: Instant) -> Result<Vec<Client>, MuxError> {
        let args = Args::new("list-clients").arg("-F").arg(CLIENT_FORMAT);
        let out = self.run(args, None, deadline, SMALL_CAP)?;
        Ok(parse_clients(&out.stdout))
    }

    /// The panes people look at: each attached client's active pane, control clients (programs,
    /// such as a live view's listener) left out.
    pub fn watched_panes(&self, deadline: Instant) -> Result<Vec<String>, MuxError> {
        Ok(self
            .clients(deadline)?
            .into_iter()
            .filter(|c| !c.control)
            .map(|c| c.pane)
            .collect())
    }

    /// `set-option -g NAME VALUE`: without `-F`, tmux stores the value as given.
    pub fn set_user_option(
        &self,
        name: &str,
        value: &str,
        deadline: Instant,
    ) -> Result<(), MuxError> {
        if !valid_user_option(name) {
            return Err(MuxError::new(ErrorCode::BadRequest, "not a user option"));
        }
        if value.len() > MAX_OPTION_VALUE || value.contains(char::is_control) {
            return Err(MuxError::new(ErrorCode::BadRequest, "invalid option value"));
        }
        let args = Args::new("set-option")
            .arg("-g")
            .arg("--")
            .arg(name)
            .arg(value);
        self.run(args, None, deadline, SMALL_CAP).map(|_| ())
    }

    /// The global values of user options (`None` for one unset or empty), in one
    /// `display-message -p` whose format names only the (checked) options: tmux inserts their
    /// values as they are, never expanding them again.
    pub fn user_options(
        &self,
        names: &[&str],
        deadline: Instant,
    ) -> Result<Vec<Option<String>>, MuxError> {
        if names.is_empty() || names.len() > 32 || !names.iter().all(|n| valid_user_option(n)) {
            return Err(MuxError::new(ErrorCode::BadRequest, "not user options"));
        }
        let format = names
            .iter()
            .map(|n| format!("#{{{n}}}"))
            .collect::<Vec<_>>()
            .join("\u{1f}");
        let args = Args::new("display-message").arg("-p").arg(&format);
        let o = self.run(args, None, deadline, SMALL_CAP)?;
        let text = String::from_utf8_lossy(&o.stdout);
        let line = text.strip_suffix('\n').unwrap_or(&text);
        let values: Vec<Option<String>> = line
            .split('\u{1f}')
            .map(|v| (!v.is_empty() && v.len() <= MAX_OPTION_VALUE).then(|| v.to_string()))
            .collect();
        if values.len() != names.len() {
            return Err(MuxError::new(
                ErrorCode::BadReply,
                "an option's value holds a separator or a line break",
            ));
        }
        Ok(values)
    }

    /// Show `text` on client `client` for `millis` (`display-message -c -d`): the text is
    /// handed over as a literal (`literal::message_literal`), at most `MAX_MESSAGE` bytes.
    pub fn display_message(
        &self,
        client: &str,
        text: &str,
        millis: u32,
        deadline: Instant,
    ) -> Result<(), MuxError> {
        if !valid_client_name(client) {
            return Err(MuxError::new(ErrorCode::BadRequest, "not a client name"));
        }
        let mut text = crate::text::sanitize(text);
        if text.len() > MAX_MESSAGE {
            let mut cut = MAX_MESSAGE;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
        }
        let args = Args::new("display-message")
            .arg("-c")
            .arg(client)
            .arg("-d")
            .arg(&millis.to_string())
            .arg(&literal::message_literal(&text));
        self.run(args, None, deadline, SMALL_CAP).map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clients_parse_and_refuse_odd_lines() {
        let out = b"0|%3|1700000000|/dev/pts/4\n1|%5|1700000005|client-99\n0|%x|1|/dev/pts/5\n0|%4|1|a b\n2|%1|1|/dev/pts/1\n0|%6|x|/dev/pts/8\n0|%6|1|/dev/pts/9|odd\n";
        let c = parse_clients(out);
        assert_eq!(c.len(), 3, "{c:?}");
        assert!(!c[0].control && c[1].control);
        assert_eq!(c[1].activity, 1_700_000_005);
        // The name is the last field: a `|` in it stays in it (and is passed on as is).
        assert_eq!(c[2].name, "/dev/pts/9|odd");
        assert!(!valid_client_name("x\ty"));
        assert!(!valid_client_name(""));
    }

    #[test]
    fn only_user_options() {
        assert!(valid_user_option("@intercom_pane_status"));
        assert!(valid_user_option("@intercom-pane-alert-bell"));
        for bad in ["status-right", "@", "@a b", "@#{x}", "@a;"] {
            assert!(!valid_user_option(bad), "{bad}");
        }
    }
}
