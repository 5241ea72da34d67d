//! Shared setup for the scan tests: a private HOME and data root, real fixture files.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{json, Value};

pub const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
pub const NOW: &str = "2026-11-29T23:20:00.000Z";

/// In-process scan options for the `pi_root` layout at `root`: its data root and session folder,
/// every seat taken as alive (tests that ask tmux replace `liveness` and `tmux_socket`).
pub fn scan_options(env: &Env, root: PathBuf) -> intercom_pane::seam::scan::ScanOptions {
    intercom_pane::seam::scan::ScanOptions {
        data_root: env.path("data"),
        root: intercom_pane::seam::scan::RootChoice::Exact(root),
        repo: None,
        fleet: None,
        session_dirs: vec![env.path("sessions")],
        liveness: intercom_pane::seam::liveness::LivenessMode::AssumeAlive,
        tmux_socket: None,
        usage_reads: intercom_pane::seam::evidence::sessions::usage::ONE_SHOT_BUDGET,
        kept_panes: None,
    }
}

pub struct Env {
    pub dir: tempfile::TempDir,
    /// PATH for the binary: empty (no tmux) unless `with_system_path` was called.
    pub path_env: String,
}

impl Env {
    pub fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        for d in ["home", "state", "data", "no-bin", "tmux-tmp"] {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        let path_env = dir.path().join("no-bin").display().to_string();
        Env { dir, path_env }
    }

    /// Let the binary find tmux (and everything else) on the system PATH.
    pub fn with_system_path(mut self) -> Env {
        self.path_env = "/usr/local/bin:/usr/bin:/bin".into();
        self
    }

    pub fn path(&self, p: &str) -> PathBuf {
        self.dir.path().join(p)
    }

    /// Run the binary with a private HOME, state folder and tmux folder (so the machine's own
    /// default tmux server is never asked), and no tmux on PATH unless `with_system_path`.
    pub fn run<S: AsRef<std::ffi::OsStr>>(&self, args: &[S]) -> Output {
        self.command(args).output().unwrap()
    }

