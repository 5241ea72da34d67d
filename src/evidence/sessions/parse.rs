//! Line parsing for pi session entries (see the parent module for why).
//!
//! Why a serde visitor and not a derived struct (issue 21): a skimmed line is cut (its first and
//! last 64 KiB), and a derived reader yields nothing from a cut line where this one keeps every
//! field before the cut; and an entry's text is capped as it is read (`MaybeStr`, `TEXT_CAP`)
//! where a derived `String` would hold a tool result of up to `LINE_PARSE_CAP` whole. The JSON
//! itself is still serde_json's.

use std::fmt;

use super::skim::find;
use super::{
    BranchEntry, EntryKind, Role, StopReason, ERROR_CAP, FIRST_LINE_CHARS, SHORT_CAP, TEXT_CAP,
};
use crate::clock::parse_iso;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

// ---------------------------------------------------------------------------------------------
// Line parsing: a serde visitor that records the few fields we need as it goes, so a line cut
// off at a window edge still yields everything before the cut.

#[derive(Debug, Default)]
pub(super) struct RawEntry {
    pub(super) typ: Option<String>,
    pub(super) id: Option<String>,
    pub(super) parent_id: Option<String>,
    pub(super) timestamp: Option<String>,
    pub(super) target_id: Option<String>,
    pub(super) provider: Option<String>,
    pub(super) model_id: Option<String>,
    pub(super) msg: RawMessage,
}

#[derive(Debug, Default)]
pub(super) struct RawMessage {
    pub(super) role: Option<String>,
    pub(super) stop_reason: Option<String>,
    pub(super) error_message: Option<String>,
    pub(super) provider: Option<String>,
    pub(super) model: Option<String>,
    pub(super) has_tool_call: bool,
    /// `name` of the last `toolCall` block (what a running tool is).
    pub(super) tool_name: Option<String>,
    pub(super) text: String,
}

/// Cut `s` to at most `max` bytes on a char boundary.
pub(super) fn cap_str(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while end > 0 && !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}

/// A JSON value that is kept only when it is a string (capped); anything else is skipped.
pub(super) struct MaybeStr(usize);

impl<'de> DeserializeSeed<'de> for MaybeStr {
    type Value = Option<String>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for MaybeStr {
    type Value = Option<String>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any value")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Some(cap_str(v, self.0)))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
        while a.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
        while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(None)
    }
}

/// Top-level entry object.
pub(super) struct EntrySeed<'a>(&'a mut RawEntry);

impl<'de> DeserializeSeed<'de> for EntrySeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for EntrySeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a session entry object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        let e = self.0;
        while let Some(key) = a.next_key::<KeyName>()? {
            match key.0.as_deref() {
                Some("type") => e.typ = a.next_value_seed(MaybeStr(SHORT_CAP))?,
                Some("id") => e.id = a.next_value_seed(MaybeStr(SHORT_CAP))?,
                Some("parentId") => e.parent_id = a.next_value_seed(MaybeStr(SHORT_CAP))?,
                Some("timestamp") => e.timestamp = a.next_value_seed(MaybeStr(SHORT_CAP))?,
                Some("targetId") => e.target_id = a.next_value_seed(MaybeStr(SHORT_CAP))?,
                Some("provider") => e.provider = a.next_value_seed(MaybeStr(SHORT_CAP))?,
                Some("modelId") => e.model_id = a.next_value_seed(MaybeStr(SHORT_CAP))?,
                Some("message") => a.next_value_seed(MessageSeed(&mut e.msg))?,
                _ => {
                    a.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// A map key, kept only when short (all keys we care about are).
pub(super) struct KeyName(Option<String>);

impl<'de> de::Deserialize<'de> for KeyName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = KeyName;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<KeyName, E> {
                Ok(KeyName((v.len() <= 32).then(|| v.to_string())))
            }
        }
        d.deserialize_str(V)
    }
}

/// `message` object. Not a map (e.g. null) is tolerated and yields nothing.
pub(super) struct MessageSeed<'a>(&'a mut RawMessage);

