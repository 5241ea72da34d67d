//! One JSON object's named fields (an observation-log line, a session header, a report), read
//! without building a generic JSON map.
//!
//! Why: a busy root has tens of thousands of log lines in its tails, and a `serde_json::Value`
//! per line (an ordered map, every key and value allocated) was most of a one-shot command's
//! time. Here each known field is kept as its raw JSON text and read only when asked; unknown
//! fields are skipped, still checked for syntax. Duplicate keys keep the last value, as a JSON
//! map does, so the accepted objects are exactly those a `Value` parse would accept.
//!
//! Most lines are flat (every value a string without escapes, a number, `true`, `false` or
//! `null`): a hand scan reads those in one pass without serde's machinery. Anything else (an
//! escape, a nested value, odd bytes, a syntax error) goes to serde_json, which decides; so the
//! scan only has to be exact for what it accepts, never complete.

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

/// The slot of the observation-record field `name`, for `Fields::*_at`. Meant for
/// `const { field("…") }` only: a name that is not a field stops the build there. Why slots: a
/// record line reads 18 fields, and finding each by comparing names cost as much as parsing the
/// line.
#[allow(clippy::panic)]
pub const fn field(name: &str) -> usize {
    let mut i = 0;
    while i < NAMES.len() {
        if same_bytes(NAMES[i].as_bytes(), name.as_bytes()) {
            return i;
        }
        i += 1;
    }
    panic!("not an observation-record field")
}

const fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The raw JSON text of each named field of one object.
pub struct Fields<'a> {
    names: &'static [&'static str],
    /// Each named field's value as JSON text, already checked to be one valid JSON value.
    slots: [Option<&'a str>; MAX_FIELDS],
    /// Parsed with the observation record's names (`Fields::parse`): the slots `field` names.
    observation: bool,
}

impl<'a> Fields<'a> {
    /// An observation record's fields, or `None` when the line is not one JSON object.
    pub fn parse(line: &'a [u8]) -> Option<Fields<'a>> {
        let f = Fields::parse_named(line, &NAMES)?;
        Some(Fields {
            observation: true,
            ..f
        })
    }

    /// The fields `names` (the first `MAX_FIELDS`) of `bytes`, or `None` when they are not one
    /// JSON object (trailing whitespace allowed, as `serde_json::from_slice` allows it).
    pub fn parse_named(bytes: &'a [u8], names: &'static [&'static str]) -> Option<Fields<'a>> {
        let names = &names[..names.len().min(MAX_FIELDS)];
        if let Some(slots) = scan_flat(bytes, names) {
            return Some(Fields {
                names,
                slots,
                observation: false,
            });
        }
        Fields::parse_any(bytes, names)
    }

    /// The same through serde_json, for every object (nested values, escapes).
    fn parse_any(bytes: &'a [u8], names: &'static [&'static str]) -> Option<Fields<'a>> {
        let mut de = serde_json::Deserializer::from_slice(bytes);
        let fields = de.deserialize_map(FieldsVisitor(names)).ok()?;
        de.end().ok()?;
        Some(fields)
    }

    fn raw(&self, name: &str) -> Option<&'a str> {
        let i = self.names.iter().position(|n| *n == name)?;
        self.slots.get(i).copied().flatten()
    }

    /// A string field (escapes resolved).
    pub fn str(&self, name: &str) -> Option<std::borrow::Cow<'a, str>> {
        string(self.raw(name)?)
    }

    /// A non-negative integer field (not a float, not negative).
    pub fn u64(&self, name: &str) -> Option<u64> {
        integer(self.raw(name)?)
    }

    pub fn bool(&self, name: &str) -> Option<bool> {
        boolean(self.raw(name)?)
    }

    /// `str` of the observation-record field in `slot` (`const { field("…") }`) of a
    /// `Fields::parse` result.
    pub fn str_at(&self, slot: usize) -> Option<std::borrow::Cow<'a, str>> {
        string(self.slot(slot)?)
    }

    /// `u64` of the observation-record field in `slot`.
    pub fn u64_at(&self, slot: usize) -> Option<u64> {
        integer(self.slot(slot)?)
    }

    /// `bool` of the observation-record field in `slot`.
    pub fn bool_at(&self, slot: usize) -> Option<bool> {
        boolean(self.slot(slot)?)
    }

    /// The value in an observation-record slot; nothing when these fields were parsed with
    /// another list of names (a report's, a session header's), whose slots mean other fields.
    fn slot(&self, slot: usize) -> Option<&'a str> {
        if !self.observation {
            return None;
        }
        self.slots.get(slot).copied().flatten()
    }
}

/// A JSON string value's text, escapes resolved (`raw` is one valid JSON value).
fn string(raw: &str) -> Option<std::borrow::Cow<'_, str>> {
    let inner = raw.strip_prefix('"')?.strip_suffix('"')?;
    // The value is valid JSON: a string without a backslash is its own text. (A plain loop:
    // these strings are short, and a vector search costs more to set up.)
    if !inner.bytes().any(|b| b == b'\\') {
        return Some(std::borrow::Cow::Borrowed(inner));
    }
    serde_json::from_str::<String>(raw)
        .ok()
        .map(std::borrow::Cow::Owned)
}

