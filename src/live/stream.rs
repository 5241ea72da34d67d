//! The one board stream every live view reads (docs/behaviour.md §3a): the sidebar, `watch` and
//! its alerts, `scan --watch`, `status --watch`, `wait` and `intercom_wait`. It is the engine's
//! passes turned into boards, with the connection checks on their own timer (one probe path),
//! and a refused pass said as such (one refusal path); each view only decides what it shows.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::board::{BoardPass, BoardPasses};
use super::engine::{Health, Settings, Wake};
use super::wake::Waker;
use super::Engine;
use crate::clock::{Clock, Ms};
use crate::evidence::config::IntercomConfig;
use crate::evidence::ScanMemory;
use crate::probe::ProbeTarget;
use crate::scan::{Scan, ScanError, ScanOptions};
use crate::ui::ports::CancelToken;

/// Connection checks run this often when asked for (a check reads `stale` after 30 s).
pub(crate) const PROBE_EVERY: Duration = Duration::from_secs(15);

/// Why a stream cannot start.
#[derive(Debug)]
pub enum StreamError {
    /// No waker fd (the process is out of file descriptors).
    Engine(std::io::Error),
}

impl std::fmt::Display for StreamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StreamError::Engine(e) => write!(f, "cannot watch the board: {e}"),
        }
    }
}

impl std::error::Error for StreamError {}

/// What the stream says after a wake.
// One value a pass, moved once to its caller: boxing the scan would only add an allocation.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Board {
    /// A pass ran: the board as it is now (with the connection checks when they were due).
    New(Scan),
    /// Nothing the last board rested on moved: it still holds, as of `checked_at`.
    Same { checked_at: Ms },
    /// Only the connection checks are new (the probe timer, nothing else moved): the caller
    /// shows them on the board it has (`show_probes`, `apply_probes`).
    Probed { checked_at: Ms },
    /// The pass was refused (an invalid `seen.json`); its fix wakes the stream.
    Refused(ScanError),
}

/// The engine's passes as boards, with probe checks when `probe` is on.
pub(crate) struct BoardStream {
    engine: Engine<BoardPasses>,
    clock: Arc<dyn Clock>,
    probe: bool,
    runtime: Option<crate::probe::Blocking>,
    cancel: CancelToken,
    next_probe: Instant,
    /// Whether the last pass had workers to probe (no timer otherwise).
    targets: bool,
    /// The roster the last pass read: its workers are probed when the probe timer finds nothing
    /// else moved (no scan then).
    config: Option<IntercomConfig>,
    /// The last wake was the probe timer's.
    probe_wake: bool,
}

impl BoardStream {
    /// A stream whose first `wait` returns at once for a full pass. Cancelling `cancel_token()`
    /// stops it (and ends a probe batch under way).
    pub(crate) fn start(
        opts: ScanOptions,
        clock: Arc<dyn Clock>,
        memory: Arc<ScanMemory>,
        settings: Settings,
        probe: bool,
    ) -> Result<BoardStream, StreamError> {
        let passes = BoardPasses::new(opts, clock.clone(), memory);
        let engine = Engine::new(passes, settings).map_err(StreamError::Engine)?;
        let cancel = CancelToken::new();
        let waker = engine.waker();
        cancel.on_cancel(Box::new(move || waker.stop()));
        let runtime = if probe {
            crate::probe::Blocking::new().ok()
        } else {
            None
        };
        Ok(BoardStream {
            engine,
            clock,
            probe,
            runtime,
            cancel,
            next_probe: Instant::now(),
            targets: true,
            config: None,
            probe_wake: false,
        })
    }

    /// Stops the stream from another thread or a signal handler.
    pub(crate) fn waker(&self) -> Waker {
        self.engine.waker()
    }

    pub(crate) fn cancel_token(&self) -> CancelToken {
        self.cancel.clone()
    }

    /// How the engine watches.
    pub(crate) fn health(&self) -> Health {
        self.engine.health()
    }

    /// Show the connection checks gathered so far on a board's rows (after `Probed`).
    pub(crate) fn show_probes(&mut self, rows: &mut [crate::snapshot::Row]) {
        let now = self.clock.now_ms();
        if let Some(cfg) = &self.config {
            crate::scan::connections_onto(rows, cfg, &self.engine.runner().probes, now);
        }
    }

    /// Show the connection checks gathered so far on a whole board (after `Probed`).
    pub(crate) fn apply_probes(&mut self, scan: &mut Scan) {
        let now = self.clock.now_ms();
        scan.apply_connections(&self.engine.runner().probes, now);
    }

    pub(crate) fn now_ms(&self) -> Ms {
        self.clock.now_ms()
    }

    /// Sleep until a board is due (`Pass`: call `next`), `extra` comes (`Timer`), or the stream
    /// is stopped. The probe timer is a `Pass`.
    pub(crate) fn wait(&mut self, extra: Option<Instant>) -> Wake {
        let probe_at =
            (self.probe && self.targets && self.runtime.is_some()).then_some(self.next_probe);
        let timer = [extra, probe_at].into_iter().flatten().min();
        match self.engine.wait(timer) {
            Wake::Timer if probe_at.is_some_and(|t| t <= Instant::now()) => {
                self.probe_wake = true;
                Wake::Pass
            }
            w => w,
        }
    }

    /// The board after a `Pass` wake.
    pub(crate) fn next(&mut self) -> Board {
        let probing = std::mem::take(&mut self.probe_wake) && self.probe && self.config.is_some();
        if probing {
            self.engine.ask("probe");
        }
        match self.engine.pass() {
            BoardPass::Same { checked_at } if probing => {
                let targets = self
                    .config
                    .as_ref()
                    .map(crate::scan::probe_targets)
                    .unwrap_or_default();
                self.probe_batch(&targets);
                Board::Probed { checked_at }
            }
            BoardPass::Same { checked_at } => Board::Same { checked_at },
            BoardPass::Scanned(Ok(mut pass)) => {
                let targets = pass.probe_targets();
                self.targets = !targets.is_empty();
                if self.probe {
                    self.config = pass.config.clone();
                }
                if self.probe_due() {
                    self.probe_batch(&targets);
                    let now = self.clock.now_ms();
                    pass.apply_connections(&self.engine.runner().probes, now);
                }
                Board::New(pass)
            }
            BoardPass::Scanned(Err(e)) => Board::Refused(e),
        }
    }

    /// Whether this pass runs the probe batch: on its timer, and after pis, panes or
    /// registrations came or went (a connection follows its pi).
    fn probe_due(&self) -> bool {
        if !self.probe || self.cancel.is_cancelled() {
            return false;
        }
        let why = self.engine.last_why();
        Instant::now() >= self.next_probe
            || ["start", "exit", "panes", "gone", "folders"]
                .iter()
                .any(|r| why.reasons.contains(r))
    }

    /// One bounded probe batch, ended early when the stream is cancelled.
    fn probe_batch(&mut self, targets: &[ProbeTarget]) {
        self.next_probe = Instant::now() + PROBE_EVERY;
        let Some(rt) = &self.runtime else { return };
        if self.cancel.is_cancelled() {
            return;
        }
        let cancel = self.cancel.clone();
        let clock = self.clock.clone();
        rt.run_batch_until(
            &mut self.engine.runner().probes,
            targets,
            || clock.now_ms(),
            move || cancel.is_cancelled(),
        );
    }
}
