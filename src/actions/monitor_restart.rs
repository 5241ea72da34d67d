//! ensure-monitor after a Herdr server restart: the monitor's pane comes back with the same id
//! and label, in the same workspace, but as a fresh shell with a new terminal id; the monitor
//! process and our metadata marker are gone (captures 141–170 of `fixtures/herdr-0.8.2/behaviour`).
//!
//! Why it is still provably ours: Herdr pane ids are never reused on one server (not across a
//! restart either: 135, 169), and the record names the pane, its workspace, the coordinator's
//! pane and both panes' terminal ids. A restart renews every terminal id, so the proof is: the
//! same socket; the coordinator is the recorded pane in the recorded workspace; the recorded
//! monitor pane is there, in that workspace, labelled `Intercom monitor`, without a marker; and
//! both panes' terminal ids differ from the recorded ones. A pane that passes is relaunched in
//! place — only when its shell is in the foreground (nothing else runs there), so nothing is
//! typed into a program.

use std::path::Path;

use super::monitor_run::{
    deadline, write_record, EnsureError, EnsureRefusal, Outcome, MONITOR_NAME,
};
use crate::clock::{format_iso, Ms};
use crate::mux::herdr::Herdr;
use crate::mux::{self, Owner, PaneInfo};
use crate::owned::monitor::{FocusOutcome, MonitorRecord, MonitorStage, Relaunch};

/// The recorded monitor pane, when it is ours after a restart (see the module comment).
pub(crate) fn survivor<'a>(
    prev: &MonitorRecord,
    owner: &Owner,
    panes: &'a [PaneInfo],
) -> Option<&'a PaneInfo> {
    if !owner.kind.caps().panes_survive_restart
        || prev.multiplexer != Some(owner.kind)
        || !prev.is_placed()
    {
        return None;
    }
    if !prev.server.as_ref()?.same_server(&owner.server) {
        return None;
    }
    let workspace = prev.workspace.as_deref()?;
    let pane_terminal = prev.pane_terminal.as_deref()?;
    let caller_terminal = prev.caller_terminal.as_deref()?;
    if prev.caller.as_deref()? != owner.pane.id
        || owner.pane.session_id != workspace
        || owner.pane.terminal_id.as_deref()? == caller_terminal
    {
        return None;
    }
    let id = prev.pane.as_deref()?;
    panes.iter().find(|p| {
        p.id == id
            && p.session_id == workspace
            && p.title.as_deref() == Some(MONITOR_NAME)
            && p.marker.is_none()
            && p.terminal_id.as_deref().is_some_and(|t| t != pane_terminal)
    })
}

/// Start the monitor again in its surviving pane: record `run_pending` (with the new terminal
/// ids and a new marker), mark, type the command, record `submitted`.
pub(crate) fn relaunch(
    prev: &MonitorRecord,
    owner: &Owner,
    pane: &PaneInfo,
    argv: &[String],
    record: &Path,
    now: Ms,
) -> Result<Outcome, EnsureError> {
    // Only a Herdr server brings panes back after a restart (`survivor`).
    let herdr = Herdr::of(owner.kind, &owner.socket_path).ok_or_else(|| EnsureError::Failed {
        stage: MonitorStage::RunPending.as_str().into(),
        detail: "not a Herdr server".into(),
    })?;
    let idle = herdr
        .process_info(&pane.id, deadline())
        .ok()
        .flatten()
        .is_some_and(|i| i.shell_pid.is_some() && i.foreground().map(|f| f.pid) == i.shell_pid);
    if !idle {
        return Err(EnsureError::Refused(EnsureRefusal::PaneBusy(
            pane.id.clone(),
        )));
    }
    let marker = format!("intercom-pane:{}", uuid::Uuid::new_v4());
    let at = format_iso(now);
    let step = |rec: &mut MonitorRecord, to: MonitorStage| {
        rec.advance(to, owner.kind, &at)
            .map_err(|e| EnsureError::Failed {
                stage: to.as_str().into(),
                detail: e.to_string(),
            })
    };
    let mut rec = prev.clone();
    step(&mut rec, MonitorStage::RunPending)?;
    rec.marker = Some(marker.clone());
    rec.pane_terminal = pane.terminal_id.clone();
    rec.caller_terminal = owner.pane.terminal_id.clone();
    rec.server = Some(owner.server.clone());
    rec.relaunched = Some(Relaunch::AfterServerRestart);
    rec.focus = Some(FocusOutcome::Unchanged);
    write_record(record, &rec)?;
    let fail = |e: mux::MuxError| EnsureError::Failed {
        stage: MonitorStage::RunPending.as_str().into(),
        detail: e.to_string(),
    };
    mux::Multiplexer::set_marker(&herdr, &pane.id, &marker, deadline()).map_err(fail)?;
    herdr
        .run(&pane.id, &mux::shell_line(argv), deadline())
        .map_err(fail)?;
    step(&mut rec, MonitorStage::Submitted)?;
    write_record(record, &rec)?;
    Ok(Outcome::Relaunched {
        pane: pane.id.clone(),
    })
}
