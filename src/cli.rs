//! Every flag and its help text.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Parser, Debug)]
#[command(
    name = "intercom-pane",
    version,
    about = "Truthful status and safe pane control for several pi coding agents in tmux or Herdr",
    after_help = "Start with `intercom-pane demo`; set up with the README's \"Setup\"; check with `intercom-pane doctor`.\n`intercom-pane help COMMAND` shows a command's options, examples and exit codes."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// The whole command tree, every command's options in it. A parse builds only the command that
/// runs (`Command`'s `defer`); what reads the definitions themselves — forwarding to a host, the
/// docs, completions, man pages — reads this.
pub(crate) fn full_command() -> clap::Command {
    let mut c = <Cli as clap::CommandFactory>::command();
    c.build();
    c
}

#[derive(Subcommand, Debug)]
// Each command's options are built only when that command runs (or its help is shown): building
// every command's was a one-shot command's largest cost after its reads.
#[command(defer = true)]
pub enum Command {
    // For people first, in the order they meet them; then what pi and scripts run.
    /// Try it: simulated workers in a private tmux server, shown in the sidebar.
    #[command(after_help = crate::cli_help::DEMO)]
    Demo(DemoArgs),
    /// Check the setup, one line per part, each problem with its fix.
    #[command(after_help = crate::cli_help::DOCTOR)]
    Doctor(DoctorArgs),
    /// The sidebar: every seat's state, live.
    #[command(after_help = crate::cli_help::MONITOR)]
    Monitor(MonitorArgs),
    /// The configured workers, as a list (or JSON with --json).
    #[command(after_help = crate::cli_help::STATUS)]
    Status(StatusArgs),
    /// Why a seat shows its state: each source's evidence, its age, and the rule.
    #[command(after_help = crate::cli_help::EXPLAIN)]
    Explain(ExplainArgs),
    /// What a worker did: its turns, tool calls, questions and answers (newest last).
    #[command(after_help = crate::cli_help::LOG)]
    Log(LogArgs),
    /// Send one text to one seat's pi.
    #[command(after_help = crate::cli_help::REPLY)]
    Reply(ReplyArgs),
    /// Close one worker after its public handoff is saved and its turn settled.
    #[command(after_help = crate::cli_help::CLOSE_WORKER)]
    CloseWorker(CloseWorkerArgs),
    /// Bring a closed worker back on its saved session (never twice).
    #[command(after_help = crate::cli_help::RESUME_WORKER)]
    ResumeWorker(ResumeWorkerArgs),
    /// Bring the roster's agents back after tmux or the machine restarted.
    #[command(after_help = crate::cli_help::RESTORE)]
    Restore(RestoreArgs),
    /// Start a roster here, with its coordinator.
    #[command(after_help = crate::cli_help::INIT)]
    Init(InitArgs),
    /// Add a worker and start its pi beside the coordinator.
    #[command(after_help = crate::cli_help::SPAWN)]
    Spawn(SpawnArgs),
    /// Remove a closed worker from the roster.
    #[command(after_help = crate::cli_help::RETIRE)]
    Retire(RetireArgs),
    /// A worker's budget: show it, raise it, set it or turn it off (its extension holds the
    /// next prompt while it is reached).
    #[command(after_help = crate::cli_help::BUDGET)]
    Budget(BudgetArgs),
    /// What a worker changed: commits, files, merge check, overlap with other workers (read-only).
    #[command(after_help = crate::cli_help::REVIEW)]
    Review(ReviewArgs),
    /// Merge settled workers' branches into the main checkout's branch, one at a time.
    #[command(after_help = crate::cli_help::LAND)]
    Land(LandArgs),
    /// One scan pass: write the board files (and print them).
    #[command(after_help = crate::cli_help::SCAN)]
    Scan(ScanArgs),
    /// The board's seats as JSON, a page at a time (read-only).
    #[command(after_help = crate::cli_help::BOARD)]
    Board(BoardArgs),
    /// Wait until a seat shows one of the given states (read-only).
    #[command(after_help = crate::cli_help::WAIT)]
    Wait(WaitArgs),
    /// Alerts without a sidebar, until SIGTERM, SIGHUP or SIGINT.
    #[command(after_help = crate::cli_help::WATCH)]
    Watch(WatchArgs),
    /// Go to the pane of the seat that alerted (the tmux plugin's key).
    #[command(after_help = crate::cli_help::JUMP)]
    Jump(JumpArgs),
    /// Run by the pi extension: record this pi's seat from the inside.
    #[command(after_help = crate::cli_help::REGISTER)]
    Register(RegisterArgs),
    /// Run by the pi extension: place (or keep) the sidebar above the coordinator.
    #[command(after_help = crate::cli_help::ENSURE_MONITOR)]
    EnsureMonitor(EnsureMonitorArgs),
    /// Run by a worker when asked: save its public handoff for a close job.
    #[command(after_help = crate::cli_help::HANDOFF)]
    Handoff(HandoffArgs),
    /// Run by the pi extension: one of the coordinator's pi tools.
    #[command(after_help = crate::cli_help::TOOL)]
    Tool(ToolArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    #[command(after_help = crate::cli_help::COMPLETIONS)]
    Completions(CompletionsArgs),
    /// Print the man page, or write one page per command into a folder.
    #[command(after_help = crate::cli_help::MAN)]
    Man(ManArgs),
    /// Mark a seat seen (the sidebar's `s`), or unmark it.
    #[command(after_help = crate::cli_help::SEEN)]
    Seen(SeenArgs),
    /// Run by a board on another machine (over ssh): who this program is, as one JSON line.
    #[command(after_help = crate::cli_help::HELLO)]
    Hello(HelloArgs),
    /// A simulated pi agent (used by the demo and the tests).
    #[command(hide = true)]
    DemoAgent(DemoAgentArgs),
    /// The demo's watchdog: starts its tmux server and removes everything once the demo ends.
    #[command(hide = true)]
    DemoWatchdog(DemoWatchdogArgs),
    /// The roster's agent names, one per line (run by the shell completions).
    #[command(hide = true)]
    Names(NamesArgs),
    /// The per-command part of docs/commands.md, from these definitions (`--write` splices it in).
    #[command(hide = true)]
    CommandsMd(CommandsMdArgs),
}

#[derive(Args, Debug)]
pub struct CommandsMdArgs {
    /// Replace the generated part of this file (between its markers) instead of printing it.
    #[arg(long, value_name = "FILE")]
    pub write: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct NamesArgs {
    /// The roster's root (default: found upward from the current folder).
    #[arg(long, value_name = "DIR")]
    pub root: Option<std::path::PathBuf>,
}

/// The heading of the flags every scanning command shares (`SourceArgs`).
pub const SHARED_HEADING: &str =
    "Where to look (every command that reads the board; defaults suit the setup)";

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum LivenessArg {
    Tmux,
    AssumeAlive,
}

// Where the evidence is: shared by every command that scans. Listed after each command's own
// options, under a heading of their own. (No doc comment: it would become the about of every
// command that flattens it, as those are built late.)
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = SHARED_HEADING)]
pub struct SourceArgs {
    /// A system config file (JSON): where the board is kept (`dataRoot`) and more session
    /// folders (`sessionDirs`). Default: none; the board goes under $XDG_STATE_HOME/intercom-pane.
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// The roster's folder (the one holding .pi-intercom/config.json). Default: the nearest one
    /// at or above this folder.
    #[arg(long, value_name = "PATH")]
    pub root: Option<PathBuf>,
    /// A checkout whose agents keep pi sessions in .pi/state/<agent>/sessions. Default: this
    /// folder.
    #[arg(long, value_name = "PATH")]
    pub repo: Option<PathBuf>,
    /// A fleet's agents folder (<agent>/.pi/agent/sessions each), or `none`. Default:
    /// ~/.mosaic/fleet/agents.
    #[arg(long, value_name = "PATH|none")]
    pub fleet: Option<String>,
    /// One more folder of pi session files (repeatable); pi's own folders are always searched
    /// (docs/behaviour.md §1).
    #[arg(long = "sessions-dir", value_name = "DIR")]
    pub sessions_dirs: Vec<PathBuf>,
    /// The tmux server to ask. Default: the one this runs in, else tmux's default server.
    #[arg(long = "tmux-socket", value_name = "PATH")]
    pub tmux_socket: Option<PathBuf>,
    /// tmux: a seat is alive while its pane runs its pi; assume-alive: every seat is (tests,
    /// copied boards).
    #[arg(long, value_enum, default_value = "tmux")]
    pub liveness: LivenessArg,
    /// Pretend the time is this ISO 8601 instant (reproducible output).
    #[arg(long, hide = true, value_name = "ISO")]
    pub now: Option<String>,
    /// The machine: `local`, a name from the hosts file, or `NAME=DEST` (an ssh destination);
    /// repeatable for the board, once for an action. The command then runs there, through
    /// ssh, with that host's flags from the hosts file (docs/behaviour.md §12).
    #[arg(long = "host", value_name = "NAME|NAME=DEST")]
    pub hosts: Vec<String>,
}

