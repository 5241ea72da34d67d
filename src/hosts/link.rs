//! One host on the board: its own thread, its own deadlines (docs/behaviour.md §12). It says
//! hello, then follows the host's board — a `status --watch --json-lines` stream when the host
//! has one, else `scan --json` every `POLL` — and keeps the host's state: answering, not
//! answering since when (its last rows kept, shown dimmed), auth failed, host key unknown or
//! changed, wrong version. Nothing here ever waits on another host or on the screen: a slow or
//! dead host only makes its own thread wait, and only until a deadline.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::hello::{self, Refused};
use super::shared::{Shared, Via};
use super::ssh::{self, Call, Problem, Stream};
use super::{wire, Host};
use crate::snapshot::{HostState, Row};
use crate::ui::ports::CancelToken;

/// Without a stream, the board is read this often.
pub(crate) const POLL: Duration = Duration::from_secs(2);
/// One `scan --json` must answer within this long.
const POLL_DEADLINE: Duration = Duration::from_secs(5);
/// Largest `scan --json` answer (255 workers at their largest fit well below).
const MAX_BOARD: usize = 32 * 1024 * 1024;
/// Longest stream line (the stream's own cap for a whole board, plus room).
const MAX_LINE: usize = 17 * 1024 * 1024;
const _: () = assert!(MAX_LINE > crate::views::stream::MAX_BOARD_LINE);
/// The stream's heartbeat period asked for, and how long without any line means the host
/// stopped answering.
const HEARTBEAT_SECS: u64 = 2;
const STALL: Duration = Duration::from_secs(3 * HEARTBEAT_SECS);
/// Waits between attempts after a failure: doubling from 1 s to 8 s (a host that comes back is
/// seen within 8 s); a refused host (key, auth, version) is asked again every 30 s.
const RETRY_MIN: Duration = Duration::from_secs(1);
const RETRY_MAX: Duration = Duration::from_secs(8);
const RETRY_REFUSED: Duration = Duration::from_secs(30);

/// Start the thread of `host` (index `slot` in `shared`); it ends when `stop` is cancelled.
/// `probe`: its stream is asked for the connection checks (`--probe`).
pub(crate) fn start(
    host: Host,
    slot: usize,
    shared: Arc<Shared>,
    stop: CancelToken,
    probe: bool,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name(format!("ip-host-{}", host.name))
        .spawn(move || {
            let reading: Reading = Arc::default();
            // Once for the thread's life: a stop ends the stream being read, so reading waits
            // on its lines alone (no timer), and still sees the stop at once.
            let r = reading.clone();
            stop.on_cancel(Box::new(move || {
                if let Some(e) = r.lock().ok().and_then(|mut g| g.take()) {
                    e.end_here();
                }
            }));
            Link {
                host,
                slot,
                shared,
                stop,
                unended: std::cell::RefCell::new(Vec::new()),
                probe,
                reading,
            }
            .run()
        })
}

/// Most streams remembered whose processes there could not be ended yet.
const MAX_UNENDED: usize = 8;

struct Link {
    host: Host,
    slot: usize,
    shared: Arc<Shared>,
    stop: CancelToken,
    /// Streams given up on while the host was out of reach: their processes there are ended
    /// once it answers again (a cut link leaves them running until sshd notices).
    unended: std::cell::RefCell<Vec<ssh::Limit>>,
    probe: bool,
    /// The stream being read, for the stop to end.
    reading: Reading,
}

/// The stream a link reads now (`None` between streams).
type Reading = Arc<std::sync::Mutex<Option<ssh::Ender>>>;

/// Why following a host ended.
enum Ended {
    /// It stopped answering (or never did): try again after a pause.
    NotAnswering(String),
    /// It is refused until something changes (key, auth, version, shell).
    Refused(HostState, String),
    /// A stream lived out its lifetime there (`ssh::STREAM_LIFETIME_SECS`): start a new one.
    Renew,
    Stopped,
}

impl Link {
    fn run(self) {
        let mut wait = RETRY_MIN;
        // Bounded by `stop`: each turn ends in a wait that returns at once when it is set.
        loop {
            if self.stop.is_cancelled() {
                return;
            }
            let ended = match self.hello() {
                Ok(h) => {
                    self.end_unended();
                    if h.watch {
                        self.follow_stream()
                    } else {
                        self.follow_polls()
                    }
                }
                Err(e) => e,
            };
            let pause = match ended {
                Ended::Stopped => return,
                Ended::Renew => continue,
                Ended::NotAnswering(detail) => {
                    self.set_state(HostState::NotAnswering, detail, None);
                    let w = wait;
                    wait = (wait * 2).min(RETRY_MAX);
                    w
                }
                Ended::Refused(state, detail) => {
                    self.set_state(state, detail, None);
                    wait = RETRY_MIN;
                    RETRY_REFUSED
                }
            };
            if self.shared.pause(self.slot, pause, &self.stop) {
                return;
            }
        }
    }

