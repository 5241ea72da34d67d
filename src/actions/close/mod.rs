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

use serde_json::Value;

use crate::actions::config_write::{self, WriteError};
use crate::actions::reply;
use crate::board::record::SeatKey;
use crate::clock::{format_iso, Clock, Ms};
use crate::evidence::config::{self, Agent, CloseReason, IntercomConfig};
use crate::evidence::registrations;
use crate::exit_code::exit_enum;
use crate::mux;
use crate::owned::close_report::{
    CloseReport, DryRunVerdict, FenceHandled, Found, JobSeen, NothingToRecover,
};
use crate::proc::{self, ProcStatus};
use crate::scan::{self, ScanOptions};
use crate::states::CloseState;
use crate::store;

mod guard;
mod job;
mod pin;
mod progress;
pub(crate) mod record;
pub(crate) mod stage;
mod verify;
use guard::Guard;
use record::JobRecord;
use stage::JobConflict;
use verify::{verify, VerifyError};

/// Longest deadline a close job may have.
pub(crate) const MAX_DEADLINE_SECS: u64 = 120;
/// At most this many close jobs pending at once.
const MAX_PENDING_JOBS: usize = 16;
const POLL: Duration = Duration::from_millis(250);
const STEP_DEADLINE: Duration = Duration::from_secs(5);

/// Told a recorded job's id and deadline.
pub(crate) type JobTold<'a> = dyn Fn(&str, Ms) + 'a;

pub(crate) struct CloseRequest<'a> {
    pub name: String,
    pub deadline_secs: u64,
    pub dry_run: bool,
    pub recover: bool,
    /// Progress lines on stderr while waiting (off with `--json`).
    pub progress: bool,
    /// Told each stage as the run reaches it (the sidebar shows it on the row).
    pub on_stage: Option<&'a dyn Fn(&str)>,
    /// Told the job id and its deadline once the job is recorded (durable intent in config),
    /// before the worker is asked: the coordinator's tool answers with them at once.
    pub on_job: Option<&'a JobTold<'a>>,
    pub scan: &'a ScanOptions,
    pub clock: &'a dyn Clock,
    /// The seat a board showed (`--expect-seat`): refused unless the registered pi is it.
    pub expect: Option<crate::hosts::expect::SeatExpect>,
    /// Who asked (the worker's timeline says).
    pub by: crate::evidence::sessions::timeline::Actor,
}

exit_enum! {
    /// How a run of close-worker ends: its exit code, one place.
    CloseExit {
        /// Closed, a dry run that passed, or a fence recovered.
        Closed = 0,
        /// The job ended failed, timed out or uncertain (or a dry run's verification failed).
        NotClosed = 1,
        /// Refused before anything was asked.
        Refused = 2,
        /// A close job is running, was interrupted or is uncertain.
        Fenced = 5,
        /// The worker has no reply path (no live registration) to ask for the handoff.
        NoReplyPath = 6,
        /// `--expect-seat`: the worker is not the seat the board showed (another pi, pane or
        /// session); nothing was asked or closed.
        SeatChanged = 14,
    } refused: Refused
}

/// How a run ended: its exit and the JSON report.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Ending {
    pub exit: CloseExit,
    /// Boxed: an `Ending` is the error of every check.
    pub report: Box<CloseReport>,
}

fn refused(exit: CloseExit, msg: impl Into<String>) -> Ending {
    Ending {
        exit,
        report: Box::new(CloseReport::Refused {
            refused: msg.into(),
        }),
    }
}

/// Move the worker's close job `job` to `state` (with an optional reason), if the stage rule
/// allows it from the stage config holds now (or from one step short of it: a step of the run's
/// own that a lockless writer undid, `stage::advance_own`).
fn set_state(
    root: &Path,
    agent: &Agent,
    job: &str,
    state: CloseState,
    reason: Option<CloseReason>,
    now: Ms,
) -> Result<(), WriteError<JobConflict>> {
    let at = format_iso(now);
    config_write::update_agent(root, &agent.session_id, &|a| {
        let j = stage::this_job(a, job)?;
        stage::advance_own(j, state, &at, reason).map_err(JobConflict::Step)
    })
    .map(|_| ())
}

/// `requested` → `awaiting_handoff`, and only from `requested`: a quick worker may already have
/// saved its handoff (moving the job to `awaiting_settlement`) before this write runs, and
/// overwriting that would wait for a handoff that has already come.
fn mark_awaiting_handoff(
    root: &Path,
    agent: &Agent,
    job: &str,
    now: Ms,
) -> Result<(), WriteError<JobConflict>> {
    let at = format_iso(now);
    config_write::update_agent(root, &agent.session_id, &|a| {
        let j = stage::this_job(a, job)?;
        if stage::may_follow(stage::current(Some(j)), CloseState::AwaitingHandoff) {
            stage::advance(j, CloseState::AwaitingHandoff, &at, None).map_err(JobConflict::Step)?;
        }
        Ok(())
    })
    .map(|_| ())
}

