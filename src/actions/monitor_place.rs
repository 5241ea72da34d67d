//! Placing a new monitor pane in stages, each recorded before its step, so that a run that
//! died half-way (killed by its caller, a crash, a lost machine) is taken up again by the next
//! run instead of fencing every later start (docs/behaviour.md §5):
//!
//! - `split_pending`: split below the coordinator without focus (tmux: `split-window -b -d`,
//!   already above and running the monitor). The new pane's environment carries this record's
//!   marker (`PLACING_ENV`), so a pane split by a run that died before recording it is found
//!   again (its shell's `/proc/<pid>/environ`) and adopted, never split twice;
//! - `swap_pending` (Herdr): swap it above, put the person's focus back (the focus before the
//!   split is recorded), check the layout;
//! - `label_pending`: our marker (a pane option / metadata token) and the label;
//! - `run_pending` (Herdr): type the monitor's command into the pane's shell, only while that
//!   shell is in the foreground (a command typed by a run that died just after is not typed
//!   twice);
//! - `submitted`.
//!
//! A step that fails closes the pane this placement made (proven ours: its id, terminal and
//! marker) and removes the record, so nothing half-made is left and nothing is fenced. A
//! pending record that cannot be taken up (no marker, another server, another coordinator pane)
//! is fenced as before until `--recover`.

use std::path::Path;

use super::monitor_run::{deadline, write_record, EnsureError, Outcome, MONITOR_NAME};
use crate::clock::{format_iso, Ms};
use crate::mux::herdr::{Focus, FocusNote, Herdr, HerdrPane};
use crate::mux::{self, Multiplexer, Owner, PaneIdentity, SplitAbove};
use crate::owned::monitor::{
    FocusOutcome, MonitorRecord, MonitorStage, PlacementKind, RecordedStage,
};
use crate::store;

/// The environment variable a new monitor pane is given: the placement's marker.
pub(crate) const PLACING_ENV: &str = "INTERCOM_PANE_PLACING";

/// How many stages a placement records at most before `submitted` ends it.
const STAGES: usize = 4;

/// What one placement needs.
pub(crate) struct Placement<'a> {
    pub owner: &'a Owner,
    pub mux: &'a dyn Multiplexer,
    pub root: &'a Path,
    pub record: &'a Path,
    pub coordinator_session: &'a str,
    pub argv: &'a [String],
    pub percent: u8,
    pub now: Ms,
}

/// Whether this run may take up a pending record: one of ours, in a stage of this placement, for
/// the same coordinator pane on the same server, with its marker. Any other pending record is
/// fenced.
pub(crate) fn resumable(prev: &MonitorRecord, owner: &Owner) -> bool {
    prev.stage().is_some_and(MonitorStage::is_ours_pending)
        && prev.marker().is_some()
        && prev.multiplexer == Some(owner.kind)
        && prev
            .server
            .as_ref()
            .is_some_and(|s| s.same_server(&owner.server))
        && prev.caller.as_deref() == Some(owner.pane.id.as_str())
        && prev.caller_terminal == owner.pane.terminal_id
}

/// A stage's name, as `fail` says it.
trait StageName {
    fn name(&self) -> &str;
}

impl StageName for MonitorStage {
    fn name(&self) -> &str {
        self.as_str()
    }
}

impl StageName for &str {
    fn name(&self) -> &str {
        self
    }
}

fn fail(stage: impl StageName, e: impl std::fmt::Display) -> EnsureError {
    EnsureError::Failed {
        stage: stage.name().to_string(),
        detail: e.to_string(),
    }
}

