//! What `resume-worker` reports (docs/behaviour.md §8): printed with `--json`, said in words
//! without it (`cmd::resume_cmd`), and handed to the coordinator's `resume_worker` tool. One
//! struct for every ending; a member is present when that ending says it, and `handoff` and
//! `launchSpec` are `null` on a launch that has none (as before this schema).
//!
//! Paths are written as text (a path that is not UTF-8 is written lossily, where the `json!`
//! builders before would have panicked).

use serde::Serialize;

use crate::mux::MuxKind;

/// How the run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ResumeResult {
    /// Nothing was launched; `reason` says why.
    Refused,
    /// `--recover`: the fence was re-checked (and cleared); nothing launched.
    Recovered,
    /// `--dry-run`: every check passed; `argv` is what would be launched.
    DryRun,
    /// The new seat registered from the launched pane.
    Resumed,
    /// The launch failed; `fenceKept` says whether it may have happened anyway.
    Failed,
    /// Launched, and no registration came in time (a launch is not readiness).
    LaunchedUnconfirmed,
}

impl ResumeResult {
    /// The name in the report.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ResumeResult::Refused => "refused",
            ResumeResult::Recovered => "recovered",
            ResumeResult::DryRun => "dry_run",
            ResumeResult::Resumed => "resumed",
            ResumeResult::Failed => "failed",
            ResumeResult::LaunchedUnconfirmed => "launched_unconfirmed",
        }
    }
}

/// The report.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ResumeReport {
    pub result: ResumeResult,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worker: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub multiplexer: Option<MuxKind>,
    /// The pane the new window was opened beside.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub beside: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub argv: Option<Launch>,
    /// The checks that passed, in order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checks: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub handoff: Option<Option<HandoffSeen>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wait_secs: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launch_spec: Option<Option<SpecSeen>>,
    /// The launched pane.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pane: Option<String>,
    /// The pid of the registration that confirmed the launch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registered_pid: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fence_kept: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fence_cleared: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl ResumeReport {
    /// An ending that says only its result.
    pub(crate) fn new(result: ResumeResult) -> ResumeReport {
        ResumeReport {
            result,
            reason: None,
            worker: None,
            session_id: None,
            session_file: None,
            cwd: None,
            multiplexer: None,
            beside: None,
            argv: None,
            checks: None,
            handoff: None,
            wait_secs: None,
            launch_spec: None,
            pane: None,
            registered_pid: None,
            fence_kept: None,
            fence_cleared: None,
            note: None,
        }
    }

    /// A refusal and why.
    pub(crate) fn refused(reason: String) -> ResumeReport {
        ResumeReport {
            reason: Some(reason),
            ..ResumeReport::new(ResumeResult::Refused)
        }
    }
}

/// What was (or would be) launched.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub(crate) enum Launch {
    /// The program and its arguments (a launch).
    Argv(Vec<String>),
    /// `--dry-run`: exactly what would be asked of the multiplexer.
    Preview(LaunchPreview),
}

/// `--dry-run`'s window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct LaunchPreview {
    pub multiplexer: MuxKind,
    pub socket: String,
    pub beside: String,
    pub name: String,
    pub cwd: String,
    /// `NAME=value`.
    pub env: Vec<String>,
    pub argv: Vec<String>,
}

/// The worker's last handoff.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct HandoffSeen {
    pub job_id: String,
    pub summary: String,
    pub updated_at: String,
    pub age_seconds: i64,
}

/// The launch spec the window follows.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SpecSeen {
    pub path: String,
    pub created_at: String,
    pub args: Vec<String>,
    pub cwd: String,
    /// The names of the variables it sets (never their values).
    pub env: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn members_are_the_ones_before_this_schema() {
        let r = ResumeReport::refused("no".into());
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"result": "refused", "reason": "no"})
        );
        let launched = ResumeReport {
            worker: Some("w1".into()),
            argv: Some(Launch::Argv(vec!["pi".into()])),
            handoff: Some(None),
            launch_spec: Some(None),
            wait_secs: Some(20),
            registered_pid: Some(7),
            ..ResumeReport::new(ResumeResult::Resumed)
        };
        assert_eq!(
            serde_json::to_value(&launched).unwrap(),
            json!({"result": "resumed", "worker": "w1", "argv": ["pi"], "handoff": null,
                "waitSecs": 20, "launchSpec": null, "registeredPid": 7})
        );
        for r in [
            ResumeResult::Refused,
            ResumeResult::Recovered,
            ResumeResult::DryRun,
            ResumeResult::Resumed,
            ResumeResult::Failed,
            ResumeResult::LaunchedUnconfirmed,
        ] {
            assert_eq!(serde_json::to_value(r).unwrap(), json!(r.as_str()));
        }
    }
}
