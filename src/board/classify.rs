//! Session → board state, exactly as docs/behaviour.md §2 (the control board rules). Pure: time is
//! passed in, nothing is read here.
//!
//! The deciding entry is the newest message on the branch whose role is user, assistant or
//! toolResult (`Role::decides_turn`). A `bashExecution` (a `!` command the person ran) starts no
//! turn and never decides. System messages (pi 1.6.0), legacy custom messages and
//! bookkeeping entries (model changes, labels, compactions, context edits) never decide by
//! themselves; compactions and context edits only matter right after a failed turn.

use crate::board::overflow::is_overflow_error;
use crate::board::reason::StateReason;
use crate::clock::Ms;
use crate::evidence::sessions::question::is_input_request;
use crate::evidence::sessions::{BranchEntry, EntryKind, Role, SessionSummary, StopReason};
use crate::mux::Liveness;
use crate::states::BoardState;

/// What the seat's agent is doing, from its session file alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activity {
    /// In a turn: a user message, a tool running or just done, or a retry pending.
    Working,
    /// The completed reply asks for human input (`Input needed: ...`).
    Waiting,
    /// The last turn ended in a final error, was aborted, or was cut off.
    Error,
    /// None of the above.
    Idle,
}

impl Activity {
    /// Lower-case name as shown and serialized.
    pub fn as_str(self) -> &'static str {
        match self {
            Activity::Working => "working",
            Activity::Waiting => "waiting",
            Activity::Error => "error",
            Activity::Idle => "idle",
        }
    }
}

/// An activity and the fixed reason code that produced it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Classification {
    /// The activity.
    pub activity: Activity,
    /// One of the session-file codes: `UserMessage` through `NoMessages`.
    pub reason: StateReason,
}

/// pi's retry backoff for the n-th consecutive failure (1-based): 2 s, 4 s, 8 s.
const BACKOFF_MS: [Ms; 3] = [2_000, 4_000, 8_000];
/// Slack for the time between the failure being written and the retry starting.
const RETRY_MARGIN_MS: Ms = 3_000;
/// pi gives up after this many failures in a row; the last is final.
const MAX_ATTEMPTS: usize = 4;

fn c(activity: Activity, reason: StateReason) -> Classification {
    Classification { activity, reason }
}

fn is_decisive(e: &BranchEntry) -> bool {
    e.kind == EntryKind::Message && e.role.is_some_and(Role::decides_turn)
}

fn is_failed_turn(e: &BranchEntry) -> bool {
    e.role == Some(Role::Assistant)
        && !e.has_tool_call
        && matches!(e.stop_reason, Some(StopReason::Error | StopReason::Length))
}

/// The entry that decides the seat's state (the newest user, assistant or toolResult message on
/// the branch), if any: what names the turn a state belongs to.
pub(crate) fn deciding_entry(s: &SessionSummary) -> Option<&BranchEntry> {
    s.branch.iter().find(|e| is_decisive(e))
}

/// Classify a session summary at time `now`.
pub fn classify(s: &SessionSummary, now: Ms) -> Classification {
    // `branch` is newest first.
    let Some(pos) = s.branch.iter().position(is_decisive) else {
        return c(Activity::Idle, StateReason::NoMessages);
    };
    let d = &s.branch[pos];
    match d.role {
        Some(Role::User) => return c(Activity::Working, StateReason::UserMessage),
        Some(Role::ToolResult) => return c(Activity::Working, StateReason::ToolResult),
        _ => {}
    }
    // An assistant message. An error or abort ends the turn even if tool calls were cut off.
    match d.stop_reason {
        Some(StopReason::Aborted) => return c(Activity::Error, StateReason::Aborted),
        Some(StopReason::Error) => return failed(s, pos, now, StateReason::FinalError),
        _ => {}
    }
    if d.has_tool_call {
        return c(Activity::Working, StateReason::ToolRunning);
    }
    if d.stop_reason == Some(StopReason::Length) {
        return failed(s, pos, now, StateReason::Length);
    }
    match d.first_text_line.as_deref() {
        Some(line) if is_input_request(line) => c(Activity::Waiting, StateReason::InputNeeded),
        _ => c(Activity::Idle, StateReason::CompletedReply),
    }
}

