//! The live engine on real files and a real tmux server: a transcript line, a pi's exit and a
//! window opened each wake one pass at once; nothing runs while nothing changes; a session
//! folder deleted and made again, or replaced by a link, is watched again (or refused) and the
//! board is right after one pass.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::mux_support::{program_named, TmuxServer};
use intercom_pane::clock::SystemClock;
use intercom_pane::live::board::BoardPasses;
use intercom_pane::live::{Engine, Settings, Wake};
use intercom_pane::scan::{RootChoice, Scan, ScanOptions};
use serde_json::json;

const BOUND: Duration = Duration::from_secs(20);

pub struct Fleet {
    pub tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub sessions: PathBuf,
    pub data: PathBuf,
    /// argv that runs a process the pi check accepts, for a session id.
    node: String,
    cli: String,
}

pub fn sid(i: usize) -> String {
    format!("01a2f000-0000-7000-8000-{i:012}")
}

impl Fleet {
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
            let body = [
                json!({"type":"session","version":3,"id":sid(i),"timestamp":"2026-11-29T23:00:00.000Z","cwd":"/w"}),
                json!({"type":"message","id":"a1","parentId":null,"timestamp":"2026-11-29T23:00:01.000Z",
                    "message":{"role":"user","content":"Do the thing."}}),
                json!({"type":"message","id":"a2","parentId":"a1","timestamp":"2026-11-29T23:00:02.000Z",
                    "message":{"role":"assistant","content":[{"type":"text","text":"Input needed: which?"}],
                    "provider":"p","model":"m","stopReason":"stop"}}),
            ]
            .iter()
            .map(|l| format!("{l}\n"))
            .collect::<String>();
            std::fs::write(Fleet::file_in(&sessions, i), body).unwrap();
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
        Fleet::file_in(&self.sessions, i)
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
        .chain([self.sessions.display().to_string(), "--session-id".into(), sid(i)])
        .collect()
    }

    /// A tmux server with one session per worker (`w<i>`), each running its pi.
    pub fn tmux(&self, workers: usize) -> TmuxServer {
        let a = self.pi_argv(0);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let server = TmuxServer::start("w0", self.tmp.path(), &a);
        for i in 1..workers {
            let a = self.pi_argv(i);
            let a: Vec<&str> = a.iter().map(String::as_str).collect();
            server.new_session(&format!("w{i}"), self.tmp.path(), &a);
        }
        server
    }

    pub fn opts(&self, sock: &Path) -> ScanOptions {
        ScanOptions {
            data_root: self.data.clone(),
            root: RootChoice::Exact(self.root.clone()),
            repo: None,
            fleet: None,
            session_dirs: vec![self.sessions.clone()],
            liveness: intercom_pane::liveness::LivenessMode::Tmux,
            tmux_socket: Some(sock.to_path_buf()),
            kept_panes: None,
        }
    }

    /// Append a user message (the `n`th, `n` seconds after the first): the worker is working from
    /// then on, and its record changes with each one.
    pub fn start_turn(&self, i: usize, n: usize) {
        use std::io::Write;
        let at = intercom_pane::clock::format_iso(
            intercom_pane::clock::parse_iso("2026-11-29T23:01:00.000Z").unwrap() + n as i64 * 1000,
        );
        let line = json!({"type":"message","id":format!("u{n}"),"parentId":"a2",
            "timestamp":at,"message":{"role":"user","content":"Go on."}});
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(self.file(i))
            .unwrap();
        f.write_all(format!("{line}\n").as_bytes()).unwrap();
    }
}

pub fn engine(opts: ScanOptions, settings: Settings) -> Engine<BoardPasses> {
    Engine::new(BoardPasses::new(opts, Arc::new(SystemClock)), settings).unwrap()
}

pub fn state(scan: &Scan, agent: &str) -> String {
    scan.records
        .iter()
        .find(|r| r.agent == agent)
        .map(|r| format!("{}/{}", r.state.as_str(), r.state_reason))
        .unwrap_or_else(|| "absent".into())
}

