//! The per-seat status record of the control board (seed 004 "Example status record"), written to
//! `board/sessions/<project>/<agent>.json` and listed in `board/index.json`.
//!
//! Times are kept as numbers (`Ms`) for the views and written as ISO-8601 text, as the seed shows.

use serde::{Serialize, Serializer};

use crate::board::intercom::WorkerObservation;
use crate::board::provenance::{FoundBy, ProjectSource, SessionTie, TaskSource, WorkspaceSource};
use crate::board::reason::{StateReason, StateSource};
use crate::clock::{format_iso, Ms};
use crate::evidence::registrations::{ContextFill, RunState};
use crate::evidence::sessions::usage::UsageView;
use crate::probe::Connection;
use crate::states::BoardState;

/// A configured worker's Intercom evidence on its record, written as the
/// `intercom_worker_status` worker object. Kept typed and turned into JSON only when the record
/// is written: a pass that writes nothing (`status`, the sidebar) never builds 255 of them.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordIntercom {
    pub obs: WorkerObservation,
    pub connection: Connection,
}

impl Serialize for RecordIntercom {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        crate::board::intercom::worker_status(&self.obs, self.connection.json()).serialize(s)
    }
}

/// `tmux: {socket, session}` as the seed shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct TmuxRef {
    pub socket: Option<String>,
    pub session: Option<String>,
}

/// The seed's "Registered" projection of a matching registration.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RegisteredView {
    #[serde(serialize_with = "iso_opt")]
    pub started_at: Option<Ms>,
    pub harness: Option<String>,
    pub pid: Option<i32>,
    pub tmux_session: Option<String>,
    /// `true` live, `false` stale (pid gone or a different process), `null` unverifiable.
    pub alive: Option<bool>,
    pub run_state: Option<RunState>,
    pub path: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SeatRecord {
    pub agent: String,
    pub project: String,
    pub state: BoardState,
    /// Why the state (fixed reason code) and where it came from.
    pub state_reason: StateReason,
    pub state_source: StateSource,
    pub waiting_on_you: bool,
    pub seen: bool,
    pub alive: Option<bool>,
    pub tmux: TmuxRef,
    pub session_file: Option<String>,
    pub session_id: Option<String>,
    pub cwd: Option<String>,
    pub task: Option<String>,
    pub task_source: Option<TaskSource>,
    pub task_set_by: Option<String>,
    pub workspace: Option<String>,
    pub workspace_source: Option<WorkspaceSource>,
    pub active_project: Option<String>,
    pub active_project_source: Option<ProjectSource>,
    pub registered: Option<RegisteredView>,
    #[serde(serialize_with = "iso_opt")]
    pub relaunched_at: Option<Ms>,
    #[serde(serialize_with = "iso_opt")]
    pub last_activity: Option<Ms>,
    pub age_seconds: Option<i64>,
    pub model: Option<String>,
    pub provider: Option<String>,
    pub last_assistant_text: Option<String>,
    pub last_error: Option<String>,
    /// A waiting seat's question: what the reply that asks for input asks (docs/behaviour.md
    /// §2); `null` in every other state.
    pub question: Option<String>,
    pub skipped_lines: u32,
    /// When the evidence that decided `state` happened (the deciding entry, the run state's
    /// event, pi's report); `null` when liveness decided.
    #[serde(serialize_with = "iso_opt")]
    pub state_at: Option<Ms>,
    /// Tokens and cost as pi records them in the session file's `usage` fields, summed
    /// (`atLeast` when part of the file was not read); `null` without a session file.
    pub usage: Option<UsageView>,
    /// The model's context fill, as pi reports it (`ctx.getContextUsage()`, through the
    /// extension, from a live registration only).
    pub context: Option<ContextFill>,
    /// Its budget's standing (own, fleet, context; enforced by its extension or not), as the
    /// row shows it; absent when no budget applies.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "crate::budget::serialize_opt"
    )]
    pub budget: Option<crate::budget::BudgetView>,
    #[serde(serialize_with = "iso")]
    pub scanned_at: Ms,
    /// For configured Intercom agents: the `intercom_worker_status` worker object (connection,
    /// report, handoff, closeJob, observed status). Absent for other seats.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub intercom: Option<RecordIntercom>,
    /// For connector rows only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connector: Option<ConnectorExtra>,
    /// For seats found from a pane's pi process (no roster, layout or registration): where its
    /// session was found (`pi-session-flag`, `pi-session-dir-env`, `pi-agent-dir-env`,
    /// `pi-default-agent-dir`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub found_by: Option<FoundBy>,
    /// For the same seats: what ties the pi to its session file (`registration`,
    /// `command-line`, `open-file`, `none-in-folder`, `undecided`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_tie: Option<SessionTie>,
    /// With `undecided`: the files that could be its session (at most 8, newest name first).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub session_candidates: Vec<String>,
    /// What a board on another machine needs beyond the fields above (docs/interop.md §13).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seat: Option<SeatExtra>,
}

