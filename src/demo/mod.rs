//! `intercom-pane demo`: a realistic coordinator root in a temporary folder, simulated workers
//! that write pi-shaped sessions, observation logs and reports and answer health checks, and the
//! board shown pass after pass. No pi needed.

pub(crate) mod agent;
pub(crate) mod watchdog;

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::evidence::config::{NewAgent, NewRoster};

use crate::cli::DemoArgs;
use crate::clock::{format_iso, Clock, SystemClock};
use crate::liveness::LivenessMode;
use crate::mux::session::PrivateServer;
use crate::scan::{self, RootChoice, ScanOptions};
use crate::views::print;
use watchdog::Watchdog;

/// One simulated worker of the demo roster.
pub(crate) struct DemoWorker {
    pub name: &'static str,
    pub description: &'static str,
    pub scenario: &'static str,
    pub step_secs: u64,
    /// The simulated agent exits after this long (its pane then runs nothing: offline).
    pub lifetime_secs: Option<u64>,
}

pub(crate) const WORKERS: [DemoWorker; 4] = [
    DemoWorker {
        name: "Builder",
        description: "Owns the build scripts and CI.",
        scenario: "cycle",
        step_secs: 3,
        lifetime_secs: None,
    },
    DemoWorker {
        name: "Reviewer",
        description: "Reviews pull requests.",
        scenario: "waiting",
        step_secs: 2,
        lifetime_secs: None,
    },
    DemoWorker {
        name: "Docs",
        description: "Keeps the documentation current.",
        scenario: "tool",
        step_secs: 5,
        lifetime_secs: None,
    },
    DemoWorker {
        name: "Release",
        description: "Cuts releases.",
        scenario: "error",
        step_secs: 2,
        lifetime_secs: Some(25),
    },
];

/// The folders of a demo setup, and the coordinator's session id and port.
pub(crate) struct DemoLayout {
    pub base: PathBuf,
    pub root: PathBuf,
    pub sessions: PathBuf,
    pub data_root: PathBuf,
    pub coordinator_id: String,
    pub coordinator_port: u16,
}

/// What the demo is and which keys to press: printed in the coordinator's pane and kept short
/// enough for an 80×24 terminal. The status line repeats the keys. `C-b` stands for the demo's
/// prefix key (`demo_prefix`).
const INSTRUCTIONS: &str = "\
intercom-pane demo: a coordinator (this pane, a simulated pi) and four
simulated pi workers in a private tmux server; the sidebar above shows them.
  Builder cycles through work, Reviewer waits for your answer, Docs runs a
  tool, Release hits a provider error and exits after 25 s (then offline).
Keys: C-b Up selects the sidebar (its title shows ▶ while it has the keys).
There j/k or n move, Enter goes to the worker's pane, r replies (try
Reviewer: type staging, Enter), d details, p conversation, ? all keys, q quit.
C-b d leaves the demo; everything it started is removed.";

/// The instructions with the demo's prefix key.
pub(crate) fn instructions(prefix: &str) -> String {
    let text = INSTRUCTIONS.replace("C-b", prefix);
    if prefix == "C-b" {
        return text;
    }
    format!("{text}\n(Inside your tmux the demo's prefix is {prefix}: your own keeps its own.)")
}

/// The demo's tmux prefix key: tmux's `C-b`, but inside the person's own tmux (whose keys come
/// first: `C-b d` would detach the person's session and leave the demo running) `C-a`, unless
/// that is the person's own prefix.
pub(crate) fn demo_prefix(inside_tmux: bool, person_prefix: Option<&str>) -> &'static str {
    if inside_tmux && person_prefix != Some("C-a") {
        "C-a"
    } else {
        "C-b"
    }
}

/// The keys, for the tmux status line: the sidebar's only while this window has it (a pane with
/// our marker; `q` closes it), else how to get back or out. A tmux format, evaluated per client;
/// the texts hold no `,` `#` or `}` (the prefix is one of ours: `C-a` or `C-b`).
fn status_keys(prefix: &str) -> String {
    // At most 62 columns: beside `[Coordinator] ` it fits 80, and tmux cuts a long right side
    // from its start, which would lose the one key that gets to the sidebar.
    let here = format!(" {prefix} Up: sidebar | Enter: go to | ?: keys | {prefix} d: leave demo ");
    let closed = format!(" sidebar closed (q) | {prefix} d: leave demo ");
    let away = format!(" {prefix} L: back to Coordinator | {prefix} d: leave demo ");
    format!(
        "#{{?#{{P:#{{{}}}}},{here},#{{?#{{==:#{{session_name}},Coordinator}},{closed},{away}}}}}",
        crate::mux::MARKER_OPTION,
    )
}

