//! The sidebar's navigator (⏎ to a worker's pane, keeping its own height) and worker control
//! (close-worker / resume-worker from the list), on the real scan and multiplexers.
//!
//! Never the wrong target: each starts with a fresh pass, which must still show the seat the
//! person acted on — same row, same key, same pane and pi (pid, start ticks, boot id) — and
//! refuses when anything moved. Close and resume then run the very code the commands run, which
//! checks everything again before it acts.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::actions::close::{self, CloseExit, CloseRequest};
use crate::actions::resume::{self, ResumeExit, ResumeRequest};
use crate::clock::Clock;
use crate::evidence::config::CloseReason;
use crate::mux::{self, MuxEnv, Owner};
use crate::scan::{self, ScanOptions};
use crate::snapshot::{Row, SeatPane};
use crate::states::CloseState;
use crate::text::sanitize;
use crate::ui::ports::{
    JumpOutcome, Navigator, SeatRef, WorkerAction, WorkerControl, WorkerOutcome,
};

/// Deadline of one jump or resize (after the fresh pass).
const STEP: Duration = Duration::from_secs(5);
/// Deadline for finding the sidebar's own pane at start.
const OWN_PANE: Duration = Duration::from_secs(3);
/// How long resume-worker waits for the new seat to register (the command's default).
const RESUME_WAIT_SECS: u64 = 30;

/// The sidebar's own pane, found once by process ancestry (`None`: not in a pane).
pub(crate) fn own_pane() -> Option<Owner> {
    mux::owning_multiplexer(
        std::process::id() as i32,
        &MuxEnv::from_process(),
        Instant::now() + OWN_PANE,
    )
}

/// Why the row a fresh pass shows is not the seat the person acted on.
fn moved(seat: &SeatRef, now: Option<&Row>) -> Option<String> {
    let name = sanitize(&seat.name);
    let Some(row) = now else {
        return Some(format!("{name} is no longer on the board"));
    };
    if row.seen_key != seat.seen_key || row.name != seat.name {
        return Some(format!("{name}'s row now belongs to another seat"));
    }
    if row.pane != seat.pane {
        let say = |p: Option<&SeatPane>| match p {
            Some(p) => format!("{} {}", p.kind.name(), sanitize(&p.pane_id)),
            None => "no live pane".into(),
        };
        let same_place = row.pane.as_ref().map(|p| (&p.kind, &p.socket, &p.pane_id))
            == seat.pane.as_ref().map(|p| (&p.kind, &p.socket, &p.pane_id));
        return Some(if same_place {
            format!(
                "{name}'s pane {} now runs another process than the one you saw",
                say(seat.pane.as_ref())
            )
        } else {
            format!(
                "{name} moved since you saw it (was {}, now {})",
                say(seat.pane.as_ref()),
                say(row.pane.as_ref())
            )
        });
    }
    None
}

/// A fresh pass and the seat's row in it, or why the seat cannot be acted on. Fresh: nothing
/// the sidebar's passes remembered is used right before an action.
fn recheck(opts: &ScanOptions, clock: &dyn Clock, seat: &SeatRef) -> Result<Row, Recheck> {
    let pass = scan::run(opts, clock, None, None).map_err(Recheck::Pass)?;
    let row = pass.snapshot.row(&seat.row_id).cloned();
    match moved(seat, row.as_ref()) {
        Some(why) => Err(Recheck::Moved(why)),
        None => row.ok_or(Recheck::Gone),
    }
}

/// Why the fresh pass before an action does not show the seat the person saw.
#[derive(Debug)]
enum Recheck {
    Pass(crate::scan::ScanError),
    /// What moved, in words.
    Moved(String),
    Gone,
}

impl std::fmt::Display for Recheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Recheck::Pass(e) => write!(f, "{e}"),
            Recheck::Moved(why) => f.write_str(why),
            Recheck::Gone => f.write_str("the seat is gone"),
        }
    }
}

/// Where a seat's server listens: a tmux hint resolved as the scan resolves it.
fn server_socket(p: &SeatPane, default_tmux: Option<&Path>) -> Option<PathBuf> {
    p.kind.server_socket(p.socket.as_deref(), default_tmux)
}

fn same_file(a: &Path, b: &Path) -> bool {
    a == b
        || matches!((std::fs::canonicalize(a), std::fs::canonicalize(b)), (Ok(x), Ok(y)) if x == y)
}

/// ⏎ and the height, on the real scan and multiplexers.
pub struct ScanNavigator {
    pub opts: ScanOptions,
    pub clock: Arc<dyn Clock>,
    /// The sidebar's own pane.
    pub own: Option<Owner>,
}

