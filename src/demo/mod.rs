//! `intercom-pane demo`: a realistic coordinator root in a temporary folder, simulated workers
//! that write pi-shaped sessions, observation logs and reports and answer health checks, and the
//! board shown pass after pass. No pi needed.

pub mod agent;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;

use crate::cli::DemoArgs;
use crate::clock::{format_iso, Clock, SystemClock};
use crate::liveness::LivenessMode;
use crate::mux::session::PrivateServer;
use crate::scan::{self, RootChoice, ScanOptions};
use crate::views::print;

/// One simulated worker of the demo roster.
pub struct DemoWorker {
    pub name: &'static str,
    pub description: &'static str,
    pub scenario: &'static str,
    pub step_secs: u64,
    /// The simulated agent exits after this long (its pane then runs nothing: offline).
    pub lifetime_secs: Option<u64>,
}

pub const WORKERS: [DemoWorker; 4] = [
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
pub struct DemoLayout {
    pub base: PathBuf,
    pub root: PathBuf,
    pub sessions: PathBuf,
    pub data_root: PathBuf,
    pub coordinator_id: String,
    pub coordinator_port: u16,
}

/// What the demo is and which keys to press: printed in the coordinator's pane and kept short
/// enough for a 120×40 terminal. The status line repeats the keys.
pub const INSTRUCTIONS: &str = "\
intercom-pane demo: a coordinator (this pane, a simulated pi) and four simulated pi workers
in a private tmux server. The sidebar above shows them, refreshed every few seconds:
  Builder cycles through work, Reviewer waits for your answer, Docs runs a tool,
  Release hits a provider error and its pi exits after 25 s (it then reads offline).
Keys: C-b Up selects the sidebar; there j/k move, r replies to the selected worker
(try Reviewer: type staging, Enter), Enter shows details, q quits the sidebar.
C-b d leaves the demo; everything it started is removed.";

/// The keys, for the tmux status line.
const STATUS_KEYS: &str =
    " C-b Up: sidebar | r: reply | Enter: details | q: quit sidebar | C-b d: leave demo ";

/// A free loopback port (bound, then released for the agent to take).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(0)
}

/// Create the root, config and folders; returns the layout and (name, session id, port) per worker.
/// (name, session id, port) of one configured demo worker.
pub type DemoSeat = (String, String, u16);

pub fn setup(base: &Path) -> std::io::Result<(DemoLayout, Vec<DemoSeat>)> {
    let root = base.join("coordinator");
    let sessions = base.join("pi-agent").join("sessions");
    let data_root = base.join("state");
    for d in [&crate::paths::logs_dir(&root), &sessions, &data_root] {
        std::fs::create_dir_all(d)?;
    }
    let coordinator_id = uuid::Uuid::new_v4().to_string();
    let coordinator_port = free_port().max(1);
    let mut agents = vec![json!({
        "sessionId": coordinator_id, "name": "Coordinator", "coordinator": true,
        "description": "Coordinate workers, delegate work, and manage shared configuration.",
        "port": coordinator_port, "projectDirectory": "."})];
    let mut out = Vec::new();
    for w in &WORKERS {
        let id = uuid::Uuid::new_v4().to_string();
        let port = free_port().max(1);
        agents.push(
            json!({"sessionId": id, "name": w.name, "coordinator": false,
            "description": w.description, "port": port, "projectDirectory": "."}),
        );
        out.push((w.name.to_string(), id, port));
    }
    std::fs::write(
        base.join("system.json"),
        json!({"dataRoot": data_root.display().to_string(),
            "sessionDirs": [sessions.display().to_string()]})
        .to_string(),
    )?;
    let cfg = json!({"version": 1, "multiplexer": "tmux", "agents": agents});
    std::fs::write(
        crate::paths::config_file(&root),
        serde_json::to_string_pretty(&cfg)? + "\n",
    )?;
    Ok((
        DemoLayout {
            base: base.to_path_buf(),
            root,
            sessions,
            data_root,
            coordinator_id,
            coordinator_port,
        },
        out,
    ))
}

/// The argv that starts one simulated worker (or, with the `coordinator` scenario, the
/// simulated coordinator, whose pane shows the instructions).
pub fn agent_command(layout: &DemoLayout, w: &DemoWorker, id: &str, port: u16) -> Vec<String> {
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
        argv.extend(["--banner".into(), INSTRUCTIONS.into()]);
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

/// Everything the demo started, torn down on drop: the private tmux server (and with it the
/// simulated agents, which live in its panes) and, unless kept, the temporary folder.
struct Demo {
    layout: DemoLayout,
    server: Option<PrivateServer>,
    keep: bool,
}

impl Drop for Demo {
    fn drop(&mut self) {
        if let Some(s) = &self.server {
            s.kill();
        }
        if self.keep {
            println!("kept: {}", self.layout.base.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.layout.base);
        }
    }
}

/// Why the demo's private tmux server could not be built: the tmux step that failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TmuxStepFailed(pub String);

impl std::fmt::Display for TmuxStepFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&crate::text::sanitize(&self.0))
    }
}

impl std::error::Error for TmuxStepFailed {}

