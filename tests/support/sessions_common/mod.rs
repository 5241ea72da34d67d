//! Shared helpers for the session tests: a builder that writes pi-shaped JSONL like pi 1.6.0.
#![allow(dead_code)]

use intercom_pane::seam::clock::{format_iso, parse_strict, Ms};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// 2026-11-29T10:00:00.000Z
pub fn t0() -> Ms {
    parse_strict("2026-11-29T10:00:00.000Z").unwrap()
}

/// The fixtures, copied into the repo from the project's shared folder.
pub fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Builds one session file, entry by entry, each child of the previous unless told otherwise.
pub struct Session {
    pub id: String,
    pub lines: Vec<String>,
    pub last: Option<String>,
    pub clock: Ms,
    pub with_ids: bool,
    n: u32,
}

impl Session {
    /// A v3 session (ids, parentIds), header + model_change + thinking level + system message.
    pub fn new(id: &str) -> Session {
        let mut s = Session {
            id: id.to_string(),
            lines: Vec::new(),
            last: None,
            clock: t0(),
            with_ids: true,
            n: 0,
        };
        s.lines.push(
            json!({"type":"session","version":3,"id":id,"timestamp":format_iso(t0()),"cwd":"/home/dev/proj"})
                .to_string(),
        );
        s.entry(json!({"type":"model_change","provider":"fake","modelId":"fake-model"}));
        s.entry(json!({"type":"thinking_level_change","thinkingLevel":"off"}));
        s.entry(json!({"type":"message","message":{"role":"system","content":"","sections":{"preamble":"You are pi. Input needed: never the task"}}}));
        s
    }

    /// An old v1 session: no version, no ids.
    pub fn v1(id: &str) -> Session {
        let mut s = Session {
            id: id.to_string(),
            lines: Vec::new(),
            last: None,
            clock: t0(),
            with_ids: false,
            n: 0,
        };
        s.lines.push(
            json!({"type":"session","id":id,"timestamp":format_iso(t0()),"cwd":"/home/dev/old"})
                .to_string(),
        );
        s
    }

    /// Advance the clock by `ms` before the next entry.
    pub fn wait(&mut self, ms: Ms) -> &mut Self {
        self.clock += ms;
        self
    }

    /// Append an entry (a JSON object without id/parentId/timestamp); returns its id.
    pub fn entry(&mut self, v: Value) -> String {
        let parent = self.last.clone();
        self.entry_with_parent(v, parent)
    }

    pub fn entry_with_parent(&mut self, mut v: Value, parent: Option<String>) -> String {
        self.n += 1;
        self.clock += 1000;
        let id = format!("{:08x}", 0x1000_0000u32 + self.n);
        let obj = v.as_object_mut().unwrap();
        let mut out = serde_json::Map::new();
        out.insert("type".into(), obj.remove("type").unwrap());
        if self.with_ids {
            out.insert("id".into(), json!(id));
            out.insert("parentId".into(), json!(parent));
        }
        out.insert("timestamp".into(), json!(format_iso(self.clock)));
        for (k, val) in obj.iter() {
            out.insert(k.clone(), val.clone());
        }
        self.lines.push(Value::Object(out).to_string());
        self.last = Some(id.clone());
        id
    }

    pub fn user(&mut self, text: &str) -> String {
        self.entry(json!({"type":"message","message":{"role":"user","content":[{"type":"text","text":text}],"timestamp":self.clock}}))
    }

    pub fn user_str(&mut self, text: &str) -> String {
        self.entry(json!({"type":"message","message":{"role":"user","content":text}}))
    }

    /// An assistant turn with these content blocks and stop reason.
    pub fn assistant_blocks(&mut self, blocks: Value, stop: &str) -> String {
        self.entry(json!({"type":"message","message":{"role":"assistant","content":blocks,"api":"openai-completions","provider":"fake","model":"fake-model","stopReason":stop}}))
    }

    pub fn reply(&mut self, text: &str) -> String {
        self.assistant_blocks(json!([{"type":"text","text":text}]), "stop")
    }

    pub fn tool_call(&mut self, text: &str) -> String {
        self.assistant_blocks(
            json!([{"type":"text","text":text},{"type":"toolCall","id":"call_1","name":"bash","arguments":{"command":"sleep 1"}}]),
            "toolUse",
        )
    }

    pub fn tool_result(&mut self) -> String {
        self.entry(json!({"type":"message","message":{"role":"toolResult","toolCallId":"call_1","toolName":"bash","content":[{"type":"text","text":"(no output)"}],"isError":false}}))
    }

    pub fn error(&mut self, msg: &str) -> String {
        self.entry(json!({"type":"message","message":{"role":"assistant","content":[],"provider":"fake","model":"fake-model","stopReason":"error","errorMessage":msg}}))
    }

    pub fn aborted(&mut self) -> String {
        self.entry(json!({"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"partial"}],"provider":"fake","model":"fake-model","stopReason":"aborted","errorMessage":"Operation aborted"}}))
    }

    pub fn context_edit(&mut self, target: &str) -> String {
        self.entry(json!({"type":"context_edit","targetId":target,"replacement":null}))
    }

    pub fn compaction(&mut self) -> String {
        self.entry(json!({"type":"compaction","summary":"Earlier work summarized.","firstKeptEntryId":"x","tokensBefore":123456}))
    }

    /// The text of the whole file.
    pub fn text(&self) -> String {
        let mut t = self.lines.join("\n");
        t.push('\n');
        t
    }

    /// Write as `<dir>/<ts>_<id>.jsonl` and return the path.
    pub fn write_in(&self, dir: &Path) -> PathBuf {
        let p = dir.join(format!("2026-11-29T10-00-00-000Z_{}.jsonl", self.id));
        std::fs::write(&p, self.text()).unwrap();
        p
    }
}
