//! `intercom-pane close-worker NAME`: close exactly one worker's pane after its public handoff
//! is saved and its turn has settled, and never anything else (behaviour.md §7).
//!
//! Durable intent first (`closeJob` in config), every stage recorded before the step it names,
//! identities verified from the outside (server incarnation, pane, session/window, the pi process
//! in that pane's tree with the same start ticks and boot id, the session file's header), a commit
//! check that nothing moved since the turn settled, then one compare-and-close and a bounded
//! check that the pane and the process are gone. Any doubt stops the run; nothing is retried.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::actions::{config_write, handoff, monitor_pane, reply, store};
use crate::board::classify::{self, Activity};
use crate::board::intercom::{self, ObservedStatus};
use crate::clock::{format_iso, Clock, Ms};
use crate::evidence::config::{self, Agent, CloseState, IntercomConfig};
use crate::evidence::observations;
use crate::evidence::registrations::{self, Registration};
use crate::evidence::reports::ReportSet;
use crate::evidence::sessions;
use crate::fsguard;
use crate::mux::{self, CloseOutcome, MuxEnv, MuxKind, PaneIdentity, ServerIdentity};
use crate::proc::{self, ProcIdentity, ProcStatus};
use crate::scan::{self, ScanOptions};

mod verify;
use verify::{
    evidence, matches_registration, read_job_record, record_from_registration, settled, verify,
};

/// Longest deadline a close job may have.
pub const MAX_DEADLINE_SECS: u64 = 120;
/// At most this many close jobs pending at once.
const MAX_PENDING_JOBS: usize = 16;
const POLL: Duration = Duration::from_millis(250);
const STEP_DEADLINE: Duration = Duration::from_secs(5);
/// After the close, how long the pane and process may take to disappear.
const VERIFY_WINDOW: Duration = Duration::from_secs(3);

pub struct CloseRequest<'a> {
    pub name: String,
    pub deadline_secs: u64,
    pub dry_run: bool,
    pub recover: bool,
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

