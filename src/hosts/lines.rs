//! The lines of the merged stream (`status --watch --json-lines --host all`, docs/interop.md
//! §10a): every host's seats tagged with that host, and each host's own state, in the words of
//! `HostState` (the sidebar's host line says the same states). The first line is the whole
//! board, as the one-machine stream's is; then a line per change.
//!
//! ```text
//! {"v":1,"kind":"board","seq":1,"at":"…","why":"start","hosts":[{"host":"local","state":"answering",…}],"seats":[{"host":"local","key":"proj/Builder","seat":{…}}]}
//! {"v":1,"kind":"host","seq":2,"at":"…","host":"b","state":"connecting","since":"…","answeredAt":null,"via":null,"detail":"","seats":0}
//! {"v":1,"kind":"seat","seq":2,"at":"…","host":"b","key":"proj/Builder","seat":{…record…}}
//! {"v":1,"kind":"removed","seq":3,"at":"…","host":"b","key":"proj/Builder"}
//! {"v":1,"kind":"heartbeat","seq":4,"at":"…","hosts":[{"host":"b","state":"answering","answeredAt":"…"}]}
//! ```
//!
//! Lines are made by comparing what each host holds now with what was last written for it, so
//! a slow reader costs nothing but coalescing: the newest state is written when it reads again.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::shared::HostRecords;
use crate::clock::{format_iso, Ms};
use crate::snapshot::{HostState, HostView};
use crate::views::rechecks::{compared, Rechecks};

/// The schema version (the same as this machine's own stream).
const VERSION: u64 = crate::views::stream::VERSION;
/// Longest detail said of a host (ssh's words, sanitized).
const MAX_DETAIL: usize = 300;

/// Every line: the members of §10, `host` when it is about one host.
#[derive(Serialize)]
struct Line<'a, B: Serialize> {
    v: u64,
    kind: &'static str,
    seq: u64,
    at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    host: Option<&'a str>,
    #[serde(flatten)]
    body: B,
}

/// A host's state: sent first for every host, then whenever its state or detail changes.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct HostBody {
    state: &'static str,
    since: String,
    answered_at: Option<String>,
    via: Option<&'static str>,
    detail: String,
    seats: usize,
}

/// The state of a host that left the board (the hosts file no longer names it).
const REMOVED: &str = "removed";

#[derive(Serialize)]
struct LeftBody {
    state: &'static str,
    detail: &'static str,
}

#[derive(Serialize)]
struct SeatBody<'a> {
    key: &'a str,
    seat: &'a Value,
}

/// The whole board: every host's state (`host` lines' members, with `host`), then every seat
/// (`seat` lines' members, with `host`).
#[derive(Serialize)]
struct BoardBody<'a> {
    why: &'static str,
    hosts: Vec<Tagged<'a, HostBody>>,
    seats: Vec<Tagged<'a, SeatBody<'a>>>,
}

#[derive(Serialize)]
struct Tagged<'a, B: Serialize> {
    host: &'a str,
    #[serde(flatten)]
    body: B,
}

#[derive(Serialize)]
struct RemovedBody<'a> {
    key: &'a str,
}

#[derive(Serialize)]
struct BeatBody {
    hosts: Vec<Beat>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Beat {
    host: String,
    state: &'static str,
    answered_at: Option<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    checked: BTreeMap<String, String>,
}

/// What was last written about one host.
#[derive(Default)]
struct Sent {
    /// The host this slot held (a slot may be given to another host once one left).
    name: String,
    state: Option<(HostState, String)>,
    /// key → the record as compared (`rechecks::compared`), as last sent.
    seats: BTreeMap<String, Value>,
    rechecks: Rechecks<String>,
}

/// Turns the hosts' changes into lines.
pub(crate) struct Merger {
    seq: u64,
    sent: Vec<Sent>,
}

impl Merger {
    pub(crate) fn new() -> Merger {
        Merger {
            seq: 0,
            sent: Vec::new(),
        }
    }

