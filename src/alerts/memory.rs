//! What every sidebar and watcher on a data root remembers together about alerts
//! (`<data root>/alerts/memory.json`, docs/interop.md §12): the turns each seat was alerted for
//! (or deliberately not), the seats seen before, and the last alert (what the tmux plugin's
//! jump key goes to). Pure: the type, its caps and pruning; `alerts::memory_file` reads and
//! writes it under a lock.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::board::alerts::{Outcome, Remembered};
use crate::clock::Ms;
use crate::mux::MuxKind;

/// The file's version.
pub(crate) const VERSION: u32 = 1;
/// Largest memory file read or written.
pub(crate) const MAX_BYTES: u64 = 1 << 20;
/// Most seats remembered (the least recently touched go first).
pub(crate) const MAX_SEATS: usize = 2048;
/// Most turns remembered per seat (the oldest go first).
pub(crate) const MAX_TURNS: usize = 8;
/// A seat untouched this long is forgotten (its next state is then judged as a first sight).
pub(crate) const FORGET_AFTER_MS: Ms = 14 * 24 * 3600 * 1000;
/// Longest session id, turn key, name or pane field kept.
pub(crate) const MAX_FIELD: usize = 512;
/// Most channels that claim one alerted turn (each `--on-alert` program, the desktop, …).
pub(crate) const MAX_CHANNELS: usize = 16;

/// One handled turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Turn {
    /// `<state>:<turn>` (`board::alerts::turn_key`).
    pub key: String,
    pub outcome: Outcome,
    pub at: Ms,
    /// The channels that sent this alert (their ids: `alerts::run::STDOUT`, `on_alert_id`, …):
    /// each channel sends an alerted turn once, whichever sidebar or watcher runs it (the first
    /// process to claim it here).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub channels: Vec<String>,
}

/// What is remembered of one seat.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SeatMemory {
    /// When a watcher first saw it (or last touched it: each write about the seat moves it).
    pub touched: Ms,
    #[serde(default)]
    pub turns: Vec<Turn>,
}

/// Where a seat's pi lived when it alerted: what the jump re-checks before it moves anyone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PaneRef {
    pub kind: MuxKind,
    /// The server as seats name it (`None`: the default tmux server).
    #[serde(default)]
    pub socket: Option<String>,
    pub pane_id: String,
    /// The pi in it (pid, start ticks, boot id), when a live registration named it.
    #[serde(default)]
    pub pi: Option<(i32, u64, String)>,
}

/// The newest alert.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LastAlert {
    /// The seat's session (`Row::id`).
    pub session: String,
    /// `<project>/<agent>`.
    pub seat_key: String,
    pub name: String,
    pub state: String,
    pub at: Ms,
    #[serde(default)]
    pub pane: Option<PaneRef>,
    /// The Intercom root of the board that alerted (the jump reads the same roster).
    #[serde(default)]
    pub root: Option<String>,
}

/// The whole file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Memory {
    pub version: u32,
    #[serde(default)]
    pub seats: BTreeMap<String, SeatMemory>,
    #[serde(default)]
    pub last: Option<LastAlert>,
}

impl Default for Memory {
    fn default() -> Self {
        Memory {
            version: VERSION,
            seats: BTreeMap::new(),
            last: None,
        }
    }
}

/// Why a memory file was not used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemoryError {
    /// Not JSON of this shape, or a field breaks its cap.
    Invalid(String),
    /// Written by a newer intercom-pane.
    Version(u32),
}

impl std::fmt::Display for MemoryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MemoryError::Invalid(why) => write!(f, "alert memory invalid: {why}"),
            MemoryError::Version(v) => write!(f, "alert memory of version {v}, newer than ours"),
        }
    }
}