    /// `run` with these variables added to its environment.
    pub fn run_with<S: AsRef<std::ffi::OsStr>>(
        &self,
        args: &[S],
        vars: &[(&str, &std::ffi::OsStr)],
    ) -> Output {
        let mut cmd = self.command(args);
        for (k, v) in vars {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    }

    /// `run`, killed (and the test failed) when it is still running after `guard`: a hang guard
    /// for inputs that would block a careless reader (a FIFO) forever.
    pub fn run_guarded<S: AsRef<std::ffi::OsStr>>(
        &self,
        args: &[S],
        guard: std::time::Duration,
    ) -> Output {
        let mut child = self
            .command(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let until = std::time::Instant::now() + guard;
        // Bounded by `guard`; the output is small enough for the pipes to hold meanwhile.
        while child.try_wait().unwrap().is_none() {
            if std::time::Instant::now() > until {
                let _ = child.kill();
                let _ = child.wait();
                panic!("still running after {guard:?} (blocked?)");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        child.wait_with_output().unwrap()
    }

    pub fn command<S: AsRef<std::ffi::OsStr>>(&self, args: &[S]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_intercom-pane"));
        cmd.args(args)
            .current_dir(self.dir.path())
            .env_clear()
            .env("HOME", self.path("home"))
            .env("XDG_STATE_HOME", self.path("state"))
            .env("PATH", &self.path_env)
            .env("TMUX_TMPDIR", self.path("tmux-tmp"));
        cmd
    }

    /// The system config naming `data` as the data root. Written once, atomically: processes
    /// started by a test (a pane running `register`) may read it at any moment.
    pub fn system_config(&self) -> String {
        let p = self.path("system.json");
        if !p.exists() {
            let tmp = self.path("system.json.tmp");
            std::fs::write(&tmp, json!({"dataRoot": self.path("data")}).to_string()).unwrap();
            std::fs::rename(&tmp, &p).unwrap();
        }
        p.display().to_string()
    }
}

/// A settled pi session `id` under `env`'s `sessions/` folder, started in `cwd`: the header, a
/// user message and the completed reply to it. Its path.
pub fn settled_session(env: &Env, id: &str, cwd: &Path) -> PathBuf {
    let sessions = env.path("sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let file = sessions.join(format!("2026-11-29T23-00-00-000Z_{id}.jsonl"));
    let lines = [
        json!({"type":"session","version":3,"id":id,"timestamp":"2026-11-29T23:00:00.000Z","cwd":cwd.display().to_string()}),
        json!({"type":"message","id":"a1","parentId":null,"timestamp":"2026-11-29T23:00:01.000Z","message":{"role":"user","content":"Write the docs."}}),
        json!({"type":"message","id":"a2","parentId":"a1","timestamp":"2026-11-29T23:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"Docs written."}],"provider":"p","model":"m","stopReason":"stop"}}),
    ];
    std::fs::write(
        &file,
        lines.iter().map(|l| format!("{l}\n")).collect::<String>(),
    )
    .unwrap();
    file
}

pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let t = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &t);
        } else {
            std::fs::copy(e.path(), &t).unwrap();
        }
    }
}

/// The real time now, as pi writes times.
pub fn now_iso() -> String {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    intercom_pane::seam::clock::format_iso(ms)
}

pub fn header_id(file: &Path) -> String {
    let text = std::fs::read_to_string(file).unwrap();
    let first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    first["id"].as_str().unwrap().to_string()
}

/// Write `<root>/.pi-intercom/config.json`: a coordinator (`coord`) and these workers
/// (session id, name), on ports 2, 3, ...
pub fn write_roster(root: &Path, workers: &[(&str, &str)]) {
    std::fs::create_dir_all(root.join(".pi-intercom")).unwrap();
    let mut agents = vec![
        json!({"sessionId": "coord", "name": "Coordinator", "coordinator": true,
        "description": "C.", "port": 1, "projectDirectory": "."}),
    ];
    for (i, (id, name)) in workers.iter().enumerate() {
        agents.push(json!({"sessionId": id, "name": name, "coordinator": false,
            "description": format!("{name}."), "port": 2 + i, "projectDirectory": "."}));
    }
    let cfg = json!({"version": 1, "agents": agents});
    std::fs::write(root.join(".pi-intercom/config.json"), cfg.to_string()).unwrap();
}

/// A coordinator root whose workers are the real pi fixture sessions.
pub fn pi_root(env: &Env, names: &[&str]) -> Vec<(String, String)> {
    let root = env.path("root");
    std::fs::create_dir_all(root.join(".pi-intercom")).unwrap();
    let sessions = env.path("sessions").join("--work--");
    std::fs::create_dir_all(&sessions).unwrap();
    let mut agents = vec![
        json!({"sessionId": "coord-1", "name": "Coordinator", "coordinator": true,
        "description": "Coordinates.", "port": 41001, "projectDirectory": "."}),
    ];
    let mut out = Vec::new();
    for (i, n) in names.iter().enumerate() {
        let src = Path::new(FIXTURES)
            .join("pi-sessions")
            .join(format!("{n}.jsonl"));
        let id = header_id(&src);
        std::fs::copy(
            &src,
            sessions.join(format!("2026-11-29T23-13-49-000Z_{id}.jsonl")),
        )
        .unwrap();
        let name = format!("W-{n}");
        agents.push(json!({"sessionId": id, "name": name, "coordinator": false,
            "description": format!("Fixture {n}"), "port": 41100 + i, "projectDirectory": "."}));
        out.push((name, id));
    }
    let cfg = json!({"version": 1, "multiplexer": "tmux", "agents": agents});
    std::fs::write(root.join(".pi-intercom/config.json"), cfg.to_string()).unwrap();
    out
}

pub fn stdout_json(o: &Output) -> Value {
    assert!(
        o.status.success(),
        "exit {:?}, stderr: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

pub fn record<'a>(index: &'a Value, agent: &str) -> &'a Value {
    index["records"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["agent"] == agent)
        .unwrap_or_else(|| panic!("no record for {agent}"))
}

/// `scan --json` on the `pi_root` layout (root `root`, sessions `sessions`, no fleet) at `NOW`,
/// with `extra` flags; the parsed index.
pub fn scan_json(env: &Env, extra: &[&str]) -> Value {
    stdout_json(&env.run(&scan_args(env, "--json", extra)))
}

/// The argv of a `scan` on the `pi_root` layout with `mode` (`--json` or `--print`).
pub fn scan_args(env: &Env, mode: &str, extra: &[&str]) -> Vec<String> {
    let mut args = vec!["--now", NOW];
    args.extend_from_slice(extra);
    layout_args(env, &["scan", mode], &args)
}

/// `cmd` (e.g. `["reply"]`) with the flags of the `pi_root` layout (system config, root `root`,
/// sessions `sessions`, no fleet), then `extra`.
pub fn layout_args(env: &Env, cmd: &[&str], extra: &[&str]) -> Vec<String> {
    let cfg = env.system_config();
    let mut args: Vec<String> = cmd.iter().map(|s| s.to_string()).collect();
    for a in [
        "--config",
        &cfg,
        "--root",
        "root",
        "--sessions-dir",
        "sessions",
        "--fleet",
        "none",
    ] {
        args.push(a.to_string());
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

/// A live registration of the pi `pid` in tmux pane `pane_id` (session `W` of the server on
/// `sock`) running session `session`, under the data root, as the extension writes one for a
/// session no roster names.
pub fn register_in_pane(env: &Env, session: &str, pid: i32, pane_id: &str, sock: &str) {
    let id = intercom_pane::seam::proc::identity(pid).unwrap();
    let seats = env.path("data/seats/pi/other");
    std::fs::create_dir_all(&seats).unwrap();
    std::fs::write(
        seats.join("registration.json"),
        json!({"version": 1, "seat": "other", "sessionId": session, "pid": pid,
            "startTicks": id.start_ticks, "bootId": id.boot_id,
            "startedAt": "2026-11-29T23:13:00.000Z",
            "runState": {"state": "idle", "seq": 1, "at": "2026-11-29T23:13:00.000Z",
                "event": "agent_settled"},
            "mux": {"kind": "tmux", "socket": sock, "session": "W", "paneId": pane_id}})
        .to_string(),
    )
    .unwrap();
}

/// Wait until a seat's registration record (not just its lock or temp file) is in `dir`.
pub fn wait_registered(dir: &Path) {
    let end = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let found = std::fs::read_dir(dir).ok().is_some_and(|rd| {
            rd.flatten()
                .any(|e| e.file_name().to_string_lossy().ends_with(".json"))
        });
        if found {
            return;
        }
        assert!(
            std::time::Instant::now() < end,
            "no registration in {}",
            dir.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// `git -C dir ARGS…` with a fixed identity and no global config; its stdout (the test fails
/// when git does).
pub fn git(dir: &Path, args: &[&str]) -> String {
    let o = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.org"])
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}