/// The private server's size when the person's terminal cannot be measured (`--print`, tests).
pub(crate) const DEFAULT_SIZE: (u16, u16) = (160, 45);
/// The smallest server the demo starts: the sidebar's minimum above a usable coordinator pane.
const MIN_SIZE: (u16, u16) = (40, 16);

/// The person's terminal size, so the private server (and the sidebar placed in it) starts at
/// the size the person will see instead of being squeezed on attach.
pub(crate) fn server_size() -> (u16, u16) {
    if !std::io::stdout().is_terminal() {
        return DEFAULT_SIZE;
    }
    match crossterm::terminal::size() {
        Ok((w, h)) if w > 0 && h > 0 => (w.max(MIN_SIZE.0), h.max(MIN_SIZE.1)),
        _ => DEFAULT_SIZE,
    }
}

/// A free loopback port (bound, then released for the agent to take).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(0)
}

/// (name, session id, port) of one configured demo worker.
pub(crate) type DemoSeat = (String, String, u16);

impl DemoLayout {
    /// The demo's folders under `base` (the watchdog rebuilds the layout from this).
    pub(crate) fn at(base: &Path, coordinator_id: String, coordinator_port: u16) -> DemoLayout {
        DemoLayout {
            base: base.to_path_buf(),
            root: base.join("coordinator"),
            sessions: base.join("pi-agent").join("sessions"),
            data_root: base.join("state"),
            coordinator_id,
            coordinator_port,
        }
    }
}

/// Choose the demo's session ids and ports (nothing is written yet: the watchdog, which writes
/// the files, must exist before anything the demo leaves behind does).
pub(crate) fn plan(base: &Path) -> (DemoLayout, Vec<DemoSeat>) {
    let layout = DemoLayout::at(base, uuid::Uuid::new_v4().to_string(), free_port().max(1));
    let workers = WORKERS
        .iter()
        .map(|w| {
            let id = uuid::Uuid::new_v4().to_string();
            (w.name.to_string(), id, free_port().max(1))
        })
        .collect();
    (layout, workers)
}

/// Create the root, config and folders of a planned demo.
pub(crate) fn write_files(layout: &DemoLayout, workers: &[DemoSeat]) -> std::io::Result<()> {
    for d in [
        &crate::paths::logs_dir(&layout.root),
        &layout.sessions,
        &layout.data_root,
    ] {
        std::fs::create_dir_all(d)?;
    }
    let mut agents = vec![NewAgent {
        session_id: &layout.coordinator_id,
        name: "Coordinator",
        coordinator: true,
        description: "Coordinate workers, delegate work, and manage shared configuration.",
        port: layout.coordinator_port,
        project_directory: ".",
        budget: None,
    }];
    for (w, (name, id, port)) in WORKERS.iter().zip(workers) {
        agents.push(NewAgent {
            session_id: id,
            name,
            coordinator: false,
            description: w.description,
            port: *port,
            project_directory: ".",
            budget: None,
        });
    }
    let stand_in = write_stand_in(layout)?;
    let system = DemoSystem {
        data_root: layout.data_root.display().to_string(),
        session_dirs: [layout.sessions.display().to_string()],
        demo_pi: stand_in.display().to_string(),
    };
    std::fs::write(
        layout.base.join("system.json"),
        serde_json::to_string(&system)?,
    )?;
    let cfg = NewRoster {
        version: 1,
        multiplexer: "tmux",
        agents,
    };
    std::fs::write(
        crate::paths::config_file(&layout.root),
        serde_json::to_string_pretty(&cfg)? + "\n",
    )
}

/// The demo's system config: its data root, its sessions folder, and its stand-in for pi.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct DemoSystem {
    data_root: String,
    session_dirs: [String; 1],
    /// Under `DEMO_PI_KEY`.
    demo_pi: String,
}

/// The system config's key naming the demo's stand-in for pi: a sidebar started with that config
/// spawns and resumes with it, never with the `pi` on the person's PATH.
const DEMO_PI_KEY: &str = "demoPi";

