//! The sidebar over several machines (docs/behaviour.md §12): each action on a row of another
//! host runs there, as the same guarded command, carrying the seat the row showed
//! (`--expect-seat`); rows of this machine go to the local ports as before.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::cmd::jump_cmd::{remote_jump, RemoteJump, Seat};
use crate::hosts::delegate::{self, Delegated};
use crate::hosts::expect::SeatExpect;
use crate::hosts::Host;
use crate::snapshot::{RowHost, SeatPane};
use crate::text::sanitize;
use crate::ui::ports::{
    JumpOutcome, Navigator, ReplyOutcome, ReplyRequest, ReplySender, SeatRef, WorkerAction,
    WorkerControl, WorkerOutcome,
};

/// A reply there may take this long (its own deadlines are shorter).
const REPLY_DEADLINE: Duration = Duration::from_secs(60);
/// A close or resume there: its own deadline (120 s at most) and the scans around it.
const WORKER_DEADLINE: Duration = Duration::from_secs(240);

/// Routes each row's actions to its machine.
pub struct HostPorts {
    /// The other machines on the board now (they change with the hosts file).
    pub hosts: crate::hosts::fleet::HostList,
    pub reply: Arc<dyn ReplySender>,
    pub navigator: Arc<dyn Navigator>,
    pub workers: Arc<dyn WorkerControl>,
    /// The sidebar's own pane (where a window attached to another host opens).
    pub own: Option<crate::mux::Owner>,
}

impl HostPorts {
    fn host(&self, h: &RowHost) -> Result<Host, NotOnBoard> {
        self.hosts
            .find(&h.name)
            .ok_or_else(|| NotOnBoard(sanitize(&h.name)))
    }
}

/// A row's host that this board no longer follows (its name, sanitized).
#[derive(Debug)]
struct NotOnBoard(String);

impl std::fmt::Display for NotOnBoard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "host {} is not on this board", self.0)
    }
}

/// The seat identity the row showed, as the host's command compares it.
fn token(h: &RowHost, pane: Option<&SeatPane>) -> String {
    let pi = pane.and_then(|p| p.pi.as_ref());
    SeatExpect {
        session_id: h.session_id.clone(),
        pid: pi.map(|p| p.0),
        start_ticks: pi.map(|p| p.1),
        boot_id: pi.map(|p| p.2.clone()),
        pane: pane.map(|p| p.pane_id.clone()),
    }
    .token()
}

/// Not answering now: nothing is sent to a host whose rows are only its last known ones.
fn stale(h: &RowHost) -> Option<String> {
    (!h.answering).then(|| {
        format!(
            "host {} is not answering: its rows are its last known ones; nothing was sent",
            sanitize(&h.name)
        )
    })
}

fn stderr_text(stderr: &str) -> String {
    stderr
        .lines()
        .take(5)
        .map(sanitize)
        .collect::<Vec<_>>()
        .join("; ")
}

impl ReplySender for HostPorts {
    fn unavailable_reason(&self) -> Option<String> {
        self.reply.unavailable_reason()
    }

    fn send(&self, req: &ReplyRequest) -> ReplyOutcome {
        let Some(h) = &req.host else {
            return self.reply.send(req);
        };
        let refused = |reason: String| ReplyOutcome::Refused { reason };
        if let Some(why) = stale(h) {
            return refused(why);
        }
        let host = &match self.host(h) {
            Ok(x) => x,
            Err(why) => return refused(why.to_string()),
        };
        let flags = vec![
            "--json".to_string(),
            "--expect-seat".into(),
            token(h, req.pane.as_ref()),
        ];
        let words = delegate::words(host, "reply", &flags, &[h.key.clone(), "-".into()]);
        match delegate::run(host, &words, Some(req.text.as_bytes()), REPLY_DEADLINE) {
            Delegated::Ran {
                code,
                stdout,
                stderr,
            } => {
                let receipt: Value = serde_json::from_slice(&stdout).unwrap_or(Value::Null);
                let s = |k: &str| receipt.get(k).and_then(Value::as_str).unwrap_or("");
                let at = crate::clock::parse_iso(s("sentAt")).unwrap_or_default();
                let target = format!("{} on {}", s("target"), h.name);
                match (code, s("outcome")) {
                    (0, "delivered") => ReplyOutcome::Delivered {
                        at,
                        target,
                        outcome: "delivered",
                    },
                    (0, _) => ReplyOutcome::Delivered {
                        at,
                        target,
                        outcome: "queued",
                    },
                    (11, _) => ReplyOutcome::Delivered {
                        at,
                        target,
                        outcome: "unconfirmed",
                    },
                    (1, _) => ReplyOutcome::Failed {
                        exit: Some(1),
                        signal: None,
                        stderr: sanitize(s("stderr")),
                    },
                    (code, _) => refused(format!(
                        "host {} refused (exit {code}): {}",
                        h.name,
                        stderr_text(&stderr)
                    )),
                }
            }
            Delegated::NotStarted(why) => {
                refused(format!("host {}: not sent: {}", h.name, sanitize(&why)))
            }
            // It may have arrived: never "sent", never resent.
            Delegated::Unknown(why) => ReplyOutcome::Delivered {
                at: 0,
                target: format!(
                    "{} (host {} stopped answering: {})",
                    h.key,
                    h.name,
                    sanitize(&why)
                ),
                outcome: "unconfirmed",
            },
        }
    }
}