fn lock_path(root: &Path, job: &str) -> PathBuf {
    crate::paths::close_job_lock(root, job)
}

/// Where the fence of a pending or uncertain job is handled: a job still run by a live process
/// is refused; a dead run's job is marked (`interrupted`, or `uncertain` if it was closing) and
/// stays fenced; `--recover` re-checks what is left of it and clears the fence. Nothing is
/// ever replayed. `None` when there is no fence and a close may start.
fn fence(req: &CloseRequest, root: &Path, agent: &Agent) -> Option<Ending> {
    let Some(j) = agent.close_job.as_ref().filter(|j| j.state.is_fenced()) else {
        return req.recover.then(|| Ending {
            exit: CloseExit::Closed,
            report: Box::new(CloseReport::NothingToRecover(NothingToRecover {
                worker: agent.name.clone(),
                fenced: false,
                job: agent.close_job.as_ref().map(|j| JobSeen {
                    job_id: j.job_id.clone(),
                    state: j.state,
                }),
                note: "nothing to recover; no close was started",
            })),
        });
    };
    let now = req.clock.now_ms();
    let lock = lock_path(root, &j.job_id);
    if j.state.is_pending() && store::is_held(&lock) {
        return Some(refused(
            CloseExit::Fenced,
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
            CloseExit::Fenced,
            format!(
                "close job {} is uncertain: inspect the pane, then --recover",
                j.job_id
            ),
        ));
    };
    let reason = if next == CloseState::Uncertain {
        CloseReason::CloseUnverified
    } else {
        CloseReason::Interrupted
    };
    let found = req.recover.then(|| recheck(root, &j.job_id));
    let mut recorded = false;
    if !req.dry_run {
        let _ = store::remove_file(&lock);
        if let Err(e) = set_state(root, agent, &j.job_id, next, Some(reason), now) {
            return Some(refused(CloseExit::Refused, e.to_string()));
        }
        recorded = true;
    }
    Some(Ending {
        exit: if req.recover {
            CloseExit::Closed
        } else {
            CloseExit::Fenced
        },
        report: Box::new(CloseReport::Fence(FenceHandled {
            job_id: j.job_id.clone(),
            was: j.state,
            now: next,
            found,
            recorded,
            note: "nothing was replayed or closed",
        })),
    })
}

