//! `status --watch [--json-lines]` and `scan --watch [--json-lines]`: the live engine's passes as
//! a stream (docs/interop.md §10): the board stream the sidebar reads (`live::stream`), not a loop
//! around `status`.
//!
//! The stream never grows without bound: lines wait in a queue of at most `MAX_QUEUE_BYTES` for a
//! writer thread; when a slow reader lets it fill, the queued lines are dropped and the next line
//! is a whole `board` again (`"why": "resync"`, `"dropped": N`). The writer watches its output
//! for the reader going away (`POLLERR`), so `status --watch | head -n 3` ends as soon as `head`
//! does, idle or not: exit 0, as on SIGTERM, SIGHUP and SIGINT.

use std::collections::VecDeque;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::cli::StreamArgs;
use crate::clock::Clock;
use crate::cmd::options::Resolved;
use crate::live::stream::{Board, BoardStream};
use crate::live::wake::Waker;
use crate::live::{Settings, Wake};
use crate::scan::{Scan, ScanOptions};
use crate::views::stream::Differ;

/// Most bytes waiting for a slow reader (a board line alone may be larger: it is never dropped
/// when the queue is empty).
pub(crate) const MAX_QUEUE_BYTES: usize = 4 << 20;

/// What a watch writes besides the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Also {
    /// `status --watch`: nothing (read-only).
    Nothing,
    /// `scan --watch`: the board files, after every pass that changed a seat.
    BoardFiles,
}

#[derive(Default)]
struct Queue {
    lines: VecDeque<String>,
    bytes: usize,
    /// Lines dropped since the last board line.
    dropped: u64,
    /// The reader went away (or writing failed): stop.
    closed: bool,
}

/// The bounded queue between the engine and the writer thread.
struct Out {
    q: Mutex<Queue>,
    /// Wakes the writer thread.
    wake: Waker,
    /// `MAX_QUEUE_BYTES`, or less for a test (`INTERCOM_PANE_TEST_WATCH_QUEUE_BYTES`).
    cap: usize,
}

/// The queue's size: a test may only make it smaller.
fn queue_cap() -> usize {
    std::env::var("INTERCOM_PANE_TEST_WATCH_QUEUE_BYTES")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .map_or(MAX_QUEUE_BYTES, |v| v.clamp(1, MAX_QUEUE_BYTES))
}

impl Out {
    /// Queue one line; `false` when the queue was full and everything queued was dropped
    /// (the caller sends a whole board next).
    fn push(&self, line: String) -> bool {
        let Ok(mut q) = self.q.lock() else {
            return false;
        };
        if !q.lines.is_empty() && q.bytes + line.len() > self.cap {
            q.dropped += q.lines.len() as u64 + 1;
            q.lines.clear();
            q.bytes = 0;
            return false;
        }
        q.bytes += line.len() + 1;
        q.lines.push_back(line);
        drop(q);
        self.wake.wake();
        true
    }

    fn closed(&self) -> bool {
        self.q.lock().map(|q| q.closed).unwrap_or(true)
    }

    /// Lines dropped since the last call.
    fn take_dropped(&self) -> u64 {
        self.q
            .lock()
            .map(|mut q| std::mem::take(&mut q.dropped))
            .unwrap_or(0)
    }
}

/// The writer thread: writes queued lines to stdout; sleeps in `poll` on its waker and on stdout
/// (for `POLLERR`: the reader closed the pipe). On any write error it closes the queue and stops
/// the engine.
fn spawn_writer(out: Arc<Out>, engine: Waker) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("watch-writer".into())
        .spawn(move || {
            let stdout = std::io::stdout();
            loop {
                // Drained before the queue is looked at: a line queued after the look wakes the
                // poll below.
                out.wake.drain();
                let next = out.q.lock().ok().and_then(|mut q| {
                    let l = q.lines.pop_front()?;
                    q.bytes = q.bytes.saturating_sub(l.len() + 1);
                    Some(l)
                });
                let ok = match next {
                    Some(line) => {
                        let mut lock = stdout.lock();
                        lock.write_all(line.as_bytes())
                            .and_then(|()| lock.write_all(b"\n"))
                            .and_then(|()| lock.flush())
                            .is_ok()
                    }
                    None => {
                        if out.wake.stopped() {
                            return;
                        }
                        reader_still_there(&out.wake)
                    }
                };
                if !ok {
                    if let Ok(mut q) = out.q.lock() {
                        q.closed = true;
                    }
                    engine.stop();
                    return;
                }
            }
        })
        .map(|_| ())
}

/// Sleep until the waker or stdout says something; false when stdout's reader went away.
fn reader_still_there(wake: &Waker) -> bool {
    let mut fds = [
        libc::pollfd {
            fd: wake.raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        },
        // No events asked: only POLLERR/POLLHUP (a pipe whose reader closed) come back.
        libc::pollfd {
            fd: libc::STDOUT_FILENO,
            events: 0,
            revents: 0,
        },
    ];
    // SAFETY: two valid pollfds.
    let n = unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) };
    !(n > 0 && fds[1].revents & (libc::POLLERR | libc::POLLHUP | libc::POLLNVAL) != 0)
}