impl Memory {
    /// Parse and check a memory file's bytes.
    pub fn parse(bytes: &[u8]) -> Result<Memory, MemoryError> {
        let m: Memory =
            serde_json::from_slice(bytes).map_err(|e| MemoryError::Invalid(e.to_string()))?;
        if m.version != VERSION {
            return Err(MemoryError::Version(m.version));
        }
        let long = |s: &str| s.len() > MAX_FIELD;
        let bad_turn = |t: &Turn| {
            long(&t.key) || t.channels.len() > MAX_CHANNELS || t.channels.iter().any(|c| long(c))
        };
        let bad_seat = m
            .seats
            .iter()
            .any(|(k, s)| long(k) || s.turns.len() > 4 * MAX_TURNS || s.turns.iter().any(bad_turn));
        if bad_seat || m.seats.len() > 4 * MAX_SEATS {
            return Err(MemoryError::Invalid("a field is over its cap".into()));
        }
        Ok(m)
    }

    /// The file's bytes (pruned first by the caller).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = serde_json::to_vec_pretty(self).unwrap_or_default();
        b.push(b'\n');
        b
    }

    /// Remember that a watcher saw `session` (at `now`), if it is new.
    pub fn know(&mut self, session: &str, now: Ms) {
        if session.len() > MAX_FIELD {
            return;
        }
        self.seats
            .entry(session.to_string())
            .or_insert_with(|| SeatMemory {
                touched: now,
                turns: Vec::new(),
            });
    }

    /// Record a handled turn; `false` when it was already recorded (by another watcher, say):
    /// then nothing changes and no alert may go out for it.
    pub fn record(&mut self, session: &str, key: &str, outcome: Outcome, now: Ms) -> bool {
        if session.len() > MAX_FIELD || key.len() > MAX_FIELD {
            return false;
        }
        let seat = self
            .seats
            .entry(session.to_string())
            .or_insert_with(|| SeatMemory {
                touched: now,
                turns: Vec::new(),
            });
        if seat.turns.iter().any(|t| t.key == key) {
            return false;
        }
        seat.touched = now;
        seat.turns.push(Turn {
            key: key.to_string(),
            outcome,
            at: now,
            channels: Vec::new(),
        });
        if seat.turns.len() > MAX_TURNS {
            let extra = seat.turns.len() - MAX_TURNS;
            seat.turns.drain(..extra);
        }
        true
    }

    /// Claim an alerted turn for each of `channels` not yet claimed by another process; the
    /// ones claimed now (only these send). Nothing for a turn not recorded as alerted (a turn
    /// handled without an alert goes out on no channel), nor beyond `MAX_CHANNELS`.
    pub fn claim(&mut self, session: &str, key: &str, channels: &[String]) -> Vec<String> {
        let Some(turn) = self
            .seats
            .get_mut(session)
            .and_then(|s| s.turns.iter_mut().find(|t| t.key == key))
        else {
            return Vec::new();
        };
        if turn.outcome != Outcome::Alerted {
            return Vec::new();
        }
        let mut claimed = Vec::new();
        for c in channels {
            if c.len() > MAX_FIELD || turn.channels.contains(c) || claimed.contains(c) {
                continue;
            }
            if turn.channels.len() >= MAX_CHANNELS {
                break;
            }
            turn.channels.push(c.clone());
            claimed.push(c.clone());
        }
        claimed
    }

    /// Forget seats untouched for `FORGET_AFTER_MS`, then the least recently touched beyond
    /// `MAX_SEATS`; clip every seat's turns to `MAX_TURNS`.
    pub fn prune(&mut self, now: Ms) {
        self.seats
            .retain(|_, s| now.saturating_sub(s.touched) <= FORGET_AFTER_MS);
        for s in self.seats.values_mut() {
            if s.turns.len() > MAX_TURNS {
                let extra = s.turns.len() - MAX_TURNS;
                s.turns.drain(..extra);
            }
        }
        if self.seats.len() > MAX_SEATS {
            let mut by_age: Vec<(Ms, String)> = self
                .seats
                .iter()
                .map(|(k, s)| (s.touched, k.clone()))
                .collect();
            by_age.sort();
            let extra = self.seats.len() - MAX_SEATS;
            for (_, k) in by_age.into_iter().take(extra) {
                self.seats.remove(&k);
            }
        }
    }
}

impl Remembered for Memory {
    fn handled(&self, session: &str, key: &str) -> bool {
        self.seats
            .get(session)
            .is_some_and(|s| s.turns.iter().any(|t| t.key == key))
    }