/// What is left of a fenced job's worker, for the person recovering it: its pane and its pi.
fn recheck(root: &Path, job: &str) -> Found {
    let Ok(r) = record::read(root, job) else {
        return Found::NoRecord {
            job_record: "missing or unreadable",
        };
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
    Found::Left {
        pane: r.pane_id,
        pane_state: pane,
        pi_pid: r.pi.pid,
        pi_state: pi,
    }
}

/// The worker a close names, from the roster: never the coordinator; the deadline in range.
fn find_worker(req: &CloseRequest) -> Result<(PathBuf, IntercomConfig, Agent), Ending> {
    let root = match &req.scan.root {
        scan::RootChoice::Exact(r) => Some(r.clone()),
        scan::RootChoice::Discover(start) => config::discover_root(start).ok().flatten(),
        scan::RootChoice::Skip => None,
    };
    let Some(root) = root else {
        return Err(refused(
            CloseExit::Refused,
            format!(
                "nothing to close: {}",
                crate::actions::no_roster_at(&req.scan.root)
            ),
        ));
    };
    let cfg = config::load(&root).map_err(|e| refused(CloseExit::Refused, e.to_string()))?;
    let Some(agent) = cfg.find_by_name(&req.name).cloned() else {
        return Err(refused(
            CloseExit::Refused,
            format!(
                "no agent named {:?} in config",
                crate::text::sanitize(&req.name)
            ),
        ));
    };
    if agent.coordinator {
        return Err(refused(
            CloseExit::Refused,
            "the coordinator is never closed by close-worker",
        ));
    }
    if !(1..=MAX_DEADLINE_SECS).contains(&req.deadline_secs) {
        return Err(refused(
            CloseExit::Refused,
            format!("--deadline-secs must be 1..{MAX_DEADLINE_SECS}"),
        ));
    }
    Ok((root, cfg, agent))
}

/// The worker's recorded identity, refused when it is a protected target: from names and
/// processes only, before anything is written or sent.
fn protected_check(
    req: &CloseRequest,
    root: &Path,
    cfg: &IntercomConfig,
    agent: &Agent,
) -> Result<(JobRecord, Guard, PathBuf), Ending> {
    if cfg
        .workers()
        .filter(|a| a.close_job.as_ref().is_some_and(|j| j.state.is_pending()))
        .count()
        >= MAX_PENDING_JOBS
    {
        return Err(refused(
            CloseExit::Refused,
            format!("{MAX_PENDING_JOBS} close jobs are already pending"),
        ));
    }
    let regs = registrations::read_all(Some(root), &req.scan.data_root);
    let folder = root.join(&agent.project_directory);
    let reg = regs.of_seat(&agent.session_id, None, Some(&folder));
    // The roster's own record too must be of a pi in the worker's folder: never another's pane.
    if let Some(Err(why)) = reg.map(|r| r.matches_seat(None, Some(&folder))) {
        return Err(refused(CloseExit::Refused, why.to_string()));
    }
    let Some((mut target, path)) =
        reg.and_then(|r| Some((record::from_registration(r)?, r.path.clone())))
    else {
        return Err(refused(
            CloseExit::NoReplyPath,
            "the worker has no registration recording its pane and pi: no registered seat to ask",
        ));
    };
    record::follow(&mut target);
    let guard = Guard::gather(cfg, &regs);
    guard
        .check(&target)
        .map_err(|e| refused(CloseExit::Refused, e.to_string()))?;
    Ok((target, guard, path))
}

/// Record the job: its lock (held by this run), then the worker's identity (`handoff` accepts
/// only it), then the durable intent in config. Returns the lock, the job id and its deadline.
fn start_job(
    req: &CloseRequest,
    root: &Path,
    agent: &Agent,
    target: &JobRecord,
) -> Result<(store::Lock, String, Ms), Ending> {
    let not_recorded = |e: &dyn std::fmt::Display| {
        refused(CloseExit::Refused, format!("close job not recorded: {e}"))
    };
    // The job's lock exists before its record does: a run that sees a pending job without a live
    // lock holder may then rightly take it for a dead run's, never for one starting right now.
    let now = req.clock.now_ms();
    let job_id = uuid::Uuid::new_v4().to_string();
    store::ensure_dir(root, &crate::paths::jobs_dir(root)).map_err(|e| not_recorded(&e))?;
    let lock = store::Lock::acquire(&lock_path(root, &job_id)).map_err(|e| not_recorded(&e))?;
    record::write(root, &job_id, target, now).map_err(|e| not_recorded(&e))?;
    // Durable intent before any mutation.
    let deadline_at = now + req.deadline_secs as i64 * 1000;
    let (jid, at, dl) = (job_id.clone(), format_iso(now), format_iso(deadline_at));
    let intent = config_write::update_agent(root, &agent.session_id, &|a| {
        // Checked again under the config lock: two runs started together must not both ask.
        let current = stage::current(a.get("closeJob").and_then(Value::as_object));
        if !stage::may_follow(current, CloseState::Requested) {
            return Err(JobConflict::AnotherStarted);
        }
        let job = crate::evidence::config::NewCloseJob {
            job_id: &jid,
            state: CloseState::Requested.as_str(),
            created_at: &at,
            updated_at: &at,
            deadline_at: &dl,
        };
        a.insert(
            "closeJob".into(),
            serde_json::to_value(job).unwrap_or_default(),
        );
        Ok(())
    });
    if let Err(e) = intent {
        let _ = store::remove_file(&record::path(root, &job_id));
        return Err(not_recorded(&e));
    }
    Ok((lock, job_id, deadline_at))
}

pub(crate) fn close_worker(req: &CloseRequest) -> Ending {
    match close_worker_steps(req) {
        Ok(end) | Err(end) => end,
    }
}

fn close_worker_steps(req: &CloseRequest) -> Result<Ending, Ending> {
    let (root, cfg, agent) = find_worker(req)?;
    if let Some(end) = fence(req, &root, &agent) {
        return Ok(end);
    }
    // Protected targets first, from names and processes only: nothing written or sent yet.
    let (mut target, guard, reg_path) = protected_check(req, &root, &cfg, &agent)?;
    // Compare-and-act: the pi this close would pin is the one the person saw, or nothing.
    if let Some(e) = &req.expect {
        let found = crate::hosts::expect::SeatFound {
            session_id: Some(agent.session_id.clone()),
            pi: Some((
                target.pi.pid,
                target.pi.start_ticks,
                target.pi.boot_id.clone(),
            )),
            pane: Some(target.pane_id.clone()),
        };
        e.check(&found)
            .map_err(|why| refused(CloseExit::SeatChanged, why.to_string()))?;
    }
    // The request travels on the reply path: without a live registration nothing starts.
    let pass = scan::run(req.scan, req.clock, None, None)
        .map_err(|e| refused(CloseExit::Refused, e.to_string()))?;
    let key = String::from(SeatKey::new(&scan::base_name(&root), &agent.name));
    if let Err(r) = reply::resolve(&pass, &key) {
        return Err(refused(CloseExit::NoReplyPath, r.to_string()));
    }
    // The board's reply path holds only a registration that agrees with the session file and
    // folder it found for the worker: the close targets that very record, or nothing.
    let boards = pass
        .records
        .iter()
        .find(|r| r.key() == key)
        .and_then(|r| r.registered.as_ref())
        .map(|v| PathBuf::from(&v.path));
    if boards.as_deref() != Some(reg_path.as_path()) {
        return Err(refused(
            CloseExit::Refused,
            "the board found another registration for the worker than the one to close",
        ));
    }
    // The registered pi must be in the registered pane now, verified from the outside.
    let verified = verify(&target, &agent.session_id, &guard);
    if req.dry_run {
        return Ok(dry_run(&pass, &key, &agent, verified.map(|_| ())));
    }
    match verified {
        // The pane incarnation the pi was verified in is part of the recorded identity.
        Ok(v) => {
            target.pane_pid = v.pane.pid;
            target.terminal_id = v.pane.terminal_id;
        }
        Err(e) => return Err(refused(CloseExit::Refused, format!("not closing: {e}"))),
    }
    let (_lock, job_id, deadline_at) = start_job(req, &root, &agent, &target)?;
    if let Some(told) = req.on_job {
        told(&job_id, deadline_at);
    }
    let end = job::run(&job::Job {
        req,
        root: &root,
        agent: &agent,
        id: &job_id,
        deadline_at,
        pass: &pass,
        key: &key,
        guard: &guard,
        record: &target,
    });
    record_close(req, &root, &agent.session_id, &end);
    Ok(end)
}

/// The close as the worker's timeline keeps it, with where its handoff went (the roster entry,
/// read again now that the job ended).
fn record_close(req: &CloseRequest, root: &Path, session_id: &str, end: &Ending) {
    let cfg = config::load(root).ok();
    let handoff = cfg
        .as_ref()
        .and_then(|c| c.agents.iter().find(|a| a.session_id == session_id))
        .and_then(|a| a.handoff.as_ref());
    let roster = crate::paths::config_file(root);
    crate::actions::worker_events::closed(
        &req.scan.data_root,
        req.clock.now_ms(),
        req.by,
        session_id,
        handoff.map(|h| (roster.as_path(), h)),
        &end.report,
    );
}

/// Every check a close would make before asking for the handoff, including the outside identity
/// verification against the worker's registration; nothing is written or sent.
fn dry_run(
    pass: &scan::Scan,
    key: &str,
    agent: &Agent,
    identity: Result<(), VerifyError>,
) -> Ending {
    let Ok((_, target)) = reply::resolve(pass, key) else {
        return refused(CloseExit::NoReplyPath, "no reply path");
    };
    let rec = pass.records.iter().find(|r| r.key() == key);
    let verdict = DryRunVerdict {
        worker: agent.name.clone(),
        session_id: agent.session_id.clone(),
        pane: target.target.clone(),
        multiplexer: target.kind,
        socket: target.socket.clone(),
        registration_alive: rec
            .and_then(|r| r.registered.as_ref())
            .and_then(|r| r.alive),
        board_state: rec.map(|r| r.state.as_str()),
        identity: match &identity {
            Ok(()) => "verified".to_string(),
            Err(e) => crate::text::sanitize(&e.to_string()),
        },
        would_ask: "intercom-pane handoff --job <new job id> --summary ...",
        mutated: false,
    };
    Ending {
        exit: if identity.is_ok() {
            CloseExit::Closed
        } else {
            CloseExit::NotClosed
        },
        report: Box::new(CloseReport::DryRun(verdict)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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

    #[test]
    fn a_stage_write_the_rule_refuses_leaves_config_byte_identical() {
        let dir = root_with_job("closed");
        let agent = config::load(dir.path())
            .unwrap()
            .find_by_session("w")
            .cloned()
            .unwrap();
        let path = crate::paths::config_file(dir.path());
        let before = std::fs::read(&path).unwrap();
        for illegal in [
            CloseState::Closing,
            CloseState::Failed,
            CloseState::Uncertain,
        ] {
            let e = set_state(dir.path(), &agent, "j1", illegal, None, 1_000).unwrap_err();
            assert!(
                matches!(e, WriteError::Refused(JobConflict::Step(_))),
                "{illegal:?}: {e}"
            );
            assert_eq!(std::fs::read(&path).unwrap(), before, "{illegal:?}");
        }
        let dir = root_with_job("closing");
        set_state(
            dir.path(),
            &agent,
            "j1",
            CloseState::Uncertain,
            Some(CloseReason::CloseUnverified),
            1_000,
        )
        .unwrap();
        assert_eq!(job_state(dir.path()), "uncertain");
    }
}
