//! The close job's machine-local record `<root>/.pi-intercom/jobs/<jobId>.json` (mode 0600,
//! never in config; docs/interop.md §5): the worker's identity as `close-worker` verified it
//! before asking for the handoff. `actions::close::record` writes and reads it (private-file
//! checks there); this is its one shape.
//!
//! ```text
//! {"version": 2, "jobId", "sessionId", "sessionFile"|null,
//!  "pi": {"pid", "startTicks", "bootId"},
//!  "mux": {"kind", "socket", "server", "paneId", "sessionId", "windowId",
//!          "panePid"|null, "terminalId"|null},
//!  "savedAt"}
//! ```

use serde::{Deserialize, Serialize};

use super::{cap, cap_opt, FieldError, Validate, MAX_ID, MAX_TEXT};
use crate::mux::{MuxKind, ServerIdentity};

/// The version this build writes (reading does not depend on it).
pub(crate) const VERSION: u32 = 2;

/// The record as it is on disk. `version`, `jobId` and `savedAt` are written always and not
/// needed to read it; everything the close re-checks is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct JobFile {
    #[serde(default)]
    pub version: u32,
    #[serde(default)]
    pub job_id: String,
    /// The worker's pi session.
    pub session_id: String,
    pub session_file: Option<String>,
    pub pi: PiFields,
    pub mux: MuxFields,
    #[serde(default)]
    pub saved_at: String,
}

/// The worker's pi process: (pid, start ticks, boot id).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PiFields {
    pub pid: i32,
    pub start_ticks: u64,
    pub boot_id: String,
}

/// Where the worker's pane was, on which server incarnation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct MuxFields {
    pub kind: MuxKind,
    pub socket: String,
    pub server: ServerIdentity,
    pub pane_id: String,
    /// The tmux session id, or the Herdr workspace.
    pub session_id: String,
    pub window_id: String,
    /// The pane's process when the pi was verified in it (tmux `pane_pid`, Herdr `shell_pid`).
    pub pane_pid: Option<i32>,
    /// Herdr: the pane's terminal then.
    pub terminal_id: Option<String>,
}

impl Validate for JobFile {
    fn validate(&self) -> Result<(), FieldError> {
        for (field, v) in [
            ("jobId", self.job_id.as_str()),
            ("sessionId", &self.session_id),
            ("pi.bootId", &self.pi.boot_id),
            ("mux.paneId", &self.mux.pane_id),
            ("mux.sessionId", &self.mux.session_id),
            ("mux.windowId", &self.mux.window_id),
            ("savedAt", &self.saved_at),
        ] {
            cap(field, v, MAX_ID)?;
        }
        cap_opt("mux.terminalId", self.mux.terminal_id.as_deref(), MAX_ID)?;
        cap("mux.socket", &self.mux.socket, MAX_TEXT)?;
        cap_opt("sessionFile", self.session_file.as_deref(), MAX_TEXT)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{decode, encode, DecodeError};
    use super::*;

    /// As 0.1's `close-worker` wrote it (the `json!` builder before this schema).
    const OLD: &str = r#"{
  "version": 2,
  "jobId": "close-1",
  "sessionId": "s-1",
  "sessionFile": null,
  "pi": {
    "pid": 4242,
    "startTicks": 99,
    "bootId": "b0"
  },
  "mux": {
    "kind": "tmux",
    "socket": "/tmp/t.sock",
    "server": {
      "kind": "tmux",
      "socket_path": "/tmp/t.sock",
      "server_pid": 41,
      "start_time": 1700000000
    },
    "paneId": "%3",
    "sessionId": "$1",
    "windowId": "@2",
    "panePid": 4200,
    "terminalId": null
  },
  "savedAt": "2026-11-30T00:00:00.000Z"
}
"#;

    #[test]
    fn the_previous_versions_record_reads_and_writes_back_byte_for_byte() {
        let f: JobFile = decode(OLD.as_bytes()).unwrap();
        assert_eq!(f.mux.kind, MuxKind::Tmux);
        assert_eq!((f.pi.pid, f.mux.pane_pid), (4242, Some(4200)));
        assert_eq!(String::from_utf8(encode(&f).unwrap()).unwrap(), OLD);
    }

    #[test]
    fn a_missing_or_mistyped_field_is_refused_and_named() {
        let no_pane = OLD.replace(r#""paneId": "%3","#, "");
        let e = decode::<JobFile>(no_pane.as_bytes()).unwrap_err();
        assert!(
            matches!(&e, DecodeError::Shape(s) if s.contains("paneId")),
            "{e}"
        );
        let big_pid = OLD.replace("4242", "4294967296");
        assert!(decode::<JobFile>(big_pid.as_bytes()).is_err());
        let other_mux = OLD.replace(
            r#""kind": "tmux",
    "socket""#,
            r#""kind": "zellij",
    "socket""#,
        );
        assert!(decode::<JobFile>(other_mux.as_bytes()).is_err());
        assert_eq!(decode::<JobFile>(b"{"), Err(DecodeError::NotJson));
    }
}
