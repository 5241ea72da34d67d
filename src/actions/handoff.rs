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

use crate::actions::close::record;
use crate::actions::close::stage::{self, JobConflict};
use crate::actions::config_write::{self, WriteError};
use crate::clock::{format_iso, Ms};
use crate::evidence::config;
use crate::evidence::registrations;
use crate::mux::{self, MuxEnv};
use crate::proc;
use crate::states::CloseState;

/// Longest public handoff summary, in characters.
pub(crate) const MAX_SUMMARY_CHARS: usize = 4000;
const MUX_DEADLINE: Duration = Duration::from_secs(2);

/// What the worker says.
pub(crate) struct HandoffRequest {
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

/// Why a handoff was refused (nothing written) or not saved.
#[derive(Debug)]
pub(crate) enum HandoffError {
    BadJobId(String),
    BadSummary {
        chars: usize,
    },
    NoRecord {
        job: String,
        why: record::RecordError,
    },
    OtherSession {
        job: String,
    },
    Config(config::ConfigError),
    NoWorker {
        job: String,
    },
    NotAwaited {
        job: String,
        state: CloseState,
    },
    NotOpen {
        job: String,
        worker: String,
    },
    NotUnderWorkersPi,
    /// The worker's record in the roster's seats folder is another pi's, or names another
    /// session file or folder than the job's.
    NotWorkersRecord(String),
    NotInPane,
    NotInRecordedPane,
    NotSaved(WriteError<JobConflict>),
}

impl std::fmt::Display for HandoffError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::text::{clip, sanitize};
        match self {
            HandoffError::BadJobId(id) => {
                write!(f, "--job {:?} is not a job id", clip(&sanitize(id), 60))
            }
            HandoffError::BadSummary { chars } => write!(
                f,
                "the summary must be non-blank and at most {MAX_SUMMARY_CHARS} characters (got {chars})"
            ),
            HandoffError::NoRecord { job, why } => {
                write!(f, "no usable record of close job {job}: {why}")
            }
            HandoffError::OtherSession { job } => write!(
                f,
                "close job {job} is for another session than this caller's"
            ),
            HandoffError::Config(e) => e.fmt(f),
            HandoffError::NoWorker { job } => {
                write!(f, "close job {job} names no configured worker")
            }
            HandoffError::NotAwaited { job, state } => write!(
                f,
                "close job {job} is {}: no handoff is awaited",
                state.as_str()
            ),
            HandoffError::NotOpen { job, worker } => write!(
                f,
                "no close job {job} is open for {}",
                sanitize(worker)
            ),
            HandoffError::NotUnderWorkersPi => f.write_str(
                "refused: this command does not run under the worker's pi that was asked for the handoff",
            ),
            HandoffError::NotWorkersRecord(why) => write!(
                f,
                "refused: the worker's registration is not the one the job recorded ({why})"
            ),
            HandoffError::NotInPane => f.write_str(
                "refused: the worker's pi is not in a tmux or Herdr pane (by ancestry)",
            ),
            HandoffError::NotInRecordedPane => {
                f.write_str("refused: the worker's pi is not in the pane the job recorded")
            }
            HandoffError::NotSaved(e) => write!(f, "handoff not saved to config: {e}"),
        }
    }
}

impl std::error::Error for HandoffError {}

/// Save the handoff. Returns the job record's path. Every error is a refusal: nothing written.
pub(crate) fn handoff(req: &HandoffRequest, env: &MuxEnv) -> Result<PathBuf, HandoffError> {
    // Checked before it is used in any path or message.
    if !config::valid_job_id(&req.job_id) {
        return Err(HandoffError::BadJobId(req.job_id.clone()));
    }
    let job = || req.job_id.clone();
    let n = req.summary.chars().count();
    if req.summary.trim().is_empty() || n > MAX_SUMMARY_CHARS {
        return Err(HandoffError::BadSummary { chars: n });
    }
    let rec = record::read(&req.root, &req.job_id)
        .map_err(|e| HandoffError::NoRecord { job: job(), why: e })?;
    if req
        .claimed_session
        .as_deref()
        .is_some_and(|s| s != rec.session_id)
    {
        return Err(HandoffError::OtherSession { job: job() });
    }
    let cfg = config::load(&req.root).map_err(HandoffError::Config)?;
    let agent = cfg
        .workers()
        .find(|a| a.session_id == rec.session_id)
        .ok_or_else(|| HandoffError::NoWorker { job: job() })?;
    match &agent.close_job {
        Some(j)
            if j.job_id == req.job_id
                && stage::may_follow(Some(j.state), CloseState::AwaitingSettlement) => {}
        Some(j) if j.job_id == req.job_id => {
            return Err(HandoffError::NotAwaited {
                job: job(),
                state: j.state,
            })
        }
        _ => {
            return Err(HandoffError::NotOpen {
                job: job(),
                worker: agent.name.clone(),
            })
        }
    }
    let pi = recorded_ancestor(req.from_pid, &rec.pi).ok_or(HandoffError::NotUnderWorkersPi)?;
    // The worker's record in the roster's seats folder, when there is one, must still be the
    // job's pi, with the job's session file, in the worker's folder.
    if let Some(r) =
        registrations::read_path(&registrations::root_record(&req.root, &rec.session_id))
    {
        let folder = req.root.join(&agent.project_directory);
        if !r.is_process(&rec.pi) {
            return Err(HandoffError::NotWorkersRecord(
                "it is another process's".into(),
            ));
        }
        r.matches_seat(rec.session_file.as_deref(), Some(&folder))
            .map_err(|why| HandoffError::NotWorkersRecord(why.to_string()))?;
    }
    let owner = mux::owning_multiplexer(pi, env, Instant::now() + MUX_DEADLINE)
        .ok_or(HandoffError::NotInPane)?;
    if owner.kind != rec.kind
        || owner.pane.id != rec.pane_id
        || !owner.server.same_server(&rec.server)
    {
        return Err(HandoffError::NotInRecordedPane);
    }
    let job = req.job_id.clone();
    let summary = req.summary.clone();
    let at = format_iso(req.now);
    let worker_pi = rec.pi.clone();
    config_write::update_agent(&req.root, &rec.session_id, &|a| {
        // Checked again under the config lock: the asking pi must still run (a lock wait is a
        // window), and a job that ended meanwhile must not be reopened by a late handoff.
        if proc::identity(pi).as_ref() != Some(&worker_pi) {
            return Err(JobConflict::PiExited);
        }
        let j = stage::this_job(a, &job)?;
        stage::advance(j, CloseState::AwaitingSettlement, &at, None).map_err(JobConflict::Step)?;
        let handoff = crate::evidence::config::NewHandoff {
            version: 1,
            job_id: &job,
            summary: &summary,
            updated_at: &at,
        };
        a.insert(
            "handoff".into(),
            serde_json::to_value(handoff).unwrap_or_default(),
        );
        Ok(())
    })
    .map_err(HandoffError::NotSaved)?;
    Ok(record::path(&req.root, &req.job_id))
}
