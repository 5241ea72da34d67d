//! What the files of one `ensure-monitor` run share (`monitor_pane` runs it, `monitor_place`
//! places a new pane, `monitor_restart` takes one up after a Herdr restart): the monitor's
//! name, a step's deadline, how a stage is recorded, and how the run ends.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::exit_code::exit_enum;
use crate::owned::monitor::MonitorRecord;
use crate::owned::{self, DecodeError};
use crate::store;

/// The name every monitor pane gets (a label, never proof of ownership).
pub(crate) const MONITOR_NAME: &str = "Intercom monitor";
const STEP_DEADLINE: Duration = Duration::from_secs(5);

/// What ensure-monitor did.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Skipped(String),
    Preserved {
        pane: String,
    },
    Created {
        pane: String,
    },
    /// Created, but the person's focus, which Herdr's swap moved, could not be put back.
    CreatedFocusMoved {
        pane: String,
        detail: String,
    },
    /// Our pane survived a Herdr server restart as a fresh shell: the monitor runs there again.
    Relaunched {
        pane: String,
    },
}

/// Why it stopped without placing a monitor. Exit codes: 2 refused, 3 not in a pane, 4 locked,
/// 5 fenced, 1 a step failed (its half-made pane closed, nothing fenced).
#[derive(Debug, Clone, PartialEq)]
pub enum EnsureError {
    Refused(EnsureRefusal),
    NotInPane,
    Locked(PathBuf),
    Fenced { stage: String, record: PathBuf },
    Failed { stage: String, detail: String },
}

/// Why `ensure-monitor` refuses (exit 2).
#[derive(Debug, Clone, PartialEq)]
pub enum EnsureRefusal {
    /// The roster names no coordinator to place the monitor for.
    NoCoordinator,
    /// The monitor record is not one this build can read (not JSON, or not its shape).
    RecordInvalid(PathBuf, DecodeError),
    /// The monitor record cannot be read (the reader's fixed code).
    RecordUnreadable(PathBuf, &'static str),
    /// The new record could not be encoded.
    RecordUnencodable(String),
    /// The lock could not be taken for another reason than a live holder (the store's message).
    LockFailed(String),
    /// Our monitor's pane from before a Herdr restart runs something other than its shell.
    PaneBusy(String),
    /// The root's folder cannot be handed to tmux exactly (`mux::tmux::literal`).
    RootFolder(String),
}

impl std::fmt::Display for EnsureRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EnsureRefusal::NoCoordinator => f.write_str("the roster has no coordinator"),
            EnsureRefusal::RecordInvalid(p, e) => {
                write!(f, "{} is not a monitor record ({e}): inspect it", p.display())
            }
            EnsureRefusal::RecordUnreadable(p, code) => {
                write!(f, "{} cannot be read ({code})", p.display())
            }
            EnsureRefusal::RecordUnencodable(m) | EnsureRefusal::LockFailed(m) => f.write_str(m),
            EnsureRefusal::RootFolder(d) => write!(f, "the sidebar cannot start in the root: {d}"),
            EnsureRefusal::PaneBusy(pane) => write!(
                f,
                "pane {pane} is our monitor's pane from before a Herdr restart, but something other than its shell runs there: not typing into it"
            ),
        }
    }
}

exit_enum! {
    /// How `ensure-monitor` ends: one exit code per outcome, the numbers here only.
    EnsureExit {
        /// Placed, kept, relaunched or skipped.
        Done = 0,
        /// A step failed (the record is fenced).
        Failed = 1,
        Refused = 2,
        /// Not inside a tmux or Herdr pane.
        NotInPane = 3,
        /// Another ensure-monitor holds the lock.
        Locked = 4,
        /// A previous launch was left half-done.
        Fenced = 5,
    } refused: Refused
}

impl EnsureError {
    pub fn exit(&self) -> EnsureExit {
        match self {
            EnsureError::Refused(_) => EnsureExit::Refused,
            EnsureError::NotInPane => EnsureExit::NotInPane,
            EnsureError::Locked(_) => EnsureExit::Locked,
            EnsureError::Fenced { .. } => EnsureExit::Fenced,
            EnsureError::Failed { .. } => EnsureExit::Failed,
        }
    }

    /// `exit()` as the process exit code.
    pub fn exit_code(&self) -> i32 {
        self.exit().code()
    }
}

impl std::fmt::Display for EnsureError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EnsureError::Refused(r) => r.fmt(f),
            EnsureError::NotInPane => {
                f.write_str("not inside a tmux or Herdr pane (by process ancestry): nothing to place a monitor above")
            }
            EnsureError::Locked(p) => write!(
                f,
                "another ensure-monitor is running (it holds {}); the lock ends with that run: try again once it has finished",
                p.display()
            ),
            EnsureError::Fenced { stage, record } => write!(
                f,
                "a previous launch stopped at stage {stage} ({}); it may have half-happened, so nothing is repeated: inspect the panes, then run with --recover",
                record.display()
            ),
            EnsureError::Failed { stage, detail } => {
                write!(f, "stopped at stage {stage}: {detail}")
            }
        }
    }
}

pub(crate) fn write_record(path: &Path, r: &MonitorRecord) -> Result<(), EnsureError> {
    crate::log::write(&crate::log::EnsureMonitorStage {
        stage: &r.stage,
        pane: r.pane.as_deref(),
        detail: None,
        cleaned: None,
        record: Some(path.display().to_string()),
    });
    let bytes = owned::encode(r)
        .map_err(|e| EnsureError::Refused(EnsureRefusal::RecordUnencodable(e.to_string())))?;
    store::write_atomic(path, &bytes).map_err(|e| EnsureError::Failed {
        stage: r.stage_name().to_string(),
        detail: e.to_string(),
    })
}

pub(crate) fn deadline() -> Instant {
    Instant::now() + STEP_DEADLINE
}
