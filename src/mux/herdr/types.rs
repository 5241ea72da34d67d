//! Herdr's reply shapes (schema protocol 20, as the captures in `fixtures/herdr-0.8.2` show
//! them); unknown fields are ignored.

use std::collections::HashMap;

use serde::Deserialize;

/// A pane as Herdr reports it (`PaneInfo` in the schema); unknown fields are ignored.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct HerdrPane {
    pub pane_id: String,
    pub terminal_id: String,
    pub workspace_id: String,
    pub tab_id: String,
    #[serde(default)]
    pub focused: bool,
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub foreground_cwd: Option<String>,
    #[serde(default)]
    pub label: Option<String>,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub agent: Option<String>,
    #[serde(default)]
    pub tokens: HashMap<String, String>,
}

/// One foreground process of a pane.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct HerdrProcess {
    pub pid: u32,
    pub name: String,
    #[serde(default)]
    pub argv: Option<Vec<String>>,
    #[serde(default)]
    pub cwd: Option<String>,
}

impl HerdrProcess {
    /// The command as tmux's `pane_current_command` names it: the last path part of `argv[0]`
    /// (so `exec -a pi sleep` is `pi` on both), else Herdr's `name` (the program).
    pub fn command(&self) -> &str {
        self.argv
            .as_ref()
            .and_then(|a| a.first())
            .map(|a0| a0.rsplit('/').next().unwrap_or(a0).trim_start_matches('-'))
            .filter(|c| !c.is_empty())
            .unwrap_or(&self.name)
    }
}

/// `pane.process_info`: the pane's shell and its foreground processes (no start times).
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct HerdrProcessInfo {
    pub pane_id: String,
    #[serde(default)]
    pub shell_pid: Option<u32>,
    #[serde(default)]
    pub foreground_process_group_id: Option<u32>,
    #[serde(default)]
    pub foreground_processes: Vec<HerdrProcess>,
    #[serde(default)]
    pub tty: Option<String>,
}

impl HerdrProcessInfo {
    /// The foreground process group leader (else the first foreground process).
    pub fn foreground(&self) -> Option<&HerdrProcess> {
        let leader = self.foreground_process_group_id;
        self.foreground_processes
            .iter()
            .find(|p| Some(p.pid) == leader)
            .or_else(|| self.foreground_processes.first())
    }
}

/// A rectangle in the layout.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
pub struct Rect {
    pub x: u32,
    pub y: u32,
    pub width: u32,
    pub height: u32,
}

/// One pane's place in a layout.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct LayoutPane {
    pub pane_id: String,
    #[serde(default)]
    pub focused: bool,
    pub rect: Rect,
}

/// A tab's layout (`PaneLayoutSnapshot`).
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct Layout {
    pub workspace_id: String,
    pub tab_id: String,
    pub focused_pane_id: String,
    pub panes: Vec<LayoutPane>,
}

impl Layout {
    /// The rectangle of one pane.
    pub fn rect(&self, pane_id: &str) -> Option<Rect> {
        self.panes
            .iter()
            .find(|p| p.pane_id == pane_id)
            .map(|p| p.rect)
    }
}

/// `pane.swap` result.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct SwapResult {
    pub changed: bool,
    pub focused_pane_id: String,
    pub layout: Layout,
}

#[derive(Debug, Clone, Deserialize)]
pub(super) struct Labelled {
    #[serde(default)]
    pub(super) workspace_id: Option<String>,
    #[serde(default)]
    pub(super) tab_id: Option<String>,
    #[serde(default)]
    pub(super) label: Option<String>,
}

/// `session.snapshot`: everything in one answer.
#[derive(Debug, Clone, Deserialize)]
pub(super) struct Snapshot {
    pub(super) version: String,
    pub(super) protocol: u32,
    #[serde(default)]
    pub(super) workspaces: Vec<Labelled>,
    #[serde(default)]
    pub(super) tabs: Vec<Labelled>,
    #[serde(default)]
    pub(super) panes: Vec<HerdrPane>,
    #[serde(default)]
    pub(super) layouts: Vec<Layout>,
}
