//! Two rosters side by side on one tmux server, with real pi 1.6.0 (which replaces its command
//! line with its title, so no pi here shows its `--session-id` any more): every row from its own
//! evidence, never a guessed transcript (docs/behaviour.md §1).
//!
//! - `proj`: the README's layout (a hand-written roster, a tmux session per agent, every agent
//!   `projectDirectory "."`): Coordinator, Builder (asks a question, then is resumed as
//!   `pi --session <file>`, as `resume-worker` starts it) and Reviewer, whose pi runs without the
//!   extension (no registration) in the same session folder; a one-shot `pi -p` runs there too.
//! - `proj2`: `intercom-pane init`, its coordinator started as `init` prints, then
//!   `intercom-pane spawn W1 --prompt …`, whose model asks a question.
//!
//! Each board (`scan --json`), `explain`, the coordinator's `intercom_board` (called by its own
//! scripted model), the counts and `doctor` are asserted: proj's board never shows proj2's pis,
//! proj2's coordinator reads its own transcript (not W1's), Reviewer is live (not offline), and
//! doctor names only true causes.
//!
//! Runs only with `INTERCOM_PANE_REAL_PI` (see tests/real_pi/real_pi.rs); otherwise `cargo test`
//! reports it as ignored, with the reason.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_support;
use crate::real_pi::{binary_on_path, prepare_agent_dir, prepare_plain_agent_dir};
use crate::real_pi_support;
use crate::scan_support;

use std::path::{Path, PathBuf};
use std::process::Command;

use mux_support::{wait_for, TmuxServer};
use real_pi_support::{clear_requests, real_pi, wait_ready, SERIAL};
use scan_support::*;
use serde_json::{json, Value};

const C: &str = "7d000000-0000-4000-8000-00000000c0c0";
const BUILDER: &str = "7d000000-0000-4000-8000-0000000000b1";
const REVIEWER: &str = "7d000000-0000-4000-8000-0000000000b2";

struct Rig {
    env: Env,
    server: TmuxServer,
    agent: PathBuf,
    proj: PathBuf,
    proj2: PathBuf,
    /// `export …` words every pi and command of the person's shell runs with.
    exports: String,
    vars: Vec<(String, String)>,
}

/// pi's folder name for a cwd.
fn folder(cwd: &Path) -> String {
    let s = cwd.display().to_string();
    format!("--{}--", s.trim_start_matches('/').replace(['/', ':'], "-"))
}

impl Rig {
    fn sessions(&self, root: &Path) -> PathBuf {
        self.agent.join("sessions").join(folder(root))
    }

    /// The session file of `id` in `root`'s folder, once pi wrote it.
    fn file(&self, root: &Path, id: &str) -> Option<PathBuf> {
        std::fs::read_dir(self.sessions(root))
            .ok()?
            .flatten()
            .map(|e| e.path())
            .find(|p| p.to_string_lossy().ends_with(&format!("_{id}.jsonl")))
    }

    fn entries(&self, root: &Path, id: &str) -> Vec<Value> {
        let text = self
            .file(root, id)
            .and_then(|f| std::fs::read_to_string(f).ok())
            .unwrap_or_default();
        text.lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    fn settled(&self, root: &Path, id: &str) -> bool {
        self.entries(root, id).pop().is_some_and(|last| {
            last["message"]["role"] == "assistant" && last["message"]["stopReason"] == "stop"
        })
    }

    fn screen(&self, session: &str) -> String {
        self.server
            .tmux(&["capture-pane", "-p", "-t", &format!("={session}:")])
    }

    /// Start `command` (after the exports) in a new tmux session `name` in `cwd`, and wait for
    /// pi's editor.
    fn start(&self, name: &str, cwd: &Path, command: &str) {
        self.server.new_session(name, cwd, &[]);
        let target = format!("={name}:");
        self.server.tmux(&[
            "send-keys",
            "-t",
            &target,
            &format!("{}; {command}", self.exports),
            "Enter",
        ]);
        wait_ready(&self.server, &target);
    }

    fn prompt(&self, session: &str, text: &str) {
        let target = format!("={session}:");
        self.server.tmux(&["send-keys", "-t", &target, "-l", text]);
        let head: String = text.chars().take(20).collect();
        wait_for(5_000, || self.screen(session).contains(&head).then_some(()));
        self.server.tmux(&["send-keys", "-t", &target, "Enter"]);
    }

    /// `intercom-pane ARGS…` as the person runs it, in `cwd` (outside tmux); (exit, stdout).
    fn run(&self, cwd: &Path, args: &[&str]) -> (i32, String) {
        let o = Command::new(env!("CARGO_BIN_EXE_intercom-pane"))
            .args(args)
            .current_dir(cwd)
            .env_clear()
            .envs(self.vars.iter().map(|(k, v)| (k, v)))
            .output()
            .unwrap();
        (
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stdout).into_owned(),
        )
    }

