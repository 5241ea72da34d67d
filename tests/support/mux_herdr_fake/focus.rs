//! The fake's workspaces, focus, restart and agent detection, as the captures in
//! `fixtures/herdr-0.8.2/behaviour` show them (README §1, §2, §3, §4):
//! - a `pane.swap` that changes the layout focuses the source's workspace and the source pane,
//!   in a focused workspace and in a background one alike (005–025); an unchanged swap (a pane
//!   that does not exist) moves nothing and answers `changed:false, reason:"not_found"` (132);
//! - `workspace.focus` brings back that workspace's own last focused pane (030/031);
//! - a split focuses nothing unless `focus:true`, which focuses its workspace too (026–029);
//! - a restart keeps workspaces, labels, focus, pane ids and cwd, and gives every pane a fresh
//!   shell with a new terminal id: metadata tokens, reported and detected agents are gone
//!   (141–170);
//! - an agent `pi` is detected when a foreground process is named `pi` or has `argv[0]` `pi`
//!   (a copy or a script named `pi`, `exec -a pi …`), never for plain programs (040–047, 109–117).

use serde_json::{json, Value};

use super::{
    error, ok, pane_json, str_param, FakePane, FakeWorkspace, Rect, State, AREA, NO_SHELL,
};

impl State {
    /// The workspace holding `pane_id`.
    pub fn workspace_of(&self, pane_id: &str) -> Option<String> {
        self.panes
            .iter()
            .find(|p| p.id == pane_id)
            .map(|p| p.workspace_id.clone())
    }

    fn ws_mut(&mut self, ws: &str) -> Option<&mut FakeWorkspace> {
        self.workspaces.iter_mut().find(|w| w.id == ws)
    }

    /// The pane an id names now: itself, or the pane it became when moved to another
    /// workspace (captured: the old id stays an alias).
    pub fn resolve(&self, id: &str) -> String {
        self.aliases
            .get(id)
            .cloned()
            .unwrap_or_else(|| id.to_string())
    }

    /// Focus a pane: its workspace becomes the focused one, its tab the one the workspace
    /// shows, and it the focused pane of that tab (captured, `moves` 028/029).
    pub fn focus_pane(&mut self, pane_id: &str) {
        let Some(p) = self.panes.iter().find(|p| p.id == pane_id) else {
            return;
        };
        let (ws, tab) = (p.workspace_id.clone(), p.tab_id.clone());
        if let Some(w) = self.ws_mut(&ws) {
            w.focused_pane = pane_id.to_string();
            w.active_tab = Some(tab.clone());
        }
        self.tab_focus.insert(tab, pane_id.to_string());
        self.focused_ws = ws;
        self.focused = pane_id.to_string();
    }

    /// Focus a workspace: its own last focused pane comes back, in the tab it shows.
    pub fn focus_workspace(&mut self, ws: &str) -> bool {
        if !self.workspaces.iter().any(|w| w.id == ws) {
            return false;
        }
        self.focused_ws = ws.to_string();
        self.focused = self.layout_focus(ws);
        true
    }

    /// `tab.focus`: its workspace is focused and shows it, with the tab's own focused pane
    /// (captured, `moves` 024/025).
    pub fn focus_tab(&mut self, tab: &str) -> bool {
        let Some(ws) = self.tab_workspace(tab) else {
            return false;
        };
        let pane = self.tab_focused(tab);
        if let Some(w) = self.ws_mut(&ws) {
            w.active_tab = Some(tab.to_string());
            w.focused_pane = pane.clone();
        }
        self.focused_ws = ws;
        self.focused = pane;
        true
    }

    /// The tab a workspace shows.
    pub fn active_tab(&self, ws: &str) -> String {
        self.workspaces
            .iter()
            .find(|w| w.id == ws)
            .and_then(|w| w.active_tab.clone())
            .unwrap_or_else(|| format!("{ws}:t1"))
    }

    /// Every tab of a workspace: its first (implicit) and the created ones.
    pub fn tabs_of(&self, ws: &str) -> Vec<String> {
        std::iter::once(format!("{ws}:t1"))
            .chain(
                self.tabs
                    .iter()
                    .filter(|t| t.workspace_id == ws)
                    .map(|t| t.id.clone()),
            )
            .collect()
    }

    /// The workspace a tab belongs to.
    pub fn tab_workspace(&self, tab: &str) -> Option<String> {
        let ws = tab.split(':').next()?.to_string();
        self.tabs_of(&ws).contains(&tab.to_string()).then_some(ws)
    }

