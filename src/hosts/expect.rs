//! `--expect-seat TOKEN`: the seat a person saw on a board, carried to the command that acts on
//! it (on this machine or another), which refuses when the seat it finds now differs
//! (compare-and-act, docs/behaviour.md §12). The token is a small JSON object:
//!
//! ```json
//! {"sessionId":"…","pid":4242,"startTicks":123456,"bootId":"…","pane":"%3"}
//! ```
//!
//! Every member given must match what the command finds; a member it cannot find now (no live
//! pi, no pane) is a mismatch too. A board that read a seat seconds ago can therefore never
//! close or type into another process than the one it showed.

use serde::{Deserialize, Serialize};

use crate::snapshot::Row;

/// Longest token accepted.
const MAX_TOKEN: usize = 4096;

/// The seat identity an action must find unchanged.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SeatExpect {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_ticks: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub boot_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pane: Option<String>,
}

/// What a command found for the seat, in the same terms.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SeatFound {
    pub session_id: Option<String>,
    pub pi: Option<(i32, u64, String)>,
    pub pane: Option<String>,
}

/// Why an `--expect-seat` token is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenRefusal {
    TooLong,
    NotAToken(String),
    Empty,
}

impl std::fmt::Display for TokenRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TokenRefusal::TooLong => f.write_str("--expect-seat: the token is over 4 KiB"),
            TokenRefusal::NotAToken(e) => write!(f, "--expect-seat: not a seat token ({e})"),
            TokenRefusal::Empty => f.write_str("--expect-seat: the token names nothing to compare"),
        }
    }
}

/// What differs between the seat a person saw and what is there now, in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeatMoved(pub Vec<String>);

impl std::fmt::Display for SeatMoved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the seat is not the one the board showed: {}",
            self.0.join(", ")
        )
    }
}

impl SeatExpect {
    /// Parse a token (refused when over 4 KiB, not this shape, or empty).
    pub fn parse(token: &str) -> Result<SeatExpect, TokenRefusal> {
        if token.len() > MAX_TOKEN {
            return Err(TokenRefusal::TooLong);
        }
        let e: SeatExpect = serde_json::from_str(token)
            .map_err(|e| TokenRefusal::NotAToken(crate::text::sanitize(&e.to_string())))?;
        if e == SeatExpect::default() {
            return Err(TokenRefusal::Empty);
        }
        Ok(e)
    }

    /// The `--expect-seat` flag of a command: none, or a token that parses.
    pub fn flag(token: Option<&str>) -> Result<Option<SeatExpect>, TokenRefusal> {
        token.map(SeatExpect::parse).transpose()
    }

    pub fn token(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The identity a row shows: its session, and its pane and pi when the pass saw them.
    pub fn of_row(row: &Row, session_id: Option<&str>) -> SeatExpect {
        let pane = row.pane.as_ref();
        let pi = pane.and_then(|p| p.pi.as_ref());
        SeatExpect {
            session_id: session_id.map(str::to_string),
            pid: pi.map(|p| p.0),
            start_ticks: pi.map(|p| p.1),
            boot_id: pi.map(|p| p.2.clone()),
            pane: pane.map(|p| p.pane_id.clone()),
        }
    }

    /// `Ok` when everything given matches `found`; else what differs, in words.
    pub fn check(&self, found: &SeatFound) -> Result<(), SeatMoved> {
        let mut diffs = Vec::new();
        if let Some(s) = &self.session_id {
            if found.session_id.as_ref() != Some(s) {
                diffs.push(format!(
                    "session {} (now {})",
                    clip(s),
                    found.session_id.as_deref().map_or("none".into(), clip)
                ));
            }
        }
        let pi = found.pi.as_ref();
        let want_pi = self.pid.is_some() || self.start_ticks.is_some() || self.boot_id.is_some();
        let same_pi = pi.is_some_and(|(pid, ticks, boot)| {
            self.pid.is_none_or(|p| p == *pid)
                && self.start_ticks.is_none_or(|t| t == *ticks)
                && self.boot_id.as_ref().is_none_or(|b| b == boot)
        });
        if want_pi && !same_pi {
            diffs.push(match pi {
                Some((pid, ticks, _)) => format!(
                    "pi {} (now pid {pid}, started at tick {ticks})",
                    self.pid.map_or("?".into(), |p| format!("pid {p}"))
                ),
                None => "pi (now no live registered pi)".into(),
            });
        }
        if let Some(p) = &self.pane {
            if found.pane.as_ref() != Some(p) {
                diffs.push(format!(
                    "pane {} (now {})",
                    clip(p),
                    found.pane.as_deref().map_or("none".into(), clip)
                ));
            }
        }
        if diffs.is_empty() {
            Ok(())
        } else {
            Err(SeatMoved(diffs))
        }
    }
}

impl SeatFound {
    /// What a pass shows for a row.
    pub fn of_row(row: &Row, session_id: Option<&str>) -> SeatFound {
        SeatFound {
            session_id: session_id.map(str::to_string),
            pi: row.pane.as_ref().and_then(|p| p.pi.clone()),
            pane: row.pane.as_ref().map(|p| p.pane_id.clone()),
        }
    }
}

fn clip(s: &str) -> String {
    crate::text::clip(&crate::text::sanitize(s), 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found() -> SeatFound {
        SeatFound {
            session_id: Some("s1".into()),
            pi: Some((42, 1000, "boot".into())),
            pane: Some("%3".into()),
        }
    }

    #[test]
    fn the_same_seat_passes_and_every_change_is_named() {
        let e = SeatExpect {
            session_id: Some("s1".into()),
            pid: Some(42),
            start_ticks: Some(1000),
            boot_id: Some("boot".into()),
            pane: Some("%3".into()),
        };
        assert_eq!(SeatExpect::parse(&e.token()).unwrap(), e);
        assert!(e.check(&found()).is_ok());
        let mut f = found();
        f.pi = Some((42, 1001, "boot".into()));
        assert!(e.check(&f).unwrap_err().to_string().contains("tick 1001"));
        let mut f = found();
        f.pi = None;
        assert!(e
            .check(&f)
            .unwrap_err()
            .to_string()
            .contains("no live registered pi"));
        let mut f = found();
        f.pane = Some("%9".into());
        assert!(e.check(&f).unwrap_err().to_string().contains("%9"));
        let mut f = found();
        f.session_id = Some("s2".into());
        assert!(e.check(&f).unwrap_err().to_string().contains("s2"));
        let only_session = SeatExpect {
            session_id: Some("s1".into()),
            ..Default::default()
        };
        assert!(only_session
            .check(&SeatFound {
                session_id: Some("s1".into()),
                ..Default::default()
            })
            .is_ok());
    }

    #[test]
    fn bad_tokens_are_refused() {
        for t in [
            "",
            "{}",
            "[1]",
            r#"{"pid":"x"}"#,
            r#"{"other":1}"#,
            &"x".repeat(5000),
        ] {
            assert!(SeatExpect::parse(t).is_err(), "{t}");
        }
    }
}
