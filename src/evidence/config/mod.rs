//! Intercom `config.json`: root discovery, bounded read, strict validation (docs/interop.md §1).
//!
//! Why strict: the roster decides which panes may be closed and whose reports are read. A config
//! that does not validate exactly is refused as a whole with a fixed code and a message quoting the
//! offending field; nothing is guessed from a half-valid file. Unknown keys are accepted and kept
//! verbatim in `IntercomConfig::raw` (a later rewrite must keep them) but never projected anywhere.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::clock::Ms;
use crate::evidence::memo::Memo;
use crate::fsguard::{self, FsError, Kind};
use crate::states::CloseState;
use crate::text;

mod parse;
pub use parse::parse;
pub(crate) use parse::valid_job_id;

/// Largest accepted `config.json`, in bytes.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;
/// Most agents a roster may hold.
pub(crate) const MAX_AGENTS: usize = 256;
/// Most folder levels root discovery climbs.
pub(crate) const MAX_DISCOVERY_LEVELS: usize = 64;

pub(crate) use crate::paths::{CONFIG_FILE, STATE_DIR};

/// Why a config could not be used: a fixed `code` for JSON/tests and a human `message` that names
/// the field path and quotes the value (sanitized and clipped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// Fixed, content-free code, e.g. `config_invalid`.
    pub code: &'static str,
    /// What was refused and why, safe to print on a terminal.
    pub message: String,
}

impl ConfigError {
    /// The fixed error code.
    pub fn code(&self) -> &'static str {
        self.code
    }

    fn invalid(path: &str, why: &str, value: Option<&Value>) -> ConfigError {
        let message = match value {
            Some(v) => format!("config.json {path}: {why} (got {})", quote(v)),
            None => format!("config.json {path}: {why}"),
        };
        ConfigError {
            code: "config_invalid",
            message,
        }
    }

    fn from_fs(e: FsError, path: &Path) -> ConfigError {
        let code = match e {
            FsError::NotFound => "config_unavailable",
            FsError::Link => "config_link_refused",
            FsError::Fifo => "config_fifo_refused",
            FsError::Device => "config_device_refused",
            FsError::Socket => "config_socket_refused",
            FsError::NotRegular => "config_not_regular",
            FsError::NotDirectory => "config_not_directory",
            FsError::Oversize => "config_oversize",
            FsError::Unreadable => "config_unreadable",
            FsError::NotOwned => "config_not_owned",
            FsError::OthersWrite => "config_writable_by_others",
        };
        let shown = text::clip(&text::sanitize(&path.to_string_lossy()), 200);
        let why = match e {
            FsError::NotFound => "does not exist".to_string(),
            FsError::Oversize => format!("is larger than {MAX_CONFIG_BYTES} bytes"),
            FsError::Link => "is or passes through a symbolic link (refused)".to_string(),
            FsError::NotOwned | FsError::OthersWrite => format!(
                "{}: a roster found by searching upward is used only when it is yours (pass --root to choose one explicitly)",
                fsguard::trust_reason(e, fsguard::owner_of(path))
            ),
            other => format!("cannot be read safely ({})", other.code()),
        };
        ConfigError {
            code,
            message: format!("{shown}: {why}"),
        }
    }
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for ConfigError {}

/// A JSON value shown inside an error message: compact, terminal-safe, at most 60 columns.
fn quote(v: &Value) -> String {
    let s = match v {
        Value::String(s) => {
            // Keep the message bounded before escaping: a 1 MiB string must not be copied whole.
            let head: String = s.chars().take(80).collect();
            serde_json::to_string(&head).unwrap_or_default()
        }
        Value::Array(a) => format!("an array of {}", a.len()),
        Value::Object(_) => "an object".to_string(),
        other => other.to_string(),
    };
    text::clip(&text::sanitize(&s), 60)
}

/// The roster's `multiplexer`: which multiplexer the team runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MuxChoice {
    Herdr,
    None,
    Tmux,
}

impl MuxChoice {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            MuxChoice::Herdr => "herdr",
            MuxChoice::None => "none",
            MuxChoice::Tmux => "tmux",
        }
    }

    /// The choice named `s`, if it is one.
    pub fn parse(s: &str) -> Option<MuxChoice> {
        [MuxChoice::Herdr, MuxChoice::None, MuxChoice::Tmux]
            .into_iter()
            .find(|c| c.as_str() == s)
    }
}

