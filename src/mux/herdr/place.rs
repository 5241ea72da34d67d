//! A new pane above an existing one, and the person's focus kept where it was.
//!
//! Herdr cannot split above: split down (the existing pane keeps `percent`), swap so the new
//! pane is on top, check the layout, type the command. A swap that changes the layout focuses
//! the swap's source pane and its workspace — in a background workspace too (captures 005–025 of
//! `fixtures/herdr-0.8.2/behaviour`). So the focus is read before the swap and put back right
//! after it: the background workspace's own focused pane (`pane.focus`), then the workspace and
//! pane the person was on (`workspace.focus`, which brings back that workspace's last focused
//! pane, and `pane.focus` when that is not enough). A last snapshot says whether it worked.

use std::time::Instant;

use serde::Deserialize;
use serde_json::{json, Value};

use super::wire::{bad, err, expect_type, field};
use super::{Herdr, PaneInfo};
use crate::mux::{ErrorCode, MuxError, SplitAbove};

/// Who has the focus: the focused workspace and pane, and each workspace's own focused pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Focus {
    pub workspace: String,
    pub pane: String,
    /// (workspace, its layout's focused pane).
    pub per_workspace: Vec<(String, String)>,
}

impl Focus {
    /// The same person-visible focus, and the same focused pane in workspace `ws`.
    fn same_as(&self, other: &Focus, ws: &str) -> bool {
        self.workspace == other.workspace && self.pane == other.pane && self.of(ws) == other.of(ws)
    }

    fn of(&self, ws: &str) -> Option<&str> {
        self.per_workspace
            .iter()
            .find(|(w, _)| w == ws)
            .map(|(_, p)| p.as_str())
    }
}

/// What the placement did to the person's focus (said in the ownership record).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FocusNote {
    /// The focus never moved.
    Unchanged,
    /// The swap moved it; it was put back and checked.
    Restored,
    /// The swap moved it and it could not be put back (the detail says how far it got).
    NotRestored(String),
}

impl FocusNote {
    /// The value written in the record's `focus` field.
    pub fn code(&self) -> &'static str {
        match self {
            FocusNote::Unchanged => "unchanged",
            FocusNote::Restored => "restored",
            FocusNote::NotRestored(_) => "not_restored",
        }
    }
}

#[derive(Deserialize)]
struct FocusSnapshot {
    #[serde(default)]
    focused_workspace_id: Option<String>,
    #[serde(default)]
    focused_pane_id: Option<String>,
    #[serde(default)]
    layouts: Vec<super::Layout>,
}

impl Herdr {
    /// The current focus, from one `session.snapshot`.
    pub fn focus(&self, deadline: Instant) -> Result<Focus, MuxError> {
        let r = self.call("session.snapshot", json!({}), deadline)?;
        expect_type(&r, "session_snapshot")?;
        let s: FocusSnapshot = field(&r, "snapshot")?;
        Ok(Focus {
            workspace: s.focused_workspace_id.unwrap_or_default(),
            pane: s.focused_pane_id.unwrap_or_default(),
            per_workspace: s
                .layouts
                .into_iter()
                .map(|l| (l.workspace_id, l.focused_pane_id))
                .collect(),
        })
    }

    /// `workspace.focus`.
    pub fn focus_workspace(&self, ws: &str, deadline: Instant) -> Result<(), MuxError> {
        let r = self.call("workspace.focus", json!({"workspace_id": ws}), deadline)?;
        expect_type(&r, "workspace_info")
    }

    /// `pane.focus` (its result type is not pinned by the schema: any success is taken, and the
    /// caller checks the outcome with a fresh snapshot).
    pub fn focus_pane(&self, pane_id: &str, deadline: Instant) -> Result<(), MuxError> {
        let r = self.call("pane.focus", json!({"pane_id": pane_id}), deadline)?;
        match r.get("type").and_then(Value::as_str) {
            Some(_) => Ok(()),
            None => Err(bad("pane.focus result without a type")),
        }
    }

