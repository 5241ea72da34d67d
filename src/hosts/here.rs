//! This machine in a merged stream (`hosts::merged`): the live engine's passes, as
//! `status --watch` runs them, written into the board as host `local`'s records, so this
//! machine's seats and the other hosts' reach the stream by one path.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use super::shared::{Shared, Via};
use crate::clock::Clock;
use crate::live::board::{BoardPass, BoardPasses};
use crate::live::wake::Waker;
use crate::live::{Engine, Settings, Wake};
use crate::scan::{Scan, ScanOptions};
use crate::snapshot::HostState;

/// Start the engine's thread writing into `slot`; the waker stops it.
pub(crate) fn start(
    opts: ScanOptions,
    clock: Arc<dyn Clock>,
    full_every: Duration,
    slot: usize,
    shared: Arc<Shared>,
) -> std::io::Result<(std::thread::JoinHandle<()>, Waker)> {
    let settings = Settings {
        full_every,
        ..Settings::default()
    };
    let memory = Arc::new(crate::evidence::ScanMemory::new());
    let mut engine = Engine::new(BoardPasses::new(opts, clock, memory), settings)?;
    let waker = engine.waker();
    let thread = std::thread::Builder::new()
        .name("ip-local-stream".into())
        .spawn(move || {
            // Bounded by the waker: `wait` returns `Stop` once it is stopped.
            loop {
                match engine.wait(None) {
                    Wake::Stop => return,
                    Wake::Timer => continue,
                    Wake::Pass => {}
                }
                let now = shared.now();
                match engine.pass() {
                    BoardPass::Same { .. } => shared.alive(slot, Via::Watch, now),
                    BoardPass::Scanned(Ok(scan)) => {
                        shared.board(slot, BTreeMap::new(), Some(records(&scan)), Via::Watch, now)
                    }
                    BoardPass::Scanned(Err(e)) => {
                        shared.set_state(slot, HostState::Refused, e.to_string(), None)
                    }
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
