//! The reply path (behaviour.md §6): one line of text to one registered seat, typed into its
//! pane as a bracketed paste plus a separate Enter, through `scripts/agent-send.sh` (tmux) or
//! Herdr's `agent.prompt`. The target comes only from the seat's live registration. Refusals
//! happen before anything is sent; once the tool ran, its outcome is reported as it was — never
//! retried, never routed around. One seat per call.

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::clock::{format_iso, Ms};
use crate::mux::{self, spawn, MuxKind};
use crate::scan::{ReplyTarget, Scan};

/// The delivery tool, shipped in `scripts/` and embedded so an installed binary needs no file.
pub const AGENT_SEND: &str = include_str!("../../../scripts/agent-send.sh");
/// Set to a path to run another agent-send script instead of the embedded one.
pub const AGENT_SEND_ENV: &str = "INTERCOM_PANE_AGENT_SEND";
mod text;
pub use text::{is_invisible, is_refused_control, TextError, INVISIBLE, MAX_CHARS};
/// The fixed trailer sent on its own line after the text.
pub const TRAILER: &str = "(intercom-pane: answer in your own session as usual; the board reads your transcript. Do not agent-send to intercom-pane.)";
/// Deadline for the delivery tool.
const TOOL_DEADLINE: Duration = Duration::from_secs(10);
/// Cap on the tool's stdout we keep.
const OUTPUT_CAP: usize = 16 * 1024;
/// Environment a delivery must never inherit: the registration is the only source of the target.
const STRIPPED_ENV: [&str; 4] = ["MOSAIC_TMUX_SOCKET", "TMUX", "TMUX_PANE", "TMUX_TMPDIR"];

/// Why a reply was refused before anything was sent. Each has its own exit code.
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    /// The text breaks a text rule (`text.rs`).
    Text(TextError),
    UnknownSeat(String),
    Ambiguous(String),
    Connector(String),
    NoPath(String, String),
    ToolNotStarted(String),
}

impl Refusal {
    /// Exit codes: 3 blank, 4 too long, 5 unknown or ambiguous seat, 6 no reply path
    /// (no/stale registration, no pane), 7 connector seat, 8 the tool could not be started,
    /// 9 a control character in the text.
    pub fn exit_code(&self) -> i32 {
        match self {
            Refusal::Text(TextError::Blank) => 3,
            Refusal::Text(TextError::TooLong(_)) => 4,
            Refusal::Text(TextError::Control(..)) => 9,
            Refusal::UnknownSeat(_) | Refusal::Ambiguous(_) => 5,
            Refusal::NoPath(..) => 6,
            Refusal::Connector(_) => 7,
            Refusal::ToolNotStarted(_) => 8,
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let clean = |s: &str| crate::text::clip(&crate::text::sanitize(s), 80);
        match self {
            Refusal::Text(e) => e.fmt(f),
            Refusal::UnknownSeat(s) => write!(f, "no seat named {:?}", clean(s)),
            Refusal::Ambiguous(s) => write!(
                f,
                "{:?} names more than one seat; give <project>/<agent>",
                clean(s)
            ),
            Refusal::Connector(s) => write!(f, "{} is a connector row: not replied to", clean(s)),
            Refusal::NoPath(s, why) => write!(f, "cannot reply to {}: {why}", clean(s)),
            Refusal::ToolNotStarted(e) => write!(f, "the delivery tool could not be started: {e}"),
        }
    }
}

/// What happened once the tool ran.
#[derive(Debug, Clone, PartialEq)]
pub struct Receipt {
    pub delivered: bool,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub agent: String,
    pub target: ReplyTarget,
    pub sent_at: Ms,
}

impl Receipt {
    pub fn to_json(&self) -> Value {
        json!({
            "delivered": self.delivered,
            "exitCode": self.exit_code,
            "signal": self.signal,
            "stdout": self.stdout,
            "stderr": self.stderr,
            "agent": self.agent,
            "session": self.target.session,
            "target": self.target.target,
            "socket": self.target.socket,
            "multiplexer": self.target.kind.name(),
            "sentAt": format_iso(self.sent_at),
        })
    }
}

/// The text rules, for every caller (reply, the sidebar's box, close-worker).
pub fn check_text(text: &str) -> Result<(), Refusal> {
    text::check_text(text).map_err(Refusal::Text)
}

/// Find the seat `who` names: `<project>/<agent>` exactly, else an agent name
/// (case-insensitive) that only one seat has. Returns its key and reply path.
pub fn resolve<'a>(scan: &'a Scan, who: &str) -> Result<(String, &'a ReplyTarget), Refusal> {
    let key = if scan.reply_paths.contains_key(who) {
        who.to_string()
    } else {
        let want = who.to_lowercase();
        let hits: Vec<String> = scan
            .records
            .iter()
            .filter(|r| r.agent.to_lowercase() == want)
            .map(|r| r.key())
            .collect();
        match hits.as_slice() {
            [] => return Err(Refusal::UnknownSeat(who.to_string())),
            [k] => k.clone(),
            _ => return Err(Refusal::Ambiguous(who.to_string())),
        }
    };
    if scan
        .records
        .iter()
        .any(|r| r.key() == key && r.connector.is_some())
    {
        return Err(Refusal::Connector(key));
    }
    match scan.reply_paths.get(&key) {
        Some(Ok(t)) => Ok((key, t)),
        Some(Err(why)) => Err(Refusal::NoPath(key, why.clone())),
        None => Err(Refusal::UnknownSeat(who.to_string())),
    }
}