    fn line<B: Serialize>(
        &mut self,
        kind: &'static str,
        at: Ms,
        host: Option<&str>,
        body: B,
    ) -> String {
        self.seq += 1;
        let l = Line {
            v: VERSION,
            kind,
            seq: self.seq,
            at: format_iso(at),
            host,
            body,
        };
        crate::views::json::to_string(&l).unwrap_or_default()
    }

    /// The lines for host `slot` as it is now: its state line when that changed, one `seat`
    /// line per record changed in anything but its clock values, one `removed` per seat gone.
    /// A host that left the board: a `removed` line per seat it had, then its `host` line
    /// with the state `removed`.
    pub(crate) fn host(&mut self, slot: usize, now: &HostRecords, at: Ms) -> Vec<String> {
        let mut out = Vec::new();
        if self.sent.len() <= slot {
            self.sent.resize_with(slot + 1, Sent::default);
        }
        let name = now.view.name.as_str();
        // The slot held another host that left before it was looked at: that one's end first.
        let held = self
            .sent
            .get(slot)
            .map(|s| s.name.clone())
            .unwrap_or_default();
        if !held.is_empty() && (held != name || now.gone) {
            out.extend(self.leave(slot, &held, at));
        }
        if now.gone {
            return out;
        }
        let Some(sent) = self.sent.get_mut(slot) else {
            return out;
        };
        sent.name = name.to_string();
        let detail = crate::text::one_line(&now.view.detail, MAX_DETAIL);
        let state_now = (now.view.state, detail.clone());
        let state_line = sent.state.as_ref() != Some(&state_now);
        sent.state = Some(state_now);
        let mut seats = BTreeMap::new();
        let mut changed = Vec::new();
        for (key, rec) in &now.records {
            let s = compared(rec);
            if sent.seats.get(key) == Some(&s) {
                sent.rechecks.same(key, rec);
            } else {
                sent.rechecks.sent(key, rec);
                changed.push((key.as_str(), rec));
            }
            seats.insert(key.clone(), s);
        }
        let gone: Vec<String> = sent
            .seats
            .keys()
            .filter(|k| !seats.contains_key(*k))
            .cloned()
            .collect();
        for key in &gone {
            sent.rechecks.gone(key);
        }
        sent.seats = seats;
        if state_line {
            let body = host_body(&now.view, detail);
            out.push(self.line("host", at, Some(name), body));
        }
        for (key, seat) in changed {
            out.push(self.line("seat", at, Some(name), SeatBody { key, seat }));
        }
        for key in &gone {
            out.push(self.line("removed", at, Some(name), RemovedBody { key }));
        }
        out
    }

    /// Host `name` (slot `slot`) left the board: its seats removed, then its `host` line.
    fn leave(&mut self, slot: usize, name: &str, at: Ms) -> Vec<String> {
        let Some(sent) = self.sent.get_mut(slot) else {
            return Vec::new();
        };
        let old = std::mem::take(sent);
        let mut out: Vec<String> = old
            .seats
            .keys()
            .map(|key| self.line("removed", at, Some(name), RemovedBody { key }))
            .collect();
        let body = LeftBody {
            state: REMOVED,
            detail: "no longer in the hosts file",
        };
        out.push(self.line("host", at, Some(name), body));
        out
    }