/// Start the private tmux server: a `Coordinator` session with a shell, one session per worker
/// named like it, running the simulated agent (its pane command is `pi`).
fn start_tmux(layout: &DemoLayout, workers: &[DemoSeat]) -> Result<PrivateServer, TmuxStepFailed> {
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
    );
    let hook = format!(
        "{} ensure-monitor --root {} --config {} >/dev/null; exec {}",
        crate::mux::shell_quote(&exe),
        crate::mux::shell_quote(&layout.root.display().to_string()),
        crate::mux::shell_quote(&layout.base.join("system.json").display().to_string()),
        crate::mux::shell_line(&agent),
    );
    let coordinator = ["sh".to_string(), "-c".to_string(), hook];
    let server = PrivateServer::start(&sock, "Coordinator", &layout.root, (160, 45), &coordinator)
        .map_err(|e| TmuxStepFailed(e.to_string()))?;
    // The keys stay on screen in the status line; the session name is not cut.
    for (k, v) in [
        ("status-left-length", "20"),
        ("status-right-length", "100"),
        ("status-right", STATUS_KEYS),
        ("status-style", "bg=blue,fg=white"),
    ] {
        server
            .set_global_option(k, v)
            .map_err(|e| TmuxStepFailed(e.to_string()))?;
    }
    for (w, (name, id, port)) in WORKERS.iter().zip(workers) {
        let argv = agent_command(layout, w, id, *port);
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

/// Clean up when the demo's terminal goes away or it is told to stop (SIGHUP, SIGTERM, SIGINT):
/// the signals are blocked here and taken by a waiting thread, which kills the private server,
/// removes the folder and exits. Must run before any other thread starts.
fn clean_up_on_signal(socket: PathBuf, base: PathBuf, keep: bool) {
    use nix::sys::signal::{SigSet, Signal};
    let mut set = SigSet::empty();
    for s in [Signal::SIGHUP, Signal::SIGTERM, Signal::SIGINT] {
        set.add(s);
    }
    if set.thread_block().is_err() {
        return;
    }
    std::thread::spawn(move || {
        if let Ok(sig) = set.wait() {
            // Never race a half-built setup: a new-session after kill-server would start a
            // fresh server.
            let _setup = SETUP.lock();
            PrivateServer { socket }.kill();
            if !keep {
                // The agents die with their server (SIGHUP); give them a moment to stop
                // writing before the folder goes. Bounded: three tries.
                for _ in 0..3 {
                    std::thread::sleep(Duration::from_millis(150));
                    if std::fs::remove_dir_all(&base).is_ok() {
                        break;
                    }
                }
            }
            std::process::exit(128 + sig as i32);
        }
    });
}

/// Held while the demo builds its server, so the signal thread cleans up only before or after.
static SETUP: std::sync::Mutex<()> = std::sync::Mutex::new(());

pub fn run(args: &DemoArgs) -> i32 {
    let base = std::env::temp_dir().join(format!("intercom-pane-demo-{}", uuid::Uuid::new_v4()));
    let (layout, workers) = match setup(&base) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("intercom-pane demo: cannot set up {}: {e}", base.display());
            return 1;
        }
    };
    clean_up_on_signal(
        layout.base.join("tmux.sock"),
        layout.base.clone(),
        args.keep,
    );
    let mut demo = Demo {
        layout,
        server: None,
        keep: args.keep,
    };
    let setup = SETUP.lock();
    let started = start_tmux(&demo.layout, &workers);
    drop(setup);
    let server = match started {
        Ok(s) => s,
        Err(e) => {
            eprintln!("intercom-pane demo: {e}");
            return 1;
        }
    };
    let sock = server.socket.clone();
    demo.server = Some(server);
    let interactive =
        !args.print && std::io::stdout().is_terminal() && std::io::stdin().is_terminal();
    if interactive {
        return attach_with_monitor(&demo, &sock);
    }
    print_passes(&demo.layout, &sock, args)
}

fn attach_with_monitor(demo: &Demo, sock: &Path) -> i32 {
    let Some(server) = &demo.server else { return 1 };
    // The instructions are in the coordinator's pane and the status line once attached.
    println!(
        "intercom-pane demo: attaching to a private tmux server ({})",
        sock.display()
    );
    std::thread::sleep(Duration::from_millis(300));
    match server.attach("Coordinator") {
        Ok(_) => 0,
        Err(e) => {
            eprintln!("intercom-pane demo: cannot attach: {e}");
            1
        }
    }
}

fn print_passes(layout: &DemoLayout, sock: &Path, args: &DemoArgs) -> i32 {
    println!("demo root: {}", layout.root.display());
    println!("tmux server: tmux -S {} attach", sock.display());
    let opts = ScanOptions {
        data_root: layout.data_root.clone(),
        root: RootChoice::Exact(layout.root.clone()),
        repo: None,
        fleet: None,
        session_dirs: vec![layout.sessions.clone()],
        liveness: LivenessMode::Tmux,
        tmux_socket: Some(sock.to_path_buf()),
        kept_panes: None,
    };
    let mut pass = 0u32;
    loop {
        let pause = if pass == 0 { 1 } else { args.interval.max(1) };
        std::thread::sleep(Duration::from_secs(pause));
        pass += 1;
        match scan::run(&opts, &SystemClock, None) {
            Ok(s) => {
                let board = crate::views::board_files::write_board(&s)
                    .map(|p| p.display().to_string())
                    .unwrap_or_else(|e| format!("(not written: {e})"));
                println!("\n— pass {pass} at {} —", format_iso(SystemClock.now_ms()));
                print!("{}", print::print_table(&s.records, &board));
            }
            Err(e) => {
                eprintln!("intercom-pane demo: scan refused: {e}");
                return 2;
            }
        }
        if args.passes != 0 && pass >= args.passes {
            return 0;
        }
    }
}
