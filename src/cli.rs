//! Every flag and its help text.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Parser, Debug)]
#[command(
    name = "intercom-pane",
    version,
    about = "Truthful status and safe pane control for several pi coding agents in tmux or Herdr"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run one scan pass and write the board files under the data root.
    Scan(ScanArgs),
    /// Print a page of configured Intercom workers: a list, or JSON with --json (read-only).
    Status(StatusArgs),
    /// Print a page of the board's seats as JSON: each seat's state, why, the question or error
    /// text, report, handoff, close and resume stage (read-only; the coordinator's
    /// `intercom_board` tool).
    Board(BoardArgs),
    /// Wait until a seat shows one of the given states, or the timeout passes; prints the seat
    /// as JSON (read-only; the coordinator's `intercom_wait` tool).
    Wait(WaitArgs),
    /// Run one of the coordinator's pi tools (run by the shipped pi extension, in the roster's
    /// coordinator's pi only; refused for any other caller). `check` says whether the caller
    /// may use them and lists them.
    Tool(ToolArgs),
    /// The sidebar: a terminal UI of the scan, redrawn as soon as something changes.
    Monitor(MonitorArgs),
    /// Alerts without a sidebar: the sidebar's passes and alerts, headless, until SIGTERM,
    /// SIGHUP or SIGINT (exit 0).
    Watch(WatchArgs),
    /// Take the person to a seat's pane: the seat that alerted last (`--last`, the tmux
    /// plugin's key) or the one an alert named (`--session-id`), after checking that its pane
    /// still runs the same pi.
    Jump(JumpArgs),
    /// Record this pi's seat from the inside (run by the shipped pi extension).
    Register(RegisterArgs),
    /// Send one text (several lines allowed) to one registered seat: through the pi extension's
    /// channel, typed into its tmux pane (bracketed paste, then Enter), or Herdr's agent.prompt.
    Reply(ReplyArgs),
    /// Coordinator startup hook: place (or keep) the sidebar pane above the coordinator.
    EnsureMonitor(EnsureMonitorArgs),
    /// Close one worker's pane after its public handoff is saved and its turn settled.
    CloseWorker(CloseWorkerArgs),
    /// Run by a worker when asked: save its public handoff for a close job.
    Handoff(HandoffArgs),
    /// Bring a closed worker back on its saved session (never twice): on tmux in a session of
    /// its own named like it, on Herdr in a tab beside the coordinator.
    ResumeWorker(ResumeWorkerArgs),
    /// Start a roster here: .pi-intercom/config.json with a coordinator entry, and the command
    /// that starts the coordinator's pi in that session.
    Init(InitArgs),
    /// Add a worker to the roster and start its pi in a new window (Herdr: tab) beside the
    /// coordinator, without focus; wait until it registers; hand it its first task.
    Spawn(SpawnArgs),
    /// Remove a closed worker from the roster (its entry kept under .pi-intercom/retired/).
    Retire(RetireArgs),
    /// A temporary coordinator root with simulated workers in a private tmux server, shown in
    /// the sidebar (or printed pass after pass with --print).
    Demo(DemoArgs),
    /// Check the setup: tmux, Herdr, the binary pi runs, the pi extension, the roster and its
    /// sessions, the data root. Exit 1 when something a feature needs is missing.
    Doctor(DoctorArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) on stdout.
    Completions(CompletionsArgs),
    /// Print the man page (roff) on stdout, or write one page per command into a folder.
    Man(ManArgs),
    /// A simulated pi agent (used by the demo and the tests).
    #[command(hide = true)]
    DemoAgent(DemoAgentArgs),
    /// The demo's watchdog: starts its tmux server and removes everything once the demo ends.
    #[command(hide = true)]
    DemoWatchdog(DemoWatchdogArgs),
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum LivenessArg {
    Tmux,
    AssumeAlive,
}

