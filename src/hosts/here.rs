//! This machine in a merged stream (`hosts::merged`): the board stream's passes, as
//! `status --watch` runs them (with its connection checks when `--probe` asks for them),
//! written into the board as host `local`'s records, so this machine's seats and the other
//! hosts' reach the stream by one path.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use super::shared::{Shared, Via};
use crate::clock::Clock;
use crate::live::stream::{Board, BoardStream, StreamError};
use crate::live::wake::Waker;
use crate::live::{Settings, Wake};
use crate::scan::{Scan, ScanOptions};
use crate::snapshot::HostState;

/// Start the stream's thread writing into `slot` (`probe`: with the connection checks, on
/// the plain stream's timer); the waker stops it.
pub(crate) fn start(
    opts: ScanOptions,
    clock: Arc<dyn Clock>,
    full_every: Duration,
    probe: bool,
    slot: usize,
    shared: Arc<Shared>,
) -> std::io::Result<(std::thread::JoinHandle<()>, Waker)> {
    let settings = Settings {
        full_every,
        ..Settings::default()
    };
    let memory = Arc::new(crate::evidence::ScanMemory::new());
    let mut boards = BoardStream::start(opts, clock, memory, settings, probe)
        .map_err(|StreamError::Engine(e)| e)?;
    let waker = boards.waker();
    let thread = std::thread::Builder::new()
        .name("ip-local-stream".into())
        .spawn(move || {
            // The board last written: the probe timer's checks are shown on it.
            let mut last: Option<Scan> = None;
            // Bounded by the waker: `wait` returns `Stop` once it is stopped.
            loop {
                match boards.wait(None) {
                    Wake::Stop => return,
                    Wake::Timer => continue,
                    Wake::Pass => {}
                }
                let now = shared.now();
                let scan = match (boards.next(), last.take()) {
                    (Board::New(scan), _) => scan,
                    (Board::Probed { .. }, Some(mut scan)) => {
                        boards.apply_probes(&mut scan);
                        scan
                    }
                    (Board::Same { .. } | Board::Probed { .. }, l) => {
                        last = l;
                        shared.alive(slot, Via::Watch, now);
                        continue;
                    }
                    (Board::Refused(e), l) => {
                        last = l;
                        shared.set_state(slot, HostState::Refused, e.to_string(), None);
                        continue;
                    }
                };
                shared.board(slot, BTreeMap::new(), Some(records(&scan)), Via::Watch, now);
                // Kept only for the probe timer's checks (a board is large).
                if probe {
                    last = Some(scan);
                }
            }
        })?;
    Ok((thread, waker))
}

/// A pass's records by key, as this machine's own stream carries them.
fn records(scan: &Scan) -> BTreeMap<String, serde_json::Value> {
    scan.records
        .iter()
        .map(|r| {
            let v = crate::views::stream::bounded_record(
                serde_json::to_value(r).unwrap_or(serde_json::Value::Null),
            );
            (String::from(r.key()), v)
        })
        .collect()
}
