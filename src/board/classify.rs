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
/// The marker that makes a completed reply ask for human input.
const INPUT_MARKER: &str = "Input needed: ";

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

/// Does this first non-blank line ask for input? Column zero, exact marker, non-empty request.
pub(crate) fn is_input_request(first_line: &str) -> bool {
    first_line
        .strip_prefix(INPUT_MARKER)
        .is_some_and(|rest| !rest.trim().is_empty())
}

/// The entry that decides the seat's state (the newest user, assistant or toolResult message on
/// the branch), if any: what names the turn a state belongs to.
pub(crate) fn deciding_entry(s: &SessionSummary) -> Option<&BranchEntry> {
    s.branch.iter().find(|e| is_decisive(e))
}

/// Longest question kept, in characters (the row shows its first line, details all of it).
pub(crate) const QUESTION_CHARS: usize = 1000;

/// What a reply that asks for input asks: its text from the last line that starts with the
/// marker (the marker itself dropped) to the end; without such a line, its last paragraph.
/// Trailing spaces and runs of blank lines are dropped; at most `QUESTION_CHARS` characters.
/// Raw text: views sanitize it.
pub(crate) fn question_of(text: &str) -> Option<String> {
    let lines: Vec<&str> = text
        .lines()
        .map(|l| l.strip_suffix('\r').unwrap_or(l).trim_end())
        .collect();
    let from = match lines.iter().rposition(|l| is_input_request(l)) {
        Some(i) => i,
        None => {
            let end = lines.iter().rposition(|l| !l.is_empty())?;
            lines[..end]
                .iter()
                .rposition(|l| l.is_empty())
                .map_or(0, |b| b + 1)
        }
    };
    let mut out = String::new();
    let mut blank = false;
    for (i, l) in lines[from..].iter().enumerate() {
        let l = if i == 0 {
            l.strip_prefix(INPUT_MARKER).unwrap_or(l)
        } else {
            l
        };
        if l.is_empty() {
            blank = !out.is_empty();
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank { "\n\n" } else { "\n" });
        }
        blank = false;
        out.push_str(l);
    }
    let out: String = out.chars().take(QUESTION_CHARS).collect();
    (!out.trim().is_empty()).then_some(out)
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
    fn the_question_is_the_asking_part_of_the_reply() {
        assert_eq!(
            question_of("Input needed: Staging or production?\n\nOptions:\n1. staging\n")
                .as_deref(),
            Some("Staging or production?\n\nOptions:\n1. staging")
        );
        // The last marker line wins; what comes before it is context the row does not need.
        assert_eq!(
            question_of("Input needed: old\nsome report\nInput needed: which one?\r\n").as_deref(),
            Some("which one?")
        );
        // No marker: the last paragraph.
        assert_eq!(
            question_of("Did the work.\n\nShall I also\nrun the tests?\n\n\n").as_deref(),
            Some("Shall I also\nrun the tests?")
        );
        assert_eq!(question_of("   \n\n"), None);
        let long = format!("Input needed: {}", "é".repeat(5000));
        assert_eq!(question_of(&long).unwrap().chars().count(), QUESTION_CHARS);
    }

    #[test]
    fn input_marker_rule() {
        assert!(is_input_request("Input needed: pick one"));
        assert!(!is_input_request("Input needed: "));
        assert!(!is_input_request("Input needed:   "));
        assert!(!is_input_request(" Input needed: x"));
        assert!(!is_input_request("> Input needed: x"));
        assert!(!is_input_request("input needed: x"));
        assert!(!is_input_request("Input needed:x"));
    }

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
