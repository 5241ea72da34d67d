use clap::Parser;

use intercom_pane::cli::{Cli, Command};
use intercom_pane::{cmd, demo};

fn main() {
    let cli = Cli::parse();
    // Each command's outcome is its own exit enum (`cmd::exit` and the actions' enums).
    let code = match &cli.command {
        Command::Scan(a) => cmd::scan_cmd::run(a).code(),
        Command::Status(a) => cmd::status_cmd::run(a).code(),
        Command::Board(a) => cmd::board_cmd::run_board(a).code(),
        Command::Wait(a) => cmd::board_cmd::run_wait(a).code(),
        Command::Tool(a) => cmd::tool_cmd::run(a).code(),
        Command::Monitor(a) => cmd::monitor_cmd::run(a).code(),
        Command::Watch(a) => cmd::alerts_cmd::watch(a).code(),
        Command::Jump(a) => cmd::jump_cmd::run(a).code(),
        Command::Register(a) => cmd::register_cmd::run(a).code(),
        Command::Reply(a) => cmd::reply_cmd::run(a).code(),
        Command::EnsureMonitor(a) => cmd::ensure_monitor_cmd::run(a).code(),
        Command::CloseWorker(a) => cmd::close_cmd::run_close(a).code(),
        Command::Handoff(a) => cmd::close_cmd::run_handoff(a).code(),
        Command::ResumeWorker(a) => cmd::resume_cmd::run(a).code(),
        Command::Init(a) => cmd::spawn_cmd::run_init(a).code(),
        Command::Spawn(a) => cmd::spawn_cmd::run_spawn(a).code(),
        Command::Retire(a) => cmd::spawn_cmd::run_retire(a).code(),
        Command::Demo(a) => demo::run(a),
        Command::Doctor(a) => cmd::doctor_cmd::run(a).code(),
        Command::Completions(a) => cmd::docs_cmd::completions(a).code(),
        Command::Man(a) => cmd::docs_cmd::man(a).code(),
        Command::DemoAgent(a) => demo::agent::run(a),
        Command::DemoWatchdog(a) => demo::watchdog::serve(a),
    };
    std::process::exit(code);
}