    /// End there what earlier streams left when the host was out of reach.
    fn end_unended(&self) {
        let pending = std::mem::take(&mut *self.unended.borrow_mut());
        let left: Vec<ssh::Limit> = pending
            .into_iter()
            .filter(|l| !ssh::end_remote(&self.host, l))
            .collect();
        self.unended.borrow_mut().extend(left);
    }

    fn words(&self, w: &[&str]) -> Vec<String> {
        ssh::remote_words(&self.host, w)
    }

    /// The host's words for its own board: `--host local` (a host never fans out further), then
    /// its flags from the hosts file.
    fn board_words(&self, cmd: &[&str]) -> Vec<String> {
        let mut w = self.words(cmd);
        w.extend(["--host".to_string(), super::LOCAL.to_string()]);
        w.extend(self.host.args.iter().cloned());
        w
    }

    fn hello(&self) -> Result<hello::Hello, Ended> {
        // No private control folder: refused (nothing can be sent), never "not answering".
        if let Err(e) = ssh::control() {
            return Err(Ended::Refused(HostState::Refused, e.to_string()));
        }
        hello::ask(&self.host).map_err(hello_ended)
    }

    /// Read the board with `scan --json` every `POLL` until the host stops answering.
    fn follow_polls(&self) -> Ended {
        let words = self.board_words(&["scan", "--json"]);
        loop {
            let deadline = Instant::now() + POLL_DEADLINE;
            match ssh::call(&self.host, &words, None, deadline, MAX_BOARD) {
                Call::Exited {
                    code: 0, stdout, ..
                } => match serde_json::from_slice::<Value>(&stdout) {
                    Ok(board) => self.replace_board(&board, Via::Poll),
                    Err(_) => {
                        return Ended::Refused(
                            HostState::Refused,
                            "its scan --json is not JSON".into(),
                        )
                    }
                },
                Call::Exited { code, stderr, .. } => {
                    return Ended::Refused(
                        HostState::Refused,
                        format!(
                            "its scan was refused (exit {code}): {}",
                            crate::text::one_line(&stderr, 200)
                        ),
                    )
                }
                other => return call_ended(other),
            }
            if self.stop.wait_timeout(POLL) {
                return Ended::Stopped;
            }
        }
    }

    /// Follow `status --watch --json-lines` until it ends, stalls or the host stops answering;
    /// then end it there too before anything else is tried (a hung program never notices).
    fn follow_stream(&self) -> Ended {
        let probe: &[&str] = if self.probe { &["--probe"] } else { &[] };
        let mut words = self.board_words(&[&["status", "--watch", "--json-lines"], probe].concat());
        words.extend(["--heartbeat-secs".to_string(), HEARTBEAT_SECS.to_string()]);
        let mut stream = match Stream::start(&self.host, &words, MAX_LINE) {
            Ok(s) => s,
            Err(e) => return Ended::NotAnswering(e.to_string()),
        };
        if let Ok(mut r) = self.reading.lock() {
            *r = Some(stream.ender());
        }
        let ended = self.read_stream(&mut stream);
        if let Ok(mut r) = self.reading.lock() {
            *r = None;
        }
        // The state first: ending it there may wait on a host that is gone.
        if let Ended::NotAnswering(detail) = &ended {
            self.set_state(HostState::NotAnswering, detail.clone(), None);
        }
        if let Some(limit) = stream.end() {
            let mut u = self.unended.borrow_mut();
            if u.len() >= MAX_UNENDED {
                u.remove(0);
            }
            u.push(limit);
        }
        ended
    }

    fn read_stream(&self, stream: &mut Stream) -> Ended {
        let mut have_board = false;
        loop {
            if self.stop.is_cancelled() {
                return Ended::Stopped;
            }
            // One wait per line (a heartbeat comes every `HEARTBEAT_SECS`): a stop ends the
            // stream here (`reading`), which ends this wait at once.
            let got = stream.next_line(STALL);
            if self.stop.is_cancelled() {
                return Ended::Stopped;
            }
            let text = match got {
                Some(Ok(t)) => t,
                Some(Err(end)) => return self.stream_ended(stream, end.to_string(), have_board),
                None => {
                    let why = format!("no line for {} s", STALL.as_secs());
                    return self.stream_ended(stream, why, have_board);
                }
            };
            let now = self.shared.now();
            let host = self.host.name.as_str();
            // Each line costs what it carries: one seat's row, or the whole board when it came.
            match wire::line(&text) {
                wire::Line::Board(b) => {
                    have_board = true;
                    self.replace_board(&b, Via::Watch);
                }
                wire::Line::Seat { key, record } if have_board => {
                    let row = wire::row_of(host, &record, 0);
                    let kept = self
                        .shared
                        .keeps_records()
                        .then(|| crate::views::stream::bounded_record(record));
                    self.shared.seat(self.slot, key, row, kept, Via::Watch, now);
                }
                wire::Line::Removed { key } if have_board => {
                    self.shared
                        .seat(self.slot, key, None, None, Via::Watch, now);
                }
                wire::Line::Heartbeat { checked } if have_board => {
                    self.shared.rechecked(self.slot, checked, Via::Watch, now);
                }
                wire::Line::Unknown(why) => {
                    let why = format!("its stream is not understood: {why}");
                    return Ended::Refused(HostState::Refused, why);
                }
                _ if have_board => self.shared.alive(self.slot, Via::Watch, now),
                _ => {}
            }
        }
    }

