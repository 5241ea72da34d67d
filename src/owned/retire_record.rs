//! What `retire` keeps of a worker it removed from the roster:
//! `<root>/.pi-intercom/retired/<short id>-<ms>.json` (docs/behaviour.md §10). Written once,
//! before the entry leaves the roster, and never changed; nothing in intercom-pane reads it back
//! (it is for people), so `decode` is its one reader.
//!
//! Unlike the other owned files it has no final newline: the bytes are what 0.1's `json!` builder
//! wrote, kept as they were.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{cap, EncodeError, FieldError, Validate, MAX_ID, MAX_TEXT};
use crate::evidence::config::MAX_CONFIG_BYTES;

/// The version this build writes.
pub(crate) const VERSION: u32 = 1;

/// The record as it is on disk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RetireRecord {
    pub version: u32,
    /// When it was retired (ISO).
    pub retired_at: String,
    pub name: String,
    pub session_id: String,
    /// The roster entry, parsed (`null` if its text was not JSON).
    pub entry: Value,
    /// The roster entry exactly as it was written (numbers as written).
    pub entry_text: String,
    /// Its launch spec as its own file holds it (`null`: it was not started by `spawn`). Kept
    /// as JSON here: its schema is `actions::launch_spec`'s, which `owned` does not depend on.
    pub launch_spec: Option<Value>,
    /// The worker's files left where they are (its seat record, its report).
    pub kept: Vec<String>,
}

impl Validate for RetireRecord {
    fn validate(&self) -> Result<(), FieldError> {
        cap("retiredAt", &self.retired_at, MAX_ID)?;
        cap("sessionId", &self.session_id, MAX_ID)?;
        cap("name", &self.name, MAX_TEXT)?;
        cap("entryText", &self.entry_text, MAX_CONFIG_BYTES as usize)?;
        for k in &self.kept {
            cap("kept", k, MAX_TEXT)?;
        }
        Ok(())
    }
}

impl RetireRecord {
    /// Validate and encode for its file: pretty JSON, no final newline (see the module's note).
    pub(crate) fn to_bytes(&self) -> Result<Vec<u8>, EncodeError> {
        self.validate().map_err(EncodeError::Field)?;
        serde_json::to_vec_pretty(self).map_err(|e| EncodeError::Json(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::super::decode;
    use super::*;

    /// As 0.1's `retire` wrote it (the `json!` builder before this schema).
    const OLD: &str = r#"{
  "version": 1,
  "retiredAt": "2026-11-30T00:00:00.000Z",
  "name": "w1",
  "sessionId": "s-1",
  "entry": {
    "name": "w1",
    "port": 47001
  },
  "entryText": "{\"name\": \"w1\", \"port\": 47001}",
  "launchSpec": null,
  "kept": [
    "/r/.pi-intercom/seats/s-1.json"
  ]
}"#;

    #[test]
    fn the_previous_versions_record_reads_and_writes_back_byte_for_byte() {
        let r: RetireRecord = decode(OLD.as_bytes()).unwrap();
        assert_eq!((r.version, r.name.as_str()), (VERSION, "w1"));
        assert_eq!(String::from_utf8(r.to_bytes().unwrap()).unwrap(), OLD);
        let long = RetireRecord {
            session_id: "s".repeat(MAX_ID + 1),
            ..r
        };
        assert!(long.to_bytes().is_err());
    }
}
