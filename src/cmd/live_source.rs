//! The sidebar's and `watch`'s snapshots: the board stream (`live::stream`, docs/behaviour.md
//! §3a) as snapshots — a pass when something changed, the probe checks on their own timer (and
//! after a pi or pane came or went), nothing while nothing changes.

use std::sync::Arc;
use std::time::Duration;

use crate::clock::{Clock, Ms};
use crate::live::stream::{Board, BoardStream, StreamError};
use crate::live::{Settings, Wake};
use crate::scan::ScanOptions;
use crate::snapshot::{RosterCode, RosterStatus, Snapshot};
use crate::ui::ports::{CancelToken, FrameLog, Pass, SnapshotSource};

/// The board stream as snapshots: a new one only when it shows something new.
pub struct LiveSource {
    stream: BoardStream,
    /// The last snapshot that showed something new.
    shown: Option<Snapshot>,
}

impl LiveSource {
    pub fn new(
        opts: ScanOptions,
        clock: Arc<dyn Clock>,
        probe: bool,
        memory: Arc<crate::evidence::ScanMemory>,
        settings: Settings,
    ) -> Result<LiveSource, StreamError> {
        Ok(LiveSource {
            stream: BoardStream::start(opts, clock, memory, settings, probe)?,
            shown: None,
        })
    }
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
        let snap = match (self.stream.next(), &self.shown) {
            // The probe timer's checks shown on the rows shown (what a scan would show: its rows
            // are those, its checks these).
            (Board::Probed { checked_at }, Some(shown)) => {
                let mut snap = Snapshot {
                    scanned_at: checked_at,
                    ..shown.clone()
                };
                self.stream.show_probes(&mut snap.rows);
                snap
            }
            (Board::Same { checked_at }, Some(_)) => {
                return Pass::Same {
                    scanned_at: checked_at,
                }
            }
            // Not reached (a check needs a full pass before it), but never an empty board.
            (Board::Same { checked_at } | Board::Probed { checked_at }, None) => {
                refused_snapshot(checked_at, "no pass has run yet".into())
            }
            (Board::New(pass), _) => pass.snapshot,
            (Board::Refused(e), _) => refused_snapshot(self.stream.now_ms(), e.to_string()),
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
        self.stream.cancel_token()
    }

    fn interrupter(&self) -> Option<crate::ui::ports::Interrupter> {
        let waker = self.stream.waker();
        Some(Arc::new(move || waker.interrupt()))
    }

    fn wait_for_change(&mut self, _interval: Duration) -> bool {
        match self.stream.wait(None) {
            Wake::Pass | Wake::Timer => self.stream.cancel_token().is_cancelled(),
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
            let changed = chunk
                .iter()
                .map(|(id, state)| crate::log::FrameChange { id, state })
                .collect();
            crate::log::write(&crate::log::LiveFrame {
                changed,
                pass_at: crate::clock::format_iso(scanned_at),
            });
        }
    }
}
