//! The sidebar's and `watch`'s snapshots from one whole scan per pass (without the live
//! engine): `monitor` uses it when the live engine cannot start, and the alert thread of
//! `watch` and of the sidebar reads through it.

use std::sync::Arc;

use crate::clock::Clock;
use crate::cmd::live_source::run_probe_batch;
use crate::evidence::ScanMemory;
use crate::probe::{ProbeCache, ProbeTarget};
use crate::scan::{self, ScanOptions};
use crate::snapshot::{RosterCode, RosterStatus, Snapshot};
use crate::ui::ports::{CancelToken, SnapshotSource};

/// Passes of the real scan, with probe checks and what was read carried across passes.
pub struct ScanSource {
    opts: ScanOptions,
    clock: Arc<dyn Clock>,
    probes: ProbeCache,
    memory: Arc<ScanMemory>,
    probe: bool,
    runtime: Option<crate::probe::Blocking>,
    cancel: CancelToken,
}

impl ScanSource {
    pub fn new(
        opts: ScanOptions,
        clock: Arc<dyn Clock>,
        probe: bool,
        memory: Arc<ScanMemory>,
    ) -> ScanSource {
        let runtime = crate::probe::Blocking::new().ok();
        ScanSource {
            opts,
            clock,
            probes: ProbeCache::new(),
            memory,
            probe,
            runtime,
            cancel: CancelToken::new(),
        }
    }

    fn probe_batch(&mut self, targets: &[ProbeTarget]) {
        let Some(rt) = &self.runtime else { return };
        run_probe_batch(rt, &mut self.probes, targets, &self.cancel, &self.clock);
    }
}

impl SnapshotSource for ScanSource {
    fn next_snapshot(&mut self) -> Snapshot {
        // Read the evidence once, probe the workers that pass configured, then show the checks.
        let (probes, memory) = (Some(&self.probes), Some(self.memory.as_ref()));
        match scan::run(&self.opts, self.clock.as_ref(), probes, memory) {
            Ok(mut pass) => {
                if self.probe && !self.cancel.is_cancelled() {
                    self.probe_batch(&pass.probe_targets());
                    pass.apply_connections(&self.probes, self.clock.now_ms());
                }
                pass.snapshot
            }
            Err(e) => Snapshot {
                scanned_at: self.clock.now_ms(),
                roster: RosterStatus::Unavailable {
                    code: RosterCode::ScanRefused,
                    reason: e.to_string(),
                },
                rows: Vec::new(),
                truncated: false,
                errors: vec!["scan_refused".into()],
                usage: Default::default(),
                hosts: Vec::new(),
            },
        }
    }

    fn cancel_token(&self) -> CancelToken {
        self.cancel.clone()
    }
}
