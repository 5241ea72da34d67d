//! Budgets with a real pi 1.6.0 (issue 40): a worker on a priced scripted model ($0.10 a call)
//! with a $0.25 budget (soft at 70 %) crosses the soft limit (exactly one `budget_soft` alert
//! from a `watch`), then the hard one: the next typed prompt and a `reply` are held by its
//! extension, shown in pi's window with how to lift it, never sent to the model, and the row
//! reads `waiting · budget reached`; `budget W --raise 0.1` lets exactly one held prompt through
//! (its turn spends past the new limit, so the other stays held; the new limit is a new crossing,
//! one more alert), the change is recorded, and `/budget raise 1` typed in pi lets the reply go.
//! A roster-wide budget holds two workers alike once their spending together reaches it.
//!
//! Runs only with `INTERCOM_PANE_REAL_PI` (see tests/real_pi/real_pi.rs); otherwise it is
//! reported as ignored, with the reason.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_support;
use crate::real_pi_support;
use crate::scan_support;

use std::path::{Path, PathBuf};

use mux_support::{wait_for, TmuxServer};
use real_pi_support::{real_pi, start_model, submit_first, user_messages, wait_ready, SERIAL};
use scan_support::*;
use serde_json::{json, Value};

/// The roster: a coordinator and `workers` (session id, name, budget or null), and the fleet's.
fn write_budget_roster(root: &Path, workers: &[(&str, &str, Value)], fleet: Value) {
    std::fs::create_dir_all(root.join(".pi-intercom")).unwrap();
    let mut agents = vec![
        json!({"sessionId": "coord", "name": "Coordinator", "coordinator": true,
        "description": "C.", "port": 1, "projectDirectory": "."}),
    ];
    for (i, (id, name, budget)) in workers.iter().enumerate() {
        let mut a = json!({"sessionId": id, "name": name, "coordinator": false,
            "description": format!("{name}."), "port": 2 + i, "projectDirectory": "."});
        if !budget.is_null() {
            a["budget"] = budget.clone();
        }
        agents.push(a);
    }
    let mut cfg = json!({"version": 1, "agents": agents});
    if !fleet.is_null() {
        cfg["budget"] = fleet;
    }
    std::fs::write(root.join(".pi-intercom/config.json"), cfg.to_string()).unwrap();
}

struct Board {
    env: Env,
    server: TmuxServer,
    agent: PathBuf,
    watch: Option<std::process::Child>,
}

impl Drop for Board {
    fn drop(&mut self) {
        if let Some(mut w) = self.watch.take() {
            let _ = w.kill();
            let _ = w.wait();
        }
    }
}

impl Board {
    /// A private tmux with one session per worker (named as the worker), each running a real pi
    /// with the shipped extension on a model priced at $1000 per million input tokens (the
    /// scripted model reports 100 per call: $0.10 a call).
    fn start(workers: &[(&str, &str, Value)], fleet: Value) -> Board {
        Board::start_with(workers, fleet, 128_000, json!({}))
    }

    /// `start` with the model's context window and more pi settings.
    fn start_with(
        workers: &[(&str, &str, Value)],
        fleet: Value,
        window: u64,
        mut settings: Value,
    ) -> Board {
        let env = Env::new().with_system_path();
        let agent = env.dir.path().to_path_buf();
        let port = start_model(3);
        std::fs::write(
            agent.join("models.json"),
            json!({"providers": {"fake": {"baseUrl": format!("http://127.0.0.1:{port}/v1"),
                "api": "openai-completions", "apiKey": "fake",
                "models": [{"id": "fake-model", "contextWindow": window, "maxTokens": 4096,
                    "cost": {"input": 1000, "output": 0, "cacheRead": 0, "cacheWrite": 0}}]}}})
            .to_string(),
        )
        .unwrap();
        settings["packages"] =
            json!([Path::new(env!("CARGO_MANIFEST_DIR")).join("linux/pi-extension")]);
        std::fs::write(agent.join("settings.json"), settings.to_string()).unwrap();
        let root = env.path("root");
        write_budget_roster(&root, workers, fleet);
        let sys = env.system_config();
        let server = TmuxServer::start("desk", &root, &[]);
        for (id, name, _) in workers {
            server.new_session(name, &root, &[]);
            let pane = format!("={name}:");
            server.tmux(&[
                "send-keys",
                "-t",
                &pane,
                &format!(
                    "export PI_OFFLINE=1 PATH={}:$PATH PI_CODING_AGENT_DIR={} INTERCOM_PANE_BIN={} INTERCOM_PANE_CONFIG={sys}; pi --provider fake --model fake-model --session-id {id}",
                    real_pi().display(),
                    agent.display(),
                    env!("CARGO_BIN_EXE_intercom-pane")
                ),
                "Enter",
            ]);
        }
        for (_, name, _) in workers {
            let pane = format!("={name}:");
            if window == 128_000 {
                wait_ready(&server, &pane);
            } else {
                // The footer names the model after the context fill (`2.1%/5.0k`).
                wait_for(60_000, || {
                    let screen = server.tmux(&["capture-pane", "-p", "-t", &pane]);
                    screen
                        .lines()
                        .any(|l| l.contains("%/") && l.trim_end().ends_with("fake-model"))
                        .then_some(())
                })
                .unwrap_or_else(|| panic!("pi never became ready"));
                std::thread::sleep(std::time::Duration::from_millis(500));
            }
        }
        Board {
            env,
            server,
            agent,
            watch: None,
        }
    }

