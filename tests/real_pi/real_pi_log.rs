//! `intercom-pane log NAME` on a real pi 1.6.0 worker (the shipped extension loaded, a scripted
//! model): a tool call that works, one that fails, a question answered through `reply` (the CLI),
//! a turn the person aborts, and a provider failure pi retries; `log --json` lists them in order,
//! each with how it ended and who sent the answer; `log --follow` shows a new tool call soon
//! after pi writes it.
//!
//! Runs only with `INTERCOM_PANE_REAL_PI` (see tests/real_pi/real_pi.rs); otherwise `cargo test`
//! reports it as ignored, with the reason.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_support;
use crate::real_pi::{binary_on_path, prepare_agent_dir};
use crate::real_pi_support;
use crate::scan_support;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mux_support::{wait_for, TmuxServer};
use real_pi_support::{clear_requests, real_pi, wait_ready, SERIAL};
use scan_support::*;
use serde_json::{json, Value};

const C: &str = "7e000000-0000-4000-8000-00000000c0c0";
const W: &str = "7e000000-0000-4000-8000-0000000000a1";

struct Desk {
    env: Env,
    server: TmuxServer,
    root: PathBuf,
    sessions: PathBuf,
}

impl Desk {
    fn file(&self) -> Option<PathBuf> {
        let dir = std::fs::read_dir(&self.sessions)
            .ok()?
            .flatten()
            .next()?
            .path();
        std::fs::read_dir(dir)
            .ok()?
            .flatten()
            .map(|e| e.path())
            .find(|p| p.to_string_lossy().ends_with(&format!("_{W}.jsonl")))
    }

    fn entries(&self) -> Vec<Value> {
        let text = self
            .file()
            .and_then(|f| std::fs::read_to_string(f).ok())
            .unwrap_or_default();
        text.lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    fn screen(&self) -> String {
        self.server.tmux(&["capture-pane", "-p", "-t", "=W:"])
    }

    fn prompt(&self, text: &str) {
        self.server.tmux(&["send-keys", "-t", "=W:", "-l", text]);
        let head: String = text.chars().take(20).collect();
        wait_for(5_000, || self.screen().contains(&head).then_some(()));
        self.server.tmux(&["send-keys", "-t", "=W:", "Enter"]);
    }

    /// Settled: the newest entry is a finished reply, and there are at least `n` of them.
    fn wait_settled(&self, n: usize) {
        wait_for(90_000, || {
            let e = self.entries();
            let done = e
                .iter()
                .filter(|x| {
                    x["message"]["role"] == "assistant" && x["message"]["stopReason"] == "stop"
                })
                .count();
            let last = e.last()?;
            (last["message"]["role"] == "assistant"
                && last["message"]["stopReason"] == "stop"
                && done >= n)
                .then_some(())
        })
        .unwrap_or_else(|| panic!("W never settled ({n}):\n{}", self.screen()));
    }

    fn args(&self, cmd: &[&str]) -> Vec<String> {
        let sys = self.env.system_config();
        let root = self.root.display().to_string();
        let sessions = self.sessions.display().to_string();
        let sock = self.server.sock.display().to_string();
        let mut a: Vec<String> = cmd.iter().map(|s| s.to_string()).collect();
        for x in [
            "--config",
            &sys,
            "--root",
            &root,
            "--sessions-dir",
            &sessions,
            "--fleet",
            "none",
            "--tmux-socket",
            &sock,
        ] {
            a.push(x.to_string());
        }
        a
    }

    fn run(&self, cmd: &[&str]) -> std::process::Output {
        self.env.run(&self.args(cmd))
    }
}

fn start_desk() -> Desk {
    let env = Env::new().with_system_path();
    let agent = env.path("agent");
    std::fs::create_dir_all(&agent).unwrap();
    prepare_agent_dir(&agent);
    let root = env.path("root");
    std::fs::create_dir_all(root.join(".pi-intercom")).unwrap();
    let cfg = json!({"version": 1, "multiplexer": "tmux", "agents": [
        {"sessionId": C, "name": "Coordinator", "coordinator": true, "description": "C.", "port": 47301, "projectDirectory": "."},
        {"sessionId": W, "name": "W", "coordinator": false, "description": "Works.", "port": 47302, "projectDirectory": "."}]});
    std::fs::write(root.join(".pi-intercom/config.json"), cfg.to_string()).unwrap();
    let tools = binary_on_path(&env);
    let sys = env.system_config();
    let exports = format!(
        "export PI_OFFLINE=1 PATH={}:{}:$PATH PI_CODING_AGENT_DIR={} INTERCOM_PANE_CONFIG={sys}",
        tools.display(),
        real_pi().display(),
        agent.display()
    );
    let server = TmuxServer::start("W", &root, &[]);
    server.tmux(&[
        "send-keys",
        "-t",
        "=W:",
        &format!("{exports}; pi --provider fake --model fake-model --session-id {W}"),
        "Enter",
    ]);
    wait_ready(&server, "=W:");
    Desk {
        env,
        server,
        root,
        sessions: agent.join("sessions"),
    }
}

fn kinds(v: &Value) -> Vec<String> {
    v["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let k = e["kind"].as_str().unwrap_or("?").to_string();
            match k.as_str() {
                "turn" | "tool" => format!("{k}:{}", e["outcome"].as_str().unwrap_or("?")),
                _ => k,
            }
        })
        .collect()
}

