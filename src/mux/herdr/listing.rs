//! The pane list from Herdr's answers: one `session.snapshot` (panes, labels, geometry), then
//! `pane.process_info` per pane (Herdr has no batched process query, and liveness needs each
//! pane's foreground process). Pure: `list_panes` feeds it the live answers, and
//! `listing_from_replies` the reply lines as they come off the socket (the fuzz target's entry).

use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;

use super::types::Snapshot;
use super::wire::{self, bad, expect_type, field};
use super::{HerdrPane, HerdrProcessInfo, Rect, MARKER_TOKEN, MAX_PANES};
use crate::mux::{ErrorCode, MuxError, PaneInfo, PaneList, ServerIdentity};
use crate::text::sanitize;

/// A `pane.process_info` answer: `Ok(None)` on `pane_not_found`.
pub(super) fn process_info_of(
    answer: Result<Value, MuxError>,
) -> Result<Option<HerdrProcessInfo>, MuxError> {
    match answer {
        Ok(r) => {
            expect_type(&r, "pane_process_info")?;
            field(&r, "process_info").map(Some)
        }
        Err(e) if e.code == ErrorCode::PaneNotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// The list from a snapshot and each pane's process info (`info(pane_id)`, asked in pane
/// order); at most `MAX_PANES` panes.
pub(super) fn assemble(
    socket: &Path,
    pong_version: &str,
    snap: &Snapshot,
    mut info: impl FnMut(&str) -> Result<Option<HerdrProcessInfo>, MuxError>,
) -> Result<PaneList, MuxError> {
    if snap.panes.len() > MAX_PANES {
        return Err(bad("more panes than we list"));
    }
    let ws: HashMap<&str, &str> = snap
        .workspaces
        .iter()
        .filter_map(|w| Some((w.workspace_id.as_deref()?, w.label.as_deref()?)))
        .collect();
    let tabs: HashMap<&str, &str> = snap
        .tabs
        .iter()
        .filter_map(|t| Some((t.tab_id.as_deref()?, t.label.as_deref()?)))
        .collect();
    let mut panes = Vec::with_capacity(snap.panes.len());
    for p in &snap.panes {
        // A pane closed since the snapshot is simply left out.
        let Some(info) = info(&p.pane_id)? else {
            continue;
        };
        let rect = snap.layouts.iter().find_map(|l| l.rect(&p.pane_id));
        panes.push(to_pane_info(
            p,
            Some(&info),
            rect,
            ws.get(p.workspace_id.as_str()).copied(),
            tabs.get(p.tab_id.as_str()).copied(),
        ));
    }
    let server = ServerIdentity::Herdr {
        socket_path: socket.to_string_lossy().into_owned(),
        version: if snap.version.is_empty() {
            pong_version.to_string()
        } else {
            sanitize(&snap.version)
        },
        protocol: snap.protocol,
    };
    Ok(PaneList {
        server: Some(server),
        panes,
    })
}

/// The pane list from reply lines as Herdr sends them (request id `"f"` on each): one
/// `session.snapshot` reply, then the `pane.process_info` replies in pane order (a pane without
/// one is gone). The same parsing and assembly as a live listing.
pub fn listing_from_replies(
    snapshot: &[u8],
    process_infos: &[&[u8]],
) -> Result<PaneList, MuxError> {
    let r = wire::parse_reply(snapshot, "f")?;
    expect_type(&r, "session_snapshot")?;
    let snap: Snapshot = field(&r, "snapshot")?;
    let mut lines = process_infos.iter();
    assemble(Path::new("/herdr.sock"), "", &snap, |_| {
        match lines.next() {
            Some(line) => process_info_of(wire::parse_reply(line, "f")),
            None => Ok(None),
        }
    })
}

/// A pane with its process info (shell pid, foreground command); geometry and names only
/// when given.
pub(super) fn to_pane_info(
    p: &HerdrPane,
    info: Option<&HerdrProcessInfo>,
    rect: Option<Rect>,
    workspace_label: Option<&str>,
    tab_label: Option<&str>,
) -> PaneInfo {
    let fg = info.and_then(HerdrProcessInfo::foreground);
    PaneInfo {
        id: p.pane_id.clone(),
        pid: info
            .and_then(|i| i.shell_pid)
            .and_then(|p| i32::try_from(p).ok())
            .filter(|&p| p > 0),
        tty: info
            .and_then(|i| i.tty.clone())
            .filter(|t| t.starts_with("/dev/")),
        current_command: fg.map(|f| sanitize(f.command())).filter(|s| !s.is_empty()),
        cwd: p
            .foreground_cwd
            .clone()
            .or_else(|| p.cwd.clone())
            .filter(|c| c.starts_with('/')),
        session_id: p.workspace_id.clone(),
        session_name: workspace_label.map(str::to_string),
        window_id: p.tab_id.clone(),
        window_name: tab_label.map(sanitize),
        top: rect.map(|r| r.y),
        left: rect.map(|r| r.x),
        width: rect.map(|r| r.width),
        height: rect.map(|r| r.height),
        dead: false,
        title: p.label.as_deref().map(sanitize),
        marker: p.tokens.get(MARKER_TOKEN).map(|m| sanitize(m)),
        terminal_id: Some(p.terminal_id.clone()),
    }
}
