//! Herdr's event stream (`events.subscribe`, Herdr 0.8.2; docs/interop.md §8a): one connection
//! that stays open, answered by `{"id":…,"result":{"type":"subscription_started"}}` and then one
//! line per event (`{"event":"pane_created","data":{…}}`). The live engine listens so panes,
//! tabs and workspaces coming and going make it list the server again at once.
//!
//! Every line is data: whatever it says, it can only make the engine list the panes again.
//! Lines are bounded (`MAX_LINE`; a longer one is skipped and still counts).

use std::io::{ErrorKind, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::time::Instant;

use serde_json::Value;

use super::wire::{bad, connect};
use super::Herdr;
use crate::mux::lines::{Line, Lines};
use crate::mux::tmux::control::Notice;
use crate::mux::{ErrorCode, MuxError};

/// What the engine subscribes to: everything that adds or removes a pane.
const KINDS: [&str; 9] = [
    "pane.created",
    "pane.closed",
    "pane.exited",
    "pane.moved",
    "pane.agent_detected",
    "tab.created",
    "tab.closed",
    "workspace.created",
    "workspace.closed",
];
/// Longest event line kept.
const MAX_LINE: usize = 64 * 1024;
/// Most bytes read in one `read_notices` call.
const MAX_READ: usize = 256 * 1024;

/// An open subscription.
pub struct HerdrEvents {
    stream: UnixStream,
    lines: Lines,
    ended: bool,
}

impl Herdr {
    /// Subscribe to pane, tab and workspace events; the subscription is confirmed before this
    /// returns (under `deadline`).
    pub fn subscribe(&self, deadline: Instant) -> Result<HerdrEvents, MuxError> {
        self.ping(deadline)?;
        let id = format!("intercom-pane:{}:events", std::process::id());
        let subscriptions = KINDS
            .iter()
            .map(|&kind| super::params::Kind { kind })
            .collect();
        let mut line = serde_json::to_vec(&super::params::Request {
            id: &id,
            method: "events.subscribe",
            params: super::params::Subscribe { subscriptions },
        })
        .map_err(|_| MuxError::new(ErrorCode::BadRequest, "unserializable params"))?;
        line.push(b'\n');
        let mut stream = connect(&self.socket, deadline)?;
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(MuxError::new(
                ErrorCode::Timeout,
                "herdr did not answer in time",
            ));
        }
        let io = |e: std::io::Error| MuxError::new(ErrorCode::Failed, e.kind().to_string());
        stream.set_write_timeout(Some(left)).map_err(io)?;
        stream.write_all(&line).map_err(io)?;
        // The confirmation, byte by byte (an event may follow it in the same read).
        let mut first = Vec::new();
        let mut b = [0u8; 1];
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(MuxError::new(
                    ErrorCode::Timeout,
                    "herdr did not answer in time",
                ));
            }
            stream.set_read_timeout(Some(left)).map_err(io)?;
            match stream.read(&mut b) {
                Ok(0) => return Err(bad("connection closed without a reply")),
                Ok(_) if b[0] == b'\n' => break,
                Ok(_) if first.len() < MAX_LINE => first.push(b[0]),
                Ok(_) => return Err(bad("reply over cap")),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(io(e)),
            }
        }
        let reply: Value = serde_json::from_slice(&first).map_err(|_| bad("reply not JSON"))?;
        let started = reply.get("id").and_then(Value::as_str) == Some(id.as_str())
            && reply.pointer("/result/type").and_then(Value::as_str)
                == Some("subscription_started");
        if !started {
            return Err(bad("subscription not started"));
        }
        stream.set_nonblocking(true).map_err(io)?;
        Ok(HerdrEvents {
            stream,
            lines: Lines::new(MAX_LINE),
            ended: false,
        })
    }
}

impl HerdrEvents {
    /// The fd to poll.
    pub fn raw_fd(&self) -> RawFd {
        self.stream.as_raw_fd()
    }

    pub fn ended(&self) -> bool {
        self.ended
    }

    /// Read what Herdr sent (bounded, never blocks): `Panes` per event, `Exit` at the end.
    pub fn read_notices(&mut self, out: &mut Vec<Notice>) {
        if self.ended {
            return;
        }
        let open = self.lines.read(&mut self.stream, MAX_READ, |l| {
            if l != Line::Full(b"") {
                out.push(Notice::Panes);
            }
        });
        if !open {
            self.ended = true;
            out.push(Notice::Exit);
        }
    }
}
