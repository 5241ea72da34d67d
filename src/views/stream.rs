//! `status --watch` / `scan --watch`: the board as a stream of JSON lines, version 1
//! (docs/interop.md §10). The first line is the whole board; then one line per seat whose record
//! changed, one per seat that left the board, a whole board again when something outside the
//! seats changed (roster, errors) or lines were dropped for a slow reader, and a heartbeat every
//! so often:
//!
//! ```text
//! {"v":1,"kind":"board","seq":1,"at":"…","why":"start","board":{…index, records…}}
//! {"v":1,"kind":"seat","seq":2,"at":"…","key":"proj/Builder","seat":{…record…}}
//! {"v":1,"kind":"removed","seq":3,"at":"…","key":"proj/Builder"}
//! {"v":1,"kind":"heartbeat","seq":4,"at":"…","scannedAt":"…","live":{…health…}}
//! ```
//!
//! A seat "changed" when its record differs in anything but the clock-derived values
//! (`board_files::is_volatile`: `scannedAt`, `ageSeconds`, `observationAgeSeconds`), the same
//! rule the board files follow, and its connection's check time (`rechecks`: a check that found
//! the same rides on the next heartbeat's `checked`). Lines are bounded: every string in a
//! record is cut at `MAX_STRING` characters (with `"cut": true` on the line), so a seat line
//! stays far below `MAX_SEAT_LINE` and a board line below `MAX_BOARD_LINE`.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value};

use super::rechecks::{compared, Rechecks};
use crate::board::record::SeatKey;
use crate::clock::{format_iso, Ms};
use crate::scan::Scan;

/// The schema version every line carries (`v`).
pub(crate) const VERSION: u64 = 1;
/// Longest string kept in a streamed record (characters).
pub(crate) const MAX_STRING: usize = 4096;
/// Longest seat line (bytes): a record's strings are cut to fit.
pub(crate) const MAX_SEAT_LINE: usize = 64 * 1024;
/// Longest board line (bytes): 256 seats at most, each within `MAX_SEAT_LINE`.
pub(crate) const MAX_BOARD_LINE: usize = 256 * MAX_SEAT_LINE + 64 * 1024;
/// Most array members kept in a streamed record.
const MAX_ITEMS: usize = 64;

/// Cut every string to `MAX_STRING` characters and every array to `MAX_ITEMS`; whether any was.
fn bounded(v: Value, cut: &mut bool) -> Value {
    match v {
        Value::String(s) if s.chars().count() > MAX_STRING => {
            *cut = true;
            Value::String(s.chars().take(MAX_STRING).collect())
        }
        Value::Array(a) => {
            *cut |= a.len() > MAX_ITEMS;
            Value::Array(
                a.into_iter()
                    .take(MAX_ITEMS)
                    .map(|x| bounded(x, cut))
                    .collect(),
            )
        }
        Value::Object(m) => {
            Value::Object(m.into_iter().map(|(k, x)| (k, bounded(x, cut))).collect())
        }
        other => other,
    }
}

/// A record as a stream carries it: every string and list bounded (another host's record
/// from `scan --json`, for a merged stream).
pub(crate) fn bounded_record(v: Value) -> Value {
    bounded(v, &mut false)
}

/// `v` without its clock-derived members, at any depth (what "changed" compares).
pub(crate) fn steady(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| !super::board_files::is_volatile(k))
                .map(|(k, x)| (k.clone(), steady(x)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(steady).collect()),
        other => other.clone(),
    }
}

/// The board's members outside the records that a reader cannot work out from the seats.
fn head_of(index: &Value) -> Value {
    let mut h = Map::new();
    for k in [
        "registrationErrors",
        "discoveryErrors",
        "errors",
        "truncated",
        "roster",
    ] {
        h.insert(k.into(), index.get(k).cloned().unwrap_or(Value::Null));
    }
    Value::Object(h)
}

/// One streamed record: bounded, and whether anything was cut.
fn seat_value(rec: &crate::board::record::SeatRecord) -> (Value, bool) {
    let mut cut = false;
    let v = bounded(serde_json::to_value(rec).unwrap_or(Value::Null), &mut cut);
    (v, cut)
}

/// Every line's head (`v`, `kind`, `seq`, `at`), then what its kind says.
#[derive(Serialize)]
struct Line<B: Serialize> {
    v: u64,
    kind: &'static str,
    seq: u64,
    at: String,
    #[serde(flatten)]
    body: B,
}

#[derive(Serialize)]
struct BoardLine<'a> {
    why: &'a str,
    #[serde(skip_serializing_if = "is_zero")]
    dropped: u64,
    #[serde(skip_serializing_if = "is_false")]
    cut: bool,
    board: Value,
}

#[derive(Serialize)]
struct SeatLine<'a> {
    key: &'a SeatKey,
    #[serde(skip_serializing_if = "is_false")]
    cut: bool,
    seat: Value,
}

