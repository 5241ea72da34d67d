//! What `close-worker` reports (docs/behaviour.md §7): printed (`--json`: always; else the JSON
//! report, or the refusal on stderr), logged (`close_worker_done`), said on the sidebar and
//! handed to the coordinator's `close_worker` tool. One type for its five endings, each with the
//! members (and their order) it had before this schema.

use serde::Serialize;

use crate::evidence::config::CloseReason;
use crate::mux::{MuxKind, ServerIdentity};
use crate::states::CloseState;

/// The report: which ending, and what it says.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub(crate) enum CloseReport {
    /// Nothing was written or sent.
    Refused { refused: String },
    /// A close job ran and ended in `state`.
    Ended(JobEnded),
    /// `--recover` with no fenced job.
    NothingToRecover(NothingToRecover),
    /// A fenced job was marked (or, with `--recover`, re-checked and cleared).
    Fence(FenceHandled),
    /// `--dry-run`'s verdict.
    DryRun(DryRunVerdict),
}

impl CloseReport {
    /// The refusal's words, when the close was refused.
    pub(crate) fn refused(&self) -> Option<&str> {
        match self {
            CloseReport::Refused { refused } => Some(refused),
            _ => None,
        }
    }

    /// The state a job ended in, when one ran.
    pub(crate) fn state(&self) -> Option<CloseState> {
        match self {
            CloseReport::Ended(e) => Some(e.state),
            _ => None,
        }
    }

    /// Why it ended where it did, when the job says.
    pub(crate) fn reason(&self) -> Option<CloseReason> {
        match self {
            CloseReport::Ended(e) => e.reason,
            _ => None,
        }
    }
}

/// A job's end.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct JobEnded {
    pub job_id: String,
    pub worker: String,
    #[serde(serialize_with = "state_name")]
    pub state: CloseState,
    #[serde(serialize_with = "reason_name")]
    pub reason: Option<CloseReason>,
    pub detail: String,
    /// The final state was read back from config.
    pub recorded: bool,
    /// What was closed (`null` when nothing was).
    pub closed: Option<Closed>,
}

/// Exactly what was closed.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Closed {
    pub pane: String,
    pub pane_shell_pid: Option<i32>,
    pub session: String,
    pub window: String,
    pub socket: String,
    pub server: ServerIdentity,
    pub pi: ClosedPi,
    /// `SIGTERM`, `SIGKILL`, `still running`; `null` when the pane's close ended it.
    pub pi_ended_by: Option<&'static str>,
}

/// The pi that was ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ClosedPi {
    pub pid: i32,
    pub start_ticks: u64,
}

/// `--recover` found no fenced job.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NothingToRecover {
    pub worker: String,
    /// Always `false`.
    pub fenced: bool,
    /// The worker's last job, if any.
    pub job: Option<JobSeen>,
    pub note: &'static str,
}

/// A job as config names it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct JobSeen {
    pub job_id: String,
    #[serde(serialize_with = "state_name")]
    pub state: CloseState,
}

/// A fenced job handled.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FenceHandled {
    pub job_id: String,
    #[serde(serialize_with = "state_name")]
    pub was: CloseState,
    #[serde(serialize_with = "state_name")]
    pub now: CloseState,
    /// `--recover`: what is left of the worker (`null` without it).
    pub found: Option<Found>,
    pub recorded: bool,
    pub note: &'static str,
}

/// What is left of a fenced job's worker.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub(crate) enum Found {
    /// The job record cannot be read.
    NoRecord {
        #[serde(rename = "jobRecord")]
        job_record: &'static str,
    },
    Left {
        pane: String,
        #[serde(rename = "paneState")]
        pane_state: &'static str,
        #[serde(rename = "piPid")]
        pi_pid: i32,
        #[serde(rename = "piState")]
        pi_state: &'static str,
    },
}

/// Every check a close would make, and what it found.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DryRunVerdict {
    pub worker: String,
    pub session_id: String,
    pub pane: String,
    pub multiplexer: MuxKind,
    pub socket: Option<String>,
    pub registration_alive: Option<bool>,
    pub board_state: Option<&'static str>,
    /// `verified`, or why not.
    pub identity: String,
    pub would_ask: &'static str,
    /// Always `false`.
    pub mutated: bool,
}

fn state_name<S: serde::Serializer>(s: &CloseState, ser: S) -> Result<S::Ok, S::Error> {
    ser.serialize_str(s.as_str())
}

fn reason_name<S: serde::Serializer>(r: &Option<CloseReason>, ser: S) -> Result<S::Ok, S::Error> {
    match r {
        Some(r) => ser.serialize_str(r.as_str()),
        None => ser.serialize_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_ending_has_the_members_it_had_before_in_their_order() {
        let ended = CloseReport::Ended(JobEnded {
            job_id: "j".into(),
            worker: "w1".into(),
            state: CloseState::Failed,
            reason: Some(CloseReason::IdentityFailed),
            detail: "d".into(),
            recorded: true,
            closed: None,
        });
        assert_eq!(
            serde_json::to_string(&ended).unwrap(),
            r#"{"jobId":"j","worker":"w1","state":"failed","reason":"identity_failed","detail":"d","recorded":true,"closed":null}"#
        );
        assert_eq!(
            (ended.state(), ended.refused()),
            (Some(CloseState::Failed), None)
        );
        let refused = CloseReport::Refused {
            refused: "no".into(),
        };
        assert_eq!(
            serde_json::to_value(&refused).unwrap(),
            json!({"refused": "no"})
        );
        assert_eq!(refused.refused(), Some("no"));
        let fence = CloseReport::Fence(FenceHandled {
            job_id: "j".into(),
            was: CloseState::Closing,
            now: CloseState::Uncertain,
            found: Some(Found::NoRecord {
                job_record: "missing or unreadable",
            }),
            recorded: false,
            note: "n",
        });
        assert_eq!(
            serde_json::to_string(&fence).unwrap(),
            r#"{"jobId":"j","was":"closing","now":"uncertain","found":{"jobRecord":"missing or unreadable"},"recorded":false,"note":"n"}"#
        );
    }
}
