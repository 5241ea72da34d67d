//! The reply path (docs/behaviour.md §6): one text to one registered seat. The text rules (`reply_text.rs`)
//! come first, then the seat's live registration is read again, and the transport is chosen from
//! it BEFORE anything is sent — never by falling back after a failure, so a reply is never
//! delivered twice:
//! - `channel`: the registration advertises the shipped extension's private socket and it is
//!   there: the text is handed to pi itself (`pi.sendUserMessage`, `mux::pi_channel`);
//! - a seat without a channel: its multiplexer types it into the pane (`Multiplexer::deliver`;
//!   `typed.rs` maps its answer), named after the multiplexer's path (`Caps::transport`):
//!   - `typed` on tmux: `scripts/agent-send.sh`, run by `mux::tmux::typed` (the pane must still
//!     run the registered pi, copy mode is left, a draft in pi's editor is refused, one
//!     bracketed paste, one Enter);
//!   - `herdr` on Herdr: Herdr's `agent.prompt`, with the same checks (`mux::herdr::prompt`).
//!
//! What is sent is the text itself, nothing added (no trailer: pi records exactly what the person
//! typed), without its surrounding white space (`reply_text::trim_like_pi`); the two transports
//! through pi's editor also refuse a text the editor would run as a command or change
//! (`reply_text::check_for_editor`), so a text is never a command on one transport and a message
//! on another.
//!
//! Refusals happen before anything is sent, each with its exit code; once something was sent,
//! the receipt says what happened (`delivered`, `queued`, `unconfirmed`, `failed`) — never
//! retried, never routed around. One seat per call.

use std::path::Path;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::clock::{format_iso, Ms};
use crate::evidence::registrations::{self, Registration};
use crate::evidence::sessions::timeline::Sender;
use crate::exit_code::exit_enum;
use crate::fsguard;
use crate::mux::{pi_channel, MuxKind};
use crate::scan::{ReplyTarget, Scan};

pub(crate) mod sent;
mod typed;
pub(crate) use crate::reply_text::{trim_like_pi, TextError};
/// How long a channel or Herdr delivery may take, answer included (the extension waits up to
/// 5 s for pi to start the turn).
const SEND_DEADLINE: Duration = Duration::from_secs(8);

/// Why a reply was refused before anything was sent. Each has its own exit code.
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    /// The text breaks a text rule (`reply_text.rs`).
    Text(TextError),
    /// No seat has that name: the name given, and the names the board knows.
    /// The name, the names the board knows, and why no roster agent can be named (no roster
    /// found here, or it cannot be used).
    UnknownSeat(String, Vec<String>, Option<String>),
    /// More than one seat has that name: the name given, and their `<project>/<agent>` keys.
    Ambiguous(String, Vec<String>),
    Connector(String),
    NoPath(String, String),
    ToolNotStarted(String),
    /// Typed transport: the pane is not ready for typing (a mode it would not leave, a draft or
    /// a dialog in pi's editor). Nothing was typed.
    NotReady(String, String),
    /// `--expect-seat`: the seat is not the one the board showed (another pi, pane or session).
    SeatChanged(String, String),
}

exit_enum! {
    /// How `reply` ends: one exit code per outcome, the numbers here only.
    ReplyExit {
        /// Delivered, or queued behind a running turn.
        Sent = 0,
        /// Sending failed.
        Failed = 1,
        /// Bad flags or setup (no text given, unreadable `-f`, a bad `--config`).
        Usage = 2,
        /// The text is blank.
        Blank = 3,
        /// The text is too long.
        TooLong = 4,
        /// No seat, or more than one, has that name.
        UnknownSeat = 5,
        /// No reply path: no or stale registration, no pane, the pane no longer runs the registered
        /// pi, the channel not reachable.
        NoPath = 6,
        /// A connector seat.
        Connector = 7,
        /// The delivery tool could not be started.
        ToolNotStarted = 8,
        /// A control character in the text.
        Control = 9,
        /// The pane is not ready for typing (a draft, a dialog, a mode it would not leave).
        NotReady = 10,
        /// Sent with no confirmation: do not resend.
        Unconfirmed = 11,
        /// The seat has no channel and the text would be a command in pi's editor, or be changed by
        /// it (a first `!` or `/`, a TAB).
        NotTypeable = 12,
        /// `--expect-seat`: the seat is not the one the board showed; nothing was sent.
        SeatChanged = 14,
    } refused: Usage
}

