//! The registration record: one serde type that `register` writes and every reader reads
//! (docs/interop.md §4), with its field caps in one place (`Registration::validate`).
//!
//! Unknown keys are ignored. A present field of the wrong type, a missing required part, a
//! version other than 1 or an impossible identity (pid ≤ 0) makes the whole record invalid (a
//! half-understood identity is worse than none); an optional text over its cap, blank, or not
//! of its shape is dropped and the rest of the record is used.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer, Serialize};

use super::pi_events::PiReport;
use super::run_state::{RunEvent, RunState};
use crate::clock::{iso_ms, iso_ms_opt, Ms};
use crate::mux::MuxKind;

/// The only record version.
pub(super) const VERSION: u32 = 1;

/// Which multiplexer pane the pi lives in, as recorded at registration.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MuxRecord {
    /// `kind`: tmux or Herdr; `None` when it names a multiplexer this tool does not drive.
    #[serde(deserialize_with = "mux_kind")]
    pub kind: Option<MuxKind>,
    #[serde(default)]
    pub socket: Option<String>,
    #[serde(default)]
    pub server_pid: Option<i64>,
    #[serde(default)]
    pub server_start: Option<i64>,
    #[serde(default)]
    pub session: Option<String>,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub window_id: Option<String>,
    #[serde(default)]
    pub pane_id: Option<String>,
    /// Herdr's terminal id of the pane (it changes when the pane is recreated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminal_id: Option<String>,
}

/// The run state recorded on `agent_start` / `agent_settled` / `session_shutdown`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunRecord {
    pub state: RunState,
    #[serde(default)]
    pub seq: u64,
    #[serde(with = "iso_ms")]
    pub at: Ms,
    /// The event that set it, when recorded and known (an unknown name reads as `None`).
    #[serde(default, deserialize_with = "run_event")]
    pub event: Option<RunEvent>,
    /// `session_tree`: the entry pi's branch ends at since `/tree`.
    #[serde(default)]
    pub leaf_id: Option<String>,
}

/// One seat's registration (`seats/<hash>.json`, `<dataRoot>/seats/pi/<hash>/registration.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Registration {
    /// Where it was read from (not part of the file).
    #[serde(skip)]
    pub path: PathBuf,
    pub version: u32,
    #[serde(default)]
    pub seat: Option<String>,
    #[serde(default)]
    pub harness: Option<String>,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub session_file: Option<String>,
    #[serde(default)]
    pub sessions_dir: Option<String>,
    /// The folder pi really runs in (`/proc/<pi>/cwd`, never a flag).
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub pid: Option<i32>,
    #[serde(default)]
    pub start_ticks: Option<u64>,
    #[serde(default)]
    pub boot_id: Option<String>,
    #[serde(default, with = "iso_ms_opt")]
    pub started_at: Option<Ms>,
    #[serde(default)]
    pub mux: Option<MuxRecord>,
    /// The private channel (a Unix socket path) the shipped extension opened for this seat: a
    /// reply is handed to pi through it instead of being typed (docs/behaviour.md §6).
    #[serde(default)]
    pub channel: Option<String>,
    #[serde(default)]
    pub run_state: Option<RunRecord>,
    /// What pi told the shipped extension, as of the newest event recorded (dialogs, retries,
    /// compaction, tools, the settled run, context fill).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pi: Option<PiReport>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_set_by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
}

/// Why a record is invalid (`registration_invalid`; the reason is for tests and fuzzing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordError {
    Json,
    Version,
    Pid,
}

/// Keep `v` when it is not blank and at most `max` bytes.
fn capped(v: &mut Option<String>, max: usize) {
    if v.as_ref()
        .is_some_and(|x| x.trim().is_empty() || x.len() > max)
    {
        *v = None;
    }
}

impl Registration {
    /// A new record of `version` 1 with nothing else known yet.
    pub fn new(path: PathBuf) -> Registration {
        Registration {
            path,
            version: VERSION,
            seat: None,
            harness: None,
            session_id: None,
            session_file: None,
            sessions_dir: None,
            cwd: None,
            pid: None,
            start_ticks: None,
            boot_id: None,
            started_at: None,
            mux: None,
            channel: None,
            run_state: None,
            pi: None,
            task: None,
            task_set_by: None,
            project: None,
            workspace: None,
        }
    }

