//! One close job after its intent is recorded: ask for the handoff, wait for it and for the turn
//! to settle, verify from the outside, pin the pi, record `closing`, then the single close.
//!
//! The close itself (why this order): the pinned pi is frozen (SIGSTOP through its pidfd), so it
//! can neither exit on its own nor `exec` another program; only then are the pane and the pi
//! checked once more and the pane closed by tmux's compare-and-kill on the recorded shell and
//! server incarnation; the pi is ended through the pin afterwards. A pi that is gone or changed
//! at any point before the freeze stops the run with nothing closed; a pane that changed after
//! it is refused by the compare-and-kill, and the pi is let go again.

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::guard::Guard;
use super::pin::{Ended, Pin};
use super::progress::Progress;
use super::record::JobRecord;
use super::stage::JobConflict;
use super::verify::{evidence, matches_registration, settled, verify, SettledEvidence, Verified};
use super::{
    mark_awaiting_handoff, refused, set_state, CloseExit, CloseRequest, Ending, POLL, STEP_DEADLINE,
};
use crate::actions::config_write::WriteError;
use crate::actions::reply;
use crate::clock::Ms;
use crate::evidence::config::{self, Agent, CloseReason};
use crate::evidence::{registrations, sessions};
use crate::mux::{self, CloseOutcome, ErrorCode, PaneIdentity};
use crate::owned::close_report::{CloseReport, Closed, ClosedPi, JobEnded};
use crate::proc;
use crate::scan;
use crate::states::CloseState;

pub(super) struct Job<'a> {
    pub(super) req: &'a CloseRequest<'a>,
    pub(super) root: &'a Path,
    pub(super) agent: &'a Agent,
    pub(super) id: &'a str,
    pub(super) deadline_at: Ms,
    pub(super) pass: &'a scan::Scan,
    pub(super) key: &'a str,
    pub(super) guard: &'a Guard,
    pub(super) record: &'a JobRecord,
}

impl Job<'_> {
    fn end(&self, state: CloseState, reason: Option<CloseReason>, detail: &str) -> Ending {
        self.end_with(state, reason, detail, None)
    }

    fn end_with(
        &self,
        state: CloseState,
        reason: Option<CloseReason>,
        detail: &str,
        closed: Option<Closed>,
    ) -> Ending {
        let saved = set_state(self.root, self.agent, self.id, state, reason, self.now());
        Ending {
            exit: if state == CloseState::Closed {
                CloseExit::Closed
            } else {
                CloseExit::NotClosed
            },
            report: Box::new(CloseReport::Ended(JobEnded {
                job_id: self.id.to_string(),
                worker: self.agent.name.clone(),
                state,
                reason,
                detail: crate::text::sanitize(detail),
                recorded: saved.is_ok(),
                closed,
            })),
        }
    }

    /// Ended `failed` with `reason`, for an error that says why.
    fn failed(&self, reason: CloseReason, e: &dyn std::fmt::Display) -> Ending {
        self.end(CloseState::Failed, Some(reason), &e.to_string())
    }

    /// Ended `timed_out`, `detail` saying what was still awaited.
    fn timed_out(&self, detail: &str) -> Ending {
        self.end(CloseState::TimedOut, Some(CloseReason::Timeout), detail)
    }

    /// Ended `interrupted`: a quit signal (Ctrl-C) stopped the wait; nothing was closed, and the
    /// job is recorded as over, so the next close starts afresh instead of meeting a fence.
    fn stopped(&self, while_: &str) -> Ending {
        self.end(
            CloseState::Interrupted,
            Some(CloseReason::Interrupted),
            &format!("stopped while {while_}; nothing was closed"),
        )
    }

    /// Ended `uncertain`: the close was attempted and its result is not known to be complete.
    fn uncertain(&self, detail: &str, closed: Option<Closed>) -> Ending {
        self.end_with(
            CloseState::Uncertain,
            Some(CloseReason::CloseUnverified),
            detail,
            closed,
        )
    }

    fn now(&self) -> Ms {
        self.req.clock.now_ms()
    }

    fn past_deadline(&self) -> bool {
        self.now() >= self.deadline_at
    }

    /// The recorded pi no longer runs (exited, or its pid names another process): no handoff
    /// can come from it and it cannot be pinned, so waiting out the deadline would tell nothing.
    fn pi_gone(&self) -> Ending {
        self.end(
            CloseState::Failed,
            Some(CloseReason::IdentityFailed),
            "the worker's pi exited while this run waited; nothing closed",
        )
    }

    fn pi_runs(&self) -> bool {
        crate::proc::identity(self.record.pi.pid).as_ref() == Some(&self.record.pi)
    }

    fn set(&self, state: CloseState) -> Result<(), WriteError<JobConflict>> {
        set_state(self.root, self.agent, self.id, state, None, self.now())
    }
}

