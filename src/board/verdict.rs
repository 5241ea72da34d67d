//! A seat's state, why, and where that came from: every state rule in order, as one pure
//! function of the few facts the scan joined for the seat (`SeatFacts`).

use crate::board::classify::{self, Classification};
use crate::board::pi_rules;
use crate::board::reason::{StateReason, StateSource};
use crate::clock::Ms;
use crate::evidence::registrations::{PiReport, RunEvent, RunRecord, RunState};
use crate::evidence::sessions::SessionSummary;
use crate::mux::Liveness;
use crate::states::BoardState;

/// How long after a marked failure a still-running turn (registration run state) is trusted to be
/// pi's recovery: covers custom backoffs and slow summaries; past it the file's own rule decides
/// again (a pi without `agent_settled` never reports the end of a run).
const RECOVERY_TRUST_MS: Ms = 5 * 60 * 1000;

/// What the state rules read of one seat, as the scan joined it.
pub(crate) struct SeatFacts<'a> {
    /// The seat's session file, when it was read.
    pub session: Option<&'a SessionSummary>,
    /// The session was read with its branch ending at the leaf pi's `/tree` moved to.
    pub at_leaf: bool,
    /// A session file exists but cannot be used (refused, unreadable, another session's).
    pub unusable: Option<StateReason>,
    /// Whether the seat's pane runs pi, and why and whence when it does not.
    pub liveness: Liveness,
    pub liveness_reason: StateReason,
    pub liveness_source: &'a StateSource,
    /// The run state of the seat's registration, unless that registration is known stale.
    pub run: Option<&'a RunRecord>,
    /// The registration is verifiably live and pi recorded the end of this session
    /// (`session_shutdown`).
    pub session_closed: bool,
    /// The seat's pane runs another seat's session (and why that is known).
    pub pane_runs_other_session: Option<StateSource>,
    /// What pi told its extension (the registration's `pi` section), only when that
    /// registration is verifiably live: evidence from a dead pi never counts.
    pub pi: Option<&'a PiReport>,
}

/// A seat's state, why, and where that came from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Verdict {
    pub state: BoardState,
    pub reason: StateReason,
    pub source: StateSource,
    /// When the evidence that decided happened (the deciding entry, the run state's event,
    /// pi's report), when it has a time; the age every view shows beside the source.
    pub at: Option<Ms>,
    /// A dialog's title when pi waits on one (`dialog`): the seat's question.
    pub question: Option<String>,
    /// pi's own error text for an error it reported (`compaction_failed`): the seat's error.
    pub error: Option<String>,
}

/// The state rules in order: the session file, then what makes it unusable, then the
/// registration's run state, then what pi told its extension (`board::pi_rules`, its own
/// precedence), then liveness (which wins when the seat is not alive), then a pane that runs
/// another seat's session.
pub(crate) fn verdict(f: &SeatFacts, now: Ms) -> Verdict {
    let classification: Option<Classification> = f.session.map(|s| classify::classify(s, now));
    let mut v = Verdict {
        state: classify::board_state(f.liveness, classification.as_ref()),
        reason: classification.map_or(StateReason::NoSessionFile, |c| c.reason),
        source: match (f.session, f.at_leaf, f.unusable) {
            (None, _, None) => StateSource::NoSessionFile,
            (Some(_), true, _) => StateSource::SessionFileAtTreeLeaf,
            _ => StateSource::SessionFile,
        },
        at: f.session.and_then(|s| s.last_activity),
        question: None,
        error: None,
    };
    let shown = !matches!(v.state, BoardState::Offline | BoardState::Unknown);
    // A session file that exists but cannot be used says nothing: unknown, never idle.
    if let (Some(code), true) = (f.unusable, shown) {
        v.state = BoardState::Unknown;
        v.reason = code;
    }
    // The newest lines are damaged (a zero-filled tail, a cut or garbage line): what they would
    // decide is not known, and damage must never make a seat look calm.
    if let (Some(d), true) = (f.session.and_then(|s| s.tail_damage), shown) {
        v.state = BoardState::Unknown;
        v.reason = StateReason::SessionTail(d);
    }
    let alive = f.liveness == Liveness::Alive;
    // pi recorded the end of this session (`session_shutdown`) and its process still runs: it
    // moved to another session (`/new`, `/resume`, `/fork`) or is quitting. The pane runs pi,
    // but not this seat's session.
    if alive && f.session_closed {
        v.state = BoardState::Offline;
        v.reason = StateReason::SessionClosed;
        v.source = StateSource::RegistrationRunState;
        v.at = f.run.map(|rs| rs.at);
    } else if alive {
        if let Some((st, why)) = f
            .run
            .and_then(|rs| run_state_verdict(rs, f.session, v.state, v.reason, now))
        {
            v.state = st;
            v.reason = why;
            v.source = StateSource::RegistrationRunState;
            v.at = f.run.map(|rs| rs.at);
        }
        let newest = f.session.and_then(|s| s.last_activity);
        if let Some(p) = f.pi.and_then(|p| pi_rules::pi_verdict(p, f.run, newest)) {
            v.state = p.state;
            v.reason = p.reason;
            v.source = p.source;
            v.at = Some(p.at);
            v.question = p.question;
            v.error = p.error;
        }
    }
    if !alive {
        v.reason = f.liveness_reason;
        v.source = f.liveness_source.clone();
        v.at = None;
    }
    // Another seat's session runs in this seat's pane: what this seat's evidence says is not
    // what its pane shows.
    if let Some(why) = &f.pane_runs_other_session {
        if !matches!(v.state, BoardState::Offline | BoardState::Unknown) {
            v.state = BoardState::Unknown;
            v.reason = StateReason::PaneRunsOtherSession;
            v.source = why.clone();
            v.at = None;
            v.question = None;
            v.error = None;
        }
    }
    v
}