    /// Take the person to `pane_id`: its workspace first (`workspace.focus`), then the pane
    /// (`pane.focus`, which also brings its tab forward), then a fresh snapshot must show that
    /// workspace and pane focused.
    pub fn jump(&self, pane_id: &str, deadline: Instant) -> Result<(), MuxError> {
        let pane = self
            .pane_get(pane_id, deadline)?
            .ok_or_else(|| err(ErrorCode::PaneNotFound, pane_id))?;
        self.focus_workspace(&pane.workspace_id, deadline)?;
        self.focus_pane(pane_id, deadline)?;
        let now = self.focus(deadline)?;
        if now.pane == pane_id && now.workspace == pane.workspace_id {
            Ok(())
        } else {
            Err(err(
                ErrorCode::Failed,
                format!(
                    "focus is on {} in {} after focusing {pane_id}",
                    now.pane, now.workspace
                ),
            ))
        }
    }

    /// Put the focus back as it was in `before`, then check it.
    pub fn restore_focus(&self, before: &Focus, touched_ws: &str, deadline: Instant) -> FocusNote {
        let after = match self.focus(deadline) {
            Ok(a) => a,
            Err(e) => return FocusNote::NotRestored(format!("focus unreadable: {e}")),
        };
        if after.same_as(before, touched_ws) {
            return FocusNote::Unchanged;
        }
        // The touched workspace's own focused pane first (this focuses that workspace), then the
        // person's workspace and pane.
        let mut steps: Vec<Result<(), MuxError>> = Vec::new();
        if let Some(p) = before.of(touched_ws) {
            if after.of(touched_ws) != Some(p) {
                steps.push(self.focus_pane(p, deadline));
            }
        }
        if !before.workspace.is_empty() {
            steps.push(self.focus_workspace(&before.workspace, deadline));
        }
        match self.focus(deadline) {
            Ok(now) if now.pane != before.pane && !before.pane.is_empty() => {
                steps.push(self.focus_pane(&before.pane, deadline));
            }
            _ => {}
        }
        match self.focus(deadline) {
            Ok(now) if now.same_as(before, touched_ws) => FocusNote::Restored,
            Ok(now) => FocusNote::NotRestored(format!(
                "focus is on {} in {} (was {} in {}){}",
                now.pane,
                now.workspace,
                before.pane,
                before.workspace,
                steps
                    .iter()
                    .find_map(|s| s.as_ref().err().map(|e| format!("; {e}")))
                    .unwrap_or_default()
            )),
            Err(e) => FocusNote::NotRestored(format!("focus unreadable: {e}")),
        }
    }

    /// Split down, swap, restore the focus, check the layout, type the command; the new pane and
    /// what happened to the focus.
    pub fn place_above(
        &self,
        req: &SplitAbove,
        deadline: Instant,
    ) -> Result<(PaneInfo, FocusNote), MuxError> {
        if !(10..=90).contains(&req.percent) {
            return Err(err(
                ErrorCode::BadRequest,
                "herdr split percent out of 10..=90",
            ));
        }
        if req.argv.is_empty() {
            return Err(err(ErrorCode::BadRequest, "empty argv"));
        }
        let cwd = match &req.cwd {
            Some(c) => Some(
                c.to_str()
                    .ok_or_else(|| err(ErrorCode::BadRequest, "cwd not UTF-8"))?,
            ),
            None => None,
        };
        let ratio = f64::from(req.percent) / 100.0;
        let before = self.focus(deadline)?;
        let new = self.split(&req.target, true, ratio, cwd, &req.env, deadline)?;
        let swap = self.swap_panes(&req.target, &new.pane_id, deadline);
        // Put the focus back whatever the swap answered: it may have moved it.
        let note = self.restore_focus(&before, &new.workspace_id, deadline);
        let swap = swap?;
        if !swap.changed {
            return Err(err(ErrorCode::Failed, "swap did not change the layout"));
        }
        let layout = self.layout(&req.target, deadline)?;
        let (Some(new_rect), Some(old_rect)) =
            (layout.rect(&new.pane_id), layout.rect(&req.target))
        else {
            return Err(bad("layout without the split panes"));
        };
        if new_rect.y >= old_rect.y {
            return Err(err(ErrorCode::Failed, "new pane is not above the target"));
        }
        self.run(&new.pane_id, &crate::mux::shell_line(&req.argv), deadline)?;
        let info = self.process_info(&new.pane_id, deadline)?;
        let pane = super::listing::to_pane_info(&new, info.as_ref(), Some(new_rect), None, None);
        Ok((pane, note))
    }
}