impl Placement<'_> {
    /// A fresh record at `split_pending`.
    fn fresh(&self) -> MonitorRecord {
        MonitorRecord {
            version: Some(1),
            session_id: Some(self.coordinator_session.to_string()),
            workspace: Some(self.owner.pane.session_id.clone()),
            caller: Some(self.owner.pane.id.clone()),
            caller_terminal: self.owner.pane.terminal_id.clone(),
            stage: Some(RecordedStage::Known(MonitorStage::SplitPending)),
            multiplexer: Some(self.owner.kind),
            socket: Some(self.owner.socket_path.display().to_string()),
            server: Some(self.owner.server.clone()),
            window_id: Some(self.owner.pane.window_id.clone()),
            marker: Some(format!("intercom-pane:{}", uuid::Uuid::new_v4())),
            updated_at: Some(format_iso(self.now)),
            pane: None,
            pane_terminal: None,
            adopted: None,
            focus_before: None,
            placement: None,
            focus: None,
            focus_checked: None,
            focus_detail: None,
            resumed_at: None,
            relaunched: None,
            other: serde_json::Map::new(),
        }
    }

    fn herdr(&self) -> Option<Herdr> {
        Herdr::of(self.owner.kind, &self.owner.socket_path)
    }

    /// Record `stage` (when the stage rule allows it), before its step is taken.
    fn write(&self, rec: &mut MonitorRecord, stage: MonitorStage) -> Result<(), EnsureError> {
        rec.advance(stage, self.owner.kind, &format_iso(self.now))
            .map_err(|e| fail(stage, e))?;
        write_record(self.record, rec)?;
        test_pause(stage.as_str());
        Ok(())
    }

    /// The stage after `stage` on this multiplexer.
    fn next(&self, stage: MonitorStage) -> Result<MonitorStage, EnsureError> {
        stage
            .next(self.owner.kind)
            .ok_or_else(|| fail(stage, "not a stage of this multiplexer's placement"))
    }

    /// Place the monitor, from `resume` (a record `resumable` accepted) or from the start.
    pub(crate) fn run(&self, resume: Option<&MonitorRecord>) -> Result<Outcome, EnsureError> {
        let mut rec = resume.cloned().unwrap_or_else(|| self.fresh());
        if resume.is_some() {
            rec.resumed_at = Some(format_iso(self.now));
        }
        let result = self.stages(&mut rec);
        if let Err(e) = &result {
            // Nothing half-made is left behind: our own pane is closed, the record removed.
            let cleaned = self.discard(&rec);
            crate::log::write(&crate::log::EnsureMonitorStage {
                stage: "failed",
                pane: rec.pane.as_deref(),
                detail: Some(e.to_string()),
                cleaned: Some(cleaned),
                record: None,
            });
        }
        result
    }

    fn stages(&self, rec: &mut MonitorRecord) -> Result<Outcome, EnsureError> {
        use MonitorStage::*;
        let herdr = self.herdr();
        let mut note: Option<FocusNote> = None;
        // Bounded: each pass moves the record one stage on or returns.
        for _ in 0..=STAGES {
            let Some(stage) = rec.stage() else {
                return Err(fail(rec.stage_name(), "not a placement stage"));
            };
            match stage {
                SplitPending => self.split(rec, herdr.as_ref())?,
                SwapPending => {
                    let h = herdr.as_ref().ok_or_else(|| fail(stage, "not Herdr"))?;
                    note = Some(self.swap(rec, h)?);
                }
                LabelPending => {
                    let pane = pane_of(rec, stage)?;
                    let marker = rec.marker.clone().unwrap_or_default();
                    self.mux
                        .set_marker(&pane, &marker, deadline())
                        .map_err(|e| fail(stage, e))?;
                    self.mux
                        .rename(&pane, MONITOR_NAME, deadline())
                        .map_err(|e| fail(stage, e))?;
                    self.write(rec, self.next(stage)?)?;
                }
                RunPending => {
                    let h = herdr.as_ref().ok_or_else(|| fail(stage, "not Herdr"))?;
                    self.type_command(rec, h)?;
                    self.write(rec, self.next(stage)?)?;
                }
                Submitted => {
                    let pane = pane_of(rec, stage)?;
                    return Ok(match note {
                        Some(FocusNote::NotRestored(detail)) => {
                            Outcome::CreatedFocusMoved { pane, detail }
                        }
                        _ => Outcome::Created { pane },
                    });
                }
                RenamePending | Observed => return Err(fail(stage, "not a placement stage")),
            }
        }
        Err(fail(Submitted, "the placement did not finish its stages"))
    }

    /// `split_pending`: adopt the pane a dead run split (found by its marker), else split.
    fn split(&self, rec: &mut MonitorRecord, herdr: Option<&Herdr>) -> Result<(), EnsureError> {
        let stage = MonitorStage::SplitPending;
        let marker = rec.marker.clone().unwrap_or_default();
        self.write(rec, stage)?;
        let next = self.next(stage)?;
        if let Some(found) = self.marked_pane(&marker) {
            rec.pane = Some(found.id);
            rec.pane_terminal = found.terminal_id;
            rec.adopted = Some(true);
            return self.write(rec, next);
        }
        let req = SplitAbove {
            target: self.owner.pane.id.clone(),
            percent: self.percent,
            cwd: Some(self.root.to_path_buf()),
            argv: self.argv.to_vec(),
            env: vec![(PLACING_ENV.to_string(), marker)],
        };
        match herdr {
            Some(h) => {
                // The person's focus before anything moves it (the swap will).
                let before = h.focus(deadline()).map_err(|e| fail(stage, e))?;
                rec.focus_before = Some(before);
                let new = h
                    .split_below(&req, deadline())
                    .map_err(|e| fail(stage, e))?;
                rec.pane = Some(new.pane_id);
                rec.pane_terminal = Some(new.terminal_id);
            }
            None => {
                let new = self
                    .mux
                    .split_above(&req, deadline())
                    .map_err(|e| fail(stage, e))?;
                rec.pane = Some(new.id);
                rec.pane_terminal = new.terminal_id;
            }
        }
        self.write(rec, next)
    }

    /// `swap_pending` (Herdr): swap above, focus back, layout checked.
    fn swap(&self, rec: &mut MonitorRecord, h: &Herdr) -> Result<FocusNote, EnsureError> {
        let stage = MonitorStage::SwapPending;
        let new = self.own_pane(rec, h).ok_or_else(|| {
            fail(
                stage,
                "the half-made pane is gone or no longer provably ours",
            )
        })?;
        let now = h.focus(deadline()).map_err(|e| fail(stage, e))?;
        // The focus to put back: the one recorded before the split, unless the person moved
        // since (then the focus now is theirs: only what the swap below moves is put back).
        let recorded: Option<Focus> = rec.focus_before.clone();
        let swapped_here = now.pane == self.owner.pane.id;
        let before = match recorded {
            Some(f) if swapped_here || f == now => f,
            _ => now,
        };
        let note = h
            .swap_above(&self.owner.pane.id, &new, &before, deadline())
            .map_err(|e| fail(stage, e))?;
        rec.placement = Some(PlacementKind::SplitDownSwap);
        rec.focus = Some(FocusOutcome::from(&note));
        rec.focus_checked = Some(crate::mux::herdr::FOCUS_CHECKED.to_string());
        if let FocusNote::NotRestored(d) = &note {
            rec.focus_detail = Some(d.clone());
        }
        self.write(rec, self.next(stage)?)?;
        Ok(note)
    }

    /// `run_pending` (Herdr): type the command while the pane's shell is in the foreground; a
    /// pane already running something (the command a dead run typed) is left alone.
    fn type_command(&self, rec: &MonitorRecord, h: &Herdr) -> Result<(), EnsureError> {
        let stage = MonitorStage::RunPending;
        let pane = pane_of(rec, stage)?;
        let info = h
            .process_info(&pane, deadline())
            .map_err(|e| fail(stage, e))?
            .ok_or_else(|| fail(stage, "the pane is gone"))?;
        let shell_in_front =
            info.shell_pid.is_some() && info.foreground().map(|f| f.pid) == info.shell_pid;
        if !shell_in_front {
            return Ok(());
        }
        h.run(&pane, &mux::shell_line(self.argv), deadline())
            .map_err(|e| fail(stage, e))
    }

    /// A sidebar the tmux plugin's key opened in the coordinator's session (our marker on the
    /// pane, no record: `prefix M` before the coordinator's pi started, as doctor's fix says)
    /// whose folder finds this roster, recorded as this coordinator's and kept: never a second
    /// sidebar beside it, never another roster's taken.
    pub(crate) fn adopt_opened(&self) -> Result<Option<Outcome>, EnsureError> {
        if !self.owner.kind.caps().key_opens_sidebars {
            return Ok(None);
        }
        let list = self
            .mux
            .list_panes(deadline())
            .map_err(|e| fail("list", e))?;
        let Some(found) = list.panes.into_iter().find(|p| {
            p.session_id == self.owner.pane.session_id
                && p.id != self.owner.pane.id
                && p.marker
                    .as_deref()
                    .is_some_and(|m| m.starts_with("intercom-pane:") && m.len() > 14)
                && serves_roster(p.pid, self.root)
        }) else {
            return Ok(None);
        };
        let mut rec = self.fresh();
        rec.marker = found.marker.clone();
        rec.pane = Some(found.id.clone());
        rec.pane_terminal = found.terminal_id.clone();
        rec.window_id = Some(found.window_id.clone());
        rec.adopted = Some(true);
        rec.stage = Some(RecordedStage::Known(MonitorStage::Submitted));
        write_record(self.record, &rec)?;
        Ok(Some(Outcome::Preserved { pane: found.id }))
    }

    /// The pane on this server whose process environment carries `marker` (a pane a dead run
    /// split before it could record it): one listing, one bounded read per pane process.
    fn marked_pane(&self, marker: &str) -> Option<mux::PaneInfo> {
        let list = self.mux.list_panes(deadline()).ok()?;
        list.panes.into_iter().find(|p| {
            p.pid
                .and_then(|pid| crate::proc::environ(pid, &[PLACING_ENV]))
                .is_some_and(|env| env.get(PLACING_ENV).map(String::as_str) == Some(marker))
        })
    }

    /// The recorded half-made pane, when it is still provably ours: the same id and terminal.
    fn own_pane(&self, rec: &MonitorRecord, h: &Herdr) -> Option<HerdrPane> {
        let id = rec.pane.as_deref()?;
        let terminal = rec.pane_terminal.as_deref()?;
        let p = h.pane_get(id, deadline()).ok()??;
        (p.pane_id == id && p.terminal_id == terminal).then_some(p)
    }

    /// Close the pane this placement made (its id, its terminal on Herdr, and our marker —
    /// token or environment — all agree), then remove the record. `true` when nothing of
    /// ours is left.
    fn discard(&self, rec: &MonitorRecord) -> bool {
        let marker = rec.marker.as_deref().unwrap_or("");
        let closed = match rec.pane.as_deref() {
            None => true,
            Some(id) => match self.mux.find_pane(id, deadline()) {
                Ok(None) => true,
                Ok(Some(p)) => {
                    let same = p.id == id
                        && (!self.owner.kind.caps().terminal_ids
                            || p.terminal_id == rec.pane_terminal);
                    let ours = p.marker.as_deref() == Some(marker)
                        || p.pid
                            .and_then(|pid| crate::proc::environ(pid, &[PLACING_ENV]))
                            .is_some_and(|e| {
                                e.get(PLACING_ENV).map(String::as_str) == Some(marker)
                            });
                    same && ours && self.close(&p)
                }
                Err(_) => false,
            },
        };
        closed && store::remove_file(self.record).is_ok()
    }

    fn close(&self, p: &mux::PaneInfo) -> bool {
        let Ok(server) = self.mux.server_identity(deadline()) else {
            return false;
        };
        matches!(
            self.mux
                .close_if_matches(&PaneIdentity::of(&server, p), deadline()),
            Ok(mux::CloseOutcome::Closed | mux::CloseOutcome::AlreadyGone)
        )
    }
}

