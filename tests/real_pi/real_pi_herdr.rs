//! Real pi 1.6.0 with the shipped extension in the panes of a real Herdr 0.8.2: each test starts
//! its own private headless Herdr server (own `XDG_CONFIG_HOME` and `HERDR_SESSION`) and stops
//! only that one. A worker registers itself (the extension runs the real `register`) and the
//! board reads its true state; moved to another workspace (a new pane id) and to another tab, it
//! keeps its true state and `close-worker` closes exactly its pane; replies arrive through the
//! extension's channel and through Herdr's `agent.prompt`, where a draft in pi's editor is
//! refused, never merged. After its server is killed, `restore` brings a real coordinator and
//! worker back in it, each on its own session file.
//!
//! Compiled as ignored, with the reason, unless both a real pi (`INTERCOM_PANE_REAL_PI`) and
//! `herdr` on PATH were there at build time.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::herdr_real::RealHerdr;
use crate::mux_support::wait_for;
use crate::real_pi::{binary_on_path, prepare_agent_dir};
use crate::real_pi_support::{real_pi, SERIAL};
use crate::scan_support::*;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};

/// A real pi worker `W` in a pane of a private Herdr server, registered by the shipped
/// extension, its first prompt answered and the roster naming it.
struct HerdrWorker {
    env: Env,
    herdr: RealHerdr,
    root: PathBuf,
    /// The worker's pane as it started (its id changes when it moves to another workspace).
    pane: String,
    /// A pane beside it that must never be closed.
    bystander: String,
    file: PathBuf,
}

/// The roster: a coordinator (`coord`, not running) and the workers, on Herdr.
fn herdr_roster(root: &Path, workers: &[(&str, &str)]) {
    std::fs::create_dir_all(root.join(".pi-intercom")).unwrap();
    let mut agents = vec![
        json!({"sessionId": "coord", "name": "Coordinator", "coordinator": true,
        "description": "C.", "port": 1, "projectDirectory": "."}),
    ];
    for (i, (id, name)) in workers.iter().enumerate() {
        agents.push(json!({"sessionId": id, "name": name, "coordinator": false,
            "description": format!("{name}."), "port": 2 + i, "projectDirectory": "."}));
    }
    let cfg = json!({"version": 1, "multiplexer": "herdr", "agents": agents});
    let tmp = root.join(".pi-intercom/config.json.tmp");
    std::fs::write(&tmp, cfg.to_string()).unwrap();
    std::fs::rename(&tmp, root.join(".pi-intercom/config.json")).unwrap();
}

impl HerdrWorker {
    fn start(channel: bool) -> HerdrWorker {
        let bin = real_pi();
        let env = Env::new().with_system_path();
        let agent = env.dir.path().to_path_buf();
        let root = env.path("root");
        herdr_roster(&root, &[]);
        prepare_agent_dir(&agent);
        let tools = binary_on_path(&env);
        let sys = env.system_config();
        let herdr = RealHerdr::start();
        let pane = herdr.background_pane(&root.display().to_string(), "work");
        let split = herdr.result(&["pane", "split", &pane, "--direction", "right", "--no-focus"]);
        let bystander = split["pane"]["pane_id"].as_str().unwrap().to_string();
        herdr.shell_pid(&pane);
        let line = format!(
            "export PI_OFFLINE=1 PATH={}:{}:$PATH PI_CODING_AGENT_DIR={} INTERCOM_PANE_CONFIG={sys} INTERCOM_PANE_CHANNEL={}; pi --provider fake --model fake-model",
            tools.display(),
            bin.display(),
            agent.display(),
            if channel { "on" } else { "off" }
        );
        herdr.cli(&["pane", "run", &pane, &line]);
        let mut w = HerdrWorker {
            env,
            herdr,
            root,
            pane,
            bystander,
            file: PathBuf::new(),
        };
        w.wait_ready(&w.pane.clone());
        w.file = w.first_prompt(&agent.join("sessions"));
        herdr_roster(&w.root, &[(&header_id(&w.file), "W")]);
        wait_for(20_000, || {
            let r = w.record();
            (r["registered"]["alive"] == true && r["state"] == "idle").then_some(())
        })
        .unwrap_or_else(|| panic!("not registered and idle: {}", w.record()));
        w
    }

