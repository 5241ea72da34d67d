//! A new pane above an existing one, and the person's focus kept where it was.
//!
//! Herdr cannot split above: split down (the existing pane keeps `percent`), swap so the new
//! pane is on top, check the layout, type the command. A swap that changes the layout focuses
//! the swap's source pane, its tab and its workspace — in a background workspace too, where the
//! swapped tab becomes the one that workspace shows (captures 005–025 of
//! `fixtures/herdr-0.8.2/behaviour`, 019–029 of `moves`). So the focus is read before the swap
//! and put back right after it: the touched tab's own focused pane (`pane.focus`), the tab the
//! touched workspace showed (`tab.focus`), then the workspace and pane the person was on
//! (`workspace.focus`, `pane.focus` when that is not enough). A last snapshot says whether it
//! worked, on every one of those (`FOCUS_CHECKED`).

use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::wire::{bad, err, expect_type, field};
use super::{Herdr, HerdrPane, PaneInfo};
use crate::mux::{ErrorCode, MuxError, SplitAbove};

/// Who has the focus, and what each workspace shows: layouts are per tab (each with its own
/// focused pane) and each workspace shows one tab (`workspaces[].active_tab_id`), captures
/// 019–029 of `fixtures/herdr-0.8.2/moves`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Focus {
    pub workspace: String,
    pub tab: String,
    pub pane: String,
    /// (tab, its layout's focused pane).
    pub per_tab: Vec<(String, String)>,
    /// (workspace, the tab it shows).
    pub visible_tab: Vec<(String, String)>,
}

/// The workspace and tab a placement touched.
#[derive(Debug, Clone, Copy)]
pub struct Touched<'a> {
    pub workspace: &'a str,
    pub tab: &'a str,
}

fn lookup<'a>(pairs: &'a [(String, String)], key: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

impl Focus {
    /// The focused pane of tab `tab`.
    pub fn pane_of_tab(&self, tab: &str) -> Option<&str> {
        lookup(&self.per_tab, tab)
    }

    /// The tab workspace `ws` shows.
    pub fn tab_of(&self, ws: &str) -> Option<&str> {
        lookup(&self.visible_tab, ws)
    }

    /// What differs from `before` of what a person sees (the focused workspace, tab and pane,
    /// the tab every workspace shows) and of the touched tab's own focused pane; empty when
    /// nothing does. These are exactly the things a restore is checked on.
    fn differences(&self, before: &Focus, t: Touched) -> Vec<String> {
        let mut out = Vec::new();
        if (&self.workspace, &self.tab, &self.pane)
            != (&before.workspace, &before.tab, &before.pane)
        {
            out.push(format!(
                "focus is on {} in {} / {} (was {} in {} / {})",
                self.pane, self.workspace, self.tab, before.pane, before.workspace, before.tab
            ));
        }
        for (ws, tab) in &before.visible_tab {
            if self.tab_of(ws).is_some_and(|now| now != tab) {
                out.push(format!(
                    "workspace {ws} shows tab {} (was {tab})",
                    self.tab_of(ws).unwrap_or("")
                ));
            }
        }
        if self.pane_of_tab(t.tab) != before.pane_of_tab(t.tab) {
            out.push(format!(
                "tab {} focuses {} (was {})",
                t.tab,
                self.pane_of_tab(t.tab).unwrap_or("none"),
                before.pane_of_tab(t.tab).unwrap_or("none")
            ));
        }
        out
    }
}

/// What the placement did to the person's focus (said in the ownership record's `focus`:
/// `owned::monitor::FocusOutcome`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FocusNote {
    /// The focus never moved.
    Unchanged,
    /// The swap moved it; it was put back and checked.
    Restored,
    /// The swap moved it and it could not be put back (the detail says how far it got).
    NotRestored(String),
}

/// The least time `restore_focus` has, whatever was left of its caller's deadline.
const FOCUS_BACK_WITHIN: std::time::Duration = std::time::Duration::from_secs(3);

