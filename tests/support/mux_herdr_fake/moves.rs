//! The fake's `pane.move`, as Herdr 0.8.2 answered it (captures in `fixtures/herdr-0.8.2/moves`,
//! 007–016): a pane moved into another workspace gets that workspace's next pane id and keeps its
//! terminal, label and tokens, and its old id stays an alias (`pane.get`, `pane.process_info`,
//! `pane.close` answer it with the pane as it is now); a move to a new tab of the same workspace
//! keeps the id; a move to a new workspace gives `<ws>:p1` there. A tab left empty is closed.
//! Without `focus:true` nothing of the focus moves.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::focus::split_rects;
use super::tabs::FakeTab;
use super::{error, ok, pane_json, str_param, FakeWorkspace, State, AREA};

/// `pane.move {pane_id, destination, focus}`.
pub fn move_pane(id: &str, params: &Value, s: &mut State) -> Value {
    let asked = str_param(params, "pane_id").unwrap_or("");
    let pane = s.resolve(asked);
    let Some(i) = s.panes.iter().position(|p| p.id == pane) else {
        return error(id, "pane_not_found", &format!("pane {asked} not found"));
    };
    let dest = params.get("destination").cloned().unwrap_or(Value::Null);
    let (prev_id, prev_ws, prev_tab) = {
        let p = &s.panes[i];
        (p.id.clone(), p.workspace_id.clone(), p.tab_id.clone())
    };
    let mut created_tab = None;
    let mut created_ws = None;
    let (ws, tab, rect) = match str_param(&dest, "type") {
        Some("tab") => {
            let tab = str_param(&dest, "tab_id").unwrap_or("").to_string();
            let Some(ws) = s.tab_workspace(&tab) else {
                return error(id, "tab_not_found", &format!("tab {tab} not found"));
            };
            let down = str_param(&dest, "split") == Some("down");
            let ratio = dest.get("ratio").and_then(Value::as_f64).unwrap_or(0.5);
            let target = str_param(&dest, "target_pane_id")
                .map(|t| s.resolve(t))
                .unwrap_or_else(|| s.tab_focused(&tab));
            let Some(t) = s
                .panes
                .iter()
                .position(|p| p.id == target && p.tab_id == tab)
            else {
                return error(id, "pane_not_found", &format!("pane {target} not found"));
            };
            let (keep, new) = split_rects(s.panes[t].rect, down, ratio);
            s.panes[t].rect = keep;
            (ws, tab, new)
        }
        Some("new_tab") => {
            let ws = str_param(&dest, "workspace_id")
                .map(str::to_string)
                .unwrap_or_else(|| prev_ws.clone());
            if !s.workspaces.iter().any(|w| w.id == ws) {
                return error(
                    id,
                    "workspace_not_found",
                    &format!("workspace {ws} not found"),
                );
            }
            let number = 2 + s.tabs.iter().filter(|t| t.workspace_id == ws).count();
            let tab = format!("{ws}:t{number}");
            created_tab = Some((tab.clone(), ws.clone(), number));
            (ws, tab, AREA)
        }
        Some("new_workspace") => {
            let ws = format!("w{}", s.workspaces.len() + 1);
            s.workspaces.push(FakeWorkspace {
                id: ws.clone(),
                label: str_param(&dest, "label").unwrap_or("").to_string(),
                focused_pane: String::new(),
                next_pane: 1,
                active_tab: None,
            });
            created_ws = Some(ws.clone());
            (ws.clone(), format!("{ws}:t1"), AREA)
        }
        _ => return error("", "invalid_request", "failed to parse request"),
    };
    // Another workspace: the workspace's next id; the old ids stay aliases of it.
    let new_id = if ws == prev_ws {
        prev_id.clone()
    } else {
        let n = s.next_pane_id(&ws);
        for now in s.aliases.values_mut().filter(|v| **v == prev_id) {
            *now = n.clone();
        }
        s.aliases.insert(prev_id.clone(), n.clone());
        n
    };
    if let Some((tab_id, ws_id, number)) = &created_tab {
        s.tabs.push(FakeTab {
            id: tab_id.clone(),
            workspace_id: ws_id.clone(),
            label: number.to_string(),
            number: *number,
            cwd: s.panes[i].cwd.clone(),
            env: BTreeMap::new(),
            pane: new_id.clone(),
        });
    }
    {
        let p = &mut s.panes[i];
        p.id = new_id.clone();
        p.workspace_id = ws.clone();
        p.tab_id = tab.clone();
        p.rect = rect;
    }
    if created_ws.is_some() {
        if let Some(w) = s.workspaces.iter_mut().find(|w| w.id == ws) {
            w.focused_pane = new_id.clone();
        }
    }
    // Whatever pointed at the moved pane under its old id now points at the new one.
    for f in s.tab_focus.values_mut().filter(|v| **v == prev_id) {
        *f = new_id.clone();
    }
    if s.focused == prev_id {
        s.focused = new_id.clone();
        s.focused_ws = ws.clone();
    }
    // A created tab left empty is closed.
    let closed_tab = (!s.panes.iter().any(|p| p.tab_id == prev_tab)
        && s.tabs.iter().any(|t| t.id == prev_tab))
    .then(|| prev_tab.clone());
    if let Some(t) = &closed_tab {
        s.tabs.retain(|x| &x.id != t);
        if let Some(w) = s.workspaces.iter_mut().find(|w| w.id == prev_ws) {
            if w.active_tab.as_deref() == Some(t.as_str()) {
                w.active_tab = None;
            }
        }
    }
    if params.get("focus").and_then(Value::as_bool) == Some(true) {
        s.focus_pane(&new_id);
    }
    let focused = s.focused.clone();
    let p = s
        .panes
        .iter()
        .find(|p| p.id == new_id)
        .map(|p| pane_json(p, &focused));
    let mut result = json!({
        "changed": true,
        "focused_pane_id": s.tab_focused(&tab),
        "pane": p,
        "previous_pane_id": prev_id,
        "previous_tab_id": prev_tab,
        "previous_workspace_id": prev_ws,
        "target_layout": s.tab_layout(&tab),
    });
    match &closed_tab {
        Some(t) => result["closed_tab_id"] = json!(t),
        None => result["source_layout"] = s.tab_layout(&prev_tab),
    }
    if created_tab.is_some() || created_ws.is_some() {
        result["created_tab"] = s.tab_info(&tab);
    }
    if let Some(w) = &created_ws {
        let n = s.workspaces.iter().position(|x| &x.id == w).unwrap_or(0);
        let wv = s.workspaces[n].clone();
        result["created_workspace"] = s.workspace_json(&wv, n + 1);
    }
    ok(id, json!({"move_result": result, "type": "pane_move"}))
}
