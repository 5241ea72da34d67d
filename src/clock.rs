//! Time: one injected clock, and the two timestamp shapes the evidence uses.
//!
//! Why injected: every age shown ("42s", "(old)") must be testable exactly.

use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

/// Milliseconds since the Unix epoch. Plain integers keep comparisons and ages exact.
pub type Ms = i64;

pub trait Clock: Send + Sync {
    fn now_ms(&self) -> Ms;
}

/// The real wall clock.
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> Ms {
        let d = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        d.as_millis() as Ms
    }
}

/// A clock that always says the same time (tests, and `--now` for reproducible output).
pub struct FixedClock(pub Ms);

impl Clock for FixedClock {
    fn now_ms(&self) -> Ms {
        self.0
    }
}

/// Strict Intercom log timestamp: exactly `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub fn parse_strict(s: &str) -> Option<Ms> {
    let b = s.as_bytes();
    if b.len() != 24 || b[23] != b'Z' || b[19] != b'.' {
        return None;
    }
    parse_iso(s)
}

/// Any RFC 3339 timestamp (pi entries, reports, registrations).
pub fn parse_iso(s: &str) -> Option<Ms> {
    if s.len() > 64 {
        return None;
    }
    let t = OffsetDateTime::parse(s, &Rfc3339).ok()?;
    Some((t.unix_timestamp_nanos() / 1_000_000) as Ms)
}

/// Format as `YYYY-MM-DDTHH:MM:SS.mmmZ` (the shape Intercom and pi write).
pub fn format_iso(ms: Ms) -> String {
    let Ok(t) = OffsetDateTime::from_unix_timestamp_nanos(ms as i128 * 1_000_000) else {
        return "invalid-time".to_string();
    };
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second(),
        t.millisecond()
    )
}

/// Serde for an `Ms` written as an ISO time (`format_iso`, read back with `parse_iso`): the
/// owned records' times.
pub(crate) mod iso_ms {
    use super::{format_iso, parse_iso, Ms};
    use serde::{Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(at: &Ms, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format_iso(*at))
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Ms, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        parse_iso(&text).ok_or_else(|| serde::de::Error::custom("not an ISO time"))
    }
}

/// `iso_ms` for an optional time (`null` or absent is `None`; use with `#[serde(default)]`).
pub(crate) mod iso_ms_opt {
    use super::{format_iso, parse_iso, Ms};
    use serde::{Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(at: &Option<Ms>, s: S) -> Result<S::Ok, S::Error> {
        match at {
            Some(ms) => s.serialize_str(&format_iso(*ms)),
            None => s.serialize_none(),
        }
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Ms>, D::Error> {
        match <Option<std::borrow::Cow<'de, str>>>::deserialize(d)? {
            None => Ok(None),
            Some(text) => parse_iso(&text)
                .map(Some)
                .ok_or_else(|| serde::de::Error::custom("not an ISO time")),
        }
    }
}

/// Whole seconds from `then` to `now`, never negative (a future time is reported separately).
pub(crate) fn age_seconds(now: Ms, then: Ms) -> i64 {
    ((now - then).max(0)) / 1000
}

/// A short human age: `12s`, `5m`, `3h`, `2d`.
pub(crate) fn short_age(secs: i64) -> String {
    match secs {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m", s / 60),
        s if s < 86_400 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let ms = parse_strict("2026-11-29T10:00:03.000Z").unwrap();
        assert_eq!(format_iso(ms), "2026-11-29T10:00:03.000Z");
        assert_eq!(parse_iso("2026-11-29T10:00:03Z"), Some(ms));
        assert_eq!(parse_strict("2026-11-29T10:00:03Z"), None);
        assert_eq!(parse_strict("not-a-time"), None);
        assert_eq!(short_age(42), "42s");
        assert_eq!(short_age(3600), "1h");
    }
}
