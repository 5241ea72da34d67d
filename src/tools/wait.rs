//! `intercom-pane wait NAME --state S… --timeout-secs N` and the `intercom_wait` tool: scan
//! passes, each the same bounded pass as `status`, until the seat shows one of the states or the
//! time is up. Between passes at most `POLL`; never past the deadline by more than one pass.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::clock::Clock;
use crate::evidence::ScanMemory;
use crate::scan::{self, ScanOptions};
use crate::snapshot::Row;
use crate::states::BoardState;
use crate::views::board_page::{self, BoardQuery};

/// Pause between passes.
const POLL: Duration = Duration::from_millis(1000);

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

/// How a wait ended: `Ok` with `reached` true or false (the timeout), or a refusal (no such
/// seat, or more than one).
pub(crate) fn wait(req: &WaitRequest) -> Result<Value, String> {
    let started = Instant::now();
    let deadline = started + req.timeout;
    let q = BoardQuery {
        name: Some(req.name.clone()),
        limit: 1,
        ..BoardQuery::default()
    };
    // Passes again and again: what an unchanged file gave is remembered, as the sidebar does.
    let memory = ScanMemory::new();
    let mut passes = 0u32;
    let mut last: Option<Value> = None;
    loop {
        let pass =
            scan::run(req.opts, req.clock, None, Some(&memory)).map_err(|e| e.to_string())?;
        passes += 1;
        let now = pass.snapshot.scanned_at;
        let rows = board_page::select(&pass.snapshot, &q).map_err(|e| e.to_string());
        let row: Option<&Row> = match rows {
            Ok(r) if r.len() > 1 => {
                return Err(format!(
                    "{:?} names {} seats; give <project>/<agent>",
                    crate::text::sanitize(&req.name),
                    r.len()
                ))
            }
            Ok(r) => r.first().copied(),
            // A seat that was there and is gone is an answer; one never seen is a refusal.
            Err(e) if last.is_none() => return Err(e),
            Err(_) => None,
        };
        let seat = row.map(|r| board_page::seat_json(r, now, None));
        let reached = row.is_some_and(|r| req.states.contains(&r.state));
        if reached || Instant::now() >= deadline {
            let waited = started.elapsed().as_millis() as u64;
            return Ok(json!({
                "reached": reached,
                "name": crate::text::sanitize(&req.name),
                "states": req.states.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
                "state": row.map(|r| r.state.as_str()),
                "gone": row.is_none(),
                "waitedMs": waited,
                "passes": passes,
                "seat": seat.or(last),
            }));
        }
        last = seat;
        let left = deadline.saturating_duration_since(Instant::now());
        std::thread::sleep(POLL.min(left));
    }
}
