//! `intercom-pane close-worker NAME`: close exactly one worker's pane after its public handoff
//! is saved and its turn has settled, and never anything else (docs/behaviour.md §7).
//!
//! Durable intent first (`closeJob` in config), every stage recorded before the step it names,
//! identities verified from the outside (server incarnation, pane, session/window, the pi process
//! in that pane's tree with the same start ticks and boot id, the session file's header), a commit
//! check that nothing moved since the turn settled, then one compare-and-close and a bounded
//! check that the pane and the process are gone. Any doubt stops the run; nothing is retried.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::actions::{config_write, reply, store};
use crate::board::classify::{self, Activity};
use crate::board::intercom::{self, ObservedStatus};
use crate::clock::{format_iso, Clock, Ms};
use crate::evidence::config::{self, Agent, CloseState};
use crate::evidence::observations;
use crate::evidence::registrations::{self, Registration};
use crate::evidence::reports::ReportSet;
use crate::evidence::sessions;
use crate::mux::{self, ServerIdentity};
use crate::proc::{self, ProcStatus};
use crate::scan::{self, ScanOptions};

mod guard;
mod job;
mod pin;
mod progress;
pub mod record;
mod verify;
use guard::Guard;
use verify::verify;

/// Longest deadline a close job may have.
pub const MAX_DEADLINE_SECS: u64 = 120;
/// At most this many close jobs pending at once.
const MAX_PENDING_JOBS: usize = 16;
const POLL: Duration = Duration::from_millis(250);
const STEP_DEADLINE: Duration = Duration::from_secs(5);

pub struct CloseRequest<'a> {
    pub name: String,
    pub deadline_secs: u64,
    pub dry_run: bool,
    pub recover: bool,
    /// Progress lines on stderr while waiting (off with `--json`).
    pub progress: bool,
    pub scan: &'a ScanOptions,
    pub clock: &'a dyn Clock,
}

/// How a run ended. `code` is the exit code: 0 closed (or dry run passed, or recovered),
/// 1 the job ended failed / timed out / uncertain, 2 refused, 5 fenced, 6 no reply path.
#[derive(Debug, Clone, PartialEq)]
pub struct Ending {
    pub code: i32,
    pub report: Value,
}

fn refused(code: i32, msg: impl Into<String>) -> Ending {
    Ending {
        code,
        report: json!({"refused": msg.into()}),
    }
}

/// The agent entry's `closeJob` object, if it is still job `job`.
fn this_job<'a>(
    agent: &'a mut serde_json::Map<String, Value>,
    job: &str,
) -> Result<&'a mut serde_json::Map<String, Value>, String> {
    let j = agent
        .get_mut("closeJob")
        .and_then(Value::as_object_mut)
        .ok_or("the close job disappeared from config")?;
    if j.get("jobId").and_then(Value::as_str) != Some(job) {
        return Err("another close job replaced this one".into());
    }
    Ok(j)
}

/// Set the worker's close job fields (state, updatedAt, optional reason).
fn set_state(
    root: &Path,
    agent: &Agent,
    job: &str,
    state: CloseState,
    reason: Option<&str>,
    now: Ms,
) -> Result<(), String> {
    let at = format_iso(now);
    config_write::update_agent(root, &agent.session_id, &|a| {
        let j = this_job(a, job)?;
        j.insert("state".into(), json!(state.as_str()));
        j.insert("updatedAt".into(), json!(at));
        match reason {
            Some(r) => j.insert("reason".into(), json!(r)),
            None => j.remove("reason"),
        };
        Ok(())
    })
    .map(|_| ())
}

