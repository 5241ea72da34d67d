//! The immutable result of one scan pass, as every view sees it.
//!
//! Why a separate view model: the sidebar, `status --json` and `scan --print` must agree, so they
//! all read these rows; the evidence-specific types stay in `evidence/` and `board/`.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::board::intercom::{Evidence, ObservedStatus};
use crate::board::provenance::TaskSource;
use crate::board::reason::{StateReason, StateSource};
use crate::board::record::SeatKey;
use crate::clock::Ms;
use crate::evidence::connectors::BindingError;
use crate::evidence::registrations::ContextFill;
pub(crate) use crate::evidence::sessions::usage::UsageView;
use crate::fsguard::FsError;
use crate::states::{BoardState, CloseState, ConnState, ReportStatus};

/// What kind of seat a row is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowRole {
    Coordinator,
    Worker,
    /// A control-board seat found from pi state folders or registrations, not in Intercom config.
    Seat,
    Connector,
}

/// Connection column (loopback health check), separate from activity.
#[derive(Debug, Clone, PartialEq)]
pub struct ConnectionView {
    pub state: ConnState,
    /// Fixed reason code (`verified`, `refused`, `not_checked`, ...).
    pub reason: String,
    pub checked_at: Option<Ms>,
}

impl ConnectionView {
    /// The view of one probe verdict (or of its absence).
    pub fn from_connection(c: &crate::probe::Connection) -> Self {
        ConnectionView {
            state: c.state,
            reason: c.reason.to_string(),
            checked_at: c.checked_at,
        }
    }

    pub fn not_checked() -> Self {
        ConnectionView {
            state: ConnState::Unknown,
            reason: "not_checked".into(),
            checked_at: None,
        }
    }
}

/// Intercom observed activity (from observation logs).
#[derive(Debug, Clone, PartialEq)]
pub struct ActivityView {
    pub status: ObservedStatus,
    /// Fixed public label, e.g. `Running command`.
    pub label: String,
    pub observed_at: Option<Ms>,
    pub stale: bool,
    pub evidence: Evidence,
}

/// An explicit worker report (`blocked | needs_decision | ready_for_review`).
#[derive(Debug, Clone, PartialEq)]
pub struct RowReport {
    pub status: ReportStatus,
    pub summary: String,
    pub updated_at: Ms,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RowHandoff {
    pub job_id: String,
    pub summary: String,
    pub updated_at: Ms,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RowCloseJob {
    pub job_id: String,
    pub state: CloseState,
    pub reason: Option<String>,
    pub updated_at: Ms,
}

/// A tool call the seat's pi is running (from its session file).
pub(crate) use crate::evidence::sessions::RunningTool;

/// Which multiplexer a pane belongs to (one type for the whole crate).
pub(crate) use crate::mux::MuxKind;

/// Where a seat's pi lives, as the pass saw it: what ⏎ jumps to (re-checked before it acts).
#[derive(Debug, Clone, PartialEq)]
pub struct SeatPane {
    pub kind: MuxKind,
    /// The server as seats name it: `None` the default tmux server, else a socket path (or a
    /// tmux `-L` name).
    pub socket: Option<String>,
    /// tmux `%N`; Herdr pane id.
    pub pane_id: String,
    /// The pane's shell pid as listed.
    pub shell_pid: Option<i32>,
    /// The registered pi in it (pid, start ticks, boot id), when a live registration names it.
    pub pi: Option<(i32, u64, String)>,
}

/// Whether this row can be replied to, and if not, why (shown in the reply box).
#[derive(Debug, Clone, PartialEq)]
pub enum ReplyPath {
    Available { target: String },
    Unavailable { reason: String },
}

/// One seat, as every view shows it. Text fields are raw evidence: views sanitize before display.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Tokens and cost of its session file (`None`: no file).
    pub usage: Option<UsageView>,
    /// Its budget's standing (`None`: no budget applies).
    pub budget: Option<crate::budget::BudgetView>,
    /// Its model's context fill, as pi reports it through the extension.
    pub context: Option<ContextFill>,
    /// When the evidence that decided its state happened (`None`: liveness decided).
    pub state_at: Option<Ms>,
    /// Stable selection key across refreshes: the session id when known, else `seen_key`.
    pub id: String,
    /// `<project>/<agent>`: the key of `seen.json`.
    pub seen_key: String,
    pub name: String,
    pub project: String,
    pub role: RowRole,
    /// Configured description (Intercom "responsibility").
    pub responsibility: Option<String>,
    pub state: BoardState,
    /// Why this state, e.g. `tool_running`, `input_needed`, `pane_not_running_pi`.
    pub state_reason: StateReason,
    /// Where the state came from, e.g. `session file`, `--liveness assume-alive`, `tmux`.
    pub state_source: StateSource,
    pub connection: ConnectionView,
    pub activity: Option<ActivityView>,
    pub report: Option<RowReport>,
    pub handoff: Option<RowHandoff>,
    pub close_job: Option<RowCloseJob>,
    pub task: Option<String>,
    pub task_source: Option<TaskSource>,
    pub workspace: Option<String>,
    pub model: Option<String>,
    pub provider: Option<String>,
    pub last_error: Option<String>,
    pub last_assistant_text: Option<String>,
    /// What a waiting seat asks (`evidence::sessions::question::question_of`), raw.
    pub question: Option<String>,
    /// The newest user text on the seat's branch, raw (the preview).
    pub last_user_text: Option<String>,
    /// The tool its pi runs now, if one.
    pub running_tool: Option<RunningTool>,
    /// The pane its pi lives in, when the pass found it alive there.
    pub pane: Option<SeatPane>,
    pub last_activity: Option<Ms>,
    pub relaunched_at: Option<Ms>,
    pub waiting_on_you: bool,
    pub seen: bool,
    pub alive: Option<bool>,
    pub reply: ReplyPath,
    /// The evidence the state came from, naming the turn it belongs to (the alerts key on it,
    /// `scan::build::turn_of`): `entry:<id>` (the deciding session entry), `pi:<pid>:<ticks>`
    /// (the pi that went away), …; `None` when nothing names it.
    pub turn: Option<String>,
    /// pi recorded the end of this seat's session (`session_shutdown`, in its registration):
    /// when the seat is offline, it went away on purpose (quit, `/new`), not by a crash.
    pub session_ended: bool,
    /// The machine the seat lives on when it is not this one (docs/behaviour.md §12).
    pub host: Option<RowHost>,
}

/// The host of a row read from another machine: its name, and whether that host answers now.
/// Rows of a host that stopped answering are its last known ones, shown dimmed with their age.
#[derive(Debug, Clone, PartialEq)]
pub struct RowHost {
    pub name: String,
    /// The seat's `<project>/<agent>` on that host (what a command there is given).
    pub key: String,
    /// Its session id there, when known (carried by `--expect-seat`).
    pub session_id: Option<String>,
    /// When the host last answered (its board was current then).
    pub answered_at: Ms,
    /// Whether it answers now; when not, the row is not live.
    pub answering: bool,
}

/// A remote host's own state on the board (docs/behaviour.md §12).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostState {
    /// Not yet answered since the board started.
    Connecting,
    /// Its board is current.
    Answering,
    /// It stopped answering (or never did): its last rows are dimmed, with their age.
    NotAnswering,
    /// The host refused every key this machine may use without a prompt.
    AuthFailed,
    /// Its key is not in known_hosts: refused, never accepted silently.
    HostKeyUnknown,
    /// Its key differs from known_hosts: refused.
    HostKeyChanged,
    /// It runs another protocol version (both named in the detail).
    WrongVersion,
    /// Something else refused it (its shell changes quoted words, its scan refused, …).
    Refused,
}

