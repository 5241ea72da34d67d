//! Test support for the alerts: a roster whose workers' session files the test writes turn by
//! turn (now-dated, so every state is fresh), their panes in a real tmux server running a fake
//! `pi`, and `intercom-pane watch` processes over them.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

use crate::mux_support::{fake_pi, wait_for, TmuxServer};

/// A fleet: data root, roster `root`, sessions folder, log, tmux server.
pub struct Fleet {
    pub dir: tempfile::TempDir,
    pub server: TmuxServer,
    pub workers: Vec<Worker>,
}

/// One worker's session file, written entry by entry.
pub struct Worker {
    pub name: String,
    pub id: String,
    pub file: PathBuf,
    pub last: Option<String>,
    pub n: u32,
}

fn now_iso() -> String {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    intercom_pane::seam::clock::format_iso(ms)
}

impl Worker {
    fn append(&mut self, mut v: Value) -> String {
        self.n += 1;
        let id = format!("{:08x}", 0x2000_0000u32 + self.n);
        let o = v.as_object_mut().unwrap();
        o.insert("id".into(), json!(id));
        o.insert("parentId".into(), json!(self.last));
        o.insert("timestamp".into(), json!(now_iso()));
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&self.file)
            .unwrap();
        writeln!(f, "{v}").unwrap();
        self.last = Some(id.clone());
        id
    }

    /// The person's message: a turn starts (working).
    pub fn user(&mut self, text: &str) -> String {
        self.append(json!({"type":"message","message":{"role":"user","content":[{"type":"text","text":text}]}}))
    }

    /// A completed reply (idle, or waiting when it asks).
    pub fn reply(&mut self, text: &str) -> String {
        self.append(json!({"type":"message","message":{"role":"assistant","content":[{"type":"text","text":text}],"provider":"fake","model":"fake-model","stopReason":"stop"}}))
    }

    /// A turn whose reply cost `usd` (pi's `usage` of a priced model, 100 tokens in, 3 out).
    pub fn spend(&mut self, usd: f64) -> String {
        self.user("go on");
        self.append(json!({"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"Done."}],"provider":"fake","model":"fake-model",
            "usage":{"input":100,"output":3,"cacheRead":0,"cacheWrite":0,"totalTokens":103,
                "cost":{"input":usd,"output":0,"cacheRead":0,"cacheWrite":0,"total":usd}},
            "stopReason":"stop"}}))
    }

    /// A turn that ends asking for input.
    pub fn ask(&mut self, question: &str) -> String {
        self.user("go on");
        self.reply(&format!("Input needed: {question}\nDetails follow."))
    }

    /// A failed turn pi will not retry (error).
    pub fn fail(&mut self, msg: &str) -> String {
        self.append(json!({"type":"message","message":{"role":"assistant","content":[],"provider":"fake","model":"fake-model","stopReason":"error","errorMessage":msg}}))
    }
}

impl Fleet {
    /// A roster of `names` (worker name, its tmux session named like it, running a fake pi).
    pub fn new(names: &[&str]) -> Fleet {
        Fleet::make(names, false)
    }

    /// `new`, the tmux server logging the format jobs it runs (`TmuxServer::start_logged`).
    pub fn logged(names: &[&str]) -> Fleet {
        Fleet::make(names, true)
    }