/// `requested` → `awaiting_handoff`, and only from `requested`: a quick worker may already have
/// saved its handoff (moving the job to `awaiting_settlement`) before this write runs, and
/// overwriting that would wait for a handoff that has already come.
fn mark_awaiting_handoff(root: &Path, agent: &Agent, job: &str, now: Ms) -> Result<(), String> {
    let at = format_iso(now);
    config_write::update_agent(root, &agent.session_id, &|a| {
        let j = this_job(a, job)?;
        if j.get("state").and_then(Value::as_str) == Some(CloseState::Requested.as_str()) {
            j.insert("state".into(), json!(CloseState::AwaitingHandoff.as_str()));
            j.insert("updatedAt".into(), json!(at));
        }
        Ok(())
    })
    .map(|_| ())
}

fn lock_path(root: &Path, job: &str) -> PathBuf {
    root.join(".pi-intercom")
        .join("jobs")
        .join(format!("{job}.lock"))
}

/// Where the fence of a pending or uncertain job is handled: a job still run by a live process
/// is refused; a dead run's job is marked (`interrupted`, or `uncertain` if it was closing) and
/// stays fenced; `--recover` re-checks what is left of it and clears the fence. Nothing is
/// ever replayed. `None` when there is no fence and a close may start.
fn fence(req: &CloseRequest, root: &Path, agent: &Agent) -> Option<Ending> {
    let Some(j) = agent
        .close_job
        .as_ref()
        .filter(|j| j.state.is_pending() || j.state.is_fenced())
    else {
        return req.recover.then(|| Ending {
            code: 0,
            report: json!({"worker": agent.name, "fenced": false,
                "job": agent.close_job.as_ref().map(|j| json!({"jobId": j.job_id, "state": j.state.as_str()})),
                "note": "nothing to recover; no close was started"}),
        });
    };
    let now = req.clock.now_ms();
    let lock = lock_path(root, &j.job_id);
    if j.state.is_pending() && store::is_held(&lock) {
        return Some(refused(
            5,
            format!("close job {} is running ({})", j.job_id, j.state.as_str()),
        ));
    }
    let next = if req.recover {
        if j.state == CloseState::Uncertain {
            CloseState::Failed
        } else {
            CloseState::Interrupted
        }
    } else if j.state == CloseState::Closing {
        CloseState::Uncertain
    } else if j.state.is_pending() {
        CloseState::Interrupted
    } else {
        return Some(refused(
            5,
            format!(
                "close job {} is uncertain: inspect the pane, then --recover",
                j.job_id
            ),
        ));
    };
    let reason = if next == CloseState::Uncertain {
        "close_unverified"
    } else {
        "interrupted"
    };
    let found = req.recover.then(|| recheck(root, &j.job_id));
    let mut recorded = false;
    if !req.dry_run {
        let _ = store::remove_file(&lock);
        if let Err(e) = set_state(root, agent, &j.job_id, next, Some(reason), now) {
            return Some(refused(2, e));
        }
        recorded = true;
    }
    Some(Ending {
        code: if req.recover { 0 } else { 5 },
        report: json!({"jobId": j.job_id, "was": j.state.as_str(), "now": next.as_str(),
            "found": found, "recorded": recorded, "note": "nothing was replayed or closed"}),
    })
}

/// What is left of a fenced job's worker, for the person recovering it: its pane and its pi.
fn recheck(root: &Path, job: &str) -> Value {
    let Ok(r) = record::read(root, job) else {
        return json!({"jobRecord": "missing or unreadable"});
    };
    let m = mux::open(r.kind, &r.socket);
    let pane = match m.find_pane(&r.pane_id, Instant::now() + STEP_DEADLINE) {
        Ok(Some(p)) if p.session_id == r.mux_session_id => "present",
        Ok(Some(_)) => "reused by another session",
        Ok(None) => "gone",
        Err(_) => "unknown (the multiplexer did not answer)",
    };
    let pi = match proc::status(&r.pi) {
        ProcStatus::Alive => "running",
        ProcStatus::Zombie => "exited (zombie)",
        ProcStatus::Gone => "gone",
        ProcStatus::Unknown => "unknown",
    };
    json!({"pane": r.pane_id, "paneState": pane, "piPid": r.pi.pid, "piState": pi})
}

