//! A pi stand-in for the spawn, retire and resume tests that does what the shipped extension
//! does from inside pi: it opens a private reply channel (a Unix socket in a 0700 folder, held by
//! the stand-in's own process), registers the seat with it, and takes texts handed over that
//! channel (answering `delivered`). `register` accepts it for the reasons it accepts a real pi:
//! its executable is a JavaScript runtime's name (`node`: a hard link of Python) and its command
//! line runs a script under `pi-coding-agent/` (the Python program below). It records every
//! launch (argv, folder, environment) and every text, and keeps a session file in
//! `STANDIN_SESSIONS`. Real pi is covered by `tests/real_pi/`.
#![allow(dead_code)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::mux_support::program_named;

const STAND_IN: &str = r#"
import json, os, socket, subprocess, sys, tempfile, time
args = sys.argv[1:]
rec = os.environ["STANDIN_RECORD"]
def log(name, obj):
    with open(os.path.join(rec, name), "a") as f:
        f.write(json.dumps(obj) + "\n")
env = {k: os.environ.get(k) for k in ["PATH", "PI_CODING_AGENT_DIR", "PI_OFFLINE",
       "INTERCOM_PANE_CONFIG", "INTERCOM_PANE_BIN", "STANDIN_MARK"]}
log("launches.jsonl", {"argv": args, "cwd": os.getcwd(), "env": env, "pid": os.getpid()})
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
folder = tempfile.mkdtemp(prefix="ip-standin-")
path = os.path.join(folder, "reply.sock")
srv = socket.socket(socket.AF_UNIX)
srv.bind(path)
srv.listen(4)
if os.environ.get("STANDIN_NO_REGISTER") != "1":
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
        f.write(json.dumps({"type": "message", "id": "u%d" % n, "parentId": None, "timestamp": now,
                            "message": {"role": "user", "content": req["text"]}}) + "\n")
    c.sendall((json.dumps({"v": 1, "id": req.get("id", ""), "outcome": "delivered",
                           "detail": "the stand-in took it"}) + "\n").encode())
    c.close()
"#;

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
            "#!/bin/bash\nexport PYTHONHOME=/usr STANDIN_RECORD='{}' STANDIN_SESSIONS='{}'\nexec '{}' '{}' \"$@\"\n",
            record.display(),
            sessions.display(),
            node.display(),
            cli.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&pi, std::fs::Permissions::from_mode(0o755)).unwrap();
    pi
}

/// The JSON lines of `file` (none when it does not exist).
pub fn lines(file: &Path) -> Vec<Value> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}
