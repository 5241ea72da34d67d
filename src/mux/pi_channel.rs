//! The private reply channel of a pi seat: a Unix socket the shipped extension
//! (`linux/pi-extension/intercom-pane.ts`) opens in an owner-only folder and advertises in its
//! registration. One request per connection, one JSON line each way:
//!
//! ```text
//! → {"v":1,"id":"<uuid>","text":"<text>"}
//! ← {"v":1,"id":"<uuid>","outcome":"delivered|queued|unconfirmed|failed","detail":"…"}
//! ```
//!
//! The extension checks `text` by the reply text rules again (its own copy of
//! `src/reply_text.rs`), hands it to pi unchanged with `pi.sendUserMessage` (nothing added: pi
//! records exactly the text) and answers what pi did: a turn
//! started (`delivered`), held in its own queue behind the running turn (`queued`), no turn seen
//! in its bounded wait (`unconfirmed`), or refused (`failed`). No keystrokes: a draft, copy mode,
//! focus or pane size never matter.
//!
//! Before writing anything this side checks who listens: the socket's folder is a real folder
//! owned by us with mode 0700 (so only our uid can connect at all), and the listening process
//! (`SO_PEERCRED`) has our uid and is the registered pi itself. Any failure before the request is
//! written sends nothing (`NotSent`); after it, the answer or its absence is reported as it is —
//! the caller never resends and never falls back to typing.

use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::Instant;

use serde_json::Value;

use super::herdr::wire;
use super::ErrorCode;

/// What happened to a text that was sent — on every transport; the channel's answers use the
/// same words (`Unconfirmed` also when it said nothing in time).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// pi started a turn with it (typed/Herdr: the submission went through).
    Delivered,
    /// pi was busy: it is held behind the running turn and sent when that turn settles.
    Queued,
    /// Sent, but no confirmation came in time: it may have arrived. Never resent.
    Unconfirmed,
    /// It did not reach pi.
    Failed,
}

impl Outcome {
    const ALL: [Outcome; 4] = [
        Outcome::Delivered,
        Outcome::Queued,
        Outcome::Unconfirmed,
        Outcome::Failed,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Outcome::Delivered => "delivered",
            Outcome::Queued => "queued",
            Outcome::Unconfirmed => "unconfirmed",
            Outcome::Failed => "failed",
        }
    }

    fn parse(s: &str) -> Option<Outcome> {
        Outcome::ALL.into_iter().find(|o| o.name() == s)
    }
}

/// The answer, with the extension's detail (or why there is none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub outcome: Outcome,
    pub detail: String,
}

/// Nothing was written: why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotSent(pub String);

/// Cap on the detail kept from an answer.
const DETAIL_CAP: usize = 500;

/// One line to the extension: the text, with an id its answer names.
#[derive(serde::Serialize)]
struct Ask<'a> {
    v: u32,
    id: &'a str,
    text: &'a str,
}

/// Hand `text` to the pi `pi_pid` through the channel at `socket`, once.
pub fn send(socket: &Path, pi_pid: i32, text: &str, deadline: Instant) -> Result<Answer, NotSent> {
    check_folder(socket)?;
    let mut stream = wire::connect(socket, deadline).map_err(|e| {
        NotSent(match e.code {
            ErrorCode::Timeout => "the channel did not accept a connection in time".into(),
            _ => "the channel is not listening (pi closed it, or quit)".into(),
        })
    })?;
    check_peer(&stream, pi_pid)?;
    let id = uuid::Uuid::new_v4().to_string();
    let ask = Ask {
        v: 1,
        id: &id,
        text,
    };
    let mut line = serde_json::to_string(&ask).map_err(|e| NotSent(e.to_string()))?;
    line.push('\n');
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(NotSent("no time left to send".into()));
    }
    let written = stream
        .set_write_timeout(Some(left))
        .and_then(|_| stream.write_all(line.as_bytes()));
    if let Err(e) = written {
        // A partial write may have reached the extension: report it, never resend.
        return Ok(unconfirmed(format!(
            "the request was not fully written ({})",
            e.kind()
        )));
    }
    match wire::read_line(&mut stream, deadline) {
        Ok(reply) => Ok(parse_answer(&reply, &id)),
        Err(e) if e.code == ErrorCode::Timeout => {
            Ok(unconfirmed("no answer from pi's extension in time".into()))
        }
        Err(_) => Ok(unconfirmed("the channel closed without an answer".into())),
    }
}

fn unconfirmed(detail: String) -> Answer {
    Answer {
        outcome: Outcome::Unconfirmed,
        detail,
    }
}

/// The answer line for request `id`; anything else is `Unconfirmed` (the text may have reached
/// pi: it is never sent again).
pub fn parse_answer(line: &[u8], id: &str) -> Answer {
    let v: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(_) => return unconfirmed("the extension's answer is not JSON".into()),
    };
    if v.get("id").and_then(Value::as_str) != Some(id) {
        return unconfirmed("the extension answered another request".into());
    }
    let detail = v
        .get("detail")
        .and_then(Value::as_str)
        .map(|d| crate::text::clip(&crate::text::sanitize(d), DETAIL_CAP))
        .unwrap_or_default();
    match v
        .get("outcome")
        .and_then(Value::as_str)
        .and_then(Outcome::parse)
    {
        Some(outcome) => Answer { outcome, detail },
        None => unconfirmed("the extension's answer names no known outcome".into()),
    }
}

/// The socket's folder must be ours alone: a real folder, owned by our uid, mode 0700.
fn check_folder(socket: &Path) -> Result<(), NotSent> {
    let dir = socket
        .parent()
        .filter(|d| d.is_absolute())
        .ok_or_else(|| NotSent("the channel path is not absolute".into()))?;
    let meta = std::fs::symlink_metadata(dir)
        .map_err(|_| NotSent("the channel's folder is gone".into()))?;
    let uid = nix::unistd::getuid().as_raw();
    if !meta.file_type().is_dir() || meta.uid() != uid || meta.mode() & 0o777 != 0o700 {
        return Err(NotSent(
            "the channel's folder is not a private (0700) folder of this user".into(),
        ));
    }
    Ok(())
}

/// The listener must be the registered pi, running as us.
fn check_peer(stream: &std::os::unix::net::UnixStream, pi_pid: i32) -> Result<(), NotSent> {
    let cred = nix::sys::socket::getsockopt(stream, nix::sys::socket::sockopt::PeerCredentials)
        .map_err(|e| {
            NotSent(format!(
                "cannot read the listener's credentials ({})",
                e.desc()
            ))
        })?;
    if cred.uid() != nix::unistd::getuid().as_raw() {
        return Err(NotSent("the channel is held by another user".into()));
    }
    if cred.pid() != pi_pid {
        return Err(NotSent(format!(
            "the channel is held by pid {}, not the registered pi {pi_pid}",
            cred.pid()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_read_strictly() {
        let a = parse_answer(
            br#"{"v":1,"id":"x","outcome":"queued","detail":"behind"}"#,
            "x",
        );
        assert_eq!(a.outcome, Outcome::Queued);
        assert_eq!(a.detail, "behind");
        for bad in [
            &br#"{"v":1,"id":"y","outcome":"delivered"}"#[..],
            br#"{"v":1,"id":"x","outcome":"maybe"}"#,
            b"not json",
        ] {
            assert_eq!(parse_answer(bad, "x").outcome, Outcome::Unconfirmed);
        }
    }
}
