//! The coordinator's sidebar once the roster has a worker. The coordinator's own start skips
//! the placement while its roster has none (a roster `init` just made), so the first spawn
//! places it above the coordinator's pane, with the same guarded steps, lock and record as
//! `ensure-monitor` (one sidebar per coordinator: a recorded one is kept).

use std::path::Path;

use super::reserve::Plan;
use super::SpawnRequest;
use crate::actions::monitor_pane::{self, EnsureRequest};
use crate::actions::monitor_run::Outcome;
use crate::evidence::config;
use crate::mux::MuxEnv;
use crate::text::sanitize;

/// Place or keep the sidebar above the pane the worker was opened beside; what became of it,
/// in words for the receipt.
pub(super) fn ensure(req: &SpawnRequest, root: &Path, plan: &Plan) -> String {
    // Read again: the roster now holds the new worker.
    let cfg = match config::load(root) {
        Ok(c) => c,
        Err(e) => return format!("not placed: {}", sanitize(&e.to_string())),
    };
    let Some(coordinator) = cfg.coordinator() else {
        return "not placed: the roster has no coordinator".into();
    };
    let Some(pid) = plan.beside.pid else {
        return format!(
            "not placed: the coordinator's pane {} has no process id (press the sidebar key there)",
            plan.beside.id
        );
    };
    // The placement finds the coordinator's pane by its process on this server only.
    let env = MuxEnv::pointing_at(plan.mux.kind(), plan.mux.socket_path());
    let ensure = EnsureRequest {
        config: &cfg,
        session_id: Some(coordinator.session_id.clone()),
        caller_pid: pid,
        monitor_argv: monitor_pane::monitor_argv(&cfg.root, req.system_config.as_deref()),
        recover: false,
        now: req.clock.now_ms(),
    };
    match monitor_pane::ensure(&ensure, &env) {
        Ok(Outcome::Created { pane }) | Ok(Outcome::CreatedFocusMoved { pane, .. }) => {
            format!("placed above the coordinator in {pane}")
        }
        Ok(Outcome::Preserved { pane }) | Ok(Outcome::Relaunched { pane }) => {
            format!("kept in {pane}")
        }
        Ok(Outcome::Skipped(why)) => format!("not placed: {}", sanitize(&why)),
        Err(e) => format!("not placed: {}", sanitize(&e.to_string())),
    }
}