    fn knows(&self, session: &str) -> bool {
        self.seats.contains_key(session)
    }

    fn alerted_at(&self, session: &str, key: &str) -> Option<Ms> {
        self.seats
            .get(session)?
            .turns
            .iter()
            .find(|t| t.key == key && t.outcome == Outcome::Alerted)
            .map(|t| t.at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_turn_is_recorded_once() {
        let mut m = Memory::default();
        assert!(!m.knows("s"));
        assert!(m.record("s", "waiting:entry:1", Outcome::Alerted, 10));
        assert!(!m.record("s", "waiting:entry:1", Outcome::Alerted, 20));
        assert!(m.handled("s", "waiting:entry:1"));
        assert!(m.knows("s"));
        let back = Memory::parse(&m.to_bytes()).unwrap();
        assert_eq!(back, m);
    }

    #[test]
    fn each_channel_claims_an_alerted_turn_once() {
        let mut m = Memory::default();
        let ch = |s: &[&str]| s.iter().map(|c| c.to_string()).collect::<Vec<_>>();
        assert!(
            m.claim("s", "waiting:1", &ch(&["stdout"])).is_empty(),
            "not recorded"
        );
        m.record("s", "waiting:1", Outcome::Alerted, 10);
        // A sidebar with no program of its own claims the desktop only.
        assert_eq!(
            m.claim("s", "waiting:1", &ch(&["desktop"])),
            ch(&["desktop"])
        );
        // A watcher with a program still gets to run it; a second with the same one does not.
        let hook = ch(&["desktop", "on_alert:ab"]);
        assert_eq!(m.claim("s", "waiting:1", &hook), ch(&["on_alert:ab"]));
        assert!(m.claim("s", "waiting:1", &hook).is_empty());
        assert_eq!(
            m.claim("s", "waiting:1", &ch(&["on_alert:cd"])),
            ch(&["on_alert:cd"])
        );
        let back = Memory::parse(&m.to_bytes()).unwrap();
        assert_eq!(back, m);
        // A turn handled without an alert goes out nowhere.
        m.record("s", "waiting:2", Outcome::Visible, 20);
        assert!(m.claim("s", "waiting:2", &hook).is_empty());
        // Bounded.
        let many: Vec<String> = (0..40).map(|i| format!("on_alert:{i}")).collect();
        m.record("s", "waiting:3", Outcome::Alerted, 30);
        assert_eq!(m.claim("s", "waiting:3", &many).len(), MAX_CHANNELS);
        assert!(Memory::parse(&m.to_bytes()).is_ok());
    }

    #[test]
    fn bounded_and_pruned() {
        let mut m = Memory::default();
        for i in 0..20 {
            m.record("s", &format!("waiting:{i}"), Outcome::Alerted, i);
        }
        assert_eq!(m.seats["s"].turns.len(), MAX_TURNS);
        assert!(m.handled("s", "waiting:19") && !m.handled("s", "waiting:0"));
        for i in 0..(MAX_SEATS as i64 + 10) {
            m.know(&format!("seat{i}"), 1_000 + i);
        }
        m.prune(2_000);
        assert_eq!(m.seats.len(), MAX_SEATS);
        assert!(!m.knows("s"), "the least recently touched went first");
        m.prune(FORGET_AFTER_MS + 100_000);
        assert!(m.seats.is_empty());
        assert!(m.to_bytes().len() < MAX_BYTES as usize);
        // Over-long fields are never stored.
        assert!(!m.record(&"x".repeat(MAX_FIELD + 1), "k", Outcome::Seen, 0));
    }

    #[test]
    fn refuses_other_shapes() {
        assert!(Memory::parse(b"nope").is_err());
        assert!(matches!(
            Memory::parse(br#"{"version": 9}"#),
            Err(MemoryError::Version(9))
        ));
        let long = format!(
            r#"{{"version":1,"seats":{{"{}":{{"touched":1}}}}}}"#,
            "x".repeat(600)
        );
        assert!(Memory::parse(long.as_bytes()).is_err());
        assert!(Memory::parse(br#"{"version":1}"#).is_ok());
    }
}