/// Passes as the engine asks for them, until `pred` holds (bounded); the passes it took.
pub fn until(
    e: &mut Engine<BoardPasses>,
    pred: impl Fn(&Scan) -> bool,
) -> (Scan, usize) {
    let end = Instant::now() + BOUND;
    let mut n = 0;
    let mut last = String::new();
    loop {
        assert!(Instant::now() < end, "no pass showed it in time; last: {last}");
        match e.wait(Some(end)) {
            Wake::Pass => {
                n += 1;
                let scan = e.pass().unwrap();
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

#[test]
fn a_line_a_pi_exit_and_a_window_each_wake_one_pass_and_quiet_wakes_none() {
    let f = Fleet::new(3);
    let server = f.tmux(3);
    let mut e = engine(f.opts(&server.sock), Settings::default());
    let (first, _) = until(&mut e, |s| state(s, "w0") == "waiting/input_needed");
    assert_eq!(state(&first, "w2"), "waiting/input_needed");
    // Settle: the client attaches (it says so once), then nothing happens.
    let _ = quiet(&mut e, Duration::from_millis(1500)) || {
        e.pass().unwrap();
        true
    };
    assert!(quiet(&mut e, Duration::from_millis(1500)), "a pass while nothing changed");
    let h = e.health();
    assert_eq!(h.mode, "events");
    assert_eq!(h.pids, 3, "{h:?}");
    assert_eq!(h.servers.len(), 1);
    assert!(h.servers[0].listening, "{h:?}");

    // A transcript line: one pass shows it.
    let t0 = Instant::now();
    f.start_turn(1, 1);
    let (s, n) = until(&mut e, |s| state(s, "w1") == "working/user_message");
    assert_eq!(n, 1, "one pass");
    assert!(t0.elapsed() < Duration::from_secs(5));
    assert!(e.last_why().files.contains(&f.file(1)), "{:?}", e.last_why());
    assert_eq!(state(&s, "w0"), "waiting/input_needed");

    // A pi exits: its pidfd wakes the engine; the seat is no longer shown waiting (an Intercom
    // worker without a registration whose session is gone reads unknown, by the rules).
    let pid: i32 = server
        .tmux(&["display-message", "-p", "-t", "=w2:", "#{pane_pid}"])
        .trim()
        .parse()
        .unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let (s, _) = until(&mut e, |s| state(s, "w2") == "unknown/pane_not_identified");
    assert!(e.last_why().reasons.contains("exit") || e.last_why().reasons.contains("panes"));
    assert_eq!(state(&s, "w1"), "working/user_message");

    // A window opened with w2's pi in it: the control client says so; the seat is back.
    let argv = f.pi_argv(2);
    let mut args = vec!["new-window", "-d", "-t", "=w0:", "--"];
    args.extend(argv.iter().map(String::as_str));
    server.tmux(&args);
    until(&mut e, |s| state(s, "w2") == "waiting/input_needed");
    assert_eq!(e.health().pids, 3);
}

#[test]
fn a_session_folder_deleted_made_again_or_replaced_by_a_link_is_right_after_one_pass() {
    let f = Fleet::new(1);
    let server = f.tmux(1);
    let mut e = engine(f.opts(&server.sock), Settings::default());
    until(&mut e, |s| state(s, "w0") == "waiting/input_needed");
    // Deleted and made again with the worker working: watched anew, then a line shows.
    let saved = std::fs::read(f.file(0)).unwrap();
    std::fs::remove_dir_all(&f.sessions).unwrap();
    let (s, _) = until(&mut e, |s| state(s, "w0") != "waiting/input_needed");
    assert!(state(&s, "w0").starts_with("idle") || state(&s, "w0").starts_with("unknown"), "{}", state(&s, "w0"));
    std::fs::create_dir(&f.sessions).unwrap();
    std::fs::write(f.file(0), &saved).unwrap();
    until(&mut e, |s| state(s, "w0") == "waiting/input_needed");
    f.start_turn(0, 1);
    until(&mut e, |s| state(s, "w0") == "working/user_message");
    // Replaced by a link to a folder with the same file: refused, never followed.
    let elsewhere = f.tmp.path().join("elsewhere");
    std::fs::rename(&f.sessions, &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &f.sessions).unwrap();
    let (s, _) = until(&mut e, |s| state(s, "w0") != "working/user_message");
    let shown = state(&s, "w0");
    assert!(!shown.starts_with("working"), "{shown}");
    // Writes behind the link wake nothing (the link is not watched).
    let _ = quiet(&mut e, Duration::from_millis(500)) || {
        e.pass().unwrap();
        true
    };
    f.start_turn(0, 2);
    assert!(quiet(&mut e, Duration::from_millis(800)), "a write behind a link woke a pass");
}