    fn screen(&self, pane: &str) -> String {
        let o = self
            .herdr
            .cli(&["pane", "read", pane, "--source", "visible"]);
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// pi's footer (context use, then the model) is drawn: its editor takes input.
    fn wait_ready(&self, pane: &str) {
        wait_for(60_000, || {
            self.screen(pane)
                .lines()
                .any(|l| l.contains("/128k") && l.trim_end().ends_with("fake-model"))
                .then_some(())
        })
        .unwrap_or_else(|| panic!("pi never became ready:\n{}", self.screen(pane)));
        std::thread::sleep(Duration::from_millis(800));
    }

    /// Type into pi's editor as a person would (Herdr's `pane send-text`, then Enter).
    fn type_line(&self, pane: &str, text: &str, enter: bool) {
        self.herdr.cli(&["pane", "send-text", pane, text]);
        if enter {
            std::thread::sleep(Duration::from_millis(200));
            self.herdr.cli(&["pane", "send-keys", pane, "Enter"]);
        }
    }

    fn first_prompt(&self, sessions: &Path) -> PathBuf {
        let first = || {
            let dir = std::fs::read_dir(sessions).ok()?.flatten().next()?.path();
            let f = std::fs::read_dir(dir).ok()?.flatten().next()?.path();
            let text = std::fs::read_to_string(&f).ok()?;
            let line = text.lines().next().filter(|_| text.contains('\n'))?;
            serde_json::from_str::<Value>(line).ok()?["id"].as_str()?;
            Some(f)
        };
        for _ in 0..5 {
            self.type_line(&self.pane, "hello", true);
            if let Some(f) = wait_for(6_000, first) {
                return f;
            }
        }
        panic!("pi wrote no session file:\n{}", self.screen(&self.pane));
    }

    fn record(&self) -> Value {
        record(&scan_json(&self.env, &[]), "W").clone()
    }

    /// The pane that holds the worker's pi now, as Herdr lists it (by its terminal).
    fn pane_now(&self, terminal: &str) -> String {
        let list = self.herdr.result(&["pane", "list"]);
        list["panes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["terminal_id"] == terminal)
            .map(|p| p["pane_id"].as_str().unwrap().to_string())
            .unwrap_or_default()
    }

    fn terminal_of(&self, pane: &str) -> String {
        self.herdr.result(&["pane", "get", pane])["pane"]["terminal_id"]
            .as_str()
            .unwrap()
            .to_string()
    }

    fn pane_ids(&self) -> Vec<String> {
        let list = self.herdr.result(&["pane", "list"]);
        let mut ids: Vec<String> = list["panes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["pane_id"].as_str().unwrap().to_string())
            .collect();
        ids.sort();
        ids
    }

    fn reply(&self, text: &str) -> (i32, Value, String) {
        let o = self
            .env
            .run(&layout_args(&self.env, &["reply"], &["--json", "W", text]));
        (
            o.status.code().unwrap_or(-1),
            serde_json::from_slice(&o.stdout).unwrap_or(Value::Null),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    }

    fn user_messages(&self) -> Vec<String> {
        crate::real_pi_support::user_messages(&self.file)
    }

    fn wait_messages(&self, n: usize, pane: &str) -> Vec<String> {
        wait_for(30_000, || {
            let m = self.user_messages();
            (m.len() >= n).then_some(m)
        })
        .unwrap_or_else(|| panic!("fewer than {n} user messages:\n{}", self.screen(pane)))
    }

    fn wait_idle(&self) {
        wait_for(30_000, || {
            let r = self.record();
            (r["state"] == "idle" && r["registered"]["runState"] == "idle").then_some(())
        })
        .unwrap_or_else(|| panic!("pi never settled: {}", self.record()));
    }
}

/// What pi records of a reply: the text alone (no trailer), without its surrounding blanks.
fn body(text: &str) -> String {
    text.trim().to_string()
}

/// Moved to another workspace (Herdr gives the pane a new id; its old id is only an alias) and
/// then to a new tab, the worker keeps reading its true state — alive and idle, registered —
/// and `close-worker` closes exactly the pane its pi is in now. Before pane following, the
/// moved worker read `offline` / `pane_gone` and close-worker refused it.
#[test]
#[cfg_attr(
    not(all(real_pi, real_herdr)),
    ignore = "real-pi + real-Herdr tier: needs INTERCOM_PANE_REAL_PI (pi and node 22) and `herdr` on PATH at build time"
)]
fn a_moved_herdr_worker_keeps_its_state_and_only_its_pane_is_closed() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let w = HerdrWorker::start(true);
    let terminal = w.terminal_of(&w.pane);
    let other = w
        .herdr
        .background_pane(&w.root.display().to_string(), "other");
    // 1. To another workspace: a new id, the same terminal.
    let moved = w.herdr.move_beside(&w.pane, &other, "down");
    assert!(!moved.is_empty() && moved != w.pane, "{moved}");
    let r = w.record();
    assert_eq!(r["state"], "idle", "{r}");
    assert_eq!(r["registered"]["alive"], true, "{r}");
    // 2. pi's next event records where it is now.
    w.type_line(&moved, "after the move", true);
    w.wait_messages(2, &moved);
    w.wait_idle();
    let registered_pane = || {
        let path = w.record()["registered"]["path"]
            .as_str()
            .unwrap()
            .to_string();
        let reg: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        reg["mux"]["paneId"].as_str().unwrap_or("").to_string()
    };
    let followed = wait_for(10_000, || (registered_pane() == moved).then_some(()));
    assert!(
        followed.is_some(),
        "the registration follows: {}",
        registered_pane()
    );
    // 3. To a new tab of that workspace: the same id, another tab.
    w.herdr
        .cli(&["pane", "move", &moved, "--new-tab", "--no-focus"]);
    assert_eq!(w.pane_now(&terminal), moved);
    let r = w.record();
    assert_eq!(
        (r["state"].clone(), r["registered"]["alive"].clone()),
        (json!("idle"), json!(true)),
        "{r}"
    );
    // 4. A reply through the extension's channel arrives exactly, wherever the pane is.
    w.wait_idle();
    let mut expected = w.user_messages();
    let text = "Channel reply after two moves: 'q' \"qq\" $(x) Grüße";
    let (code, receipt, err) = w.reply(text);
    assert_eq!(code, 0, "{receipt} {err}");
    assert_eq!(receipt["transport"], "channel", "{receipt}");
    assert_eq!(receipt["outcome"], "delivered", "{receipt}");
    expected.push(body(text));
    assert_eq!(w.wait_messages(expected.len(), &moved), expected);
    w.wait_idle();
    // 5. close-worker closes exactly that pane.
    let before = w.pane_ids();
    let o = w.env.run(&layout_args(
        &w.env,
        &["close-worker"],
        &["W", "--deadline-secs", "60", "--json"],
    ));
    let report: Value = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{report} {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(report["state"], "closed", "{report}");
    assert_eq!(report["closed"]["pane"], moved.as_str(), "{report}");
    let after = w.pane_ids();
    let gone: Vec<&String> = before.iter().filter(|p| !after.contains(p)).collect();
    assert_eq!(gone, vec![&moved], "exactly the worker's pane was closed");
    assert!(after.contains(&w.bystander) && after.contains(&other));
}

/// A worker without the extension's channel gets replies through Herdr's `agent.prompt`: a
/// text arrives exactly (also after the pane moved to another workspace); a draft in pi's
/// editor is refused (exit 10) and stays, never merged into the reply and submitted.
#[test]
#[cfg_attr(
    not(all(real_pi, real_herdr)),
    ignore = "real-pi + real-Herdr tier: needs INTERCOM_PANE_REAL_PI (pi and node 22) and `herdr` on PATH at build time"
)]
fn agent_prompt_replies_arrive_exactly_or_are_refused() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let w = HerdrWorker::start(false);
    w.wait_idle();
    let mut expected = w.user_messages();
    // 1. Exact.
    let text = "Herdr reply: 'quotes' \"double\" $(whoami) `date` Grüße 🚀\nsecond line";
    let (code, receipt, err) = w.reply(text);
    assert_eq!(code, 0, "{receipt} {err}");
    assert_eq!(receipt["transport"], "herdr", "{receipt}");
    // `queued` too: the label comes from the registration's run state, which can trail pi under
    // load (docs/behaviour.md, the reply transports); that it arrived exactly once is checked below.
    assert!(
        receipt["outcome"] == "delivered" || receipt["outcome"] == "queued",
        "{receipt}"
    );
    expected.push(body(text));
    assert_eq!(w.wait_messages(expected.len(), &w.pane), expected);
    w.wait_idle();
    // 2. A TAB (pi's editor would turn it into spaces) and a first `!` (a shell command there):
    //    refused, nothing sent.
    for text in ["a\tb", "!touch /tmp/never-herdr"] {
        let (code, receipt, err) = w.reply(text);
        assert_eq!(code, 12, "{text:?}: {receipt} {err}");
    }
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(w.user_messages(), expected, "nothing was submitted");
    // 3. A draft: refused, nothing submitted, the draft stays.
    w.type_line(&w.pane, "my unsent draft", false);
    wait_for(5_000, || {
        w.screen(&w.pane).contains("my unsent draft").then_some(())
    })
    .expect("the draft shows");
    let (code, receipt, err) = w.reply("Reply beside a draft");
    assert_eq!(code, 10, "{receipt} {err}");
    assert!(err.contains("draft"), "{err}");
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(w.user_messages(), expected, "nothing was submitted");
    assert!(
        w.screen(&w.pane).contains("my unsent draft"),
        "the draft stays"
    );
    w.herdr.cli(&["pane", "send-keys", &w.pane, "ctrl+u"]);
    wait_for(5_000, || {
        (!w.screen(&w.pane).contains("my unsent draft")).then_some(())
    })
    .expect("draft cleared");
    // 4. Moved to another workspace (a new id): the reply reaches the pi where it is now.
    let other = w
        .herdr
        .background_pane(&w.root.display().to_string(), "other");
    let moved = w.herdr.move_beside(&w.pane, &other, "right");
    assert_ne!(moved, w.pane);
    let (code, receipt, err) = w.reply("After the move");
    assert_eq!(code, 0, "{receipt} {err}");
    assert_eq!(receipt["target"], moved.as_str(), "{receipt}");
    expected.push(body("After the move"));
    assert_eq!(w.wait_messages(expected.len(), &moved), expected);
}

