//! Test support for the live engine: a fleet of workers with real session files, each with a
//! process the pi check accepts in its own tmux session; the engine's passes until a state shows.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::mux_support::{program_named, TmuxServer};
use intercom_pane::seam::clock::SystemClock;
use intercom_pane::seam::live::board::{BoardPass, BoardPasses};
use intercom_pane::seam::live::{Engine, Settings, Wake};
use intercom_pane::seam::scan::{RootChoice, Scan, ScanOptions};
use serde_json::json;

const BOUND: Duration = Duration::from_secs(20);

pub struct Fleet {
    pub tmp: tempfile::TempDir,
    /// The Intercom root (roster fleets) or the checkout (layout fleets).
    pub root: PathBuf,
    pub sessions: PathBuf,
    pub data: PathBuf,
    /// Each worker's session folder (all `sessions` for a roster fleet).
    pub dirs: Vec<PathBuf>,
    /// Layout seats (`<root>/.pi/state/w<i>/sessions`, no roster) instead of a roster.
    pub layout: bool,
    /// argv that runs a process the pi check accepts, for a session id.
    node: String,
    cli: String,
}

pub fn sid(i: usize) -> String {
    format!("01a2f000-0000-7000-8000-{i:012}")
}

fn transcript(i: usize) -> String {
    [
        json!({"type":"session","version":3,"id":sid(i),"timestamp":"2026-11-29T23:00:00.000Z","cwd":"/w"}),
        json!({"type":"message","id":"a1","parentId":null,"timestamp":"2026-11-29T23:00:01.000Z",
            "message":{"role":"user","content":"Do the thing."}}),
        json!({"type":"message","id":"a2","parentId":"a1","timestamp":"2026-11-29T23:00:02.000Z",
            "message":{"role":"assistant","content":[{"type":"text","text":"Input needed: which?"}],
            "provider":"p","model":"m","stopReason":"stop"}}),
    ]
    .iter()
    .map(|l| format!("{l}\n"))
    .collect()
}

impl Fleet {
    /// Control-board seats of a checkout: `<root>/.pi/state/w<i>/sessions`, each alive while its
    /// tmux session `w<i>` runs its pi (offline when that session is gone).
    pub fn layout(workers: usize) -> Fleet {
        let mut f = Fleet::new(0);
        f.layout = true;
        for i in 0..workers {
            let d = f
                .root
                .join(".pi/state")
                .join(format!("w{i}"))
                .join("sessions");
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(Fleet::file_in(&d, i), transcript(i)).unwrap();
            f.dirs.push(d);
        }
        // No roster: the checkout's own `.pi-intercom` would make one.
        std::fs::remove_dir_all(f.root.join(".pi-intercom")).unwrap();
        f
    }

    pub fn new(workers: usize) -> Fleet {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        let sessions = tmp.path().join("sessions");
        let data = tmp.path().join("data");
        for d in [&root.join(".pi-intercom"), &sessions, &data] {
            std::fs::create_dir_all(d).unwrap();
        }
        let mut agents = vec![json!({"sessionId": "coord", "name": "Coordinator",
            "coordinator": true, "description": "C.", "port": 1, "projectDirectory": "."})];
        for i in 0..workers {
            agents.push(json!({"sessionId": sid(i), "name": format!("w{i}"),
                "coordinator": false, "description": "W.", "port": 2, "projectDirectory": "."}));
            std::fs::write(Fleet::file_in(&sessions, i), transcript(i)).unwrap();
        }
        std::fs::write(
            root.join(".pi-intercom/config.json"),
            json!({"version": 1, "agents": agents}).to_string(),
        )
        .unwrap();
        let bin = tmp.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let node = program_named("/bin/bash", &bin.join("node"));
        let cli = bin.join("lib/node_modules/@earendil-works/pi-coding-agent/dist/cli.js");
        std::fs::create_dir_all(cli.parent().unwrap()).unwrap();
        std::fs::write(&cli, "sleep 3600\n").unwrap();
        Fleet {
            dirs: vec![sessions.clone(); workers],
            layout: false,
            root,
            sessions,
            data,
            node: node.display().to_string(),
            cli: cli.display().to_string(),
            tmp,
        }
    }

