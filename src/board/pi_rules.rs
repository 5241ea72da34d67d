//! What pi told its extension, as a board state (docs/behaviour.md §2, "What pi tells the
//! extension"): pure, time passed in. `board::verdict` asks this only for a seat whose pane runs
//! its live registered pi (evidence from a dead pi never counts), and takes its answer over the
//! session file's.
//!
//! The precedence, first match wins:
//! 1. a dialog pi waits on → `waiting` (`dialog`, its title as the seat's question);
//! 2. a compaction running → `working` (`compacting`);
//! 3. a retry waiting or running → `working` (`retrying`, the attempt in the source);
//! 4. a compaction that failed, the run over (a manual one runs outside any run) → `error`
//!    (`compaction_failed`);
//! 5. retries exhausted (the last attempt failed too) → `error` (`retries_exhausted`);
//! 6. retries the person stopped (pi settles while waiting out a backoff, reporting
//!    `aborted: false`) → `error` (`retry_abandoned`): the provider's error stands;
//! 7. a run the person stopped → `idle` (`run_aborted`), not an error (stopped right after a
//!    failed call, that error stands: `retry_abandoned`).
//!
//! Each holds only while the session file has nothing newer than the event (pi moved on and the
//! file says what to): the extension reports each change within a moment, so an open dialog or
//! a running compaction that the file has overtaken was closed and its report is still on its
//! way, or was lost. A run-ending verdict (4–7) holds only while no run started after it.

use crate::board::reason::{PiSource, StateReason, StateSource};
use crate::clock::Ms;
use crate::evidence::registrations::{
    CompactPhase, CompactReason, PiReport, RetryPhase, RunEvent, RunRecord, RunState,
};
use crate::states::BoardState;

/// A state from pi's own events.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PiVerdict {
    pub state: BoardState,
    pub reason: StateReason,
    pub source: StateSource,
    /// When pi reported what decided it.
    pub at: Ms,
    /// The dialog's title, raw (views sanitize it).
    pub question: Option<String>,
    /// A failed compaction's error as pi reported it, raw (the transcript holds none).
    pub error: Option<String>,
}

fn v(state: BoardState, reason: StateReason, source: PiSource, at: Ms) -> PiVerdict {
    PiVerdict {
        state,
        reason,
        source: StateSource::Pi(source),
        at,
        question: None,
        error: None,
    }
}

/// The verdict of `pi`'s picture, if it decides. `run`: the registration's run state;
/// `file_newest`: the time of the session file's newest entry.
pub(crate) fn pi_verdict(
    pi: &PiReport,
    run: Option<&RunRecord>,
    file_newest: Option<Ms>,
) -> Option<PiVerdict> {
    let st = &pi.state;
    // The file has nothing newer than `at`: pi wrote nothing since the event.
    let current = |at: Ms| file_newest.is_none_or(|f| f <= at);
    // No run started after `at` (a run-ending event).
    let run_over =
        |at: Ms| run.is_none_or(|r| !(r.state == RunState::Working && r.at > at)) && current(at);
    if let Some(d) = st.dialog.as_ref().filter(|d| current(d.since)) {
        let mut out = v(
            BoardState::Waiting,
            StateReason::Dialog,
            PiSource::Dialog,
            d.since,
        );
        out.question = d.title.clone();
        return Some(out);
    }
    // A prompt held for the budget: pi is idle and the next turn needs the person (a raise).
    // Held prompts never reach the session file; a run started after the hold ends it.
    if let Some(since) = st.budget.as_ref().filter(|b| b.held > 0).map(|b| b.since) {
        let at = since.unwrap_or(pi.at);
        if run.is_none_or(|r| !(r.state == RunState::Working && r.at > at)) {
            return Some(v(
                BoardState::Waiting,
                StateReason::BudgetReached,
                PiSource::Budget,
                at,
            ));
        }
    }
    if let Some(c) = st.compaction.as_ref() {
        if c.phase == CompactPhase::Running && current(c.since) {
            return Some(v(
                BoardState::Working,
                StateReason::Compacting,
                PiSource::Compaction,
                c.since,
            ));
        }
    }
    if let Some(r) = st.retry.as_ref() {
        if matches!(r.phase, RetryPhase::Waiting | RetryPhase::Running) && current(r.since) {
            return Some(v(
                BoardState::Working,
                StateReason::Retrying,
                PiSource::Retry(r.attempt),
                r.since,
            ));
        }
    }
    if let Some(c) = st.compaction.as_ref() {
        // A manual one (`/compact`, `ctx.compact()`) runs outside any run (pi stops the run
        // first): its failure is the last word at once.
        let last_word = c.reason == CompactReason::Manual || settled_after(pi, run, c.since);
        if c.phase == CompactPhase::Failed && run_over(c.since) && last_word {
            let mut out = v(
                BoardState::Error,
                StateReason::CompactionFailed,
                PiSource::Compaction,
                c.since,
            );
            out.error = c.error.clone();
            return Some(out);
        }
    }
    if let Some(r) = st.retry.as_ref() {
        let (reason, state) = match r.phase {
            RetryPhase::Exhausted => (StateReason::RetriesExhausted, BoardState::Error),
            RetryPhase::Cancelled => (StateReason::RetryAbandoned, BoardState::Error),
            _ => return aborted(pi, run, &current),
        };
        if run_over(r.since) {
            return Some(v(state, reason, PiSource::Retry(r.attempt), r.since));
        }
    }
    aborted(pi, run, &current)
}