/// Write `<base>/demo-pi`: what `+` (spawn) in the demo's sidebar starts instead of pi. Spawn
/// runs `PROGRAM --session-id ID`; this starts a simulated worker for that session with this
/// binary; a resume runs `PROGRAM --session FILE` and the simulated worker continues that file.
/// Anything else is refused in the pane.
fn write_stand_in(layout: &DemoLayout) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let q = |p: &Path| crate::mux::shell_quote(&p.display().to_string());
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("intercom-pane"));
    let script = format!(
        "#!/bin/sh\n\
# The demo's stand-in for pi: a simulated worker, never the pi on your PATH.\n\
# A spawn names the session (--session-id ID); a resume its file (--session FILE, its name ends\n\
# in _ID.jsonl). Only those, with a session id's characters.\n\
case \"$1\" in\n\
  --session-id) id=\"$2\"; file={sessions}/--demo--/spawned_\"$2\".jsonl;;\n\
  --session) file=\"$2\"; id=\"${{2##*_}}\"; id=\"${{id%.jsonl}}\";;\n\
  *) id=;;\n\
esac\n\
case \"$id\" in ''|-*|*[!0-9a-f-]*)\n\
  echo 'The demo starts only simulated workers, for a session it names (Enter closes).'; read -r _; exit 2;;\n\
esac\n\
exec {exe} demo-agent --session-id \"$id\" --session-file \"$file\" \\\n\
  --cwd \"$PWD\" --root {root} --scenario tool --step 3 --lifetime 3600 --register-config {cfg}\n",
        exe = q(&exe),
        sessions = q(&layout.sessions),
        root = q(&layout.root),
        cfg = q(&layout.base.join("system.json")),
    );
    let path = layout.base.join("demo-pi");
    std::fs::write(&path, script)?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o700))?;
    Ok(path)
}

/// The demo's stand-in for pi, when `config` is a demo's system config (else `None`: the real
/// `pi`). Read bounded; only an absolute path to an existing file counts.
pub(crate) fn stand_in_pi(config: Option<&Path>) -> Option<PathBuf> {
    let bytes = crate::fsguard::read_capped(config?, 64 * 1024).ok()?;
    let v: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    let p = PathBuf::from(v.get(DEMO_PI_KEY)?.as_str()?);
    (p.is_absolute() && p.is_file()).then_some(p)
}

/// The argv that starts one simulated worker (or, with the `coordinator` scenario, the
/// simulated coordinator, whose pane shows the instructions).
pub(crate) fn agent_command(
    layout: &DemoLayout,
    w: &DemoWorker,
    id: &str,
    port: u16,
    prefix: &str,
) -> Vec<String> {
    let exe = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "intercom-pane".into());
    let stamp = format_iso(SystemClock.now_ms()).replace([':', '.'], "-");
    let file = layout
        .sessions
        .join("--demo--")
        .join(format!("{stamp}_{id}.jsonl"));
    let mut argv = vec![
        exe,
        "demo-agent".into(),
        "--session-id".into(),
        id.into(),
        "--session-file".into(),
        file.display().to_string(),
        "--cwd".into(),
        layout.root.display().to_string(),
        "--root".into(),
        layout.root.display().to_string(),
        "--port".into(),
        port.to_string(),
        "--scenario".into(),
        w.scenario.into(),
        "--step".into(),
        w.step_secs.to_string(),
        "--lifetime".into(),
        w.lifetime_secs.unwrap_or(3600).to_string(),
        "--register-config".into(),
        layout.base.join("system.json").display().to_string(),
    ];
    if w.name == "Coordinator" {
        argv.extend(["--banner".into(), instructions(prefix)]);
    }
    if let Some(secs) = w.lifetime_secs {
        argv.extend([
            "--end-reason".into(),
            format!(
                "The demo ends {}'s pi after {secs} s, to show a seat that went offline.",
                w.name
            ),
        ]);
    }
    argv
}

/// The coordinator, simulated like the workers: one finished turn, then idle.
const COORDINATOR: DemoWorker = DemoWorker {
    name: "Coordinator",
    description: "",
    scenario: "coordinator",
    step_secs: 2,
    lifetime_secs: None,
};

/// Why the demo's private tmux server could not be built: the tmux step that failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TmuxStepFailed(pub String);

impl std::fmt::Display for TmuxStepFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&crate::text::sanitize(&self.0))
    }
}

impl std::error::Error for TmuxStepFailed {}