    /// A tab's own focused pane: the last one focused in it while it is still there, else the
    /// workspace's focused pane when it is in this tab, else the tab's first pane.
    pub fn tab_focused(&self, tab: &str) -> String {
        let in_tab = |id: &str| self.panes.iter().any(|p| p.id == id && p.tab_id == tab);
        let ws_focus = self
            .tab_workspace(tab)
            .and_then(|ws| self.workspaces.iter().find(|w| w.id == ws))
            .map(|w| w.focused_pane.clone())
            .filter(|p| in_tab(p));
        ws_focus
            .or_else(|| self.tab_focus.get(tab).cloned().filter(|p| in_tab(p)))
            .or_else(|| {
                self.panes
                    .iter()
                    .find(|p| p.tab_id == tab)
                    .map(|p| p.id.clone())
            })
            .unwrap_or_default()
    }

    /// The next pane id of a workspace (never reused).
    pub fn next_pane_id(&mut self, ws: &str) -> String {
        let n = match self.ws_mut(ws) {
            Some(w) => {
                w.next_pane += 1;
                w.next_pane - 1
            }
            None => 1,
        };
        format!("{ws}:p{n}")
    }

    /// A new terminal id (each pane incarnation has its own).
    pub fn next_terminal_id(&mut self) -> String {
        self.next_terminal += 1;
        super::terminal_id(self.next_terminal)
    }

    /// A new workspace (not focused) whose only pane runs a shell `shell_pid` in `cwd`;
    /// returns the new pane's id.
    pub fn add_workspace(&mut self, label: &str, shell_pid: u32, cwd: &str) -> String {
        let ws = format!("w{}", self.workspaces.len() + 1);
        let pane = format!("{ws}:p1");
        self.workspaces.push(FakeWorkspace {
            id: ws.clone(),
            label: label.to_string(),
            focused_pane: pane.clone(),
            next_pane: 2,
            active_tab: None,
        });
        let terminal_id = self.next_terminal_id();
        self.panes.push(FakePane {
            id: pane.clone(),
            terminal_id,
            workspace_id: ws.clone(),
            tab_id: format!("{ws}:t1"),
            label: None,
            cwd: cwd.to_string(),
            tokens: Default::default(),
            shell_pid,
            foreground: vec![(shell_pid, "bash".into(), vec!["/bin/bash".into()])],
            rect: AREA,
        });
        pane
    }

    /// A pane added to workspace `ws` with shell `shell_pid` (placement is not modelled: it
    /// takes the workspace's whole area); returns its id.
    pub fn add_pane(&mut self, ws: &str, shell_pid: u32) -> String {
        let id = self.next_pane_id(ws);
        let terminal_id = self.next_terminal_id();
        self.panes.push(FakePane {
            id: id.clone(),
            terminal_id,
            workspace_id: ws.to_string(),
            tab_id: format!("{ws}:t1"),
            label: None,
            cwd: "/tmp".into(),
            tokens: Default::default(),
            shell_pid,
            foreground: vec![(shell_pid, "bash".into(), vec!["/bin/bash".into()])],
            rect: AREA,
        });
        id
    }

    /// A server stop and start: every pane comes back with its id, label, cwd and place, as a
    /// fresh shell (`new_shell` gives its pid) with a new terminal id; tokens and agents are gone.
    pub fn restart(&mut self, mut new_shell: impl FnMut(&FakePane) -> u32) {
        for i in 0..self.panes.len() {
            let shell = new_shell(&self.panes[i]);
            let terminal_id = self.next_terminal_id();
            let p = &mut self.panes[i];
            p.terminal_id = terminal_id;
            p.tokens.clear();
            p.shell_pid = shell;
            p.foreground = vec![(shell, "bash".into(), vec!["/bin/bash".into()])];
        }
        self.blocked.clear();
    }

    /// The focused pane of the tab a workspace shows.
    pub fn layout_focus(&self, ws: &str) -> String {
        self.tab_focused(&self.active_tab(ws))
    }

    /// One tab's layout (layouts are per tab: captured, `moves` 019).
    pub fn tab_layout(&self, tab: &str) -> Value {
        let focus = self.tab_focused(tab);
        let ws = tab.split(':').next().unwrap_or("");
        json!({
            "area": AREA.json(),
            "focused_pane_id": focus,
            "panes": self.panes.iter().filter(|p| p.tab_id == tab).map(|p| json!({
                "focused": p.id == focus, "pane_id": p.id, "rect": p.rect.json()
            })).collect::<Vec<_>>(),
            "splits": [],
            "tab_id": tab,
            "workspace_id": ws,
            "zoomed": false,
        })
    }

    /// The layout of the tab a workspace shows.
    pub fn layout_json(&self, ws: &str) -> Value {
        self.tab_layout(&self.active_tab(ws))
    }

