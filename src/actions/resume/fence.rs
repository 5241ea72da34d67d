//! resume-worker's fence (`owned::resume_fence`): written before the launch and with its pane
//! after, lifted when the new seat registered; a standing fence refuses another resume until a
//! person looked (`--recover`). The board shows a standing fence in its `resume` field.

use std::path::Path;

use serde_json::Value;

use super::{live, refused, Ending, Plan, ResumeExit, ResumeRequest};
use crate::clock::{format_iso, Ms};
use crate::fsguard;
use crate::owned;
use crate::owned::resume_fence::{self, FenceStage, FenceSummary, ResumeFence};
use crate::paths::resume_fence as fence_path;
use crate::store;
use crate::text::sanitize;

/// Largest fence read.
const FENCE_CAP: u64 = 64 * 1024;

/// The fence of an earlier launch: lifted when that launch's seat registered, else standing
/// (refused) unless `--recover`, whose own checks then decide.
pub(super) fn check_fence(
    req: &ResumeRequest,
    root: &Path,
    session_id: &str,
) -> Result<(), Ending> {
    let path = fence_path(root, session_id);
    let Ok(bytes) = fsguard::read_capped(&path, FENCE_CAP) else {
        return Ok(());
    };
    // A fence that does not read as one still stands (its launch is unknown).
    let fence: Option<ResumeFence> = owned::decode(&bytes).ok();
    if let Some((_, r)) = live::live_registration(root, &req.scan.data_root, session_id) {
        let launched = fence.as_ref().map_or(Ms::MAX, |f| f.launched_at_ms);
        if r.started_at.is_some_and(|s| s + 1000 >= launched) {
            let _ = store::remove_file(&path);
            return Ok(()); // the liveness checks that follow refuse it as live
        }
    }
    if req.recover {
        return Ok(());
    }
    let f = fence.as_ref();
    Err(refused(
        ResumeExit::Fenced,
        format!(
            "a resume launched at {} ({}, pane {}) has not registered yet: look at that pane, then --recover",
            f.map_or("?", |f| f.launched_at.as_str()),
            f.map_or("?", |f| f.stage.as_str()),
            f.and_then(|f| f.pane.as_deref()).unwrap_or("?"),
        ),
    ))
}

/// The resume recorded for a worker and not yet confirmed (`launch_pending`, `launched`): its
/// stage, when, and the pane; `None` when no fence stands. A fence that does not read as one
/// stands (resume refuses it): shown with nulls. For the board's `resume` field.
pub(crate) fn fence_stage(root: &Path, session_id: &str) -> Option<Value> {
    let bytes = fsguard::read_capped(&fence_path(root, session_id), FENCE_CAP).ok()?;
    let fence: Option<ResumeFence> = owned::decode(&bytes).ok();
    let field = |s: &str| crate::text::clip(&sanitize(s), 80);
    let summary = FenceSummary {
        stage: fence.as_ref().map(|f| f.stage.as_str().to_string()),
        launched_at: fence.as_ref().map(|f| field(&f.launched_at)),
        pane: fence.as_ref().and_then(|f| f.pane.as_deref()).map(field),
    };
    serde_json::to_value(summary).ok()
}

/// Record the fence at `stage` over one at `from` (the stage rule must allow it); `false` when it
/// was not written.
pub(super) fn write_fence(
    root: &Path,
    plan: &Plan,
    (from, stage): (Option<FenceStage>, FenceStage),
    pane: Option<&str>,
    at: Ms,
) -> bool {
    if !FenceStage::may_follow(from, stage) {
        return false;
    }
    let fence = ResumeFence {
        version: resume_fence::VERSION,
        session_id: plan.agent.session_id.clone(),
        name: plan.agent.name.clone(),
        stage,
        pane: pane.map(str::to_string),
        beside: plan.beside.id.clone(),
        launched_at: format_iso(at),
        launched_at_ms: at,
        pid: std::process::id(),
    };
    let Ok(bytes) = owned::encode(&fence) else {
        return false;
    };
    store::write_atomic(&fence_path(root, &plan.agent.session_id), &bytes).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_board_sees_a_standing_fence_even_when_it_does_not_read_as_one() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        assert_eq!(fence_stage(root, "s-1"), None);
        std::fs::create_dir_all(crate::paths::jobs_dir(root)).unwrap();
        let fence = ResumeFence {
            version: resume_fence::VERSION,
            session_id: "s-1".into(),
            name: "w1".into(),
            stage: FenceStage::Launched,
            pane: Some("%4\u{1b}[2J".into()),
            beside: "%1".into(),
            launched_at: "2026-11-30T00:00:00.000Z".into(),
            launched_at_ms: 1_764_460_800_000,
            pid: 1,
        };
        let path = fence_path(root, "s-1");
        std::fs::write(&path, owned::encode(&fence).unwrap()).unwrap();
        let v = fence_stage(root, "s-1").unwrap();
        assert_eq!(v["stage"], "launched");
        assert_eq!(v["launchedAt"], "2026-11-30T00:00:00.000Z");
        assert!(!v["pane"].as_str().unwrap().contains('\u{1b}'), "{v}");
        std::fs::write(&path, b"{\"stage\": 5").unwrap();
        assert_eq!(
            fence_stage(root, "s-1"),
            Some(serde_json::json!({"stage": null, "launchedAt": null, "pane": null}))
        );
    }
}