    fn file_in(dir: &Path, i: usize) -> PathBuf {
        dir.join(format!("2026-11-29T23-00-00-000Z_{}.jsonl", sid(i)))
    }

    pub fn file(&self, i: usize) -> PathBuf {
        Fleet::file_in(&self.dirs[i], i)
    }

    /// A process the pi check accepts, for worker `i` (pi's title, a JS runtime, pi's script).
    pub fn pi_argv(&self, i: usize) -> Vec<String> {
        [
            "bash",
            "-c",
            "exec -a pi \"$@\"",
            "pi",
            &self.node,
            &self.cli,
            "--session-dir",
        ]
        .iter()
        .map(|a| a.to_string())
        .chain([
            self.dirs[i].display().to_string(),
            "--session-id".into(),
            sid(i),
        ])
        .collect()
    }

    /// A tmux server with one session per worker (`w<i>`), each running its pi: returned once
    /// every pane's process is its pi (on a loaded machine a pane can still be the `bash` that
    /// is about to exec it, which the pi check rightly refuses).
    pub fn tmux(&self, workers: usize) -> TmuxServer {
        let a = self.pi_argv(0);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let server = TmuxServer::start("w0", self.tmp.path(), &a);
        for i in 1..workers {
            let a = self.pi_argv(i);
            let a: Vec<&str> = a.iter().map(String::as_str).collect();
            server.new_session(&format!("w{i}"), self.tmp.path(), &a);
        }
        for i in 0..workers {
            self.await_pi(&server, &format!("=w{i}:"));
        }
        server
    }

    /// Wait (bounded) until the pane `target` runs a pi of this fleet: its process shows pi's
    /// title and pi's script.
    pub fn await_pi(&self, server: &TmuxServer, target: &str) {
        let pid = server.tmux(&["display-message", "-p", "-t", target, "#{pane_pid}"]);
        let cmdline = format!("/proc/{}/cmdline", pid.trim());
        crate::mux_support::wait_for(BOUND.as_millis() as u64, || {
            let argv = std::fs::read(&cmdline).ok()?;
            let mut args = argv.split(|b| *b == 0);
            (args.next() == Some(b"pi".as_slice()) && args.any(|a| a == self.cli.as_bytes()))
                .then_some(())
        })
        .unwrap_or_else(|| panic!("{target} never ran its pi: {:?}", std::fs::read(&cmdline)));
    }

    pub fn opts(&self, sock: &Path) -> ScanOptions {
        ScanOptions {
            data_root: self.data.clone(),
            root: if self.layout {
                RootChoice::Skip
            } else {
                RootChoice::Exact(self.root.clone())
            },
            repo: self.layout.then(|| self.root.clone()),
            fleet: None,
            session_dirs: vec![self.sessions.clone()],
            liveness: intercom_pane::seam::liveness::LivenessMode::Tmux,
            tmux_socket: Some(sock.to_path_buf()),
            kept_panes: None,
            usage_reads: intercom_pane::seam::evidence::sessions::usage::ONE_SHOT_BUDGET,
        }
    }

    /// Append a user message (the `n`th, `n` seconds after the first): the worker is working from
    /// then on, and its record changes with each one.
    pub fn start_turn(&self, i: usize, n: usize) {
        let at = intercom_pane::seam::clock::format_iso(
            intercom_pane::seam::clock::parse_iso("2026-11-29T23:01:00.000Z").unwrap()
                + n as i64 * 1000,
        );
        self.append(
            i,
            &json!({"type":"message","id":format!("u{n}"),"parentId":"a2",
            "timestamp":at,"message":{"role":"user","content":"Go on."}}),
        );
    }

    /// Append an assistant reply asking for input (after `start_turn(i, n)`): waiting again.
    pub fn ask(&self, i: usize, n: usize) {
        let at = intercom_pane::seam::clock::format_iso(
            intercom_pane::seam::clock::parse_iso("2026-11-29T23:01:00.500Z").unwrap()
                + n as i64 * 1000,
        );
        self.append(
            i,
            &json!({"type":"message","id":format!("r{n}"),"parentId":format!("u{n}"),
            "timestamp":at,"message":{"role":"assistant","content":[{"type":"text","text":"Input needed: which?"}],
            "provider":"p","model":"m","stopReason":"stop"}}),
        );
    }

