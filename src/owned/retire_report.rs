//! What `retire` reports (docs/behaviour.md §10): printed (`--json`: the JSON, else one line per
//! fact, the refusal on stderr). One struct for both endings; a member is present when that
//! ending says it, in the order the `json!` builders before this schema wrote them.
//!
//! Paths are written as text (lossily when not UTF-8, where the builders would have panicked).

use serde::Serialize;

/// How the run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum RetireResult {
    /// Nothing was removed; `reason` says why.
    Refused,
    /// Removed from the roster (the worktree as `worktree` says).
    Retired,
}

/// The report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RetireReport {
    pub result: RetireResult,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worker: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The retired record (`owned::retire_record`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub archive: Option<String>,
    /// The worker's files left where they are.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kept: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worktree: Option<WorktreeOutcome>,
}

impl RetireReport {
    /// A refusal and why.
    pub(crate) fn refused(reason: String) -> RetireReport {
        RetireReport {
            result: RetireResult::Refused,
            reason: Some(reason),
            worker: None,
            session_id: None,
            archive: None,
            kept: None,
            worktree: None,
        }
    }
}

/// What became of the worker's worktree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum WorktreeAction {
    /// No worktree recorded.
    None,
    /// Kept: not asked to remove it, or it holds work, or git could not tell.
    Kept,
    Removed,
    /// Its folder was already gone.
    Gone,
}

/// The report's `worktree`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct WorktreeOutcome {
    pub action: WorktreeAction,
    /// The worktree's folder and branch (absent when none was recorded).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    pub detail: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_ending_has_the_members_it_had_before_in_their_order() {
        assert_eq!(
            serde_json::to_string(&RetireReport::refused("no".into())).unwrap(),
            r#"{"result":"refused","reason":"no"}"#
        );
        let retired = RetireReport {
            result: RetireResult::Retired,
            reason: None,
            worker: Some("w1".into()),
            session_id: Some("s-1".into()),
            archive: Some("/r/a.json".into()),
            kept: Some(vec![]),
            worktree: Some(WorktreeOutcome {
                action: WorktreeAction::Kept,
                path: Some("/r/wt".into()),
                branch: Some("b".into()),
                detail: "d".into(),
            }),
        };
        assert_eq!(
            serde_json::to_string(&retired).unwrap(),
            r#"{"result":"retired","worker":"w1","sessionId":"s-1","archive":"/r/a.json","kept":[],"worktree":{"action":"kept","path":"/r/wt","branch":"b","detail":"d"}}"#
        );
        let none = WorktreeOutcome {
            action: WorktreeAction::None,
            path: None,
            branch: None,
            detail: "none recorded".into(),
        };
        assert_eq!(
            serde_json::to_string(&none).unwrap(),
            r#"{"action":"none","detail":"none recorded"}"#
        );
    }
}
