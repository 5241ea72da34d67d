//! Two rosters on one tmux server, one-shot pi runs and pis that retitle themselves: every row
//! from its own evidence, never a guessed transcript (docs/behaviour.md §1).
//!
//! Real tmux on a private socket; the pis are the stand-in of `pi_support` (named `pi`, its
//! command line holds no session flag, as a real pi's after it sets its title), their
//! registrations written where the extension writes them (the roster's own seats folder). Two
//! projects with `projectDirectory "."` everywhere, so each project's pis share one session
//! folder with every file of that project.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_support;
use crate::pi_support;
use crate::scan_support;

use std::path::{Path, PathBuf};

use mux_support::{wait_for, TmuxServer};
use scan_support::*;
use serde_json::{json, Value};

/// pi's folder name for a cwd.
fn folder(cwd: &Path) -> String {
    let s = cwd.display().to_string();
    format!("--{}--", s.trim_start_matches('/').replace(['/', ':'], "-"))
}

struct Project {
    root: PathBuf,
    /// (agent name, session id) in roster order, the coordinator first.
    agents: Vec<(String, String)>,
}

/// A roster at `root` whose agents' session files are the given fixtures (the coordinator
/// first), each in pi's per-cwd folder under `home`; `extra` fixtures are files in the same
/// folder no agent of the roster names (a one-shot `pi -p` run). Returns the project.
fn project(home: &Path, root: &Path, agents: &[(&str, &str)], extra: &[&str]) -> Project {
    std::fs::create_dir_all(root.join(".pi-intercom/seats")).unwrap();
    let root = root.canonicalize().unwrap();
    let sessions = home.join(".pi/agent/sessions").join(folder(&root));
    std::fs::create_dir_all(&sessions).unwrap();
    let put = |fixture: &str, n: usize| {
        let src = Path::new(FIXTURES).join("pi-sessions").join(fixture);
        let id = header_id(&src);
        std::fs::copy(
            &src,
            sessions.join(format!("2026-11-29T23-1{n}-49-000Z_{id}.jsonl")),
        )
        .unwrap();
        id
    };
    let mut out = Vec::new();
    let mut list = Vec::new();
    for (i, (name, fixture)) in agents.iter().enumerate() {
        let id = put(fixture, i);
        list.push(json!({"sessionId": id, "name": name, "coordinator": i == 0,
            "description": format!("{name}."), "port": 47100 + i, "projectDirectory": "."}));
        out.push((name.to_string(), id));
    }
    for (i, fixture) in extra.iter().enumerate() {
        put(fixture, 5 + i);
    }
    std::fs::write(
        root.join(".pi-intercom/config.json"),
        json!({"version": 1, "multiplexer": "tmux", "agents": list}).to_string(),
    )
    .unwrap();
    Project { root, agents: out }
}

impl Project {
    fn id(&self, name: &str) -> &str {
        &self.agents.iter().find(|(n, _)| n == name).unwrap().1
    }

    fn file(&self, home: &Path, name: &str) -> PathBuf {
        let dir = home.join(".pi/agent/sessions").join(folder(&self.root));
        std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| {
                p.to_string_lossy()
                    .ends_with(&format!("_{}.jsonl", self.id(name)))
            })
            .unwrap()
    }

    /// The record the extension writes for `name`'s pi (process `pid`, in `pane`): in the
    /// roster's own seats folder.
    fn register(&self, home: &Path, name: &str, pid: i32, pane: &str, sock: &str) {
        let me = intercom_pane::seam::proc::identity(pid).unwrap();
        std::fs::write(
            self.root
                .join(".pi-intercom/seats")
                .join(format!("{}.json", self.id(name))),
            json!({"version": 1, "sessionId": self.id(name), "pid": pid,
                "startTicks": me.start_ticks, "bootId": me.boot_id,
                "startedAt": "2026-11-29T23:13:00.000Z",
                "sessionFile": self.file(home, name),
                "cwd": self.root,
                "mux": {"kind": "tmux", "socket": sock, "paneId": pane}})
            .to_string(),
        )
        .unwrap();
    }
}

/// The stand-in pi in a new tmux session `name`, in `cwd`, with `HOME` = `home`: (pane id, pid).
fn start_pi(server: &TmuxServer, env: &Env, name: &str, cwd: &Path, home: &Path) -> (String, i32) {
    let home_s = home.display().to_string();
    let argv =
        pi_support::pi_pane_argv_with(&env.path("pi-bin"), &[("HOME", &home_s)], "sleep 600");
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    server.new_session(name, cwd, &argv);
    let target = format!("={name}:");
    wait_for(10_000, || {
        let l = server.tmux(&["list-panes", "-t", &target, "-F", "#{pane_current_command}"]);
        (l.trim() == "pi").then_some(())
    })
    .unwrap_or_else(|| panic!("{name} never ran pi"));
    let line = server.tmux(&["list-panes", "-t", &target, "-F", "#{pane_id} #{pane_pid}"]);
    let mut parts = line.split_whitespace();
    let pane = parts.next().unwrap().to_string();
    let shell: i32 = parts.next().unwrap().parse().unwrap();
    // The stand-in is the pane's process itself (`exec -a pi`).
    (pane, shell)
}