/// A validated Intercom roster.
#[derive(Debug, Clone, PartialEq)]
pub struct IntercomConfig {
    /// The coordinator root (the folder holding `.pi-intercom/config.json`).
    pub root: PathBuf,
    /// `multiplexer`; `None` when the key is absent.
    pub multiplexer: Option<MuxChoice>,
    /// Every agent in configured order, the coordinator included.
    pub agents: Vec<Agent>,
    /// The roster-wide budget (top-level `budget`): every worker's spending together.
    pub budget: Option<crate::budget::spec::Budget>,
    /// The whole document as read, every key kept, for a later rewrite only. Never project it.
    pub raw: std::sync::Arc<Value>,
}

/// A new roster entry as Intercom writes it (init, spawn, the demo), members in its order;
/// `budget` only for a worker given one.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NewAgent<'a> {
    pub session_id: &'a str,
    pub name: &'a str,
    pub coordinator: bool,
    pub description: &'a str,
    pub port: u16,
    pub project_directory: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<serde_json::Value>,
}

/// A close job as it is first written into the worker's entry (`closeJob`); its later steps
/// change `state` and `updatedAt` and add `reason` in place.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NewCloseJob<'a> {
    pub job_id: &'a str,
    pub state: &'static str,
    pub created_at: &'a str,
    pub updated_at: &'a str,
    pub deadline_at: &'a str,
}

/// A worker's handoff as it is written into its entry (`handoff`).
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NewHandoff<'a> {
    pub version: u32,
    pub job_id: &'a str,
    pub summary: &'a str,
    pub updated_at: &'a str,
}

/// A new roster file: its version, multiplexer and agents.
#[derive(serde::Serialize)]
pub(crate) struct NewRoster<'a> {
    pub version: u32,
    pub multiplexer: &'a str,
    pub agents: Vec<NewAgent<'a>>,
}

/// One configured agent (coordinator or worker).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Agent {
    /// The pi session id.
    pub session_id: String,
    /// Configured display name (unique case-insensitively).
    pub name: String,
    /// True for the one coordinator.
    pub coordinator: bool,
    /// The agent's responsibility text.
    pub description: String,
    /// Last saved loopback port of the agent's listener (not proof of life).
    pub port: u16,
    /// Root-relative project folder, `.` for the root.
    pub project_directory: String,
    /// Optional role name (newer extension versions).
    pub role: Option<String>,
    /// Saved public handoff (workers only).
    pub handoff: Option<Handoff>,
    /// Saved close workflow job (workers only).
    pub close_job: Option<CloseJob>,
    /// Its budget (workers only).
    pub budget: Option<crate::budget::spec::Budget>,
}

/// A worker's saved public handoff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handoff {
    /// Always 1.
    pub version: u32,
    /// The close job this handoff answers.
    pub job_id: String,
    /// Public worker-authored summary, raw (views sanitize).
    pub summary: String,
    /// When it was saved.
    pub updated_at: Ms,
}

/// A worker's close workflow job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CloseJob {
    /// Job id.
    pub job_id: String,
    /// Workflow state.
    pub state: CloseState,
    /// When the job was created.
    pub created_at: Ms,
    /// When the job last changed.
    pub updated_at: Ms,
    /// When the job must be finished.
    pub deadline_at: Ms,
    /// Fixed reason for a failed or uncertain outcome.
    pub reason: Option<CloseReason>,
}

/// `closeJob.reason` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CloseReason {
    Timeout,
    Interrupted,
    DeliveryFailed,
    IdentityFailed,
    SaveFailed,
    WorkerChanged,
    WorkerBusy,
    CommitRejected,
    CloseUnverified,
    CloseFailed,
}