#[test]
#[cfg_attr(
    not(real_pi),
    ignore = "real-pi tier: INTERCOM_PANE_REAL_PI names no folder with pi and node 22 (.ci/run installs them)"
)]
fn a_real_workers_timeline_lists_its_turns_tools_questions_and_answers_in_order() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    clear_requests();
    let d = start_desk();

    // 1. A tool that works, then one that fails.
    d.prompt(&format!(
        "TOOLCALL bash {}",
        json!({"command": "echo fine"})
    ));
    d.wait_settled(1);
    d.prompt(&format!("TOOLCALL bash {}", json!({"command": "exit 3"})));
    d.wait_settled(2);
    // 2. A question, answered through `reply` (the CLI).
    d.prompt("deploy it SCENARIO:waiting");
    d.wait_settled(3);
    let o = d.run(&["reply", "W", "production, please"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    d.wait_settled(4);
    // 3. A provider failure pi retries, then answers.
    d.prompt("try again SCENARIO:flaky");
    d.wait_settled(5);

    let o = d.run(&["log", "W", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let k = kinds(&v);
    let pos = |want: &str, from: usize| {
        k.iter()
            .skip(from)
            .position(|x| x == want)
            .map(|p| p + from)
            .unwrap_or_else(|| panic!("no {want} after {from}: {k:?}\n{v:#}"))
    };
    // In order: the working tool, the failing tool, the question, its answer, the retried turn
    // that settled.
    let ok_tool = pos("tool:ok", 0);
    let bad_tool = pos("tool:error", ok_tool + 1);
    let question = pos("question", bad_tool + 1);
    let answer = pos("answer", question + 1);
    let entries = v["entries"].as_array().unwrap();
    assert_eq!(entries[answer]["sender"], "reply", "{}", entries[answer]);
    assert!(
        entries[answer]["text"]
            .as_str()
            .is_some_and(|t| t.contains("production, please")),
        "{}",
        entries[answer]
    );
    let flaky = entries.iter().rposition(|e| e["kind"] == "turn").unwrap();
    assert!(flaky > answer, "{k:?}");
    assert_eq!(entries[flaky]["outcome"], "settled", "{}", entries[flaky]);
    assert!(
        entries[flaky]["retries"].as_u64().unwrap_or(0) >= 1,
        "{}",
        entries[flaky]
    );
    assert!(entries[bad_tool]["args"]
        .as_str()
        .unwrap()
        .contains("exit 3"));

    // 4. --follow: a new tool call shows while pi runs it.
    let mut child = Command::new(env!("CARGO_BIN_EXE_intercom-pane"))
        .args(d.args(&["log", "W", "--follow", "--json", "--since", "1m"]))
        .current_dir(d.env.dir.path())
        .env_clear()
        .env("HOME", d.env.path("home"))
        .env("XDG_STATE_HOME", d.env.path("state"))
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("TMUX_TMPDIR", d.env.path("tmux-tmp"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    d.prompt(&format!(
        "TOOLCALL bash {}",
        json!({"command": "echo followed-marker"})
    ));
    let t0 = Instant::now();
    let mut seen = false;
    while !seen && t0.elapsed() < Duration::from_secs(60) {
        let Some(Ok(line)) = lines.next() else { break };
        seen = line.contains("followed-marker") && line.contains("\"tool\"");
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(seen, "the new tool call never showed in --follow");
}