    /// The whole board (`why`: `start`): every host's state and seats as they are now; what
    /// it says is remembered as sent, so the next lines are only what changes after it.
    pub(crate) fn board(&mut self, now: &[(usize, HostRecords)], at: Ms) -> String {
        let mut hosts = Vec::new();
        let mut seats = Vec::new();
        for (slot, h) in now.iter().filter(|(_, h)| !h.gone) {
            if self.sent.len() <= *slot {
                self.sent.resize_with(slot + 1, Sent::default);
            }
            let name = h.view.name.as_str();
            let detail = crate::text::one_line(&h.view.detail, MAX_DETAIL);
            if let Some(sent) = self.sent.get_mut(*slot) {
                sent.name = name.to_string();
                sent.state = Some((h.view.state, detail.clone()));
                sent.rechecks.clear();
                for (k, r) in &h.records {
                    sent.rechecks.sent(k, r);
                }
                sent.seats = h
                    .records
                    .iter()
                    .map(|(k, r)| (k.clone(), compared(r)))
                    .collect();
            }
            hosts.push(Tagged {
                host: name,
                body: host_body(&h.view, detail),
            });
            seats.extend(h.records.iter().map(|(key, seat)| Tagged {
                host: name,
                body: SeatBody { key, seat },
            }));
        }
        let body = BoardBody {
            why: "start",
            hosts,
            seats,
        };
        self.line("board", at, None, body)
    }