#[derive(Args, Debug)]
pub struct ScanArgs {
    /// Also print one line per seat.
    #[arg(long)]
    pub print: bool,
    /// Print the index object (the same as `board/index.json`).
    #[arg(long)]
    pub json: bool,
    /// Keep watching: write the board files again whenever a seat changes, until SIGTERM,
    /// SIGHUP, SIGINT (exit 0). With `--json-lines`, stream the board on standard output.
    /// Not with `--print`, `--json`.
    #[arg(long, conflicts_with_all = ["print", "json"])]
    pub watch: bool,
    #[command(flatten)]
    pub stream: StreamArgs,
    // Last: the shared flags come after the command's own in --help.
    #[command(flatten)]
    pub src: SourceArgs,
}

// The `--watch` stream's flags (docs/interop.md §10). (Flattened: no doc comment, see
// `SourceArgs`.)
#[derive(Args, Debug, Clone)]
pub struct StreamArgs {
    /// With `--watch`: one JSON object per line (the whole board, then one line per changed
    /// seat, schema version 1); the stream ends with exit 0 when its reader goes away.
    #[arg(long, requires = "watch")]
    pub json_lines: bool,
    /// With `--watch`: a heartbeat line this often (seconds).
    #[arg(long, value_name = "SECS", requires = "watch", default_value_t = 15,
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub heartbeat_secs: u64,
    #[command(flatten)]
    pub live: LiveArgs,
}