    /// The end of a stream: ssh's own words when it failed, else the given reason.
    /// `streamed`: whether a board came before the end.
    fn stream_ended(&self, stream: &mut Stream, why: String, streamed: bool) -> Ended {
        // Give ssh a moment to exit and say why (bounded: 20 × 10 ms).
        for _ in 0..20 {
            if stream.exited().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        if streamed && stream.lived_out() {
            return Ended::Renew;
        }
        let stderr = stream.stderr();
        match stream.exited() {
            Some(Some(255)) | Some(None) if !stderr.is_empty() => {
                problem_ended(Problem::classify(&stderr))
            }
            // The program there refused to start its stream and said why (a flag or file of
            // the hosts file): that is the host's answer, not silence. A stream that ran, or
            // an exit by a signal (128 + n: killed with its sshd), is a host gone quiet.
            Some(Some(code)) if !streamed && (1..128).contains(&code) => Ended::Refused(
                HostState::Refused,
                format!(
                    "its status --watch ended with exit {code}: {}",
                    crate::text::one_line(&stderr, 200)
                ),
            ),
            _ => Ended::NotAnswering(why),
        }
    }

    fn rows_of(&self, board: &Value) -> BTreeMap<String, Row> {
        wire::records(board)
            .into_iter()
            .filter_map(|r| {
                Some((
                    wire::key_of(r)?,
                    wire::row_of(self.host.name.as_str(), r, 0)?,
                ))
            })
            .collect()
    }

    fn replace_board(&self, board: &Value, via: Via) {
        let rows = self.rows_of(board);
        let records = self.shared.keeps_records().then(|| records_of(board));
        self.shared
            .board(self.slot, rows, records, via, self.shared.now());
    }

    fn set_state(&self, state: HostState, detail: String, via: Option<Via>) {
        self.shared.set_state(self.slot, state, detail, via);
    }
}

/// A board's records by key, bounded as the stream bounds them (a merged stream's lines).
pub(crate) fn records_of(board: &Value) -> BTreeMap<String, Value> {
    wire::records(board)
        .into_iter()
        .filter_map(|r| {
            Some((
                wire::key_of(r)?,
                crate::views::stream::bounded_record(r.clone()),
            ))
        })
        .collect()
}

/// A host's state and its words when its hello failed: the board's own rule, for a command
/// that reads the host once (`scan --host`).
pub(crate) fn hello_state(f: hello::Failed) -> (HostState, String) {
    match hello_ended(f) {
        Ended::Refused(state, detail) => (state, detail),
        Ended::NotAnswering(detail) => (HostState::NotAnswering, detail),
        Ended::Renew | Ended::Stopped => (HostState::NotAnswering, String::new()),
    }
}

fn hello_ended(f: hello::Failed) -> Ended {
    match f {
        hello::Failed::Refused(r) => refused(r),
        hello::Failed::NotInstalled(_) => Ended::Refused(HostState::Refused, f.to_string()),
        hello::Failed::Call(c) => call_ended(c),
    }
}

fn refused(r: Refused) -> Ended {
    let state = match r {
        Refused::WrongVersion { .. } => HostState::WrongVersion,
        _ => HostState::Refused,
    };
    Ended::Refused(state, r.to_string())
}

fn problem_ended(p: Problem) -> Ended {
    let detail = p.describe();
    match p {
        Problem::HostKeyUnknown => Ended::Refused(HostState::HostKeyUnknown, detail),
        Problem::HostKeyChanged => Ended::Refused(HostState::HostKeyChanged, detail),
        Problem::AuthFailed => Ended::Refused(HostState::AuthFailed, detail),
        Problem::NotAnswering(_) | Problem::Other(_) => Ended::NotAnswering(detail),
    }
}

fn call_ended(c: Call) -> Ended {
    match c {
        Call::Ssh(p) => problem_ended(p),
        Call::Timeout { .. } => Ended::NotAnswering("no answer before the deadline".into()),
        Call::Oversize => Ended::Refused(
            HostState::Refused,
            "its answer was larger than the cap".into(),
        ),
        Call::NotStarted(why) => Ended::NotAnswering(why),
        Call::Exited { code, stderr, .. } => Ended::Refused(
            HostState::Refused,
            format!("exit {code}: {}", crate::text::one_line(&stderr, 200)),
        ),
    }
}
