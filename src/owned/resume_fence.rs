//! resume-worker's fence `<root>/.pi-intercom/jobs/resume-<hash>.json` (docs/interop.md §5): a
//! launch recorded before it is made (`launch_pending`), then with its pane (`launched`),
//! removed when the new seat registered from that pane (or when a launch certainly failed).
//! `actions::resume` writes and reads it; this is its one shape and its one stage rule.
//!
//! ```text
//! (none) → launch_pending → launched → (removed)
//! ```
//!
//! Since 0.2 the file ends with a newline, as every owned file does; 0.1's, without one, read the
//! same.

use serde::{Deserialize, Serialize};

use super::{cap, cap_opt, FieldError, Validate, MAX_ID, MAX_TEXT};
use crate::clock::Ms;

/// The version this build writes (reading does not depend on it).
pub(crate) const VERSION: u32 = 1;

/// How far a resume's launch got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum FenceStage {
    /// Recorded before the launch: it may have happened or not.
    LaunchPending,
    /// The multiplexer answered with the new pane.
    Launched,
}

impl FenceStage {
    /// The name in the file.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            FenceStage::LaunchPending => "launch_pending",
            FenceStage::Launched => "launched",
        }
    }

    /// Whether a fence at `from` (`None`: no fence) may be written at `to`.
    pub(crate) fn may_follow(from: Option<FenceStage>, to: FenceStage) -> bool {
        matches!(
            (from, to),
            (None, FenceStage::LaunchPending)
                | (Some(FenceStage::LaunchPending), FenceStage::Launched)
        )
    }
}

/// The fence as it is on disk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ResumeFence {
    #[serde(default)]
    pub version: u32,
    /// The worker's pi session (the file's name is its hash).
    pub session_id: String,
    /// The worker's name in the roster.
    pub name: String,
    pub stage: FenceStage,
    /// The launched pane (`null` before the launch answered).
    pub pane: Option<String>,
    /// The pane the new one was opened beside.
    pub beside: String,
    /// When the launch was recorded, ISO and in ms (a registration from before it is not the
    /// new seat's).
    pub launched_at: String,
    pub launched_at_ms: Ms,
    /// The resume-worker process that wrote it.
    pub pid: u32,
}

impl Validate for ResumeFence {
    fn validate(&self) -> Result<(), FieldError> {
        for (field, v) in [
            ("sessionId", self.session_id.as_str()),
            ("beside", &self.beside),
            ("launchedAt", &self.launched_at),
        ] {
            cap(field, v, MAX_ID)?;
        }
        cap_opt("pane", self.pane.as_deref(), MAX_ID)?;
        cap("name", &self.name, MAX_TEXT)
    }
}

/// What the board's `resume` field says of a standing fence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FenceSummary {
    pub stage: Option<String>,
    pub launched_at: Option<String>,
    pub pane: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::super::{decode, encode};
    use super::*;

    /// As 0.1's `resume-worker` wrote it (the `json!` builder before this schema).
    const OLD: &str = r#"{
  "version": 1,
  "sessionId": "s-1",
  "name": "w1",
  "stage": "launched",
  "pane": "%4",
  "beside": "%1",
  "launchedAt": "2026-11-30T00:00:00.000Z",
  "launchedAtMs": 1764460800000,
  "pid": 777
}"#;

    #[test]
    fn the_previous_versions_fence_reads_and_writes_back_with_a_final_newline() {
        let f: ResumeFence = decode(OLD.as_bytes()).unwrap();
        assert_eq!(f.stage, FenceStage::Launched);
        assert_eq!(f.launched_at_ms, 1_764_460_800_000);
        assert_eq!(
            String::from_utf8(encode(&f).unwrap()).unwrap(),
            format!("{OLD}\n")
        );
        let pending = OLD.replace(r#""launched""#, r#""launch_pending""#);
        let pending = pending.replace(r#""%4""#, "null");
        let p: ResumeFence = decode(pending.as_bytes()).unwrap();
        assert_eq!((p.stage, p.pane), (FenceStage::LaunchPending, None));
        let other = OLD.replace(r#""launched""#, r#""resumed""#);
        assert!(decode::<ResumeFence>(other.as_bytes()).is_err());
    }

    #[test]
    fn only_pending_then_launched() {
        use FenceStage::*;
        assert!(FenceStage::may_follow(None, LaunchPending));
        assert!(FenceStage::may_follow(Some(LaunchPending), Launched));
        assert!(!FenceStage::may_follow(None, Launched));
        assert!(!FenceStage::may_follow(Some(Launched), LaunchPending));
        assert!(!FenceStage::may_follow(Some(Launched), Launched));
        assert!(!FenceStage::may_follow(Some(LaunchPending), LaunchPending));
    }
}
