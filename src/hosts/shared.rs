//! What the board over several machines holds between frames (`hosts::board`): this
//! machine's newest pass and each host's rows, written by the pass thread and the host threads
//! (`hosts::link`) and merged only when a frame is made.

use std::collections::BTreeMap;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

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
}

struct Inner {
    version: u64,
    local: Option<Snapshot>,
    hosts: Vec<Entry>,
}

/// What the host threads and this machine's passes write, and frames read.
pub(crate) struct Shared {
    clock: Arc<dyn Clock>,
    inner: Mutex<Inner>,
    changed: Condvar,
}

impl Shared {
    pub(crate) fn new(hosts: &[Host], clock: Arc<dyn Clock>) -> Arc<Shared> {
        let now = clock.now_ms();
        let hosts = hosts
            .iter()
            .map(|h| Entry {
                name: h.name.to_string(),
                state: HostState::Connecting,
                since: now,
                answered_at: None,
                via: None,
                detail: String::new(),
                rows: BTreeMap::new(),
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
        })
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

    /// Host `slot` answered with its whole board.
    pub(crate) fn board(&self, slot: usize, rows: BTreeMap<String, Row>, via: Via, now: Ms) {
        self.update(|g| {
            let Some(e) = g.hosts.get_mut(slot) else {
                return false;
            };
            let moved = Self::mark_answering(e, via, now);
            let differs = e.rows != rows;
            e.rows = rows;
            moved || differs
        });
    }

    /// Host `slot` said one seat changed (`None`: it left the board).
    pub(crate) fn seat(&self, slot: usize, key: String, row: Option<Row>, via: Via, now: Ms) {
        self.update(|g| {
            let Some(e) = g.hosts.get_mut(slot) else {
                return false;
            };
            let moved = Self::mark_answering(e, via, now);
            let differs = match row {
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
        self.update(|g| {
            g.hosts
                .get_mut(slot)
                .is_some_and(|e| Self::mark_answering(e, via, now))
        });
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
        self.update(|g| {
            let Some(e) = g.hosts.get_mut(slot) else {
                return false;
            };
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
            if g.version != seen && g.local.is_some() {
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
            snap.hosts.push(HostView {
                name: e.name.clone(),
                state: e.state,
                since: e.since,
                answered_at: e.answered_at,
                via: e.via.map(Via::as_str),
                detail: e.detail.clone(),
                seats: e.rows.len(),
            });
        }
        Some((snap, g.version))
    }
}

fn log_state(e: &Entry) {
    crate::log::event(
        crate::log::event::HOST_STATE,
        serde_json::json!({"host": e.name, "state": e.state.as_str(),
            "detail": crate::text::one_line(&e.detail, 300)}),
    );
}
