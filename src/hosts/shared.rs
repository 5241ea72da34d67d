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

/// The longest single wait of `wait_newer` without `until`. A stop wakes the wait at once
/// (`wake_on`); this only bounds a wait whose token was never tied to the board.
const STOP_SLICE: Duration = Duration::from_secs(60);

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
    /// No longer on the board (the hosts file dropped or changed it): shown nowhere, and
    /// whatever its thread still writes is ignored.
    retired: bool,
    /// Bumped by "retry now" for this host alone (the sidebar's hosts view).
    retry: u64,
}

struct Inner {
    version: u64,
    local: Option<Snapshot>,
    hosts: Vec<Entry>,
    /// Bumped by "retry now": every host waiting to try again tries at once.
    retry: u64,
    /// Since the last frame was made, only this machine's passes that found nothing new.
    only_touched: bool,
}

/// One host as a merged stream reads it: its state and its records.
pub(crate) struct HostRecords {
    pub(crate) view: HostView,
    pub(crate) records: BTreeMap<String, Value>,
    /// It left the board (the hosts file no longer names it).
    pub(crate) gone: bool,
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
            .map(|name| Self::entry(name, now, stream))
            .collect();
        Arc::new(Shared {
            clock,
            inner: Mutex::new(Inner {
                version: 0,
                local: None,
                hosts,
                retry: 0,
                only_touched: false,
            }),
            changed: Condvar::new(),
            stream,
        })
    }

    fn entry(name: &str, now: Ms, stream: bool) -> Entry {
        Entry {
            name: name.to_string(),
            state: HostState::Connecting,
            since: now,
            answered_at: None,
            via: None,
            detail: String::new(),
            rows: BTreeMap::new(),
            records: stream.then(BTreeMap::new),
            version: 0,
            retired: false,
            retry: 0,
        }
    }

    /// A host joins the board (the hosts file named it): its slot, `reuse` when given (a
    /// retired slot whose thread has ended), else a new one at the end.
    pub(crate) fn add(&self, name: &str, reuse: Option<usize>) -> usize {
        let now = self.now();
        let stream = self.stream;
        let mut slot = 0;
        self.update(|g| {
            let mut e = Self::entry(name, now, stream);
            match reuse.filter(|r| g.hosts.get(*r).is_some_and(|x| x.retired)) {
                Some(r) => {
                    if let Some(old) = g.hosts.get_mut(r) {
                        e.version = old.version.wrapping_add(1);
                        *old = e;
                    }
                    slot = r;
                }
                None => {
                    g.hosts.push(e);
                    slot = g.hosts.len() - 1;
                }
            }
            true
        });
        slot
    }

    /// Host `slot` leaves the board: its rows go, and its thread's writes are ignored.
    pub(crate) fn retire(&self, slot: usize) {
        self.update(|g| {
            let Some(e) = g.hosts.get_mut(slot) else {
                return false;
            };
            e.retired = true;
            e.rows.clear();
            if let Some(r) = e.records.as_mut() {
                r.clear();
            }
            e.version = e.version.wrapping_add(1);
            true
        });
    }

    /// "Retry now": every host waiting to try again tries at once.
    pub(crate) fn retry_now(&self) {
        if let Ok(mut g) = self.inner.lock() {
            g.retry = g.retry.wrapping_add(1);
            self.changed.notify_all();
        }
    }

    /// "Retry now" for host `name` alone: it tries at once if it is waiting to; whether the
    /// board has that host.
    pub(crate) fn retry_host(&self, name: &str) -> bool {
        let Ok(mut g) = self.inner.lock() else {
            return false;
        };
        let Some(e) = g.hosts.iter_mut().find(|e| !e.retired && e.name == name) else {
            return false;
        };
        e.retry = e.retry.wrapping_add(1);
        self.changed.notify_all();
        true
    }

    /// Host `slot`'s pause before trying again: `d`, cut short by `stop` or "retry now" (for
    /// every host, or for this one); true when stopped.
    pub(crate) fn pause(&self, slot: usize, d: Duration, stop: &CancelToken) -> bool {
        let until = Instant::now() + d;
        let Ok(mut g) = self.inner.lock() else {
            return stop.wait_timeout(d);
        };
        let own = |g: &Inner| g.hosts.get(slot).map_or(0, |e| e.retry);
        let asked = (g.retry, own(&g));
        // Bounded by `until`, in slices of at most 200 ms that re-check `stop`.
        loop {
            if stop.is_cancelled() {
                return true;
            }
            let now = Instant::now();
            if now >= until || (g.retry, own(&g)) != asked {
                return false;
            }
            let slice = (until - now).min(Duration::from_millis(200));
            g = match self.changed.wait_timeout(g, slice) {
                Ok((ng, _)) => ng,
                Err(_) => return stop.is_cancelled(),
            };
        }
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
            g.only_touched = false;
            self.changed.notify_all();
        }
    }

    /// Change host `slot` under the lock; `f` says whether anything of it changed.
    fn update_host(&self, slot: usize, f: impl FnOnce(&mut Entry) -> bool) {
        self.update(|g| {
            let Some(e) = g.hosts.get_mut(slot).filter(|e| !e.retired) else {
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

    /// Host `slot` is alive, and its connection checks named in `checked` (key, time as sent,
    /// time) found what its last lines said: each seat takes the new check time. The sidebar
    /// shows it with its next frame (no frame for it, as for `answered_at`); a merged stream,
    /// which keeps the records, is woken to carry it on its next heartbeat.
    pub(crate) fn rechecked(
        &self,
        slot: usize,
        checked: Vec<(String, String, Ms)>,
        via: Via,
        now: Ms,
    ) {
        self.update_host(slot, |e| {
            let moved = Self::mark_answering(e, via, now);
            let mut kept = false;
            for (key, text, at) in checked {
                if let Some(r) = e.rows.get_mut(&key) {
                    r.connection.checked_at = Some(at);
                }
                let conn = e
                    .records
                    .as_mut()
                    .and_then(|m| m.get_mut(&key))
                    .and_then(|r| r.pointer_mut("/intercom/connection"))
                    .and_then(Value::as_object_mut);
                if let Some(c) = conn {
                    kept |= c.insert("checkedAt".into(), Value::String(text.clone()))
                        != Some(Value::String(text));
                }
            }
            moved || kept
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

    /// Wake every wait on this board when `stop` is cancelled (under the lock, so a wait
    /// that has just looked at the token cannot miss it).
    pub(crate) fn wake_on(self: &Arc<Self>, stop: &CancelToken) {
        let me = Arc::downgrade(self);
        stop.on_cancel(Box::new(move || {
            if let Some(s) = me.upgrade() {
                let _g = s.inner.lock();
                s.changed.notify_all();
            }
        }));
    }

    /// This machine's pass found nothing new: the board shown holds, as of `scanned_at` (no
    /// new frame for it).
    pub(crate) fn touch_local(&self, scanned_at: Ms) {
        if let Ok(mut g) = self.inner.lock() {
            if let Some(l) = g.local.as_mut() {
                l.scanned_at = scanned_at;
                g.version = g.version.wrapping_add(1);
                self.changed.notify_all();
            }
        }
    }

    /// When only this machine's passes that found nothing new came since the last frame:
    /// the time of the newest, and the version (the frame shown still holds).
    pub(crate) fn only_touched(&self) -> Option<(Ms, u64)> {
        let g = self.inner.lock().ok()?;
        if !g.only_touched {
            return None;
        }
        Some((g.local.as_ref()?.scanned_at, g.version))
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
        // Bounded: every wake re-checks `stop` and `until`; a wait ends at `until` or after
        // `STOP_SLICE`. A change wakes it at once (`changed`), and so does a stop of a token
        // tied to the board (`wake_on`). The sidebar's passes thread waits here and nobody joins
        // it (its hosts are ended by `end_masters` as the process ends).
        loop {
            let now = Instant::now();
            if stop.is_cancelled() || until.is_some_and(|u| now >= u) {
                return None;
            }
            if g.version != seen && (self.stream || g.local.is_some()) {
                return Some(g.version);
            }
            let slice = until.map_or(STOP_SLICE, |u| (u - now).min(STOP_SLICE));
            g = self.changed.wait_timeout(g, slice).ok()?.0;
        }
    }

    /// The frame's snapshot: this machine's pass, then each host's rows (tagged, with its
    /// state), and the hosts' own states.
    pub(crate) fn merged(&self) -> Option<(Snapshot, u64)> {
        let mut g = self.inner.lock().ok()?;
        g.only_touched = true;
        let mut snap = g.local.clone()?;
        let extra: usize = g.hosts.iter().map(|e| e.rows.len()).sum();
        snap.rows.reserve(extra);
        for e in g.hosts.iter().filter(|e| !e.retired) {
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
    /// A slot `seen` has not held yet is new to it.
    pub(crate) fn changed_hosts(&self, seen: &mut Vec<u64>) -> Vec<(usize, HostRecords)> {
        let Ok(g) = self.inner.lock() else {
            return Vec::new();
        };
        if seen.len() < g.hosts.len() {
            seen.resize(g.hosts.len(), u64::MAX);
        }
        let mut out = Vec::new();
        for ((slot, e), s) in g.hosts.iter().enumerate().zip(seen.iter_mut()) {
            if e.version != *s {
                *s = e.version;
                out.push((
                    slot,
                    HostRecords {
                        view: view_of(e),
                        records: e.records.clone().unwrap_or_default(),
                        gone: e.retired,
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
            .map(|g| g.hosts.iter().filter(|e| !e.retired).map(view_of).collect())
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
    crate::log::write(&crate::log::HostState {
        host: Some(&e.name),
        hosts: None,
        state: e.state.as_str(),
        detail: crate::text::one_line(&e.detail, 300),
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn records(state: &str) -> Option<BTreeMap<String, Value>> {
        Some(BTreeMap::from([(
            "p/W".to_string(),
            json!({"project": "p", "agent": "W", "state": state}),
        )]))
    }

    #[test]
    fn hosts_join_and_leave_and_a_stream_sees_only_what_changed() {
        let s = Shared::for_stream(&["local".into()], Arc::new(crate::clock::FixedClock(1_000)));
        let a = s.add("a", None);
        let b = s.add("b", None);
        assert_eq!((a, b), (1, 2));
        let mut seen = Vec::new();
        assert_eq!(s.changed_hosts(&mut seen).len(), 3, "every host at first");
        assert!(s.changed_hosts(&mut seen).is_empty());

        s.board(a, BTreeMap::new(), records("idle"), Via::Watch, 2_000);
        let got = s.changed_hosts(&mut seen);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].0, a);
        assert_eq!(got[0].1.view.state, HostState::Answering);
        assert_eq!(got[0].1.view.seats, 1);
        // The same board again changes nothing.
        s.board(a, BTreeMap::new(), records("idle"), Via::Watch, 3_000);
        assert!(s.changed_hosts(&mut seen).is_empty());

        // a leaves: said once, gone from the views; what its thread still writes is ignored.
        s.retire(a);
        let got = s.changed_hosts(&mut seen);
        assert!(got.len() == 1 && got[0].1.gone && got[0].1.records.is_empty());
        s.board(a, BTreeMap::new(), records("working"), Via::Watch, 4_000);
        s.set_state(a, HostState::NotAnswering, "x".into(), None);
        assert!(s.changed_hosts(&mut seen).is_empty());
        let names: Vec<String> = s.views().into_iter().map(|v| v.name).collect();
        assert_eq!(names, ["local", "b"]);
        // Its slot is given to a new host only when asked to reuse it.
        assert_eq!(s.add("c", Some(a)), a);
        assert_eq!(s.add("d", Some(b)), 3, "a live slot is never reused");
        let got = s.changed_hosts(&mut seen);
        let names: Vec<&str> = got.iter().map(|(_, h)| h.view.name.as_str()).collect();
        assert_eq!(names, ["c", "d"]);
    }

    #[test]
    fn retry_now_ends_a_pause_at_once() {
        let s = Shared::new(&[], Arc::new(crate::clock::FixedClock(1_000)));
        let stop = CancelToken::new();
        let s2 = s.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            s2.retry_now();
        });
        let t0 = Instant::now();
        assert!(!s.pause(0, Duration::from_secs(20), &stop));
        assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
        let _ = t.join();
        stop.cancel();
        assert!(s.pause(0, Duration::from_secs(20), &stop), "stopped");
    }

    #[test]
    fn retry_now_for_one_host_ends_only_its_pause() {
        let hosts: Vec<Host> = ["a", "b"]
            .iter()
            .map(|n| Host::ad_hoc(super::super::HostName::parse(n).unwrap(), format!("{n}.x")))
            .collect();
        let s = Shared::new(&hosts, Arc::new(crate::clock::FixedClock(1_000)));
        let stop = CancelToken::new();
        let pausing = |slot: usize, d: Duration| {
            let (s, stop) = (s.clone(), stop.clone());
            std::thread::spawn(move || {
                let t0 = Instant::now();
                let stopped = s.pause(slot, d, &stop);
                (stopped, t0.elapsed())
            })
        };
        let a = pausing(0, Duration::from_secs(20));
        let b = pausing(1, Duration::from_millis(1_500));
        std::thread::sleep(Duration::from_millis(200));
        assert!(!s.retry_host("nosuch"));
        assert!(s.retry_host("b"));
        let (stopped, took) = b.join().unwrap();
        assert!(!stopped && took < Duration::from_millis(1_400), "{took:?}");
        // a still waits: only b was asked.
        std::thread::sleep(Duration::from_millis(300));
        assert!(!a.is_finished(), "a's pause ended with b's retry");
        assert!(s.retry_host("a"));
        let (stopped, took) = a.join().unwrap();
        assert!(!stopped && took < Duration::from_secs(5), "{took:?}");
    }
}