pub(super) fn run(j: &Job) -> Ending {
    let mut progress = Progress::new(j.req.progress, j.req.on_stage);
    let end = match run_stages(j, &mut progress) {
        Ok(end) | Err(end) => end,
    };
    progress.done();
    end
}

/// The stages in order; each returns the run's ending when it stops the run.
fn run_stages(j: &Job, progress: &mut Progress) -> Result<Ending, Ending> {
    let asked = ask(j)?;
    progress.note(&format!(
        "asked {} ({asked}) to save its handoff: its model must run `intercom-pane handoff --job {}`; waiting up to {} s (Ctrl-C stops waiting, nothing is closed)",
        crate::text::sanitize(&j.agent.name),
        j.id,
        (j.deadline_at - j.now()).max(0) / 1000
    ));
    let handoff_at = await_handoff(j, progress)?;
    progress.note(&format!(
        "{} saved its handoff; waiting for its turn to end",
        crate::text::sanitize(&j.agent.name)
    ));
    let file = session_file(j)?;
    await_settlement(j, progress, &file, handoff_at)?;
    progress.tick("verifying", j.now(), j.deadline_at);
    let (v, pin, settled_evidence) = verify_and_pin(j, &file)?;
    progress.tick("closing", j.now(), j.deadline_at);
    Ok(close_pinned(j, &pin, &v, &file, &settled_evidence))
}

/// Ask the worker, on its reply path, to save its handoff; the job then awaits it. Returns how
/// the request went (`delivered through channel`, `queued behind its running turn …`).
fn ask(j: &Job) -> Result<String, Ending> {
    let job = j.id;
    let ask = format!(
        "Intercom close requested (job {job}): save your public handoff now by running `intercom-pane handoff --job {job} --summary \"<what you did, what is left>\"`, then finish your turn."
    );
    use crate::mux::pi_channel::Outcome;
    let how = match reply::send(
        j.pass,
        j.key,
        &ask,
        j.now(),
        crate::evidence::sessions::timeline::Sender::CloseWorker,
    ) {
        // Unconfirmed: the request may have arrived (never resent); the handoff itself, or the
        // deadline, decides.
        Ok(r) if r.delivered || r.outcome == Outcome::Unconfirmed => {
            let via = r.transport.name();
            match r.outcome {
                Outcome::Queued => {
                    format!("queued through {via}: it is busy, so the request waits for its turn to end")
                }
                Outcome::Unconfirmed => format!("sent through {via}, not confirmed"),
                _ => format!("delivered through {via}"),
            }
        }
        Ok(r) => {
            return Err(j.end(
                CloseState::Failed,
                Some(CloseReason::DeliveryFailed),
                &r.stderr,
            ))
        }
        Err(e) => return Err(j.failed(CloseReason::DeliveryFailed, &e)),
    };
    mark_awaiting_handoff(j.root, j.agent, job, j.now())
        .map_err(|e| j.failed(CloseReason::SaveFailed, &e))?;
    Ok(how)
}

/// Wait for the handoff (the worker's `handoff` moves the job to awaiting_settlement); its time.
fn await_handoff(j: &Job, progress: &mut Progress) -> Result<Ms, Ending> {
    loop {
        if j.past_deadline() {
            return Err(j.timed_out("no handoff before the deadline"));
        }
        if crate::signals::stop_requested() {
            return Err(j.stopped("waiting for the handoff"));
        }
        progress.tick("awaiting handoff", j.now(), j.deadline_at);
        if !j.pi_runs() {
            return Err(j.pi_gone());
        }
        if let Ok(c) = config::load(j.root) {
            if let Some(a) = c.find_by_session(&j.agent.session_id) {
                let state = a
                    .close_job
                    .as_ref()
                    .filter(|cj| cj.job_id == j.id)
                    .map(|cj| cj.state);
                match (state, &a.handoff) {
                    (Some(CloseState::AwaitingSettlement), Some(h)) if h.job_id == j.id => {
                        return Ok(h.updated_at)
                    }
                    (Some(CloseState::AwaitingHandoff | CloseState::Requested), _) => {}
                    _ => {
                        return Err(refused(
                            CloseExit::NotClosed,
                            "the close job changed under this run; stopped",
                        ))
                    }
                }
            }
        }
        std::thread::sleep(POLL);
    }
}

/// The worker's own session file: from its registration, else found by its session id.
fn session_file(j: &Job) -> Result<PathBuf, Ending> {
    j.record
        .session_file
        .clone()
        .or_else(|| {
            sessions::index_sessions(&j.req.scan.session_dirs)
                .find(&j.agent.session_id)
                .map(Path::to_path_buf)
        })
        .ok_or_else(|| {
            j.end(
                CloseState::Failed,
                Some(CloseReason::IdentityFailed),
                "no session file to watch",
            )
        })
}

