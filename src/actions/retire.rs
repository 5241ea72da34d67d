//! `intercom-pane retire NAME [--remove-worktree]`: remove a closed worker from the roster
//! (docs/behaviour.md §10).
//!
//! Refused while anything runs its session (a live registration, a process naming it, its
//! health endpoint answering as it) or while a close job, a resume or a spawn of it is open.
//! Nothing is lost: before the entry leaves the roster it is written, exactly as it is (handoff
//! and close job included), with its launch spec, to `.pi-intercom/retired/`; the removal is
//! refused if the entry changed since. Registrations and reports stay where they are.
//! `--remove-worktree` removes the worktree `spawn` made only when git shows no uncommitted
//! file and no commit that no other branch or remote-tracking branch has; otherwise it is kept
//! and the report says why.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::actions::config_write::{self, WriteError};
use crate::actions::launch_spec;
use crate::actions::resume::live;
use crate::actions::spawn::worktree;
use crate::clock::{format_iso, Clock};
use crate::evidence::config::{self, Agent};
use crate::exit_code::exit_enum;
use crate::fsguard;
use crate::paths;
use crate::store;
use crate::text::sanitize;

const GIT_DEADLINE: Duration = Duration::from_secs(20);

exit_enum! {
    /// The exit code of a run.
    RetireExit {
        /// Removed from the roster (and its worktree, when asked and safe).
        Retired = 0,
        /// A step failed; nothing was removed (the report says what was written).
        Failed = 1,
        /// No root, a bad roster, no such worker, the coordinator.
        Usage = 2,
        /// Removed from the roster; the worktree was kept because it holds work (said).
        WorktreeKept = 3,
        /// Something still runs the worker's session.
        StillRuns = 4,
        /// A close job, a resume or a spawn of it is open.
        JobOpen = 5,
    }
}

pub struct RetireRequest<'a> {
    pub root: PathBuf,
    pub name: String,
    pub remove_worktree: bool,
    pub data_root: PathBuf,
    pub clock: &'a dyn Clock,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Ending {
    pub exit: RetireExit,
    pub report: Value,
}

fn refused(exit: RetireExit, msg: impl Into<String>) -> Ending {
    Ending {
        exit,
        report: json!({"result": "refused", "reason": msg.into()}),
    }
}

/// Why the worker cannot be retired now: a job open on it, or its session still running.
fn open_or_running(req: &RetireRequest, a: &Agent) -> Result<(), Ending> {
    let root = &req.root;
    let name = sanitize(&a.name);
    if let Some(j) = &a.close_job {
        if j.state.is_pending() || j.state.is_fenced() {
            return Err(refused(
                RetireExit::JobOpen,
                format!("{name}'s close job {} is {}", j.job_id, j.state.as_str()),
            ));
        }
        if store::is_held(&paths::close_job_lock(root, &j.job_id)) {
            return Err(refused(
                RetireExit::JobOpen,
                format!("close-worker of {name} is running"),
            ));
        }
    }
    if fsguard::kind(&paths::resume_fence(root, &a.session_id)).is_ok()
        || store::is_held(&paths::resume_lock(root, &a.session_id))
    {
        return Err(refused(
            RetireExit::JobOpen,
            format!("a resume of {name} is running or has not registered yet (resume-worker --recover looks at it)"),
        ));
    }
    let still = |detail: String| {
        refused(
            RetireExit::StillRuns,
            format!("{name} still runs: {detail}"),
        )
    };
    if let Some((w, _)) = live::live_registration(root, &req.data_root, &a.session_id) {
        return Err(still(w.detail));
    }
    // No saved file is named here (none need exist): a pi is a witness by its command line,
    // its PI_SESSION_ID, or by running unregistered in the worker's folder.
    let spec_file = paths::launch_spec(root, &a.session_id);
    let folder = launch_spec::read(root, &a.session_id)
        .map_or_else(|_| root.join(&a.project_directory), |s| s.cwd);
    let regs = crate::evidence::registrations::read_all(Some(root), &req.data_root);
    match live::process_naming(&a.session_id, &spec_file, &folder, &regs) {
        Ok(Some(w)) => return Err(still(w.detail)),
        Ok(None) => {}
        Err(e) => {
            return Err(refused(
                RetireExit::StillRuns,
                format!("cannot tell whether {name} still runs: {e}"),
            ))
        }
    }
    match live::health_answers(a.port, &a.session_id) {
        Ok(Some(w)) => Err(still(w.detail)),
        Ok(None) => Ok(()),
        Err(e) => Err(refused(RetireExit::Failed, e.to_string())),
    }
}