    /// The common flags of a board on `root`.
    fn flags(&self, root: &Path) -> Vec<String> {
        vec![
            "--config".into(),
            self.env.system_config(),
            "--root".into(),
            root.display().to_string(),
            "--sessions-dir".into(),
            self.agent.join("sessions").display().to_string(),
            "--fleet".into(),
            "none".into(),
            "--tmux-socket".into(),
            self.server.sock.display().to_string(),
        ]
    }

    fn board(&self, root: &Path) -> Value {
        let mut args = vec!["scan".to_string(), "--json".into()];
        args.extend(self.flags(root));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, out) = self.run(root, &args);
        assert_eq!(code, 0, "{out}");
        serde_json::from_str(&out).unwrap()
    }

    fn doctor(&self, root: &Path) -> Value {
        let mut args = vec!["doctor".to_string(), "--json".into()];
        args.extend(self.flags(root));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        serde_json::from_str(&self.run(root, &args).1).unwrap()
    }

    fn explain(&self, root: &Path, name: &str) -> String {
        let mut args = vec!["explain".to_string(), name.to_string()];
        args.extend(self.flags(root));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        self.run(root, &args).1
    }
}

fn records(idx: &Value) -> Vec<&Value> {
    idx["records"].as_array().unwrap().iter().collect()
}

fn rec<'a>(idx: &'a Value, name: &str) -> &'a Value {
    records(idx)
        .into_iter()
        .find(|r| r["agent"] == name)
        .unwrap_or_else(|| panic!("no {name}: {idx:#}"))
}

fn check<'a>(doctor: &'a Value, name: &str) -> &'a Value {
    doctor["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no check {name}: {doctor:#}"))
}