impl CloseReason {
    /// Every reason, in wire order.
    pub const ALL: [CloseReason; 10] = [
        CloseReason::Timeout,
        CloseReason::Interrupted,
        CloseReason::DeliveryFailed,
        CloseReason::IdentityFailed,
        CloseReason::SaveFailed,
        CloseReason::WorkerChanged,
        CloseReason::WorkerBusy,
        CloseReason::CommitRejected,
        CloseReason::CloseUnverified,
        CloseReason::CloseFailed,
    ];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            CloseReason::Timeout => "timeout",
            CloseReason::Interrupted => "interrupted",
            CloseReason::DeliveryFailed => "delivery_failed",
            CloseReason::IdentityFailed => "identity_failed",
            CloseReason::SaveFailed => "save_failed",
            CloseReason::WorkerChanged => "worker_changed",
            CloseReason::WorkerBusy => "worker_busy",
            CloseReason::CommitRejected => "commit_rejected",
            CloseReason::CloseUnverified => "close_unverified",
            CloseReason::CloseFailed => "close_failed",
        }
    }

    /// Parse a wire name exactly.
    pub fn parse(s: &str) -> Option<CloseReason> {
        CloseReason::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

impl IntercomConfig {
    /// Non-coordinator agents in configured order.
    pub fn workers(&self) -> impl Iterator<Item = &Agent> {
        self.agents.iter().filter(|a| !a.coordinator)
    }

    /// The coordinator (a validated non-empty roster has exactly one).
    pub fn coordinator(&self) -> Option<&Agent> {
        self.agents.iter().find(|a| a.coordinator)
    }

    /// Find an agent by name, case-insensitively (names are unique that way).
    pub fn find_by_name(&self, name: &str) -> Option<&Agent> {
        let want = name.to_lowercase();
        self.agents.iter().find(|a| a.name.to_lowercase() == want)
    }

    /// The agent with exactly this session id.
    pub fn find_by_session(&self, session_id: &str) -> Option<&Agent> {
        self.agents.iter().find(|a| a.session_id == session_id)
    }

    /// Path of the config file under this root.
    pub fn path(&self) -> PathBuf {
        config_path(&self.root)
    }
}

/// `<root>/.pi-intercom/config.json`.
pub(crate) fn config_path(root: &Path) -> PathBuf {
    crate::paths::config_file(root)
}

/// Walk upward from `start` (at most `MAX_DISCOVERY_LEVELS` levels) to the first folder holding
/// `.pi-intercom/config.json`, and load it. `Ok(None)`: no level has one. Only "does not exist"
/// climbs; a link, FIFO, unreadable folder, oversize or invalid config is an error, because
/// climbing past a broken root would silently pick up a different roster.
pub fn discover_root(start: &Path) -> Result<Option<PathBuf>, ConfigError> {
    Ok(discover(start)?.map(|c| c.root))
}

/// Like `discover_root`, but returns the loaded config (read once).
pub(crate) fn discover(start: &Path) -> Result<Option<IntercomConfig>, ConfigError> {
    discover_with(start, None)
}

/// `discover`, loading the config found through `memo` (see `load_with`).
pub(crate) fn discover_with(
    start: &Path,
    memo: Option<&ConfigMemo>,
) -> Result<Option<IntercomConfig>, ConfigError> {
    let start = if start.is_absolute() {
        start.to_path_buf()
    } else {
        // A relative start has no ancestors past ""; anchor it (without resolving links).
        let cwd = std::env::current_dir().map_err(|_| ConfigError {
            code: "config_unavailable",
            message: "cannot determine the current folder to search for .pi-intercom".into(),
        })?;
        cwd.join(start)
    };
    for dir in start.ancestors().take(MAX_DISCOVERY_LEVELS) {
        // A start that is a file, or does not exist yet, has no `.pi-intercom` of its own.
        // (`is_dir` follows links: links above the root are the user's choice.)
        if !dir.is_dir() {
            continue;
        }
        let state = dir.join(STATE_DIR);
        match fsguard::kind(&state) {
            Err(FsError::NotFound) => continue,
            Err(e) => return Err(ConfigError::from_fs(e, &state)),
            Ok(Kind::Dir) => {}
            Ok(Kind::Link) => return Err(ConfigError::from_fs(FsError::Link, &state)),
            Ok(Kind::File) => return Err(ConfigError::from_fs(FsError::NotDirectory, &state)),
            Ok(Kind::Fifo) => return Err(ConfigError::from_fs(FsError::Fifo, &state)),
            Ok(Kind::Socket) => return Err(ConfigError::from_fs(FsError::Socket, &state)),
            Ok(Kind::Device) => return Err(ConfigError::from_fs(FsError::Device, &state)),
        }
        let file = state.join(CONFIG_FILE);
        match fsguard::kind(&file) {
            // `.pi-intercom` without a config (e.g. a worker's own log folder): keep climbing.
            Err(FsError::NotFound) => continue,
            Err(e) => return Err(ConfigError::from_fs(e, &file)),
            Ok(_) => {}
        }
        // A roster found by climbing may sit in a shared or planted folder: only the caller's
        // own, not writable by others, is used (an explicit `--root` is the person's choice).
        return load_checked(dir, true, memo).map(Some);
    }
    Ok(None)
}

/// Read and validate `<root>/.pi-intercom/config.json` (≤ 1 MiB, ≤ 256 agents, no link in
/// `.pi-intercom` or `config.json`, never blocking on a FIFO).
pub fn load(root: &Path) -> Result<IntercomConfig, ConfigError> {
    load_with(root, None)
}

/// `load`, reusing what `memo` kept while the file is unchanged (the sidebar reads the config
/// every pass and it rarely changes).
pub(crate) fn load_with(
    root: &Path,
    memo: Option<&ConfigMemo>,
) -> Result<IntercomConfig, ConfigError> {
    load_checked(root, false, memo)
}

/// `load_with`; with `trusted`, the file must also pass `fsguard::trusted` (ours, not writable
/// by group or others), checked on the file read (a remembered copy: on its current metadata,
/// whose change time any chown or chmod moves, so the memo's key moves too).
fn load_checked(
    root: &Path,
    trusted: bool,
    memo: Option<&ConfigMemo>,
) -> Result<IntercomConfig, ConfigError> {
    let path = config_path(root);
    fsguard::check_under(root, &path).map_err(|e| ConfigError::from_fs(e, &path))?;
    if trusted {
        let meta = std::fs::symlink_metadata(&path)
            .map_err(|_| ConfigError::from_fs(FsError::Unreadable, &path))?;
        use std::os::unix::fs::MetadataExt;
        fsguard::trusted(meta.uid(), meta.mode()).map_err(|e| ConfigError::from_fs(e, &path))?;
    }
    Memo::read_through(
        memo,
        &path,
        || fsguard::settled_key_at(&path),
        || {
            let read = if trusted {
                fsguard::read_trusted
            } else {
                fsguard::read_capped
            };
            let bytes =
                read(&path, MAX_CONFIG_BYTES).map_err(|e| ConfigError::from_fs(e, &path))?;
            parse(root, &bytes)
        },
    )
}

/// Configs last parsed, by path and settled key (a few roots at most).
pub(crate) type ConfigMemo = Memo<fsguard::SettledKey, IntercomConfig>;

/// Roots a `ConfigMemo` keeps.
pub(crate) const CONFIGS_KEPT: usize = 4;

#[cfg(test)]
mod tests {
    use super::*;

    fn config(name: &str) -> String {
        format!(
            r#"{{"version":1,"agents":[{{"sessionId":"c1","name":"Coordinator","coordinator":true,"description":"C.","port":40000,"projectDirectory":"."}},{{"sessionId":"w1","name":"{name}","coordinator":false,"description":"W.","port":40001,"projectDirectory":"."}}]}}"#
        )
    }

    #[test]
    fn a_remembered_config_is_reused_only_while_the_file_is_the_same() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join(STATE_DIR)).unwrap();
        let path = config_path(root.path());
        std::fs::write(&path, config("Alpha")).unwrap();
        let memo = ConfigMemo::new(CONFIGS_KEPT);
        let load = |r: &Path| load_with(r, Some(&memo));
        let names =
            |c: &IntercomConfig| c.agents.iter().map(|a| a.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(&load(root.path()).unwrap())[1], "Alpha");
        // Old enough to be remembered, then read again unchanged.
        std::thread::sleep(std::time::Duration::from_millis(2100));
        let first = load(root.path()).unwrap();
        assert_eq!(load(root.path()).unwrap(), first);
        // Rewritten in place with the same length: a new ctime, so read again.
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .and_then(|mut f| std::io::Write::write_all(&mut f, config("Bravo").as_bytes()))
            .unwrap();
        assert_eq!(names(&load(root.path()).unwrap())[1], "Bravo");
        // Replaced by another file: read again.
        let tmp = root.path().join("c.tmp");
        std::fs::write(&tmp, config("Carol")).unwrap();
        std::fs::rename(&tmp, &path).unwrap();
        assert_eq!(names(&load(root.path()).unwrap())[1], "Carol");
    }
}