/// The text as delivered: as typed, then the trailer on its own line.
pub fn message(text: &str) -> String {
    format!("{text}\n{TRAILER}")
}

fn host() -> String {
    crate::fsguard::read_capped(std::path::Path::new("/proc/sys/kernel/hostname"), 256)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty() && h.chars().all(|c| c.is_ascii_graphic()))
        .unwrap_or_else(|| "localhost".into())
}

/// Send `text` to the seat `who` of `scan`, once.
pub fn send(scan: &Scan, who: &str, text: &str, now: Ms) -> Result<Receipt, Refusal> {
    check_text(text)?;
    let (key, target) = resolve(scan, who)?;
    let body = message(text);
    match target.kind {
        MuxKind::Tmux => send_tmux(&key, target, &body, now),
        MuxKind::Herdr => Ok(send_herdr(&key, target, &body, now)),
    }
}

fn send_tmux(key: &str, t: &ReplyTarget, body: &str, now: Ms) -> Result<Receipt, Refusal> {
    let mut cmd = match std::env::var_os(AGENT_SEND_ENV) {
        Some(path) => Command::new(path),
        None => {
            let mut c = Command::new("bash");
            c.arg("-c").arg(AGENT_SEND).arg("agent-send.sh");
            c
        }
    };
    cmd.arg("-s")
        .arg(&t.target)
        .arg("-S")
        .arg(format!("{}:intercom-pane", host()));
    if let Some(s) = &t.socket {
        cmd.arg("-L").arg(s);
    }
    cmd.arg("-m").arg(body);
    for v in STRIPPED_ENV {
        cmd.env_remove(v);
    }
    let out = match spawn::run(&mut cmd, None, Instant::now() + TOOL_DEADLINE, OUTPUT_CAP) {
        Ok(o) => o,
        Err(spawn::RunError::NotFound) => {
            return Err(Refusal::ToolNotStarted(
                "bash or the agent-send script is missing".into(),
            ))
        }
        Err(spawn::RunError::Spawn(e)) => return Err(Refusal::ToolNotStarted(e)),
        Err(e) => {
            // It started but did not finish: report that, never retry.
            return Ok(Receipt {
                delivered: false,
                exit_code: None,
                signal: None,
                stdout: String::new(),
                stderr: format!("agent-send did not finish: {e:?}"),
                agent: key.to_string(),
                target: t.clone(),
                sent_at: now,
            });
        }
    };
    use std::os::unix::process::ExitStatusExt;
    Ok(Receipt {
        delivered: out.status.success(),
        exit_code: out.status.code(),
        signal: out.status.signal(),
        stdout: String::from_utf8_lossy(&out.stdout).trim().to_string(),
        stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        agent: key.to_string(),
        target: t.clone(),
        sent_at: now,
    })
}

fn send_herdr(key: &str, t: &ReplyTarget, body: &str, now: Ms) -> Receipt {
    let result = match &t.socket {
        Some(s) => mux::open(MuxKind::Herdr, std::path::Path::new(s)).send_text(
            &t.target,
            body,
            Instant::now() + TOOL_DEADLINE,
        ),
        None => Err(mux::MuxError::new(
            mux::ErrorCode::NoServer,
            "the registration names no Herdr socket",
        )),
    };
    Receipt {
        delivered: result.is_ok(),
        exit_code: Some(if result.is_ok() { 0 } else { 1 }),
        signal: None,
        stdout: String::new(),
        stderr: result.err().map(|e| e.to_string()).unwrap_or_default(),
        agent: key.to_string(),
        target: t.clone(),
        sent_at: now,
    }
}