/// Start the private tmux server: a `Coordinator` session with a shell, one session per worker
/// named like it, running the simulated agent (its pane command is `pi`).
fn start_tmux(
    layout: &DemoLayout,
    workers: &[DemoSeat],
    size: (u16, u16),
    prefix: &str,
) -> Result<PrivateServer, TmuxStepFailed> {
    let sock = layout.base.join("tmux.sock");
    // The coordinator's pane runs the startup hook first, as the pi extension would, then the
    // simulated coordinator pi, which prints the instructions.
    let exe = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "intercom-pane".into());
    let agent = agent_command(
        layout,
        &COORDINATOR,
        &layout.coordinator_id,
        layout.coordinator_port,
        prefix,
    );
    let hook = format!(
        "{} ensure-monitor --root {} --config {} >/dev/null; exec {}",
        crate::mux::shell_quote(&exe),
        crate::mux::shell_quote(&layout.root.display().to_string()),
        crate::mux::shell_quote(&layout.base.join("system.json").display().to_string()),
        crate::mux::shell_line(&agent),
    );
    // `/bin/sh`, not a `sh` looked up on the person's PATH.
    let coordinator = ["/bin/sh".to_string(), "-c".to_string(), hook];
    let server = PrivateServer::start(&sock, "Coordinator", &layout.root, size, &coordinator)
        .map_err(|e| TmuxStepFailed(e.to_string()))?;
    // The keys stay on screen in the status line; the session name is not cut.
    for (k, v) in [
        ("status-left-length", "20"),
        ("status-right-length", "100"),
        ("status-right", &status_keys(prefix)),
        ("prefix", prefix),
        ("status-style", "bg=blue,fg=white"),
        // The sidebar's title shows whether it has the keyboard.
        ("focus-events", "on"),
        // The demo's simulated seats stay in the demo: no desktop notifications for them.
        ("@intercom-pane-alert-desktop", "off"),
    ] {
        server
            .set_global_option(k, v)
            .map_err(|e| TmuxStepFailed(e.to_string()))?;
    }
    for (w, (name, id, port)) in WORKERS.iter().zip(workers) {
        let argv = agent_command(layout, w, id, *port, prefix);
        server
            .new_session(name, &layout.root, &argv)
            .map_err(|e| TmuxStepFailed(e.to_string()))?;
        if w.lifetime_secs.is_some() {
            // Keep the pane after the agent exits: it then shows as offline, not gone.
            server
                .set_window_option(name, "remain-on-exit", "on")
                .map_err(|e| TmuxStepFailed(e.to_string()))?;
        }
    }
    Ok(server)
}

/// The demo's end, however it comes: the watchdog is told (its lifeline closed) and confirms
/// that everything is gone; if it cannot (it was killed), the demo removes what it can itself.
fn finish(watchdog: &Watchdog, base: &Path, keep: bool) {
    if !watchdog.finish() {
        PrivateServer {
            socket: base.join("tmux.sock"),
        }
        .kill();
        if !keep {
            watchdog::remove_folder(base);
        }
    }
    if keep {
        say(&format!(
            "intercom-pane demo: ended; its files are kept in {} (its tmux server and simulated agents are gone)",
            base.display()
        ));
    } else {
        say("intercom-pane demo: ended; its tmux server, simulated agents and files are removed.");
    }
    say(NEXT);
}

/// What to do after the demo, said when it ends.
const NEXT: &str = "Next: run your own coordinator and workers (README, \"Setup\"), then check every link with `intercom-pane doctor`.";

/// A line on stdout that may fail (a closed pipe) without stopping anything.
fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}").and_then(|_| out.flush());
}

/// A line on stderr, likewise.
fn warn(line: &str) {
    let _ = writeln!(std::io::stderr(), "intercom-pane demo: {line}");
}

/// Clean up when the demo's terminal goes away or it is told to stop (SIGHUP, SIGTERM, SIGINT,
/// or its parent ending: `PR_SET_PDEATHSIG` turns that into SIGHUP). The signals were blocked
/// before anything started; a waiting thread takes them, lets the watchdog clean up and exits.
fn clean_up_on_signal(watchdog: Arc<Watchdog>, base: PathBuf, keep: bool) {
    let set = watchdog::quit_signals();
    std::thread::spawn(move || {
        if let Ok(sig) = set.wait() {
            finish(&watchdog, &base, keep);
            std::process::exit(128 + sig as i32);
        }
    });
}

