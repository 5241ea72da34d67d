//! `status --watch --json-lines --host all` (or `--host A --host B`): one live stream of every
//! host's seats, each line tagged with its host, and each host's own state (docs/interop.md
//! §10a). It runs on the board the sidebar uses for other hosts (`hosts::shared`, one thread
//! per host in `hosts::link`), with this machine's live engine as host `local`
//! (`hosts::here`); lines are made from what each host holds (`hosts::lines`), so a slow or
//! hung host only stops its own lines, and a slow reader only makes lines coalesce.

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::fleet::{self, Fleet};
use super::lines::Merger;
use super::shared::Shared;
use super::{here, Host};
use crate::clock::Clock;
use crate::live::wake::Waker;
use crate::scan::ScanOptions;
use crate::ui::ports::CancelToken;

/// After a change, wait this long for more before writing (a burst is one set of lines).
const COALESCE: Duration = Duration::from_millis(20);
/// The longest sleep between looks at the stop flag and the reader.
const SLICE: Duration = Duration::from_millis(250);
/// The whole board first waits this long at most for every host's first answer (this
/// machine's first pass, each host's hello and board); a host still connecting then is in it
/// as `connecting`, and its seats follow as `seat` lines.
const FIRST_WAIT: Duration = Duration::from_millis(1500);

/// What a merged stream follows.
pub(crate) struct Plan {
    /// This machine's source, when `local` is one of the hosts.
    pub(crate) local: Option<ScanOptions>,
    pub(crate) hosts: Vec<Host>,
    /// The hosts file to follow (`--host all`): hosts added, removed or changed there join or
    /// leave the stream within a second.
    pub(crate) follow: Option<std::path::PathBuf>,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) heartbeat: Duration,
    pub(crate) full_every: Duration,
    /// `--probe`: the connection checks, on this machine's part as on the plain stream and
    /// asked of every host's stream.
    pub(crate) probe: bool,
}

/// Stream until the reader goes away or a stop signal comes (`Ok`: exit 0); `Err` when it
/// cannot start.
pub(crate) fn run(plan: Plan) -> std::io::Result<()> {
    let names: Vec<String> = plan
        .local
        .as_ref()
        .map(|_| super::LOCAL.to_string())
        .into_iter()
        .collect();
    let shared = Shared::for_stream(&names, plan.clock.clone());
    let stop = Waker::new()?;
    stop.stop_on_signals();
    let cancel = CancelToken::new();
    let fleet = Fleet::new(shared.clone(), cancel.clone(), plan.probe);
    let mut local = None;
    let started = (|| -> std::io::Result<()> {
        if let Some(opts) = plan.local {
            local = Some(here::start(
                opts,
                plan.clock.clone(),
                plan.full_every,
                plan.probe,
                0,
                shared.clone(),
            )?);
        }
        fleet.apply(&plan.hosts)?;
        if let Some(path) = plan.follow {
            fleet::follow(fleet.clone(), path, plan.hosts.clone(), cancel.clone())?;
        }
        Ok(())
    })();
    let result =
        started.and_then(|()| follow(&shared, &stop, &cancel, plan.heartbeat, &plan.clock));
    cancel.cancel();
    if let Some((thread, waker)) = local {
        waker.stop();
        let _ = thread.join();
    }
    fleet.end();
    result
}

/// Write the lines as the hosts change, a heartbeat every `heartbeat`, until stopped.
fn follow(
    shared: &Shared,
    stop: &Waker,
    cancel: &CancelToken,
    heartbeat: Duration,
    clock: &Arc<dyn Clock>,
) -> std::io::Result<()> {
    let mut merger = Merger::new();
    // Empty: every host is new to the first look.
    let mut seen = Vec::new();
    let mut version = first_answers(shared, cancel);
    let mut next_beat = Instant::now() + heartbeat;
    let stdout = std::io::stdout();
    let board = merger.board(&shared.changed_hosts(&mut seen), clock.now_ms());
    {
        let mut lock = stdout.lock();
        let sent = lock
            .write_all(board.as_bytes())
            .and_then(|()| lock.write_all(b"\n"))
            .and_then(|()| lock.flush());
        if sent.is_err() {
            return Ok(());
        }
    }
    // Bounded by the stop flag and the reader: each turn sleeps at most `SLICE`.
    loop {
        let at = clock.now_ms();
        let mut out = Vec::new();
        for (slot, now) in shared.changed_hosts(&mut seen) {
            for l in merger.host(slot, &now, at) {
                out.extend_from_slice(l.as_bytes());
                out.push(b'\n');
            }
        }
        if Instant::now() >= next_beat {
            out.extend_from_slice(merger.heartbeat(&shared.views(), at).as_bytes());
            out.push(b'\n');
            next_beat = Instant::now() + heartbeat;
        }
        if !out.is_empty() {
            let mut lock = stdout.lock();
            if lock.write_all(&out).and_then(|()| lock.flush()).is_err() {
                // The reader went away: the stream's normal end.
                return Ok(());
            }
        }
        if stop.stopped() || !reader_there() {
            return Ok(());
        }
        let until = (Instant::now() + SLICE).min(next_beat);
        if let Some(v) = shared.wait_newer(version, cancel, Some(until)) {
            version = v;
            if cancel.wait_timeout(COALESCE) {
                return Ok(());
            }
        }
    }
}

/// Wait (at most `FIRST_WAIT`) until no host is still connecting; the board's version then.
fn first_answers(shared: &Shared, cancel: &CancelToken) -> u64 {
    let until = Instant::now() + FIRST_WAIT;
    let mut version = 0;
    // Bounded by `until`: `wait_newer` returns `None` there.
    while shared
        .views()
        .iter()
        .any(|v| v.state == crate::snapshot::HostState::Connecting)
    {
        match shared.wait_newer(version, cancel, Some(until)) {
            Some(v) => version = v,
            None => break,
        }
    }
    version
}

/// Whether standard output's reader is still there (a closed pipe says `POLLERR`).
fn reader_there() -> bool {
    let mut fd = [libc::pollfd {
        fd: libc::STDOUT_FILENO,
        events: 0,
        revents: 0,
    }];
    // SAFETY: one valid pollfd; a zero timeout never blocks.
    let n = unsafe { libc::poll(fd.as_mut_ptr(), 1, 0) };
    !(n > 0 && fd[0].revents & (libc::POLLERR | libc::POLLHUP | libc::POLLNVAL) != 0)
}