impl<'de> DeserializeSeed<'de> for MessageSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for MessageSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a message object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        let m = self.0;
        while let Some(key) = a.next_key::<KeyName>()? {
            match key.0.as_deref() {
                Some("role") => m.role = a.next_value_seed(MaybeStr(SHORT_CAP))?,
                Some("stopReason") => m.stop_reason = a.next_value_seed(MaybeStr(SHORT_CAP))?,
                Some("errorMessage") => m.error_message = a.next_value_seed(MaybeStr(ERROR_CAP))?,
                Some("provider") => m.provider = a.next_value_seed(MaybeStr(SHORT_CAP))?,
                Some("model") => m.model = a.next_value_seed(MaybeStr(SHORT_CAP))?,
                Some("content") => a.next_value_seed(ContentSeed(m))?,
                _ => {
                    a.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        while a.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
    }
}

/// Only user and assistant text is ever shown or matched; skipping the rest (tool output is most
/// of a session's bytes) saves unescaping it. Pi writes `role` before `content`.
pub(super) fn wants_text(m: &RawMessage) -> bool {
    matches!(m.role.as_deref(), None | Some("user" | "assistant"))
}

pub(super) fn push_text(m: &mut RawMessage, t: &str) {
    if m.text.len() >= TEXT_CAP {
        return;
    }
    if !m.text.is_empty() {
        m.text.push('\n');
    }
    let room = TEXT_CAP.saturating_sub(m.text.len());
    m.text.push_str(&cap_str(t, room));
}

/// `content`: a string (user) or an array of blocks.
pub(super) struct ContentSeed<'a>(&'a mut RawMessage);

impl<'de> DeserializeSeed<'de> for ContentSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ContentSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("message content")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        if wants_text(self.0) {
            push_text(self.0, v);
        }
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        let m = self.0;
        loop {
            let mut block = Block::default();
            if a.next_element_seed(BlockSeed(&mut block, wants_text(m)))?
                .is_none()
            {
                break;
            }
            match block.typ.as_deref() {
                Some("text") if wants_text(m) => {
                    if let Some(t) = block.text {
                        push_text(m, &t);
                    }
                }
                Some("toolCall") => {
                    m.has_tool_call = true;
                    m.tool_name = block.name.or(m.tool_name.take());
                }
                _ => {}
            }
        }
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
}

#[derive(Default)]
pub(super) struct Block {
    pub(super) typ: Option<String>,
    pub(super) text: Option<String>,
    /// A `toolCall` block's tool name.
    pub(super) name: Option<String>,
}

/// The block, and whether its text is wanted.
pub(super) struct BlockSeed<'a>(&'a mut Block, bool);