pub fn retire(req: &RetireRequest) -> Ending {
    let root = &req.root;
    let cfg = match config::load(root) {
        Ok(c) => c,
        Err(e) => return refused(RetireExit::Usage, e.to_string()),
    };
    let Some(agent) = cfg.find_by_name(&req.name).cloned() else {
        return refused(
            RetireExit::Usage,
            format!("no agent named {:?} in config", sanitize(&req.name)),
        );
    };
    if agent.coordinator {
        return refused(RetireExit::Usage, "the coordinator is not retired");
    }
    if let Err(e) = store::ensure_dir(root, &paths::jobs_dir(root)) {
        return refused(RetireExit::Failed, e.to_string());
    }
    // No spawn of the name may start (or run) while it is retired.
    let _lock = match store::Lock::acquire(&paths::spawn_lock(root, &agent.name)) {
        Ok(l) => l,
        Err(e) if e.code == store::code::StoreCode::Locked => {
            return refused(
                RetireExit::JobOpen,
                format!("a spawn of {} is running", sanitize(&agent.name)),
            )
        }
        Err(e) => return refused(RetireExit::Failed, e.to_string()),
    };
    if let Err(e) = open_or_running(req, &agent) {
        return e;
    }
    let spec = match launch_spec::read(root, &agent.session_id) {
        Ok(s) => Some(s),
        Err(launch_spec::SpecError::Missing) => None,
        Err(e) => return refused(RetireExit::Failed, format!("{e}: fix or remove it first")),
    };
    // The entry's exact text (numbers as written), and the removal only while it is unchanged.
    let entry_text = match config_write::read_agent_text(root, &agent.session_id) {
        Ok(t) => t,
        Err(e) => {
            return refused(
                RetireExit::Failed,
                format!("the roster entry could not be read: {e}"),
            )
        }
    };
    let entry: Value = serde_json::from_str(&entry_text).unwrap_or(Value::Null);
    let now = req.clock.now_ms();
    let archive =
        paths::retired_dir(root).join(format!("{}-{now}.json", paths::short_id(&agent.session_id)));
    let kept = kept_files(root, &agent.session_id);
    let record = json!({"version": 1, "retiredAt": format_iso(now), "name": agent.name,
        "sessionId": agent.session_id, "entry": entry, "entryText": entry_text,
        "launchSpec": spec, "kept": kept});
    let written = store::ensure_dir(root, &paths::retired_dir(root)).and_then(|()| {
        store::write_atomic(
            &archive,
            &serde_json::to_vec_pretty(&record).unwrap_or_default(),
        )
    });
    if let Err(e) = written {
        return refused(
            RetireExit::Failed,
            format!("nothing removed: cannot keep the entry: {e}"),
        );
    }
    let id = agent.session_id.clone();
    let removed = config_write::remove_agent(root, &id, &|now_cfg, now_text| {
        if now_text != entry_text {
            return Err("the entry changed meanwhile".to_string());
        }
        match now_cfg
            .find_by_session(&id)
            .and_then(|a| a.close_job.as_ref())
        {
            Some(j) if j.state.is_pending() || j.state.is_fenced() => Err(format!(
                "a close job was opened meanwhile ({})",
                j.state.as_str()
            )),
            _ => Ok(()),
        }
    });
    if let Err(e) = removed {
        let _ = store::remove_file(&archive);
        let why = match e {
            WriteError::Refused(w) => w,
            other => other.to_string(),
        };
        return refused(RetireExit::Failed, format!("nothing removed: {why}"));
    }
    let _ = store::remove_file(&paths::launch_spec(root, &agent.session_id));
    let mut report = json!({"result": "retired", "worker": agent.name,
        "sessionId": agent.session_id, "archive": archive, "kept": record["kept"]});
    let mut exit = RetireExit::Retired;
    let tree = spec.as_ref().and_then(|s| s.worktree.clone());
    report["worktree"] = match (tree, req.remove_worktree) {
        (None, asked) => json!({"action": "none", "detail": if asked {
            "no worktree recorded for this worker: nothing removed"} else {"none recorded"}}),
        (Some(w), false) => json!({"action": "kept", "path": w.path, "branch": w.branch,
            "detail": "kept (no --remove-worktree)"}),
        (Some(w), true) => {
            let (action, detail) = remove_if_clean(&w);
            if action != "removed" {
                exit = RetireExit::WorktreeKept;
            }
            json!({"action": action, "path": w.path, "branch": w.branch, "detail": detail})
        }
    };
    Ending { exit, report }
}

/// Files of the worker that stay where they are (their paths, when present).
fn kept_files(root: &Path, session_id: &str) -> Vec<PathBuf> {
    [
        paths::seat_record(root, session_id),
        paths::reports_dir(root).join(crate::evidence::reports::report_file_name(session_id)),
    ]
    .into_iter()
    .filter(|p| fsguard::kind(p).is_ok())
    .collect()
}

/// Remove the worktree when it holds no work; else keep it and say what it holds.
fn remove_if_clean(w: &launch_spec::Worktree) -> (&'static str, String) {
    let deadline = Instant::now() + GIT_DEADLINE;
    if fsguard::kind(&w.path).is_err() {
        return ("gone", "the worktree folder is already gone".into());
    }
    let work = match worktree::work_in(w, deadline) {
        Ok(work) => work,
        Err(e) => {
            return (
                "kept",
                format!("kept: git could not tell what it holds: {e}"),
            )
        }
    };
    if !work.is_empty() {
        let mut why = Vec::new();
        if !work.uncommitted.is_empty() {
            why.push(format!(
                "uncommitted changes ({})",
                work.uncommitted.join(", ")
            ));
        }
        if work.unmerged_commits > 0 {
            why.push(format!(
                "{} commit(s) on {} that no other branch or remote has",
                work.unmerged_commits,
                sanitize(&w.branch)
            ));
        }
        return ("kept", format!("kept: it holds {}", why.join(" and ")));
    }
    let repo = match worktree::repo_of(w, deadline) {
        Ok(r) => r,
        Err(e) => return ("kept", format!("kept: {e}")),
    };
    match worktree::remove(&repo, w, deadline) {
        Ok(()) => (
            "removed",
            format!("removed; branch {} kept", sanitize(&w.branch)),
        ),
        Err(e) => ("kept", format!("kept: {e}")),
    }
}
