//! What the board over several machines holds between frames (`hosts::board`): this
//! machine's newest pass and each host's rows, written by the pass thread and the host threads
//! (`hosts::link`) and merged only when a frame is made.

use std::collections::BTreeMap;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::Host;
use crate::clock::{Clock, Ms};
use crate::snapshot::{HostState, HostView, Row, RowHost, Snapshot};
use crate::ui::ports::CancelToken;

/// How a host's board was last read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Via {
    Watch,
    Poll,
}

impl Via {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Via::Watch => "watch",
            Via::Poll => "poll",
        }
    }
}

struct Entry {
    name: String,
    state: HostState,
    since: Ms,
    answered_at: Option<Ms>,
    via: Option<Via>,
    detail: String,
    /// Its rows by `<project>/<agent>` there, `RowHost` filled in when merged.
    rows: BTreeMap<String, Row>,
    /// Its records as it sent them (bounded), kept only for a merged stream
    /// (`hosts::merged`): the sidebar needs only the rows.
    records: Option<BTreeMap<String, Value>>,
    /// Bumped whenever anything of this host changed (a merged stream reads only those).
    version: u64,
}

struct Inner {
    version: u64,
    local: Option<Snapshot>,
    hosts: Vec<Entry>,
}

/// One host as a merged stream reads it: its state and its records.
pub(crate) struct HostRecords {
    pub(crate) view: HostView,
    pub(crate) records: BTreeMap<String, Value>,
}

/// What the host threads and this machine's passes write, and frames read.
pub(crate) struct Shared {
    clock: Arc<dyn Clock>,
    inner: Mutex<Inner>,
    changed: Condvar,
    /// A merged stream's board: records kept, and no local snapshot awaited (this machine,
    /// when streamed, is a host entry of its own).
    stream: bool,
}

impl Shared {
    /// The sidebar's board: this machine's passes and `hosts`.
    pub(crate) fn new(hosts: &[Host], clock: Arc<dyn Clock>) -> Arc<Shared> {
        let names: Vec<String> = hosts.iter().map(|h| h.name.to_string()).collect();
        Self::make(&names, clock, false)
    }

    /// A merged stream's board: one entry per name (this machine's too, as `local`).
    pub(crate) fn for_stream(names: &[String], clock: Arc<dyn Clock>) -> Arc<Shared> {
        Self::make(names, clock, true)
    }

    fn make(names: &[String], clock: Arc<dyn Clock>, stream: bool) -> Arc<Shared> {
        let now = clock.now_ms();
        let hosts = names
            .iter()
            .map(|name| Entry {
                name: name.clone(),
                state: HostState::Connecting,
                since: now,
                answered_at: None,
                via: None,
                detail: String::new(),
                rows: BTreeMap::new(),
                records: stream.then(BTreeMap::new),
                version: 0,
            })
            .collect();
        Arc::new(Shared {
            clock,
            inner: Mutex::new(Inner {
                version: 0,
                local: None,
                hosts,
            }),
            changed: Condvar::new(),
            stream,
        })
    }

    /// Whether records are kept (a merged stream): the host threads then hand them in too.
    pub(crate) fn keeps_records(&self) -> bool {
        self.stream
    }

    pub(crate) fn now(&self) -> Ms {
        self.clock.now_ms()
    }

    /// Change the board under the lock; `f` says whether anything shown changed.
    fn update(&self, f: impl FnOnce(&mut Inner) -> bool) {
        let Ok(mut g) = self.inner.lock() else { return };
        if f(&mut g) {
            g.version = g.version.wrapping_add(1);
            self.changed.notify_all();
        }
    }

    /// Change host `slot` under the lock; `f` says whether anything of it changed.
    fn update_host(&self, slot: usize, f: impl FnOnce(&mut Entry) -> bool) {
        self.update(|g| {
            let Some(e) = g.hosts.get_mut(slot) else {
                return false;
            };
            let changed = f(e);
            if changed {
                e.version = e.version.wrapping_add(1);
            }
            changed
        });
    }

    /// Mark host `slot` answering (logged when that is new); whether its state changed.
    fn mark_answering(e: &mut Entry, via: Via, now: Ms) -> bool {
        e.answered_at = Some(now);
        let changed = e.state != HostState::Answering || e.via != Some(via);
        if changed {
            e.state = HostState::Answering;
            e.since = now;
            e.via = Some(via);
            e.detail.clear();
            log_state(e);
        }
        changed
    }

    /// Host `slot` answered with its whole board (`records`: as it sent them, when kept).
    pub(crate) fn board(
        &self,
        slot: usize,
        rows: BTreeMap<String, Row>,
        records: Option<BTreeMap<String, Value>>,
        via: Via,
        now: Ms,
    ) {
        self.update_host(slot, |e| {
            let moved = Self::mark_answering(e, via, now);
            let mut differs = e.rows != rows;
            e.rows = rows;
            if let (Some(kept), Some(new)) = (e.records.as_mut(), records) {
                differs |= *kept != new;
                *kept = new;
            }
            moved || differs
        });
    }

