//! The one way blocking code runs probes: a current-thread tokio runtime (I/O and time drivers)
//! kept as long as its owner probes — one call for a one-shot check, the whole run for the
//! sidebar and `watch`. Only `probe/` builds a runtime (tests/suite/architecture.rs); the probes,
//! their deadlines and caps are the async ones, unchanged.

use std::time::Duration;

use tokio::sync::watch;

use super::cache::{BatchStats, ProbeCache, ProbeTarget};
use crate::clock::Ms;
use crate::states::ConnState;

/// How often a batch run with [`Blocking::run_batch_until`] looks at its cancel flag.
const CANCEL_POLL: Duration = Duration::from_millis(25);

/// Runs probes to completion from blocking code.
pub(crate) struct Blocking {
    rt: tokio::runtime::Runtime,
}

impl Blocking {
    /// A fresh current-thread runtime; an error when the OS refuses its drivers.
    pub(crate) fn new() -> std::io::Result<Blocking> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()?;
        Ok(Blocking { rt })
    }

    /// One probe ([`super::probe_one`]), blocking until its verdict.
    pub(crate) fn probe_one(
        &self,
        port: u16,
        session_id: &str,
        deadline: Duration,
    ) -> (ConnState, &'static str) {
        self.rt
            .block_on(super::probe_one(port, session_id, deadline))
    }

    /// One batch ([`ProbeCache::run_batch`]), blocking until it ends; `cancel` flipping to true
    /// ends it early.
    pub(crate) fn run_batch(
        &self,
        cache: &mut ProbeCache,
        targets: &[ProbeTarget],
        now_ms: impl Fn() -> Ms,
        cancel: watch::Receiver<bool>,
    ) -> BatchStats {
        self.rt.block_on(cache.run_batch(targets, now_ms, cancel))
    }

    /// One batch, blocking, ended early once `cancelled` says true (asked every 25 ms while the
    /// batch runs: the sidebar's quit).
    pub(crate) fn run_batch_until(
        &self,
        cache: &mut ProbeCache,
        targets: &[ProbeTarget],
        now_ms: impl Fn() -> Ms,
        cancelled: impl Fn() -> bool + Send + 'static,
    ) -> BatchStats {
        self.rt.block_on(async move {
            let (tx, rx) = watch::channel(cancelled());
            let watcher = tokio::spawn(async move {
                // Bounded: ends with the batch (aborted below) or when cancelled is seen.
                loop {
                    if cancelled() {
                        let _ = tx.send(true);
                        return;
                    }
                    tokio::time::sleep(CANCEL_POLL).await;
                }
            });
            let stats = cache.run_batch(targets, now_ms, rx).await;
            watcher.abort();
            stats
        })
    }
}