impl<'de> DeserializeSeed<'de> for BlockSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for BlockSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a content block")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        let b = self.0;
        while let Some(key) = a.next_key::<KeyName>()? {
            match key.0.as_deref() {
                Some("type") => b.typ = a.next_value_seed(MaybeStr(SHORT_CAP))?,
                Some("text") if self.1 => b.text = a.next_value_seed(MaybeStr(TEXT_CAP))?,
                Some("name") => b.name = a.next_value_seed(MaybeStr(SHORT_CAP))?,
                _ => {
                    a.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        while a.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
    }
}

/// Parse one whole line. `None` when it is not a complete JSON object with a string `type`.
pub(super) fn parse_line(line: &[u8]) -> Option<RawEntry> {
    let mut e = RawEntry::default();
    let mut de = serde_json::Deserializer::from_slice(line);
    EntrySeed(&mut e).deserialize(&mut de).ok()?;
    de.end().ok()?;
    e.typ.is_some().then_some(e)
}

/// Parse as much of a line's first bytes as possible (the rest is cut off).
pub(super) fn parse_prefix(head: &[u8]) -> RawEntry {
    let mut e = RawEntry::default();
    let mut de = serde_json::Deserializer::from_slice(head);
    // An error here is expected: the window ends mid-value. What was seen before it is kept.
    let _ = EntrySeed(&mut e).deserialize(&mut de);
    e
}

/// The last occurrence of `"key":"` in `hay` and the JSON string value after it.
pub(super) fn last_string_field(hay: &[u8], key: &str) -> Option<String> {
    let pat = format!("\"{key}\":");
    let at = rfind(hay, pat.as_bytes())?;
    let rest = &hay[at + pat.len()..];
    let mut it = serde_json::Deserializer::from_slice(rest).into_iter::<String>();
    match it.next() {
        Some(Ok(s)) => Some(cap_str(&s, ERROR_CAP)),
        _ => None,
    }
}

pub(super) fn rfind(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || hay.len() < needle.len() {
        return None;
    }
    (0..=hay.len() - needle.len())
        .rev()
        .find(|&i| &hay[i..i + needle.len()] == needle)
}

/// Fields of a line too long to parse: its head parsed as a prefix, stop reason and error from
/// its tail (pi writes them after `content`). Structural keys cannot be faked by text inside a
/// string, since quotes there are escaped.
pub(super) fn skim_line(head: &[u8], tail: &[u8]) -> Option<RawEntry> {
    let mut e = parse_prefix(head);
    e.typ.as_ref()?;
    if e.msg.stop_reason.is_none() {
        e.msg.stop_reason = last_string_field(tail, "stopReason");
    }
    if e.msg.error_message.is_none() {
        e.msg.error_message = last_string_field(tail, "errorMessage");
    }
    if find(tail, b"\"type\":\"toolCall\"").is_some() {
        e.msg.has_tool_call = true;
    }
    if e.msg.text.is_empty() && wants_text(&e.msg) {
        if let Some(t) = super::skim::skimmed_text(head, tail) {
            push_text(&mut e.msg, &t);
        }
    }
    Some(e)
}

// ---------------------------------------------------------------------------------------------
// Entries as the summary keeps them.

#[derive(Debug, Clone)]
pub(super) struct Entry {
    pub(super) branch: BranchEntry,
    pub(super) parent_id: Option<String>,
    pub(super) provider: Option<String>,
    pub(super) model: Option<String>,
    pub(super) text: Option<String>,
    pub(super) error_message: Option<String>,
    /// The last tool call's name (assistant messages with tool calls).
    pub(super) tool_name: Option<String>,
}

pub(super) fn role_of(s: &str) -> Role {
    match s {
        "user" => Role::User,
        "assistant" => Role::Assistant,
        "toolResult" => Role::ToolResult,
        "bashExecution" => Role::BashExecution,
        "system" => Role::System,
        "custom" => Role::Custom,
        _ => Role::Other,
    }
}

pub(super) fn stop_of(s: &str) -> StopReason {
    match s {
        "stop" => StopReason::Stop,
        "length" => StopReason::Length,
        "toolUse" => StopReason::ToolUse,
        "error" => StopReason::Error,
        "aborted" => StopReason::Aborted,
        _ => StopReason::Other,
    }
}

pub(super) fn first_non_blank_line(t: &str) -> Option<String> {
    t.lines()
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .find(|l| !l.trim().is_empty())
        .map(|l| l.chars().take(FIRST_LINE_CHARS).collect())
}

pub(super) fn to_entry(raw: RawEntry, skimmed: bool) -> Entry {
    let kind = match raw.typ.as_deref() {
        Some("message") => EntryKind::Message,
        Some("model_change") => EntryKind::ModelChange,
        Some("compaction") => EntryKind::Compaction,
        Some("context_edit") => EntryKind::ContextEdit,
        Some("branch_summary") => EntryKind::BranchSummary,
        _ => EntryKind::Other,
    };
    let m = raw.msg;
    let is_msg = kind == EntryKind::Message;
    let role = if is_msg {
        Some(m.role.as_deref().map(role_of).unwrap_or(Role::Other))
    } else {
        None
    };
    let stop_reason = if is_msg {
        m.stop_reason.as_deref().map(stop_of)
    } else {
        None
    };
    // A skimmed line whose content array was cut off: stopReason `toolUse` is the best evidence
    // of tool calls we have.
    let has_tool_call =
        is_msg && (m.has_tool_call || (skimmed && stop_reason == Some(StopReason::ToolUse)));
    let text = (is_msg && !m.text.trim().is_empty()).then_some(m.text);
    let (provider, model) = match kind {
        EntryKind::ModelChange => (raw.provider, raw.model_id),
        EntryKind::Message if role == Some(Role::Assistant) => (m.provider, m.model),
        _ => (None, None),
    };
    Entry {
        branch: BranchEntry {
            kind,
            id: raw.id,
            timestamp: raw.timestamp.as_deref().and_then(parse_iso),
            role,
            stop_reason,
            has_tool_call,
            first_text_line: text.as_deref().and_then(first_non_blank_line),
            target_id: raw.target_id,
            skimmed,
        },
        parent_id: raw.parent_id,
        provider,
        model,
        text,
        error_message: if is_msg { m.error_message } else { None },
        tool_name: if has_tool_call { m.tool_name } else { None },
    }
}