/// The panes this run must never close: the caller's own, and the coordinator's monitor.
fn protected_panes(cfg: &IntercomConfig) -> Vec<String> {
    let mut out = Vec::new();
    let me = std::process::id() as i32;
    if let Some(o) =
        mux::owning_multiplexer(me, &MuxEnv::from_process(), Instant::now() + STEP_DEADLINE)
    {
        out.push(o.pane.id);
    }
    if let Some(c) = cfg.coordinator() {
        let path = monitor_pane::record_path(&cfg.root, &c.session_id);
        if let Ok(b) = fsguard::read_capped(&path, 64 * 1024) {
            if let Some(p) = serde_json::from_slice::<Value>(&b)
                .ok()
                .and_then(|v| v["pane"].as_str().map(str::to_string))
            {
                out.push(p);
            }
        }
    }
    out
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
    // A pending or uncertain job is fenced: a dead run's job is marked, never replayed.
    if let Some(j) = &agent.close_job {
        if j.state.is_pending() || j.state.is_fenced() {
            let now = clock.now_ms();
            let lock = lock_path(&root, &j.job_id);
            if j.state.is_pending() && store::is_held(&lock) {
                return refused(
                    5,
                    format!("close job {} is running ({})", j.job_id, j.state.as_str()),
                );
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
                return refused(
                    5,
                    format!(
                        "close job {} is uncertain: inspect the pane, then --recover",
                        j.job_id
                    ),
                );
            };
            let reason = if next == CloseState::Uncertain {
                "close_unverified"
            } else {
                "interrupted"
            };
            if !req.dry_run {
                let _ = store::remove_file(&lock);
                if let Err(e) = set_state(&root, &agent, &j.job_id, next, Some(reason), now) {
                    return refused(2, e);
                }
            }
            return Ending {
                code: if req.recover { 0 } else { 5 },
                report: json!({"jobId": j.job_id, "was": j.state.as_str(), "now": next.as_str(),
                    "note": "nothing was replayed"}),
            };
        }
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
    // The request travels on the reply path: without a live registration nothing starts.
    let pass = match scan::run(req.scan, clock, None) {
        Ok(p) => p,
        Err(e) => return refused(2, e.to_string()),
    };
    let key = format!("{}/{}", scan::base_name(&root), agent.name);
    if let Err(r) = reply::resolve(&pass, &key) {
        return refused(6, r.to_string());
    }
    let protected = protected_panes(&cfg);
    if req.dry_run {
        return dry_run(req, &pass, &key, &agent, &protected);
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
        return refused(2, format!("close job not recorded: {e}"));
    }
    run_job(
        req,
        &root,
        &agent,
        &job_id,
        deadline_at,
        &pass,
        &key,
        &protected,
    )
}

#[allow(clippy::too_many_arguments)]
fn run_job(
    req: &CloseRequest,
    root: &Path,
    agent: &Agent,
    job: &str,
    deadline_at: Ms,
    pass: &scan::Scan,
    key: &str,
    protected: &[String],
) -> Ending {
    let clock = req.clock;
    // Every ending records the job's final state in config, then reports it.
    let end = |state: CloseState, reason: Option<&str>, detail: &str| {
        finish(root, agent, job, state, reason, clock, detail)
    };
    let ask = format!(
        "Intercom close requested (job {job}): save your public handoff now by running `intercom-pane handoff --job {job} --summary \"<what you did, what is left>\"`, then finish your turn."
    );
    match reply::send(pass, key, &ask, clock.now_ms()) {
        Ok(r) if r.delivered => {}
        Ok(r) => return end(CloseState::Failed, Some("delivery_failed"), &r.stderr),
        Err(e) => return end(CloseState::Failed, Some("delivery_failed"), &e.to_string()),
    }
    if let Err(e) = mark_awaiting_handoff(root, agent, job, clock.now_ms()) {
        return end(CloseState::Failed, Some("save_failed"), &e);
    }
    // Wait for the handoff (the worker's `handoff` moves the job to awaiting_settlement).
    let handoff_at = loop {
        if clock.now_ms() >= deadline_at {
            return end(
                CloseState::TimedOut,
                Some("timeout"),
                "no handoff before the deadline",
            );
        }
        if let Ok(c) = config::load(root) {
            if let Some(a) = c.find_by_session(&agent.session_id) {
                let state = a
                    .close_job
                    .as_ref()
                    .filter(|j| j.job_id == job)
                    .map(|j| j.state);
                match (state, &a.handoff) {
                    (Some(CloseState::AwaitingSettlement), Some(h)) if h.job_id == job => {
                        break h.updated_at
                    }
                    (Some(CloseState::AwaitingHandoff | CloseState::Requested), _) => {}
                    _ => return refused(1, "the close job changed under this run; stopped"),
                }
            }
        }
        std::thread::sleep(POLL);
    };
    let record = match read_job_record(root, job) {
        Ok(r) => r,
        Err(e) => return end(CloseState::Failed, Some("identity_failed"), &e),
    };
    let Some(file) = record.session_file.clone().or_else(|| {
        sessions::index_sessions(&req.scan.session_dirs)
            .find(&agent.session_id)
            .map(Path::to_path_buf)
    }) else {
        return end(
            CloseState::Failed,
            Some("identity_failed"),
            "no session file to watch",
        );
    };
    // Wait for the turn to settle after the handoff.
    loop {
        if clock.now_ms() >= deadline_at {
            return end(
                CloseState::TimedOut,
                Some("timeout"),
                "the turn did not settle before the deadline",
            );
        }
        if settled(
            root,
            agent,
            &req.scan.data_root,
            &file,
            handoff_at,
            clock.now_ms(),
        ) {
            break;
        }
        std::thread::sleep(POLL);
    }
    let Some(settled_evidence) = evidence(&file) else {
        return end(
            CloseState::Failed,
            Some("worker_busy"),
            "session file unreadable",
        );
    };
    if let Err(e) = set_state(root, agent, job, CloseState::Ready, None, clock.now_ms()) {
        return end(CloseState::Failed, Some("save_failed"), &e);
    }
    let regs = registrations::read_all(Some(root), &req.scan.data_root);
    if let Err(e) = matches_registration(&record, regs.by_session_id(&agent.session_id)) {
        return end(CloseState::Failed, Some("identity_failed"), &e);
    }
    let v = match verify(&record, &agent.session_id, protected) {
        Ok(v) => v,
        Err(e) => return end(CloseState::Failed, Some("identity_failed"), &e),
    };
    if let Err(e) = set_state(root, agent, job, CloseState::Closing, None, clock.now_ms()) {
        return end(CloseState::Failed, Some("save_failed"), &e);
    }
    // Commit condition, immediately before the single close: nothing moved since `ready`.
    if evidence(&file).as_ref() != Some(&settled_evidence) {
        return end(
            CloseState::Failed,
            Some("worker_changed"),
            "new activity after the turn settled",
        );
    }
    let m = mux::open(record.kind, &record.socket);
    let expected = PaneIdentity::of(&v.server, &v.pane);
    let outcome = m.close_if_matches(&expected, Instant::now() + STEP_DEADLINE);
    match outcome {
        Ok(CloseOutcome::Closed) => {
            let until = Instant::now() + VERIFY_WINDOW;
            loop {
                if proc::status(&record.pi) != ProcStatus::Alive {
                    return end(
                        CloseState::Closed,
                        None,
                        "pane closed; worker process exited",
                    );
                }
                if Instant::now() >= until {
                    return end(
                        CloseState::Uncertain,
                        Some("close_unverified"),
                        "the pane is gone but the pi process still runs",
                    );
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        Ok(CloseOutcome::Refused(why)) => end(CloseState::Failed, Some("commit_rejected"), &why),
        Ok(CloseOutcome::AlreadyGone) => end(
            CloseState::Uncertain,
            Some("close_unverified"),
            "the pane was already gone; nothing was closed",
        ),
        Ok(CloseOutcome::Unverified(why)) => {
            end(CloseState::Uncertain, Some("close_unverified"), &why)
        }
        Err(e) => end(
            CloseState::Uncertain,
            Some("close_unverified"),
            &e.to_string(),
        ),
    }
}

fn finish(
    root: &Path,
    agent: &Agent,
    job: &str,
    state: CloseState,
    reason: Option<&str>,
    clock: &dyn Clock,
    detail: &str,
) -> Ending {
    let saved = set_state(root, agent, job, state, reason, clock.now_ms());
    Ending {
        code: if state == CloseState::Closed { 0 } else { 1 },
        report: json!({"jobId": job, "worker": agent.name, "state": state.as_str(), "reason": reason,
            "detail": crate::text::sanitize(detail), "recorded": saved.is_ok()}),
    }
}

/// Every check a close would make before asking for the handoff, plus the outside identity
/// verification against the worker's registration; nothing is written or sent.
fn dry_run(
    req: &CloseRequest,
    pass: &scan::Scan,
    key: &str,
    agent: &Agent,
    protected: &[String],
) -> Ending {
    let Ok((_, target)) = reply::resolve(pass, key) else {
        return refused(6, "no reply path");
    };
    let root = pass.config.as_ref().map(|c| c.root.clone());
    let regs = registrations::read_all(root.as_deref(), &req.scan.data_root);
    let identity = match regs
        .by_session_id(&agent.session_id)
        .and_then(record_from_registration)
    {
        Some(job) => verify(&job, &agent.session_id, protected).map(|_| ()),
        None => Err("the registration does not record a full pane and process identity".into()),
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
