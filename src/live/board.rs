//! The board's passes for the live engine: the scan, with the probe checks the caller keeps, and
//! the plan each pass yields (`plan`: folders, pis, tmux servers, time-bound states).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use super::engine::{Passes, Plan, Why};
use super::panes::ServerWatch;
use crate::clock::Clock;
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
    /// them; the seats' own folders are worked out every pass).
    roots: Vec<super::files::Spec>,
}

impl BoardPasses {
    pub fn new(
        mut opts: ScanOptions,
        clock: Arc<dyn Clock>,
        memory: Arc<ScanMemory>,
    ) -> BoardPasses {
        opts.kept_panes = Some(Arc::new(KeptPanes::new()));
        BoardPasses {
            opts,
            clock,
            probes: ProbeCache::new(),
            memory,
            roots: Vec::new(),
        }
    }
}

impl Drop for BoardPasses {
    fn drop(&mut self) {
        super::record::remove(&self.opts.data_root);
    }
}

impl Passes for BoardPasses {
    type Out = Result<Scan, ScanError>;

    fn listening(&mut self, servers: &[PathBuf], stale: &BTreeSet<PathBuf>) {
        if let Some(k) = &self.opts.kept_panes {
            k.trust(servers, stale);
        }
    }

    fn health_changed(&mut self, health: &super::engine::Health) {
        super::record::write(&self.opts.data_root, health);
    }

    fn pass(&mut self, why: &Why) -> (Self::Out, Plan) {
        let result = scan::run(
            &self.opts,
            self.clock.as_ref(),
            Some(&self.probes),
            Some(self.memory.as_ref()),
        );
        let mut plan = Plan::default();
        match &result {
            Ok(pass) => {
                if why.full || self.roots.is_empty() {
                    self.roots = super::plan::roots(&self.opts, pass);
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
        (result, plan)
    }
}