/// A JSON number that is a non-negative integer (not a float, not negative).
fn integer(raw: &str) -> Option<u64> {
    // Valid JSON digits only (no sign, fraction or exponent); too large is `None`, as serde.
    if !raw.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    raw.parse().ok()
}

fn boolean(raw: &str) -> Option<bool> {
    match raw {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
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
                Some(s) => *s = Some(map.next_value::<&'de RawValue>()?.get()),
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Fields {
            names,
            slots,
            observation: false,
        })
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

/// One pass over a flat object: `{"key": value, ...}` where every key and string value has no
/// backslash and no control character, and every value is a string, a number, `true`, `false`
/// or `null`. `None`: not such an object (serde_json then decides whether it is one at all).
fn scan_flat<'a>(bytes: &'a [u8], names: &[&str]) -> Option<[Option<&'a str>; MAX_FIELDS]> {
    // Every byte outside a string must be ASCII JSON syntax, and strings must be UTF-8: checking
    // the whole line once lets the scan slice `text` freely.
    let text = std::str::from_utf8(bytes).ok()?;
    let b = text.as_bytes();
    let mut slots = [None; MAX_FIELDS];
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i = skip_ws(b, i + 1);
    if b.get(i) == Some(&b'}') {
        return (skip_ws(b, i + 1) == b.len()).then_some(slots);
    }
    // Writers put the fields in `names`' order: the name after the last one found is tried
    // first (a line in that order costs one comparison per field).
    let mut hint = 0;
    // Each round reads one member; bounded by the line's length (every round consumes bytes).
    loop {
        let (key, after) = flat_string(text, i)?;
        i = skip_ws(b, after);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(b, i + 1);
        let end = flat_value(text, i)?;
        let key = b.get(key.0 + 1..key.1 - 1)?;
        let k = match names.get(hint) {
            Some(n) if n.as_bytes() == key => Some(hint),
            _ => names.iter().position(|n| n.as_bytes() == key),
        };
        if let Some(k) = k {
            hint = k + 1;
            if let Some(slot) = slots.get_mut(k) {
                *slot = Some(text.get(i..end)?);
            }
        }
        i = skip_ws(b, end);
        match b.get(i) {
            Some(b',') => i = skip_ws(b, i + 1),
            Some(b'}') => return (skip_ws(b, i + 1) == b.len()).then_some(slots),
            _ => return None,
        }
    }
}

/// JSON whitespace from `i` on.
fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// The bytes that end a flat string's scan: its closing quote, or what makes it not flat.
const STOPS: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 0x20 {
        t[c] = true;
        c += 1;
    }
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    t
};

/// A string starting at `i` with no backslash or control character: where it starts and ends
/// (quotes included), and the index after it.
fn flat_string(text: &str, i: usize) -> Option<((usize, usize), usize)> {
    let b = text.as_bytes();
    if b.get(i) != Some(&b'"') {
        return None;
    }
    // The first quote, backslash or control character: the strings of a record line are a few
    // dozen bytes, where a table lookup a byte beats setting up a vector search.
    let len = b
        .get(i + 1..)?
        .iter()
        .position(|&c| STOPS[usize::from(c)])?;
    let end = i + 1 + len;
    if b.get(end) != Some(&b'"') {
        return None;
    }
    Some(((i, end + 1), end + 1))
}

/// The end of a scalar value starting at `i` (a flat string, a JSON number, `true`, `false`,
/// `null`); `None` for anything else.
fn flat_value(text: &str, i: usize) -> Option<usize> {
    let b = text.as_bytes();
    match b.get(i)? {
        b'"' => flat_string(text, i).map(|(_, end)| end),
        b't' => b.get(i..i + 4).filter(|w| *w == b"true").map(|_| i + 4),
        b'f' => b.get(i..i + 5).filter(|w| *w == b"false").map(|_| i + 5),
        b'n' => b.get(i..i + 4).filter(|w| *w == b"null").map(|_| i + 4),
        b'-' | b'0'..=b'9' => json_number(b, i),
        _ => None,
    }
}

/// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?` from `i`: the index after it.
fn json_number(b: &[u8], mut i: usize) -> Option<usize> {
    let digits = |b: &[u8], i: usize| {
        b.get(i..)
            .map_or(0, |r| r.iter().take_while(|c| c.is_ascii_digit()).count())
    };
    if b.get(i) == Some(&b'-') {
        i += 1;
    }
    match b.get(i)? {
        b'0' => i += 1,
        b'1'..=b'9' => i += digits(b, i),
        _ => return None,
    }
    if b.get(i) == Some(&b'.') {
        let n = digits(b, i + 1);
        if n == 0 {
            return None;
        }
        i += 1 + n;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let n = digits(b, i);
        if n == 0 {
            return None;
        }
        i += n;
    }
    Some(i)
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

    /// The flat scan never disagrees with serde_json: on real record shapes and on thousands of
    /// byte-level mutations of them, whatever the scan accepts serde_json accepts with the same
    /// field values, and what serde_json rejects the scan rejects too.
    #[test]
    fn the_flat_scan_agrees_with_serde_on_every_mutation() {
        let seeds = [
            r#"{"version":1,"timestamp":"2026-11-29T10:00:00.000Z","writerId":"0190aaaa-0000-7000-8000-000000000002","sessionId":"s1","event":"host.activity","busy":true,"port":8080,"phase":null}"#,
            r#"{ "version" : 1 , "sessionId" : "é✓", "busy" : false, "port": -0.5e+3 }  "#,
            r#"{"type":"session","version":3,"id":"a","cwd":"/w","timestamp":"t"}"#,
            "{}",
        ];
        let alphabet = b"{}[]\":,.-+eE0123456789 \t\n\\ux\x01\x7f\xc3\xa9tfnul";
        let mut rng: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move |n: usize| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            (rng % n as u64) as usize
        };
        let mut flat_hits = 0;
        for seed in seeds {
            for _ in 0..3000 {
                let mut line = seed.as_bytes().to_vec();
                for _ in 0..1 + next(3) {
                    let at = next(line.len() + 1);
                    match next(3) {
                        0 if at < line.len() => {
                            line.remove(at);
                        }
                        1 if at < line.len() => line[at] = alphabet[next(alphabet.len())],
                        _ => line.insert(at, alphabet[next(alphabet.len())]),
                    }
                }
                let any = Fields::parse_any(&line, &NAMES);
                let generic = serde_json::from_slice::<Value>(&line)
                    .ok()
                    .filter(Value::is_object);
                if let Some(flat) = scan_flat(&line, &NAMES) {
                    flat_hits += 1;
                    let any = any.unwrap_or_else(|| panic!("{}", String::from_utf8_lossy(&line)));
                    let flat = Fields {
                        names: &NAMES,
                        slots: flat,
                        observation: false,
                    };
                    for n in NAMES {
                        assert_eq!(flat.str(n), any.str(n), "{n}");
                        assert_eq!(flat.u64(n), any.u64(n), "{n}");
                        assert_eq!(flat.bool(n), any.bool(n), "{n}");
                    }
                }
                // Whichever path answers, the fields read as a generic parse reads them.
                let (Some(f), Some(g)) = (Fields::parse(&line), generic) else {
                    continue;
                };
                for n in NAMES {
                    assert_eq!(f.str(n).as_deref(), g[n].as_str(), "{n}");
                    assert_eq!(f.u64(n), g[n].as_u64(), "{n}");
                    assert_eq!(f.bool(n), g[n].as_bool(), "{n}");
                }
            }
        }
        // The mutations keep many lines flat, so the scan itself was exercised.
        assert!(flat_hits > 1000, "{flat_hits}");
    }

    /// Slots name observation-record fields only: fields parsed with another list of names
    /// answer nothing by slot, never another field's value.
    #[test]
    fn slots_answer_only_for_observation_records() {
        const HEADER: [&str; 1] = ["type"];
        let line = br#"{"type":"session","version":3}"#;
        let other = Fields::parse_named(line, &HEADER).unwrap();
        assert_eq!(other.str("type").as_deref(), Some("session"));
        assert_eq!(other.str_at(const { field("version") }), None);
        assert_eq!(other.u64_at(0), None);
        let obs = Fields::parse(line).unwrap();
        assert_eq!(obs.u64_at(const { field("version") }), Some(3));
    }
}
