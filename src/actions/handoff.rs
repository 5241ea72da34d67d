//! `intercom-pane handoff --job ID --summary TEXT`: run by a worker, inside its own pane, when the
//! coordinator asked it to hand off before its pane is closed (behaviour.md §7 step 3).
//!
//! It captures the worker's identity from the inside — the pi process found by ancestry with its
//! start ticks and boot id, the multiplexer pane and server that own it, the session id and file —
//! into a machine-local job record (mode 0600, never in config), then saves the public
//! `handoff {version, jobId, summary, updatedAt}` to config and moves the close job to
//! `awaiting_settlement`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::actions::{config_write, store};
use crate::clock::{format_iso, Ms};
use crate::evidence::config::{self, CloseState};
use crate::mux::{self, MuxEnv};
use crate::proc;

/// Longest public handoff summary, in characters.
pub const MAX_SUMMARY_CHARS: usize = 4000;
const MUX_DEADLINE: Duration = Duration::from_secs(2);

/// What the worker says about itself.
pub struct HandoffRequest {
    pub root: PathBuf,
    pub job_id: String,
    pub summary: String,
    /// The worker's session id (`--session-id`, else `$PI_SESSION_ID` from pi's tool env).
    pub session_id: String,
    pub session_file: Option<PathBuf>,
    /// The process to start the ancestry walk from (this command).
    pub from_pid: i32,
    pub now: Ms,
}

/// `<root>/.pi-intercom/jobs/<jobId>.json`.
pub fn job_record_path(root: &Path, job_id: &str) -> PathBuf {
    root.join(".pi-intercom")
        .join("jobs")
        .join(format!("{job_id}.json"))
}

/// The nearest ancestor named `pi` (pi names its process `pi`).
pub fn pi_ancestor(from: i32) -> Option<i32> {
    proc::ancestors(from, proc::MAX_DEPTH)
        .into_iter()
        .find(|&p| proc::read_stat(p).is_some_and(|s| s.comm == "pi"))
}

/// Save the handoff. Returns the job record's path. Errors are refusals (nothing written) unless
/// they say otherwise.
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
    let cfg = config::load(&req.root).map_err(|e| e.to_string())?;
    let agent = cfg
        .workers()
        .find(|a| a.session_id == req.session_id)
        .ok_or_else(|| format!("session {:?} is not a configured worker", req.session_id))?;
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
    let pi = pi_ancestor(req.from_pid)
        .ok_or("no pi process among this command's ancestors: run handoff from the worker's pi")?;
    let id = proc::identity(pi).ok_or("the pi process is gone or unreadable")?;
    let owner = mux::owning_multiplexer(pi, env, Instant::now() + MUX_DEADLINE)
        .ok_or("the worker's pi is not in a tmux or Herdr pane (by ancestry)")?;
    let record = json!({
        "version": 1,
        "jobId": req.job_id,
        "sessionId": req.session_id,
        "sessionFile": req.session_file.as_ref().map(|p| p.display().to_string()),
        "pi": {"pid": id.pid, "startTicks": id.start_ticks, "bootId": id.boot_id},
        "mux": {
            "kind": owner.kind.name(),
            "socket": owner.socket_path.display().to_string(),
            "server": owner.server,
            "paneId": owner.pane.id,
            "sessionId": owner.pane.session_id,
            "windowId": owner.pane.window_id,
            "panePid": owner.pane.pid,
        },
        "savedAt": format_iso(req.now),
    });
    let path = job_record_path(&req.root, &req.job_id);
    let dir = path.parent().unwrap_or(&req.root).to_path_buf();
    store::ensure_dir(&req.root, &dir).map_err(|e| e.to_string())?;
    let mut bytes = serde_json::to_vec_pretty(&record).map_err(|e| e.to_string())?;
    bytes.push(b'\n');
    store::write_atomic(&path, &bytes).map_err(|e| e.to_string())?;
    let job = req.job_id.clone();
    let summary = req.summary.clone();
    let at = format_iso(req.now);
    config_write::update_agent(&req.root, &req.session_id, &|a| {
        // Checked again under the config lock: a job that ended meanwhile (its deadline passed)
        // must not be reopened by a late handoff.
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
    Ok(path)
}
