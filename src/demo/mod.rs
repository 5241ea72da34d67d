//! `intercom-pane demo`: a realistic coordinator root in a temporary folder, simulated workers
//! that write pi-shaped sessions, observation logs and reports and answer health checks, and the
//! board shown pass after pass. No pi needed.

pub mod agent;

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::Duration;

use serde_json::json;

use crate::cli::DemoArgs;
use crate::clock::{format_iso, Clock, SystemClock};
use crate::liveness::LivenessMode;
use crate::scan::{self, RootChoice, ScanOptions};
use crate::views::print;

/// One simulated worker of the demo roster.
pub struct DemoWorker {
    pub name: &'static str,
    pub description: &'static str,
    pub scenario: &'static str,
    pub step_secs: u64,
}

pub const WORKERS: [DemoWorker; 4] = [
    DemoWorker {
        name: "Builder",
        description: "Owns the build scripts and CI.",
        scenario: "cycle",
        step_secs: 3,
    },
    DemoWorker {
        name: "Reviewer",
        description: "Reviews pull requests.",
        scenario: "waiting",
        step_secs: 2,
    },
    DemoWorker {
        name: "Docs",
        description: "Keeps the documentation current.",
        scenario: "tool",
        step_secs: 5,
    },
    DemoWorker {
        name: "Release",
        description: "Cuts releases.",
        scenario: "error",
        step_secs: 4,
    },
];

/// The folders of a demo setup.
pub struct DemoLayout {
    pub base: PathBuf,
    pub root: PathBuf,
    pub sessions: PathBuf,
    pub data_root: PathBuf,
}

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
    for d in [&root.join(".pi-intercom/logs"), &sessions, &data_root] {
        std::fs::create_dir_all(d)?;
    }
    let mut agents = vec![json!({
        "sessionId": uuid::Uuid::new_v4().to_string(), "name": "Coordinator", "coordinator": true,
        "description": "Coordinate workers, delegate work, and manage shared configuration.",
        "port": free_port().max(1), "projectDirectory": "."})];
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
    let cfg = json!({"version": 1, "multiplexer": "tmux", "agents": agents});
    std::fs::write(
        root.join(".pi-intercom/config.json"),
        serde_json::to_string_pretty(&cfg)? + "\n",
    )?;
    Ok((
        DemoLayout {
            base: base.to_path_buf(),
            root,
            sessions,
            data_root,
        },
        out,
    ))
}

/// The argv that starts one simulated worker.
pub fn agent_command(layout: &DemoLayout, w: &DemoWorker, id: &str, port: u16) -> Vec<String> {
    let exe = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "intercom-pane".into());
    let stamp = format_iso(SystemClock.now_ms()).replace([':', '.'], "-");
    let file = layout
        .sessions
        .join("--demo--")
        .join(format!("{stamp}_{id}.jsonl"));
    vec![
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
    ]
}

pub fn run(args: &DemoArgs) -> i32 {
    let base = std::env::temp_dir().join(format!("intercom-pane-demo-{}", uuid::Uuid::new_v4()));
    let (layout, workers) = match setup(&base) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("intercom-pane demo: cannot set up {}: {e}", base.display());
            return 1;
        }
    };
    let mut children: Vec<Child> = Vec::new();
    for (w, (_, id, port)) in WORKERS.iter().zip(&workers) {
        let argv = agent_command(&layout, w, id, *port);
        match Command::new(&argv[0]).args(&argv[1..]).spawn() {
            Ok(c) => children.push(c),
            Err(e) => eprintln!("intercom-pane demo: cannot start {}: {e}", w.name),
        }
    }
    println!("demo root: {}", layout.root.display());
    let opts = ScanOptions {
        data_root: layout.data_root.clone(),
        root: RootChoice::Exact(layout.root.clone()),
        repo: None,
        fleet: None,
        session_dirs: vec![layout.sessions.clone()],
        liveness: LivenessMode::AssumeAlive,
        tmux_socket: None,
    };
    let mut pass = 0u32;
    let code = loop {
        std::thread::sleep(Duration::from_millis(if pass == 0 {
            700
        } else {
            args.interval.max(1) * 1000
        }));
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
                break 2;
            }
        }
        if args.passes != 0 && pass >= args.passes {
            break 0;
        }
    };
    for c in &mut children {
        let _ = c.kill();
        let _ = c.wait();
    }
    if !args.keep {
        let _ = std::fs::remove_dir_all(&layout.base);
    } else {
        println!("kept: {}", layout.base.display());
    }
    code
}
