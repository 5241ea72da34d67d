//! The typed transport: `mux::tmux::typed` runs `scripts/agent-send.sh`, which types the text
//! into the seat's tmux pane after every check (the pane still runs the registered pi, no mode,
//! no draft in pi's editor). Its exit code is mapped here: a refusal sends nothing (`Refusal`),
//! anything after the paste is a receipt.

use std::time::Instant;

use super::{Outcome, Receipt, Refusal, Transport};
use crate::clock::Ms;
use crate::evidence::registrations::{Registration, RunState};
use crate::mux::tmux::typed::{self, TypedError, TypedExit, TypedRequest};
use crate::mux::tmux::PaneId;
use crate::scan::ReplyTarget;

fn host() -> String {
    crate::fsguard::read_capped(std::path::Path::new("/proc/sys/kernel/hostname"), 256)
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
    // Only a pane id names exactly one pane: a registration naming a session is no typed path.
    let pane = PaneId::parse(&t.target).map_err(|_| {
        Refusal::NoPath(
            key.into(),
            "the registration names no tmux pane id (%N) to type into".into(),
        )
    })?;
    let sender = format!("{}:intercom-pane", host());
    let req = TypedRequest {
        target: &pane,
        socket: t.socket.as_deref(),
        sender: &sender,
        // The pane must still run this very pi (pid and start ticks, checked by the script).
        pi: reg.pid.map(|pid| (pid, reg.start_ticks)),
        text: body,
        path_env: None,
    };
    let answer = match typed::agent_send(&req, Instant::now() + typed::TOOL_DEADLINE) {
        Ok(a) => a,
        Err(TypedError::NotStarted(e)) => return Err(Refusal::ToolNotStarted(e)),
        Err(TypedError::NotOurs(e)) => return Err(Refusal::NoPath(key.into(), e)),
        Err(TypedError::Unfinished(e)) => {
            // It started but did not finish: it may have typed. Report that, never retry.
            let mut r = Receipt::new(key, t, Transport::Typed, Outcome::Unconfirmed, now);
            r.stderr = e;
            return Ok(r);
        }
    };
    use std::os::unix::process::ExitStatusExt;
    let outcome = match answer.exit() {
        TypedExit::Delivered
            if reg
                .run_state
                .as_ref()
                .is_some_and(|r| r.state == RunState::Working) =>
        {
            // pi takes a message submitted during a turn as a follow-up: queued, not started.
            Outcome::Queued
        }
        TypedExit::Delivered => Outcome::Delivered,
        TypedExit::NotReady => return Err(Refusal::NotReady(key.into(), answer.reason())),
        TypedExit::NotThatPi => return Err(Refusal::NoPath(key.into(), answer.reason())),
        // Typed, but pi's editor still shows text: it may not have been submitted.
        TypedExit::NotConfirmed => Outcome::Unconfirmed,
        _ => Outcome::Failed,
    };
    let mut r = Receipt::new(key, t, Transport::Typed, outcome, now);
    r.exit_code = answer.status.code();
    r.signal = answer.status.signal();
    r.stdout = answer.stdout;
    r.stderr = answer.stderr;
    Ok(r)
}