fn board(env: &Env, home: &Path, root: &Path, sock: &str) -> Value {
    let sessions = home.join(".pi/agent/sessions").display().to_string();
    let o = env.run(&[
        "scan",
        "--json",
        "--config",
        &env.system_config(),
        "--root",
        &root.display().to_string(),
        "--sessions-dir",
        &sessions,
        "--fleet",
        "none",
        "--tmux-socket",
        sock,
        "--now",
        NOW,
    ]);
    stdout_json(&o)
}

fn rows(idx: &Value) -> Vec<&Value> {
    idx["records"].as_array().unwrap().iter().collect()
}

fn named<'a>(idx: &'a Value, agent: &str) -> Option<&'a Value> {
    rows(idx).into_iter().find(|r| r["agent"] == agent)
}

#[test]
fn two_rosters_on_one_server_each_board_shows_its_own_seats_from_their_own_evidence() {
    let env = Env::new().with_system_path();
    let home = env.path("pi-home");
    std::fs::create_dir_all(&home).unwrap();
    // proj: the README's layout (a tmux session per agent, named like it); a one-shot run's
    // file beside theirs. proj2: `init` + `spawn` (sessions named otherwise).
    let proj = project(
        &home,
        &env.path("proj"),
        &[("Coordinator", "idle.jsonl"), ("Builder", "error.jsonl")],
        &["tool.completed.jsonl"],
    );
    let proj2 = project(
        &home,
        &env.path("proj2"),
        &[("Coordinator", "tool.jsonl"), ("W1", "waiting.jsonl")],
        &[],
    );
    let server = TmuxServer::start("scratch", &env.path("proj"), &[]);
    let sock = server.sock.display().to_string();
    let (pc, pid_c) = start_pi(&server, &env, "Coordinator", &proj.root, &home);
    proj.register(&home, "Coordinator", pid_c, &pc, &sock);
    // Builder's pi runs without the extension: no registration.
    start_pi(&server, &env, "Builder", &proj.root, &home);
    let (p2c, pid_2c) = start_pi(&server, &env, "proj2-coordinator", &proj2.root, &home);
    proj2.register(&home, "Coordinator", pid_2c, &p2c, &sock);
    let (p2w, pid_2w) = start_pi(&server, &env, "proj2-W1", &proj2.root, &home);
    proj2.register(&home, "W1", pid_2w, &p2w, &sock);

    // proj's board: its own two seats only; proj2's pis are proj2's.
    let a = board(&env, &home, &proj.root, &sock);
    let text = a.to_string();
    assert!(
        !text.contains(proj2.id("W1")) && !text.contains(proj2.id("Coordinator")),
        "proj's board names a proj2 session: {a:#}"
    );
    assert!(
        !rows(&a).iter().any(|r| r["project"] == "panes"),
        "every pi on the server is a roster's: {a:#}"
    );
    let c = named(&a, "Coordinator").unwrap();
    assert_eq!(c["sessionId"], proj.id("Coordinator"), "{c}");
    assert_eq!(c["alive"], true, "{c}");
    // Builder: unregistered, its folder holding three files (the one-shot's among them): its
    // row is its own file's (error), live in its own pane, never the one-shot's transcript.
    let b = named(&a, "Builder").unwrap();
    assert_eq!(
        (b["state"].as_str(), b["alive"].as_bool()),
        (Some("error"), Some(true)),
        "{b}"
    );
    assert_eq!(b["sessionId"], proj.id("Builder"), "{b}");
    assert_eq!(b["tmux"]["session"], "Builder", "{b}");
    assert_eq!(a["counts"]["error"], 1, "{a:#}");
    assert_eq!(a["counts"]["waiting"], 0, "{a:#}");

    // proj2's board: its coordinator reads its own file (not W1's), W1 waits with its question.
    let z = board(&env, &home, &proj2.root, &sock);
    let zt = z.to_string();
    assert!(
        !zt.contains(proj.id("Builder")) && !zt.contains(proj.id("Coordinator")),
        "proj2's board names a proj session: {z:#}"
    );
    assert!(!rows(&z).iter().any(|r| r["project"] == "panes"), "{z:#}");
    let zc = named(&z, "Coordinator").unwrap();
    assert_eq!(zc["sessionId"], proj2.id("Coordinator"), "{zc}");
    assert_eq!(zc["state"], "working", "{zc}");
    let w1 = named(&z, "W1").unwrap();
    assert_eq!(
        (w1["state"].as_str(), w1["alive"].as_bool()),
        (Some("waiting"), Some(true)),
        "{w1}"
    );
    assert_eq!(w1["sessionId"], proj2.id("W1"), "{w1}");
    assert!(w1["question"].is_string(), "{w1}");
}

