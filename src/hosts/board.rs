//! The board over several machines (docs/behaviour.md §12): this machine's passes and each
//! host's rows, kept apart and merged only when a frame is drawn.
//!
//! Each host's thread (`hosts::link`) writes its rows into `hosts::shared` as they change; this machine's
//! passes run on their own thread; the sidebar is woken when either changed. So a slow pass
//! never delays a host's rows, a slow host never delays anything, and a frame costs one copy of
//! the rows shown, however many hosts there are.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::fleet::{Fleet, HostList};
use super::shared::Shared;
use super::Host;
use crate::clock::{Clock, Ms};
use crate::snapshot::Snapshot;
use crate::ui::ports::{CancelToken, Pass, SnapshotSource};

/// After a change, wait this long for more before a frame is made (a burst is one frame).
const COALESCE: Duration = Duration::from_millis(20);
/// When the board ends, how long its host threads get to end what they run on their hosts.
const END_WAIT: Duration = Duration::from_secs(2);

/// A board that cannot be shown, and why.
fn refused(now: Ms, why: &str) -> Snapshot {
    Snapshot {
        scanned_at: now,
        roster: crate::snapshot::RosterStatus::Unavailable {
            code: crate::snapshot::RosterCode::ScanRefused,
            reason: why.into(),
        },
        rows: Vec::new(),
        truncated: false,
        errors: Vec::new(),
        usage: Default::default(),
        hosts: Vec::new(),
    }
}

/// The sidebar's source over several machines: each host on its own thread, this machine's
/// passes on a thread of their own too; a snapshot is made when any of them changed. While no
/// host is on the board (a hosts file that names none yet), this machine's passes are run by
/// the caller as without hosts — an idle sidebar wakes no more for following the file — and
/// move to their own thread when the file names a host.
pub struct HostsSource {
    shared: Arc<Shared>,
    cancel: CancelToken,
    seen: u64,
    fleet: Arc<Fleet>,
    /// This machine's passes while they are still the caller's (`None` once on their thread).
    here: Option<Box<dyn SnapshotSource>>,
    interval: Duration,
}

impl HostsSource {
    /// Start one thread per host, and this machine's pass thread when there is any host.
    /// `probe`: each host's stream checks its connections there (as the sidebar's `--no-probe`
    /// says for this machine, so it says for every host).
    pub fn start(
        local: Box<dyn SnapshotSource>,
        hosts: Vec<Host>,
        clock: Arc<dyn Clock>,
        interval: Duration,
        probe: bool,
    ) -> std::io::Result<HostsSource> {
        let shared = Shared::new(&[], clock);
        let cancel = local.cancel_token();
        shared.wake_on(&cancel);
        let fleet = Fleet::new(shared.clone(), cancel.clone(), probe);
        // A host joining later ends the caller's wait: its next pass moves this machine's
        // passes to their thread.
        if let Some(wake) = local.interrupter() {
            fleet.on_first_host(wake);
        }
        let mut source = HostsSource {
            shared,
            cancel,
            seen: 0,
            fleet,
            here: Some(local),
            interval,
        };
        source.fleet.apply(&hosts)?;
        source.move_passes(false)?;
        Ok(source)
    }

    /// Once a host is on the board (or `always`): this machine's passes on a thread of their
    /// own (never back: a board that had hosts keeps the thread).
    fn move_passes(&mut self, always: bool) -> std::io::Result<()> {
        if self.here.is_none() || (!always && self.fleet.list().is_empty()) {
            return Ok(());
        }
        let Some(mut local) = self.here.take() else {
            return Ok(());
        };
        let s = self.shared.clone();
        let stop = self.cancel.clone();
        let interval = self.interval;
        let started = std::thread::Builder::new()
            .name("ip-local-passes".into())
            .spawn(move || {
                // The first pass is the whole board (the caller may have shown it already).
                let mut first = true;
                // Bounded by the cancel token: each wait returns at once when it is set.
                while !stop.is_cancelled() {
                    let pass = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        if std::mem::take(&mut first) {
                            Pass::New(local.next_snapshot())
                        } else {
                            local.next_pass()
                        }
                    }));
                    match pass {
                        Ok(Pass::New(snap)) => s.set_local(snap),
                        // The live source found nothing new: the board shown holds, as of now
                        // (no frame for it, as without other hosts).
                        Ok(Pass::Same { scanned_at }) => s.touch_local(scanned_at),
                        Err(_) => {
                            // Never a stale board shown as current: say so, and stop passing.
                            s.set_local(refused(s.now(), "a scan pass of this machine failed"));
                            return;
                        }
                    }
                    if local.wait_for_change(interval) {
                        return;
                    }
                }
            });
        if let Err(e) = started {
            self.shared.set_local(refused(
                self.shared.now(),
                "this machine's passes did not start",
            ));
            return Err(e);
        }
        Ok(())
    }

    /// Follow the hosts file at `path` (which named `applied` when the board started): hosts
    /// added, removed or changed there join or leave the board within a second.
    pub fn follow_file(&self, path: std::path::PathBuf, applied: Vec<Host>) -> std::io::Result<()> {
        super::fleet::follow(self.fleet.clone(), path, applied, self.cancel.clone()).map(|_| ())
    }

    /// The hosts on the board now (they change with the hosts file).
    pub fn hosts(&self) -> HostList {
        self.fleet.list()
    }

    /// "Retry now" for the sidebar (`H`): every host waiting to try again tries at once.
    pub(crate) fn control(&self) -> Arc<dyn crate::ui::ports::HostsControl> {
        self.fleet.clone()
    }
}

