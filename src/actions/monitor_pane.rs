//! `intercom-pane ensure-monitor`: place and own one sidebar pane above the coordinator
//! (docs/behaviour.md §5, docs/interop.md §4 and §8).
//!
//! Safety rules, in order: skip when the roster has no worker or the caller is a worker; one lock
//! per coordinator; a record left in a `*_pending` stage by a run that died is taken up where it
//! stopped (`monitor_place`), and only one that cannot be (another server or coordinator pane,
//! no marker) is fenced (reported, never repeated); an owned pane (record and pane marker
//! agree, on the same server) is preserved; otherwise a new pane is split above the coordinator
//! without focus, each stage recorded before the step it names (`monitor_place`). Ownership
//! comes only from our record and marker: a pane's title is set by anyone (a worker's bash tool
//! can print the escape sequence), so a pane merely titled like a monitor is neither ours nor an
//! obstacle — it is left alone and ours is placed. An existing monitor is never closed; a pane
//! this placement made and could not finish is.

use std::path::{Path, PathBuf};

use crate::actions::monitor_place::{self, Placement};
use crate::actions::monitor_restart;
use crate::actions::monitor_run::{deadline, EnsureError, EnsureRefusal, Outcome};
use crate::clock::Ms;
use crate::evidence::config::IntercomConfig;
use crate::fsguard;
use crate::mux::{self, MuxEnv, Owner};
use crate::owned;
use crate::owned::monitor::MonitorRecord;
use crate::store;

/// Height of the new pane, percent of the coordinator's.
const PERCENT: u8 = 25;
/// Never more than this share of the coordinator's pane, whatever the sidebar's minimum.
const MAX_PERCENT: u8 = 50;

/// The share of a pane `height` lines tall that gives the sidebar its usable minimum
/// (`ui::layout::MIN_HEIGHT`): a quarter, or more in a short pane (at most half).
fn percent_for(height: Option<u32>) -> u8 {
    let min = u32::from(crate::ui::layout::MIN_HEIGHT);
    let need = match height {
        Some(h) if h > 0 => (min * 100).div_ceil(h),
        _ => 0,
    };
    u8::try_from(need)
        .unwrap_or(MAX_PERCENT)
        .clamp(PERCENT, MAX_PERCENT)
}
const RECORD_CAP: u64 = 64 * 1024;

/// Everything one run needs.
pub struct EnsureRequest<'a> {
    pub config: &'a IntercomConfig,
    /// The caller's pi session id, when known: a worker's never creates a monitor.
    pub session_id: Option<String>,
    /// The process whose pane is the coordinator's (this command, or its pi).
    pub caller_pid: i32,
    /// The monitor's argv.
    pub monitor_argv: Vec<String>,
    /// Clear a fenced record first (after a person looked). A lock is never broken: it is held
    /// exactly while its run lives.
    pub recover: bool,
    pub now: Ms,
}

/// The sidebar's argv: this binary's `monitor` on the roster (and the system config, when one
/// is given).
pub(crate) fn monitor_argv(root: &Path, config: Option<&Path>) -> Vec<String> {
    let exe = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "intercom-pane".into());
    let mut argv = vec![
        exe,
        "monitor".to_string(),
        "--root".to_string(),
        root.display().to_string(),
    ];
    if let Some(c) = config {
        argv.push("--config".into());
        argv.push(c.display().to_string());
    }
    argv
}

/// `<root>/.pi-intercom/monitor-<first 24 hex of sha256(coordinator session id)>.json`.
pub fn record_path(root: &Path, coordinator_session: &str) -> PathBuf {
    crate::paths::monitor_record(root, coordinator_session)
}

fn lock_path(record: &Path) -> PathBuf {
    let mut p = record.as_os_str().to_owned();
    p.push(".lock");
    PathBuf::from(p)
}

fn read_record(path: &Path) -> Result<Option<MonitorRecord>, EnsureError> {
    match fsguard::read_capped(path, RECORD_CAP) {
        Ok(b) => owned::decode(&b)
            .map(Some)
            .map_err(|e| EnsureError::Refused(EnsureRefusal::RecordInvalid(path.to_path_buf(), e))),
        Err(fsguard::FsError::NotFound) => Ok(None),
        Err(e) => Err(EnsureError::Refused(EnsureRefusal::RecordUnreadable(
            path.to_path_buf(),
            e.code(),
        ))),
    }
}