pub fn close_worker(req: &CloseRequest) -> Ending {
    let clock = req.clock;
    let root = match &req.scan.root {
        scan::RootChoice::Exact(r) => Some(r.clone()),
        scan::RootChoice::Discover(start) => config::discover_root(start).ok().flatten(),
        scan::RootChoice::Skip => None,
    };
    let Some(root) = root else {
        return refused(2, "no Intercom root: nothing to close");
    };
    let cfg = match config::load(&root) {
        Ok(c) => c,
        Err(e) => return refused(2, e.to_string()),
    };
    let Some(agent) = cfg.find_by_name(&req.name).cloned() else {
        return refused(
            2,
            format!(
                "no agent named {:?} in config",
                crate::text::sanitize(&req.name)
            ),
        );
    };
    if agent.coordinator {
        return refused(2, "the coordinator is never closed by close-worker");
    }
    if !(1..=MAX_DEADLINE_SECS).contains(&req.deadline_secs) {
        return refused(2, format!("--deadline-secs must be 1..{MAX_DEADLINE_SECS}"));
    }
    if let Some(end) = fence(req, &root, &agent) {
        return end;
    }
    if cfg
        .workers()
        .filter(|a| a.close_job.as_ref().is_some_and(|j| j.state.is_pending()))
        .count()
        >= MAX_PENDING_JOBS
    {
        return refused(
            2,
            format!("{MAX_PENDING_JOBS} close jobs are already pending"),
        );
    }
    // Protected targets first, from names and processes only: nothing written or sent yet.
    let regs = registrations::read_all(Some(&root), &req.scan.data_root);
    let Some(mut target) = regs
        .by_session_id(&agent.session_id)
        .and_then(record::from_registration)
    else {
        return refused(
            6,
            "the worker has no registration recording its pane and pi: no registered seat to ask",
        );
    };
    let guard = Guard::gather(&cfg, &regs);
    if let Err(e) = guard.check(&target) {
        return refused(2, e);
    }
    // The request travels on the reply path: without a live registration nothing starts.
    let pass = match scan::run(req.scan, clock, None) {
        Ok(p) => p,
        Err(e) => return refused(2, e.to_string()),
    };
    let key = format!("{}/{}", scan::base_name(&root), agent.name);
    if let Err(r) = reply::resolve(&pass, &key) {
        return refused(6, r.to_string());
    }
    // The registered pi must be in the registered pane now, verified from the outside.
    let verified = verify(&target, &agent.session_id, &guard);
    if req.dry_run {
        return dry_run(&pass, &key, &agent, verified.map(|_| ()));
    }
    match verified {
        // The pane incarnation the pi was verified in is part of the recorded identity.
        Ok(v) => {
            target.pane_pid = v.pane.pid;
            target.terminal_id = v.pane.terminal_id;
        }
        Err(e) => return refused(2, format!("not closing: {e}")),
    }

    // The job's lock exists before its record does: a run that sees a pending job without a live
    // lock holder may then rightly take it for a dead run's, never for one starting right now.
    let now = clock.now_ms();
    let job_id = uuid::Uuid::new_v4().to_string();
    let jobs_dir = root.join(".pi-intercom").join("jobs");
    if let Err(e) = store::ensure_dir(&root, &jobs_dir) {
        return refused(2, format!("close job not recorded: {e}"));
    }
    let _lock = match store::Lock::acquire(&lock_path(&root, &job_id)) {
        Ok(l) => l,
        Err(e) => return refused(2, format!("close job not recorded: {e}")),
    };
    // The worker's identity is fixed before the job is announced: `handoff` accepts only it.
    if let Err(e) = record::write(&root, &job_id, &target, now) {
        return refused(2, format!("close job not recorded: {e}"));
    }
    // Durable intent before any mutation.
    let deadline_at = now + req.deadline_secs as i64 * 1000;
    let (jid, at, dl) = (job_id.clone(), format_iso(now), format_iso(deadline_at));
    if let Err(e) = config_write::update_agent(&root, &agent.session_id, &|a| {
        // Checked again under the config lock: two runs started together must not both ask.
        let current = a
            .get("closeJob")
            .and_then(|j| j.get("state"))
            .and_then(Value::as_str)
            .and_then(CloseState::parse);
        if current.is_some_and(|c| c.is_pending() || c == CloseState::Uncertain) {
            return Err("another close job for this worker started meanwhile".into());
        }
        a.insert(
            "closeJob".into(),
            json!({"jobId": jid, "state": "requested", "createdAt": at, "updatedAt": at, "deadlineAt": dl}),
        );
        Ok(())
    }) {
        let _ = store::remove_file(&record::path(&root, &job_id));
        return refused(2, format!("close job not recorded: {e}"));
    }
    job::run(&job::Job {
        req,
        root: &root,
        agent: &agent,
        id: &job_id,
        deadline_at,
        pass: &pass,
        key: &key,
        guard: &guard,
        record: &target,
    })
}