    fn make(names: &[&str], logged: bool) -> Fleet {
        let dir = tempfile::tempdir().unwrap();
        let p = |s: &str| dir.path().join(s);
        for d in [
            "home",
            "state",
            "data",
            "root/.pi-intercom",
            "sessions/--work--",
            "bin",
        ] {
            std::fs::create_dir_all(p(d)).unwrap();
        }
        std::fs::write(p("system.json"), json!({"dataRoot": p("data")}).to_string()).unwrap();
        let pi = fake_pi(&p("bin")).display().to_string();
        let mut agents = vec![json!({"sessionId": "coord-1", "name": "Coordinator",
            "coordinator": true, "description": "C.", "port": 1, "projectDirectory": "."})];
        let mut workers = Vec::new();
        let mut server: Option<TmuxServer> = None;
        for (i, name) in names.iter().enumerate() {
            let id = format!(
                "{:08x}-0000-4000-8000-00000000000{}",
                0xa1e7_0000u32 + i as u32,
                i
            );
            let file = p("sessions/--work--").join(format!("2026-12-01T00-00-00-000Z_{id}.jsonl"));
            std::fs::write(
                &file,
                format!(
                    "{}\n",
                    json!({"type":"session","version":3,"id":id,"timestamp":now_iso(),"cwd":"/w"})
                ),
            )
            .unwrap();
            agents.push(json!({"sessionId": id, "name": name, "coordinator": false,
                "description": "W.", "port": 2 + i, "projectDirectory": "."}));
            // The session is named like the worker (tmux expands the name: handed over
            // literally, so hostile names stay themselves).
            let s = server.get_or_insert_with(|| {
                if logged {
                    TmuxServer::start_logged("base", &p("root"), &["sleep", "600"])
                } else {
                    TmuxServer::start("base", &p("root"), &["sleep", "600"])
                }
            });
            let lit = intercom_pane::seam::mux::tmux::format_literal(name);
            s.new_session(&lit, &p("root"), &[&pi, "600"]);
            workers.push(Worker {
                name: name.to_string(),
                id,
                file,
                last: None,
                n: 0,
            });
        }
        std::fs::write(
            p("root/.pi-intercom/config.json"),
            json!({"version": 1, "multiplexer": "tmux", "agents": agents}).to_string(),
        )
        .unwrap();
        let server = server.unwrap();
        wait_for(10_000, || {
            let l = server.tmux(&["list-panes", "-a", "-F", "#{pane_current_command}"]);
            (l.lines().filter(|c| *c == "pi").count() >= names.len()).then_some(())
        })
        .expect("panes run pi");
        Fleet {
            dir,
            server,
            workers,
        }
    }

    pub fn path(&self, s: &str) -> PathBuf {
        self.dir.path().join(s)
    }

    /// The flags every command takes for this fleet.
    pub fn flags(&self) -> Vec<String> {
        let p = |s: &str| self.path(s).display().to_string();
        vec![
            "--config".into(),
            p("system.json"),
            "--root".into(),
            p("root"),
            "--sessions-dir".into(),
            p("sessions"),
            "--fleet".into(),
            "none".into(),
            "--repo".into(),
            p("root"),
            "--tmux-socket".into(),
            self.server.sock.display().to_string(),
        ]
    }

    /// A command with the fleet's private environment.
    pub fn command(&self, args: &[String]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_intercom-pane"));
        c.args(args)
            .current_dir(self.dir.path())
            .env_clear()
            .env("HOME", self.path("home"))
            .env("XDG_STATE_HOME", self.path("state"))
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("TMUX_TMPDIR", self.path("home"))
            .env("INTERCOM_PANE_LOG", self.path("log.jsonl"));
        c
    }

    /// `watch` with `extra` flags, its `--on-alert` appending each line to `out` (last).
    pub fn watch(&self, extra: &[&str], out: &Path) -> Child {
        let out = out.display().to_string();
        self.watch_with(extra, &["/bin/sh", "-c", "cat >> \"$0\"", &out])
    }

