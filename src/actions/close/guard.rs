//! Protected targets, refused before anything is recorded or sent (docs/behaviour.md §7 step 1): the
//! coordinator's pane and pi, the caller's own pane and its process tree, every monitor pane (by
//! its ownership record or by our pane marker), and a pane whose process is not the registered pi.

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::record::JobRecord;
use super::STEP_DEADLINE;
use crate::evidence::config::IntercomConfig;
use crate::evidence::registrations::RegistrationSet;
use crate::fsguard;
use crate::mux::{self, MuxEnv};
use crate::owned::monitor::MonitorRecord;
use crate::proc;

/// Monitor ownership records read at most (one per coordinator; a few in practice).
const MAX_MONITOR_RECORDS: usize = 256;

/// One pane this run must never close, and why.
pub(super) struct Protected {
    /// The server's socket, when known (pane ids are unique only per server).
    socket: Option<PathBuf>,
    pane: String,
    why: &'static str,
}

/// Why a target is never closed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Refusal {
    /// A protected pane (the caller's own, the coordinator's, a monitor's).
    Pane { pane: String, why: &'static str },
    /// The target's pi is the coordinator's.
    CoordinatorPi,
    /// The caller runs inside the target's pi.
    CallerInsideTarget,
    /// The target's pi runs under the caller.
    TargetUnderCaller,
    /// The pane carries our monitor marker.
    MonitorMarker { pane: String },
    /// The pane's process is in the caller's own tree.
    CallersTree,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::text::sanitize;
        match self {
            Refusal::Pane { pane, why } => {
                write!(f, "pane {} is {why}: never closed", sanitize(pane))
            }
            Refusal::CoordinatorPi => {
                f.write_str("the target's pi is the coordinator's: never closed")
            }
            Refusal::CallerInsideTarget => {
                f.write_str("the caller runs inside the target's pi: never closed")
            }
            Refusal::TargetUnderCaller => {
                f.write_str("the target's pi runs under the caller: never closed")
            }
            Refusal::MonitorMarker { pane } => write!(
                f,
                "pane {} carries the monitor marker: never closed",
                sanitize(pane)
            ),
            Refusal::CallersTree => {
                f.write_str("the pane's process is the caller's own tree: never closed")
            }
        }
    }
}

impl std::error::Error for Refusal {}

pub(super) struct Guard {
    panes: Vec<Protected>,
    /// pids that are the caller or its ancestors: the target's pi must not be one of them.
    caller_chain: Vec<i32>,
    caller: i32,
    coordinator_pi: Option<proc::ProcIdentity>,
}

/// Every monitor pane named by an ownership record `<root>/.pi-intercom/monitor-*.json`.
fn monitor_panes(root: &Path) -> Vec<Protected> {
    let dir = crate::paths::state_dir(root);
    let Ok(list) = fsguard::list_dir(&dir, 4096) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in &list.entries {
        let Some(name) = e.name_str() else { continue };
        if !crate::paths::is_monitor_record(name) {
            continue;
        }
        if out.len() >= MAX_MONITOR_RECORDS {
            break;
        }
        let Ok(b) = fsguard::read_capped(&dir.join(name), 64 * 1024) else {
            continue;
        };
        let Ok(v) = crate::owned::decode::<MonitorRecord>(&b) else {
            continue;
        };
        if let Some(p) = v.pane {
            out.push(Protected {
                socket: v.socket.map(PathBuf::from),
                pane: p,
                why: "a monitor pane",
            });
        }
    }
    out
}

impl Guard {
    /// Gather the protected panes and processes once, before anything is written.
    pub(super) fn gather(cfg: &IntercomConfig, regs: &RegistrationSet) -> Guard {
        let me = std::process::id() as i32;
        let mut panes = monitor_panes(&cfg.root);
        let env = MuxEnv::from_process();
        if let Some(o) = mux::owning_multiplexer(me, &env, Instant::now() + STEP_DEADLINE) {
            panes.push(Protected {
                socket: Some(o.socket_path.clone()),
                pane: o.pane.id,
                why: "the caller's own pane",
            });
        }
        let mut coordinator_pi = None;
        if let Some(c) = cfg.coordinator() {
            if let Some(r) = regs.by_session_id(&c.session_id) {
                if let Some(p) = r.mux.as_ref().and_then(|m| m.pane_id.clone()) {
                    panes.push(Protected {
                        socket: r
                            .mux
                            .as_ref()
                            .and_then(|m| m.socket.clone())
                            .map(Into::into),
                        pane: p,
                        why: "the coordinator's pane",
                    });
                }
                if let (Some(pid), Some(t), Some(b)) = (r.pid, r.start_ticks, r.boot_id.clone()) {
                    coordinator_pi = Some(proc::ProcIdentity {
                        pid,
                        start_ticks: t,
                        boot_id: b,
                    });
                }
            }
        }
        let mut caller_chain = vec![me];
        caller_chain.extend(proc::ancestors(me, proc::MAX_DEPTH));
        Guard {
            panes,
            caller_chain,
            caller: me,
            coordinator_pi,
        }
    }

    /// Refuse a target that is protected. Checks names and processes only (no multiplexer
    /// call), so it is cheap enough to run again right before the close.
    pub(super) fn check(&self, target: &JobRecord) -> Result<(), Refusal> {
        for p in &self.panes {
            let same_server = p.socket.as_ref().is_none_or(|s| s == &target.socket);
            if same_server && p.pane == target.pane_id {
                return Err(Refusal::Pane {
                    pane: p.pane.clone(),
                    why: p.why,
                });
            }
        }
        if self
            .coordinator_pi
            .as_ref()
            .is_some_and(|c| c == &target.pi)
        {
            return Err(Refusal::CoordinatorPi);
        }
        if self.caller_chain.contains(&target.pi.pid) {
            return Err(Refusal::CallerInsideTarget);
        }
        if proc::is_ancestor(self.caller, target.pi.pid) {
            return Err(Refusal::TargetUnderCaller);
        }
        Ok(())
    }

    /// Refuse a pane that carries a monitor marker of ours (its record may be lost), one in the
    /// caller's own tree, and one that holds the coordinator's pi.
    pub(super) fn check_pane(&self, pane: &mux::PaneInfo) -> Result<(), Refusal> {
        if pane
            .marker
            .as_deref()
            .is_some_and(|m| m.starts_with("intercom-pane:"))
        {
            return Err(Refusal::MonitorMarker {
                pane: pane.id.clone(),
            });
        }
        if let Some(pid) = pane.pid {
            if self.caller_chain.contains(&pid) {
                return Err(Refusal::CallersTree);
            }
            // The coordinator's pane by its pi, wherever it moved since it registered.
            if self.coordinator_pi.as_ref().is_some_and(|c| {
                proc::status(c) == proc::ProcStatus::Alive
                    && (c.pid == pid || proc::is_ancestor(pid, c.pid))
            }) {
                return Err(Refusal::Pane {
                    pane: pane.id.clone(),
                    why: "the coordinator's pane (it holds the coordinator's pi)",
                });
            }
        }
        Ok(())
    }
}