// How a live view watches. (Flattened: no doc comment, see `SourceArgs`.)
#[derive(Args, Debug, Clone)]
pub struct LiveArgs {
    /// A full pass this often (seconds) whatever the events said; every 3 s while folders
    /// cannot all be watched.
    #[arg(long, value_name = "SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub full_pass_secs: u64,
}

#[derive(Args, Debug)]
pub struct StatusArgs {
    /// Print the page as JSON (the shape of Intercom's `intercom_worker_status`) instead of a list.
    #[arg(long)]
    pub json: bool,
    /// Only the worker with this configured name (case-insensitive).
    #[arg(long)]
    pub name: Option<String>,
    /// First worker of the page.
    #[arg(long, default_value_t = 0)]
    pub offset: usize,
    /// Workers per page, 1..20.
    #[arg(long, default_value_t = 10,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=crate::views::status_json::MAX_LIMIT as u64))]
    pub limit: usize,
    /// Check the connections of this page's workers (loopback health probes); with `--watch`,
    /// of every worker, every 15 s.
    #[arg(long)]
    pub probe: bool,
    /// Keep watching and stream the board as JSON lines (`--json-lines` says so explicitly;
    /// it is the only format) until the reader goes away or SIGTERM, SIGHUP, SIGINT (exit 0).
    /// Not with `--name`, `--offset`, `--limit`.
    #[arg(long, conflicts_with_all = ["name", "offset", "limit"])]
    pub watch: bool,
    #[command(flatten)]
    pub stream: StreamArgs,
    // Last: the shared flags come after the command's own in --help.
    #[command(flatten)]
    pub src: SourceArgs,
}

#[derive(Args, Debug)]
pub struct ExplainArgs {
    /// The seat: `<project>/<agent>`, or an agent name (case-insensitive) only one seat has.
    pub name: String,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// Check the seat's connection first (a loopback health probe of its configured port).
    #[arg(long)]
    pub probe: bool,
    // Last: the shared flags come after the command's own in --help.
    #[command(flatten)]
    pub src: SourceArgs,
}

#[derive(Args, Debug)]
pub struct LogArgs {
    /// The seat: `<project>/<agent>`, or an agent name (case-insensitive) only one seat has.
    pub name: String,
    /// Only what happened since then: a duration back from now (`45s`, `30m`, `2h`, `1d`) or an
    /// ISO time. Default: everything the read budget reaches.
    #[arg(long, value_name = "DURATION|ISO")]
    pub since: Option<String>,
    /// Print JSON (with `--follow`: one entry per line).
    #[arg(long)]
    pub json: bool,
    /// Keep printing entries as pi writes them, until SIGTERM, SIGHUP or SIGINT.
    #[arg(long)]
    pub follow: bool,
    // Last: the shared flags come after the command's own in --help.
    #[command(flatten)]
    pub src: SourceArgs,
}

#[derive(Args, Debug)]
pub struct BoardArgs {
    /// Only seats that need attention: waiting or error (or waiting on you), not marked seen.
    #[arg(long)]
    pub attention: bool,
    /// Only the seat with this name (case-insensitive).
    #[arg(long)]
    pub name: Option<String>,
    /// Skip this many seats (the previous page's `nextOffset`).
    #[arg(long, default_value_t = 0)]
    pub offset: usize,
    /// Seats per page, 1..20.
    #[arg(long, default_value_t = 10)]
    pub limit: usize,
    // Last: the shared flags come after the command's own in --help.
    #[command(flatten)]
    pub src: SourceArgs,
}

#[derive(Args, Debug)]
pub struct WaitArgs {
    /// The seat's name (case-insensitive), or `<project>/<agent>`.
    pub name: String,
    /// The states to wait for (repeat or separate with commas): working, waiting, error,
    /// offline, idle, unknown.
    #[arg(
        long = "state",
        value_delimiter = ',',
        required = true,
        value_name = "STATE"
    )]
    pub states: Vec<String>,
    /// Give up after this many seconds, 1..300.
    #[arg(long, value_name = "SECS", default_value_t = 60,
          value_parser = clap::value_parser!(u64).range(1..=crate::tools::MAX_WAIT_SECS))]
    pub timeout_secs: u64,
    // Last: the shared flags come after the command's own in --help.
    #[command(flatten)]
    pub src: SourceArgs,
}

#[derive(Args, Debug)]
pub struct ToolArgs {
    /// `check`, or a tool: intercom_board, intercom_reply, intercom_close_worker,
    /// intercom_resume_worker, intercom_spawn_worker, intercom_wait, intercom_review, intercom_log.
    #[arg(value_name = "TOOL")]
    pub tool: String,
    /// The pi that runs this command (the coordinator's; verified like `register` verifies).
    #[arg(long, value_name = "PID")]
    pub pi_pid: i32,
    /// The tool's arguments, one JSON object (checked against its schema again).
    #[arg(long, default_value = "{}", value_name = "JSON")]
    pub args: String,
    // Last: the shared flags come after the command's own in --help.
    #[command(flatten)]
    pub src: SourceArgs,
}