    /// The heartbeat: every host's state, when it last answered, and its connection checks
    /// since its last lines that found what those lines said.
    pub(crate) fn heartbeat(&mut self, views: &[HostView], at: Ms) -> String {
        let hosts = views
            .iter()
            .map(|v| Beat {
                host: v.name.clone(),
                state: v.state.as_str(),
                answered_at: v.answered_at.map(format_iso),
                checked: self
                    .sent
                    .iter_mut()
                    .find(|s| s.name == v.name)
                    .map(|s| s.rechecks.take())
                    .unwrap_or_default(),
            })
            .collect();
        self.line("heartbeat", at, None, BeatBody { hosts })
    }
}

fn host_body(v: &HostView, detail: String) -> HostBody {
    HostBody {
        state: v.state.as_str(),
        since: format_iso(v.since),
        answered_at: v.answered_at.map(format_iso),
        via: v.via,
        detail,
        seats: v.seats,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn host(state: HostState, detail: &str, records: &[(&str, Value)]) -> HostRecords {
        HostRecords {
            view: HostView {
                name: "b".into(),
                state,
                since: 1_000,
                answered_at: None,
                via: Some("watch"),
                detail: detail.into(),
                seats: records.len(),
            },
            records: records
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
            gone: false,
        }
    }

    fn parsed(lines: &[String]) -> Vec<Value> {
        lines
            .iter()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn the_first_line_is_the_whole_board_and_then_only_changes() {
        let mut m = Merger::new();
        let rec = |state: &str, age: u64| json!({"agent": "W", "state": state, "ageSeconds": age});
        let mut local = host(HostState::Answering, "", &[("p/L", rec("idle", 1))]);
        local.view.name = "local".into();
        let b = host(HostState::Connecting, "", &[]);
        let l: Value = serde_json::from_str(&m.board(&[(0, local), (1, b)], 5_000)).unwrap();
        assert_eq!(l["kind"], "board");
        assert_eq!(l["why"], "start");
        assert_eq!(l["seq"], 1);
        assert!(l.get("host").is_none());
        assert_eq!(l["hosts"][0]["host"], "local");
        assert_eq!(l["hosts"][0]["state"], "answering");
        assert_eq!(l["hosts"][1]["host"], "b");
        assert_eq!(l["hosts"][1]["state"], "connecting");
        assert_eq!(l["hosts"][1]["seats"], 0);
        assert_eq!(l["seats"].as_array().unwrap().len(), 1);
        assert_eq!(l["seats"][0]["host"], "local");
        assert_eq!(l["seats"][0]["key"], "p/L");
        assert_eq!(l["seats"][0]["seat"]["state"], "idle");
        // What the board said is not said again; b's answer is its host line and its seat.
        let mut local = host(HostState::Answering, "", &[("p/L", rec("idle", 7))]);
        local.view.name = "local".into();
        assert!(m.host(0, &local, 6_000).is_empty());
        let b = host(HostState::Answering, "", &[("p/W", rec("working", 1))]);
        let l = parsed(&m.host(1, &b, 7_000));
        let kinds: Vec<&str> = l.iter().map(|v| v["kind"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["host", "seat"]);
        assert_eq!(l[1]["host"], "b");
        assert_eq!(l[1]["seq"], 3);
    }

    #[test]
    fn a_host_says_its_state_then_its_seats_and_only_what_changed() {
        let mut m = Merger::new();
        let rec = |state: &str, age: u64| json!({"agent": "W", "state": state, "ageSeconds": age});
        let l = parsed(&m.host(0, &host(HostState::Connecting, "", &[]), 5_000));
        assert_eq!(l.len(), 1);
        assert_eq!(l[0]["kind"], "host");
        assert_eq!(l[0]["host"], "b");
        assert_eq!(l[0]["state"], "connecting");
        assert_eq!(l[0]["seq"], 1);
        assert_eq!(l[0]["v"], 1);

        let now = host(HostState::Answering, "", &[("p/W", rec("working", 1))]);
        let l = parsed(&m.host(0, &now, 6_000));
        assert_eq!(
            l.iter()
                .map(|v| v["kind"].as_str().unwrap())
                .collect::<Vec<_>>(),
            ["host", "seat"]
        );
        assert_eq!(l[1]["key"], "p/W");
        assert_eq!(l[1]["seat"]["state"], "working");
        assert_eq!(l[1]["seq"], 3);

        // Only the clock moved: nothing.
        let now = host(HostState::Answering, "", &[("p/W", rec("working", 9))]);
        assert!(m.host(0, &now, 7_000).is_empty());

        // It stops answering (rows kept), its words hostile: one host line, words on one line.
        let now = host(
            HostState::NotAnswering,
            "reset\n\u{1b}[31m$(x)",
            &[("p/W", rec("working", 9))],
        );
        let l = m.host(0, &now, 8_000);
        assert_eq!(l.len(), 1);
        assert!(!l[0].contains('\n') && !l[0].contains('\u{1b}'), "{}", l[0]);
        let v = parsed(&l);
        assert_eq!(v[0]["state"], "not_answering");
        assert_eq!(v[0]["since"], "1970-01-01T00:00:01.000Z");

        // Back, its seat gone.
        let l = parsed(&m.host(0, &host(HostState::Answering, "", &[]), 9_000));
        assert_eq!(l[1]["kind"], "removed");
        assert_eq!(l[1]["key"], "p/W");
        let beat: Value = serde_json::from_str(&m.heartbeat(&[now.view], 10_000)).unwrap();
        assert_eq!(beat["kind"], "heartbeat");
        assert!(beat.get("host").is_none());
        assert_eq!(beat["hosts"][0]["host"], "b");
        assert_eq!(beat["hosts"][0]["state"], "not_answering");

        // b leaves the board with a seat; its slot goes to c: b's seat removed, b removed, then c.
        let now = host(HostState::Answering, "", &[("p/W", rec("idle", 1))]);
        assert_eq!(m.host(0, &now, 11_000).len(), 1);
        let mut c = host(HostState::Connecting, "", &[]);
        c.view.name = "c".into();
        let l = parsed(&m.host(0, &c, 12_000));
        let said: Vec<(String, String)> = l
            .iter()
            .map(|v| {
                (
                    v["kind"].as_str().unwrap().into(),
                    v["host"].as_str().unwrap().into(),
                )
            })
            .collect();
        assert_eq!(
            said,
            [
                ("removed".into(), "b".into()),
                ("host".into(), "b".into()),
                ("host".into(), "c".into())
            ]
        );
        assert_eq!(l[1]["state"], "removed");
        let mut gone = host(HostState::Connecting, "", &[]);
        gone.view.name = "c".into();
        gone.gone = true;
        let l = parsed(&m.host(0, &gone, 13_000));
        assert_eq!(l.len(), 1);
        assert_eq!(l[0]["state"], "removed");
        assert!(m.host(0, &gone, 14_000).is_empty(), "said once");
    }
}
