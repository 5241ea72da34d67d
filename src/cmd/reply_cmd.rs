//! `intercom-pane reply NAME (TEXT | - | -f FILE) [--json]`. Prints the receipt (one line, or JSON
//! with `--json`) once something was sent. Exit: 0 delivered or queued; 1 failed; 11 unconfirmed
//! (sent, no confirmation: do not resend); 2 usage; 3..10 refusals, nothing sent (see
//! `actions::reply::Refusal::exit_code`).

use std::io::Read;

use crate::actions::reply::{self, Outcome, Refusal};
use crate::cli::ReplyArgs;
use crate::cmd::{options, refuse};
use crate::fsguard;

/// Bytes read from a file or standard input before the length check (the text itself is then
/// limited to `reply::MAX_CHARS` characters).
const INPUT_CAP: u64 = 64 * 1024;

fn read_text(args: &ReplyArgs) -> Result<String, String> {
    let bytes = match (&args.file, args.text.as_deref()) {
        (Some(path), _) => fsguard::read_capped(path, INPUT_CAP)
            .map_err(|e| format!("-f {}: cannot read ({})", path.display(), e.code()))?,
        (None, Some("-")) => {
            let mut buf = Vec::new();
            std::io::stdin()
                .take(INPUT_CAP + 1)
                .read_to_end(&mut buf)
                .map_err(|e| format!("cannot read standard input: {e}"))?;
            if buf.len() as u64 > INPUT_CAP {
                return Err(format!("standard input is over {INPUT_CAP} bytes"));
            }
            buf
        }
        (None, Some(t)) => return Ok(t.to_string()),
        (None, None) => return Err("give the text, `-` for standard input, or -f FILE".into()),
    };
    String::from_utf8(bytes).map_err(|_| "the text is not UTF-8".to_string())
}

pub fn run(args: &ReplyArgs) -> i32 {
    let text = match read_text(args) {
        Ok(t) => t,
        Err(e) => return refuse(e),
    };
    // Refuse bad text before scanning anything.
    if let Err(r) = reply::check_text(&text) {
        return refused(r);
    }
    let (r, pass) = match options::resolve_and_scan(&args.src) {
        Ok(x) => x,
        Err(e) => return refuse(e),
    };
    match reply::send(&pass, &args.name, &text, r.clock.now_ms()) {
        Ok(receipt) => {
            if args.json {
                crate::cmd::out(format_args!(
                    "{}",
                    serde_json::to_string_pretty(&receipt.to_json()).unwrap_or_default()
                ));
            } else {
                crate::cmd::out(format_args!("{}", receipt.summary()));
            }
            match receipt.outcome {
                Outcome::Delivered | Outcome::Queued => 0,
                Outcome::Failed => 1,
                Outcome::Unconfirmed => 11,
            }
        }
        Err(r) => refused(r),
    }
}

fn refused(r: Refusal) -> i32 {
    eprintln!("intercom-pane: {r}");
    r.exit_code()
}
