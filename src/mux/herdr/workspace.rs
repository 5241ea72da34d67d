//! A workspace of its own for `restore`'s coordinator on a Herdr server that answers (Herdr's
//! `workspace.create`, without focus), its root pane running the agent's command.
//!
//! Why not the server too, as tmux's `new-session` starts one: a Herdr server is the person's
//! (`herdr` starts or attaches it, with their config and UI); restore only uses one that runs.

use std::time::Instant;

use serde_json::Value;

use super::wire::{bad, expect_type, field};
use super::{place_of, Herdr, HerdrPane};
use crate::mux::{MuxError, NewWindow, PaneInfo};

impl Herdr {
    /// A new workspace labelled `req.name` in `req.cwd` with `req.env`, left unfocused; the
    /// command typed into its root pane (only when that pane is in that workspace).
    pub(crate) fn open_workspace(
        &self,
        req: &NewWindow,
        deadline: Instant,
    ) -> Result<PaneInfo, MuxError> {
        let (cwd, env) = place_of(req)?;
        let r = self.call(
            "workspace.create",
            super::params::Create {
                workspace_id: None,
                cwd,
                env: &env,
                focus: false,
                label: &req.name,
            },
            deadline,
        )?;
        expect_type(&r, "workspace_created")?;
        let ws = r
            .pointer("/workspace/workspace_id")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("workspace_created without a workspace id"))?;
        let root: HerdrPane = field(&r, "root_pane")?;
        if root.workspace_id != ws {
            return Err(bad("workspace_created's root pane is in another workspace"));
        }
        self.start_in(&root, req, deadline)
    }
}