impl From<Outcome> for ReplyExit {
    fn from(o: Outcome) -> ReplyExit {
        match o {
            Outcome::Delivered | Outcome::Queued => ReplyExit::Sent,
            Outcome::Failed => ReplyExit::Failed,
            Outcome::Unconfirmed => ReplyExit::Unconfirmed,
        }
    }
}

impl Refusal {
    /// The exit of a refused reply (nothing was sent).
    pub fn exit(&self) -> ReplyExit {
        match self {
            Refusal::Text(TextError::Blank) => ReplyExit::Blank,
            Refusal::Text(TextError::TooLong(_)) => ReplyExit::TooLong,
            Refusal::Text(TextError::Control(..)) => ReplyExit::Control,
            Refusal::Text(TextError::EditorCommand(_) | TextError::EditorTab(_)) => {
                ReplyExit::NotTypeable
            }
            Refusal::UnknownSeat(..) | Refusal::Ambiguous(..) => ReplyExit::UnknownSeat,
            Refusal::NoPath(..) => ReplyExit::NoPath,
            Refusal::Connector(_) => ReplyExit::Connector,
            Refusal::ToolNotStarted(_) => ReplyExit::ToolNotStarted,
            Refusal::NotReady(..) => ReplyExit::NotReady,
            Refusal::SeatChanged(..) => ReplyExit::SeatChanged,
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let clean = |s: &str| crate::text::clip(&crate::text::sanitize(s), 80);
        let reason = |s: &str| crate::text::clip(&crate::text::sanitize(s), 300);
        match self {
            Refusal::Text(e) => e.fmt(f),
            Refusal::UnknownSeat(s, known, Some(roster)) if known.is_empty() => {
                write!(f, "no seat named {:?}: {roster}", clean(s))
            }
            Refusal::UnknownSeat(s, known, Some(roster)) => write!(
                f,
                "no seat named {:?}: {}; the board knows: {}",
                clean(s),
                roster,
                name_list(known)
            ),
            Refusal::UnknownSeat(s, known, None) if known.is_empty() => write!(
                f,
                "no seat named {:?}: the board shows no seat at all (`intercom-pane doctor` says why)",
                clean(s)
            ),
            Refusal::UnknownSeat(s, known, None) => write!(
                f,
                "no seat named {:?}; the board knows: {}",
                clean(s),
                name_list(known)
            ),
            Refusal::Ambiguous(s, keys) => write!(
                f,
                "{:?} names more than one seat ({}); give one of them as <project>/<agent>",
                clean(s),
                name_list(keys)
            ),
            Refusal::Connector(s) => write!(f, "{} is a connector row: not replied to", clean(s)),
            Refusal::NoPath(s, why) => write!(f, "cannot reply to {}: {}", clean(s), reason(why)),
            Refusal::ToolNotStarted(e) => write!(f, "the delivery tool could not be started: {e}"),
            Refusal::NotReady(s, why) => {
                write!(f, "not sent to {}: {}", clean(s), reason(why))
            }
            Refusal::SeatChanged(s, why) => {
                write!(f, "not sent to {}: {}", clean(s), reason(why))
            }
        }
    }
}

/// Names for a message: sanitized, at most 20, then how many more.
fn name_list(names: &[String]) -> String {
    const SHOWN: usize = 20;
    let mut out: Vec<String> = names
        .iter()
        .take(SHOWN)
        .map(|n| crate::text::clip(&crate::text::sanitize(n), 60))
        .collect();
    if names.len() > SHOWN {
        out.push(format!("and {} more", names.len() - SHOWN));
    }
    out.join(", ")
}

/// How the text travelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Transport {
    /// Handed to pi by the shipped extension's private channel.
    Channel,
    /// Typed into the pane by its multiplexer (`Multiplexer::deliver`): `typed` on tmux
    /// (`agent-send.sh`), `herdr` on Herdr (`agent.prompt`).
    Pane(MuxKind),
}

impl Transport {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Transport::Channel => "channel",
            Transport::Pane(kind) => kind.caps().transport,
        }
    }
}

use crate::mux::pi_channel::Outcome;