#[derive(Serialize)]
struct RemovedLine<'a> {
    key: &'a SeatKey,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct HeartbeatLine {
    scanned_at: String,
    live: Value,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    checked: BTreeMap<SeatKey, String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// Turns successive passes into lines. Keeps the last record of each seat (≤ 256).
#[derive(Default)]
pub(crate) struct Differ {
    seq: u64,
    /// key → the record as compared (`rechecks::compared`), as last sent.
    last: BTreeMap<SeatKey, Value>,
    last_head: Option<Value>,
    rechecks: Rechecks<SeatKey>,
}

impl Differ {
    pub(crate) fn new() -> Differ {
        Differ::default()
    }

    fn line(&mut self, kind: &'static str, at: Ms, body: impl Serialize) -> String {
        self.seq += 1;
        let line = Line {
            v: VERSION,
            kind,
            seq: self.seq,
            at: format_iso(at),
            body,
        };
        super::json::to_string(&line).unwrap_or_default()
    }

    /// The whole board (`why`: `start`, `resync` after `dropped` lines were dropped for a slow
    /// reader, `changed` when something outside the seats changed); remembers every seat as sent.
    pub(crate) fn board(&mut self, scan: &Scan, why: &str, dropped: u64, at: Ms) -> String {
        let mut index = super::board_files::index_json(scan);
        let mut cut = false;
        let mut last = BTreeMap::new();
        self.rechecks.clear();
        let records: Vec<Value> = scan
            .records
            .iter()
            .map(|r| {
                let (v, c) = seat_value(r);
                cut |= c;
                let key = r.key();
                self.rechecks.sent(&key, &v);
                last.insert(key, compared(&v));
                v
            })
            .collect();
        if let Some(obj) = index.as_object_mut() {
            obj.insert("records".into(), Value::Array(records));
        }
        self.last = last;
        self.last_head = Some(head_of(&index));
        let body = BoardLine {
            why,
            dropped,
            cut,
            board: index,
        };
        self.line("board", at, body)
    }

    /// The lines for what changed since the last board or change lines: a board line when
    /// something outside the seats changed, else one `seat` line per changed seat and one
    /// `removed` line per seat gone.
    pub(crate) fn changes(&mut self, scan: &Scan, at: Ms) -> Vec<String> {
        let head = head_of(&super::board_files::index_json_head(scan));
        if self.last_head.as_ref() != Some(&head) {
            return vec![self.board(scan, "changed", 0, at)];
        }
        let mut out = Vec::new();
        let mut seen = BTreeMap::new();
        for r in &scan.records {
            let key = r.key();
            let (v, cut) = seat_value(r);
            let s = compared(&v);
            if self.last.get(&key) == Some(&s) {
                self.rechecks.same(&key, &v);
            } else {
                self.rechecks.sent(&key, &v);
                let body = SeatLine {
                    key: &key,
                    cut,
                    seat: v,
                };
                out.push(self.line("seat", at, body));
            }
            seen.insert(key, s);
        }
        let gone: Vec<SeatKey> = self
            .last
            .keys()
            .filter(|k| !seen.contains_key(*k))
            .cloned()
            .collect();
        for key in gone {
            self.rechecks.gone(&key);
            out.push(self.line("removed", at, RemovedLine { key: &key }));
        }
        self.last = seen;
        out
    }

    /// A heartbeat: the time of the last pass, how the engine watches (`live`), and the
    /// connection checks since the last lines that found what those lines said (`checked`).
    pub(crate) fn heartbeat(&mut self, scanned_at: Ms, live: Value, at: Ms) -> String {
        let body = HeartbeatLine {
            scanned_at: format_iso(scanned_at),
            live,
            checked: self.rechecks.take(),
        };
        self.line("heartbeat", at, body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strings_are_cut_and_clock_values_do_not_count_as_changes() {
        let mut cut = false;
        let v = bounded(
            json!({"a": "x".repeat(MAX_STRING + 5), "b": vec![1; MAX_ITEMS + 3], "c": {"d": "ok"}}),
            &mut cut,
        );
        assert!(cut);
        assert_eq!(v["a"].as_str().unwrap().chars().count(), MAX_STRING);
        assert_eq!(v["b"].as_array().unwrap().len(), MAX_ITEMS);
        let a = json!({"state": "idle", "scannedAt": "t1", "ageSeconds": 3,
            "intercom": {"observationAgeSeconds": 1, "x": 1}});
        let b = json!({"state": "idle", "scannedAt": "t2", "ageSeconds": 9,
            "intercom": {"observationAgeSeconds": 5, "x": 1}});
        assert_eq!(steady(&a), steady(&b));
        let c = json!({"state": "working", "scannedAt": "t2"});
        assert_ne!(steady(&a), steady(&c));
    }
}