impl HostsSource {
    /// The board once it changed (and the burst of changes ended), or `None` when nothing
    /// changed within `d` (a bounded wait for tests and the bench; the views wait with
    /// `wait_for_change`).
    pub fn changed_within(&mut self, d: Duration) -> Option<Snapshot> {
        // Bounded waits need the board's own: this machine's passes on their thread.
        let _ = self.move_passes(true);
        let until = Instant::now() + d;
        self.shared
            .wait_newer(self.seen, &self.cancel, Some(until))?;
        // A burst is one board, as on the sidebar (a host's probe round sends a line per seat).
        if self.cancel.wait_timeout(COALESCE) {
            return None;
        }
        Some(self.next_snapshot())
    }

    /// Stop every thread of this board.
    pub fn stop(&self) {
        self.cancel.cancel();
    }
}

impl Drop for HostsSource {
    /// The board ends with what it started: each host thread ends its stream there (bounded
    /// by `END_WAIT` in all), then the shared connections are stopped.
    fn drop(&mut self) {
        self.cancel.cancel();
        self.fleet.end();
    }
}

/// After the cancel: give the host threads `END_WAIT` in all to end what they run on their
/// hosts, then stop the shared connections.
pub(crate) fn end_links(links: Vec<std::thread::JoinHandle<()>>, hosts: &[Host]) {
    let until = Instant::now() + END_WAIT;
    // Bounded by `until`: polled every 20 ms.
    while links.iter().any(|l| !l.is_finished()) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    for l in links.into_iter().filter(|l| l.is_finished()) {
        let _ = l.join();
    }
    super::ssh::stop_masters(hosts);
}

impl SnapshotSource for HostsSource {
    fn next_snapshot(&mut self) -> Snapshot {
        let _ = self.move_passes(false);
        if let Some(local) = self.here.as_mut() {
            return local.next_snapshot();
        }
        if self.seen == 0 {
            // The first frame waits for this machine's first pass (or quit).
            let _ = self.shared.wait_newer(0, &self.cancel, None);
        }
        match self.shared.merged() {
            Some((snap, v)) => {
                self.seen = v;
                snap
            }
            None => refused(self.shared.now(), "the board is not available (quitting)"),
        }
    }

    /// Only this machine's passes that found nothing new since the last frame: the frame
    /// holds, as of the newest (as the live source says without other hosts).
    fn next_pass(&mut self) -> Pass {
        let _ = self.move_passes(false);
        if let Some(local) = self.here.as_mut() {
            return local.next_pass();
        }
        if self.seen != 0 {
            if let Some((scanned_at, v)) = self.shared.only_touched() {
                self.seen = v;
                return Pass::Same { scanned_at };
            }
        }
        Pass::New(self.next_snapshot())
    }

    fn cancel_token(&self) -> CancelToken {
        self.cancel.clone()
    }

    /// Sleep until this machine or a host changed the board (a burst is one frame; a pass of
    /// this machine's that found nothing new needs no wait for more).
    fn wait_for_change(&mut self, interval: Duration) -> bool {
        if let Some(local) = self.here.as_mut() {
            return local.wait_for_change(interval);
        }
        match self.shared.wait_newer(self.seen, &self.cancel, None) {
            Some(_) if self.shared.only_touched().is_some() => self.cancel.is_cancelled(),
            Some(_) => self.cancel.wait_timeout(COALESCE),
            None => true,
        }
    }
}