impl HostState {
    pub fn as_str(self) -> &'static str {
        match self {
            HostState::Connecting => "connecting",
            HostState::Answering => "answering",
            HostState::NotAnswering => "not_answering",
            HostState::AuthFailed => "auth_failed",
            HostState::HostKeyUnknown => "host_key_unknown",
            HostState::HostKeyChanged => "host_key_changed",
            HostState::WrongVersion => "wrong_version",
            HostState::Refused => "refused",
        }
    }
}

/// One remote host as the board shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct HostView {
    pub name: String,
    pub state: HostState,
    /// Since when it has been in this state.
    pub since: Ms,
    /// When it last answered, if ever.
    pub answered_at: Option<Ms>,
    /// How its board is read: `watch` (a stream) or `poll` (periodic `scan --json`).
    pub via: Option<&'static str>,
    /// What ssh or the host said (sanitized by the views).
    pub detail: String,
    /// Its seats on the board.
    pub seats: usize,
}

/// Whether the Intercom roster could be read at all.
#[derive(Debug, Clone, PartialEq)]
pub enum RosterStatus {
    Available {
        root: String,
    },
    /// No Intercom root was found or it could not be read; `reason` is shown as is.
    Unavailable {
        code: RosterCode,
        reason: String,
    },
}

impl RosterStatus {
    /// Why no roster agent can be named here, for a refusal of a name the board lacks: where
    /// the roster was looked for and how to name one. None when the roster was read.
    pub fn missing(&self) -> Option<String> {
        match self {
            RosterStatus::Available { .. } => None,
            RosterStatus::Unavailable {
                code: RosterCode::NoRoot,
                reason,
            } => Some(no_roster_here(reason)),
            RosterStatus::Unavailable { reason, .. } => Some(format!(
                "the roster cannot be used: {}",
                crate::text::sanitize(reason)
            )),
        }
    }
}

/// "no roster was found here (WHY)", and that `--root` names one: every refusal of a roster
/// agent made where no roster is says the same.
pub(crate) fn no_roster_here(why: &str) -> String {
    format!(
        "no roster was found here ({}); --root DIR names the folder that holds .pi-intercom/config.json",
        crate::text::sanitize(why)
    )
}

impl Row {
    /// Since when the seat is in its state, as far as the evidence says: when the evidence that
    /// decided happened (`state_at`; a dialog: when pi opened it), else the session file's newest
    /// entry (a seat gone offline). The alerts' `since`.
    pub fn state_since(&self) -> Option<Ms> {
        self.state_at.or(self.last_activity)
    }