/// A settled run the person stopped (and nothing since): idle, with its own reason; stopped
/// after its last provider call failed, that error stands (`retry_abandoned`).
fn aborted(
    pi: &PiReport,
    run: Option<&RunRecord>,
    current: &dyn Fn(Ms) -> bool,
) -> Option<PiVerdict> {
    let s = pi.state.settled.as_ref().filter(|s| s.aborted)?;
    let later_run = run.is_some_and(|r| r.state == RunState::Working && r.at > s.at);
    if later_run || !current(s.at) {
        return None;
    }
    let (state, reason) = if s.error {
        (BoardState::Error, StateReason::RetryAbandoned)
    } else {
        (BoardState::Idle, StateReason::RunAborted)
    };
    Some(v(state, reason, PiSource::Settled, s.at))
}

/// The run has settled at or after `at` (a failed compaction may be followed by more work in
/// the same run; only its end makes the failure the last word).
fn settled_after(pi: &PiReport, run: Option<&RunRecord>, at: Ms) -> bool {
    pi.state.settled.as_ref().is_some_and(|s| s.at >= at)
        || run.is_some_and(|r| r.event == Some(RunEvent::AgentSettled) && r.at >= at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::registrations::{
        CompactReason, Compaction, Dialog, DialogKind, PiState, Retry, Settled,
    };

    fn report(state: PiState) -> PiReport {
        PiReport {
            seq: 1,
            at: 0,
            event: None,
            state,
        }
    }

    fn run(state: RunState, event: RunEvent, at: Ms) -> RunRecord {
        RunRecord {
            state,
            seq: 1,
            at,
            event: Some(event),
            leaf_id: None,
        }
    }

    fn said(p: Option<PiVerdict>) -> Option<(BoardState, StateReason)> {
        p.map(|p| (p.state, p.reason))
    }

    #[test]
    fn a_dialog_waits_with_its_title_until_the_file_moves_on() {
        let pi = report(PiState {
            dialog: Some(Dialog {
                kind: DialogKind::Confirm,
                title: Some("Allow bash?".into()),
                since: 1000,
            }),
            retry: Some(Retry {
                attempt: 1,
                phase: RetryPhase::Running,
                since: 900,
                error: None,
            }),
            ..PiState::default()
        });
        let started = run(RunState::Working, RunEvent::AgentStart, 500);
        let got = pi_verdict(&pi, Some(&started), Some(800)).unwrap();
        assert_eq!(
            (got.state, got.reason),
            (BoardState::Waiting, StateReason::Dialog)
        );
        assert_eq!(got.question.as_deref(), Some("Allow bash?"));
        assert_eq!(got.source.to_string(), "pi extension: dialog");
        // pi wrote something after the dialog opened: the file decides.
        assert_eq!(said(pi_verdict(&pi, Some(&started), Some(1001))), None);
    }

    #[test]
    fn retries_compaction_and_aborts_in_their_order() {
        let working = run(RunState::Working, RunEvent::AgentStart, 100);
        let settled = run(RunState::Idle, RunEvent::AgentSettled, 2000);
        let retry = |phase| Retry {
            attempt: 2,
            phase,
            since: 1000,
            error: None,
        };
        let with_retry = |phase| {
            report(PiState {
                retry: Some(retry(phase)),
                ..PiState::default()
            })
        };
        let got = pi_verdict(&with_retry(RetryPhase::Waiting), Some(&working), Some(900)).unwrap();
        assert_eq!(
            (got.state, got.reason),
            (BoardState::Working, StateReason::Retrying)
        );
        assert_eq!(got.source.to_string(), "pi extension: retry attempt 2");
        assert_eq!(
            said(pi_verdict(
                &with_retry(RetryPhase::Exhausted),
                Some(&settled),
                Some(900)
            )),
            Some((BoardState::Error, StateReason::RetriesExhausted))
        );
        assert_eq!(
            said(pi_verdict(
                &with_retry(RetryPhase::Cancelled),
                Some(&settled),
                Some(900)
            )),
            Some((BoardState::Error, StateReason::RetryAbandoned))
        );
        // A new run after the exhausted retries: the file and run state decide.
        let again = run(RunState::Working, RunEvent::AgentStart, 3000);
        assert_eq!(
            said(pi_verdict(
                &with_retry(RetryPhase::Exhausted),
                Some(&again),
                Some(900)
            )),
            None
        );
        assert_eq!(
            said(pi_verdict(
                &with_retry(RetryPhase::Succeeded),
                Some(&settled),
                None
            )),
            None
        );

        let compaction = |phase| Compaction {
            reason: CompactReason::Threshold,
            phase,
            since: 1500,
            will_retry: false,
            error: None,
        };
        let with_compaction = |phase| {
            report(PiState {
                compaction: Some(compaction(phase)),
                retry: Some(retry(RetryPhase::Running)),
                ..PiState::default()
            })
        };
        assert_eq!(
            said(pi_verdict(
                &with_compaction(CompactPhase::Running),
                Some(&working),
                Some(900)
            )),
            Some((BoardState::Working, StateReason::Compacting)),
            "a running compaction before a running retry"
        );
        let failed = report(PiState {
            compaction: Some(compaction(CompactPhase::Failed)),
            settled: Some(Settled {
                at: 2000,
                aborted: false,
                error: false,
            }),
            ..PiState::default()
        });
        assert_eq!(
            said(pi_verdict(&failed, Some(&settled), Some(900))),
            Some((BoardState::Error, StateReason::CompactionFailed))
        );
        // Failed, but the run goes on (not settled since): not yet the last word.
        let going_on = report(PiState {
            compaction: Some(compaction(CompactPhase::Failed)),
            ..PiState::default()
        });
        assert_eq!(said(pi_verdict(&going_on, Some(&working), Some(900))), None);
        // A manual one failed: no run to settle, the failure stands at once; a run after it,
        // or an entry, ends it.
        let manual = report(PiState {
            compaction: Some(Compaction {
                reason: CompactReason::Manual,
                error: Some("Compaction failed: refused".into()),
                ..compaction(CompactPhase::Failed)
            }),
            ..PiState::default()
        });
        assert_eq!(
            said(pi_verdict(&manual, None, Some(900))),
            Some((BoardState::Error, StateReason::CompactionFailed))
        );
        assert_eq!(
            pi_verdict(&manual, None, Some(900))
                .and_then(|v| v.error)
                .as_deref(),
            Some("Compaction failed: refused"),
            "pi's error is the seat's error"
        );
        assert_eq!(said(pi_verdict(&going_on, None, Some(900))), None);
        assert_eq!(said(pi_verdict(&manual, Some(&again), Some(900))), None);
        assert_eq!(said(pi_verdict(&manual, None, Some(1600))), None);

        let stopped = report(PiState {
            settled: Some(Settled {
                at: 2000,
                aborted: true,
                error: false,
            }),
            ..PiState::default()
        });
        assert_eq!(
            said(pi_verdict(&stopped, Some(&settled), Some(1900))),
            Some((BoardState::Idle, StateReason::RunAborted))
        );
        assert_eq!(said(pi_verdict(&stopped, Some(&again), Some(1900))), None);
        assert_eq!(said(pi_verdict(&stopped, Some(&settled), Some(2500))), None);
    }
}
