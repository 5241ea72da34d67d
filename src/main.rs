use clap::Parser;

use intercom_pane::cli::{Cli, Command};
use intercom_pane::{cmd, demo};

fn main() {
    let cli = Cli::parse();
    let code = match &cli.command {
        Command::Scan(a) => cmd::scan_cmd::run(a),
        Command::Status(a) => cmd::status_cmd::run(a),
        Command::Monitor(a) => cmd::monitor_cmd::run(a),
        Command::Register(a) => cmd::register_cmd::run(a),
        Command::Reply(a) => cmd::reply_cmd::run(a),
        Command::EnsureMonitor(a) => cmd::ensure_monitor_cmd::run(a),
        Command::CloseWorker(a) => cmd::close_cmd::run_close(a),
        Command::Handoff(a) => cmd::close_cmd::run_handoff(a),
        Command::ResumeWorker(a) => cmd::resume_cmd::run(a),
        Command::Demo(a) => demo::run(a),
        Command::Doctor(a) => cmd::doctor_cmd::run(a),
        Command::Completions(a) => cmd::docs_cmd::completions(a),
        Command::Man(a) => cmd::docs_cmd::man(a),
        Command::DemoAgent(a) => demo::agent::run(a),
    };
    std::process::exit(code);
}