    /// The field caps, the one place they live: a record that breaks a hard rule is refused;
    /// an optional text over its cap is dropped.
    pub fn validate(mut self) -> Result<Registration, RecordError> {
        if self.version != VERSION {
            return Err(RecordError::Version);
        }
        if self.pid.is_some_and(|p| p <= 0) {
            return Err(RecordError::Pid);
        }
        capped(&mut self.seat, 128);
        capped(&mut self.session_id, 256);
        capped(&mut self.session_file, 4096);
        capped(&mut self.sessions_dir, 4096);
        capped(&mut self.cwd, 4096);
        capped(&mut self.boot_id, 64);
        capped(&mut self.harness, 64);
        capped(&mut self.task, 4096);
        capped(&mut self.task_set_by, 128);
        capped(&mut self.project, 256);
        capped(&mut self.workspace, 4096);
        // A socket path is absolute and fits `sun_path` (107 bytes and a NUL).
        capped(&mut self.channel, 107);
        if self.channel.as_ref().is_some_and(|c| !c.starts_with('/')) {
            self.channel = None;
        }
        if let Some(m) = self.mux.as_mut() {
            capped(&mut m.socket, 4096);
            capped(&mut m.session, 256);
            capped(&mut m.session_id, 64);
            capped(&mut m.window_id, 64);
            capped(&mut m.pane_id, 64);
            capped(&mut m.terminal_id, 64);
        }
        if let Some(rs) = self.run_state.as_mut() {
            capped(&mut rs.leaf_id, 64);
        }
        self.pi = self.pi.and_then(|p| p.validate().ok());
        Ok(self)
    }

    /// The record's bytes as `register` writes them (pretty JSON and a final newline).
    pub fn to_bytes(&self) -> Result<Vec<u8>, serde_json::Error> {
        let mut bytes = serde_json::to_vec_pretty(self)?;
        bytes.push(b'\n');
        Ok(bytes)
    }

    /// pi recorded the end of this session (`session_shutdown`): it quit, or moved to another
    /// session in the same process.
    pub fn session_closed(&self) -> bool {
        self.run_state
            .as_ref()
            .is_some_and(|rs| rs.state == RunState::Closed)
    }

    /// The recorded process incarnation, when all three parts were recorded.
    pub fn identity(&self) -> Option<crate::proc::ProcIdentity> {
        Some(crate::proc::ProcIdentity {
            pid: self.pid?,
            start_ticks: self.start_ticks?,
            boot_id: self.boot_id.clone()?,
        })
    }

    /// The one rule for "is this registration live" (docs/behaviour.md §1): the pid's process
    /// now has the recorded start ticks and boot id (wherever they were recorded), is not a
    /// zombie, and runs as this user (another user's process is never trusted, typed into or
    /// closed). `Some(true)` live, `Some(false)` stale, `None` no pid recorded.
    pub fn alive(&self) -> Option<bool> {
        let pid = self.pid?;
        let Some(now) = crate::proc::identity(pid) else {
            return Some(false);
        };
        Some(
            self.start_ticks.is_none_or(|t| t == now.start_ticks)
                && self.boot_id.as_deref().is_none_or(|b| b == now.boot_id)
                && crate::proc::is_alive(&now)
                && crate::proc::is_ours(pid),
        )
    }

    /// Whether this record was written by the process `id` (pid, start ticks and boot id).
    pub fn is_process(&self, id: &crate::proc::ProcIdentity) -> bool {
        self.pid == Some(id.pid)
            && self.start_ticks == Some(id.start_ticks)
            && self.boot_id.as_deref() == Some(id.boot_id.as_str())
    }

    /// Does this record agree with what the board found for the seat: its session file (when
    /// both name one) and the folder pi runs in (`folder`: the seat's session header's cwd or
    /// its configured project folder)? Every action checks this right before it acts, so a
    /// second record of the session (another pi started with the same `--session-id` elsewhere)
    /// can never steer a reply, a close, a handoff or a resume (docs/behaviour.md §5b).
    pub fn matches_seat(
        &self,
        board_file: Option<&Path>,
        folder: Option<&Path>,
    ) -> Result<(), NotThisSeat> {
        if let (Some(mine), Some(board)) = (self.session_file.as_deref(), board_file) {
            if !super::same_path(Path::new(mine), board) {
                return Err(NotThisSeat::SessionFile {
                    registered: shown(mine),
                    board: shown(&board.to_string_lossy()),
                });
            }
        }
        if let (Some(cwd), Some(folder)) = (self.cwd.as_deref(), folder) {
            if !super::same_path(Path::new(cwd), folder) {
                return Err(NotThisSeat::Folder {
                    registered: shown(cwd),
                    worker: shown(&folder.to_string_lossy()),
                });
            }
        }
        Ok(())
    }
}