impl Navigator for ScanNavigator {
    fn jump(&self, seat: &SeatRef) -> JumpOutcome {
        let refuse = |reason: String| JumpOutcome::Refused { reason };
        // Another host's pane is reached through ssh on that host (`HostPorts`), never here.
        if seat.host.is_some() {
            return refuse("its pane is on another host".into());
        }
        if seat.pane.is_none() {
            return refuse("it has no live pane".into());
        }
        let row = match recheck(&self.opts, self.clock.as_ref(), seat) {
            Ok(r) => r,
            Err(why) => return refuse(why.to_string()),
        };
        let Some(p) = row.pane else {
            return refuse("it has no live pane".into());
        };
        let Some(socket) = server_socket(&p, self.opts.tmux_socket.as_deref()) else {
            return refuse("its server's socket is not known".into());
        };
        // A jump that moves a client moves the sidebar's own, on the seat's server.
        let label = p.kind.caps().label;
        let from = match &self.own {
            _ if !p.kind.caps().jump_moves_a_client => None,
            Some(o) if o.kind == p.kind => {
                if !same_file(&o.socket_path, &socket) {
                    return refuse(format!(
                        "its pane is on another {label} server ({}); this sidebar's client cannot \
                         switch there",
                        sanitize(&socket.display().to_string())
                    ));
                }
                Some(o.pane.id.clone())
            }
            _ => {
                return refuse(format!("this sidebar does not run in a {label} pane"));
            }
        };
        let m = mux::open(p.kind, &socket);
        match m.jump_to(&p.pane_id, from.as_deref(), Instant::now() + STEP) {
            Ok(()) => {
                // The way back (`jump --back`): this sidebar's pane.
                if let Some(o) = self.own.as_ref().filter(|o| o.kind == p.kind) {
                    super::jump_back::remember(
                        &self.opts.data_root,
                        &super::jump_back::JumpBack {
                            multiplexer: o.kind,
                            socket: o.socket_path.clone(),
                            sidebar: o.pane.id.clone(),
                            went_to: p.pane_id.clone(),
                            at: self.clock.now_ms(),
                        },
                    );
                }
                JumpOutcome::Moved {
                    pane: format!("{} {}", p.kind.name(), p.pane_id),
                }
            }
            Err(e) => refuse(e.to_string()),
        }
    }

    fn keep_height(&self, lines: u16) -> bool {
        let Some(o) = self.own.as_ref().filter(|o| o.kind.caps().can_grow) else {
            return false;
        };
        let m = mux::open(o.kind, &o.socket_path);
        let deadline = Instant::now() + STEP;
        let Ok(list) = m.list_panes(deadline) else {
            return false;
        };
        // Only when the window holds the sidebar's minimum and as much again for the rest:
        // never squeeze the coordinator's pane below the sidebar's own minimum.
        let window_h = list
            .panes
            .iter()
            .filter(|p| p.window_id == o.pane.window_id)
            .filter_map(|p| Some(p.top? + p.height?))
            .max()
            .unwrap_or(0);
        if window_h < 2 * u32::from(lines) + 1 {
            return false;
        }
        m.grow_to(&o.pane.id, lines, deadline).unwrap_or(false)
    }
}

/// close-worker and resume-worker from the list, through the commands' own code.
pub(crate) struct ScanWorkers {
    pub opts: ScanOptions,
    /// The program a resume starts (`pi`; the demo's stand-in in the demo).
    pub pi_program: String,
    pub clock: Arc<dyn Clock>,
    /// The system config (`--config`), absolute, passed to a resumed pi's extension.
    pub system_config: Option<PathBuf>,
}

impl WorkerControl for ScanWorkers {
    fn run(&self, action: WorkerAction, seat: &SeatRef, stage: &dyn Fn(&str)) -> WorkerOutcome {
        let refused = |detail: String| WorkerOutcome {
            ok: false,
            result: "refused".into(),
            detail,
        };
        stage("checking the seat");
        let row = match recheck(&self.opts, self.clock.as_ref(), seat) {
            Ok(r) => r,
            Err(why) => return refused(why.to_string()),
        };
        match action {
            WorkerAction::Close => self.close(&row, stage),
            WorkerAction::Resume => self.resume(&row, stage),
            WorkerAction::Spawn => refused("a spawn runs through the sidebar's spawner".into()),
            WorkerAction::RaiseBudget => self.raise_budget(&row),
        }
    }
}