#[derive(Args, Debug)]
pub struct MonitorArgs {
    /// Do not run loopback health checks (the Connection column stays `unknown`).
    #[arg(long)]
    pub no_probe: bool,
    #[command(flatten)]
    pub live: LiveArgs,
    #[command(flatten)]
    pub alerts: AlertArgs,
    // Last: the shared flags come after the command's own in --help.
    #[command(flatten)]
    pub src: SourceArgs,
}

// `watch`: the alerts without a sidebar. (No doc comment on a command's options: with the
// commands built late, it would replace the command's own about.)
#[derive(Args, Debug)]
pub struct WatchArgs {
    #[command(flatten)]
    pub alerts: AlertArgs,
    #[command(flatten)]
    pub live: LiveArgs,
    // Last: the shared flags come after the command's own in --help.
    #[command(flatten)]
    pub src: SourceArgs,
}

// `jump`. (No doc comment: see `WatchArgs`.)
#[derive(Args, Debug)]
pub struct JumpArgs {
    /// The seat: `<project>/<agent>`, or an agent name only one seat has (case-insensitive).
    #[arg(conflicts_with_all = ["last", "session_id", "back"])]
    pub name: Option<String>,
    /// The seat that alerted last (and only while its pane still runs the pi it alerted from).
    #[arg(
        long,
        conflicts_with_all = ["session_id", "back"],
        required_unless_present_any = ["session_id", "name", "back"]
    )]
    pub last: bool,
    /// Back to the sidebar the last ⏎ came from, while that pane is still ours (Herdr: bind it
    /// to a key with a `[[keys.command]]` of type `shell`; tmux: the plugin's key does it).
    #[arg(long, conflicts_with_all = ["session_id", "print", "json", "expect_seat", "from"])]
    pub back: bool,
    /// The seat whose session this is (an alert's `sessionId`).
    #[arg(long, value_name = "ID")]
    pub session_id: Option<String>,
    /// tmux: move the client that shows this pane (`%N`; the plugin's key passes the pane it
    /// was pressed in). Default: `$TMUX_PANE` when run in a pane of the seat's server, else the
    /// attached client used last.
    #[arg(long, value_name = "PANE")]
    pub from: Option<String>,
    /// Only print the command that would go there (nothing is moved or opened).
    #[arg(long)]
    pub print: bool,
    /// With --print: where the seat is, as JSON (what a board on another machine reads).
    #[arg(long)]
    pub json: bool,
    /// Act only if the seat is still the one a board showed; refused with exit 4 otherwise.
    #[arg(long, value_name = "TOKEN")]
    pub expect_seat: Option<String>,
    // Last: the shared flags come after the command's own in --help.
    #[command(flatten)]
    pub src: SourceArgs,
}

// How alerts go out (docs/behaviour.md §3b). Each flag wins over the settings file
// (`$XDG_CONFIG_HOME/intercom-pane/alerts.json`) and the tmux plugin's options. (Flattened: no
// doc comment, see `SourceArgs`.)
#[derive(Args, Debug, Clone, Default)]
#[command(
    next_help_heading = "Alerts (each wins over the settings file and the tmux plugin's options)"
)]
pub struct AlertArgs {
    /// The alert settings file (default: `$XDG_CONFIG_HOME/intercom-pane/alerts.json`, else
    /// `~/.config/intercom-pane/alerts.json`, when it exists).
    #[arg(long, value_name = "PATH")]
    pub alert_config: Option<PathBuf>,
    /// No alerts (the tmux status line's summary is still kept).
    #[arg(long)]
    pub no_alerts: bool,
    /// Seconds a state must hold before it alerts (0 to 600; default 5).
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(0..=600))]
    pub settle_secs: Option<u64>,
    /// Alert also for a seat whose pane is the active pane of an attached client.
    #[arg(long)]
    pub alert_when_visible: bool,
    /// Show each alert on every attached tmux client (`display-message`).
    #[arg(long)]
    pub display_message: bool,
    /// Ring the terminal bell on each alert.
    #[arg(long)]
    pub bell: bool,
    /// No desktop notifications (`notify-send`).
    #[arg(long)]
    pub no_desktop: bool,
    /// Seconds a desktop notification offers a Jump button that goes to the seat (where
    /// `notify-send` has `--action` and `--wait`); 0: no button (0 to 3600; default 300).
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(0..=3600))]
    pub desktop_jump_secs: Option<u64>,
    /// Do not keep the tmux option `@intercom_pane_status` up to date.
    #[arg(long)]
    pub no_status_line: bool,
    /// Run PROGRAM with ARGS (never through a shell) for each alert, one JSON line on its
    /// stdin (docs/interop.md §12); bounded in time and number. Takes the rest of the command
    /// line: put it last.
    #[arg(long, value_name = "PROGRAM", num_args = 1.., allow_hyphen_values = true)]
    pub on_alert: Option<Vec<String>>,
}

