//! A reply typed into a pi through Herdr's `agent.prompt`, with the checks `agent-send.sh` makes
//! on tmux: the pane is the one the registered pi is in now (followed when it moved: a pane moved
//! to another workspace has a new id), pi's editor holds no draft and shows no dialog (typed text
//! would be merged into a draft and submitted with it), then the prompt, then pi's editor must be
//! empty again (it took the text). What cannot be checked is said, never claimed.

use std::time::{Duration, Instant};

use super::wire::{expect_type, field};
use super::Herdr;
use crate::mux::pi_channel::Outcome;
use crate::mux::pi_editor::{self, Editor};
use crate::mux::{ErrorCode, MuxError, PiText, Typed, Untyped};

/// How long pi may take to empty its editor after the prompt.
const TAKEN_WAIT: Duration = Duration::from_secs(2);
const TAKEN_POLL: Duration = Duration::from_millis(100);
/// Cap on the screen text read (a visible screen is a few KiB).
const SCREEN_CAP: usize = 256 * 1024;

/// What a checked prompt did.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Delivery {
    /// Typed and submitted; `checked`: pi's editor was seen empty before and after.
    Delivered { pane: String, checked: bool },
    /// Nothing typed: no pane of this server holds the pi (gone, or another incarnation).
    NotThatPi(String),
    /// Nothing typed: pi's editor holds a draft or shows a dialog, or could not be read.
    NotReady(String),
    /// Typed, but pi's editor still shows text afterwards: it may not have been submitted.
    NotConfirmed { pane: String },
}

#[derive(serde::Deserialize)]
struct Read {
    text: String,
}

impl Herdr {
    /// The visible screen of a pane (`pane.read` visible), at most `SCREEN_CAP` bytes.
    pub fn screen(&self, pane_id: &str, deadline: Instant) -> Result<String, MuxError> {
        let r = self.call(
            "pane.read",
            super::params::Read {
                pane_id,
                source: "visible",
                format: "text",
            },
            deadline,
        )?;
        expect_type(&r, "pane_read")?;
        let read: Read = field(&r, "read")?;
        let mut text = read.text;
        if text.len() > SCREEN_CAP {
            let mut cut = SCREEN_CAP;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
        }
        Ok(text)
    }

    /// pi's editor on the pane's screen; the screen's width is its widest line (Herdr does not
    /// say a pane's terminal size: `pi_editor::widest`).
    fn editor(&self, pane_id: &str, deadline: Instant) -> Result<Editor, MuxError> {
        let text = self.screen(pane_id, deadline)?;
        Ok(pi_editor::read(&text, pi_editor::widest(&text)))
    }

    /// `Multiplexer::deliver` on Herdr: `prompt_pi`, its answer as the receipt's fields.
    pub(super) fn deliver_prompt(
        &self,
        req: &PiText<'_>,
        deadline: Instant,
    ) -> Result<Typed, Untyped> {
        let (pid, ticks) = req
            .pi
            .ok_or_else(|| Untyped::NoPath("the registration records no process".into()))?;
        let typed = |outcome, pane: String, detail: String| {
            let ok = outcome != Outcome::Failed;
            Typed {
                outcome,
                pane,
                exit_code: Some(i32::from(!ok)),
                signal: None,
                stdout: if outcome == Outcome::Delivered {
                    detail.clone()
                } else {
                    String::new()
                },
                stderr: if outcome == Outcome::Delivered {
                    String::new()
                } else {
                    detail
                },
            }
        };
        match self.prompt_pi(req.pane, (pid, ticks), req.text, deadline) {
            Ok(Delivery::NotThatPi(why)) => Err(Untyped::NoPath(why)),
            Ok(Delivery::NotReady(why)) => Err(Untyped::Busy(why)),
            Ok(Delivery::Delivered { pane, checked }) => {
                let detail = if checked {
                    format!("typed into {pane}; pi's editor was empty before and took the text")
                } else {
                    format!("typed into {pane}; no pi editor on its screen to check for a draft: not checked")
                };
                Ok(typed(Outcome::Delivered, pane, detail))
            }
            Ok(Delivery::NotConfirmed { pane }) => {
                let detail =
                    format!("typed into {pane}, but pi's editor still shows text: not confirmed");
                Ok(typed(Outcome::Unconfirmed, pane, detail))
            }
            // Nothing was typed: the server could not be asked, or refused before the prompt.
            Err(e) if e.code != ErrorCode::Timeout => {
                Ok(typed(Outcome::Failed, req.pane.to_string(), e.to_string()))
            }
            // The request went out and no answer came: it may have been typed.
            Err(e) => Ok(typed(
                Outcome::Unconfirmed,
                req.pane.to_string(),
                e.to_string(),
            )),
        }
    }

    /// Type `text` to the pi `pi` (pid, start ticks) last registered in `recorded`, after the
    /// checks in the module comment. `Err` only when the server could not be asked before
    /// anything was typed, or the prompt itself failed (`Timeout`: it may have been typed).
    fn prompt_pi(
        &self,
        recorded: &str,
        pi: (i32, Option<u64>),
        text: &str,
        deadline: Instant,
    ) -> Result<Delivery, MuxError> {
        crate::mux::server_is_ours(&self.socket, None)?;
        let (pid, ticks) = pi;
        let same_process = crate::proc::identity(pid).is_some_and(|id| {
            ticks.is_none_or(|t| t == id.start_ticks) && crate::proc::is_alive(&id)
        });
        if !same_process {
            return Ok(Delivery::NotThatPi(format!("pi {pid} is gone")));
        }
        let Some(owner) = crate::mux::follow_pane(self, Some(recorded), pid, deadline)? else {
            return Ok(Delivery::NotThatPi(format!(
                "no pane of this Herdr server holds pi {pid}"
            )));
        };
        let pane = owner.pane.id;
        let before = self.editor(&pane, deadline)?;
        match before {
            Editor::Empty | Editor::None => {}
            Editor::Draft => {
                return Ok(Delivery::NotReady(format!(
                    "pi's editor in pane {pane} holds an unsent draft (or shows a dialog)"
                )))
            }
            Editor::Unknown => {
                return Ok(Delivery::NotReady(format!(
                    "pi's editor in pane {pane} could not be read"
                )))
            }
        }
        match self.agent_prompt(&pane, text, deadline) {
            Ok(()) => {}
            Err(e) if e.code == ErrorCode::AgentBlocked => {
                return Ok(Delivery::NotReady(format!(
                    "pi in pane {pane} shows a dialog (Herdr: agent blocked)"
                )))
            }
            Err(e) => return Err(e),
        }
        if before == Editor::None {
            return Ok(Delivery::Delivered {
                pane,
                checked: false,
            });
        }
        let until = Instant::now() + TAKEN_WAIT;
        // Bounded by TAKEN_WAIT: one screen read per poll.
        loop {
            if matches!(self.editor(&pane, deadline), Ok(Editor::Empty)) {
                return Ok(Delivery::Delivered {
                    pane,
                    checked: true,
                });
            }
            if Instant::now() >= until || Instant::now() >= deadline {
                return Ok(Delivery::NotConfirmed { pane });
            }
            std::thread::sleep(TAKEN_POLL);
        }
    }
}