/// Where the evidence is: shared by every command that scans.
#[derive(Args, Debug, Clone)]
pub struct SourceArgs {
    /// System config file naming an absolute `dataRoot` (and optional `sessionDirs`,
    /// `intercomRoot`). Without it the data root is `$XDG_STATE_HOME/intercom-pane`.
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Intercom coordinator root (the folder holding `.pi-intercom/config.json`). Default: the
    /// nearest such folder at or above the current folder.
    #[arg(long, value_name = "PATH")]
    pub root: Option<PathBuf>,
    /// Project checkout whose `.pi/state/<agent>/sessions` folders are seats, one per agent; each
    /// is read with its per-cwd subfolders (`--<cwd>--/`), newest session. Default: the current
    /// folder.
    #[arg(long, value_name = "PATH")]
    pub repo: Option<PathBuf>,
    /// Fleet agents folder: each `<fleet>/<agent>/.pi/agent/sessions` (and its per-cwd
    /// subfolders) is a seat, or `none`. Default: `~/.mosaic/fleet/agents`.
    #[arg(long, value_name = "PATH|none")]
    pub fleet: Option<String>,
    /// Extra pi session folder (repeatable), searched with its per-cwd subfolders (one level)
    /// for the session files of the Intercom roster's agents by session id (and by close-worker
    /// for the worker's file when its registration names none); it adds no seats of its own.
    /// Also searched: the `--config` file's `sessionDirs`, `$PI_CODING_AGENT_SESSION_DIR`, and
    /// `$PI_CODING_AGENT_DIR/sessions` or `~/.pi/agent/sessions`.
    #[arg(long = "sessions-dir", value_name = "DIR")]
    pub sessions_dirs: Vec<PathBuf>,
    /// The tmux server to ask for seats that name no socket (default: `$TMUX`'s server, else
    /// `tmux -L default`).
    #[arg(long = "tmux-socket", value_name = "PATH")]
    pub tmux_socket: Option<PathBuf>,
    /// How to decide whether a seat is alive.
    #[arg(long, value_enum, default_value = "tmux")]
    pub liveness: LivenessArg,
    /// Pretend the time is this ISO 8601 instant (reproducible output).
    #[arg(long, hide = true, value_name = "ISO")]
    pub now: Option<String>,
}

#[derive(Args, Debug)]
pub struct ScanArgs {
    #[command(flatten)]
    pub src: SourceArgs,
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
}

/// The `--watch` stream's flags (docs/interop.md §10).
#[derive(Args, Debug, Clone)]
pub struct StreamArgs {
    /// With `--watch`: one JSON object per line (the whole board, then one line per changed
    /// seat, schema version 1); the stream ends with exit 0 when its reader goes away.
    #[arg(long, requires = "watch")]
    pub json_lines: bool,
    /// With `--watch`: a heartbeat line this often (seconds).
    #[arg(long, requires = "watch", default_value_t = 15,
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub heartbeat_secs: u64,
    #[command(flatten)]
    pub live: LiveArgs,
}

/// How a live view watches.
#[derive(Args, Debug, Clone)]
pub struct LiveArgs {
    /// A full pass this often (seconds) whatever the events said; every 3 s while folders
    /// cannot all be watched.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub full_pass_secs: u64,
}

#[derive(Args, Debug)]
pub struct StatusArgs {
    #[command(flatten)]
    pub src: SourceArgs,
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
}

#[derive(Args, Debug)]
pub struct BoardArgs {
    #[command(flatten)]
    pub src: SourceArgs,
    /// Only seats that need attention: waiting or error (or waiting on you), not marked seen.
    #[arg(long)]
    pub attention: bool,
    /// Only the seat with this name (case-insensitive).
    #[arg(long)]
    pub name: Option<String>,
    /// Only seats of this host (`local`).
    #[arg(long)]
    pub host: Option<String>,
    /// Skip this many seats (the previous page's `nextOffset`).
    #[arg(long, default_value_t = 0)]
    pub offset: usize,
    /// Seats per page, 1..20.
    #[arg(long, default_value_t = 10)]
    pub limit: usize,
}

#[derive(Args, Debug)]
pub struct WaitArgs {
    #[command(flatten)]
    pub src: SourceArgs,
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
    #[arg(long, default_value_t = 60,
          value_parser = clap::value_parser!(u64).range(1..=crate::tools::MAX_WAIT_SECS))]
    pub timeout_secs: u64,
}

#[derive(Args, Debug)]
pub struct ToolArgs {
    #[command(flatten)]
    pub src: SourceArgs,
    /// `check`, or a tool: intercom_board, intercom_reply, intercom_close_worker,
    /// intercom_resume_worker, intercom_wait.
    #[arg(value_name = "TOOL")]
    pub tool: String,
    /// The pi that runs this command (the coordinator's; verified like `register` verifies).
    #[arg(long, value_name = "PID")]
    pub pi_pid: i32,
    /// The tool's arguments, one JSON object (checked against its schema again).
    #[arg(long, default_value = "{}", value_name = "JSON")]
    pub args: String,
}

#[derive(Args, Debug)]
pub struct MonitorArgs {
    #[command(flatten)]
    pub src: SourceArgs,
    /// Do not run loopback health checks (the Connection column stays `unknown`).
    #[arg(long)]
    pub no_probe: bool,
    #[command(flatten)]
    pub live: LiveArgs,
    #[command(flatten)]
    pub alerts: AlertArgs,
}

