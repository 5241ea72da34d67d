//! `intercom-pane retire NAME [--remove-worktree]`: remove a closed worker from the roster
//! (docs/behaviour.md §10).
//!
//! Refused while anything runs its session (a live registration, a process naming it, its
//! health endpoint answering as it) or while a close job, a resume or a spawn of it is open.
//! Nothing is lost: before the entry leaves the roster it is written, exactly as it is (handoff
//! and close job included), with its launch spec, to `.pi-intercom/retired/`; the removal is
//! refused if the entry changed since. Registrations and reports stay where they are.
//! `--remove-worktree` removes the worktree `spawn` made only when git shows no uncommitted
//! file and no commit outside its base (the main checkout's branch; without one, every other
//! branch and remote-tracking branch); otherwise it is kept and the report says exactly what
//! removing it would lose. `--discard` removes it anyway, asked by name, and says what went.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::actions::config_write::{self, WriteError};
use crate::actions::launch_spec::{self, LaunchSpec};
use crate::actions::resume::live;
use crate::actions::spawn::worktree;
use crate::clock::{format_iso, Clock};
use crate::evidence::config::{self, Agent};
use crate::exit_code::exit_enum;
use crate::fsguard;
use crate::owned::retire_record::{self, RetireRecord};
use crate::owned::retire_report::{RetireReport, RetireResult, WorktreeAction, WorktreeOutcome};
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

pub(crate) struct RetireRequest<'a> {
    pub root: PathBuf,
    pub name: String,
    pub remove_worktree: bool,
    /// Remove the worktree even when it holds work (what goes is said).
    pub discard: bool,
    pub data_root: PathBuf,
    pub clock: &'a dyn Clock,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Ending {
    pub exit: RetireExit,
    pub report: Box<RetireReport>,
}