/// The seat as a board on another machine shows and acts on it: its role, the pane and pi this
/// pass found (the identity an action there must find unchanged, `--expect-seat`), where a
/// reply would go, and the preview the sidebar shows.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SeatExtra {
    /// `coordinator`, `worker`, `seat` or `connector`.
    pub role: &'static str,
    pub pane: Option<PaneExtra>,
    pub reply: ReplyExtra,
    pub last_user_text: Option<String>,
    pub running_tool: Option<RunningToolExtra>,
    /// The turn the state belongs to (the alerts key on it, `snapshot::Row::turn`).
    pub turn: Option<String>,
    /// pi recorded the end of the seat's session (`snapshot::Row::session_ended`).
    pub session_ended: bool,
}

/// The pane of a seat's pi and the registered pi in it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PaneExtra {
    /// `tmux` or `herdr`.
    pub mux: &'static str,
    pub socket: Option<String>,
    pub pane_id: String,
    pub shell_pid: Option<i32>,
    /// The live registered pi.
    pub pi: Option<PiExtra>,
}

/// A pi by its identity: `{pid, startTicks, bootId}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PiExtra {
    pub pid: i32,
    pub start_ticks: u64,
    pub boot_id: String,
}

/// `{"target": …}` when the seat can be replied to, else `{"unavailable": why}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ReplyExtra {
    Target(String),
    Unavailable(String),
}

/// The tool a seat's pi is running, and since when.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunningToolExtra {
    pub name: Option<String>,
    #[serde(serialize_with = "iso_opt")]
    pub since: Option<Ms>,
}

/// A connector seat's binding: its name, whether its owner is alive and in which state
/// (`braked` is always `null`: kept for readers of the first schema).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConnectorExtra {
    pub binding: String,
    pub alive: bool,
    pub owner_state: StateReason,
    pub braked: Option<bool>,
}

fn iso<S: Serializer>(at: &Ms, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format_iso(*at))
}

fn iso_opt<S: Serializer>(at: &Option<Ms>, s: S) -> Result<S::Ok, S::Error> {
    match at {
        Some(at) => iso(at, s),
        None => s.serialize_none(),
    }
}

impl SeatRecord {
    /// The seat's key: of `seen.json` and of the board file.
    pub fn key(&self) -> SeatKey {
        SeatKey::new(&self.project, &self.agent)
    }
}

/// A seat's key, `<project>/<agent>`: the one way it is built (the key of `seen.json`, of the
/// board file, of a pass's reply paths). Written as that text.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SeatKey(String);

impl SeatKey {
    pub fn new(project: &str, agent: &str) -> SeatKey {
        SeatKey(format!("{project}/{agent}"))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The key of a seat of another host on this machine's board: the host, a unit separator
    /// (U+001F: no host name, project or agent this machine keys holds one), the key there.
    /// Names may repeat across hosts; keys never do.
    pub fn on_host(host: &str, key: &str) -> SeatKey {
        SeatKey(format!("{host}{HOST_SEPARATOR}{key}"))
    }

    /// The host of a key made by `on_host` (`None`: a seat of this machine).
    pub fn host(&self) -> Option<&str> {
        self.0.split_once(HOST_SEPARATOR).map(|(h, _)| h)
    }
}

/// Between a host's name and its seat's key in `SeatKey::on_host`.
pub(crate) const HOST_SEPARATOR: char = '\u{1f}';

impl std::fmt::Display for SeatKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for SeatKey {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

/// Maps keyed by `SeatKey` are looked up by the text a person or a row names.
impl std::borrow::Borrow<str> for SeatKey {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl PartialEq<str> for SeatKey {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for SeatKey {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl PartialEq<String> for SeatKey {
    fn eq(&self, other: &String) -> bool {
        &self.0 == other
    }
}

impl From<SeatKey> for String {
    fn from(k: SeatKey) -> String {
        k.0
    }
}