/// How a registration disagrees with the seat the board found (its texts already shown-safe).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotThisSeat {
    SessionFile { registered: String, board: String },
    Folder { registered: String, worker: String },
}

impl std::fmt::Display for NotThisSeat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotThisSeat::SessionFile { registered, board } => write!(
                f,
                "the registration names session file {registered} but the board found {board}"
            ),
            NotThisSeat::Folder { registered, worker } => write!(
                f,
                "the registered pi runs in {registered}, not in the worker's folder {worker}"
            ),
        }
    }
}

fn shown(s: &str) -> String {
    crate::text::clip(&crate::text::sanitize(s), 120)
}

/// Parse and validate one registration read from `path`.
pub fn parse_record(path: &Path, bytes: &[u8]) -> Result<Registration, RecordError> {
    let mut r: Registration = serde_json::from_slice(bytes).map_err(|_| RecordError::Json)?;
    r.path = path.to_path_buf();
    r.validate()
}

/// `mux.kind` is required; a name this tool does not drive (or `null`, as such a record is
/// written back) reads as `None`.
fn mux_kind<'de, D: Deserializer<'de>>(d: D) -> Result<Option<MuxKind>, D::Error> {
    let name = Option::<String>::deserialize(d)?;
    Ok(name.as_deref().and_then(MuxKind::parse))
}

/// `runState.event`: an unknown name (a newer extension's) reads as `None`.
fn run_event<'de, D: Deserializer<'de>>(d: D) -> Result<Option<RunEvent>, D::Error> {
    Ok(Option::<String>::deserialize(d)?.and_then(|e| RunEvent::parse(&e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> Result<Registration, RecordError> {
        parse_record(Path::new("/x.json"), json.as_bytes())
    }

    #[test]
    fn what_the_writer_writes_the_reader_reads_back() {
        let mut r = Registration::new(PathBuf::from("/x.json"));
        r.session_id = Some("abc".into());
        r.pid = Some(42);
        r.started_at = Some(1_700_000_000_123);
        r.mux = Some(MuxRecord {
            kind: Some(MuxKind::Tmux),
            pane_id: Some("%3".into()),
            ..MuxRecord::default()
        });
        r.run_state = Some(RunRecord {
            state: RunState::Working,
            seq: 7,
            at: 1_700_000_001_000,
            event: Some(RunEvent::AgentStart),
            leaf_id: None,
        });
        let bytes = r.to_bytes().unwrap();
        assert!(bytes.ends_with(b"}\n"));
        assert_eq!(parse_record(Path::new("/x.json"), &bytes).unwrap(), r);
        // The keys as docs/interop.md §4 names them.
        let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(v["startedAt"], "2023-11-14T22:13:20.123Z");
        assert_eq!(v["runState"]["event"], "agent_start");
        assert_eq!(v["mux"]["paneId"], "%3");
        assert!(v.get("task").is_none() && v.get("pi").is_none());
    }

    #[test]
    fn hard_rules_refuse_the_record_and_caps_drop_the_field() {
        assert_eq!(parse(r#"{"version":2}"#), Err(RecordError::Version));
        assert_eq!(parse(r#"{"version":1,"pid":0}"#), Err(RecordError::Pid));
        assert_eq!(parse(r#"{"version":1,"pid":"1"}"#), Err(RecordError::Json));
        assert_eq!(
            parse(r#"{"version":1,"startedAt":"yesterday"}"#),
            Err(RecordError::Json)
        );
        assert_eq!(
            parse(r#"{"version":1,"mux":{"session":"x"}}"#),
            Err(RecordError::Json),
            "a mux without its kind"
        );
        let r = parse(&format!(
            r#"{{"version":1,"seat":" ","task":"{}","unknown":[1],"mux":{{"kind":"zellij"}},
                "runState":{{"state":"idle","at":"2026-01-01T00:00:00Z","event":"later_event"}}}}"#,
            "t".repeat(4097)
        ))
        .unwrap();
        assert_eq!((r.seat, r.task), (None, None));
        assert_eq!(r.mux.unwrap().kind, None);
        let rs = r.run_state.unwrap();
        assert_eq!((rs.seq, rs.event), (0, None));
    }
}
