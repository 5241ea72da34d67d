//! What `restore` reports (docs/behaviour.md §10, docs/commands.md): printed with `--json`, said
//! in words without it (`cmd::restore_cmd`). One entry per agent of the roster (and per retired
//! worker named with `--only`), in the order they were handled: the coordinator first.

use serde::Serialize;

/// What became of one agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum RestoreOutcome {
    /// Started again on its session, and it registered from the new pane.
    Restored,
    /// Started again; no registration from the new pane came before the wait ended.
    LaunchedUnconfirmed,
    /// `--dry-run`: every check passed; `argv` is what would be started.
    WouldRestore,
    /// Something runs its session already (`reason` says what): nothing started.
    AlreadyRunning,
    /// The person closed it (close-worker): not started without `--include-closed`.
    Closed,
    /// Removed from the roster by `retire`: never started.
    Retired,
    /// Cannot be started (no session file, folder gone, a record refused, …): `reason` says why.
    Cannot,
    /// The launch itself failed.
    Failed,
}

impl RestoreOutcome {
    /// The name in the report.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            RestoreOutcome::Restored => "restored",
            RestoreOutcome::LaunchedUnconfirmed => "launched_unconfirmed",
            RestoreOutcome::WouldRestore => "would_restore",
            RestoreOutcome::AlreadyRunning => "already_running",
            RestoreOutcome::Closed => "closed",
            RestoreOutcome::Retired => "retired",
            RestoreOutcome::Cannot => "cannot",
            RestoreOutcome::Failed => "failed",
        }
    }
}

/// `--continue` for an agent cut off mid-turn: what the reply path said.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ContinueSent {
    pub delivered: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// One agent's line.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct AgentRestore {
    pub name: String,
    pub session_id: String,
    pub coordinator: bool,
    pub outcome: RestoreOutcome,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Its last turn never ended (the session's newest entry is a user message, a tool result,
    /// or a tool call without its result): started again, never prompted unless `--continue`.
    pub cut_off: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The program and arguments started (or, with `--dry-run`, that would be).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub argv: Option<Vec<String>>,
    /// The names of the environment variables passed (values are not printed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub env: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pane: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registered_pid: Option<i32>,
    /// Where its launch record is, when one was used or written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launch_spec: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub continued: Option<ContinueSent>,
}

impl AgentRestore {
    pub(crate) fn new(name: &str, session_id: &str, coordinator: bool) -> AgentRestore {
        AgentRestore {
            name: name.to_string(),
            session_id: session_id.to_string(),
            coordinator,
            outcome: RestoreOutcome::Cannot,
            reason: None,
            cut_off: false,
            session_file: None,
            cwd: None,
            argv: None,
            env: None,
            pane: None,
            registered_pid: None,
            launch_spec: None,
            continued: None,
        }
    }
}

/// The report.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RestoreReport {
    /// Always 1.
    pub version: u32,
    /// Nothing was started (`--dry-run`), or the run was refused as a whole (`reason`).
    pub started_nothing: bool,
    pub dry_run: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    /// The tmux or Herdr server the agents were placed on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    pub agents: Vec<AgentRestore>,
}

impl RestoreReport {
    pub(crate) fn refused(reason: String) -> RestoreReport {
        RestoreReport {
            version: 1,
            started_nothing: true,
            dry_run: false,
            reason: Some(reason),
            root: None,
            server: None,
            agents: Vec::new(),
        }
    }
}