impl HerdrWorker {
    /// `doctor --json` for this roster, with Herdr's socket named as inside a Herdr pane.
    fn doctor(&self) -> Value {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_intercom-pane"))
            .args(layout_args(&self.env, &["doctor", "--json"], &[]))
            .current_dir(self.env.dir.path())
            .env_clear()
            .env("HOME", self.env.path("home"))
            .env("XDG_STATE_HOME", self.env.path("state"))
            .env("PATH", &self.env.path_env)
            .env("TMUX_TMPDIR", self.env.path("tmux-tmp"))
            .env("HERDR_SOCKET_PATH", &self.herdr.socket)
            .output()
            .unwrap();
        serde_json::from_slice(&o.stdout).unwrap_or(Value::Null)
    }
}

fn check<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no {name} check: {report:#}"))
}

/// A roster on Herdr: the doctor does not ask for a tmux server none of its seats needs; with
/// the Herdr server frozen the worker reads `unknown` and the doctor names it and why; with the
/// server stopped (its panes' processes end with it) the worker's registered pi is provably
/// gone, so it reads `offline` (`registered_pi_gone`) though its pane cannot be asked, and the
/// doctor says which seat and why. Before: "no tmux server answers" as a warning, and every
/// seat `unknown` while the server was down.
#[test]
#[cfg_attr(
    not(all(real_pi, real_herdr)),
    ignore = "real-pi + real-Herdr tier: needs INTERCOM_PANE_REAL_PI (pi and node 22) and `herdr` on PATH at build time"
)]
fn a_herdr_roster_is_diagnosed_by_which_seat_and_why() {
    use nix::sys::signal::{kill, Signal};
    use nix::unistd::Pid;
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut w = HerdrWorker::start(true);
    let d = w.doctor();
    let tmux = check(&d, "tmux server");
    assert_eq!(tmux["status"], "skip", "{tmux}");
    assert!(
        tmux["detail"].as_str().unwrap().contains("runs on Herdr"),
        "{tmux}"
    );
    assert_eq!(check(&d, "herdr")["status"], "ok", "{d:#}");

    // Frozen: the pi lives, its pane cannot be asked.
    let server = Pid::from_raw(w.herdr.server_pid().unwrap() as i32);
    kill(server, Signal::SIGSTOP).unwrap();
    let r = w.record();
    let d = w.doctor();
    kill(server, Signal::SIGCONT).unwrap();
    assert_eq!(r["state"], "unknown", "{r}");
    assert!(
        r["stateReason"].as_str().unwrap().starts_with("herdr_"),
        "{r}"
    );
    let seats = check(&d, "herdr seats");
    assert!(
        seats["detail"].as_str().unwrap().contains("root/W (herdr_"),
        "{seats}"
    );

    // Stopped: the pi ended with the server's panes.
    let pid = w.record()["registered"]["pid"].as_i64().unwrap();
    w.herdr.stop_server();
    wait_for(15_000, || {
        (!Path::new(&format!("/proc/{pid}")).exists()).then_some(())
    })
    .expect("pi ended with its pane");
    let r = w.record();
    assert_eq!(r["state"], "offline", "{r}");
    assert_eq!(r["stateReason"], "registered_pi_gone", "{r}");
    let seats = check(&w.doctor(), "herdr seats").clone();
    let detail = seats["detail"].as_str().unwrap();
    assert!(detail.contains("root/W read offline"), "{seats}");
    assert!(detail.contains("registered pi is gone"), "{seats}");
}

