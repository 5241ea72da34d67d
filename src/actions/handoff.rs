//! `intercom-pane handoff --job ID --summary TEXT`: run by a worker, inside its own pane, when the
//! coordinator asked it to hand off before its pane is closed (docs/behaviour.md §7 step 3).
//!
//! Accepted only from the worker that was asked: `close-worker` recorded that worker's identity
//! (its pi's pid, start ticks and boot id, its pane and server, its session) in the job record
//! before asking. The caller's pi is found among the caller's ancestors by exactly that identity
//! — never the nearest process merely named `pi` — and must sit in the recorded pane of the
//! recorded server. The session is the job's, never the caller's arguments. Every check runs
//! before anything is written; then the public `handoff {version, jobId, summary, updatedAt}` is
//! saved to config and the close job moves to `awaiting_settlement`.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::actions::close::record;
use crate::actions::config_write;
use crate::clock::{format_iso, Ms};
use crate::evidence::config::{self, CloseState};
use crate::mux::{self, MuxEnv};
use crate::proc;

/// Longest public handoff summary, in characters.
pub const MAX_SUMMARY_CHARS: usize = 4000;
const MUX_DEADLINE: Duration = Duration::from_secs(2);

/// What the worker says.
pub struct HandoffRequest {
    pub root: PathBuf,
    pub job_id: String,
    pub summary: String,
    /// A session id the caller named (`--session-id` / `$PI_SESSION_ID`): never trusted, only
    /// compared with the job's; a different one is refused.
    pub claimed_session: Option<String>,
    /// The process to start the ancestry walk from (this command).
    pub from_pid: i32,
    pub now: Ms,
}

/// The caller's ancestor that is exactly the recorded process (pid, start ticks, boot id).
fn recorded_ancestor(from: i32, pi: &proc::ProcIdentity) -> Option<i32> {
    let mut chain = vec![from];
    chain.extend(proc::ancestors(from, proc::MAX_DEPTH));
    chain
        .into_iter()
        .find(|&p| p == pi.pid && proc::identity(p).as_ref() == Some(pi))
}

/// Save the handoff. Returns the job record's path. Every error is a refusal: nothing written.
pub fn handoff(req: &HandoffRequest, env: &MuxEnv) -> Result<PathBuf, String> {
    if !config::valid_job_id(&req.job_id) {
        return Err(format!(
            "--job {:?} is not a job id",
            crate::text::clip(&crate::text::sanitize(&req.job_id), 60)
        ));
    }
    let n = req.summary.chars().count();
    if req.summary.trim().is_empty() || n > MAX_SUMMARY_CHARS {
        return Err(format!(
            "the summary must be non-blank and at most {MAX_SUMMARY_CHARS} characters (got {n})"
        ));
    }
    let rec = record::read(&req.root, &req.job_id)
        .map_err(|e| format!("no usable record of close job {}: {e}", req.job_id))?;
    if req
        .claimed_session
        .as_deref()
        .is_some_and(|s| s != rec.session_id)
    {
        return Err(format!(
            "close job {} is for another session than this caller's",
            req.job_id
        ));
    }
    let cfg = config::load(&req.root).map_err(|e| e.to_string())?;
    let agent = cfg
        .workers()
        .find(|a| a.session_id == rec.session_id)
        .ok_or_else(|| format!("close job {} names no configured worker", req.job_id))?;
    match &agent.close_job {
        Some(j)
            if j.job_id == req.job_id
                && matches!(j.state, CloseState::Requested | CloseState::AwaitingHandoff) => {}
        Some(j) if j.job_id == req.job_id => {
            return Err(format!(
                "close job {} is {}: no handoff is awaited",
                req.job_id,
                j.state.as_str()
            ))
        }
        _ => {
            return Err(format!(
                "no close job {} is open for {}",
                req.job_id, agent.name
            ))
        }
    }
    let pi = recorded_ancestor(req.from_pid, &rec.pi).ok_or(
        "refused: this command does not run under the worker's pi that was asked for the handoff",
    )?;
    let owner = mux::owning_multiplexer(pi, env, Instant::now() + MUX_DEADLINE)
        .ok_or("refused: the worker's pi is not in a tmux or Herdr pane (by ancestry)")?;
    if owner.kind != rec.kind
        || owner.pane.id != rec.pane_id
        || !owner.server.same_server(&rec.server)
    {
        return Err("refused: the worker's pi is not in the pane the job recorded".into());
    }
    let job = req.job_id.clone();
    let summary = req.summary.clone();
    let at = format_iso(req.now);
    let worker_pi = rec.pi.clone();
    config_write::update_agent(&req.root, &rec.session_id, &|a| {
        // Checked again under the config lock: the asking pi must still run (a lock wait is a
        // window), and a job that ended meanwhile must not be reopened by a late handoff.
        if proc::identity(pi).as_ref() != Some(&worker_pi) {
            return Err("the worker's pi exited meanwhile".into());
        }
        let j = a.get("closeJob");
        let same = j.and_then(|j| j.get("jobId")).and_then(Value::as_str) == Some(job.as_str());
        let awaited = matches!(
            j.and_then(|j| j.get("state")).and_then(Value::as_str),
            Some("requested" | "awaiting_handoff")
        );
        if !same || !awaited {
            return Err("the close job changed meanwhile".into());
        }
        a.insert(
            "handoff".into(),
            json!({"version": 1, "jobId": job, "summary": summary, "updatedAt": at}),
        );
        if let Some(j) = a.get_mut("closeJob").and_then(Value::as_object_mut) {
            j.insert("state".into(), json!("awaiting_settlement"));
            j.insert("updatedAt".into(), json!(at));
        }
        Ok(())
    })
    .map_err(|e| format!("handoff not saved to config: {e}"))?;
    Ok(record::path(&req.root, &req.job_id))
}