/// A receipt as `reply --json` prints it and the reply tool answers.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ReceiptJson<'a> {
    outcome: &'static str,
    delivered: bool,
    transport: &'static str,
    exit_code: Option<i32>,
    signal: Option<i32>,
    stdout: &'a str,
    stderr: &'a str,
    agent: &'a str,
    session: Option<&'a str>,
    target: &'a str,
    socket: Option<&'a str>,
    multiplexer: &'static str,
    sent_at: String,
}

impl Serialize for Receipt {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        ReceiptJson {
            outcome: self.outcome.name(),
            delivered: self.delivered,
            transport: self.transport.name(),
            exit_code: self.exit_code,
            signal: self.signal,
            stdout: &self.stdout,
            stderr: &self.stderr,
            agent: &self.agent,
            session: self.target.session.as_deref(),
            target: &self.target.target,
            socket: self.target.socket.as_deref(),
            multiplexer: self.target.kind.name(),
            sent_at: format_iso(self.sent_at),
        }
        .serialize(s)
    }
}

/// What happened once something was sent.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Receipt {
    /// pi has the text: it started a turn or is queued behind the running one.
    pub delivered: bool,
    pub outcome: Outcome,
    pub transport: Transport,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub agent: String,
    pub target: ReplyTarget,
    pub sent_at: Ms,
}

impl Receipt {
    fn new(key: &str, t: &ReplyTarget, transport: Transport, outcome: Outcome, now: Ms) -> Self {
        Receipt {
            delivered: matches!(outcome, Outcome::Delivered | Outcome::Queued),
            outcome,
            transport,
            exit_code: None,
            signal: None,
            stdout: String::new(),
            stderr: String::new(),
            agent: key.to_string(),
            target: t.clone(),
            sent_at: now,
        }
    }

    /// One line for people: `queued via channel to root/W (tmux %3) at …`, plus the detail.
    pub(crate) fn summary(&self) -> String {
        let detail = [self.stdout.as_str(), self.stderr.as_str()]
            .into_iter()
            .filter(|s| !s.is_empty())
            .map(crate::text::sanitize)
            .collect::<Vec<_>>()
            .join("; ");
        let mut line = format!(
            "{} via {} to {} ({}) at {}",
            self.outcome.name(),
            self.transport.name(),
            crate::text::sanitize(&self.agent),
            crate::text::sanitize(&self.target.describe()),
            format_iso(self.sent_at)
        );
        if !detail.is_empty() {
            line.push_str(": ");
            line.push_str(&crate::text::clip(&detail, 300));
        }
        line
    }
}

/// The text rules, for every caller (reply, the sidebar's box, close-worker).
pub fn check_text(text: &str) -> Result<(), Refusal> {
    crate::reply_text::check_text(text).map_err(Refusal::Text)
}

/// Find the seat `who` names: `<project>/<agent>` exactly, else an agent name
/// (case-insensitive) that only one seat has. Returns its key and reply path.
pub(crate) fn resolve<'a>(scan: &'a Scan, who: &str) -> Result<(String, &'a ReplyTarget), Refusal> {
    let key = match scan.find_seat(who) {
        Ok(k) => k,
        Err(crate::scan::SeatLookup::Unknown) => {
            return Err(Refusal::UnknownSeat(
                who.to_string(),
                known_names(scan),
                scan.snapshot.roster.missing(),
            ))
        }
        Err(crate::scan::SeatLookup::Ambiguous(keys)) => {
            return Err(Refusal::Ambiguous(who.to_string(), keys))
        }
    };
    if scan
        .records
        .iter()
        .any(|r| r.key() == key && r.connector.is_some())
    {
        return Err(Refusal::Connector(key));
    }
    match scan.reply_paths.get(key.as_str()) {
        Some(Ok(t)) => Ok((key, t)),
        Some(Err(why)) => Err(Refusal::NoPath(key, why.to_string())),
        None => Err(Refusal::UnknownSeat(
            who.to_string(),
            known_names(scan),
            scan.snapshot.roster.missing(),
        )),
    }
}