    /// `watch` with `extra` flags and `--on-alert PROGRAM [ARGS…]`.
    pub fn watch_with(&self, extra: &[&str], on_alert: &[&str]) -> Child {
        let mut args = vec!["watch".to_string()];
        args.extend(self.flags());
        args.extend(extra.iter().map(|s| s.to_string()));
        args.push("--on-alert".into());
        args.extend(on_alert.iter().map(|s| s.to_string()));
        self.command(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// A sidebar (`monitor`) in a tmux session `mon` of the fleet's server, with the fleet's
    /// flags, environment and log, and `extra` flags.
    pub fn sidebar(&self, extra: &[&str]) {
        let p = |s: &str| self.path(s).display().to_string();
        let mut argv: Vec<String> = vec![
            "env".into(),
            format!("HOME={}", p("home")),
            format!("XDG_STATE_HOME={}", p("state")),
            format!("INTERCOM_PANE_LOG={}", p("log.jsonl")),
            "TERM=xterm-256color".into(),
            env!("CARGO_BIN_EXE_intercom-pane").into(),
            "monitor".into(),
            "--no-probe".into(),
        ];
        argv.extend(self.flags());
        argv.extend(extra.iter().map(|s| s.to_string()));
        let a: Vec<&str> = argv.iter().map(String::as_str).collect();
        self.server.new_session("mon", self.dir.path(), &a);
    }

    /// The pid of the sidebar `sidebar` started (the process in session `mon`).
    pub fn sidebar_pid(&self) -> u32 {
        self.server
            .tmux(&["list-panes", "-t", "=mon:", "-F", "#{pane_pid}"])
            .trim()
            .parse()
            .unwrap()
    }

    /// The log's events named `name` (of process `pid` when given).
    pub fn events(&self, name: &str, pid: Option<u32>) -> Vec<Value> {
        std::fs::read_to_string(self.path("log.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|v| v["event"] == name && pid.is_none_or(|p| v["pid"] == p))
            .collect()
    }

    /// Wait until watcher `pid` runs on the board stream: its live view's record is there
    /// (what `doctor` shows under `live view`), written after its first pass.
    pub fn watching(&self, pid: u32) {
        let record = self.path(&format!("data/live/{pid}.json"));
        wait_for(60_000, || record.exists().then_some(()))
            .unwrap_or_else(|| panic!("process {pid} shows no live view"));
    }

    /// Worker `i` asks `q`; back once every process in `pids` decided about that turn (its
    /// `alert` event for the seat). Passes and each alert thread keep their order, so every
    /// change made before it has been through their alerts by then: where a test needs "and
    /// nothing more came of it", this is the later change that would have shown it.
    pub fn mark(&mut self, i: usize, q: &str, pids: &[u32]) {
        let name = self.workers[i].name.clone();
        let count = |f: &Fleet, pid: u32| {
            f.events("alert", Some(pid))
                .iter()
                .filter(|e| e["seat"] == name.as_str())
                .count()
        };
        let before: Vec<usize> = pids.iter().map(|p| count(self, *p)).collect();
        self.workers[i].ask(q);
        for (pid, n) in pids.iter().zip(before) {
            wait_for(60_000, || (count(self, *pid) > n).then_some(()))
                .unwrap_or_else(|| panic!("process {pid} did not decide about {name}'s {q:?}"));
        }
    }

    /// Attach a real client (a nested tmux on another private server, as a person's terminal)
    /// showing the session of worker `i`.
    pub fn attach(&self, i: usize) -> TmuxServer {
        let sock = self.server.sock.display().to_string();
        let target = format!("={}", self.workers[i].name);
        let outer = TmuxServer::start(
            "outer",
            self.dir.path(),
            &[
                "env", "-u", "TMUX", "tmux", "-S", &sock, "attach", "-t", &target,
            ],
        );
        wait_for(10_000, || {
            (!self.server.tmux(&["list-clients"]).trim().is_empty()).then_some(())
        })
        .expect("a client is attached");
        outer
    }

    /// The pane of worker `i`.
    pub fn pane(&self, i: usize) -> String {
        let target = format!("={}:", self.workers[i].name);
        self.server
            .tmux(&["list-panes", "-t", &target, "-F", "#{pane_id}"])
            .trim()
            .to_string()
    }

    /// The memory file.
    pub fn memory(&self) -> Value {
        let t = std::fs::read_to_string(self.path("data/alerts/memory.json")).unwrap_or_default();
        serde_json::from_str(&t).unwrap_or(Value::Null)
    }
}

/// The `--on-alert` lines in `out` about `seat`.
pub fn lines_of(out: &Path, seat: &str) -> Vec<Value> {
    lines(out)
        .into_iter()
        .filter(|v| v["seat"] == seat)
        .collect()
}

/// The `--on-alert` lines in `out`, parsed.
pub fn lines(out: &Path) -> Vec<Value> {
    std::fs::read_to_string(out)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// Wait until `out` holds `n` lines (bounded).
pub fn wait_lines(out: &Path, n: usize) -> Vec<Value> {
    wait_for(60_000, || {
        let l = lines(out);
        (l.len() >= n).then_some(l)
    })
    .unwrap_or_else(|| panic!("no {n} alert lines: {:?}", lines(out)))
}

/// SIGTERM, then the exit status (bounded).
pub fn stop(child: &mut Child) -> std::process::ExitStatus {
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    );
    let st = wait_for(15_000, || child.try_wait().unwrap()).unwrap_or_else(|| {
        let _ = child.kill();
        panic!("watch did not end on SIGTERM")
    });
    std::thread::sleep(Duration::from_millis(1));
    st
}
