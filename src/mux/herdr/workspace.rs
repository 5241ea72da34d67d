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

/// What `create_and_start` makes: a tab in the coordinator's workspace, or a workspace.
#[derive(Clone, Copy)]
pub(super) enum Creation<'a> {
    Tab { workspace_id: &'a str },
    Workspace,
}

impl Creation<'_> {
    /// Method, reply type, the reply's id of what was made, and that id's name (the pane's field).
    fn words(self) -> (&'static str, &'static str, &'static str, &'static str) {
        match self {
            Creation::Tab { .. } => ("tab.create", "tab_created", "/tab/tab_id", "tab"),
            Creation::Workspace => (
                "workspace.create",
                "workspace_created",
                "/workspace/workspace_id",
                "workspace",
            ),
        }
    }
}

impl Herdr {
    /// A new workspace labelled `req.name` in `req.cwd` with `req.env`, left unfocused; the
    /// command typed into its root pane (only when that pane is in that workspace).
    pub(crate) fn open_workspace(
        &self,
        req: &NewWindow,
        deadline: Instant,
    ) -> Result<PaneInfo, MuxError> {
        self.create_and_start(Creation::Workspace, req, deadline)
    }

    /// `tab.create` or `workspace.create` without focus, then the command typed into the new
    /// root pane (Herdr starts a shell and runs no program of its own) — only when the reply's
    /// root pane is in what it says it made (the schema requires both).
    pub(super) fn create_and_start(
        &self,
        what: Creation<'_>,
        req: &NewWindow,
        deadline: Instant,
    ) -> Result<PaneInfo, MuxError> {
        let (cwd, env) = place_of(req)?;
        let (method, reply, id_at, noun) = what.words();
        let workspace_id = match what {
            Creation::Tab { workspace_id } => Some(workspace_id),
            Creation::Workspace => None,
        };
        let r = self.call(
            method,
            super::params::Create {
                workspace_id,
                cwd,
                env: &env,
                focus: false,
                label: &req.name,
            },
            deadline,
        )?;
        expect_type(&r, reply)?;
        let id = r
            .pointer(id_at)
            .and_then(Value::as_str)
            .ok_or_else(|| bad(&format!("{reply} without a {noun} id")))?;
        let root: HerdrPane = field(&r, "root_pane")?;
        let root_in = match what {
            Creation::Tab { .. } => &root.tab_id,
            Creation::Workspace => &root.workspace_id,
        };
        if root_in != id {
            return Err(bad(&format!("{reply}'s root pane is in another {noun}")));
        }
        self.start_in(&root, req, deadline)
    }
}
