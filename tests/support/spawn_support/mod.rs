//! A pi stand-in for the spawn, retire and resume tests that does what the shipped extension
//! does from inside pi: it opens a private reply channel (a Unix socket in a 0700 folder, held by
//! the stand-in's own process), registers the seat with it, and takes texts handed over that
//! channel (answering `delivered`). `register` accepts it for the reasons it accepts a real pi:
//! its executable is a JavaScript runtime's name (`node`: a hard link of Python) and its command
//! line runs a script under `pi-coding-agent/` (the Python program below). It records every
//! launch (argv, folder, environment) and every text, and keeps a session file in
//! `STANDIN_SESSIONS`. A file `no-register` in its record folder makes it skip registering (a pi
//! without the extension). Asked by close-worker for its handoff, it runs `handoff` from inside
//! itself and ends the turn, as the extension's model does. Real pi is covered by `tests/real_pi/`.
#![allow(dead_code)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::mux_support::{program_named, TmuxServer};
use crate::pi_support;
use crate::scan_support::*;

const STAND_IN: &str = r#"
import json, os, re, socket, subprocess, sys, tempfile, time
args = sys.argv[1:]
HANDOFF = "Stand-in work saved; nothing left."
def stamp():
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + ".%03dZ" % (int(t * 1000) % 1000)
rec = os.environ["STANDIN_RECORD"]
def log(name, obj):
    with open(os.path.join(rec, name), "a") as f:
        f.write(json.dumps(obj) + "\n")
env = {k: os.environ.get(k) for k in ["PATH", "PI_CODING_AGENT_DIR", "PI_OFFLINE",
       "INTERCOM_PANE_CONFIG", "INTERCOM_PANE_BIN", "STANDIN_MARK"]}
now = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
if "--session" in args:
    sfile = args[args.index("--session") + 1]
    with open(sfile) as f:
        sid = json.loads(f.readline())["id"]
else:
    sid = args[args.index("--session-id") + 1]
    sfile = os.path.join(os.environ["STANDIN_SESSIONS"], "2026-11-29T23-00-00-000Z_%s.jsonl" % sid)
    if not os.path.exists(sfile):
        with open(sfile, "a") as f:
            f.write(json.dumps({"type": "session", "version": 3, "id": sid, "timestamp": now,
                                "cwd": os.getcwd()}) + "\n")
# As pi's TUI does on a terminal: focus reports on (a pi ended by a signal leaves them on).
if os.isatty(1):
    os.write(1, b"\x1b[?1004h")
log("launches.jsonl", {"argv": args, "cwd": os.getcwd(), "env": env, "pid": os.getpid(), "sid": sid})
folder = tempfile.mkdtemp(prefix="ip-standin-")
path = os.path.join(folder, "reply.sock")
srv = socket.socket(socket.AF_UNIX)
srv.bind(path)
srv.listen(4)
if not os.path.exists(os.path.join(rec, "no-register")):
    cmd = [os.environ["INTERCOM_PANE_BIN"], "register", "--event", "session_start", "--seq", "1",
           "--pi-pid", str(os.getpid()), "--session-id", sid, "--session-file", sfile,
           "--cwd", os.getcwd(), "--channel", path]
    if os.environ.get("INTERCOM_PANE_CONFIG"):
        cmd += ["--config", os.environ["INTERCOM_PANE_CONFIG"]]
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=20)
    log("registers.jsonl", {"sid": sid, "rc": r.returncode, "err": r.stderr.decode()[-300:]})
