//! The close job's stages (`closeJob.state` in config) and the one rule of which stage may follow
//! which (docs/behaviour.md §7). Every write of a stage — the run's own, `handoff`'s, a fence's,
//! `--recover`'s — goes through `advance`, under the config lock, so an illegal step is refused
//! instead of written.
//!
//! ```text
//! (none | closed | failed | timed_out | interrupted) → requested → awaiting_handoff
//! requested | awaiting_handoff → awaiting_settlement          (the worker's handoff)
//! awaiting_settlement → ready → closing → closed | uncertain
//! any pending → failed | timed_out | interrupted               (the run ends, or died)
//! (the run's own `ready` or `closing`, undone by a lockless writer, is written again: `advance_own`)
//! closing → uncertain                                          (a dead run's close)
//! uncertain → failed                                           (--recover, after a person looked)
//! ```

use serde_json::{Map, Value};

use crate::evidence::config::CloseReason;
use crate::states::CloseState;

/// Whether a job in stage `from` (`None`: no job yet) may move to `to`.
pub(crate) fn may_follow(from: Option<CloseState>, to: CloseState) -> bool {
    use CloseState::*;
    match to {
        Requested => !from.is_some_and(CloseState::is_fenced),
        AwaitingHandoff => from == Some(Requested),
        AwaitingSettlement => matches!(from, Some(Requested | AwaitingHandoff)),
        Ready => from == Some(AwaitingSettlement),
        Closing => from == Some(Ready),
        Closed => from == Some(Closing),
        Uncertain => from == Some(Closing),
        TimedOut | Interrupted => from.is_some_and(CloseState::is_pending),
        Failed => from.is_some_and(CloseState::is_fenced),
    }
}

/// A step the rule does not allow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct IllegalStep {
    pub from: Option<CloseState>,
    pub to: CloseState,
}

impl std::fmt::Display for IllegalStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let from = self.from.map_or("no job", CloseState::as_str);
        write!(
            f,
            "the close job cannot go from {from} to {}: it changed under this run",
            self.to.as_str()
        )
    }
}

impl std::error::Error for IllegalStep {}

/// Why a write of a close job's stage was refused under the config lock: the job is not the one
/// this run (or this handoff) is about, or not where it must be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum JobConflict {
    /// The agent entry has no `closeJob` any more.
    Gone,
    /// Its `closeJob` is another job.
    Replaced,
    /// Another close job for the worker started meanwhile (when starting one).
    AnotherStarted,
    /// The job is not in a stage this step may follow.
    Step(IllegalStep),
    /// The worker's pi that asked (a handoff) exited meanwhile.
    PiExited,
}

impl std::fmt::Display for JobConflict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JobConflict::Gone => f.write_str("the close job disappeared from config"),
            JobConflict::Replaced => f.write_str("another close job replaced this one"),
            JobConflict::AnotherStarted => {
                f.write_str("another close job for this worker started meanwhile")
            }
            JobConflict::Step(e) => e.fmt(f),
            JobConflict::PiExited => f.write_str("the worker's pi exited meanwhile"),
        }
    }
}

impl std::error::Error for JobConflict {}

/// The agent entry's `closeJob` object, if it is still job `job`.
pub(crate) fn this_job<'a>(
    agent: &'a mut Map<String, Value>,
    job: &str,
) -> Result<&'a mut Map<String, Value>, JobConflict> {
    let j = agent
        .get_mut("closeJob")
        .and_then(Value::as_object_mut)
        .ok_or(JobConflict::Gone)?;
    if j.get("jobId").and_then(Value::as_str) != Some(job) {
        return Err(JobConflict::Replaced);
    }
    Ok(j)
}

/// The stage recorded in a `closeJob` object (`None` when it names none this build knows).
pub(crate) fn current(job: Option<&Map<String, Value>>) -> Option<CloseState> {
    job.and_then(|j| j.get("state"))
        .and_then(Value::as_str)
        .and_then(CloseState::parse)
}

/// Move the `closeJob` object `job` to `to` at `at` (an ISO time), with `reason` (or none), when
/// the rule allows it; else nothing changes.
pub(crate) fn advance(
    job: &mut Map<String, Value>,
    to: CloseState,
    at: &str,
    reason: Option<CloseReason>,
) -> Result<(), IllegalStep> {
    let from = current(Some(job));
    if !may_follow(from, to) {
        return Err(IllegalStep { from, to });
    }
    job.insert("state".into(), Value::from(to.as_str()));
    job.insert("updatedAt".into(), Value::from(at));
    match reason {
        Some(r) => job.insert("reason".into(), Value::from(r.as_str())),
        None => job.remove("reason"),
    };
    Ok(())
}

/// The step of the run's own that a job at `from` lost on its way to `to`: `ready` for
/// `closing`, `closing` for `closed` or `uncertain`, when the job sits right before it.
fn lost_own_step(from: Option<CloseState>, to: CloseState) -> Option<CloseState> {
    use CloseState::*;
    let before = match to {
        Closing => Ready,
        Closed | Uncertain => Closing,
        _ => return None,
    };
    (!may_follow(from, to) && may_follow(from, before) && may_follow(Some(before), to))
        .then_some(before)
}