fn refused(exit: RetireExit, msg: impl Into<String>) -> Ending {
    Ending {
        exit,
        report: Box::new(RetireReport::refused(msg.into())),
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
    // A running worker is retired after it is closed: the refusal names the command that does.
    let close = format!(
        "close it first (intercom-pane close-worker {})",
        crate::text::shell_quote(&name)
    );
    let still = |detail: String| {
        refused(
            RetireExit::StillRuns,
            format!("{name} still runs: {detail}; {close}"),
        )
    };
    if let Some((w, _)) = live::live_registration(root, &req.data_root, &a.session_id) {
        return Err(still(w.detail));
    }
    // No saved file is named here (none need exist): a pi is a witness by its command line,
    // its PI_SESSION_ID, or by running unregistered in the worker's folder.
    let spec_file = paths::launch_spec(root, &a.session_id);
    let folder = launch_spec::read(root, &req.data_root, &a.session_id)
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

pub(crate) fn retire(req: &RetireRequest) -> Ending {
    let root = &req.root;
    let agent = match worker_of(req) {
        Ok(a) => a,
        Err(e) => return e,
    };
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
    let (spec, entry_text) = match spec_and_entry(root, &req.data_root, &agent) {
        Ok(x) => x,
        Err(e) => return e,
    };
    let (archive, kept) = match keep_entry(req, &agent, spec.as_ref(), &entry_text) {
        Ok(x) => x,
        Err(e) => return e,
    };
    if let Err(e) = remove_entry(root, &agent.session_id, &entry_text) {
        let _ = store::remove_file(&archive);
        return e;
    }
    launch_spec::remove(root, &req.data_root, &agent.session_id);
    let tree = spec.and_then(|s| s.worktree);
    let (exit, worktree) = worktree_outcome(tree, req.remove_worktree, req.discard);
    Ending {
        exit,
        report: Box::new(RetireReport {
            result: RetireResult::Retired,
            reason: None,
            worker: Some(agent.name),
            session_id: Some(agent.session_id),
            archive: Some(archive.to_string_lossy().into_owned()),
            kept: Some(kept),
            worktree: Some(worktree),
        }),
    }
}

/// The roster's entry of the worker named, when it may be retired at all (not the coordinator),
/// with the jobs folder the locks live in ready.
fn worker_of(req: &RetireRequest) -> Result<Agent, Ending> {
    let root = &req.root;
    let cfg = config::load(root).map_err(|e| refused(RetireExit::Usage, e.to_string()))?;
    let Some(agent) = cfg.find_by_name(&req.name).cloned() else {
        return Err(refused(
            RetireExit::Usage,
            format!("no agent named {:?} in config", sanitize(&req.name)),
        ));
    };
    if agent.coordinator {
        return Err(refused(RetireExit::Usage, "the coordinator is not retired"));
    }
    store::ensure_dir(root, &paths::jobs_dir(root))
        .map_err(|e| refused(RetireExit::Failed, e.to_string()))?;
    Ok(agent)
}

/// The worker's launch spec (`None`: it has none) and its roster entry's exact text (numbers as
/// written), which the removal must still find.
fn spec_and_entry(
    root: &Path,
    data_root: &Path,
    agent: &Agent,
) -> Result<(Option<LaunchSpec>, String), Ending> {
    let spec = match launch_spec::read(root, data_root, &agent.session_id) {
        Ok(s) => Some(s),
        Err(launch_spec::SpecError::Missing) => None,
        Err(e) => {
            return Err(refused(
                RetireExit::Failed,
                format!("{e}: fix or remove it first"),
            ))
        }
    };
    let entry_text = config_write::read_agent_text(root, &agent.session_id).map_err(|e| {
        refused(
            RetireExit::Failed,
            format!("the roster entry could not be read: {e}"),
        )
    })?;
    Ok((spec, entry_text))
}

/// Write the retired record (the entry exactly as it is, its launch spec, the files kept); its
/// path and the files kept.
fn keep_entry(
    req: &RetireRequest,
    agent: &Agent,
    spec: Option<&LaunchSpec>,
    entry_text: &str,
) -> Result<(PathBuf, Vec<String>), Ending> {
    let root = &req.root;
    let now = req.clock.now_ms();
    let archive =
        paths::retired_dir(root).join(format!("{}-{now}.json", paths::short_id(&agent.session_id)));
    let kept: Vec<String> = kept_files(root, &agent.session_id)
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let cannot_keep = |e: String| {
        refused(
            RetireExit::Failed,
            format!("nothing removed: cannot keep the entry: {e}"),
        )
    };
    let launch_spec = spec
        .map(serde_json::to_value)
        .transpose()
        .map_err(|e| cannot_keep(e.to_string()))?;
    let record = RetireRecord {
        version: retire_record::VERSION,
        retired_at: format_iso(now),
        name: agent.name.clone(),
        session_id: agent.session_id.clone(),
        entry: serde_json::from_str(entry_text).unwrap_or(Value::Null),
        entry_text: entry_text.to_string(),
        launch_spec,
        kept,
    };
    let bytes = record.to_bytes().map_err(|e| cannot_keep(e.to_string()))?;
    store::ensure_dir(root, &paths::retired_dir(root))
        .and_then(|()| store::write_atomic(&archive, &bytes))
        .map_err(|e| cannot_keep(e.to_string()))?;
    Ok((archive, record.kept))
}

/// Take the entry out of the roster, only while its text is `entry_text` and no close job was
/// opened on it meanwhile.
fn remove_entry(root: &Path, id: &str, entry_text: &str) -> Result<(), Ending> {
    let removed = config_write::remove_agent(root, id, &|now_cfg, now_text| {
        if now_text != entry_text {
            return Err("the entry changed meanwhile".to_string());
        }
        match now_cfg
            .find_by_session(id)
            .and_then(|a| a.close_job.as_ref())
        {
            Some(j) if j.state.is_pending() || j.state.is_fenced() => Err(format!(
                "a close job was opened meanwhile ({})",
                j.state.as_str()
            )),
            _ => Ok(()),
        }
    });
    removed.map(|_| ()).map_err(|e| {
        let why = match e {
            WriteError::Refused(w) => w,
            other => other.to_string(),
        };
        refused(RetireExit::Failed, format!("nothing removed: {why}"))
    })
}

/// The worktree's fate: kept unless asked to remove it, and then removed only when it holds no
/// work (else the run ends `WorktreeKept`).
fn worktree_outcome(
    tree: Option<launch_spec::Worktree>,
    remove: bool,
    discard: bool,
) -> (RetireExit, WorktreeOutcome) {
    let Some(w) = tree else {
        let detail = if remove {
            "no worktree recorded for this worker: nothing removed"
        } else {
            "none recorded"
        };
        let none = WorktreeOutcome {
            action: WorktreeAction::None,
            path: None,
            branch: None,
            detail: detail.into(),
        };
        return (RetireExit::Retired, none);
    };
    let (action, detail) = if remove {
        remove_if_clean(&w, discard)
    } else {
        (WorktreeAction::Kept, "kept (no --remove-worktree)".into())
    };
    let exit = if remove && action != WorktreeAction::Removed {
        RetireExit::WorktreeKept
    } else {
        RetireExit::Retired
    };
    let outcome = WorktreeOutcome {
        action,
        path: Some(w.path.to_string_lossy().into_owned()),
        branch: Some(w.branch),
        detail,
    };
    (exit, outcome)
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

/// What removing the worktree loses or leaves: its uncommitted files (lost), and its commits
/// not in the base (kept by its branch, or lost with a detached HEAD).
fn what_is_held(work: &worktree::Work) -> (Vec<String>, Vec<String>) {
    let (mut lost, mut stays) = (Vec::new(), Vec::new());
    if !work.uncommitted.is_empty() {
        lost.push(format!(
            "{} uncommitted file(s): {}",
            work.uncommitted.len(),
            crate::review::name_list(&work.uncommitted)
        ));
    }
    if work.unmerged_commits > 0 {
        let commits = format!(
            "{} commit(s) not in {}: {}",
            work.unmerged_commits,
            sanitize(&work.base),
            sanitize(&work.commits.join("; "))
        );
        match &work.on_branch {
            Some(b) => stays.push(format!("{commits} (they stay on branch {})", sanitize(b))),
            None => lost.push(format!(
                "{commits} (its HEAD is detached: no branch keeps them)"
            )),
        }
    }
    (lost, stays)
}

/// Remove the worktree when it holds no work (or `discard`); else keep it and say exactly what
/// removing it would lose.
fn remove_if_clean(w: &launch_spec::Worktree, discard: bool) -> (WorktreeAction, String) {
    let deadline = Instant::now() + GIT_DEADLINE;
    if fsguard::kind(&w.path).is_err() {
        return (
            WorktreeAction::Gone,
            "the worktree folder is already gone".into(),
        );
    }
    let work = match worktree::work_in(w, deadline) {
        Ok(work) => work,
        Err(e) => {
            return (
                WorktreeAction::Kept,
                format!("kept: git could not tell what it holds: {e}"),
            )
        }
    };
    let (lost, stays) = what_is_held(&work);
    if !work.is_empty() && !discard {
        let mut why = lost.clone();
        why.extend(stays);
        return (
            WorktreeAction::Kept,
            format!(
                "kept: it holds {} (review it with `intercom-pane review`, land it, or give --discard to remove it anyway)",
                why.join(" and ")
            ),
        );
    }
    let repo = match worktree::repo_of(w, deadline) {
        Ok(r) => r,
        Err(e) => return (WorktreeAction::Kept, format!("kept: {e}")),
    };
    let removed = if work.is_empty() {
        worktree::remove(&repo, w, deadline)
    } else {
        worktree::remove_discarding(&repo, w, deadline)
    };
    let mut detail = format!("removed; branch {} kept", sanitize(&w.branch));
    if !lost.is_empty() {
        detail.push_str(&format!("; discarded (--discard): {}", lost.join(" and ")));
    }
    if !stays.is_empty() {
        detail.push_str(&format!("; {}", stays.join(" and ")));
    }
    match removed {
        Ok(()) => (WorktreeAction::Removed, detail),
        Err(e) => (WorktreeAction::Kept, format!("kept: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actions::launch_spec::{Placement, Stage, Worktree};
    use crate::mux::MuxKind;

    /// The record is the bytes the `json!` builder before its schema wrote, launch spec and all.
    #[test]
    fn the_typed_record_writes_what_the_json_builder_wrote() {
        let spec = LaunchSpec {
            version: 1,
            session_id: "s1".into(),
            name: "W".into(),
            args: vec!["--session-id".into(), "s1".into()],
            cwd: PathBuf::from("/r/wt"),
            env: vec![("INTERCOM_PANE_BIN".into(), "/bin/ip".into())],
            placement: Some(Placement {
                multiplexer: MuxKind::Tmux,
                kind: "window".into(),
                socket: PathBuf::from("/tmp/tmux-0/default"),
            }),
            worktree: Some(Worktree {
                path: PathBuf::from("/r/wt"),
                branch: "w".into(),
                created_branch: true,
                base: "abc".into(),
            }),
            stage: Stage::Registered,
            pane: Some("%3".into()),
            created_at: "2026-11-29T23:00:00.000Z".into(),
            updated_at: "2026-11-29T23:00:01.000Z".into(),
            note: None,
            program: None,
            model: None,
        };
        let entry_text = r#"{"sessionId": "s1", "name": "W", "port": 47001.0}"#;
        let entry: Value = serde_json::from_str(entry_text).unwrap();
        let kept = vec![PathBuf::from("/r/.pi-intercom/seats/s1.json")];
        let old = serde_json::json!({"version": 1, "retiredAt": format_iso(1_000), "name": "W",
            "sessionId": "s1", "entry": entry, "entryText": entry_text,
            "launchSpec": Some(&spec), "kept": kept});
        let record = RetireRecord {
            version: retire_record::VERSION,
            retired_at: format_iso(1_000),
            name: "W".into(),
            session_id: "s1".into(),
            entry,
            entry_text: entry_text.into(),
            launch_spec: Some(serde_json::to_value(&spec).unwrap()),
            kept: kept.iter().map(|p| p.display().to_string()).collect(),
        };
        assert_eq!(
            record.to_bytes().unwrap(),
            serde_json::to_vec_pretty(&old).unwrap()
        );
    }
}
