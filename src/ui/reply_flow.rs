//! The reply part of `App::update`: opening the box (or refusing to, with a notice that holds
//! the keyboard), editing, pasting, and Enter. Enter sends only to the seat and target the box
//! named when it opened, and only when the text passes the reply path's own text check; it then
//! closes the box, and the outcome comes back as the row's receipt.

use crate::reply_text;
use crate::snapshot::ReplyPath;
use crate::text::sanitize;
use crate::ui::app::{App, Effect, Receipt};
use crate::ui::compose::{paste_text, Draft, ReplyBox, MAX_REPLY_CHARS};
use crate::ui::fit::{clean, name_of};
use crate::ui::ports::{ReplyOutcome, ReplyRequest};

impl App {
    /// `r`: open the box on the selected seat, or put up a refusal that holds the keyboard.
    pub(super) fn open_reply(&mut self) {
        let Some(row) = self.selected_row() else {
            self.notice = Some("no reply: select a worker first".into());
            return;
        };
        match &row.reply {
            ReplyPath::Unavailable { reason } => {
                self.notice = Some(format!(
                    "no reply to {}: {}",
                    name_of(row),
                    sanitize(reason)
                ));
            }
            ReplyPath::Available { target } => {
                let b = ReplyBox {
                    row_id: row.id.clone(),
                    name: name_of(row),
                    target: target.clone(),
                    note: None,
                };
                self.drafts.entry(b.row_id.clone()).or_default();
                self.reply_box = Some(b);
            }
        }
    }

    /// Why Enter in the open box would send nothing now, the text aside: no reply path in this
    /// run, the seat gone from the board or without a reply path, or at another target than the
    /// box names. `None` when it would send (or no box is open).
    pub fn reply_blocker(&self) -> Option<String> {
        let b = self.reply_box.as_ref()?;
        if let Some(to) = self.sending.get(&b.row_id) {
            return Some(format!("still sending the previous reply to {}", clean(to)));
        }
        if let Some(reason) = self.reply_unavailable() {
            return Some(format!("reply unavailable: {}", clean(reason)));
        }
        let Some(row) = self.snapshot().and_then(|s| s.row(&b.row_id)) else {
            return Some(format!("{} is gone from the board", b.name));
        };
        match &row.reply {
            ReplyPath::Unavailable { reason } => Some(format!(
                "{} has no reply path now: {}",
                b.name,
                clean(reason)
            )),
            ReplyPath::Available { target } if *target != b.target => Some(format!(
                "{} is now at {}; Esc, then r, to reply there",
                b.name,
                clean(target)
            )),
            ReplyPath::Available { .. } => None,
        }
    }

    /// Enter in the box.
    pub(super) fn send(&mut self, fx: &mut Vec<Effect>) {
        let Some(b) = self.reply_box.clone() else {
            return;
        };
        let text = self
            .drafts
            .get(&b.row_id)
            .map(|d| d.text.clone())
            .unwrap_or_default();
        let refused = match self.reply_blocker() {
            Some(why) => Some(why),
            // The reply path's own rule, so the box refuses exactly what `reply` refuses.
            None => reply_text::check_text(&text).err().map(|r| r.to_string()),
        };
        if let Some(why) = refused {
            self.set_note(format!("not sent: {why}"));
            return;
        }
        let Some(row) = self.snapshot().and_then(|s| s.row(&b.row_id)) else {
            return;
        };
        let req = ReplyRequest {
            row_id: b.row_id.clone(),
            seen_key: row.seen_key.clone(),
            name: row.name.clone(),
            target: b.target.clone(),
            text,
            host: row.host.clone(),
            pane: row.pane.clone(),
        };
        self.sending.insert(b.row_id, b.target);
        // Closed at once: the next keys are commands again, never more text for this seat.
        self.reply_box = None;
        fx.push(Effect::SendReply(req));
    }

    pub(super) fn on_reply_finished(&mut self, row_id: String, outcome: ReplyOutcome) {
        self.sending.remove(&row_id);
        if matches!(outcome, ReplyOutcome::Delivered { outcome, .. } if outcome != "unconfirmed") {
            // Text pi has is gone from the editor; failures and unconfirmed sends keep it for a
            // deliberate decision (never an automatic resend).
            self.drafts.remove(&row_id);
        }
        let finished_at = self.now();
        self.receipts.insert(
            row_id,
            Receipt {
                outcome,
                finished_at,
            },
        );
    }

    /// Change the open box's draft, unless a reply from it is in flight.
    pub(super) fn edit(&mut self, f: impl FnOnce(&mut Draft)) {
        let Some(id) = self.reply_box.as_ref().map(|b| b.row_id.clone()) else {
            return;
        };
        if self.sending.contains_key(&id) {
            self.set_note("sending… the draft is locked until the outcome".into());
            return;
        }
        f(self.drafts.entry(id).or_default());
    }

    pub(super) fn insert_text(&mut self, s: &str) {
        let mut full = false;
        self.edit(|d| full = !d.insert(s));
        if full {
            self.set_note(format!("a reply is at most {MAX_REPLY_CHARS} characters"));
        }
    }

    pub(super) fn insert_char(&mut self, c: char) {
        if !c.is_control() {
            self.insert_text(c.encode_utf8(&mut [0u8; 4]));
        }
    }

    /// A bracketed paste: into the open box with its line breaks, never sent by itself.
    pub(super) fn on_paste(&mut self, text: &str) {
        if self.notice.is_some() {
            // The refusal keeps the keyboard; a paste does not dismiss it either.
            return;
        }
        self.message = None;
        let Some(b) = &mut self.reply_box else {
            self.message = Some("paste goes into the reply box (r)".into());
            return;
        };
        b.note = None;
        match paste_text(text) {
            Err(why) => self.set_note(why.to_string()),
            Ok(t) => {
                let mut full = false;
                self.edit(|d| full = !d.insert(&t));
                if full {
                    self.set_note(format!(
                        "paste not inserted: a reply is at most {MAX_REPLY_CHARS} characters"
                    ));
                }
            }
        }
    }

    fn set_note(&mut self, note: String) {
        if let Some(b) = &mut self.reply_box {
            b.note = Some(note);
        }
    }
}
