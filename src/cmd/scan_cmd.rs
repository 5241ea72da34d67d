//! `intercom-pane scan [--print] [--json]`.

use crate::cli::ScanArgs;
use crate::cmd::{options, refuse};
use crate::views::{board_files, json, print};

pub fn run(args: &ScanArgs) -> i32 {
    let pass = match options::resolve_and_scan(&args.src) {
        Ok((_, pass)) => pass,
        Err(e) => return refuse(e),
    };
    for e in &pass.registration_errors {
        eprintln!("intercom-pane: registration skipped: {e}");
    }
    let board = match board_files::write_board(&pass) {
        Ok(b) => b,
        Err(e) => return refuse(format!("board files not written: {e}")),
    };
    if args.json {
        println!(
            "{}",
            json::to_string_pretty(&board_files::index_json(&pass)).unwrap_or_default()
        );
    }
    if args.print {
        print!(
            "{}",
            print::print_table(&pass.records, &board.display().to_string())
        );
    }
    0
}