/// Test-only, never set in real use: `INTERCOM_PANE_TEST_PAUSE_AT_STAGE=<stage>:<file>` makes a
/// placement that has just recorded `<stage>` create `<file>` and wait (at most 10 s) until it
/// is removed, so a test can kill the placement at exactly that point instead of hoping.
pub const TEST_PAUSE_ENV: &str = "INTERCOM_PANE_TEST_PAUSE_AT_STAGE";

fn test_pause(stage: &str) {
    let Some(v) = std::env::var_os(TEST_PAUSE_ENV) else {
        return;
    };
    let v = v.to_string_lossy().into_owned();
    let Some(file) = v.strip_prefix(stage).and_then(|r| r.strip_prefix(':')) else {
        return;
    };
    let path = Path::new(file);
    if store::write_atomic(path, b"").is_err() {
        return;
    }
    let end = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while crate::fsguard::kind(path).is_ok() && std::time::Instant::now() < end {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

fn pane_of(rec: &MonitorRecord, stage: MonitorStage) -> Result<String, EnsureError> {
    rec.pane
        .clone()
        .ok_or_else(|| fail(stage, "the record names no pane"))
}

/// Whether a pane's process is one of ours whose folder finds this roster: the plugin's key
/// runs `intercom-pane monitor` in the folder of the pane it was pressed in, and the sidebar
/// finds its roster from there. Another roster's sidebar in the same session is not this one's.
fn serves_roster(pid: Option<i32>, root: &Path) -> bool {
    let Some(pid) = pid.filter(|p| crate::proc::is_ours(*p)) else {
        return false;
    };
    let Some(found) = crate::proc::cwd(pid)
        .and_then(|cwd| crate::evidence::config::discover_root(&cwd).ok().flatten())
    else {
        return false;
    };
    match (found.canonicalize(), root.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}