fn start_rig() -> Rig {
    let env = Env::new().with_system_path();
    let agent = env.path("agent");
    std::fs::create_dir_all(&agent).unwrap();
    prepare_agent_dir(&agent);
    // The same provider without the extension (Reviewer's pi).
    let bare = env.path("agent-bare");
    std::fs::create_dir_all(&bare).unwrap();
    prepare_plain_agent_dir(&bare);
    std::fs::copy(agent.join("models.json"), bare.join("models.json")).unwrap();
    let proj = env.path("proj");
    let proj2 = env.path("proj2");
    for p in [&proj, &proj2] {
        std::fs::create_dir_all(p).unwrap();
    }
    let (proj, proj2) = (proj.canonicalize().unwrap(), proj2.canonicalize().unwrap());
    std::fs::create_dir_all(proj.join(".pi-intercom")).unwrap();
    std::fs::write(
        proj.join(".pi-intercom/config.json"),
        json!({"version": 1, "multiplexer": "tmux", "agents": [
            {"sessionId": C, "name": "Coordinator", "coordinator": true, "description": "Coordinates.", "port": 47201, "projectDirectory": "."},
            {"sessionId": BUILDER, "name": "Builder", "coordinator": false, "description": "Builds.", "port": 47202, "projectDirectory": "."},
            {"sessionId": REVIEWER, "name": "Reviewer", "coordinator": false, "description": "Reviews.", "port": 47203, "projectDirectory": "."}]})
        .to_string(),
    )
    .unwrap();
    let tools = binary_on_path(&env);
    let sys = env.system_config();
    let path = format!(
        "{}:{}:/usr/local/bin:/usr/bin:/bin",
        tools.display(),
        real_pi().display()
    );
    let vars: Vec<(String, String)> = vec![
        ("PATH".into(), path.clone()),
        ("PI_OFFLINE".into(), "1".into()),
        ("PI_CODING_AGENT_DIR".into(), agent.display().to_string()),
        ("HOME".into(), env.path("home").display().to_string()),
        ("INTERCOM_PANE_CONFIG".into(), sys.clone()),
        (
            "XDG_STATE_HOME".into(),
            env.path("state").display().to_string(),
        ),
    ];
    let exports = format!(
        "export {}",
        vars.iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    let server = TmuxServer::start("scratch", &proj, &[]);
    let mut vars = vars;
    vars.push((
        "TMUX_TMPDIR".into(),
        env.path("tmux-tmp").display().to_string(),
    ));
    Rig {
        env,
        server,
        agent,
        proj,
        proj2,
        exports,
        vars,
    }
}

#[test]
#[cfg_attr(
    not(real_pi),
    ignore = "real-pi tier: INTERCOM_PANE_REAL_PI names no folder with pi and node 22 (.ci/run installs them)"
)]
fn two_rosters_on_one_server_every_row_from_its_own_evidence() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    clear_requests();
    let r = start_rig();
    let pi = "pi --provider fake --model fake-model";
    let (proj, proj2) = (r.proj.clone(), r.proj2.clone());

    // proj, the README's layout.
    r.start("Builder", &proj, &format!("{pi} --session-id {BUILDER}"));
    let bare = r.env.path("agent-bare").display().to_string();
    let flat = r.sessions(&proj);
    std::fs::create_dir_all(&flat).unwrap();
    r.start(
        "Reviewer",
        &proj,
        &format!(
            "PI_CODING_AGENT_DIR={bare} PI_CODING_AGENT_SESSION_DIR={} {pi} --session-id {REVIEWER}",
            flat.display()
        ),
    );
    r.start("Coordinator", &proj, &format!("{pi} --session-id {C}"));
    r.prompt("Builder", "deploy it SCENARIO:waiting");
    r.prompt("Reviewer", "hello reviewer");
    wait_for(90_000, || {
        (r.settled(&proj, BUILDER) && r.settled(&proj, REVIEWER)).then_some(())
    })
    .unwrap_or_else(|| panic!("proj's workers never settled:\n{}", r.screen("Builder")));

    // proj2: `init`, its coordinator as `init` prints it, then `spawn W1` whose model asks.
    let (code, out) = r.run(&proj2, &["init", "--json"]);
    assert_eq!(code, 0, "{out}");
    let init: Value = serde_json::from_str(&out).unwrap();
    let c2 = init["sessionId"].as_str().unwrap().to_string();
    r.start(
        "proj2-coordinator",
        &proj2,
        &format!("{pi} --session-id {c2}"),
    );
    wait_for(60_000, || {
        std::fs::read_dir(proj2.join(".pi-intercom/seats"))
            .ok()?
            .flatten()
            .any(|e| e.file_name().to_string_lossy().ends_with(".json"))
            .then_some(())
    })
    .expect("proj2's coordinator registered");
    let (code, out) = r.run(
        &proj2,
        &[
            "spawn",
            "W1",
            "--prompt",
            "Which branch should W1 use? SCENARIO:waiting",
            "--json",
        ],
    );
    assert_eq!(code, 0, "spawn: {out}");
    let roster2: Value =
        serde_json::from_slice(&std::fs::read(proj2.join(".pi-intercom/config.json")).unwrap())
            .unwrap();
    let w1 = roster2["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "W1")
        .unwrap()["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    wait_for(90_000, || r.settled(&proj2, &w1).then_some(()))
        .unwrap_or_else(|| panic!("W1 never asked: {out}"));

    // A one-shot run in proj's folder, finished before the boards look.
    let one_shot = Command::new(real_pi().join("pi"))
        .args([
            "--provider",
            "fake",
            "--model",
            "fake-model",
            "-p",
            "hello one-shot",
        ])
        .current_dir(&proj)
        .env_clear()
        .envs(r.vars.iter().map(|(k, v)| (k, v)))
        .output()
        .unwrap();
    assert!(one_shot.status.success(), "{one_shot:?}");

    // Builder resumed on its file (as `resume-worker` starts it): its pi shows no session flag.
    let builder_file = r.file(&proj, BUILDER).unwrap();
    r.server.tmux(&["send-keys", "-t", "=Builder:", "C-d"]);
    wait_for(20_000, || {
        let l = r.server.tmux(&[
            "list-panes",
            "-t",
            "=Builder:",
            "-F",
            "#{pane_current_command}",
        ]);
        (l.trim() != "pi").then_some(())
    })
    .unwrap_or_else(|| panic!("Builder's pi did not quit:\n{}", r.screen("Builder")));
    r.server.tmux(&[
        "send-keys",
        "-t",
        "=Builder:",
        &format!("{pi} --session {}", builder_file.display()),
        "Enter",
    ]);
    wait_ready(&r.server, "=Builder:");

    // proj's board: its three agents only, each from its own evidence.
    let a = wait_for(30_000, || {
        let a = r.board(&proj);
        (rec(&a, "Builder")["registered"]["alive"] == true).then_some(a)
    })
    .unwrap_or_else(|| {
        panic!(
            "Builder's resumed pi never registered: {:#}",
            r.board(&proj)
        )
    });
    let names: Vec<&str> = records(&a)
        .iter()
        .filter_map(|x| x["agent"].as_str())
        .collect();
    assert_eq!(names.len(), 3, "{names:?}: {a:#}");
    for n in ["Coordinator", "Builder", "Reviewer"] {
        assert!(names.contains(&n), "{names:?}");
    }
    let text = a.to_string();
    assert!(
        !text.contains(&w1) && !text.contains(&c2),
        "proj's board names a proj2 session"
    );
    assert!(
        !text.contains("Which branch"),
        "proj's board shows proj2's question"
    );
    let b = rec(&a, "Builder");
    assert_eq!(b["state"], "waiting", "{b}");
    assert_eq!(b["sessionId"], BUILDER, "{b}");
    let rv = rec(&a, "Reviewer");
    assert_eq!(rv["alive"], true, "Reviewer's pi runs: {rv}");
    assert_eq!(rv["state"], "idle", "{rv}");
    assert_eq!(rv["sessionId"], REVIEWER, "{rv}");
    let c = rec(&a, "Coordinator");
    assert_eq!(c["sessionId"], C, "{c}");
    assert_eq!(a["counts"]["waiting"], 1, "{a:#}");

    // proj2's board: its coordinator reads its own session (none written yet), W1 waits.
    let z = r.board(&proj2);
    let zt = z.to_string();
    assert!(
        !zt.contains(BUILDER) && !zt.contains(C),
        "proj2's board names a proj session"
    );
    assert_eq!(records(&z).len(), 2, "{z:#}");
    let zc = rec(&z, "Coordinator");
    assert_eq!(zc["sessionId"], c2.as_str(), "{zc}");
    assert_ne!(zc["state"], "waiting", "{zc}");
    assert!(
        zc["sessionFile"]
            .as_str()
            .is_none_or(|f| f.contains(c2.as_str())),
        "{zc}"
    );
    let zw = rec(&z, "W1");
    assert_eq!(zw["state"], "waiting", "{zw}");
    assert!(
        zw["question"]
            .as_str()
            .is_some_and(|q| q.contains("staging")),
        "{zw}"
    );
    assert_eq!(z["counts"]["waiting"], 1, "{z:#}");
    let ex = r.explain(&proj2, "Coordinator");
    assert!(
        !ex.contains(&w1),
        "proj2's coordinator explained with W1's file: {ex}"
    );

    // The coordinator's own tool says the same.
    r.prompt("Coordinator", "TOOLCALL intercom_board {}");
    let page = wait_for(60_000, || {
        r.entries(&proj, C).into_iter().find_map(|e| {
            (e["message"]["role"] == "toolResult" && e["message"]["toolName"] == "intercom_board")
                .then(|| {
                    e["message"]["content"][0]["text"]
                        .as_str()
                        .unwrap_or("")
                        .to_string()
                })
        })
    })
    .unwrap_or_else(|| panic!("no intercom_board result:\n{}", r.screen("Coordinator")));
    assert!(
        page.contains("Builder") && page.contains("Reviewer"),
        "{page}"
    );
    assert!(!page.contains("W1") && !page.contains(&w1), "{page}");

    // doctor: proj2 has nothing wrong with its seats; proj names the one true cause (Reviewer's
    // pi runs without the extension), never proj2's pis.
    let d2 = r.doctor(&proj2);
    assert_eq!(d2["ok"], true, "{d2:#}");
    assert_eq!(check(&d2, "extension loaded")["status"], "ok", "{d2:#}");
    assert_eq!(check(&d2, "sessions")["status"], "ok", "{d2:#}");
    let d = r.doctor(&proj);
    let ext = check(&d, "extension loaded");
    assert_eq!(ext["status"], "fail", "{d:#}");
    let detail = ext.to_string();
    assert!(detail.contains("Reviewer"), "{detail}");
    assert!(
        !detail.contains("Builder") && !detail.contains("W1"),
        "{detail}"
    );
    assert_eq!(check(&d, "sessions")["status"], "ok", "{d:#}");
}