/// What a live seat's registered run state says beyond its session file, if anything.
fn run_state_verdict(
    rs: &RunRecord,
    s: Option<&SessionSummary>,
    state: BoardState,
    reason: StateReason,
    now: Ms,
) -> Option<(BoardState, StateReason)> {
    // Recorded after the newest entry: the file has not caught up with the run yet.
    let newer = s.and_then(|s| s.last_activity).is_none_or(|a| rs.at > a);
    // A turn that started before pi wrote anything is only visible in the registration.
    if rs.state == RunState::Working && newer && state != BoardState::Working {
        return Some((BoardState::Working, StateReason::TurnStarted));
    }
    // The file alone times pi's recovery by its default backoff, which custom retry settings, a
    // message typed during the wait, or a slow summary outlast. A run that started before the
    // marked failure and has not settled since is still recovering.
    if rs.state == RunState::Working && !newer && state == BoardState::Error {
        let (_, kind) = s
            .and_then(classify::recovery_marked_at)
            .filter(|(m, _)| rs.at <= *m && now - *m <= RECOVERY_TRUST_MS)?;
        return Some((BoardState::Working, kind));
    }
    // pi reports `agent_settled` only when no retry will run: a settle after the failed attempt
    // means the retry was abandoned (Escape during the backoff), so the error stands even while
    // the backoff window would still read as retrying.
    let settled = rs.event == Some(RunEvent::AgentSettled);
    if settled && newer && matches!(reason, StateReason::Retrying | StateReason::Compacting) {
        return Some((BoardState::Error, StateReason::RetryAbandoned));
    }
    None
}

/// Whether the seat's pi runs, as its record says: the pane runs pi but pi closed this session
/// reads as not running.
pub(crate) fn alive(liveness: Liveness, state: BoardState) -> Option<bool> {
    match liveness {
        Liveness::Alive if state == BoardState::Offline => Some(false),
        Liveness::Alive => Some(true),
        Liveness::Offline => Some(false),
        Liveness::Unknown => None,
    }
}