pub(crate) fn run(args: &DemoArgs) -> i32 {
    // Blocked before any thread or child exists: every thread inherits the mask, so only the
    // signal thread takes them; children unblock them again.
    if watchdog::quit_signals().thread_block().is_err() {
        warn("cannot block the quit signals; not starting");
        return 1;
    }
    let parent = nix::unistd::getppid();
    let _ = nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGHUP);
    if nix::unistd::getppid() != parent {
        let _ = nix::sys::signal::raise(nix::sys::signal::Signal::SIGHUP);
    }
    let base = std::env::temp_dir().join(format!("intercom-pane-demo-{}", uuid::Uuid::new_v4()));
    let (layout, workers) = plan(&base);
    let interactive =
        !args.print && std::io::stdout().is_terminal() && std::io::stdin().is_terminal();
    let inside_tmux = std::env::var_os("TMUX").is_some_and(|v| !v.is_empty());
    let prefix = if interactive && inside_tmux {
        demo_prefix(true, crate::mux::session::person_prefix().as_deref())
    } else {
        demo_prefix(false, None)
    };
    let watchdog = match Watchdog::start(&layout, &workers, args.keep, prefix) {
        Ok(w) => Arc::new(w),
        Err(e) => {
            warn(&e.to_string());
            return 1;
        }
    };
    clean_up_on_signal(watchdog.clone(), base.clone(), args.keep);
    let code = match watchdog.wait_ready() {
        Err(e) => {
            warn(&e.to_string());
            1
        }
        Ok(()) => {
            let server = PrivateServer {
                socket: base.join("tmux.sock"),
            };
            if interactive {
                attach_with_monitor(&server, prefix)
            } else {
                print_passes(&layout, &server.socket, args)
            }
        }
    };
    finish(&watchdog, &base, args.keep);
    code
}

fn attach_with_monitor(server: &PrivateServer, prefix: &str) -> i32 {
    // The instructions are in the coordinator's pane and the status line once attached.
    say(&format!(
        "intercom-pane demo: attaching to a private tmux server ({}); its prefix key is {prefix}",
        server.socket.display()
    ));
    std::thread::sleep(Duration::from_millis(300));
    match server.attach("Coordinator") {
        Ok(_) => 0,
        Err(e) => {
            warn(&format!("cannot attach: {e}"));
            1
        }
    }
}

/// Print the board pass after pass; a closed output (`demo --print | head`) ends it cleanly.
fn print_passes(layout: &DemoLayout, sock: &Path, args: &DemoArgs) -> i32 {
    let head = format!(
        "demo root: {}\ntmux server: tmux -S {} attach\n",
        layout.root.display(),
        sock.display()
    );
    if write_out(&head).is_err() {
        return 0;
    }
    let opts = ScanOptions {
        data_root: layout.data_root.clone(),
        root: RootChoice::Exact(layout.root.clone()),
        repo: None,
        fleet: None,
        session_dirs: vec![layout.sessions.clone()],
        liveness: LivenessMode::Tmux,
        tmux_socket: Some(sock.to_path_buf()),
        usage_reads: crate::evidence::sessions::usage::ONE_SHOT_BUDGET,
        kept_panes: None,
    };
    // Pass after pass, like the sidebar: what was read is kept for the next.
    let memory = crate::evidence::ScanMemory::new();
    let mut pass = 0u32;
    loop {
        let pause = if pass == 0 { 1 } else { args.interval.max(1) };
        std::thread::sleep(Duration::from_secs(pause));
        pass += 1;
        let s = match scan::run(&opts, &SystemClock, None, Some(&memory)) {
            Ok(s) => s,
            Err(e) => {
                warn(&format!("scan refused: {e}"));
                return 2;
            }
        };
        let board = crate::views::board_files::write_board(&s)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|e| format!("(not written: {e})"));
        let text = format!(
            "\n— pass {pass} at {} —\n{}",
            format_iso(SystemClock.now_ms()),
            print::print_table(&s.records, &board)
        );
        if write_out(&text).is_err() {
            // Nobody reads any more: the demo is over, nothing to complain about.
            return 0;
        }
        if args.passes != 0 && pass >= args.passes {
            return 0;
        }
    }
}

/// Write to stdout and flush, reporting a closed pipe instead of panicking on it.
fn write_out(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_demo_prefix_is_c_b_outside_tmux_and_never_the_persons_inside() {
        assert_eq!(demo_prefix(false, None), "C-b");
        assert_eq!(demo_prefix(true, Some("C-b")), "C-a");
        assert_eq!(demo_prefix(true, None), "C-a");
        assert_eq!(demo_prefix(true, Some("C-a")), "C-b");
        assert_eq!(instructions("C-b"), INSTRUCTIONS);
        let inside = instructions("C-a");
        assert!(!inside.contains("C-b") && inside.contains("C-a Up selects the sidebar"));
        assert!(!status_keys("C-a").contains("C-b"));
        // The sidebar's key line fits beside the session name in 80 columns.
        let keys = status_keys("C-b");
        let here = keys.split(',').nth(1).unwrap_or_default();
        assert!(here.starts_with(" C-b Up: sidebar"), "{keys}");
        assert!(
            here.chars().count() <= 80 - "[Coordinator] ".len(),
            "{here}"
        );
    }
}