/// The deciding entry at `pos` is a failed turn (`error` or `length`): working while pi's
/// recovery is still plausibly under way, else an error with `final_reason`.
///
/// What pi 1.6.0 writes when it recovers (checked against real runs): a `context_edit` aimed at
/// the failed entry, at once; then either the backoff wait (2 s, 4 s, 8 s) and the retry, or —
/// for a context overflow or a recoverable `length` — a summarization and a `compaction` entry,
/// then the retry. So: edit + compaction = the retry is running; edit alone = working while the
/// backoff plausibly lasts (`docs/behaviour.md` §2 and `docs/interop.md` §6: its age against the backoff;
/// a summary may run longer, which only the registration can tell, see `scan::build`); no edit
/// = final (a compaction without one is a manual `/compact`).
fn failed(s: &SessionSummary, pos: usize, now: Ms, final_reason: StateReason) -> Classification {
    let d = &s.branch[pos];
    let newer = &s.branch[..pos];
    let edit = newer
        .iter()
        .find(|e| e.kind == EntryKind::ContextEdit && d.id.is_some() && e.target_id == d.id);
    let Some(edit) = edit else {
        return c(Activity::Error, final_reason);
    };
    if newer.iter().any(|e| e.kind == EntryKind::Compaction) {
        return c(Activity::Working, StateReason::Retrying);
    }
    let Some(since) = edit.timestamp.or(d.timestamp) else {
        return c(Activity::Error, final_reason);
    };
    let attempt = consecutive_failures(s, pos);
    let backoff = match attempt.checked_sub(1).and_then(|i| BACKOFF_MS.get(i)) {
        Some(&b) if attempt < MAX_ATTEMPTS => b,
        _ => return c(Activity::Error, final_reason),
    };
    if now - since <= backoff + RETRY_MARGIN_MS {
        // Overflow and `length` recover by a summary, not a backoff wait: say which.
        c(
            Activity::Working,
            if recovers_by_summary(s, d) {
                StateReason::Compacting
            } else {
                StateReason::Retrying
            },
        )
    } else {
        c(Activity::Error, final_reason)
    }
}

fn recovers_by_summary(s: &SessionSummary, d: &BranchEntry) -> bool {
    d.stop_reason == Some(StopReason::Length)
        || s.last_error.as_deref().is_some_and(is_overflow_error)
}

/// When the newest decisive entry is a failed turn (error or length) that pi marked for recovery
/// (a `context_edit` aimed at it), the time of that mark: pi is retrying or compacting unless
/// something says it settled. Also the reason that recovery reads as (`retrying` or
/// `compacting`). `None` for anything else.
pub fn recovery_marked_at(s: &SessionSummary) -> Option<(Ms, StateReason)> {
    let pos = s.branch.iter().position(is_decisive)?;
    let d = &s.branch[pos];
    let failed = d.role == Some(Role::Assistant)
        && (d.stop_reason == Some(StopReason::Error)
            || (d.stop_reason == Some(StopReason::Length) && !d.has_tool_call));
    if !failed || d.id.is_none() {
        return None;
    }
    let edit = s.branch[..pos]
        .iter()
        .find(|e| e.kind == EntryKind::ContextEdit && e.target_id == d.id)?;
    let kind = if recovers_by_summary(s, d) {
        StateReason::Compacting
    } else {
        StateReason::Retrying
    };
    Some((edit.timestamp.or(d.timestamp)?, kind))
}

/// How many failed turns in a row end at `pos` (at least 1), counting older decisive messages.
fn consecutive_failures(s: &SessionSummary, pos: usize) -> usize {
    s.branch[pos..]
        .iter()
        .filter(|e| is_decisive(e))
        .take_while(|e| is_failed_turn(e))
        .count()
        .max(1)
}

/// Combine liveness and the session's classification. A live seat with no session file yet is
/// idle (pi writes nothing until the first prompt).
pub fn board_state(l: Liveness, c: Option<&Classification>) -> BoardState {
    match l {
        Liveness::Offline => BoardState::Offline,
        Liveness::Unknown => BoardState::Unknown,
        Liveness::Alive => match c.map(|c| c.activity) {
            None | Some(Activity::Idle) => BoardState::Idle,
            Some(Activity::Working) => BoardState::Working,
            Some(Activity::Waiting) => BoardState::Waiting,
            Some(Activity::Error) => BoardState::Error,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn liveness_wins() {
        let w = Classification {
            activity: Activity::Waiting,
            reason: StateReason::InputNeeded,
        };
        assert_eq!(
            board_state(Liveness::Offline, Some(&w)),
            BoardState::Offline
        );
        assert_eq!(
            board_state(Liveness::Unknown, Some(&w)),
            BoardState::Unknown
        );
        assert_eq!(board_state(Liveness::Alive, Some(&w)), BoardState::Waiting);
        assert_eq!(board_state(Liveness::Alive, None), BoardState::Idle);
        assert_eq!(BoardState::Unknown.as_str(), "unknown");
    }
}