impl ScanWorkers {
    /// `$`: the worker's cost limit raised by half, recorded as the sidebar's change.
    fn raise_budget(&self, row: &Row) -> WorkerOutcome {
        let out = |ok: bool, result: &str, detail: String| WorkerOutcome {
            ok,
            result: result.into(),
            detail,
        };
        let cfg = match &self.opts.root {
            crate::scan::RootChoice::Exact(p) => crate::evidence::config::load(p).ok(),
            crate::scan::RootChoice::Discover(start) => {
                crate::evidence::config::discover(start).ok().flatten()
            }
            crate::scan::RootChoice::Skip => None,
        };
        let Some(cfg) = cfg else {
            return out(false, "refused", "no roster".into());
        };
        let Some(limit) = cfg
            .find_by_session(&row.id)
            .and_then(|a| a.budget.as_ref())
            .and_then(|b| b.cost_usd())
        else {
            return out(false, "refused", "it has no cost budget to raise".into());
        };
        let step = crate::budget::change::sidebar_step(limit);
        let edit = crate::budget::change::Edit::Raise(step);
        match crate::budget::change::apply(&cfg.root, &row.id, edit, "sidebar", self.clock.now_ms())
        {
            Ok(c) => out(true, "raised", c.words()),
            Err(e) => out(false, "refused", e.to_string()),
        }
    }

    fn close(&self, row: &Row, stage: &dyn Fn(&str)) -> WorkerOutcome {
        let req = CloseRequest {
            name: row.name.clone(),
            deadline_secs: close::MAX_DEADLINE_SECS,
            dry_run: false,
            recover: false,
            progress: false,
            on_stage: Some(stage),
            on_job: None,
            scan: &self.opts,
            clock: self.clock.as_ref(),
            // The fresh pass above compared the pane and pi already.
            expect: None,
            by: crate::evidence::sessions::timeline::Actor::Sidebar,
        };
        let end = close::close_worker(&req);
        crate::log::write(&crate::log::CloseWorkerDone {
            worker: &row.name,
            exit: end.exit.code(),
            report: &end.report,
            from: Some("sidebar"),
            by: None,
        });
        let r = &end.report;
        let result = match end.exit {
            CloseExit::Refused | CloseExit::NoReplyPath => "refused",
            CloseExit::Fenced => "fenced",
            _ => r.state().map_or("not closed", CloseState::as_str),
        }
        .to_string();
        let detail = r
            .refused()
            .or_else(|| r.reason().map(CloseReason::as_str))
            .unwrap_or_default()
            .to_string();
        WorkerOutcome {
            ok: end.exit == CloseExit::Closed,
            result,
            detail,
        }
    }

    fn resume(&self, row: &Row, stage: &dyn Fn(&str)) -> WorkerOutcome {
        let req = ResumeRequest {
            name: row.name.clone(),
            // The person confirmed it on the dialog that named the worker.
            confirm_closed: true,
            dry_run: false,
            recover: false,
            wait_secs: RESUME_WAIT_SECS,
            pi_program: self.pi_program.clone(),
            system_config: self.system_config.clone(),
            scan: &self.opts,
            clock: self.clock.as_ref(),
            progress: stage,
            expect: None,
            by: crate::evidence::sessions::timeline::Actor::Sidebar,
        };
        let end = resume::resume_worker(&req);
        let r = end.report;
        WorkerOutcome {
            ok: end.exit == ResumeExit::Resumed,
            result: r.result.as_str().to_string(),
            detail: r.reason.or(r.note).or(r.pane).unwrap_or_default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mux::MuxKind;

    #[test]
    fn a_seat_that_moved_or_changed_its_pi_is_refused_by_name() {
        let mut row = crate::ui::demo::demo_row(1, 0, 1_000);
        row.pane = Some(SeatPane {
            kind: MuxKind::Tmux,
            socket: None,
            pane_id: "%3".into(),
            shell_pid: Some(10),
            pi: Some((11, 12, "b".into())),
        });
        let seat = SeatRef::of(&row);
        assert_eq!(moved(&seat, Some(&row)), None);
        assert!(moved(&seat, None).unwrap().contains("no longer"));
        let mut other = row.clone();
        other.pane.as_mut().unwrap().pane_id = "%9".into();
        assert!(moved(&seat, Some(&other)).unwrap().contains("now tmux %9"));
        let mut restarted = row.clone();
        restarted.pane.as_mut().unwrap().pi = Some((11, 99, "b".into()));
        assert!(moved(&seat, Some(&restarted))
            .unwrap()
            .contains("another process"));
        let mut gone = row.clone();
        gone.pane = None;
        assert!(moved(&seat, Some(&gone)).unwrap().contains("no live pane"));
        let mut renamed = row;
        renamed.seen_key = "p/x".into();
        assert!(moved(&seat, Some(&renamed))
            .unwrap()
            .contains("another seat"));
    }
}