/// A board with no roster lists every pi on the server, each from its own evidence: a pi its
/// registration ties to a file is read (wherever that record lives, any roster on this
/// machine), and pis nothing ties to a file are `unknown` with the candidates, never another
/// pi's transcript.
#[test]
fn with_no_roster_every_pi_is_its_own_row_and_only_evidence_ties_a_file() {
    let env = Env::new().with_system_path();
    let home = env.path("pi-home");
    std::fs::create_dir_all(&home).unwrap();
    let proj2 = project(
        &home,
        &env.path("proj2"),
        &[("Coordinator", "tool.jsonl"), ("W1", "waiting.jsonl")],
        &[],
    );
    let server = TmuxServer::start("scratch", &env.path("proj2"), &[]);
    let sock = server.sock.display().to_string();
    // A pi in proj2's folder that no roster knows, unregistered.
    let (stray_pane, _) = start_pi(&server, &env, "stray", &proj2.root, &home);
    let (p2w, pid_2w) = start_pi(&server, &env, "proj2-W1", &proj2.root, &home);
    proj2.register(&home, "W1", pid_2w, &p2w, &sock);
    let elsewhere = env.path("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let idx = board(&env, &home, &elsewhere, &sock);
    // proj2's registered W1 is proj2's seat, not listed here; no row reads its file.
    assert_eq!(rows(&idx).len(), 1, "{idx:#}");
    assert!(
        !rows(&idx).iter().any(|r| r["sessionFile"]
            .as_str()
            .is_some_and(|f| f.contains(proj2.id("W1")))),
        "{idx:#}"
    );
    let stray = rows(&idx)
        .into_iter()
        .find(|r| r["agent"] == format!("stray {stray_pane}"))
        .unwrap_or_else(|| panic!("{idx:#}"));
    assert_eq!(stray["state"], "unknown", "{stray}");
    assert_eq!(stray["stateReason"], "session_undecided", "{stray}");
    assert_eq!(stray["sessionFile"], Value::Null, "{stray}");
    assert_eq!(
        stray["sessionCandidates"].as_array().map(Vec::len),
        Some(2),
        "{stray}"
    );
    // `explain` names the rule and the candidates.
    let o = env.run(&[
        "explain",
        &format!("stray {stray_pane}"),
        "--config",
        &env.system_config(),
        "--root",
        &elsewhere.display().to_string(),
        "--fleet",
        "none",
        "--tmux-socket",
        &sock,
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("nothing names its file"), "{out}");
    assert!(
        out.contains(proj2.id("W1")) && out.contains(proj2.id("Coordinator")),
        "{out}"
    );
}

/// A live board follows another roster's registration appearing: the pi it listed (unknown,
/// nothing tied it to a file) leaves this board in the same stream, without waiting for a
/// timer, because the pass watches the seats folder of every roster above a pane's pi.
#[test]
fn a_live_board_drops_a_pi_as_soon_as_another_roster_registers_it() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    use std::time::{Duration, Instant};

    let env = Env::new().with_system_path();
    let home = env.path("pi-home");
    std::fs::create_dir_all(&home).unwrap();
    let proj2 = project(
        &home,
        &env.path("proj2"),
        &[("Coordinator", "tool.jsonl"), ("W1", "waiting.jsonl")],
        &[],
    );
    let server = TmuxServer::start("scratch", &env.path("proj2"), &[]);
    let sock = server.sock.display().to_string();
    let (pane, pid) = start_pi(&server, &env, "proj2-W1", &proj2.root, &home);
    let elsewhere = env.path("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let sessions = home.join(".pi/agent/sessions").display().to_string();
    let mut child = env
        .command(&[
            "scan",
            "--watch",
            "--json-lines",
            "--config",
            &env.system_config(),
            "--root",
            &elsewhere.display().to_string(),
            "--sessions-dir",
            &sessions,
            "--fleet",
            "none",
            "--tmux-socket",
            &sock,
            "--heartbeat-secs",
            "1",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    let key = format!("panes/proj2-W1 {pane}");
    let listed = first["board"]["records"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["agent"] == format!("proj2-W1 {pane}") && r["state"] == "unknown");
    assert!(listed, "{first:#}");
    // Let the start settle: two heartbeats with nothing else (no pass of the start's own is
    // left to pick up the record by chance).
    let mut quiet = 0;
    while quiet < 2 {
        let v: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
        quiet = if v["kind"] == "heartbeat" {
            quiet + 1
        } else {
            0
        };
    }
    let t0 = Instant::now();
    proj2.register(&home, "W1", pid, &pane, &sock);
    let mut removed = false;
    while !removed {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "the pi was never dropped"
        );
        let v: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
        removed = v["kind"] == "removed" && v["key"] == key.as_str();
    }
    // Well before the 30 s timer: the seats folder woke the pass.
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
    let _ = child.kill();
    let _ = child.wait();
}