/// What a `FocusNote` was checked on (the record's `focusChecked`).
pub(crate) const FOCUS_CHECKED: &str = "the focused workspace, tab and pane; the tab each workspace shows; the focused pane of the coordinator's tab";

#[derive(Deserialize)]
struct TabLayout {
    tab_id: String,
    #[serde(default)]
    focused_pane_id: Option<String>,
}

#[derive(Deserialize)]
struct ShownTab {
    workspace_id: String,
    #[serde(default)]
    active_tab_id: Option<String>,
}

#[derive(Deserialize)]
struct FocusSnapshot {
    #[serde(default)]
    focused_workspace_id: Option<String>,
    #[serde(default)]
    focused_tab_id: Option<String>,
    #[serde(default)]
    focused_pane_id: Option<String>,
    #[serde(default)]
    layouts: Vec<TabLayout>,
    #[serde(default)]
    workspaces: Vec<ShownTab>,
}

impl Herdr {
    /// The current focus, from one `session.snapshot`.
    pub fn focus(&self, deadline: Instant) -> Result<Focus, MuxError> {
        let r = self.call("session.snapshot", super::params::NoParams {}, deadline)?;
        expect_type(&r, "session_snapshot")?;
        let s: FocusSnapshot = field(&r, "snapshot")?;
        Ok(Focus {
            workspace: s.focused_workspace_id.unwrap_or_default(),
            tab: s.focused_tab_id.unwrap_or_default(),
            pane: s.focused_pane_id.unwrap_or_default(),
            per_tab: s
                .layouts
                .into_iter()
                .filter_map(|l| Some((l.tab_id, l.focused_pane_id?)))
                .collect(),
            visible_tab: s
                .workspaces
                .into_iter()
                .filter_map(|w| Some((w.workspace_id, w.active_tab_id?)))
                .collect(),
        })
    }

    /// `workspace.focus`.
    pub fn focus_workspace(&self, ws: &str, deadline: Instant) -> Result<(), MuxError> {
        let r = self.call(
            "workspace.focus",
            super::params::OptWorkspace {
                workspace_id: Some(ws),
            },
            deadline,
        )?;
        expect_type(&r, "workspace_info")
    }

    /// `tab.focus` (it focuses the tab's workspace too: capture 024/025).
    pub fn focus_tab(&self, tab: &str, deadline: Instant) -> Result<(), MuxError> {
        let r = self.call("tab.focus", super::params::Tab { tab_id: tab }, deadline)?;
        expect_type(&r, "tab_info")
    }