#[derive(Args, Debug)]
pub struct ReplyArgs {
    /// The seat: `<project>/<agent>`, or an agent name only one seat has (case-insensitive).
    pub name: String,
    /// The text; `-` reads it from standard input.
    #[arg(conflicts_with = "file")]
    pub text: Option<String>,
    /// Read the text from this file.
    #[arg(short = 'f', long = "file", value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Print the receipt as JSON (for scripts) instead of one line.
    #[arg(long)]
    pub json: bool,
    /// Act only if the seat is still the one a board showed (a token from the board:
    /// session id, pi pid, start ticks, boot id, pane); refused with exit 14 otherwise.
    #[arg(long, value_name = "TOKEN")]
    pub expect_seat: Option<String>,
    // Last: the shared flags come after the command's own in --help.
    #[command(flatten)]
    pub src: SourceArgs,
}

#[derive(Args, Debug)]
pub struct CloseWorkerArgs {
    /// The worker's configured name (case-insensitive).
    pub name: String,
    /// Wait at most this many seconds for the handoff and the turn after it, 1..120 (then
    /// timed_out, nothing closed). Ctrl-C stops the wait with nothing closed.
    #[arg(long, value_name = "SECS", default_value_t = crate::actions::close::MAX_DEADLINE_SECS,
          value_parser = clap::value_parser!(u64).range(1..=crate::actions::close::MAX_DEADLINE_SECS))]
    pub deadline_secs: u64,
    /// Run every check and print the verdict as JSON; change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Clear a fenced (uncertain or interrupted) job after a person has looked.
    #[arg(long)]
    pub recover: bool,
    /// Print the JSON report instead of the receipt (and no progress lines on stderr).
    #[arg(long)]
    pub json: bool,
    /// Act only if the seat is still the one a board showed (a token from the board:
    /// session id, pi pid, start ticks, boot id, pane); refused with exit 14 otherwise.
    #[arg(long, value_name = "TOKEN")]
    pub expect_seat: Option<String>,
    // Last: the shared flags come after the command's own in --help.
    #[command(flatten)]
    pub src: SourceArgs,
}

#[derive(Args, Debug)]
pub struct ResumeWorkerArgs {
    /// The worker's configured name (case-insensitive).
    pub name: String,
    /// Confirm that the worker is closed (required: a resume is never a guess).
    #[arg(long)]
    pub confirm_closed: bool,
    /// Run every check and print them with the exact launch; launch nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Re-check an earlier launch that never registered and lift its fence when nothing runs
    /// the session; never launches.
    #[arg(long)]
    pub recover: bool,
    /// Seconds to wait for the new seat's registration, 1..120.
    #[arg(long, value_name = "SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=crate::actions::resume::MAX_WAIT_SECS))]
    pub wait_secs: u64,
    /// The pi program to run (a name on PATH, or a path).
    #[arg(long, default_value = "pi", value_name = "PROGRAM")]
    pub pi: String,
    /// Print the receipt as JSON.
    #[arg(long)]
    pub json: bool,
    /// Act only if the seat is still the one a board showed (a token from the board:
    /// session id, pi pid, start ticks, boot id, pane); refused with exit 14 otherwise.
    #[arg(long, value_name = "TOKEN")]
    pub expect_seat: Option<String>,
    // Last: the shared flags come after the command's own in --help.
    #[command(flatten)]
    pub src: SourceArgs,
}

#[derive(Args, Debug)]
pub struct RestoreArgs {
    /// Run every check and print what would be started; start nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Only these agents (configured names, case-insensitive; repeatable).
    #[arg(long, value_name = "NAME", num_args = 1..)]
    pub only: Vec<String>,
    /// Also start workers the person closed (close-worker).
    #[arg(long)]
    pub include_closed: bool,
    /// Send "continue" to the agents cut off mid-turn once they registered (through the reply
    /// path and its checks); without it they are started and left waiting.
    #[arg(long = "continue")]
    pub continue_cut_off: bool,
    /// Seconds to wait for the new seats' registrations, 1..120.
    #[arg(long, value_name = "SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=crate::actions::restore::MAX_WAIT_SECS))]
    pub wait_secs: u64,
    /// The pi program for an agent whose launch record names none (a name on PATH, or a path).
    #[arg(long, default_value = "pi", value_name = "PROGRAM")]
    pub pi: String,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    // Last: the shared flags come after the command's own in --help.
    #[command(flatten)]
    pub src: SourceArgs,
}

