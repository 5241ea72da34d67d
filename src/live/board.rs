//! The board's passes for the live engine: the scan, with the probe checks the caller keeps, and
//! the plan each pass yields (`plan`: folders, pis, tmux servers, time-bound states).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use super::check::{Baseline, REBUILD_AFTER};
use super::engine::{CheckMicros, CheckNote, Passes, Plan, Why};
use super::panes::ServerWatch;
use crate::clock::{Clock, Ms};
use crate::evidence::ScanMemory;
use crate::liveness::KeptPanes;
use crate::probe::ProbeCache;
use crate::scan::{self, Scan, ScanError, ScanOptions};

/// Passes of the real scan.
pub struct BoardPasses {
    pub opts: ScanOptions,
    pub clock: Arc<dyn Clock>,
    /// Connection checks the caller gathers; each pass shows them.
    pub probes: ProbeCache,
    /// What earlier passes read from files unchanged since (shared with the sidebar's reply
    /// checks).
    pub memory: Arc<ScanMemory>,
    /// The root folders of the last pass that listed them (a pass for changed files keeps
    /// them unless the roster's root moved; the seats' own folders are worked out every pass).
    roots: Vec<super::files::Spec>,
    /// The roster's root that pass found (the roots rest on it).
    roots_of: Option<PathBuf>,
    /// What the last pass rested on (`check`).
    baseline: Option<Baseline>,
    /// Checks in a row that found nothing moved.
    checks_in_row: u32,
    /// pis the engine holds by a pidfd (their exits wake it: a check need not look).
    held_pis: usize,
    /// What the check before the last pass found (for the pass's log event).
    check: Option<CheckNote>,
}

/// One pass of the board.
// One value a pass, moved once to its caller: boxing the scan would only add an allocation.
#[allow(clippy::large_enum_variant)]
pub enum BoardPass {
    /// The scan ran (or was refused).
    Scanned(Result<Scan, ScanError>),
    /// The long timer's check found everything the last full pass rested on as it was: that
    /// pass's board still holds, as of `checked_at`.
    Same { checked_at: Ms },
}

/// Whether only timers ask for this pass — the long timer, the sidebar's probe timer — and
/// nothing changed since the last one.
fn timer_only(why: &Why) -> bool {
    !why.reasons.is_empty()
        && why.reasons.iter().all(|r| matches!(*r, "timer" | "probe"))
        && why.files.is_empty()
        && why.servers.is_empty()
        && why.exited.is_empty()
}

impl BoardPasses {
    pub fn new(
        mut opts: ScanOptions,
        clock: Arc<dyn Clock>,
        memory: Arc<ScanMemory>,
    ) -> BoardPasses {
        opts.kept_panes = (!super::switched_off("kept")).then(|| Arc::new(KeptPanes::new()));
        BoardPasses {
            opts,
            clock,
            probes: ProbeCache::new(),
            memory,
            roots: Vec::new(),
            roots_of: None,
            baseline: None,
            checks_in_row: 0,
            held_pis: 0,
            check: None,
        }
    }

    /// The long timer's check: `Same` when a full pass now would rest on what the last one did.
    fn check(&mut self, why: &Why) -> Option<BoardPass> {
        self.check = None;
        if !timer_only(why) || self.checks_in_row >= REBUILD_AFTER || super::switched_off("check") {
            return None;
        }
        let base = self.baseline.as_mut()?;
        // A pi the engine does not hold could end unheard.
        if self.held_pis < base.pis() {
            return None;
        }
        let first = !base.hashed();
        let (same, [panes, procs, folders]) = base.holds(self.opts.kept_panes.as_deref());
        if same {
            self.checks_in_row += 1;
        }
        self.check = Some(CheckNote {
            same,
            first,
            in_row: self.checks_in_row,
            us: CheckMicros {
                panes,
                procs,
                folders,
            },
            folders: base.folder_count(),
        });
        same.then(|| BoardPass::Same {
            checked_at: self.clock.now_ms(),
        })
    }
}

impl Drop for BoardPasses {
    fn drop(&mut self) {
        super::record::remove(&self.opts.data_root);
    }
}

impl Passes for BoardPasses {
    type Out = BoardPass;

    fn listening(&mut self, servers: &[PathBuf], stale: &BTreeSet<PathBuf>) {
        if let Some(k) = &self.opts.kept_panes {
            k.trust(servers, stale);
        }
    }

    fn check_note(&self) -> Option<CheckNote> {
        self.check
    }

    fn health_changed(&mut self, health: &super::engine::Health) {
        self.held_pis = health.pids;
        super::record::write(&self.opts.data_root, health);
    }

    fn pass(&mut self, why: &Why) -> (Self::Out, Option<Plan>) {
        if let Some(same) = self.check(why) {
            return (same, None);
        }
        let started = std::time::Instant::now();
        let began = super::check::file_clock_ns();
        let result = scan::run(
            &self.opts,
            self.clock.as_ref(),
            Some(&self.probes),
            Some(self.memory.as_ref()),
        );
        let mut plan = Plan::default();
        match &result {
            Ok(pass) => {
                // Subfolders coming and going make a full pass (`files`); the roster appearing
                // or moving does not, and moves the roots.
                let root = pass.config.as_ref().map(|c| c.root.clone());
                if why.full || self.roots.is_empty() || root != self.roots_of {
                    self.roots = super::plan::roots(&self.opts, pass);
                    self.roots_of = root;
                }
                let mut folders = self.roots.clone();
                folders.extend(super::plan::seat_folders(pass));
                folders.sort_by(|a, b| a.dir.cmp(&b.dir));
                folders.dedup();
                plan.folders = folders;
                plan.pis = pass.pis.clone();
                plan.servers = pass
                    .servers
                    .iter()
                    .map(|(kind, socket, session, pane_pid)| ServerWatch {
                        kind: *kind,
                        socket: socket.clone(),
                        // A listener attaches to a session (tmux).
                        session: session.clone().filter(|_| kind.caps().events_per_session),
                        // A tmux pane's process is a child of the server.
                        server_pid: pane_pid
                            .filter(|_| kind.caps().panes_are_server_children)
                            .and_then(crate::proc::read_stat)
                            .map(|st| st.ppid),
                    })
                    .collect();
                plan.recheck = super::plan::recheck(pass, self.clock.now_ms());
            }
            // The pass was refused (an invalid `seen.json`): its fix wakes the engine.
            Err(_) => {
                plan.folders = vec![super::files::Spec::only(
                    self.opts.data_root.join("board"),
                    &["seen.json"],
                )];
            }
        }
        self.baseline = match &result {
            Ok(pass) => Baseline::of(
                pass,
                &plan.folders,
                began,
                started.elapsed().as_millis(),
                plan.recheck.is_some(),
            ),
            Err(_) => None,
        };
        self.checks_in_row = 0;
        (BoardPass::Scanned(result), Some(plan))
    }
}