    /// `pane.focus` (its result type is not pinned by the schema: any success is taken, and the
    /// caller checks the outcome with a fresh snapshot).
    pub fn focus_pane(&self, pane_id: &str, deadline: Instant) -> Result<(), MuxError> {
        let r = self.call("pane.focus", super::params::Pane { pane_id }, deadline)?;
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

    /// Put the focus back as it was in `before`, then check it (`Focus::differences`): the
    /// touched tab's own focused pane (`pane.focus`, which also shows that tab), the tab the
    /// touched workspace showed (`tab.focus`), the person's workspace (`workspace.focus`) and
    /// pane (`pane.focus`). Only a fresh snapshot that shows no difference says `Restored`.
    pub fn restore_focus(&self, before: &Focus, t: Touched, deadline: Instant) -> FocusNote {
        // Its own time, however much of the caller's the steps before it used: a slow swap must
        // not leave the person's focus where the swap put it.
        let deadline = deadline.max(Instant::now() + FOCUS_BACK_WITHIN);
        let after = match self.focus(deadline) {
            Ok(a) => a,
            Err(e) => return FocusNote::NotRestored(format!("focus unreadable: {e}")),
        };
        if after.differences(before, t).is_empty() {
            return FocusNote::Unchanged;
        }
        let mut steps: Vec<Result<(), MuxError>> = Vec::new();
        if let Some(p) = before.pane_of_tab(t.tab) {
            if after.pane_of_tab(t.tab) != Some(p) {
                steps.push(self.focus_pane(p, deadline));
            }
        }
        if let Some(shown) = before.tab_of(t.workspace) {
            if self
                .focus(deadline)
                .is_ok_and(|now| now.tab_of(t.workspace) != Some(shown))
            {
                steps.push(self.focus_tab(shown, deadline));
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
            Ok(now) => {
                let left = now.differences(before, t);
                if left.is_empty() {
                    FocusNote::Restored
                } else {
                    FocusNote::NotRestored(format!(
                        "{}{}",
                        left.join("; "),
                        steps
                            .iter()
                            .find_map(|s| s.as_ref().err().map(|e| format!("; {e}")))
                            .unwrap_or_default()
                    ))
                }
            }
            Err(e) => FocusNote::NotRestored(format!("focus unreadable: {e}")),
        }
    }

    /// The stages of a placement, each one step a caller can record before it and resume
    /// after a crash: `split_below` (no focus change), `swap_above` (swap, focus put back,
    /// layout checked), then `run` the command. `place_above` does all three.
    pub fn split_below(&self, req: &SplitAbove, deadline: Instant) -> Result<HerdrPane, MuxError> {
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
        self.split(&req.target, true, ratio, cwd, &req.env, deadline)
    }

    /// Whether `new` is above `target` in their tab's layout (`Ok(None)`: one is not there).
    pub fn is_above(
        &self,
        target: &str,
        new: &str,
        deadline: Instant,
    ) -> Result<Option<bool>, MuxError> {
        let layout = self.layout(target, deadline)?;
        Ok(match (layout.rect(new), layout.rect(target)) {
            (Some(n), Some(t)) => Some(n.y < t.y),
            _ => None,
        })
    }

    /// Swap `new` (split below `target`) above it, put the focus back as it was in `before`,
    /// and check the layout. A pane already above (a swap done by a run that then died) is not
    /// swapped again.
    pub fn swap_above(
        &self,
        target: &str,
        new: &HerdrPane,
        before: &Focus,
        deadline: Instant,
    ) -> Result<FocusNote, MuxError> {
        let touched = Touched {
            workspace: &new.workspace_id,
            tab: &new.tab_id,
        };
        let note = match self.is_above(target, &new.pane_id, deadline)? {
            Some(true) => self.restore_focus(before, touched, deadline),
            Some(false) => {
                let swap = self.swap_panes(target, &new.pane_id, deadline);
                // Put the focus back whatever the swap answered: it may have moved it.
                let note = self.restore_focus(before, touched, deadline);
                if !swap?.changed {
                    return Err(err(ErrorCode::Failed, "swap did not change the layout"));
                }
                note
            }
            None => return Err(bad("layout without the split panes")),
        };
        match self.is_above(target, &new.pane_id, deadline)? {
            Some(true) => Ok(note),
            Some(false) => Err(err(ErrorCode::Failed, "new pane is not above the target")),
            None => Err(bad("layout without the split panes")),
        }
    }

    /// Split down, swap, restore the focus, check the layout, type the command; the new pane and
    /// what happened to the focus.
    pub fn place_above(
        &self,
        req: &SplitAbove,
        deadline: Instant,
    ) -> Result<(PaneInfo, FocusNote), MuxError> {
        let before = self.focus(deadline)?;
        let new = self.split_below(req, deadline)?;
        let note = self.swap_above(&req.target, &new, &before, deadline)?;
        self.run(&new.pane_id, &crate::mux::shell_line(&req.argv), deadline)?;
        let info = self.process_info(&new.pane_id, deadline)?;
        let rect = self.layout(&req.target, deadline)?.rect(&new.pane_id);
        let pane = super::listing::to_pane_info(&new, info.as_ref(), rect, None, None);
        Ok((pane, note))
    }
}