/// The names `reply` takes, in board order, each once: an agent name only one seat has, else
/// the seats' `<project>/<agent>` keys.
fn known_names(scan: &Scan) -> Vec<String> {
    let count = |agent: &str| {
        scan.records
            .iter()
            .filter(|r| r.agent.to_lowercase() == agent.to_lowercase())
            .count()
    };
    let mut out: Vec<String> = Vec::new();
    for r in scan.records.iter().filter(|r| r.connector.is_none()) {
        let name = if count(&r.agent) == 1 {
            r.agent.clone()
        } else {
            r.key().to_string()
        };
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// The seat's registration read again right before sending: still the same live pi in the
/// same place the scan saw, its session not ended.
fn fresh_registration(scan: &Scan, key: &str, t: &ReplyTarget) -> Result<Registration, Refusal> {
    let no = |why: &str| Refusal::NoPath(key.to_string(), why.to_string());
    let view = scan
        .records
        .iter()
        .find(|r| r.key() == key)
        .and_then(|r| r.registered.as_ref())
        .ok_or_else(|| no("reply needs a registered seat"))?;
    let reg = registrations::read_path(Path::new(&view.path))
        .ok_or_else(|| no("the seat's registration is gone or unreadable"))?;
    let same_place = reg
        .mux
        .as_ref()
        .is_some_and(|m| m.pane_id.as_ref().or(m.session.as_ref()) == Some(&t.target));
    if reg.pid.is_none() || reg.pid != view.pid || !same_place {
        return Err(no("the seat's registration changed since the scan"));
    }
    // The scan's rule for a live registration (`Registration::alive`: same incarnation, ours).
    if reg.alive() != Some(true) {
        return Err(no(
            "the seat's registration is stale (its pi is gone or is not yours)",
        ));
    }
    // Still the record of the seat the board found (session file, folder): another pi's record
    // of the same session id never receives a reply meant for this one.
    reg.matches_seat(t.session_file.as_deref(), t.folder.as_deref())
        .map_err(|why| no(&why.to_string()))?;
    if reg.session_closed() {
        return Err(no(
            "the seat's session has ended in its pi (it moved on or is quitting)",
        ));
    }
    Ok(reg)
}

/// How long a typed reply waits for the records pi has started to land (the extension spawns
/// one `register` per event without waiting and gives each at most 3 s).
const RECORDS_WAIT: Duration = Duration::from_secs(3);

/// The registration once every record pi started writing has landed: the typed transports tell
/// `delivered` from `queued` by its run state, which lags pi by those writes (a turn that has
/// ended can still read `working` while its records land, out of order). `reg` itself when
/// none was pending; read and checked again otherwise.
fn caught_up(
    scan: &Scan,
    key: &str,
    t: &ReplyTarget,
    reg: Registration,
) -> Result<Registration, Refusal> {
    let Some(pid) = reg.pid else {
        return Ok(reg);
    };
    let until = Instant::now() + RECORDS_WAIT;
    let mut waited = false;
    // Bounded by RECORDS_WAIT: one look every 10 ms.
    while recording(pid) && Instant::now() < until {
        waited = true;
        std::thread::sleep(Duration::from_millis(10));
    }
    if waited {
        fresh_registration(scan, key, t)
    } else {
        Ok(reg)
    }
}

/// pi (`pid`) has a `register --pi-pid <pid>` of its own still running.
fn recording(pid: i32) -> bool {
    let me = pid.to_string();
    crate::proc::children_of(pid)
        .unwrap_or_default()
        .into_iter()
        .any(|c| {
            crate::proc::cmdline(c).is_some_and(|a| {
                a.get(1).map(String::as_str) == Some("register")
                    && a.windows(2).any(|w| w[0] == "--pi-pid" && w[1] == me)
            })
        })
}

/// The transport for this seat, decided before anything is sent.
fn choose(reg: &Registration, t: &ReplyTarget) -> Transport {
    let channel_ready = reg
        .channel
        .as_deref()
        .is_some_and(|c| matches!(fsguard::kind(Path::new(c)), Ok(fsguard::Kind::Socket)));
    if channel_ready {
        Transport::Channel
    } else {
        Transport::Pane(t.kind)
    }
}

/// One fresh scan pass of the roster at `root`, then one `send` of `text` to its agent `name`,
/// never retried: how `spawn` hands over a first task and `restore --continue` its "continue".
/// `Err` when the pass could not run.
pub(crate) fn send_after_scan(
    opts: &crate::scan::ScanOptions,
    root: &Path,
    clock: &dyn crate::clock::Clock,
    name: &str,
    text: &str,
    from: Sender,
) -> Result<Result<Receipt, Refusal>, crate::scan::ScanError> {
    let opts = crate::scan::ScanOptions {
        root: crate::scan::RootChoice::Exact(root.to_path_buf()),
        ..opts.clone()
    };
    let pass = crate::scan::run(&opts, clock, None, None)?;
    let key = format!("{}/{}", crate::scan::base_name(root), name);
    Ok(send(&pass, &key, text, clock.now_ms(), from))
}

/// Send `text` to the seat `who` of `scan`, once.
pub(crate) fn send(
    scan: &Scan,
    who: &str,
    text: &str,
    now: Ms,
    from: Sender,
) -> Result<Receipt, Refusal> {
    send_expecting(scan, who, text, now, None, from)
}

/// `send`, refused unless the seat's live registration is still the seat `expect` names
/// (compare-and-act: the pi, pane and session a board showed).
pub(crate) fn send_expecting(
    scan: &Scan,
    who: &str,
    text: &str,
    now: Ms,
    expect: Option<&crate::hosts::expect::SeatExpect>,
    from: Sender,
) -> Result<Receipt, Refusal> {
    check_text(text)?;
    let (key, target) = resolve(scan, who)?;
    let reg = fresh_registration(scan, &key, target)?;
    if let Some(e) = expect {
        let found = crate::hosts::expect::SeatFound {
            session_id: reg.session_id.clone(),
            pi: reg.identity().map(|i| (i.pid, i.start_ticks, i.boot_id)),
            pane: reg.mux.as_ref().and_then(|m| m.pane_id.clone()),
        };
        e.check(&found)
            .map_err(|why| Refusal::SeatChanged(key.clone(), why.to_string()))?;
    }
    let body = trim_like_pi(text);
    let transport = choose(&reg, target);
    if transport != Transport::Channel {
        crate::reply_text::check_for_editor(body).map_err(Refusal::Text)?;
    }
    let session_id = reg.session_id.clone();
    let receipt = match transport {
        Transport::Channel => send_channel(&key, target, &reg, body, now)?,
        Transport::Pane(_) => {
            let reg = caught_up(scan, &key, target, reg)?;
            typed::send(&key, target, &reg, body, now)?
        }
    };
    // pi may have the text: say who sent it, for `log NAME` (never fails the reply).
    if receipt.outcome != Outcome::Failed {
        if let Some(sid) = session_id.as_deref() {
            sent::record(
                &scan.data_root,
                sid,
                &sent::SentRecord {
                    version: 1,
                    at: now,
                    from,
                    transport: transport.name().to_string(),
                    outcome: receipt.outcome.name().to_string(),
                    sha256: sent::digest(body),
                },
            );
        }
    }
    Ok(receipt)
}

/// The channel gets the text alone: the extension checks it by the same rules and hands it to pi
/// unchanged.
fn send_channel(
    key: &str,
    t: &ReplyTarget,
    reg: &Registration,
    text: &str,
    now: Ms,
) -> Result<Receipt, Refusal> {
    let (Some(path), Some(pid)) = (reg.channel.as_deref(), reg.pid) else {
        return Err(Refusal::NoPath(key.into(), "no channel".into()));
    };
    let deadline = Instant::now() + SEND_DEADLINE;
    let answer = pi_channel::send(Path::new(path), pid, text, deadline)
        .map_err(|e| Refusal::NoPath(key.into(), format!("pi's reply channel: {}", e.0)))?;
    let outcome = answer.outcome;
    let mut r = Receipt::new(key, t, Transport::Channel, outcome, now);
    match outcome {
        Outcome::Failed | Outcome::Unconfirmed => r.stderr = answer.detail,
        _ => r.stdout = answer.detail,
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_name_where_no_roster_is_says_so_beside_the_names_the_board_knows() {
        let why = crate::snapshot::no_roster_here("no .pi-intercom/config.json in /w\u{1b}[2J");
        let r = Refusal::UnknownSeat("Builder".into(), vec!["w/pi".into()], Some(why.clone()));
        let t = r.to_string();
        assert_eq!(
            t,
            format!("no seat named \"Builder\": {why}; the board knows: w/pi")
        );
        assert!(t.contains("--root DIR") && !t.contains('\u{1b}'), "{t}");
        let r = Refusal::UnknownSeat("Builder".into(), vec![], None);
        assert!(r.to_string().contains("the board shows no seat at all"));
        assert_eq!(r.exit(), ReplyExit::UnknownSeat);
    }
}
