//! A row's one line — what the sidebar's Detail cell, `status` and the coordinator's board say
//! beside the state — and where it came from (docs/behaviour.md §2, "What a row says"). What
//! is current, never the session's first message: a waiting seat's question, an error's text,
//! a working seat's running step and how long it has run, an idle seat's last result (else its
//! latest request). A step that has run past `QUIET_AFTER_MS` with no new event is marked
//! `quiet`; the state itself never changes for that.

use serde::Serialize;

use crate::clock::{age_seconds, short_age, Ms};
use crate::snapshot::Row;
use crate::states::BoardState;

/// A running step with no new event for this long reads `quiet` (5 minutes).
pub(crate) const QUIET_AFTER_MS: Ms = 5 * 60 * 1000;

/// Where the one line came from (`headline.source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum HeadlineSource {
    /// What the waiting seat asks.
    Question,
    /// The error the last turn ended in.
    Error,
    /// The tool call that has not returned.
    RunningTool,
    /// The first line of the newest reply of a finished turn.
    LastResult,
    /// The newest user message (no reply yet to show).
    LatestRequest,
    /// The task a registration set (or a connector's).
    Task,
    /// Nothing to quote: the words of the state's reason.
    Reason,
}

/// A row's one line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Headline {
    /// Raw evidence text (views sanitize and clip it).
    pub(crate) text: String,
    pub(crate) source: HeadlineSource,
    /// A working seat's running step: how long it has run, in whole seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) step_seconds: Option<i64>,
    /// The step has run past `QUIET_AFTER_MS` with no new event (the state stays working).
    pub(crate) quiet: bool,
}

/// The first non-empty line of `s`.
fn first_line(s: &str) -> &str {
    s.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}

/// The newest event a working row's evidence shows: the running tool's start, the session's
/// newest entry, the evidence that decided the state.
fn newest_event(row: &Row) -> Option<Ms> {
    [
        row.running_tool.as_ref().and_then(|t| t.since),
        row.last_activity,
        row.state_at,
    ]
    .into_iter()
    .flatten()
    .max()
}

/// The one line of `row` at `now`.
pub(crate) fn headline(row: &Row, now: Ms) -> Headline {
    let of = |text: &str, source| Headline {
        text: text.to_string(),
        source,
        step_seconds: None,
        quiet: false,
    };
    let reason = || of(row.state_reason.words(), HeadlineSource::Reason);
    match row.state {
        BoardState::Waiting => match &row.question {
            Some(q) => of(q, HeadlineSource::Question),
            None => reason(),
        },
        BoardState::Error => match &row.last_error {
            Some(e) => of(e, HeadlineSource::Error),
            None => reason(),
        },
        BoardState::Working => match &row.running_tool {
            Some(run) => {
                let since = run.since.filter(|at| *at <= now);
                Headline {
                    text: run.name.clone().unwrap_or_else(|| "a tool".into()),
                    source: HeadlineSource::RunningTool,
                    step_seconds: since.map(|at| age_seconds(now, at)),
                    quiet: newest_event(row).is_some_and(|at| now - at >= QUIET_AFTER_MS),
                }
            }
            None => reason(),
        },
        BoardState::Idle => {
            if let Some(a) = row.last_assistant_text.as_deref().map(first_line) {
                if !a.is_empty() {
                    return of(a, HeadlineSource::LastResult);
                }
            }
            if let Some(u) = row.last_user_text.as_deref().map(first_line) {
                if !u.is_empty() {
                    return of(u, HeadlineSource::LatestRequest);
                }
            }
            match &row.task {
                Some(t) => of(t, HeadlineSource::Task),
                None => reason(),
            }
        }
        BoardState::Offline | BoardState::Unknown => reason(),
    }
}

impl Headline {
    /// As one line of text: `bash for 6m · quiet` for a running step, else the text.
    pub(crate) fn line(&self) -> String {
        match (self.source, self.step_seconds) {
            (HeadlineSource::RunningTool, Some(s)) => format!(
                "{} for {}{}",
                self.text,
                short_age(s),
                if self.quiet { " · quiet" } else { "" }
            ),
            (HeadlineSource::RunningTool, None) if self.quiet => format!("{} · quiet", self.text),
            _ => self.text.clone(),
        }
    }

    /// When a running step that is not quiet yet turns quiet (the sidebar redraws then).
    pub(crate) fn quiet_at(row: &Row) -> Option<Ms> {
        (row.state == BoardState::Working && row.running_tool.is_some())
            .then(|| newest_event(row))
            .flatten()
            .map(|at| at.saturating_add(QUIET_AFTER_MS))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::sessions::RunningTool;

    fn row(state: BoardState) -> Row {
        let mut r = crate::ui::demo::demo_row(0, 0, 0);
        r.state = state;
        r.question = None;
        r.last_error = None;
        r.running_tool = None;
        r.last_assistant_text = None;
        r.last_user_text = None;
        r.task = Some("the first message".into());
        r.last_activity = None;
        r.state_at = None;
        r
    }

    #[test]
    fn an_idle_row_says_its_last_result_else_its_latest_request_never_the_first_message() {
        let mut r = row(BoardState::Idle);
        r.last_user_text = Some("now fix the tests".into());
        let h = headline(&r, 0);
        assert_eq!(
            (h.text.as_str(), h.source),
            ("now fix the tests", HeadlineSource::LatestRequest)
        );
        r.last_assistant_text = Some("\n  Done: 3 tests fixed.\nMore detail".into());
        let h = headline(&r, 0);
        assert_eq!(
            (h.text.as_str(), h.source),
            ("Done: 3 tests fixed.", HeadlineSource::LastResult)
        );
        r.last_assistant_text = None;
        r.last_user_text = None;
        assert_eq!(headline(&r, 0).source, HeadlineSource::Task);
    }

    #[test]
    fn a_running_step_says_how_long_and_turns_quiet_only_past_the_threshold() {
        let mut r = row(BoardState::Working);
        let start = 1_000_000;
        r.running_tool = Some(RunningTool {
            name: Some("bash".into()),
            since: Some(start),
        });
        r.last_activity = Some(start);
        let h = headline(&r, start + 6 * 60_000 - 1);
        assert_eq!(h.step_seconds, Some(359));
        assert!(h.quiet);
        assert_eq!(h.line(), "bash for 5m · quiet");
        let h = headline(&r, start + QUIET_AFTER_MS - 1);
        assert!(!h.quiet, "not before the threshold");
        assert_eq!(Headline::quiet_at(&r), Some(start + QUIET_AFTER_MS));
        // A newer event (the file moved on) starts the count again; the state is untouched.
        r.last_activity = Some(start + 4 * 60_000);
        let h = headline(&r, start + 6 * 60_000);
        assert!(!h.quiet);
        assert_eq!(h.line(), "bash for 6m");
        assert_eq!(r.state, BoardState::Working);
    }
}