    /// `WorkspaceInfo` as `workspace.list` shows it.
    pub fn workspace_json(&self, w: &FakeWorkspace, number: usize) -> Value {
        let count = self.panes.iter().filter(|p| p.workspace_id == w.id).count();
        json!({"active_tab_id": self.active_tab(&w.id), "agent_status": "unknown",
               "focused": w.id == self.focused_ws, "label": w.label, "number": number,
               "pane_count": count, "workspace_id": w.id,
               "tab_count": 1 + self.tabs.iter().filter(|t| t.workspace_id == w.id).count()})
    }

    fn workspaces_json(&self) -> Vec<Value> {
        self.workspaces
            .iter()
            .enumerate()
            .map(|(i, w)| self.workspace_json(w, i + 1))
            .collect()
    }

    /// `session.snapshot`: focus, workspaces, tabs, panes and one layout per tab.
    pub fn snapshot_json(&self) -> Value {
        let focused = self.focused.clone();
        let focused_tab = self
            .panes
            .iter()
            .find(|p| p.id == focused)
            .map(|p| p.tab_id.clone())
            .unwrap_or_else(|| format!("{}:t1", self.focused_ws));
        let tabs: Vec<String> = self
            .workspaces
            .iter()
            .flat_map(|w| self.tabs_of(&w.id))
            .collect();
        json!({
            "agents": [],
            "focused_pane_id": focused,
            "focused_tab_id": focused_tab,
            "focused_workspace_id": self.focused_ws,
            "layouts": tabs.iter().map(|t| self.tab_layout(t)).collect::<Vec<_>>(),
            "panes": self.panes.iter().map(|p| pane_json(p, &focused)).collect::<Vec<_>>(),
            "protocol": self.protocol,
            "tabs": self.workspaces.iter().map(|w| json!({
                "agent_status": "unknown",
                "focused": format!("{}:t1", w.id) == focused_tab,
                "label": "1", "number": 1,
                "pane_count": self.panes.iter().filter(|p| p.tab_id == format!("{}:t1", w.id)).count(),
                "tab_id": format!("{}:t1", w.id), "workspace_id": w.id}))
                .chain(self.tabs.iter().map(|t| self.tab_json(t))).collect::<Vec<_>>(),
            "version": self.version,
            "workspaces": self.workspaces_json(),
        })
    }

    /// `pane.swap` of a pane with its neighbour in `direction` (the pane whose rectangle touches
    /// that side and overlaps it); none there: `changed:false, reason:"no_neighbor"`, nothing
    /// moves (015/016); else as a swap by source and target (017/018).
    pub fn swap_direction_json(&mut self, id: &str, pane: &str, direction: &str) -> Value {
        let Some(r) = self.panes.iter().find(|p| p.id == pane).map(|p| p.rect) else {
            return error(id, "pane_not_found", &format!("pane {pane} not found"));
        };
        let ws = self.workspace_of(pane).unwrap_or_default();
        let overlap_y = |o: &Rect| o.y < r.y + r.height && r.y < o.y + o.height;
        let overlap_x = |o: &Rect| o.x < r.x + r.width && r.x < o.x + o.width;
        let neighbour = self.panes.iter().find(|p| {
            let o = &p.rect;
            p.workspace_id == ws
                && p.id != pane
                && match direction {
                    "left" => o.x + o.width == r.x && overlap_y(o),
                    "right" => r.x + r.width == o.x && overlap_y(o),
                    "up" => o.y + o.height == r.y && overlap_x(o),
                    "down" => r.y + r.height == o.y && overlap_x(o),
                    _ => false,
                }
        });
        match neighbour.map(|p| p.id.clone()) {
            Some(n) => self.swap_json(id, Some(pane), Some(&n)),
            None => ok(
                id,
                json!({"swap": {"changed": false, "focused_pane_id": self.layout_focus(&ws),
                        "layout": self.layout_json(&ws), "reason": "no_neighbor",
                        "source_pane_id": pane}, "type": "pane_swap"}),
            ),
        }
    }

    /// `pane.swap` by source and target: rectangles exchanged, focus to the source.
    pub fn swap_json(&mut self, id: &str, src: Option<&str>, dst: Option<&str>) -> Value {
        let a = src.and_then(|x| self.panes.iter().position(|p| p.id == x));
        let b = dst.and_then(|x| self.panes.iter().position(|p| p.id == x));
        let (Some(a), Some(b)) = (a, b) else {
            // Captured (132): rc 0, nothing changed, the focused workspace's layout.
            let ws = self.focused_ws.clone();
            return ok(
                id,
                json!({"swap": {"changed": false, "focused_pane_id": self.focused,
                        "layout": self.layout_json(&ws), "reason": "not_found",
                        "source_pane_id": src, "target_pane_id": dst}, "type": "pane_swap"}),
            );
        };
        let changed = a != b;
        if changed {
            let ra = self.panes[a].rect;
            self.panes[a].rect = self.panes[b].rect;
            self.panes[b].rect = ra;
            let source = self.panes[a].id.clone();
            self.focus_pane(&source);
        }
        let tab = self.panes[a].tab_id.clone();
        ok(
            id,
            json!({"swap": {"changed": changed, "focused_pane_id": self.tab_focused(&tab),
                    "layout": self.tab_layout(&tab), "source_pane_id": src, "target_pane_id": dst},
                   "type": "pane_swap"}),
        )
    }
}