#[derive(Args, Debug)]
pub struct InitArgs {
    /// The folder to hold the roster (default: the current folder).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// The coordinator's name.
    #[arg(long, default_value = "Coordinator")]
    pub name: String,
    /// The coordinator's responsibility.
    #[arg(long, default_value = "Coordinates the workers.")]
    pub description: String,
    /// The roster's multiplexer (default: the one this runs in; tmux outside any).
    #[arg(long, value_parser = ["tmux", "herdr", "none"])]
    pub multiplexer: Option<String>,
    /// System config the coordinator's pi extension passes on as `--config` (written into the
    /// command as INTERCOM_PANE_CONFIG).
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Start the coordinator's pi now: in this pane (inside tmux or Herdr), else in a new
    /// tmux session; without it the command is printed.
    #[arg(long)]
    pub start: bool,
    /// With --start: a new detached tmux session (named after the folder) wherever this runs,
    /// its pane kept when pi exits (`tmux respawn-pane` starts it again); waits until the
    /// coordinator's pi registered.
    #[arg(long, requires = "start")]
    pub detach: bool,
    /// The pi program to run (a name on PATH, or a path).
    #[arg(long, default_value = "pi", value_name = "PROGRAM")]
    pub pi: String,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct SpawnArgs {
    /// The new worker's name: at most 64 characters, no control, invisible or path-separator
    /// characters, not `coordinator`, not taken (case-insensitive).
    pub name: String,
    /// Work in this folder (under the root; default: the root).
    #[arg(long, value_name = "DIR", conflicts_with = "worktree")]
    pub dir: Option<PathBuf>,
    /// Work in a new git worktree at .pi-intercom/worktrees/NAME, on BRANCH (default: a new
    /// branch named after the worker, from the root checkout's HEAD).
    #[arg(long, value_name = "BRANCH", num_args = 0..=1, default_missing_value = "")]
    pub worktree: Option<String>,
    /// The worker's responsibility (the roster's `description`).
    #[arg(long)]
    pub description: Option<String>,
    /// The first task, handed to the worker through the reply path once it registered (the
    /// reply text rules: at most 2000 characters).
    #[arg(long, conflicts_with = "prompt_file")]
    pub prompt: Option<String>,
    /// Read the first task from this file.
    #[arg(long, value_name = "FILE")]
    pub prompt_file: Option<PathBuf>,
    /// pi's `--model`.
    #[arg(long)]
    pub model: Option<String>,
    /// pi's `--thinking` (off, minimal, low, medium, high, xhigh, max).
    #[arg(long, value_name = "LEVEL")]
    pub thinking: Option<String>,
    /// Its budget in dollars: the soft alert at 80 %, its extension holds the next prompt at
    /// 100 % (see `budget`).
    #[arg(long, value_name = "USD", allow_negative_numbers = true)]
    pub budget_usd: Option<f64>,
    /// Its budget in tokens (what counts when its model has no pricing).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub budget_tokens: Option<f64>,
    /// Seconds to wait for the new seat's registration, 1..120.
    #[arg(long, value_name = "SECS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=crate::actions::spawn::MAX_WAIT_SECS))]
    pub wait_secs: u64,
    /// The pi program to run (a name on PATH, or a path).
    #[arg(long, default_value = "pi", value_name = "PROGRAM")]
    pub pi: String,
    /// Print the receipt as JSON.
    #[arg(long)]
    pub json: bool,
    /// More arguments for pi, after `--` (not the session flags: the roster names the session).
    #[arg(last = true, value_name = "PI_ARGS")]
    pub pi_args: Vec<String>,
    // Last: the shared flags come after the command's own in --help.
    #[command(flatten)]
    pub src: SourceArgs,
}

#[derive(Args, Debug)]
pub struct RetireArgs {
    /// The worker's configured name (case-insensitive).
    pub name: String,
    /// Also remove the git worktree spawn made for it, when it holds no uncommitted change and
    /// no commit outside its base (else it is kept, and the report says what it holds).
    #[arg(long)]
    pub remove_worktree: bool,
    /// With --remove-worktree: remove it even when it holds work; its uncommitted changes are
    /// lost (the report names them), its branch and commits stay.
    #[arg(long, requires = "remove_worktree")]
    pub discard: bool,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    // Last: the shared flags come after the command's own in --help.
    #[command(flatten)]
    pub src: SourceArgs,
}

/// Who changes a budget, as its record says.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum BudgetBy {
    Cli,
    Sidebar,
    Pi,
}

impl BudgetBy {
    pub fn as_str(self) -> &'static str {
        match self {
            BudgetBy::Cli => "cli",
            BudgetBy::Sidebar => "sidebar",
            BudgetBy::Pi => "pi",
        }
    }
}

#[derive(Args, Debug)]
pub struct BudgetArgs {
    /// The worker's configured name (case-insensitive).
    #[arg(required_unless_present = "session_id")]
    pub name: Option<String>,
    /// The worker by its session id instead (what its extension passes).
    #[arg(long, value_name = "ID", conflicts_with = "name")]
    pub session_id: Option<String>,
    /// Add this many dollars to its cost limit.
    #[arg(
        long,
        value_name = "USD",
        allow_negative_numbers = true,
        group = "edit"
    )]
    pub raise: Option<f64>,
    /// Set its cost limit, in dollars.
    #[arg(
        long,
        value_name = "USD",
        allow_negative_numbers = true,
        group = "edit"
    )]
    pub usd: Option<f64>,
    /// Set its token limit (what counts when its model has no pricing).
    #[arg(long, value_name = "N", allow_negative_numbers = true, group = "edit")]
    pub tokens: Option<f64>,
    /// Remove its budget.
    #[arg(long, group = "edit")]
    pub off: bool,
    /// Print whether its next prompt is held (JSON; what its extension asks).
    #[arg(long, conflicts_with = "edit")]
    pub check: bool,
    /// Who makes the change, for its record.
    #[arg(long, value_enum, default_value = "cli", hide = true)]
    pub by: BudgetBy,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
    // Last: the shared flags come after the command's own in --help.
    #[command(flatten)]
    pub src: SourceArgs,
}