    /// Its pane when it is on this machine. Another host's row names a socket, pane and pid
    /// of that host: the same path here (`/tmp/tmux-1000/default`) is a local server, so they
    /// are used only through ssh on that host, never here.
    pub fn local_pane(&self) -> Option<&SeatPane> {
        self.pane.as_ref().filter(|_| self.host.is_none())
    }
}

/// Why the roster cannot be used (`roster.code` in the JSON).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RosterCode {
    /// No Intercom root was found or given: a normal state, not an error.
    NoRoot,
    /// The scan itself was refused (shown in place of a pass).
    ScanRefused,
    /// The config was found and refused: its fixed `ConfigError` code.
    Config(&'static str),
}

impl RosterCode {
    /// The code as the JSON, the board files and the sidebar carry it.
    pub fn as_str(self) -> &'static str {
        match self {
            RosterCode::NoRoot => "no_root",
            RosterCode::ScanRefused => "scan_refused",
            RosterCode::Config(code) => code,
        }
    }
}

/// Something a pass could not read or use, as the views list it: fixed codes and names, never
/// evidence text. Shown and written as its text (`Display`), e.g. `logs_unavailable`,
/// `sessions_link_refused`, `<project>/<agent>: session_link_refused`.
#[derive(Debug, Clone, PartialEq)]
pub enum PassError {
    /// A source as a whole, by its reader's fixed code: the logs or reports folder, a log or
    /// report file, the roster.
    Source(&'static str),
    /// A pi sessions folder could not be searched (`sessions_<code>`).
    SessionsFolder(FsError),
    /// One seat's session file cannot be used (`<seat>: <reason>`).
    SeatSession { seat: SeatKey, reason: StateReason },
    /// One seat's sessions folder could not be searched (`<seat>: sessions_<code>`).
    SeatSessions { seat: SeatKey, error: FsError },
    /// A folder of agent folders (a repo's `.pi/state`, a fleet) could not be listed
    /// (`<path>: <code>`), or held more than are read (`<path>: too_many_agents`, no error).
    AgentFolders {
        path: PathBuf,
        error: Option<FsError>,
    },
    /// A connector binding was refused (`discord/<name>: binding_<code>`).
    Binding(BindingError),
}

impl PassError {
    pub(crate) fn agent_folders(path: &Path, error: Option<FsError>) -> PassError {
        PassError::AgentFolders {
            path: path.to_path_buf(),
            error,
        }
    }
}

impl fmt::Display for PassError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PassError::Source(code) => f.write_str(code),
            PassError::SessionsFolder(e) => write!(f, "sessions_{}", e.code()),
            PassError::SeatSession { seat, reason } => write!(f, "{seat}: {reason}"),
            PassError::SeatSessions { seat, error } => {
                write!(f, "{seat}: sessions_{}", error.code())
            }
            PassError::AgentFolders { path, error } => match error {
                Some(e) => write!(f, "{}: {}", path.display(), e.code()),
                None => write!(f, "{}: too_many_agents", path.display()),
            },
            PassError::Binding(e) => e.fmt(f),
        }
    }
}

impl serde::Serialize for PassError {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// A fixed code is a whole source's error.
impl From<&'static str> for PassError {
    fn from(code: &'static str) -> PassError {
        PassError::Source(code)
    }
}

/// One pass's result. Immutable once built.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    pub scanned_at: Ms,
    pub roster: RosterStatus,
    pub rows: Vec<Row>,
    pub truncated: bool,
    /// What the pass could not read or use (`logs_unavailable`, `sessions_not_found`,
    /// `<project>/<agent>: session_link_refused`, ...).
    pub errors: Vec<PassError>,
    /// Tokens and cost over every seat's session file (the coordinator's too), as pi records
    /// them; `at_least` when a budget left some bytes unread.
    pub usage: UsageView,
    /// The other machines on this board, each with its own state (empty: this machine only).
    pub hosts: Vec<HostView>,
}

impl Snapshot {
    pub fn row(&self, id: &str) -> Option<&Row> {
        self.rows.iter().find(|r| r.id == id)
    }

    /// Whether `self` shows exactly what `other` does but for when it was scanned: a pass that
    /// found nothing new (the live engine's timer pass on a quiet board). Every field is named,
    /// so a field added later is compared too.
    pub fn same_board(&self, other: &Snapshot) -> bool {
        let Snapshot {
            scanned_at: _,
            roster,
            rows,
            truncated,
            errors,
            usage,
            hosts,
        } = self;
        *roster == other.roster
            && *rows == other.rows
            && *truncated == other.truncated
            && *errors == other.errors
            && *usage == other.usage
            && *hosts == other.hosts
    }
}

impl ConnectionView {
    /// The `connection` object of the status JSON.
    pub fn to_json(&self, session_id: &str) -> serde_json::Value {
        crate::probe::ConnectionJson::new(session_id, self.state, self.checked_at, &self.reason)
            .value()
    }
}
