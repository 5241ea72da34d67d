//! The Herdr transport: `mux::herdr::Herdr::deliver` types the text through `agent.prompt` into
//! the pane the registered pi is in now, after every check (the pane still holds that pi, no
//! draft or dialog in pi's editor), and checks afterwards that pi took it. Its answer is mapped
//! here: a refusal sends nothing (`Refusal`), anything after the prompt is a receipt.

use std::path::Path;
use std::time::Instant;

use super::{Outcome, Receipt, Refusal, Transport, SEND_DEADLINE};
use crate::clock::Ms;
use crate::evidence::registrations::{Registration, RunState};
use crate::mux::herdr::{Delivery, Herdr};
use crate::mux::ErrorCode;
use crate::scan::ReplyTarget;

pub(super) fn send(
    key: &str,
    t: &ReplyTarget,
    reg: &Registration,
    body: &str,
    now: Ms,
) -> Result<Receipt, Refusal> {
    let no = |why: String| Refusal::NoPath(key.into(), why);
    let socket = t
        .socket
        .as_deref()
        .ok_or_else(|| no("the registration names no Herdr socket".into()))?;
    let pid = reg
        .pid
        .ok_or_else(|| no("the registration records no process".into()))?;
    let herdr = Herdr::at_socket(Path::new(socket));
    let answer = herdr.deliver(
        &t.target,
        (pid, reg.start_ticks),
        body,
        Instant::now() + SEND_DEADLINE,
    );
    let (outcome, pane, detail) = match answer {
        Ok(Delivery::NotThatPi(why)) => return Err(no(why)),
        Ok(Delivery::NotReady(why)) => return Err(Refusal::NotReady(key.into(), why)),
        Ok(Delivery::Delivered { pane, checked }) => {
            // pi takes a message submitted during a turn as a follow-up: queued, not started.
            let busy = reg
                .run_state
                .as_ref()
                .is_some_and(|r| r.state == RunState::Working);
            let outcome = if busy {
                Outcome::Queued
            } else {
                Outcome::Delivered
            };
            let detail = if checked {
                format!("typed into {pane}; pi's editor was empty before and took the text")
            } else {
                format!("typed into {pane}; no pi editor on its screen to check for a draft: not checked")
            };
            (outcome, pane, detail)
        }
        Ok(Delivery::NotConfirmed { pane }) => (
            Outcome::Unconfirmed,
            pane.clone(),
            format!("typed into {pane}, but pi's editor still shows text: not confirmed"),
        ),
        // Nothing was typed: the server could not be asked, or refused before the prompt.
        Err(e) if e.code != ErrorCode::Timeout => {
            let mut r = Receipt::new(key, t, Transport::Herdr, Outcome::Failed, now);
            r.exit_code = Some(1);
            r.stderr = e.to_string();
            return Ok(r);
        }
        // The request went out and no answer came: it may have been typed.
        Err(e) => (Outcome::Unconfirmed, t.target.clone(), e.to_string()),
    };
    let mut target = t.clone();
    target.target = pane;
    let mut r = Receipt::new(key, &target, Transport::Herdr, outcome, now);
    r.exit_code = Some(i32::from(outcome == Outcome::Failed));
    match outcome {
        Outcome::Delivered | Outcome::Queued => r.stdout = detail,
        _ => r.stderr = detail,
    }
    Ok(r)
}
