//! intercom-pane: one bounded scan of a pi/Intercom fleet, several read-only views, and a few
//! explicit, verified mutations. See docs/architecture.md for the flow.
//!
//! The library exists for the binary and for the tests: it exposes `main_entry` (all of
//! `src/main.rs`) and `seam`, the items tests, benches, examples and fuzz targets outside the
//! crate reach. Every module is private, so the dead-code lint sees the whole crate.

#![warn(unreachable_pub)]

mod actions;
mod alerts;
mod board;
mod budget;
mod cli;
mod cli_help;
mod clock;
mod cmd;
mod demo;
mod doctor;
mod evidence;
mod exit_code;
mod fsguard;
mod git;
mod hosts;
mod live;
mod liveness;
mod log;
mod mux;
mod names;
mod owned;
mod paths;
mod probe;
mod proc;
mod reply_text;
mod review;
mod scan;
#[doc(hidden)]
pub mod seam;
mod signals;
mod snapshot;
mod states;
mod store;
mod text;
mod tools;
mod ui;
mod views;

use clap::{CommandFactory, FromArgMatches};

use cli::{Cli, Command};

/// The binary's one entry (`src/main.rs`): parse the command line, run the command, and give
/// back the process exit code.
pub fn main_entry() -> i32 {
    let mut command = Cli::command();
    let matches = command.get_matches_mut();
    // The command tree lives as long as the process: freeing its hundreds of parts cost a
    // one-shot command a quarter of what building them did.
    std::mem::forget(command);
    let mut cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    // `HOST:NAME`, as the board shows another host's row, names that host's seat.
    cmd::host_cmd::qualify(&mut cli.command);
    // The store names nothing above it: it tells the log of a `.gitignore` it cannot keep.
    store::on_ignore_problem(log::gitignore_problem);
    // An action whose --host names another machine runs there (its exit code comes back).
    if let Some(code) = cmd::host_cmd::elsewhere(&cli.command, &matches) {
        hosts::ssh::end_masters();
        return code;
    }
    // Each command's outcome is its own exit enum (`cmd::exit` and the actions' enums).
    let code = match &cli.command {
        Command::Scan(a) => cmd::scan_cmd::run(a).code(),
        Command::Status(a) => cmd::status_cmd::run(a).code(),
        Command::Board(a) => cmd::board_cmd::run_board(a).code(),
        Command::Wait(a) => cmd::board_cmd::run_wait(a).code(),
        Command::Tool(a) => cmd::tool_cmd::run(a).code(),
        Command::Monitor(a) => cmd::monitor_cmd::run(a).code(),
        Command::Watch(a) => cmd::alerts_cmd::watch(a).code(),
        Command::Jump(a) => cmd::jump_cmd::run(a),
        Command::Register(a) => cmd::register_cmd::run(a).code(),
        Command::Reply(a) => cmd::reply_cmd::run(a).code(),
        Command::EnsureMonitor(a) => cmd::ensure_monitor_cmd::run(a).code(),
        Command::CloseWorker(a) => cmd::close_cmd::run_close(a).code(),
        Command::Handoff(a) => cmd::close_cmd::run_handoff(a).code(),
        Command::ResumeWorker(a) => cmd::resume_cmd::run(a).code(),
        Command::Restore(a) => cmd::restore_cmd::run(a).code(),
        Command::Init(a) => cmd::spawn_cmd::run_init(a).code(),
        Command::Spawn(a) => cmd::spawn_cmd::run_spawn(a).code(),
        Command::Retire(a) => cmd::spawn_cmd::run_retire(a).code(),
        Command::Budget(a) => cmd::budget_cmd::run(a).code(),
        Command::Review(a) => cmd::review_cmd::run_review(a).code(),
        Command::Land(a) => cmd::review_cmd::run_land(a).code(),
        Command::Demo(a) => demo::run(a),
        Command::Explain(a) => cmd::explain_cmd::run(a).code(),
        Command::Log(a) => cmd::log_cmd::run(a).code(),
        Command::Doctor(a) => cmd::doctor_cmd::run(a).code(),
        Command::Completions(a) => cmd::docs_cmd::completions(a).code(),
        Command::Man(a) => cmd::docs_cmd::man(a).code(),
        Command::Hello(a) => cmd::host_cmd::hello(a),
        Command::Seen(a) => cmd::host_cmd::seen(a),
        Command::DemoAgent(a) => demo::agent::run(a),
        Command::DemoWatchdog(a) => demo::watchdog::serve(a),
        Command::Names(a) => cmd::docs_cmd::names(a).code(),
        Command::CommandsMd(a) => cmd::commands_md::run(a).code(),
    };
    // Nothing of this command stays connected to another host.
    hosts::ssh::end_masters();
    code
}