#[derive(Args, Debug)]
pub struct ReviewArgs {
    /// The worker's configured name (case-insensitive).
    pub name: String,
    /// Print the review as JSON.
    #[arg(long)]
    pub json: bool,
    /// Also print the diff: committed changes since the base, then uncommitted ones.
    #[arg(long, conflicts_with = "json")]
    pub patch: bool,
    /// Compare with this branch instead of the main checkout's.
    #[arg(long, value_name = "BRANCH")]
    pub into: Option<String>,
    // Last: the shared flags come after the command's own in --help.
    #[command(flatten)]
    pub src: SourceArgs,
}

#[derive(Args, Debug)]
pub struct LandArgs {
    /// The workers' configured names, landed in this order; the first refusal stops the rest.
    #[arg(required = true)]
    pub names: Vec<String>,
    /// The branch to land on (default: the main checkout's; it must be checked out there).
    #[arg(long, value_name = "BRANCH")]
    pub into: Option<String>,
    /// Instead of a merge commit, replay the worker's commits onto the branch (git replay, git
    /// 2.44+) and fast-forward it; the worker's own branch is left as it is.
    #[arg(long)]
    pub rebase: bool,
    /// Run every check and say what would happen; change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print the receipt as JSON.
    #[arg(long)]
    pub json: bool,
    // Last: the shared flags come after the command's own in --help.
    #[command(flatten)]
    pub src: SourceArgs,
}

#[derive(Args, Debug)]
pub struct HandoffArgs {
    /// The close job id the coordinator named.
    #[arg(long)]
    pub job: String,
    /// The public handoff summary (at most 4000 characters); `-` reads standard input.
    #[arg(long, conflicts_with = "file")]
    pub summary: Option<String>,
    /// Read the summary from this file.
    #[arg(short = 'f', long = "file")]
    pub file: Option<PathBuf>,
    /// This worker's pi session id (default: `$PI_SESSION_ID`): only compared with the job's.
    #[arg(long)]
    pub session_id: Option<String>,
    /// Ignored (kept for older callers): the session file is the job's, never the caller's.
    #[arg(long)]
    pub session_file: Option<PathBuf>,
    /// The Intercom root (default: the nearest one at or above the current folder).
    #[arg(long)]
    pub root: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct EnsureMonitorArgs {
    /// The Intercom root (default: the nearest one at or above the current folder).
    #[arg(long)]
    pub root: Option<PathBuf>,
    /// System config for the monitor (passed on to it as `--config`).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// The caller's pi session id: a worker's never creates a monitor.
    #[arg(long)]
    pub session_id: Option<String>,
    /// The process whose pane is the coordinator's (default: this command's own ancestry).
    #[arg(long, value_parser = clap::value_parser!(i32).range(1..))]
    pub caller_pid: Option<i32>,
    /// Clear a fenced record first, after a person has looked at the panes (a lock is never
    /// broken: it lasts exactly as long as the run holding it).
    #[arg(long)]
    pub recover: bool,
    /// Internal: this run is the placement itself, started by `ensure-monitor` in a process
    /// group of its own so that a caller giving up (the pi extension's timeout) cannot stop it
    /// half-way.
    #[arg(long, hide = true)]
    pub in_background: bool,
}

#[derive(Args, Debug)]
pub struct RegisterArgs {
    /// The event: a lifecycle event (session_start, agent_start, agent_settled, agent_end on
    /// older pi, session_tree, session_shutdown), or one of pi's other events the extension
    /// reports with `--pi-state` (ui_prompt_start/end, tool_execution_start/end,
    /// session_before_compact, session_compact, session_compact_failed, auto_retry_start/end).
    #[arg(long)]
    pub event: String,
    /// Increases with every event of one pi; an older event never overwrites a newer one.
    #[arg(long, default_value_t = 0)]
    pub seq: u64,
    /// The pi process: an ancestor of this command that is pi by its executable and command line
    /// (a JavaScript runtime running pi's entry script, or pi's own `pi` title) and that started
    /// this command itself (same process group and session). Default: the parent process.
    #[arg(long, value_parser = clap::value_parser!(i32).range(1..))]
    pub pi_pid: Option<i32>,
    /// The pi session id.
    #[arg(long)]
    pub session_id: String,
    /// The pi session file, when pi has written one.
    #[arg(long)]
    pub session_file: Option<PathBuf>,
    /// The pi session folder.
    #[arg(long)]
    pub sessions_dir: Option<PathBuf>,
    /// With `--event session_tree`: the entry pi's branch now ends at (`/tree` writes nothing).
    #[arg(long)]
    pub leaf_id: Option<String>,
    /// pi's working folder: only compared with the folder pi really runs in (`/proc`), which is
    /// what is recorded; a different folder is refused.
    #[arg(long)]
    pub cwd: Option<PathBuf>,
    /// The extension's private reply channel (an absolute Unix socket path), while it is open.
    #[arg(long, value_name = "PATH")]
    pub channel: Option<PathBuf>,
    /// The extension's current picture of its pi (JSON, ≤ 8 KiB: dialog, retry, compaction,
    /// tool, settled, context); recorded unless a newer one already is.
    #[arg(long, value_name = "JSON")]
    pub pi_state: Option<String>,
    /// Only compared: the record goes under the nearest Intercom root at or above the folder pi
    /// really runs in when that root configures this session, else under the data root; a
    /// `--root` that is not that root is refused.
    #[arg(long)]
    pub root: Option<PathBuf>,
    /// System config naming the data root (as for `scan`).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// With `--event session_start`: pi's own arguments (a JSON array of strings, ≤ 64 KiB; the
    /// extension passes `process.argv`, which pi hides from `/proc`). A roster agent no command
    /// launched gets a launch record in the data root from them, so `restore` can start it again.
    #[arg(long, value_name = "JSON")]
    pub pi_args: Option<String>,
    /// With `--event session_start`: the model pi runs (`provider/id`), kept in that record.
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
}

#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Number of scan passes to print before cleaning up (0 = until interrupted).
    #[arg(long, default_value_t = 6)]
    pub passes: u32,
    /// Seconds between passes, 1..3600.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub interval: u64,
    /// Keep the demo folder instead of removing it at the end.
    #[arg(long)]
    pub keep: bool,
    /// Print the board after each pass instead of opening the sidebar (the default when not
    /// run in a terminal).
    #[arg(long)]
    pub print: bool,
}

