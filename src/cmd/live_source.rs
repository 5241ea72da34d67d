//! The sidebar's snapshots from the live engine (docs/behaviour.md §3a): a pass when something
//! changed, the probe checks on their own timer (and after a pi or pane came or went), nothing
//! while nothing changes.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::clock::{Clock, Ms};
use crate::live::board::{BoardPass, BoardPasses};
use crate::live::{Engine, Settings, Wake};
use crate::scan::ScanOptions;
use crate::snapshot::{RosterCode, RosterStatus, Snapshot};
use crate::ui::ports::{CancelToken, FrameLog, Pass, SnapshotSource};

/// Connection checks run this often (a check reads `stale` after 30 s).
pub(crate) const PROBE_EVERY: Duration = Duration::from_secs(15);

/// Snapshots from the engine, with probe checks.
pub(crate) struct LiveSource {
    engine: Engine<BoardPasses>,
    clock: Arc<dyn Clock>,
    probe: bool,
    runtime: Option<crate::probe::Blocking>,
    cancel: CancelToken,
    next_probe: Instant,
    /// Whether the last pass had workers to probe (no timer otherwise).
    targets: bool,
    /// The roster the last scan read: its workers are probed when a check found nothing else
    /// moved (no scan then).
    config: Option<crate::evidence::config::IntercomConfig>,
    /// The last wait ended for the probe timer, not for a pass.
    probe_wake: bool,
    /// The last snapshot that showed something new.
    shown: Option<Snapshot>,
}

impl LiveSource {
    pub(crate) fn new(
        opts: ScanOptions,
        clock: Arc<dyn Clock>,
        probe: bool,
        memory: Arc<crate::evidence::ScanMemory>,
        settings: Settings,
    ) -> std::io::Result<LiveSource> {
        let engine = Engine::new(BoardPasses::new(opts, clock.clone(), memory), settings)?;
        let cancel = CancelToken::new();
        let waker = engine.waker();
        cancel.on_cancel(Box::new(move || waker.stop()));
        let runtime = crate::probe::Blocking::new().ok();
        Ok(LiveSource {
            engine,
            clock,
            probe,
            runtime,
            cancel,
            next_probe: Instant::now(),
            shown: None,
            targets: true,
            config: None,
            probe_wake: false,
        })
    }

    /// Whether this pass should run the probe batch: on its timer, and after pis, panes or
    /// registrations came or went (a connection follows its pi).
    fn probe_due(&self) -> bool {
        if !self.probe {
            return false;
        }
        let why = self.engine.last_why();
        Instant::now() >= self.next_probe
            || ["start", "exit", "panes", "gone", "folders"]
                .iter()
                .any(|r| why.reasons.contains(r))
    }

    fn probe_batch(&mut self, targets: &[crate::probe::ProbeTarget]) {
        let Some(rt) = &self.runtime else { return };
        let cache = &mut self.engine.runner().probes;
        run_probe_batch(rt, cache, targets, &self.cancel, &self.clock);
        self.next_probe = Instant::now() + PROBE_EVERY;
    }

    /// The probe timer's pass when the board's check found nothing else moved: the roster's
    /// workers probed, and the new checks shown on the rows shown (what a scan would show: its
    /// rows are those, its checks these). `None`: nothing to probe with.
    fn probe_shown(&mut self, checked_at: Ms) -> Option<Snapshot> {
        let targets = crate::scan::probe_targets(self.config.as_ref()?);
        let mut snap = self.shown.clone()?;
        if self.runtime.is_none() || self.cancel.is_cancelled() {
            return None;
        }
        self.probe_batch(&targets);
        let cfg = self.config.as_ref()?;
        snap.scanned_at = checked_at;
        let now = self.clock.now_ms();
        crate::scan::connections_onto(&mut snap.rows, cfg, &self.engine.runner().probes, now);
        Some(snap)
    }
}

