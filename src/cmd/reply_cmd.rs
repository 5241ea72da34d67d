//! `intercom-pane reply NAME (TEXT | - | -f FILE) [--json]`. Prints the receipt (one line, or JSON
//! with `--json`) once something was sent. Exit: 0 delivered or queued; 1 failed; 11 unconfirmed
//! (sent, no confirmation: do not resend); 2 usage; 3..10 refusals, nothing sent (see
//! `actions::reply::ReplyExit`).

use crate::actions::reply::{self, Refusal, ReplyExit};
use crate::cli::ReplyArgs;
use crate::cmd::text_input::{self, REPLY_TEXT};
use crate::cmd::{options, refuse};

pub(crate) fn run(args: &ReplyArgs) -> ReplyExit {
    let text = match text_input::read_text(
        REPLY_TEXT,
        args.text.as_deref(),
        args.file.as_deref(),
        std::io::stdin(),
    ) {
        Ok(t) => t,
        Err(e) => return refuse(e),
    };
    // Refuse bad text before scanning anything.
    if let Err(r) = reply::check_text(&text) {
        return refused(r);
    }
    let expect = match crate::hosts::expect::SeatExpect::flag(args.expect_seat.as_deref()) {
        Ok(e) => e,
        Err(e) => return refuse(e),
    };
    let (r, pass) = match options::resolve_and_scan(&args.src) {
        Ok(x) => x,
        Err(e) => return refuse(e),
    };
    match reply::send_expecting(
        &pass,
        &args.name,
        &text,
        r.clock.now_ms(),
        expect.as_ref(),
        crate::evidence::sessions::timeline::Sender::Reply,
    ) {
        Ok(receipt) => {
            if args.json {
                crate::cmd::out(format_args!(
                    "{}",
                    serde_json::to_string_pretty(&receipt).unwrap_or_default()
                ));
            } else {
                crate::cmd::out(format_args!("{}", receipt.summary()));
            }
            ReplyExit::from(receipt.outcome)
        }
        Err(r) => refused(r),
    }
}

fn refused(r: Refusal) -> ReplyExit {
    eprintln!("intercom-pane: {r}");
    r.exit()
}