n = 0
while True:
    c, _ = srv.accept()
    data = b""
    while b"\n" not in data:
        chunk = c.recv(65536)
        if not chunk:
            break
        data += chunk
    req = json.loads(data.split(b"\n")[0])
    n += 1
    log("texts.jsonl", {"sid": sid, "text": req["text"]})
    with open(sfile, "a") as f:
        f.write(json.dumps({"type": "message", "id": "u%d" % n, "parentId": None, "timestamp": stamp(),
                            "message": {"role": "user", "content": req["text"]}}) + "\n")
    c.sendall((json.dumps({"v": 1, "id": req.get("id", ""), "outcome": "delivered",
                           "detail": "the stand-in took it"}) + "\n").encode())
    c.close()
    job = re.search(r"Intercom close requested \(job ([A-Za-z0-9-]+)\)", req["text"])
    if job:
        # What the extension's model does when asked: save the handoff from inside this pi,
        # then end the turn.
        r = subprocess.run([os.environ["INTERCOM_PANE_BIN"], "handoff", "--job", job.group(1),
                            "--summary", HANDOFF, "--session-id", sid, "--session-file", sfile],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=20)
        log("handoffs.jsonl", {"sid": sid, "rc": r.returncode, "err": r.stderr.decode()[-300:]})
        time.sleep(0.05)
        with open(sfile, "a") as f:
            f.write(json.dumps({"type": "message", "id": "a%d" % n, "parentId": "u%d" % n,
                                "timestamp": stamp(), "message": {"role": "assistant",
                                "content": [{"type": "text", "text": "Handoff saved."}],
                                "stopReason": "stop"}}) + "\n")
"#;

/// The public summary the stand-in saves when close-worker asks it for its handoff.
pub const HANDOFF: &str = "Stand-in work saved; nothing left.";

/// The stand-in under `dir`: the `pi` program to give `--pi`. It records into `record` and keeps
/// session files in `sessions` (both must exist).
pub fn stand_in_pi(dir: &Path, record: &Path, sessions: &Path) -> PathBuf {
    let lib = dir.join("lib/node_modules/@earendil-works/pi-coding-agent/dist");
    std::fs::create_dir_all(&lib).unwrap();
    let node = dir.join("node");
    if !node.exists() {
        program_named("/usr/bin/python3.11", &node);
    }
    let cli = lib.join("cli.js");
    std::fs::write(&cli, STAND_IN).unwrap();
    let pi = dir.join("pi");
    std::fs::write(
        &pi,
        format!(
            "#!/bin/bash\nexport PYTHONHOME=/usr STANDIN_RECORD={} STANDIN_SESSIONS={}\nexec {} {} \"$@\"\n",
            quote(record),
            quote(sessions),
            quote(&node),
            quote(&cli)
        ),
    )
    .unwrap();
    std::fs::set_permissions(&pi, std::fs::Permissions::from_mode(0o755)).unwrap();
    pi
}

fn quote(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', r"'\''"))
}

/// The JSON lines of `file` (none when it does not exist).
pub fn lines(file: &Path) -> Vec<Value> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// A root made by `init`, its coordinator registered from the pane of a private tmux server,
/// and the pi stand-in to spawn.
pub struct Team {
    pub env: Env,
    pub root: PathBuf,
    pub server: TmuxServer,
    pub pi: PathBuf,
    pub coordinator: String,
}

impl Team {
    pub fn new() -> Team {
        Team::with_register_args("")
    }

