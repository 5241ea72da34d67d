//! `intercom-pane wait NAME --state S… --timeout-secs N` and the `intercom_wait` tool: on the
//! board stream every board view reads (`live::stream`, docs/behaviour.md §3a), so a wait sleeps until something the seat's state rests on changes (a file written,
//! a pane or pi gone, a registration) and answers within one coalesced pass of it — no polling.
//! The same bounded pass as `status`; never past the deadline by more than one pass.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;

use crate::clock::{Clock, Ms, SystemClock};
use crate::evidence::ScanMemory;
use crate::live::stream::{Board, BoardStream, StreamError};
use crate::live::{Settings, Wake};
use crate::scan::{Scan, ScanError, ScanOptions};
use crate::snapshot::Row;
use crate::states::BoardState;
use crate::views::board_page::{self, BoardError, BoardQuery};

pub(crate) fn state_named(s: &str) -> Option<BoardState> {
    BoardState::ALL.into_iter().find(|b| b.as_str() == s)
}

pub(crate) struct WaitRequest<'a> {
    pub name: String,
    pub states: Vec<BoardState>,
    pub timeout: Duration,
    pub opts: &'a ScanOptions,
    pub clock: &'a dyn Clock,
}

/// Why a wait was refused before it could answer.
#[derive(Debug)]
pub(crate) enum WaitError {
    /// The first pass was refused (`seen.json`).
    Scan(ScanError),
    /// No such seat on the first pass (or a bad query).
    Board(BoardError),
    /// The name matches several seats.
    Ambiguous { name: String, count: usize },
    /// The board stream could not start (no waker fd).
    Engine(StreamError),
}

impl std::fmt::Display for WaitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WaitError::Scan(e) => write!(f, "{e}"),
            WaitError::Board(e) => write!(f, "{e}"),
            WaitError::Ambiguous { name, count } => write!(
                f,
                "{:?} names {count} seats; give <project>/<agent>",
                crate::text::sanitize(name)
            ),
            WaitError::Engine(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for WaitError {}

/// How a wait ended (the command's and the tool's JSON answer).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WaitReport {
    pub reached: bool,
    pub name: String,
    pub states: Vec<&'static str>,
    pub state: Option<&'static str>,
    pub gone: bool,
    pub waited_ms: u64,
    /// Passes the engine ran for this wait (a quiet seat: one).
    pub passes: u32,
    pub seat: Option<Value>,
}

/// The caller's clock as it reads now, moving on with the system clock: a fixed `--now` keeps
/// its offset, the real clock is itself (the engine's passes need a shared clock).
struct Moving {
    offset: Ms,
}

impl Clock for Moving {
    fn now_ms(&self) -> Ms {
        SystemClock.now_ms().saturating_add(self.offset)
    }
}

/// The seat `q` names in `pass`: `Ok(None)` when it is gone (it was seen before), a refusal
/// when it was never seen or the name is ambiguous.
fn seat_of<'a>(
    pass: &'a Scan,
    q: &BoardQuery,
    seen_before: bool,
) -> Result<Option<&'a Row>, WaitError> {
    match board_page::select(&pass.snapshot, q) {
        Ok(r) if r.len() > 1 => Err(WaitError::Ambiguous {
            name: q.name.clone().unwrap_or_default(),
            count: r.len(),
        }),
        Ok(r) => Ok(r.first().copied()),
        // A seat that was there and is gone is an answer; one never seen is a refusal.
        Err(e) if !seen_before => Err(WaitError::Board(e)),
        Err(_) => Ok(None),
    }
}

/// Wait until the seat shows one of the states, it is gone, or the time is up.
pub(crate) fn wait(req: &WaitRequest) -> Result<WaitReport, WaitError> {
    let started = Instant::now();
    let deadline = started + req.timeout;
    let q = BoardQuery {
        name: Some(req.name.clone()),
        limit: 1,
        ..BoardQuery::default()
    };
    let clock: Arc<dyn Clock> = Arc::new(Moving {
        offset: req.clock.now_ms().saturating_sub(SystemClock.now_ms()),
    });
    let memory = Arc::new(ScanMemory::new());
    let mut boards =
        BoardStream::start(req.opts.clone(), clock, memory, Settings::default(), false)
            .map_err(WaitError::Engine)?;
    let mut passes = 0u32;
    // The seat as the newest pass showed it (`None` before the first pass, or gone).
    let mut shown: Option<(Option<&'static str>, Value)> = None;
    let mut seen = false;
    let report =
        |reached: bool, gone: bool, shown: Option<(Option<&'static str>, Value)>, passes| {
            let (state, seat) = shown.map_or((None, None), |(st, v)| (st, Some(v)));
            WaitReport {
                reached,
                name: crate::text::sanitize(&req.name),
                states: req.states.iter().map(|s| s.as_str()).collect(),
                state,
                gone,
                waited_ms: started.elapsed().as_millis() as u64,
                passes,
                seat,
            }
        };
    loop {
        match boards.wait(Some(deadline)) {
            Wake::Pass => {}
            // The deadline (or a stop signal): the newest pass's answer, not reached.
            Wake::Timer | Wake::Stop => return Ok(report(false, false, shown, passes)),
        }
        let pass = match boards.next() {
            // Nothing the last pass rested on moved: its answer holds.
            Board::Same { .. } | Board::Probed { .. } => continue,
            Board::New(p) => p,
            Board::Refused(e) if !seen => return Err(WaitError::Scan(e)),
            Board::Refused(_) => continue,
        };
        passes += 1;
        let Some(row) = seat_of(&pass, &q, seen)? else {
            // Gone: the seat as it was last seen.
            return Ok(report(false, true, shown.map(|(_, v)| (None, v)), passes));
        };
        seen = true;
        let reached = req.states.contains(&row.state);
        shown = Some((
            Some(row.state.as_str()),
            board_page::seat_json(row, pass.snapshot.scanned_at, None),
        ));
        if reached || Instant::now() >= deadline {
            return Ok(report(reached, false, shown, passes));
        }
    }
}