/// Wait for the turn to settle after the handoff.
fn await_settlement(
    j: &Job,
    progress: &mut Progress,
    file: &Path,
    handoff_at: Ms,
) -> Result<(), Ending> {
    loop {
        if j.past_deadline() {
            return Err(j.timed_out("the turn did not settle before the deadline"));
        }
        if crate::signals::stop_requested() {
            return Err(j.stopped("waiting for the turn to end after the handoff"));
        }
        progress.tick("awaiting settlement", j.now(), j.deadline_at);
        if !j.pi_runs() {
            return Err(j.pi_gone());
        }
        if settled(
            j.root,
            j.agent,
            &j.req.scan.data_root,
            file,
            handoff_at,
            j.now(),
        ) {
            return Ok(());
        }
        std::thread::sleep(POLL);
    }
}

/// The settled evidence, `ready`, the outside verification, the pin, `closing`.
fn verify_and_pin(j: &Job, file: &Path) -> Result<(Verified, Pin, SettledEvidence), Ending> {
    let Some(settled_evidence) = evidence(file) else {
        return Err(j.end(
            CloseState::Failed,
            Some(CloseReason::WorkerBusy),
            "session file unreadable",
        ));
    };
    j.set(CloseState::Ready)
        .map_err(|e| j.failed(CloseReason::SaveFailed, &e))?;
    let regs = registrations::read_all(Some(j.root), &j.req.scan.data_root);
    matches_registration(j.record, regs.by_session_id(&j.agent.session_id))
        .map_err(|e| j.failed(CloseReason::IdentityFailed, &e))?;
    let v = verify(j.record, &j.agent.session_id, j.guard)
        .map_err(|e| j.failed(CloseReason::IdentityFailed, &e))?;
    // Pinned once verified: from here on the pi is this one process incarnation or nothing.
    let pin = Pin::open(&j.record.pi).map_err(|e| j.failed(CloseReason::IdentityFailed, &e))?;
    j.set(CloseState::Closing)
        .map_err(|e| j.failed(CloseReason::SaveFailed, &e))?;
    if j.past_deadline() {
        return Err(j.timed_out("the deadline passed before the close"));
    }
    Ok((v, pin, settled_evidence))
}

/// What was closed, for the report.
fn what(j: &Job, pin: &Pin, v: &Verified, ended: Option<Ended>) -> Closed {
    Closed {
        pane: v.pane.id.clone(),
        pane_shell_pid: v.pane.pid,
        session: v.pane.session_id.clone(),
        window: v.pane.window_id.clone(),
        socket: j.record.socket.display().to_string(),
        server: v.server.clone(),
        pi: ClosedPi {
            pid: pin.id.pid,
            start_ticks: pin.id.start_ticks,
        },
        pi_ended_by: ended.map(Ended::as_str),
    }
}

/// The single close, in the order that leaves no window for the layout at hand.
///
/// The pi is the pane's own process: nothing else can ever run in that pane under the same pane
/// pid (a respawned pane has a new one, which the compare-and-kill refuses), so the pi is ended
/// through the pin first and the pane, if tmux keeps it, is closed after. (tmux resumes a
/// stopped pane process at once, so it could not be frozen anyway.)
///
/// The pi runs under the pane's shell: the shell could start another program the moment the pi
/// exits, so the pi is frozen first (SIGSTOP through the pin), checked once more, the pane is
/// closed by the compare-and-kill on the recorded shell and server, and only then is the pi ended.
fn close_pinned(
    j: &Job,
    pin: &Pin,
    v: &Verified,
    file: &Path,
    settled_evidence: &SettledEvidence,
) -> Ending {
    let own_process = v.pane.pid == Some(pin.id.pid);
    let refuse = |reason: CloseReason, detail: String| {
        j.end(
            CloseState::Failed,
            Some(reason),
            &format!("{detail}; nothing was closed"),
        )
    };
    if let Err(e) = pin.still_same() {
        return refuse(CloseReason::IdentityFailed, e.to_string());
    }
    if !own_process {
        if let Err(e) = pin.freeze() {
            return refuse(CloseReason::IdentityFailed, e.to_string());
        }
    }
    let commit = commit_check(j, pin, v, file, settled_evidence);
    let (m, expected) = match commit {
        Ok(x) => x,
        Err((reason, detail)) => {
            // Every refusal from here lets a frozen pi go again.
            if !own_process {
                pin.thaw();
            }
            return refuse(reason, detail);
        }
    };
    if own_process {
        close_own_process(j, pin, v, m.as_ref(), &expected)
    } else {
        close_under_shell(j, pin, v, m.as_ref(), &expected)
    }
}

/// Why the close was not committed: the job's reason code and the detail.
type NotCommitted = (CloseReason, String);