    /// One complete line appended in one write, as pi appends.
    pub fn append(&self, i: usize, line: &serde_json::Value) {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(self.file(i))
            .unwrap();
        f.write_all(format!("{line}\n").as_bytes()).unwrap();
    }
}

impl Fleet {
    /// Start the real sidebar over this fleet in session `mon` of `server` (its own data root
    /// and HOME, no probes), with `env` before it and `extra` flags after its own.
    pub fn start_monitor(&self, server: &TmuxServer, env: &[String], extra: &[&str]) {
        self.start_monitor_with(server, env, extra, false);
    }

    /// `start_monitor`, probing the workers' ports when `probe`.
    pub fn start_monitor_with(
        &self,
        server: &TmuxServer,
        env: &[String],
        extra: &[&str],
        probe: bool,
    ) {
        let sys = self.tmp.path().join("sys.json");
        std::fs::write(&sys, json!({"dataRoot": self.data}).to_string()).unwrap();
        let home = self.tmp.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        let mut argv: Vec<String> = vec!["env".into(), format!("HOME={}", home.display())];
        argv.extend(env.iter().cloned());
        argv.extend(
            [
                "TERM=xterm-256color",
                env!("CARGO_BIN_EXE_intercom-pane"),
                "monitor",
                "--config",
                &sys.display().to_string(),
                "--root",
                &self.root.display().to_string(),
                "--sessions-dir",
                &self.sessions.display().to_string(),
                "--fleet",
                "none",
                "--tmux-socket",
                &server.sock.display().to_string(),
            ]
            .iter()
            .chain((!probe).then_some(&"--no-probe"))
            .chain(extra)
            .map(|a| a.to_string()),
        );
        let a: Vec<&str> = argv.iter().map(String::as_str).collect();
        server.new_session("mon", &self.root, &a);
    }
}

/// The board's passes on their own (a test drives them by hand).
pub fn board_passes(opts: ScanOptions) -> BoardPasses {
    let memory = Arc::new(intercom_pane::seam::evidence::ScanMemory::new());
    BoardPasses::new(opts, Arc::new(SystemClock), memory)
}

pub fn engine(opts: ScanOptions, settings: Settings) -> Engine<BoardPasses> {
    let memory = Arc::new(intercom_pane::seam::evidence::ScanMemory::new());
    Engine::new(
        BoardPasses::new(opts, Arc::new(SystemClock), memory),
        settings,
    )
    .unwrap()
}

pub fn state(scan: &Scan, agent: &str) -> String {
    scan.records
        .iter()
        .find(|r| r.agent == agent)
        .map(|r| format!("{}/{}", r.state.as_str(), r.state_reason))
        .unwrap_or_else(|| "absent".into())
}

/// Passes as the engine asks for them, until `pred` holds (bounded); the passes it took.
pub fn until(e: &mut Engine<BoardPasses>, pred: impl Fn(&Scan) -> bool) -> (Scan, usize) {
    let end = Instant::now() + BOUND;
    let mut n = 0;
    let mut last = String::new();
    loop {
        assert!(
            Instant::now() < end,
            "no pass showed it in time; last: {last}"
        );
        match e.wait(Some(end)) {
            Wake::Pass => {
                n += 1;
                let scan = match e.pass() {
                    BoardPass::Scanned(scan) => scan.unwrap(),
                    BoardPass::Same { .. } => {
                        last.push_str(" (the timer's check: same)");
                        continue;
                    }
                };
                if pred(&scan) {
                    return (scan, n);
                }
                last = scan
                    .records
                    .iter()
                    .map(|r| format!("{}={}/{}", r.agent, r.state.as_str(), r.state_reason))
                    .collect::<Vec<_>>()
                    .join(" ");
                last.push_str(&format!(" why={:?}", e.last_why().reasons));
            }
            Wake::Timer => {}
            Wake::Stop => panic!("stopped"),
        }
    }
}

/// No pass is asked for within `d`.
pub fn quiet(e: &mut Engine<BoardPasses>, d: Duration) -> bool {
    e.wait(Some(Instant::now() + d)) == Wake::Timer
}