    /// Host `slot` said one seat changed (`row` `None`: it is not a row of the board;
    /// `record` `None`: it left the board, or records are not kept).
    pub(crate) fn seat(
        &self,
        slot: usize,
        key: String,
        row: Option<Row>,
        record: Option<Value>,
        via: Via,
        now: Ms,
    ) {
        self.update_host(slot, |e| {
            let moved = Self::mark_answering(e, via, now);
            let mut differs = match record {
                Some(r) => e
                    .records
                    .as_mut()
                    .is_some_and(|m| m.insert(key.clone(), r.clone()).as_ref() != Some(&r)),
                None => e.records.as_mut().is_some_and(|m| m.remove(&key).is_some()),
            };
            differs |= match row {
                Some(r) if e.rows.get(&key) == Some(&r) => false,
                Some(r) => {
                    e.rows.insert(key, r);
                    true
                }
                None => e.rows.remove(&key).is_some(),
            };
            moved || differs
        });
    }

    /// Host `slot` is alive and nothing changed.
    pub(crate) fn alive(&self, slot: usize, via: Via, now: Ms) {
        self.update_host(slot, |e| Self::mark_answering(e, via, now));
    }

    /// Host `slot` is in another state than answering; its rows are kept (shown dimmed).
    pub(crate) fn set_state(
        &self,
        slot: usize,
        state: HostState,
        detail: String,
        via: Option<Via>,
    ) {
        let now = self.now();
        self.update_host(slot, |e| {
            if e.state == state && e.detail == detail {
                return false;
            }
            if e.state != state {
                e.since = now;
            }
            e.state = state;
            e.detail = detail;
            if via.is_some() {
                e.via = via;
            }
            log_state(e);
            true
        });
    }

    /// This machine's newest pass.
    pub(crate) fn set_local(&self, snap: Snapshot) {
        self.update(|g| {
            g.local = Some(snap);
            true
        });
    }

    /// Wait until the board is newer than `seen` (or `stop`, or `until`); the new version,
    /// `None` on stop or at `until`.
    pub(crate) fn wait_newer(
        &self,
        seen: u64,
        stop: &CancelToken,
        until: Option<Instant>,
    ) -> Option<u64> {
        let Ok(mut g) = self.inner.lock() else {
            return None;
        };
        // Bounded: every wake re-checks `stop` and `until`, and waits are short slices.
        loop {
            if stop.is_cancelled() || until.is_some_and(|u| Instant::now() >= u) {
                return None;
            }
            if g.version != seen && (self.stream || g.local.is_some()) {
                return Some(g.version);
            }
            g = self
                .changed
                .wait_timeout(g, Duration::from_millis(200))
                .ok()?
                .0;
        }
    }

    /// The frame's snapshot: this machine's pass, then each host's rows (tagged, with its
    /// state), and the hosts' own states.
    pub(crate) fn merged(&self) -> Option<(Snapshot, u64)> {
        let g = self.inner.lock().ok()?;
        let mut snap = g.local.clone()?;
        let extra: usize = g.hosts.iter().map(|e| e.rows.len()).sum();
        snap.rows.reserve(extra);
        for e in &g.hosts {
            let answering = e.state == HostState::Answering;
            for r in e.rows.values() {
                let mut r = r.clone();
                if let Some(h) = r.host.as_mut() {
                    h.answering = answering;
                    h.answered_at = e.answered_at.unwrap_or(e.since);
                } else {
                    r.host = Some(RowHost {
                        name: e.name.clone(),
                        key: String::new(),
                        session_id: None,
                        answered_at: e.answered_at.unwrap_or(e.since),
                        answering,
                    });
                }
                snap.rows.push(r);
            }
            snap.hosts.push(view_of(e));
        }
        Some((snap, g.version))
    }

    /// Every host whose version differs from `seen` (updated in place), with its records:
    /// a merged stream copies only the hosts that changed since it last looked.
    pub(crate) fn changed_hosts(&self, seen: &mut [u64]) -> Vec<(usize, HostRecords)> {
        let Ok(g) = self.inner.lock() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for ((slot, e), s) in g.hosts.iter().enumerate().zip(seen.iter_mut()) {
            if e.version != *s {
                *s = e.version;
                out.push((
                    slot,
                    HostRecords {
                        view: view_of(e),
                        records: e.records.clone().unwrap_or_default(),
                    },
                ));
            }
        }
        out
    }

    /// Every host's state now (a merged stream's heartbeat).
    pub(crate) fn views(&self) -> Vec<HostView> {
        self.inner
            .lock()
            .map(|g| g.hosts.iter().map(view_of).collect())
            .unwrap_or_default()
    }
}

fn view_of(e: &Entry) -> HostView {
    HostView {
        name: e.name.clone(),
        state: e.state,
        since: e.since,
        answered_at: e.answered_at,
        via: e.via.map(Via::as_str),
        detail: e.detail.clone(),
        seats: e.records.as_ref().map_or(e.rows.len(), BTreeMap::len),
    }
}

fn log_state(e: &Entry) {
    crate::log::event(
        crate::log::event::HOST_STATE,
        serde_json::json!({"host": e.name, "state": e.state.as_str(),
            "detail": crate::text::one_line(&e.detail, 300)}),
    );
}