impl Navigator for HostPorts {
    fn jump(&self, seat: &SeatRef) -> JumpOutcome {
        let Some(h) = &seat.host else {
            return self.navigator.jump(seat);
        };
        let refused = |reason: String| JumpOutcome::Refused { reason };
        if let Some(why) = stale(h) {
            return refused(why);
        }
        let host = &match self.host(h) {
            Ok(x) => x,
            Err(why) => return refused(why.to_string()),
        };
        let t = token(h, seat.pane.as_ref());
        match remote_jump(
            host,
            &Seat::Name(h.key.clone()),
            Some(&t),
            self.own.as_ref(),
        ) {
            Ok(RemoteJump::Window { what, .. }) => JumpOutcome::Moved { pane: what },
            Ok(RemoteJump::Printed(line)) => refused(format!("not in a tmux pane; run: {line}")),
            Err((_, why)) => refused(why),
        }
    }

    fn keep_height(&self, lines: u16) -> bool {
        self.navigator.keep_height(lines)
    }
}

impl WorkerControl for HostPorts {
    fn unavailable_reason(&self) -> Option<String> {
        self.workers.unavailable_reason()
    }

    fn run(&self, action: WorkerAction, seat: &SeatRef, stage: &dyn Fn(&str)) -> WorkerOutcome {
        let Some(h) = &seat.host else {
            return self.workers.run(action, seat, stage);
        };
        let refused = |detail: String| WorkerOutcome {
            ok: false,
            result: "refused".into(),
            detail,
        };
        if let Some(why) = stale(h) {
            return refused(why);
        }
        let host = &match self.host(h) {
            Ok(x) => x,
            Err(why) => return refused(why.to_string()),
        };
        let mut flags = vec!["--json".to_string()];
        let command = action.command();
        match action {
            WorkerAction::Close => {}
            WorkerAction::Resume => flags.push("--confirm-closed".into()),
            WorkerAction::Spawn => {
                return refused("a spawn runs through the sidebar's spawner".into())
            }
            WorkerAction::RaiseBudget => {
                return refused(format!(
                    "a budget on host {}: run intercom-pane budget there",
                    sanitize(&h.name)
                ))
            }
        }
        // A closed seat has no pi to compare: only its session.
        let pane = (action == WorkerAction::Close)
            .then_some(seat.pane.as_ref())
            .flatten();
        flags.extend(["--expect-seat".into(), token(h, pane)]);
        let words = delegate::words(host, command, &flags, std::slice::from_ref(&seat.name));
        stage(&format!("running {command} on host {}", h.name));
        match delegate::run(host, &words, None, WORKER_DEADLINE) {
            Delegated::Ran {
                code,
                stdout,
                stderr,
            } => {
                let r: Value = serde_json::from_slice(&stdout).unwrap_or(Value::Null);
                let text = |k: &str| r.get(k).and_then(Value::as_str).map(sanitize);
                let result = match (action, code) {
                    (_, 0) => text("state")
                        .or_else(|| text("result"))
                        .unwrap_or_else(|| "done".into()),
                    (_, 2 | 6 | 14) => "refused".into(),
                    (_, 5) => "fenced".into(),
                    (WorkerAction::Close, _) => {
                        text("state").unwrap_or_else(|| "not closed".into())
                    }
                    (_, _) => text("result").unwrap_or_else(|| "failed".into()),
                };
                let detail = text("refused")
                    .or_else(|| text("reason"))
                    .or_else(|| text("message"))
                    .or_else(|| text("note"))
                    .unwrap_or_else(|| stderr_text(&stderr));
                WorkerOutcome {
                    ok: code == 0,
                    result,
                    detail: format!("on host {}: {detail}", h.name),
                }
            }
            Delegated::NotStarted(why) => {
                refused(format!("host {}: not done: {}", h.name, sanitize(&why)))
            }
            Delegated::Unknown(why) => WorkerOutcome {
                ok: false,
                result: "unknown".into(),
                detail: format!(
                    "host {} stopped answering: the outcome of {command} is unknown ({})",
                    h.name,
                    sanitize(&why)
                ),
            },
        }
    }
}