/// The coordinator is a real pi with the shipped extension in a background workspace: at its
/// session start the extension runs `ensure-monitor`, which places the sidebar above it without
/// moving the person's focus. After a Herdr server restart (every pane comes back as a fresh
/// shell, the monitor and pi gone) pi is started again in the same pane, and the monitor runs
/// again in its own pane: one monitor pane, never two.
#[test]
#[cfg_attr(
    not(all(real_pi, real_herdr)),
    ignore = "real-pi + real-Herdr tier: needs INTERCOM_PANE_REAL_PI (pi and node 22) and `herdr` on PATH at build time"
)]
fn the_coordinators_pi_places_the_monitor_and_again_after_a_server_restart() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let bin = real_pi();
    let env = Env::new().with_system_path();
    let agent = env.dir.path().to_path_buf();
    let root = env.path("root");
    let coord = uuid::Uuid::new_v4().to_string();
    std::fs::create_dir_all(root.join(".pi-intercom")).unwrap();
    std::fs::write(
        root.join(".pi-intercom/config.json"),
        json!({"version": 1, "multiplexer": "herdr", "agents": [
            {"sessionId": coord, "name": "Coordinator", "coordinator": true,
             "description": "C.", "port": 1, "projectDirectory": "."},
            {"sessionId": "w-1", "name": "W", "coordinator": false,
             "description": "W.", "port": 2, "projectDirectory": "."}]})
        .to_string(),
    )
    .unwrap();
    prepare_agent_dir(&agent);
    let tools = binary_on_path(&env);
    let sys = env.system_config();
    let mut herdr = RealHerdr::start();
    herdr.result(&["workspace", "create", "--cwd", "/tmp", "--label", "front"]);
    let pane = herdr.background_pane(&root.display().to_string(), "coordinator");
    let line = format!(
        "export PI_OFFLINE=1 PATH={}:{}:$PATH PI_CODING_AGENT_DIR={} INTERCOM_PANE_CONFIG={sys}; pi --provider fake --model fake-model --session-id {coord}",
        tools.display(),
        bin.display(),
        agent.display()
    );
    let record_path = intercom_pane::seam::actions::monitor_pane::record_path(&root, &coord);
    let record = || -> Value {
        std::fs::read(&record_path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or(Value::Null)
    };
    let labelled = |h: &RealHerdr| -> Vec<String> {
        h.result(&["pane", "list"])["panes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["label"] == "Intercom monitor")
            .map(|p| p["pane_id"].as_str().unwrap().to_string())
            .collect()
    };
    let focus = |h: &RealHerdr| {
        let s = h.result(&["api", "snapshot"])["snapshot"].clone();
        (
            s["focused_workspace_id"].clone(),
            s["focused_pane_id"].clone(),
        )
    };
    let before = focus(&herdr);
    herdr.shell_pid(&pane);
    herdr.cli(&["pane", "run", &pane, &line]);
    let rec = wait_for(60_000, || {
        let r = record();
        (r["stage"] == "submitted").then_some(r)
    })
    .unwrap_or_else(|| panic!("no monitor placed: {}", record()));
    let monitor = rec["pane"].as_str().unwrap().to_string();
    assert_eq!(labelled(&herdr), vec![monitor.clone()]);
    assert_eq!(focus(&herdr), before, "the person's focus stays: {rec}");

    herdr.stop_server();
    herdr.start_server();
    herdr.shell_pid(&pane);
    herdr.cli(&["pane", "run", &pane, &line]);
    let rec = wait_for(60_000, || {
        let r = record();
        (r["relaunched"] == "after_server_restart" && r["stage"] == "submitted").then_some(r)
    })
    .unwrap_or_else(|| panic!("the monitor was not started again: {}", record()));
    assert_eq!(rec["pane"], monitor.as_str(), "in its own pane");
    assert_eq!(labelled(&herdr), vec![monitor.clone()], "one monitor pane");
    let started = wait_for(15_000, || {
        let info = herdr.result(&["pane", "process-info", "--pane", &monitor]);
        let pi = &info["process_info"];
        (pi["foreground_process_group_id"] != pi["shell_pid"]).then_some(())
    });
    assert!(started.is_some(), "the monitor runs in {monitor}");
}

/// The sessions under `sessions` (pi's folder per working folder, then the files).
fn session_files(sessions: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(sessions)
        .into_iter()
        .flatten()
        .flatten()
        .flat_map(|d| std::fs::read_dir(d.path()).into_iter().flatten().flatten())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    out.sort();
    out
}

/// A real coordinator and a real worker in a private Herdr server (the coordinator in a
/// workspace of its own, the worker in another); the Herdr server is killed (SIGKILL: both pis
/// go with it), the person starts Herdr again and works in a workspace of their own; `restore`
/// brings both back there — the coordinator in an unfocused workspace of its own, the worker as
/// a tab in it —, each pi registered again on its own session file; a second run starts nothing.
#[test]
#[cfg_attr(
    not(all(real_pi, real_herdr)),
    ignore = "real-pi + real-Herdr tier: needs INTERCOM_PANE_REAL_PI (pi and node 22) and `herdr` on PATH at build time"
)]
fn restore_brings_real_pis_back_in_herdr_after_its_server_was_killed() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let bin = real_pi();
    let env = Env::new().with_system_path();
    let agent = env.path("agent");
    std::fs::create_dir_all(&agent).unwrap();
    prepare_agent_dir(&agent);
    let root = env.path("root");
    std::fs::create_dir_all(root.join("work")).unwrap();
    herdr_roster(&root, &[]);
    let tools = binary_on_path(&env);
    let sys = env.system_config();
    let mut herdr = RealHerdr::start();
    let sessions = agent.join("sessions");
    let path = format!(
        "{}:{}:/usr/local/bin:/usr/bin:/bin",
        tools.display(),
        bin.display()
    );
    // Each pi as a person starts it, in its own workspace; its first prompt writes its file.
    let start = |cwd: &Path, label: &str| -> (String, PathBuf) {
        let before = session_files(&sessions);
        let pane = herdr.background_pane(&cwd.display().to_string(), label);
        herdr.shell_pid(&pane);
        let line = format!(
            "export PI_OFFLINE=1 PATH={path} PI_CODING_AGENT_DIR={} INTERCOM_PANE_CONFIG={sys}; pi --provider fake --model fake-model",
            agent.display()
        );
        herdr.cli(&["pane", "run", &pane, &line]);
        let screen = |p: &str| {
            String::from_utf8_lossy(
                &herdr
                    .cli(&["pane", "read", p, "--source", "visible"])
                    .stdout,
            )
            .into_owned()
        };
        wait_for(60_000, || {
            screen(&pane)
                .lines()
                .any(|l| l.contains("/128k") && l.trim_end().ends_with("fake-model"))
                .then_some(())
        })
        .unwrap_or_else(|| panic!("pi never became ready:\n{}", screen(&pane)));
        std::thread::sleep(Duration::from_millis(800));
        for _ in 0..5 {
            herdr.cli(&["pane", "send-text", &pane, "hello"]);
            std::thread::sleep(Duration::from_millis(200));
            herdr.cli(&["pane", "send-keys", &pane, "Enter"]);
            let new = wait_for(6_000, || {
                session_files(&sessions).into_iter().find(|f| {
                    !before.contains(f)
                        && std::fs::read_to_string(f).is_ok_and(|t| t.contains('\n'))
                })
            });
            if let Some(f) = new {
                return (pane, f);
            }
        }
        panic!("pi wrote no session file:\n{}", screen(&pane));
    };
    let (_, coord_file) = start(&root, "coord-ws");
    let (_, work_file) = start(&root.join("work"), "work-ws");
    let (coord_id, work_id) = (header_id(&coord_file), header_id(&work_file));
    let cfg = json!({"version": 1, "multiplexer": "herdr", "agents": [
        {"sessionId": coord_id, "name": "Coordinator", "coordinator": true, "description": "C.", "port": 47311, "projectDirectory": "."},
        {"sessionId": work_id, "name": "W", "coordinator": false, "description": "W.", "port": 47312, "projectDirectory": "work"}]});
    let tmp = root.join(".pi-intercom/config.json.tmp");
    std::fs::write(&tmp, cfg.to_string()).unwrap();
    std::fs::rename(&tmp, root.join(".pi-intercom/config.json")).unwrap();
    let board = |name: &str| record(&scan_json(&env, &[]), name).clone();
    wait_for(30_000, || {
        ["Coordinator", "W"]
            .iter()
            .all(|n| board(n)["registered"]["alive"] == true)
            .then_some(())
    })
    .unwrap_or_else(|| {
        panic!(
            "not both registered: {} {}",
            board("Coordinator"),
            board("W")
        )
    });

    // Herdr dies with every pi in it; the person starts it again and works elsewhere.
    let server = herdr.server_pid().unwrap() as i32;
    unsafe { libc::kill(server, libc::SIGKILL) };
    herdr.stop_server();
    wait_for(30_000, || {
        ["Coordinator", "W"]
            .iter()
            .all(|n| board(n)["registered"]["alive"] != true)
            .then_some(())
    })
    .expect("a pi outlived its Herdr server");
    herdr.start_server();
    herdr.result(&["workspace", "create", "--cwd", "/tmp", "--label", "front"]);
    let focus = || {
        let f = herdr
            .client()
            .focus(std::time::Instant::now() + Duration::from_secs(5))
            .unwrap();
        (f.workspace, f.pane)
    };
    let before = focus();

    let agent_s = agent.display().to_string();
    let vars: Vec<(&str, &std::ffi::OsStr)> = vec![
        ("PATH", path.as_ref()),
        ("PI_OFFLINE", "1".as_ref()),
        ("PI_CODING_AGENT_DIR", agent_s.as_ref()),
    ];
    let pi = bin.join("pi").display().to_string();
    let restore = || {
        let o = env.run_with(
            &layout_args(
                &env,
                &["restore"],
                &["--pi", &pi, "--json", "--wait-secs", "90"],
            ),
            &vars,
        );
        (
            o.status.code(),
            serde_json::from_slice::<Value>(&o.stdout).unwrap_or(Value::Null),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (code, out, err) = restore();
    assert_eq!(code, Some(0), "{out} {err}");
    let line = |name: &str| {
        out["agents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("no line for {name}: {out}"))
    };
    for n in ["Coordinator", "W"] {
        assert_eq!(line(n)["outcome"], "restored", "{n}: {out}");
    }
    // Each real pi registered again, alive, on its own session file.
    for (n, f) in [("Coordinator", &coord_file), ("W", &work_file)] {
        let r = wait_for(30_000, || {
            let r = board(n);
            (r["registered"]["alive"] == true).then_some(r)
        })
        .unwrap_or_else(|| panic!("{n} not registered again: {}", board(n)));
        assert_eq!(r["sessionFile"], f.display().to_string(), "{r}");
    }
    // The coordinator in a workspace of its own, the worker a tab in it; the focus stayed.
    let ws_of = |pane: &str| herdr.result(&["pane", "get", pane])["pane"]["workspace_id"].clone();
    let coord_ws = ws_of(line("Coordinator")["pane"].as_str().unwrap());
    assert_eq!(ws_of(line("W")["pane"].as_str().unwrap()), coord_ws);
    let wss = herdr.result(&["workspace", "list"]);
    assert!(
        wss["workspaces"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["workspace_id"] == coord_ws && w["label"] == "Coordinator"),
        "{wss}"
    );
    let now = focus();
    if now != before {
        // What holds the focus, and what placed what (the sidebar's placement logs its note).
        let snap = herdr.result(&["api", "snapshot"]).to_string();
        panic!(
            "restore took the focus: {now:?}, was {before:?}; restore said {out}; Herdr: {}",
            &snap[..snap.len().min(6000)]
        );
    }
    // A second run starts nothing.
    let (code, again, err) = restore();
    assert_eq!(code, Some(0), "{again} {err}");
    assert_eq!(again["startedNothing"], true, "{again}");
}