/// `watch`: the alerts without a sidebar.
#[derive(Args, Debug)]
pub struct WatchArgs {
    #[command(flatten)]
    pub src: SourceArgs,
    #[command(flatten)]
    pub alerts: AlertArgs,
}

/// `jump`.
#[derive(Args, Debug)]
pub struct JumpArgs {
    #[command(flatten)]
    pub src: SourceArgs,
    /// The seat that alerted last (and only while its pane still runs the pi it alerted from).
    #[arg(
        long,
        conflicts_with = "session_id",
        required_unless_present = "session_id"
    )]
    pub last: bool,
    /// The seat whose session this is (an alert's `sessionId`).
    #[arg(long, value_name = "ID")]
    pub session_id: Option<String>,
    /// tmux: move the client that shows this pane (`%N`; the plugin's key passes the pane it
    /// was pressed in). Default: `$TMUX_PANE` when run in a pane of the seat's server, else the
    /// attached client used last.
    #[arg(long, value_name = "PANE")]
    pub from: Option<String>,
}

/// How alerts go out (docs/behaviour.md §3b). Each flag wins over the settings file
/// (`$XDG_CONFIG_HOME/intercom-pane/alerts.json`) and the tmux plugin's options.
#[derive(Args, Debug, Clone, Default)]
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
    /// Do not keep the tmux option `@intercom_pane_status` up to date.
    #[arg(long)]
    pub no_status_line: bool,
    /// Run PROGRAM with ARGS (never through a shell) for each alert, one JSON line on its
    /// stdin (docs/interop.md §12); bounded in time and number. Takes the rest of the command
    /// line: put it last.
    #[arg(long, value_name = "PROGRAM [ARGS]...", num_args = 1.., allow_hyphen_values = true)]
    pub on_alert: Option<Vec<String>>,
}

#[derive(Args, Debug)]
pub struct ReplyArgs {
    #[command(flatten)]
    pub src: SourceArgs,
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
}

#[derive(Args, Debug)]
pub struct CloseWorkerArgs {
    #[command(flatten)]
    pub src: SourceArgs,
    /// The worker's configured name (case-insensitive).
    pub name: String,
    /// Wait at most this many seconds for the handoff and the turn after it, 1..120 (then
    /// timed_out, nothing closed). Ctrl-C stops the wait with nothing closed.
    #[arg(long, default_value_t = crate::actions::close::MAX_DEADLINE_SECS,
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
}

#[derive(Args, Debug)]
pub struct ResumeWorkerArgs {
    #[command(flatten)]
    pub src: SourceArgs,
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
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=crate::actions::resume::MAX_WAIT_SECS))]
    pub wait_secs: u64,
    /// The pi program to run (a name on PATH, or a path).
    #[arg(long, default_value = "pi", value_name = "PROGRAM")]
    pub pi: String,
    /// Print the receipt as JSON.
    #[arg(long)]
    pub json: bool,
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
    /// The pi program to run (a name on PATH, or a path).
    #[arg(long, default_value = "pi", value_name = "PROGRAM")]
    pub pi: String,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct SpawnArgs {
    #[command(flatten)]
    pub src: SourceArgs,
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
    /// Seconds to wait for the new seat's registration, 1..120.
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=crate::actions::spawn::MAX_WAIT_SECS))]
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
}

#[derive(Args, Debug)]
pub struct RetireArgs {
    #[command(flatten)]
    pub src: SourceArgs,
    /// The worker's configured name (case-insensitive).
    pub name: String,
    /// Also remove the git worktree spawn made for it, when it holds no uncommitted or
    /// unmerged work (else it is kept, and the report says why).
    #[arg(long)]
    pub remove_worktree: bool,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
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
    /// The lifecycle event: session_start, agent_start, agent_settled (agent_end on older pi),
    /// session_tree, session_shutdown.
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
    /// Only compared: the record goes under the nearest Intercom root at or above the folder pi
    /// really runs in when that root configures this session, else under the data root; a
    /// `--root` that is not that root is refused.
    #[arg(long)]
    pub root: Option<PathBuf>,
    /// System config naming the data root (as for `scan`).
    #[arg(long)]
    pub config: Option<PathBuf>,
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
    #[command(flatten)]
    pub src: SourceArgs,
    /// Print the checks as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Args, Debug)]
pub struct ManArgs {
    /// Write `intercom-pane.1` and one `intercom-pane-<command>.1` per command into this folder
    /// (created when missing) instead of printing the main page.
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
}