    /// A team whose coordinator's `register` at its start gets `extra` too (shell words: the
    /// extension's `--pi-args` and `--model`, say).
    pub fn with_register_args(extra: &str) -> Team {
        let env = Env::new().with_system_path();
        let root = env.path("root");
        std::fs::create_dir_all(&root).unwrap();
        let o = env.run(&["init", "--root", "root", "--json"]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let made = stdout_json(&o);
        let coordinator = made["sessionId"].as_str().unwrap().to_string();
        for d in ["sessions", "rec"] {
            std::fs::create_dir_all(env.path(d)).unwrap();
        }
        let pi = stand_in_pi(&env.path("py-pi"), &env.path("rec"), &env.path("sessions"));
        let bin = env!("CARGO_BIN_EXE_intercom-pane");
        let sys = env.system_config();
        let script = format!(
            "{bin} register --config {sys} --event session_start --seq 1 --pi-pid $$ --session-id {coordinator} --cwd {} {extra} >/dev/null; sleep 600",
            root.display()
        );
        let argv = pi_support::pi_pane_argv(&env.path("pi-bin"), &script);
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        let server = TmuxServer::start("coord", &root, &argv);
        wait_registered(&root.join(".pi-intercom/seats"));
        Team {
            env,
            root,
            server,
            pi,
            coordinator,
        }
    }

    pub fn config(&self) -> String {
        std::fs::read_to_string(self.root.join(".pi-intercom/config.json")).unwrap()
    }

    pub fn roster(&self) -> Value {
        serde_json::from_str(&self.config()).unwrap()
    }

    /// `spawn` with the layout's flags, the stand-in as pi, JSON; (exit, report, stderr).
    pub fn spawn(&self, args: &[&str]) -> (i32, Value, String) {
        self.spawn_env(args, &[])
    }

    /// `spawn` started in the background (stdout and stderr piped).
    pub fn spawn_child(&self, args: &[&str], vars: &[(&str, &str)]) -> std::process::Child {
        let pi = self.pi.display().to_string();
        let mut all = vec!["--pi", &pi, "--json", "--wait-secs", "20"];
        all.extend_from_slice(args);
        self.child("spawn", &all, vars)
    }

    /// `intercom-pane CMD` with the layout's flags and `args`, started in the background from
    /// the team's folder as a person runs it (stdout and stderr piped).
    pub fn child(&self, cmd: &str, args: &[&str], vars: &[(&str, &str)]) -> std::process::Child {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_intercom-pane"));
        c.args(layout_args(&self.env, &[cmd], args))
            .current_dir(self.env.dir.path())
            .env_clear()
            .env("HOME", self.env.path("home"))
            .env("XDG_STATE_HOME", self.env.path("state"))
            .env("PATH", &self.env.path_env)
            .env("TMUX_TMPDIR", self.env.path("tmux-tmp"))
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        for (k, v) in vars {
            c.env(k, v);
        }
        c.spawn().unwrap()
    }

    pub fn spawn_env(&self, args: &[&str], vars: &[(&str, &str)]) -> (i32, Value, String) {
        finished(self.spawn_child(args, vars))
    }

    /// `child`, waited for: (exit, JSON on stdout, stderr).
    pub fn run(&self, cmd: &str, args: &[&str]) -> (i32, Value, String) {
        finished(self.child(cmd, args, &[]))
    }

    /// The names of the windows after the coordinator's (whose name tmux keeps renaming).
    pub fn windows(&self) -> Vec<String> {
        self.server
            .tmux(&["list-windows", "-a", "-F", "#{window_name}"])
            .lines()
            .skip(1)
            .map(str::to_string)
            .collect()
    }

    pub fn launches(&self) -> Vec<Value> {
        lines(&self.env.path("rec/launches.jsonl"))
    }

    pub fn texts(&self) -> Vec<Value> {
        lines(&self.env.path("rec/texts.jsonl"))
    }

    /// Everything under `.pi-intercom/workers/` (launch specs).
    pub fn specs(&self) -> Vec<Value> {
        let dir = self.root.join(".pi-intercom/workers");
        let mut out = Vec::new();
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            if e.path().extension().is_some_and(|x| x == "json") {
                out.push(serde_json::from_slice(&std::fs::read(e.path()).unwrap()).unwrap());
            }
        }
        out
    }
}

/// The roster entry named `name`.
pub fn agent<'a>(roster: &'a Value, name: &str) -> Option<&'a Value> {
    roster["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == name)
}

/// A finished spawn's (exit, report, stderr).
pub fn finished(child: std::process::Child) -> (i32, Value, String) {
    let o = child.wait_with_output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        serde_json::from_slice(&o.stdout).unwrap_or(Value::Null),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Whether process `pid` has ended: gone, or a zombie its parent (a tmux server) has not reaped
/// yet.
pub fn ended(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |st| {
        st.rsplit(')')
            .next()
            .is_some_and(|r| r.trim_start().starts_with('Z'))
    })
}

/// The team's root as a git checkout on `main` with the roster committed (as people keep it).
pub fn checkout(t: &Team) {
    git(&t.root, &["init", "-q", "-b", "main"]);
    std::fs::write(t.root.join("README"), "project\n").unwrap();
    git(&t.root, &["add", "-A"]);
    git(&t.root, &["commit", "-qm", "start"]);
}

/// End the stand-in pi that runs `session` and wait until it is gone.
pub fn end_worker(t: &Team, session: &Value) {
    let l = t
        .launches()
        .into_iter()
        .rev()
        .find(|l| l["sid"] == *session)
        .unwrap_or_else(|| panic!("no launch of {session}"));
    let pid = l["pid"].as_i64().unwrap() as i32;
    unsafe { libc::kill(pid, libc::SIGTERM) };
    crate::mux_support::wait_for(20_000, || ended(pid).then_some(())).expect("the stand-in ended");
}
