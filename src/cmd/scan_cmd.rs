//! `intercom-pane scan [--print] [--json]`.

use crate::cli::ScanArgs;
use crate::cmd::exit::ScanExit;
use crate::cmd::watch_cmd::Also;
use crate::cmd::{options, refuse};
use crate::snapshot::{RosterCode, RosterStatus};
use crate::views::{board_files, print};

pub(crate) fn run(args: &ScanArgs) -> ScanExit {
    if args.watch {
        let r = match options::resolve(&args.src) {
            Ok(r) => r,
            Err(e) => return refuse(e),
        };
        return match crate::cmd::watch_cmd::run(r, &args.stream, false, Also::BoardFiles) {
            Ok(()) => ScanExit::Written,
            Err(e) => refuse(e),
        };
    }
    let pass = match options::resolve_and_scan(&args.src) {
        Ok((_, pass)) => pass,
        Err(e) => return refuse(e),
    };
    for e in &pass.registration_errors {
        eprintln!("intercom-pane: registration skipped: {e}");
    }
    let written = match board_files::write_board_text(&pass) {
        Ok(w) => w,
        Err(e) => return refuse(format!("board files not written: {e}")),
    };
    if args.json {
        crate::cmd::out(format_args!("{}", written.index_text));
    }
    if args.print {
        crate::cmd::out_bytes(
            print::print_table(&pass.records, &written.board.display().to_string()).as_bytes(),
        );
        // A roster that was found or named but cannot be used would otherwise read as a board
        // with fewer seats: say so, and fail (`--json` carries it in `roster` instead).
        if let RosterStatus::Unavailable { code, reason } = &pass.snapshot.roster {
            if *code != RosterCode::NoRoot {
                eprintln!(
                    "intercom-pane: the Intercom roster cannot be used ({}): {}",
                    code.as_str(),
                    crate::text::sanitize(reason)
                );
                return ScanExit::Refused;
            }
        }
    }
    ScanExit::Written
}
