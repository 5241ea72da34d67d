//! The pane transports (`typed` on tmux, `herdr` on Herdr): `Multiplexer::deliver` types the
//! text into the seat's pane after every check (the pane still holds the registered pi, no
//! mode, no draft or dialog in pi's editor). Its answer is mapped here: a refusal sends nothing
//! (`Refusal`), anything that may have typed is a receipt.

use std::path::Path;
use std::time::Instant;

use super::{Outcome, Receipt, Refusal, Transport};
use crate::clock::Ms;
use crate::evidence::registrations::{Registration, RunState};
use crate::mux::{self, PiText, Untyped};
use crate::scan::ReplyTarget;

fn host() -> String {
    crate::fsguard::read_capped(Path::new("/proc/sys/kernel/hostname"), 256)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty() && h.chars().all(|c| c.is_ascii_graphic()))
        .unwrap_or_else(|| "localhost".into())
}

pub(super) fn send(
    key: &str,
    t: &ReplyTarget,
    reg: &Registration,
    body: &str,
    now: Ms,
) -> Result<Receipt, Refusal> {
    let socket = t
        .kind
        .delivery_socket(t.socket.as_deref())
        .map_err(|why| Refusal::NoPath(key.into(), why.to_string()))?;
    let sender = format!("{}:intercom-pane", host());
    let req = PiText {
        pane: &t.target,
        pi: reg.pid.map(|pid| (pid, reg.start_ticks)),
        sender: &sender,
        text: body,
    };
    let deadline = Instant::now() + t.kind.caps().deliver_within;
    let typed = match mux::open(t.kind, &socket).deliver(&req, deadline) {
        Ok(typed) => typed,
        Err(Untyped::NoPath(why)) => return Err(Refusal::NoPath(key.into(), why)),
        Err(Untyped::Busy(why)) => return Err(Refusal::NotReady(key.into(), why)),
        Err(Untyped::ToolNotStarted(why)) => return Err(Refusal::ToolNotStarted(why)),
    };
    // pi takes a message submitted during a turn as a follow-up: queued, not started.
    let busy = reg
        .run_state
        .as_ref()
        .is_some_and(|r| r.state == RunState::Working);
    let outcome = match typed.outcome {
        Outcome::Delivered if busy => Outcome::Queued,
        o => o,
    };
    let mut target = t.clone();
    target.target = typed.pane;
    let mut r = Receipt::new(key, &target, Transport::Pane(t.kind), outcome, now);
    r.exit_code = typed.exit_code;
    r.signal = typed.signal;
    r.stdout = typed.stdout;
    r.stderr = typed.stderr;
    Ok(r)
}