/// Why a watch cannot run (exit 2).
#[derive(Debug)]
pub(crate) enum WatchError {
    /// The stream or its writer thread could not start.
    Start(std::io::Error),
    /// The board stream could not start.
    Stream(crate::live::stream::StreamError),
    /// The first pass was refused.
    Refused(crate::scan::ScanError),
}

impl std::fmt::Display for WatchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WatchError::Start(e) => write!(f, "cannot start the watch: {e}"),
            WatchError::Stream(e) => write!(f, "cannot start the watch: {e}"),
            WatchError::Refused(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for WatchError {}

/// Run the watch until the reader goes away or a stop signal comes (`Ok`, exit 0); `Err` with
/// the reason when it cannot start or its first pass is refused (exit 2).
pub(crate) fn run(
    r: Resolved,
    stream: &StreamArgs,
    probe: bool,
    also: Also,
) -> Result<(), WatchError> {
    let clock: Arc<dyn Clock> = Arc::from(r.clock);
    let (mut boards, out) = start(r.opts, &clock, stream, probe)?;
    let heartbeat = Duration::from_secs(stream.heartbeat_secs);
    let mut lines = Lines {
        differ: Differ::new(),
        first: true,
        resync: false,
        last_scanned: clock.now_ms(),
    };
    // The board last sent (the probe timer's checks are shown on it).
    let mut last: Option<Scan> = None;
    let mut next_heartbeat = Instant::now() + heartbeat;
    loop {
        match boards.wait(Some(next_heartbeat)) {
            Wake::Stop => break,
            Wake::Timer => {
                lines.heartbeat(&boards, &clock, stream, &out);
                next_heartbeat = Instant::now() + heartbeat;
                continue;
            }
            Wake::Pass => {}
        }
        let pass = match (boards.next(), last.take()) {
            (Board::New(p), _) => p,
            (Board::Probed { .. }, Some(mut p)) => {
                boards.apply_probes(&mut p);
                p
            }
            // The long timer's check made no pass: the board sent still holds, as of now.
            (Board::Same { checked_at } | Board::Probed { checked_at }, l) => {
                lines.last_scanned = checked_at;
                last = l;
                continue;
            }
            (Board::Refused(e), _) if lines.first => {
                out.wake.stop();
                return Err(WatchError::Refused(e));
            }
            (Board::Refused(e), l) => {
                eprintln!("intercom-pane: pass refused: {e}");
                last = l;
                continue;
            }
        };
        let changed = lines.pass(&pass, &clock, stream, &out);
        if changed && also == Also::BoardFiles {
            if let Err(e) = crate::views::board_files::write_board(&pass) {
                eprintln!("intercom-pane: board files not written: {e}");
            }
        }
        // Kept only for the probe timer's checks (a board is large; nothing else reads it).
        if probe {
            last = Some(pass);
        }
        if out.closed() {
            break;
        }
    }
    out.wake.stop();
    Ok(())
}

/// The board stream (stopped by the stop signals) and the queue its writer thread drains.
fn start(
    opts: ScanOptions,
    clock: &Arc<dyn Clock>,
    stream: &StreamArgs,
    probe: bool,
) -> Result<(BoardStream, Arc<Out>), WatchError> {
    let settings = Settings {
        full_every: Duration::from_secs(stream.live.full_pass_secs),
        ..Settings::default()
    };
    let memory = Arc::new(crate::evidence::ScanMemory::new());
    let boards = BoardStream::start(opts, clock.clone(), memory, settings, probe)
        .map_err(WatchError::Stream)?;
    let waker = boards.waker();
    waker.stop_on_signals();
    let out = Arc::new(Out {
        q: Mutex::new(Queue::default()),
        wake: Waker::new().map_err(WatchError::Start)?,
        cap: queue_cap(),
    });
    spawn_writer(out.clone(), waker).map_err(WatchError::Start)?;
    Ok((boards, out))
}

/// The stream's lines: a whole board first (and after lines were dropped), then the changes.
struct Lines {
    differ: Differ,
    first: bool,
    /// Lines were dropped: the next pass sends a whole board.
    resync: bool,
    last_scanned: crate::clock::Ms,
}

impl Lines {
    /// The heartbeat line: the last pass's time and the engine's health.
    fn heartbeat(
        &mut self,
        boards: &BoardStream,
        clock: &Arc<dyn Clock>,
        stream: &StreamArgs,
        out: &Out,
    ) {
        let live = serde_json::to_value(boards.health()).unwrap_or_default();
        let line = self
            .differ
            .heartbeat(self.last_scanned, live, clock.now_ms());
        if stream.json_lines && !out.push(line) {
            self.resync = true;
        }
    }

    /// The lines of a pass, queued; whether a seat changed.
    fn pass(
        &mut self,
        pass: &Scan,
        clock: &Arc<dyn Clock>,
        stream: &StreamArgs,
        out: &Out,
    ) -> bool {
        self.last_scanned = pass.scanned_at;
        let now = clock.now_ms();
        let lines = if self.first || self.resync {
            let why = if self.first { "start" } else { "resync" };
            vec![self.differ.board(pass, why, out.take_dropped(), now)]
        } else {
            self.differ.changes(pass, now)
        };
        let changed = !lines.is_empty();
        self.first = false;
        self.resync = false;
        if stream.json_lines {
            for line in lines {
                if !out.push(line) {
                    self.resync = true;
                    break;
                }
            }
        }
        changed
    }
}