#[derive(Args, Debug)]
pub struct DemoWatchdogArgs {
    /// The demo's folder (removed at the end unless --keep).
    #[arg(long)]
    pub base: PathBuf,
    /// What to start, as the demo wrote it (JSON).
    #[arg(long)]
    pub plan: String,
    /// Keep the folder.
    #[arg(long)]
    pub keep: bool,
}

#[derive(Args, Debug)]
pub struct DemoAgentArgs {
    /// The session id this agent writes.
    #[arg(long)]
    pub session_id: String,
    /// The pi session file to append to.
    #[arg(long)]
    pub session_file: PathBuf,
    /// Working folder recorded in the header.
    #[arg(long)]
    pub cwd: PathBuf,
    /// Intercom root (observation logs and reports go under `.pi-intercom/`).
    #[arg(long)]
    pub root: Option<PathBuf>,
    /// Loopback port to answer `GET /intercom/health` on.
    #[arg(long)]
    pub port: Option<u16>,
    /// Scenario: cycle, tool, waiting, error, idle, retry, coordinator.
    #[arg(long, default_value = "cycle")]
    pub scenario: String,
    /// Seconds per step of the scenario, 1..3600.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub step: u64,
    /// Stop after this many seconds (bounded by design), 1..86400.
    #[arg(long, default_value_t = 3600, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub lifetime: u64,
    /// Register as a seat (like the pi extension) with this system config.
    #[arg(long)]
    pub register_config: Option<PathBuf>,
    /// Text to print in the agent's pane when it starts (the demo's instructions).
    #[arg(long)]
    pub banner: Option<String>,
    /// Why this agent ends when its lifetime is over (shown in its report and its pane).
    #[arg(long)]
    pub end_reason: Option<String>,
}

#[derive(Args, Debug)]
pub struct DoctorArgs {
    /// Print the checks as JSON.
    #[arg(long)]
    pub json: bool,
    // Last: the shared flags come after the command's own in --help.
    #[command(flatten)]
    pub src: SourceArgs,
}

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Args, Debug)]
pub struct SeenArgs {
    /// The seat's key, `<project>/<agent>` (as in `board/sessions/`).
    pub key: String,
    /// The seat's last activity the mark is for (ISO 8601, as the board shows it): a newer
    /// activity brings the seat back.
    #[arg(long, value_name = "ISO")]
    pub last_activity: String,
    /// Remove the mark instead.
    #[arg(long)]
    pub unsee: bool,
    // Last: the shared flags come after the command's own in --help.
    #[command(flatten)]
    pub src: SourceArgs,
}

#[derive(Args, Debug)]
pub struct HelloArgs {
    /// A word to hand back unchanged (checks that the login shell kept a quoted word).
    #[arg(long, value_name = "WORD")]
    pub echo: Option<String>,
}

#[derive(Args, Debug)]
pub struct ManArgs {
    /// Write `intercom-pane.1` and one `intercom-pane-<command>.1` per command into this folder
    /// (created when missing) instead of printing the main page.
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
}

#[cfg(test)]
mod tests {
    /// Every command's flags are well formed (no flag defined twice, as a flattened
    /// `SourceArgs` and a command's own field could).
    #[test]
    fn the_command_line_is_well_formed() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