/// Whether the seat waits on the person: waiting, and its activity not marked seen.
pub(crate) fn waiting_on_you(state: BoardState, seen: bool) -> bool {
    state == BoardState::Waiting && !seen
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mux::MuxKind;

    fn facts(liveness: Liveness) -> SeatFacts<'static> {
        static SOURCE: StateSource = StateSource::Mux(MuxKind::Tmux);
        SeatFacts {
            session: None,
            at_leaf: false,
            unusable: None,
            liveness,
            liveness_reason: StateReason::PaneNotRunningPi,
            liveness_source: &SOURCE,
            run: None,
            session_closed: false,
            pane_runs_other_session: None,
            pi: None,
        }
    }

    type Said = (BoardState, StateReason, StateSource);

    fn v(state: BoardState, reason: StateReason, source: StateSource) -> Said {
        (state, reason, source)
    }

    fn key(v: Verdict) -> Said {
        (v.state, v.reason, v.source)
    }

    #[test]
    fn each_rule_in_its_order() {
        use BoardState::*;
        let now = 1_000_000;
        // A live pi that has written nothing yet is idle; a dead one reads as liveness says.
        let idle = v(Idle, StateReason::NoSessionFile, StateSource::NoSessionFile);
        assert_eq!(key(verdict(&facts(Liveness::Alive), now)), idle);
        let offline = v(
            Offline,
            StateReason::PaneNotRunningPi,
            StateSource::Mux(MuxKind::Tmux),
        );
        assert_eq!(key(verdict(&facts(Liveness::Offline), now)), offline);
        // An unusable file says nothing: unknown, never idle; not over an offline seat.
        let unusable = SeatFacts {
            unusable: Some(StateReason::SessionIdMismatch),
            ..facts(Liveness::Alive)
        };
        let want = v(
            Unknown,
            StateReason::SessionIdMismatch,
            StateSource::SessionFile,
        );
        assert_eq!(key(verdict(&unusable, now)), want);
        let off = SeatFacts {
            liveness: Liveness::Offline,
            ..unusable
        };
        assert_eq!(key(verdict(&off, now)), offline);
        // A turn started that the file does not show yet.
        let run = RunRecord {
            state: RunState::Working,
            seq: 1,
            at: now - 10,
            event: Some(RunEvent::AgentStart),
            leaf_id: None,
        };
        let started = SeatFacts {
            run: Some(&run),
            ..facts(Liveness::Alive)
        };
        let working = v(
            Working,
            StateReason::TurnStarted,
            StateSource::RegistrationRunState,
        );
        assert_eq!(key(verdict(&started, now)), working);
        // pi closed this session: offline, above the run state.
        let closed = SeatFacts {
            session_closed: true,
            ..started
        };
        let moved = v(
            Offline,
            StateReason::SessionClosed,
            StateSource::RegistrationRunState,
        );
        assert_eq!(key(verdict(&closed, now)), moved);
        // Another seat's session in this seat's pane: unknown, but never over offline.
        let why = StateSource::NoRegistration;
        let other = SeatFacts {
            pane_runs_other_session: Some(why.clone()),
            ..facts(Liveness::Alive)
        };
        let want = v(Unknown, StateReason::PaneRunsOtherSession, why.clone());
        assert_eq!(key(verdict(&other, now)), want);
        let closed_other = SeatFacts {
            pane_runs_other_session: Some(why),
            ..closed
        };
        assert_eq!(key(verdict(&closed_other, now)), moved);
    }

    #[test]
    fn what_pi_told_its_extension_comes_after_the_run_state_and_before_liveness() {
        use crate::evidence::registrations::{Dialog, DialogKind, PiState};
        use BoardState::*;
        let now = 1_000_000;
        let pi = PiReport {
            seq: 2,
            at: now - 5,
            event: None,
            state: PiState {
                dialog: Some(Dialog {
                    kind: DialogKind::Confirm,
                    title: Some("Allow bash?".into()),
                    since: now - 5,
                }),
                ..PiState::default()
            },
        };
        let run = RunRecord {
            state: RunState::Working,
            seq: 1,
            at: now - 10,
            event: Some(RunEvent::AgentStart),
            leaf_id: None,
        };
        let asking = SeatFacts {
            run: Some(&run),
            pi: Some(&pi),
            ..facts(Liveness::Alive)
        };
        let got = verdict(&asking, now);
        assert_eq!(
            (got.state, got.reason, got.at, got.question.as_deref()),
            (
                Waiting,
                StateReason::Dialog,
                Some(now - 5),
                Some("Allow bash?")
            )
        );
        // Its pane no longer runs pi: liveness decides, whatever pi said.
        let gone = SeatFacts {
            liveness: Liveness::Offline,
            pane_runs_other_session: None,
            ..asking
        };
        assert_eq!(
            key(verdict(&gone, now)),
            v(
                Offline,
                StateReason::PaneNotRunningPi,
                StateSource::Mux(MuxKind::Tmux)
            )
        );
        // pi closed this session: offline, above pi's report.
        let closed = SeatFacts {
            session_closed: true,
            pane_runs_other_session: None,
            ..asking
        };
        assert_eq!(key(verdict(&closed, now)).1, StateReason::SessionClosed);
        // Another session in its pane: unknown, and no question.
        let other = SeatFacts {
            pane_runs_other_session: Some(StateSource::NoRegistration),
            ..asking
        };
        let got = verdict(&other, now);
        assert_eq!((got.state, got.question), (Unknown, None));
    }

    #[test]
    fn alive_and_waiting_on_you() {
        assert_eq!(alive(Liveness::Alive, BoardState::Offline), Some(false));
        assert_eq!(alive(Liveness::Alive, BoardState::Idle), Some(true));
        assert_eq!(alive(Liveness::Unknown, BoardState::Unknown), None);
        assert!(waiting_on_you(BoardState::Waiting, false));
        assert!(!waiting_on_you(BoardState::Waiting, true));
        assert!(!waiting_on_you(BoardState::Unknown, false));
    }
}
