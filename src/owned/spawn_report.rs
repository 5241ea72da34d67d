//! What `spawn` reports (docs/behaviour.md §10): printed (`--json`: the JSON, else one line per
//! fact, the refusal on stderr), handed to the sidebar's spawn form and, with its exit code, to the
//! coordinator's `spawn_worker` tool. One struct for every
//! ending: a refusal says only `result` and `reason`; every other ending carries the receipt
//! (what was launched, how, where), then what the launch got to. Members come in the order the
//! `json!` builders before this schema wrote them, with one exception: `specNotUpdated` (a
//! launch spec that could not be rewritten, rare) now always follows `checks`, where the
//! builders put it wherever the first failed rewrite happened.
//!
//! Paths are written as text (lossily when not UTF-8, where the builders would have panicked).

use serde::Serialize;

use crate::mux::MuxKind;

/// How the run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum SpawnResult {
    /// Nothing was started; `reason` says why.
    Refused,
    /// A step failed; `reason` says what was kept.
    Failed,
    /// Launched, and no registration came in time (a launch is not readiness).
    LaunchedUnconfirmed,
    /// Started and registered (`prompt` says what became of the first task).
    Spawned,
}

impl SpawnResult {
    /// The name in the report.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            SpawnResult::Refused => "refused",
            SpawnResult::Failed => "failed",
            SpawnResult::LaunchedUnconfirmed => "launched_unconfirmed",
            SpawnResult::Spawned => "spawned",
        }
    }
}

/// The report.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SpawnReport {
    /// What every ending but a refusal carries.
    #[serde(flatten)]
    pub receipt: Option<SpawnReceipt>,
    /// Why the launch spec could not be rewritten (it says an earlier stage).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spec_not_updated: Option<String>,
    /// The new pane.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pane: Option<String>,
    /// What became of the coordinator's sidebar (placed, kept, or why not).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sidebar: Option<String>,
    /// The pid of the registration that confirmed the launch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registered_pid: Option<i32>,
    pub result: SpawnResult,
    /// The first task's receipt, when one was given and the seat registered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt: Option<FirstTask>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl SpawnReport {
    /// A refusal and why.
    pub(crate) fn refused(reason: String) -> SpawnReport {
        SpawnReport {
            receipt: None,
            spec_not_updated: None,
            pane: None,
            sidebar: None,
            registered_pid: None,
            result: SpawnResult::Refused,
            prompt: None,
            reason: Some(reason),
        }
    }

    /// The receipt, before the launch has got anywhere (`result` is set as it ends).
    pub(crate) fn launching(receipt: SpawnReceipt) -> SpawnReport {
        SpawnReport {
            receipt: Some(receipt),
            result: SpawnResult::Failed,
            reason: None,
            ..SpawnReport::refused(String::new())
        }
    }
}

/// What was launched, how and where.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SpawnReceipt {
    pub worker: String,
    pub session_id: String,
    pub port: u16,
    pub project_directory: String,
    pub cwd: String,
    /// The worktree made (or picked up) for the worker; `null` without one.
    pub worktree: Option<WorktreeMade>,
    pub multiplexer: MuxKind,
    /// `window` (tmux) or `tab` (Herdr).
    pub placement: &'static str,
    /// The pane the new window was opened beside.
    pub beside: String,
    pub argv: Vec<String>,
    /// The names of the variables set for it.
    pub env: Vec<String>,
    /// The launch spec's file.
    pub launch_spec: String,
    /// The stage of the earlier spawn of the name this one picked up (`null`: a new worker).
    pub picked_up: Option<&'static str>,
    /// The checks that passed, in order.
    pub checks: Vec<String>,
}

/// The worker's git worktree (as its launch spec records it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WorktreeMade {
    pub path: String,
    pub branch: String,
    /// The branch was created by the spawn (else it existed and was only checked out).
    pub created_branch: bool,
    /// The commit the worktree started from.
    pub base: String,
}

/// What became of the first task.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub(crate) enum FirstTask {
    /// Never sent: no fresh scan, or the reply path refused.
    NotSent {
        /// Always `not_sent`.
        outcome: &'static str,
        reason: String,
    },
    /// Sent: `reply`'s own receipt.
    Sent(crate::actions::reply::Receipt),
}

impl FirstTask {
    pub(crate) fn not_sent(reason: String) -> FirstTask {
        FirstTask::NotSent {
            outcome: "not_sent",
            reason,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn receipt() -> SpawnReceipt {
        SpawnReceipt {
            worker: "W".into(),
            session_id: "s".into(),
            port: 47002,
            project_directory: ".".into(),
            cwd: "/r".into(),
            worktree: None,
            multiplexer: MuxKind::Tmux,
            placement: "window",
            beside: "%1".into(),
            argv: vec!["pi".into()],
            env: vec!["INTERCOM_PANE_BIN".into()],
            launch_spec: "/r/spec.json".into(),
            picked_up: None,
            checks: vec!["ok".into()],
        }
    }

    #[test]
    fn each_ending_has_the_members_it_had_before_in_their_order() {
        assert_eq!(
            serde_json::to_string(&SpawnReport::refused("no".into())).unwrap(),
            r#"{"result":"refused","reason":"no"}"#
        );
        let head = r#"{"worker":"W","sessionId":"s","port":47002,"projectDirectory":".","cwd":"/r","worktree":null,"multiplexer":"tmux","placement":"window","beside":"%1","argv":["pi"],"env":["INTERCOM_PANE_BIN"],"launchSpec":"/r/spec.json","pickedUp":null,"checks":["ok"]"#;
        let failed = SpawnReport {
            reason: Some("r".into()),
            ..SpawnReport::launching(receipt())
        };
        assert_eq!(
            serde_json::to_string(&failed).unwrap(),
            format!(r#"{head},"result":"failed","reason":"r"}}"#)
        );
        let spawned = SpawnReport {
            pane: Some("%4".into()),
            registered_pid: Some(77),
            result: SpawnResult::Spawned,
            prompt: Some(FirstTask::not_sent("x".into())),
            reason: Some("r".into()),
            ..SpawnReport::launching(receipt())
        };
        assert_eq!(
            serde_json::to_string(&spawned).unwrap(),
            format!(
                r#"{head},"pane":"%4","registeredPid":77,"result":"spawned","prompt":{{"outcome":"not_sent","reason":"x"}},"reason":"r"}}"#
            )
        );
        for r in [
            SpawnResult::Refused,
            SpawnResult::Failed,
            SpawnResult::LaunchedUnconfirmed,
            SpawnResult::Spawned,
        ] {
            assert_eq!(serde_json::to_value(r).unwrap(), r.as_str());
        }
    }
}