/// Place or preserve the coordinator's monitor pane.
pub fn ensure(req: &EnsureRequest, env: &MuxEnv) -> Result<Outcome, EnsureError> {
    let cfg = req.config;
    if cfg.workers().next().is_none() {
        return Ok(Outcome::Skipped("the roster has no worker".into()));
    }
    let Some(coordinator) = cfg.coordinator() else {
        return Err(EnsureError::Refused(EnsureRefusal::NoCoordinator));
    };
    if let Some(id) = &req.session_id {
        if id != &coordinator.session_id {
            return Ok(Outcome::Skipped("workers never create monitors".into()));
        }
    }
    let owner =
        mux::owning_multiplexer(req.caller_pid, env, deadline()).ok_or(EnsureError::NotInPane)?;
    let root = &cfg.root;
    let record = record_path(root, &coordinator.session_id);
    let lock = lock_path(&record);
    // A lock whose holder died is free again by itself (flock): `--recover` never breaks one
    // that a live run holds.
    let _guard = store::Lock::acquire(&lock).map_err(|e| {
        if e.code == store::code::StoreCode::Locked {
            EnsureError::Locked(lock.clone())
        } else {
            EnsureError::Refused(EnsureRefusal::LockFailed(e.to_string()))
        }
    })?;
    let mux = mux::open(owner.kind, &owner.socket_path);
    let previous = read_record(&record)?;
    let place = Placement {
        owner: &owner,
        mux: mux.as_ref(),
        root,
        record: &record,
        coordinator_session: &coordinator.session_id,
        argv: &req.monitor_argv,
        percent: percent_for(owner.pane.height),
        now: req.now,
    };
    if let Some(prev) = &previous {
        let pending = !prev.is_placed();
        // A placement a run left half-done (it died, or was killed by its caller) is taken up
        // where it stopped; only one that cannot be is fenced.
        if pending && !req.recover {
            if monitor_place::resumable(prev, &owner) {
                return place.run(Some(prev));
            }
            return Err(EnsureError::Fenced {
                stage: prev.stage_name().to_string(),
                record: record.clone(),
            });
        }
        if !pending {
            if let Some(pane) = owned_pane(prev, &owner, mux.as_ref()) {
                return Ok(Outcome::Preserved { pane });
            }
        }
    }
    // After a Herdr restart our pane is back without its marker: recognised by the record (not
    // by its label alone) and relaunched. Any other pane, whatever its title, is not ours.
    if let Some(prev) = previous
        .as_ref()
        .filter(|p| owner.kind.caps().panes_survive_restart && p.multiplexer == Some(owner.kind))
    {
        let panes = mux
            .list_panes(deadline())
            .map_err(|e| EnsureError::Failed {
                stage: "list".into(),
                detail: e.to_string(),
            })?;
        if let Some(p) = monitor_restart::survivor(prev, &owner, &panes.panes) {
            return monitor_restart::relaunch(prev, &owner, p, &req.monitor_argv, &record, req.now);
        }
    }
    // A folder the multiplexer would not start in as given (tmux) is refused before anything
    // is recorded.
    owner
        .kind
        .check_start_dir(root)
        .map_err(|e| EnsureError::Refused(EnsureRefusal::RootFolder(e.detail)))?;
    if let Some(kept) = place.adopt_opened()? {
        return Ok(kept);
    }
    place.run(None)
}

/// The recorded pane, if it is still ours: same server incarnation, same pane id, our marker.
fn owned_pane(prev: &MonitorRecord, owner: &Owner, mux: &dyn mux::Multiplexer) -> Option<String> {
    let pane = prev.pane.as_deref()?;
    let marker = prev.marker.as_deref()?;
    if !prev.server.as_ref()?.same_server(&owner.server) {
        return None;
    }
    let found = mux.read_marker(pane, deadline()).ok()??;
    (found == marker).then(|| pane.to_string())
}

#[cfg(test)]
mod height_tests {
    use super::percent_for;

    #[test]
    fn short_panes_get_the_sidebars_minimum_and_never_more_than_half() {
        assert_eq!(percent_for(None), 25);
        assert_eq!(percent_for(Some(44)), 25);
        // 80×24 with a status line: a 23-line coordinator pane gives 7 lines (23 × 31 %).
        assert_eq!(percent_for(Some(23)), 31);
        assert_eq!(23 * 31 / 100, 7);
        assert_eq!(percent_for(Some(10)), 50);
        assert_eq!(percent_for(Some(0)), 25);
    }
}