/// Every check a close would make before asking for the handoff, including the outside identity
/// verification against the worker's registration; nothing is written or sent.
fn dry_run(pass: &scan::Scan, key: &str, agent: &Agent, identity: Result<(), String>) -> Ending {
    let Ok((_, target)) = reply::resolve(pass, key) else {
        return refused(6, "no reply path");
    };
    let rec = pass.records.iter().find(|r| r.key() == key);
    let verdict = json!({
        "worker": agent.name,
        "sessionId": agent.session_id,
        "pane": target.target,
        "multiplexer": target.kind.name(),
        "socket": target.socket,
        "registrationAlive": rec.and_then(|r| r.registered.as_ref()).and_then(|r| r.alive),
        "boardState": rec.map(|r| r.state.as_str()),
        "identity": match &identity {
            Ok(()) => "verified".to_string(),
            Err(e) => crate::text::sanitize(e),
        },
        "wouldAsk": "intercom-pane handoff --job <new job id> --summary ...",
        "mutated": false,
    });
    Ending {
        code: if identity.is_ok() { 0 } else { 1 },
        report: verdict,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root_with_job(state: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".pi-intercom")).unwrap();
        let t = "2026-11-30T00:00:00.000Z";
        let cfg = json!({"version": 1, "agents": [
            {"sessionId": "c", "name": "C", "coordinator": true, "description": "C.", "port": 1, "projectDirectory": "."},
            {"sessionId": "w", "name": "W", "coordinator": false, "description": "W.", "port": 2, "projectDirectory": ".",
             "closeJob": {"jobId": "j1", "state": state, "createdAt": t, "updatedAt": t, "deadlineAt": t}}]});
        std::fs::write(dir.path().join(".pi-intercom/config.json"), cfg.to_string()).unwrap();
        dir
    }

    fn job_state(root: &Path) -> String {
        let c = config::load(root).unwrap();
        let a = c.find_by_session("w").unwrap();
        a.close_job.as_ref().unwrap().state.as_str().to_string()
    }

    #[test]
    fn awaiting_handoff_never_overwrites_a_handoff_that_came_first() {
        let dir = root_with_job("awaiting_settlement");
        let agent = config::load(dir.path())
            .unwrap()
            .find_by_session("w")
            .cloned()
            .unwrap();
        mark_awaiting_handoff(dir.path(), &agent, "j1", 1_000).unwrap();
        assert_eq!(job_state(dir.path()), "awaiting_settlement");

        let dir = root_with_job("requested");
        mark_awaiting_handoff(dir.path(), &agent, "j1", 1_000).unwrap();
        assert_eq!(job_state(dir.path()), "awaiting_handoff");
        assert!(mark_awaiting_handoff(dir.path(), &agent, "other", 1_000).is_err());
    }
}