    fn common(&self) -> Vec<String> {
        [
            "--config",
            &self.env.system_config(),
            "--root",
            &self.env.path("root").display().to_string(),
            "--sessions-dir",
            &self.agent.join("sessions").display().to_string(),
            "--fleet",
            "none",
            "--tmux-socket",
            &self.server.sock.display().to_string(),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    }

    fn run(&self, cmd: &[&str]) -> std::process::Output {
        let mut args: Vec<String> = cmd.iter().map(|s| s.to_string()).collect();
        args.extend(self.common());
        self.env.run(&args)
    }

    /// A `watch` recording every alert's JSON line in `alerts.jsonl`.
    fn watch(&mut self) {
        let out = self.env.path("alerts.jsonl");
        let mut args = vec!["watch".to_string()];
        args.extend(self.common());
        args.extend(
            [
                "--settle-secs",
                "1",
                "--no-desktop",
                "--on-alert",
                "/bin/sh",
                "-c",
                &format!("cat >> '{}'", out.display()),
            ]
            .iter()
            .map(|s| s.to_string()),
        );
        let child = std::process::Command::new(env!("CARGO_BIN_EXE_intercom-pane"))
            .args(&args)
            .current_dir(self.env.dir.path())
            .env("HOME", self.env.path("home"))
            .env("XDG_STATE_HOME", self.env.path("state"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        self.watch = Some(child);
    }

    fn alerts(&self, reason: &str) -> Vec<Value> {
        std::fs::read_to_string(self.env.path("alerts.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|v| v["reason"] == reason)
            .collect()
    }

    fn record(&self, name: &str) -> Value {
        let idx = stdout_json(&self.run(&["scan", "--json"]));
        record(&idx, name).clone()
    }

    fn screen(&self, name: &str) -> String {
        self.server
            .tmux(&["capture-pane", "-p", "-t", &format!("={name}:")])
    }

    fn session_file(&self, id: &str) -> PathBuf {
        wait_for(30_000, || find_session(&self.agent.join("sessions"), id))
            .unwrap_or_else(|| panic!("no session file for {id}"))
    }

    /// The worker's budget line (`budget NAME --json`'s standing).
    fn line(&self, name: &str) -> String {
        let v = stdout_json(&self.run(&["budget", name, "--json"]));
        v["standing"]["line"].as_str().unwrap_or("").to_string()
    }

    fn wait_line(&self, name: &str, want: &str) {
        wait_for(60_000, || self.line(name).contains(want).then_some(())).unwrap_or_else(|| {
            panic!(
                "{name}: budget never read {want:?}: {:?}\n{}",
                self.line(name),
                self.screen(name)
            )
        });
    }

    fn type_prompt(&self, name: &str, text: &str) {
        let pane = format!("={name}:");
        self.server.tmux(&["send-keys", "-t", &pane, "-l", text]);
        self.server.tmux(&["send-keys", "-t", &pane, "Enter"]);
    }

    fn wait_screen(&self, name: &str, want: &str) {
        wait_for(60_000, || self.screen(name).contains(want).then_some(()))
            .unwrap_or_else(|| panic!("{name}: never showed {want:?}:\n{}", self.screen(name)));
    }
}

/// The session file whose name holds `id`, under `dir` (pi keeps one folder per cwd).
fn find_session(dir: &Path, id: &str) -> Option<PathBuf> {
    for d in std::fs::read_dir(dir).ok()?.flatten() {
        for f in std::fs::read_dir(d.path()).ok()?.flatten() {
            if f.file_name().to_string_lossy().contains(id) {
                return Some(f.path());
            }
        }
    }
    None
}

fn count(msgs: &[String], text: &str) -> usize {
    msgs.iter().filter(|m| m.as_str() == text).count()
}

#[test]
#[cfg_attr(
    not(real_pi),
    ignore = "real-pi tier: INTERCOM_PANE_REAL_PI names no folder with pi and node 22 (.ci/run installs them)"
)]
fn a_worker_is_warned_once_then_held_and_a_raise_lets_one_prompt_through() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let id = "b0000000-0000-4000-8000-000000000001";
    let mut b = Board::start(
        &[(id, "W", json!({"costUsd": 0.25, "softPercent": 70}))],
        Value::Null,
    );
    b.watch();

    // $0.10, then $0.20: past the soft limit ($0.175): one alert.
    submit_first(&b.server, "=W:", "first task");
    let file = b.session_file(id);
    b.wait_line("W", "$0.10/0.25");
    b.type_prompt("W", "second task");
    b.wait_line("W", "$0.20/0.25 soft");
    wait_for(60_000, || {
        (!b.alerts("budget_soft").is_empty()).then_some(())
    })
    .unwrap_or_else(|| panic!("no soft alert: {:?}", b.alerts("budget_soft")));
    let soft = b.alerts("budget_soft");
    assert_eq!(soft[0]["seat"], "W", "{soft:?}");
    assert_eq!(soft[0]["sessionId"], id, "{soft:?}");

    // $0.30: reached. The next typed prompt is held, visibly, and never reaches the model.
    b.type_prompt("W", "third task");
    b.wait_line("W", "$0.30/0.25 reached");
    b.type_prompt("W", "fourth task HELD");
    b.wait_screen("W", "1 prompt is held");
    assert!(
        b.screen("W").contains("budget W --raise"),
        "{}",
        b.screen("W")
    );
    let w = wait_for(30_000, || {
        let w = b.record("W");
        (w["state"] == "waiting" && w["stateReason"] == "budget_reached").then_some(w)
    })
    .unwrap_or_else(|| panic!("never budget reached: {}", b.record("W")));
    assert_eq!(w["budget"]["held"], 1, "{w}");
    assert_eq!(w["budget"]["enforced"], true, "{w}");

    // A reply from the board is held too (queued, said so), behind the typed one.
    let o = b.run(&["reply", "W", "fifth task REPLY", "--json"]);
    let rep: Value = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    assert!(
        rep.to_string().contains("held by the budget"),
        "{rep} {}",
        String::from_utf8_lossy(&o.stderr)
    );
    b.wait_screen("W", "2 prompts are held");
    let msgs = user_messages(&file);
    assert_eq!(count(&msgs, "fourth task HELD"), 0, "{msgs:?}");
    assert_eq!(count(&msgs, "fifth task REPLY"), 0, "{msgs:?}");
    // Still one soft alert: reaching the limit is the same crossing.
    assert_eq!(
        b.alerts("budget_soft").len(),
        1,
        "{:?}",
        b.alerts("budget_soft")
    );

    // Raised to $0.35: the first held prompt goes, once; its turn reaches $0.40, so the
    // reply stays held.
    let o = b.run(&["budget", "W", "--raise", "0.1"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    b.wait_line("W", "$0.40/0.35 reached");
    b.wait_screen("W", "1 prompt is held");
    // Several checks later, nothing more went.
    std::thread::sleep(std::time::Duration::from_secs(6));
    let msgs = user_messages(&file);
    assert_eq!(count(&msgs, "fourth task HELD"), 1, "{msgs:?}");
    assert_eq!(count(&msgs, "fifth task REPLY"), 0, "{msgs:?}");
    // The new limit is a new crossing: one more alert, naming it, and only one.
    let soft = b.alerts("budget_soft");
    assert_eq!(soft.len(), 2, "{soft:?}");
    assert_eq!(
        soft[1]["turn"], "waiting:budget-soft:own:usd:0.35",
        "{soft:?}"
    );

    // The change is recorded, and `/budget raise` inside pi lifts it too.
    let v = stdout_json(&b.run(&["budget", "W", "--json"]));
    let changes = v["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{v}");
    assert_eq!(changes[0]["by"], "cli");
    assert_eq!(changes[0]["from"]["costUsd"], 0.25);
    assert_eq!(changes[0]["to"]["costUsd"], 0.35);
    b.type_prompt("W", "/budget raise 1");
    wait_for(60_000, || {
        (count(&user_messages(&file), "fifth task REPLY") == 1).then_some(())
    })
    .unwrap_or_else(|| panic!("the reply never went:\n{}", b.screen("W")));
    let v = stdout_json(&b.run(&["budget", "W", "--json"]));
    assert_eq!(v["changes"][1]["by"], "pi", "{v}");
    assert_eq!(count(&user_messages(&file), "fourth task HELD"), 1);
}

#[test]
#[cfg_attr(
    not(real_pi),
    ignore = "real-pi tier: INTERCOM_PANE_REAL_PI names no folder with pi and node 22 (.ci/run installs them)"
)]
fn a_fleet_budget_holds_every_worker_once_they_spend_it_together() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (a, c) = (
        "b0000000-0000-4000-8000-00000000000a",
        "b0000000-0000-4000-8000-00000000000c",
    );
    let b = Board::start(
        &[(a, "A", Value::Null), (c, "C", Value::Null)],
        json!({"costUsd": 0.25}),
    );
    submit_first(&b.server, "=A:", "a one");
    let fa = b.session_file(a);
    b.wait_line("A", "fleet $0.10/0.25");
    submit_first(&b.server, "=C:", "c one");
    let fc = b.session_file(c);
    b.wait_line("A", "fleet $0.20/0.25");
    b.type_prompt("C", "c two");
    b.wait_line("C", "fleet $0.30/0.25 reached");
    // Both are held now: the fleet's spending is theirs together.
    b.type_prompt("A", "a held");
    b.type_prompt("C", "c held");
    b.wait_screen("A", "1 prompt is held");
    b.wait_screen("C", "1 prompt is held");
    assert_eq!(count(&user_messages(&fa), "a held"), 0);
    assert_eq!(count(&user_messages(&fc), "c held"), 0);
    for n in ["A", "C"] {
        wait_for(30_000, || {
            (b.record(n)["stateReason"] == "budget_reached").then_some(())
        })
        .unwrap_or_else(|| panic!("{n} never budget reached: {}", b.record(n)));
    }
}

#[test]
#[cfg_attr(
    not(real_pi),
    ignore = "real-pi tier: INTERCOM_PANE_REAL_PI names no folder with pi and node 22 (.ci/run installs them)"
)]
fn at_the_context_limit_with_on_context_compact_pi_compacts_then_the_prompt_goes_once() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let id = "b0000000-0000-4000-8000-0000000000cc";
    // A 5000-token window: one call (103 tokens) fills 2 %, past a 1 % limit.
    let b = Board::start_with(
        &[(
            id,
            "W",
            json!({"contextPercent": 1, "onContext": "compact"}),
        )],
        Value::Null,
        5000,
        json!({"compaction": {"enabled": false, "keepRecentTokens": 1}}),
    );
    submit_first(&b.server, "=W:", "first task");
    let file = b.session_file(id);
    b.wait_line("W", "context 2%/1% reached");
    b.type_prompt("W", "second task");
    // pi compacts first, then the prompt goes, once.
    wait_for(60_000, || {
        (count(&user_messages(&file), "second task") == 1).then_some(())
    })
    .unwrap_or_else(|| panic!("the prompt never went:\n{}", b.screen("W")));
    let text = std::fs::read_to_string(&file).unwrap();
    let compaction = text
        .lines()
        .position(|l| l.contains("\"type\":\"compaction\""))
        .unwrap_or_else(|| panic!("no compaction in the session:\n{text}"));
    let prompt = text
        .lines()
        .position(|l| l.contains("second task"))
        .unwrap();
    assert!(compaction < prompt, "compaction after the prompt:\n{text}");
    std::thread::sleep(std::time::Duration::from_secs(4));
    assert_eq!(count(&user_messages(&file), "second task"), 1);
}