/// The agent Herdr detects in a pane, as captured: a foreground process named `pi` (a copy or a
/// script named so), or one whose `argv[0]` (its last path part) is `pi` (`exec -a pi …`);
/// behaviour captures 042-048, 109-117.
pub fn detected_agent(p: &FakePane) -> Option<&'static str> {
    let is_pi = |name: &str, argv: &[String]| {
        name == "pi"
            || argv
                .first()
                .is_some_and(|a0| a0.rsplit('/').next() == Some("pi"))
    };
    p.foreground
        .iter()
        .any(|(_, name, argv)| is_pi(name, argv))
        .then_some("pi")
}

/// The rectangles of a split of `r`: the existing pane keeps `ratio` (top or left).
pub fn split_rects(r: Rect, down: bool, ratio: f64) -> (Rect, Rect) {
    if down {
        let h1 = ((f64::from(r.height) * ratio).round() as u32).clamp(1, r.height - 1);
        (
            Rect { height: h1, ..r },
            Rect {
                y: r.y + h1,
                height: r.height - h1,
                ..r
            },
        )
    } else {
        let w1 = ((f64::from(r.width) * ratio).round() as u32).clamp(1, r.width - 1);
        (
            Rect { width: w1, ..r },
            Rect {
                x: r.x + w1,
                width: r.width - w1,
                ..r
            },
        )
    }
}

/// Methods beyond the pane basics: workspaces and focus. `None` for a method not handled here.
pub fn handle_more(method: &str, id: &str, params: &Value, s: &mut State) -> Option<Value> {
    if s.refuse_focus && matches!(method, "workspace.focus" | "pane.focus") {
        return Some(error(id, "internal_error", "focus refused by the test"));
    }
    let reply = match method {
        "tab.create" => super::tabs::create(id, params, s),
        "tab.focus" => {
            let tab = str_param(params, "tab_id").unwrap_or("");
            if !s.focus_tab(tab) {
                return Some(error(id, "tab_not_found", &format!("tab {tab} not found")));
            }
            let t = s.tab_info(tab);
            ok(id, json!({"tab": t, "type": "tab_info"}))
        }
        "pane.move" => super::moves::move_pane(id, params, s),
        "workspace.list" => ok(
            id,
            json!({"type": "workspace_list", "workspaces": s.workspaces_json()}),
        ),
        "workspace.create" => {
            let label = str_param(params, "label").unwrap_or("").to_string();
            let cwd = str_param(params, "cwd").unwrap_or("/tmp").to_string();
            let pane = s.add_workspace(&label, NO_SHELL, &cwd);
            if params.get("focus").and_then(Value::as_bool) != Some(false)
                || s.focused_ws.is_empty()
            {
                s.focus_pane(&pane);
            }
            let n = s.workspaces.len();
            let w = s.workspaces[n - 1].clone();
            let focused = s.focused.clone();
            let root = s
                .panes
                .iter()
                .find(|p| p.id == pane)
                .map(|p| pane_json(p, &focused));
            ok(
                id,
                json!({"root_pane": root, "type": "workspace_created",
                       "workspace": s.workspace_json(&w, n)}),
            )
        }
        "workspace.focus" => {
            let ws = str_param(params, "workspace_id").unwrap_or("");
            if !s.focus_workspace(ws) {
                return Some(error(
                    id,
                    "workspace_not_found",
                    &format!("workspace {ws} not found"),
                ));
            }
            let n = s.workspaces.iter().position(|w| w.id == ws).unwrap_or(0);
            let w = s.workspaces[n].clone();
            ok(
                id,
                json!({"type": "workspace_info", "workspace": s.workspace_json(&w, n + 1)}),
            )
        }
        "pane.focus" => {
            let pid = str_param(params, "pane_id").unwrap_or("");
            let Some(i) = s.panes.iter().position(|p| p.id == pid) else {
                return Some(error(
                    id,
                    "pane_not_found",
                    &format!("pane {pid} not found"),
                ));
            };
            s.focus_pane(pid);
            let focused = s.focused.clone();
            ok(
                id,
                json!({"pane": pane_json(&s.panes[i], &focused), "type": "pane_info"}),
            )
        }
        _ => return None,
    };
    Some(reply)
}