/// `advance`, for a run moving its own job on. A job one step short of `to` — at the stage
/// before the run's own previous step — lost that step: a writer without a lock (the Intercom
/// extension) replaced config with a copy made before it, after the write was read back. No
/// stage ever moves back, so that step is written again first, then `to`. Anything further
/// back is refused, as by `advance`.
pub(crate) fn advance_own(
    job: &mut Map<String, Value>,
    to: CloseState,
    at: &str,
    reason: Option<CloseReason>,
) -> Result<(), IllegalStep> {
    if let Some(lost) = lost_own_step(current(Some(job)), to) {
        advance(job, lost, at, None)?;
    }
    advance(job, to, at, reason)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use CloseState::*;

    #[test]
    fn the_happy_path_is_legal_and_nothing_skips_a_stage() {
        let path = [
            Requested,
            AwaitingHandoff,
            AwaitingSettlement,
            Ready,
            Closing,
            Closed,
        ];
        assert!(may_follow(None, Requested));
        for w in path.windows(2) {
            assert!(may_follow(Some(w[0]), w[1]), "{:?} → {:?}", w[0], w[1]);
        }
        // A quick worker's handoff may come before awaiting_handoff is written.
        assert!(may_follow(Some(Requested), AwaitingSettlement));
        for (i, &from) in path.iter().enumerate() {
            for &to in &path[i + 1..] {
                let next = path.get(i + 1).copied();
                let handoff_first = from == Requested && to == AwaitingSettlement;
                assert_eq!(
                    may_follow(Some(from), to),
                    Some(to) == next || handoff_first,
                    "{from:?} → {to:?}"
                );
            }
        }
    }

    #[test]
    fn a_fenced_job_blocks_a_new_one_and_ends_only_as_the_rule_says() {
        for s in CloseState::ALL {
            assert_eq!(may_follow(Some(s), Requested), !s.is_fenced(), "{s:?}");
            assert_eq!(may_follow(Some(s), TimedOut), s.is_pending(), "{s:?}");
            assert_eq!(may_follow(Some(s), Interrupted), s.is_pending(), "{s:?}");
        }
        // Only a close that was under way can end closed or uncertain.
        for s in CloseState::ALL {
            assert_eq!(may_follow(Some(s), Closed), s == Closing, "{s:?}");
            assert_eq!(may_follow(Some(s), Uncertain), s == Closing, "{s:?}");
        }
        assert!(may_follow(Some(Uncertain), Failed));
        assert!(!may_follow(Some(Closed), Failed));
        assert!(!may_follow(Some(Interrupted), Failed));
        assert!(!may_follow(None, Failed));
    }

    #[test]
    fn advance_writes_only_a_legal_step() {
        let mut j = Map::new();
        j.insert("state".into(), json!("closed"));
        j.insert("updatedAt".into(), json!("t0"));
        let before = j.clone();
        let e = advance(&mut j, Closing, "t1", None).unwrap_err();
        assert_eq!(e.from, Some(Closed));
        assert!(e.to_string().contains("from closed to closing"), "{e}");
        assert_eq!(j, before, "nothing changed");
        j.insert("state".into(), json!("closing"));
        advance(&mut j, Uncertain, "t2", Some(CloseReason::CloseUnverified)).unwrap();
        assert_eq!(j["state"], "uncertain");
        assert_eq!(j["reason"], "close_unverified");
        assert_eq!(j["updatedAt"], "t2");
        advance(&mut j, Failed, "t3", None).unwrap();
        assert!(j.get("reason").is_none());
    }

    #[test]
    fn a_run_writes_again_its_own_step_a_lockless_writer_undid_and_nothing_further_back() {
        let at = |s: &str| {
            let mut j = Map::new();
            j.insert("state".into(), json!(s));
            j
        };
        // `ready` lost: `closing` writes it again first.
        let mut j = at("awaiting_settlement");
        advance_own(&mut j, Closing, "t1", None).unwrap();
        assert_eq!(j["state"], "closing");
        // `closing` lost: `closed` and `uncertain` write it again first.
        for to in [Closed, Uncertain] {
            let mut j = at("ready");
            advance_own(&mut j, to, "t1", None).unwrap();
            assert_eq!(j["state"], to.as_str());
        }
        // Two steps back, or a step that is not the run's own (the worker's handoff): refused.
        for (from, to) in [
            ("awaiting_handoff", Closing),
            ("awaiting_settlement", Closed),
            ("awaiting_handoff", Ready),
            ("closed", Uncertain),
        ] {
            let mut j = at(from);
            let before = j.clone();
            assert!(
                advance_own(&mut j, to, "t1", None).is_err(),
                "{from} → {to:?}"
            );
            assert_eq!(j, before);
        }
    }
}