/// One bounded probe batch on `rt`, ended early when `cancel` is set (the sidebar's quit).
pub(crate) fn run_probe_batch(
    rt: &crate::probe::Blocking,
    cache: &mut crate::probe::ProbeCache,
    targets: &[crate::probe::ProbeTarget],
    cancel: &CancelToken,
    clock: &Arc<dyn Clock>,
) {
    let cancel = cancel.clone();
    rt.run_batch_until(
        cache,
        targets,
        || clock.now_ms(),
        move || cancel.is_cancelled(),
    );
}

/// The snapshot shown when a pass was refused.
pub(crate) fn refused_snapshot(now: Ms, reason: String) -> Snapshot {
    Snapshot {
        scanned_at: now,
        roster: RosterStatus::Unavailable {
            code: RosterCode::ScanRefused,
            reason,
        },
        rows: Vec::new(),
        truncated: false,
        errors: vec!["scan_refused".into()],
        usage: Default::default(),
        hosts: Vec::new(),
    }
}

impl SnapshotSource for LiveSource {
    fn next_snapshot(&mut self) -> Snapshot {
        match self.next_pass() {
            Pass::New(snap) => snap,
            Pass::Same { scanned_at } => match &self.shown {
                Some(shown) => Snapshot {
                    scanned_at,
                    ..shown.clone()
                },
                None => refused_snapshot(scanned_at, "no pass has run yet".into()),
            },
        }
    }

    fn next_pass(&mut self) -> Pass {
        let probing = std::mem::take(&mut self.probe_wake) && self.probe && self.shown.is_some();
        if probing {
            self.engine.ask("probe");
        }
        let snap = match self.engine.pass() {
            BoardPass::Same { checked_at } if probing => match self.probe_shown(checked_at) {
                Some(snap) => snap,
                None => {
                    return Pass::Same {
                        scanned_at: checked_at,
                    }
                }
            },
            BoardPass::Same { checked_at } if self.shown.is_some() => {
                return Pass::Same {
                    scanned_at: checked_at,
                }
            }
            // Not reached (a check needs a full pass before it), but never an empty board.
            BoardPass::Same { checked_at } => {
                refused_snapshot(checked_at, "no pass has run yet".into())
            }
            BoardPass::Scanned(Ok(mut pass)) => {
                self.targets = !pass.probe_targets().is_empty();
                if self.probe {
                    self.config = pass.config.clone();
                }
                if self.probe_due() && !self.cancel.is_cancelled() {
                    self.probe_batch(&pass.probe_targets());
                    let now = self.clock.now_ms();
                    pass.apply_connections(&self.engine.runner().probes, now);
                }
                pass.snapshot
            }
            BoardPass::Scanned(Err(e)) => refused_snapshot(self.clock.now_ms(), e.to_string()),
        };
        if self.shown.as_ref().is_some_and(|s| s.same_board(&snap)) {
            return Pass::Same {
                scanned_at: snap.scanned_at,
            };
        }
        self.shown = Some(snap.clone());
        Pass::New(snap)
    }

    fn cancel_token(&self) -> CancelToken {
        self.cancel.clone()
    }

    fn wait_for_change(&mut self, _interval: Duration) -> bool {
        let probe_at = (self.probe && self.targets).then_some(self.next_probe);
        match self.engine.wait(probe_at) {
            Wake::Pass => self.cancel.is_cancelled(),
            Wake::Timer => {
                self.probe_wake = true;
                self.cancel.is_cancelled()
            }
            Wake::Stop => true,
        }
    }
}

/// Frames that show new states, as `live_frame` log events (the latency bench reads them).
pub(crate) struct LogFrames;

impl FrameLog for LogFrames {
    fn enabled(&self) -> bool {
        crate::log::enabled()
    }

    fn frame(&self, changed: &[(String, &'static str)], scanned_at: Ms) {
        // The log keeps 32 members of an array: one event per 32 rows.
        for chunk in changed.chunks(32).take(8) {
            let changed: Vec<serde_json::Value> = chunk
                .iter()
                .map(|(id, state)| serde_json::json!({"id": id, "state": state}))
                .collect();
            crate::log::event(
                crate::log::event::LIVE_FRAME,
                serde_json::json!({"changed": changed,
                    "passAt": crate::clock::format_iso(scanned_at)}),
            );
        }
    }
}
