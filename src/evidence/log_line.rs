//! One JSON object's named fields (an observation-log line, a session header, a report), read
//! without building a generic JSON map.
//!
//! Why: a busy root has tens of thousands of log lines in its tails, and a `serde_json::Value`
//! per line (an ordered map, every key and value allocated) was most of a one-shot command's
//! time. Here each known field is kept as its raw JSON text and read only when asked; unknown
//! fields are skipped, still checked for syntax. Duplicate keys keep the last value, as a JSON
//! map does, so the accepted objects are exactly those a `Value` parse would accept.

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

/// Most names one parse keeps (the observation record's).
const MAX_FIELDS: usize = 18;

/// The fields an observation record may carry.
const NAMES: [&str; MAX_FIELDS] = [
    "version",
    "timestamp",
    "writerId",
    "sessionId",
    "event",
    "peerSessionId",
    "peerName",
    "correlationId",
    "kind",
    "busy",
    "phase",
    "detail",
    "port",
    "role",
    "piRole",
    "outcome",
    "errorCode",
    "operation",
];

/// The raw JSON text of each named field of one object.
pub struct Fields<'a> {
    names: &'static [&'static str],
    slots: [Option<&'a RawValue>; MAX_FIELDS],
}

impl<'a> Fields<'a> {
    /// An observation record's fields, or `None` when the line is not one JSON object.
    pub fn parse(line: &'a [u8]) -> Option<Fields<'a>> {
        Fields::parse_named(line, &NAMES)
    }

    /// The fields `names` (the first `MAX_FIELDS`) of `bytes`, or `None` when they are not one
    /// JSON object (trailing whitespace allowed, as `serde_json::from_slice` allows it).
    pub fn parse_named(bytes: &'a [u8], names: &'static [&'static str]) -> Option<Fields<'a>> {
        let mut de = serde_json::Deserializer::from_slice(bytes);
        let fields = de.deserialize_map(FieldsVisitor(names)).ok()?;
        de.end().ok()?;
        Some(fields)
    }

    fn raw(&self, name: &str) -> Option<&'a RawValue> {
        let i = self.names.iter().position(|n| *n == name)?;
        self.slots.get(i).copied().flatten()
    }

    /// A string field (escapes resolved).
    pub fn str(&self, name: &str) -> Option<std::borrow::Cow<'a, str>> {
        let raw = self.raw(name)?.get();
        match serde_json::from_str::<&'a str>(raw) {
            Ok(s) => Some(std::borrow::Cow::Borrowed(s)),
            Err(_) => serde_json::from_str::<String>(raw)
                .ok()
                .map(std::borrow::Cow::Owned),
        }
    }

    /// A non-negative integer field (not a float, not negative).
    pub fn u64(&self, name: &str) -> Option<u64> {
        serde_json::from_str(self.raw(name)?.get()).ok()
    }

    pub fn bool(&self, name: &str) -> Option<bool> {
        serde_json::from_str(self.raw(name)?.get()).ok()
    }
}

struct FieldsVisitor(&'static [&'static str]);

impl<'de> Visitor<'de> for FieldsVisitor {
    type Value = Fields<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Fields<'de>, A::Error> {
        let names = &self.0[..self.0.len().min(MAX_FIELDS)];
        let mut slots = [None; MAX_FIELDS];
        while let Some(slot) = map.next_key_seed(Slot(names))? {
            match slot.and_then(|i| slots.get_mut(i)) {
                Some(s) => *s = Some(map.next_value::<&'de RawValue>()?),
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Fields { names, slots })
    }
}

/// A key, as the slot it fills (`None`: not a field we read).
struct Slot(&'static [&'static str]);

impl<'de> DeserializeSeed<'de> for Slot {
    type Value = Option<usize>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<usize>, D::Error> {
        d.deserialize_str(self)
    }
}

impl Visitor<'_> for Slot {
    type Value = Option<usize>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a key")
    }

    fn visit_str<E>(self, k: &str) -> Result<Option<usize>, E> {
        Ok(self.0.iter().position(|n| *n == k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// Every field read here agrees with a generic parse of the same line, on odd lines too.
    #[test]
    fn fields_read_as_a_generic_parse_reads_them() {
        let lines = [
            r#"{"version":1,"timestamp":"t","busy":true,"port":80,"x":{"a":[1,2]}}"#,
            r#"{"version":1.0,"busy":"yes","port":-3}"#,
            r#"{"version":1,"version":2,"sessionId":"a\"b\u00e9"}"#,
            r#"{"\u0076ersion":1,"event":"host.activity"}"#,
            r#"{"version":18446744073709551616,"port":70000.5}"#,
            r#"[1,2]"#,
            r#"{"version":1,"timestamp":"t""#,
            r#"{"version":1} trailing"#,
        ];
        for l in lines {
            let generic: Option<Value> = serde_json::from_str::<Value>(l)
                .ok()
                .filter(Value::is_object);
            let ours = Fields::parse(l.as_bytes());
            assert_eq!(ours.is_some(), generic.is_some(), "{l}");
            let (Some(f), Some(g)) = (ours, generic) else {
                continue;
            };
            for n in NAMES {
                assert_eq!(f.str(n).as_deref(), g[n].as_str(), "{l} {n}");
                assert_eq!(f.u64(n), g[n].as_u64(), "{l} {n}");
                assert_eq!(f.bool(n), g[n].as_bool(), "{l} {n}");
            }
        }
    }

    /// Any list of names (a session header's, a report's) reads as a generic parse does.
    #[test]
    fn named_fields_read_as_a_generic_parse_reads_them() {
        const HEADER: [&str; 4] = ["type", "id", "cwd", "timestamp"];
        let lines = [
            r#"{"type":"session","version":3,"id":"a","cwd":"/w","timestamp":"t"}"#,
            r#"{"type":"session","type":"message","id":7,"cwd":["/w"]}"#,
            r#"{"\u0074ype":"s\u00e9ssion","id":"a\nb","x":{"id":"inner"}} "#,
            r#"{"type":"session","id":"a"}x"#,
            r#"{"type":"session","id":"a""#,
            r#""session""#,
            "{}\n",
        ];
        for l in lines {
            let generic: Option<Value> = serde_json::from_str::<Value>(l)
                .ok()
                .filter(Value::is_object);
            let ours = Fields::parse_named(l.as_bytes(), &HEADER);
            assert_eq!(ours.is_some(), generic.is_some(), "{l}");
            let (Some(f), Some(g)) = (ours, generic) else {
                continue;
            };
            for n in HEADER {
                assert_eq!(f.str(n).as_deref(), g[n].as_str(), "{l} {n}");
                assert_eq!(f.u64(n), g[n].as_u64(), "{l} {n}");
            }
            // A name not asked for is not kept.
            assert_eq!(f.str("version"), None);
        }
    }
}