/// The commit condition, with the pi pinned (and frozen when under a shell): nothing moved since
/// `ready`, the pane is the recorded one and not protected, the pinned pi is still in its tree.
/// The multiplexer and the pane identity to close on; else the reason and detail of a refusal.
fn commit_check(
    j: &Job,
    pin: &Pin,
    v: &Verified,
    file: &Path,
    settled_evidence: &SettledEvidence,
) -> Result<(Box<dyn mux::Multiplexer>, PaneIdentity), NotCommitted> {
    if evidence(file).as_ref() != Some(settled_evidence) {
        return Err((
            CloseReason::WorkerChanged,
            "new activity after the turn settled".into(),
        ));
    }
    let m = mux::open(j.record.kind, &j.record.socket);
    let pane = match m.find_pane(&v.pane.id, Instant::now() + STEP_DEADLINE) {
        Ok(Some(p)) => p,
        Ok(None) => {
            return Err((
                CloseReason::IdentityFailed,
                "the worker's pane is gone".into(),
            ))
        }
        Err(e) => return Err((CloseReason::IdentityFailed, format!("pane lookup: {e}"))),
    };
    let expected = PaneIdentity::of(&v.server, &v.pane);
    if let Some(field) = expected.mismatch(&v.server, &pane) {
        return Err((
            CloseReason::CommitRejected,
            format!("the pane changed ({field} differs)"),
        ));
    }
    j.guard
        .check_pane(&pane)
        .map_err(|e| (CloseReason::IdentityFailed, e.to_string()))?;
    let shell = pane.pid.unwrap_or(0);
    if shell != pin.id.pid && !proc::is_ancestor(shell, pin.id.pid) {
        return Err((
            CloseReason::IdentityFailed,
            "the pinned pi is no longer in the pane's process tree".into(),
        ));
    }
    pin.still_same()
        .map_err(|e| (CloseReason::IdentityFailed, e.to_string()))?;
    Ok((m, expected))
}

/// Ending the pane's own process ends the pane; a pane tmux keeps (remain-on-exit) is then
/// closed only while it still holds that same, now dead, process.
fn close_own_process(
    j: &Job,
    pin: &Pin,
    v: &Verified,
    m: &dyn mux::Multiplexer,
    expected: &PaneIdentity,
) -> Ending {
    let ended = pin.end();
    if !pin.exited() {
        return j.uncertain(
            "the pinned pi did not exit; its pane was not closed",
            Some(what(j, pin, v, Some(ended))),
        );
    }
    let outcome = m.close_if_matches(expected, Instant::now() + STEP_DEADLINE);
    let left = match outcome {
        Ok(CloseOutcome::Closed | CloseOutcome::AlreadyGone) => None,
        Err(e) if e.code == ErrorCode::NoServer => None,
        Ok(CloseOutcome::Refused(why) | CloseOutcome::Unverified(why)) => Some(why),
        Err(e) => Some(e.to_string()),
    };
    let closed = Some(what(j, pin, v, Some(ended)));
    match left {
        None => j.end_with(
            CloseState::Closed,
            None,
            "the pinned pi (the pane's own process) exited and its pane is gone",
            closed,
        ),
        Some(why) => j.uncertain(&format!("the pinned pi exited; its pane: {why}"), closed),
    }
}

/// The frozen pi's pane closed by the compare-and-kill, then the pi ended through the pin.
fn close_under_shell(
    j: &Job,
    pin: &Pin,
    v: &Verified,
    m: &dyn mux::Multiplexer,
    expected: &PaneIdentity,
) -> Ending {
    match m.close_if_matches(expected, Instant::now() + STEP_DEADLINE) {
        Ok(CloseOutcome::Closed) => {
            let ended = pin.end();
            let closed = Some(what(j, pin, v, Some(ended)));
            if pin.exited() {
                j.end_with(
                    CloseState::Closed,
                    None,
                    "pane closed; the pinned pi exited",
                    closed,
                )
            } else {
                j.uncertain("the pane is gone but the pinned pi still runs", closed)
            }
        }
        Ok(CloseOutcome::Refused(why)) => {
            pin.thaw();
            j.end(
                CloseState::Failed,
                Some(CloseReason::CommitRejected),
                &format!("{why}; nothing was closed"),
            )
        }
        Ok(CloseOutcome::AlreadyGone) => {
            pin.thaw();
            j.uncertain("the pane was already gone; nothing was closed", None)
        }
        Ok(CloseOutcome::Unverified(why)) => {
            // The kill was sent: the pi is ended as well.
            let ended = pin.end();
            j.uncertain(&why, Some(what(j, pin, v, Some(ended))))
        }
        Err(e) => {
            pin.thaw();
            j.uncertain(&e.to_string(), None)
        }
    }
}
