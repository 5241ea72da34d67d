//! The coordinator's tools in real pi 1.6.0: a coordinator and two workers, each a real pi in a
//! real tmux started on its roster session id, all loading the shipped extension package. The
//! coordinator's model is scripted (`TOOLCALL <tool> <json>` makes it call that tool) and each
//! answer is read back from the coordinator's own session file (the tool result pi recorded):
//! - `intercom_board` shows both workers with their true states, the waiting one's question
//!   included, and `attention` keeps only that one;
//! - `intercom_wait` returns when a worker starts working, and on its timeout;
//! - `intercom_reply` lands exactly once in the worker's transcript (a `delivered` receipt);
//! - `intercom_spawn_worker` starts a new worker that registers and gets its first task once;
//! - `intercom_close_worker` answers at once with a job id, the worker's pane is closed, and the
//!   outcome arrives in the coordinator's session as a message;
//! - a close outlives its caller: the coordinator's pi and its process group killed right after
//!   the answer, the job still closes the worker;
//! - the workers' pis were never offered the tools, a call of the tool by a worker's model
//!   reaches nothing, and forged calls (from outside any pi, and from the coordinator's own bash
//!   tool) are refused with the roster unchanged.
//!
//!
//! And the extension's tools module alone, run by Node 22 with a stand-in binary: off with
//! `INTERCOM_PANE_TOOLS=off` (the binary never asked), the binary asked with this pi's pid, the
//! config and the arguments as JSON, escape sequences and controls gone from what the model
//! sees, the close answered at once and its outcome a message 2 s later, a call past its bound
//! killed.
//!
//! Runs only with `INTERCOM_PANE_REAL_PI` (see tests/real_pi/real_pi.rs); otherwise `cargo test`
//! reports it as ignored, with the reason.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_support;
use crate::real_pi::{binary_on_path, prepare_agent_dir};
use crate::real_pi_support;
use crate::scan_support;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use mux_support::{wait_for, TmuxServer};
use real_pi_support::{clear_requests, real_pi, requests, run_node_script, wait_ready, SERIAL};
use scan_support::*;
use serde_json::{json, Value};

const C: &str = "7c000000-0000-4000-8000-00000000c0c0";
const W1: &str = "7c000000-0000-4000-8000-0000000000a1";
const W2: &str = "7c000000-0000-4000-8000-0000000000a2";
const QUESTION: &str = "Choose staging or production.";
const TOOLS: [&str; 7] = [
    "intercom_board",
    "intercom_reply",
    "intercom_close_worker",
    "intercom_resume_worker",
    "intercom_spawn_worker",
    "intercom_wait",
    "intercom_log",
];

struct Desk {
    env: Env,
    server: TmuxServer,
    root: PathBuf,
    sessions: PathBuf,
    sys: String,
}

impl Desk {
    /// The session file of `id` (pi names it `<time>_<id>.jsonl`), once it exists.
    fn file(&self, id: &str) -> Option<PathBuf> {
        let dir = std::fs::read_dir(&self.sessions)
            .ok()?
            .flatten()
            .next()?
            .path();
        std::fs::read_dir(dir)
            .ok()?
            .flatten()
            .map(|e| e.path())
            .find(|p| p.to_string_lossy().ends_with(&format!("_{id}.jsonl")))
    }

    fn entries(&self, id: &str) -> Vec<Value> {
        let text = self
            .file(id)
            .and_then(|f| std::fs::read_to_string(f).ok())
            .unwrap_or_default();
        text.lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// The results pi recorded for calls of `tool` in the coordinator's session, parsed.
    fn results(&self, tool: &str) -> Vec<(Value, bool)> {
        self.entries(C)
            .into_iter()
            .filter(|e| e["message"]["role"] == "toolResult" && e["message"]["toolName"] == tool)
            .map(|e| {
                let text = e["message"]["content"][0]["text"].as_str().unwrap_or("");
                (
                    serde_json::from_str(text).unwrap_or(json!({"text": text})),
                    e["message"]["isError"] == true,
                )
            })
            .collect()
    }

    fn screen(&self, session: &str) -> String {
        self.server
            .tmux(&["capture-pane", "-p", "-t", &format!("={session}:")])
    }

    /// Type a prompt into `session`'s pi and submit it.
    fn prompt(&self, session: &str, text: &str) {
        let target = format!("={session}:");
        self.server.tmux(&["send-keys", "-t", &target, "-l", text]);
        let head: String = text.chars().take(20).collect();
        wait_for(5_000, || self.screen(session).contains(&head).then_some(()));
        self.server.tmux(&["send-keys", "-t", &target, "Enter"]);
    }

    /// Settled: the newest entry of the session is a finished assistant reply.
    fn wait_settled(&self, id: &str) {
        wait_for(60_000, || {
            let last = self.entries(id).pop()?;
            (last["message"]["role"] == "assistant" && last["message"]["stopReason"] == "stop")
                .then_some(())
        })
        .unwrap_or_else(|| panic!("{id} never settled:\n{}", self.screen("C")));
    }

    /// The coordinator's model calls `tool` with `args`; the result pi recorded, and whether pi
    /// marked it an error. Waits for the coordinator to settle afterwards.
    fn call(&self, tool: &str, args: &Value, ms: u64) -> (Value, bool) {
        let before = self.results(tool).len();
        self.prompt("C", &format!("TOOLCALL {tool} {args}"));
        let r = wait_for(ms, || self.results(tool).into_iter().nth(before))
            .unwrap_or_else(|| panic!("no {tool} result:\n{}", self.screen("C")));
        self.wait_settled(C);
        r
    }

    fn config(&self) -> Value {
        serde_json::from_slice(&std::fs::read(self.root.join(".pi-intercom/config.json")).unwrap())
            .unwrap()
    }

    /// An agent's entry in the roster, as on disk now.
    fn agent(&self, name: &str) -> Value {
        self.config()["agents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["name"] == name)
            .unwrap()
            .clone()
    }

    /// The coordinator pi's pid, from its registration.
    fn coordinator_pid(&self) -> i64 {
        let idx = scan_json(
            &self.env,
            &["--tmux-socket", &self.server.sock.display().to_string()],
        );
        record(&idx, "Coordinator")["registered"]["pid"]
            .as_i64()
            .expect("the coordinator is registered")
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
        {"sessionId": C, "name": "Coordinator", "coordinator": true, "description": "Coordinates.", "port": 47101, "projectDirectory": "."},
        {"sessionId": W1, "name": "W1", "coordinator": false, "description": "Builds.", "port": 47102, "projectDirectory": "."},
        {"sessionId": W2, "name": "W2", "coordinator": false, "description": "Reviews.", "port": 47103, "projectDirectory": "."}]});
    std::fs::write(root.join(".pi-intercom/config.json"), cfg.to_string()).unwrap();
    let tools = binary_on_path(&env);
    let sys = env.system_config();
    let exports = format!(
        "export PI_OFFLINE=1 PATH={}:{}:$PATH PI_CODING_AGENT_DIR={} INTERCOM_PANE_CONFIG={sys}",
        tools.display(),
        real_pi().display(),
        agent.display()
    );
    let server = TmuxServer::start("W1", &root, &[]);
    server.new_session("W2", &root, &[]);
    server.new_session("C", &root, &[]);
    for (session, id) in [("W1", W1), ("W2", W2), ("C", C)] {
        let target = format!("={session}:");
        server.tmux(&[
            "send-keys",
            "-t",
            &target,
            &format!("{exports}; pi --provider fake --model fake-model --session-id {id}"),
            "Enter",
        ]);
        wait_ready(&server, &target);
    }
    let desk = Desk {
        env,
        server,
        root,
        sessions: agent.join("sessions"),
        sys,
    };
    // The coordinator's footer says its model has the tools (registered after its seat).
    wait_for(30_000, || {
        desk.screen("C").contains("intercom tools").then_some(())
    })
    .unwrap_or_else(|| panic!("the coordinator has no tools:\n{}", desk.screen("C")));
    for w in ["W1", "W2"] {
        assert!(!desk.screen(w).contains("intercom tools"), "{w} has tools");
    }
    desk
}

#[test]
#[cfg_attr(
    not(real_pi),
    ignore = "real-pi tier: INTERCOM_PANE_REAL_PI names no folder with pi and node 22 (.ci/run installs them)"
)]
fn the_coordinators_model_drives_the_board_through_its_tools() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    clear_requests();
    let d = start_desk();

    // W1 asks a question; W2 says hello and goes idle.
    d.prompt("W1", "deploy it SCENARIO:waiting");
    d.prompt("W2", "hello W2");
    d.wait_settled(W1);
    d.wait_settled(W2);

    // The board: both workers with their true states, the question included.
    let (page, err) = d.call("intercom_board", &json!({}), 30_000);
    assert!(!err, "{page}");
    let seats = page["seats"].as_array().unwrap();
    let seat = |n: &str| seats.iter().find(|s| s["name"] == n).unwrap().clone();
    assert_eq!(seats.len(), 2, "{page}");
    assert_eq!(seat("W1")["state"], "waiting", "{page}");
    assert_eq!(seat("W1")["question"], QUESTION);
    assert_eq!(seat("W1")["needsYou"], true);
    assert_eq!(seat("W2")["state"], "idle", "{page}");
    assert_eq!(seat("W2")["reply"]["available"], true);
    let (page, _) = d.call("intercom_board", &json!({"attention": true}), 30_000);
    let names: Vec<&str> = page["seats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["W1"], "{page}");

    // The wait returns on the change: W2 starts a long tool while the coordinator waits.
    let before = d.results("intercom_wait").len();
    d.prompt(
        "C",
        &format!(
            "TOOLCALL intercom_wait {}",
            json!({"name": "W2", "states": ["working"], "timeoutSeconds": 120})
        ),
    );
    // The call runs once pi shows it; then W2 gets its work.
    wait_for(30_000, || {
        requests()
            .iter()
            .any(|(text, _)| text.contains("TOOLCALL intercom_wait"))
            .then_some(())
    })
    .expect("the coordinator's model was asked");
    std::thread::sleep(Duration::from_secs(2));
    let asked = Instant::now();
    d.prompt("W2", "build it SCENARIO:tool");
    let (v, err) = wait_for(90_000, || {
        d.results("intercom_wait").into_iter().nth(before)
    })
    .expect("the wait ended");
    let took = asked.elapsed();
    d.wait_settled(C);
    assert!(!err, "{v}");
    assert_eq!(v["reached"], true, "{v}");
    assert_eq!(v["state"], "working");
    assert!(
        took < Duration::from_secs(60),
        "the wait ended {took:?} after the change"
    );
    // And on its timeout.
    let started = Instant::now();
    let (v, _) = d.call(
        "intercom_wait",
        &json!({"name": "W1", "states": ["offline"], "timeoutSeconds": 3}),
        60_000,
    );
    assert_eq!(v["reached"], false, "{v}");
    assert_eq!(v["state"], "waiting");
    assert!(v["waitedMs"].as_u64().unwrap() >= 3000, "{v}");
    assert!(started.elapsed() >= Duration::from_secs(3));

    // The reply lands exactly once in W1's transcript.
    let answer = "staging, please";
    let (receipt, err) = d.call(
        "intercom_reply",
        &json!({"name": "W1", "text": answer}),
        60_000,
    );
    assert!(!err, "{receipt}");
    assert_eq!(receipt["outcome"], "delivered", "{receipt}");
    d.wait_settled(W1);
    std::thread::sleep(Duration::from_secs(2));
    let landed = d
        .entries(W1)
        .iter()
        .filter(|e| e["message"]["role"] == "user")
        .filter(|e| e["message"].to_string().contains(answer))
        .count();
    assert_eq!(landed, 1, "the reply landed {landed} times");

    // A new worker: in the roster, its pi in a window beside the coordinator, registered, its
    // first task in its transcript once; it has no tools either.
    let (spawned, err) = d.call(
        "intercom_spawn_worker",
        &json!({"name": "W3", "description": "Tests.", "prompt": "hello W3"}),
        150_000,
    );
    assert!(!err, "{spawned}");
    assert_eq!(spawned["result"], "spawned", "{spawned}");
    let w3 = d.agent("W3")["sessionId"].as_str().unwrap().to_string();
    d.wait_settled(&w3);
    let firsts = d
        .entries(&w3)
        .iter()
        .filter(|e| e["message"]["role"] == "user")
        .filter(|e| e["message"].to_string().contains("hello W3"))
        .count();
    assert_eq!(firsts, 1, "the first task landed {firsts} times");
    let (page, _) = d.call("intercom_board", &json!({"name": "W3"}), 30_000);
    assert_eq!(page["seats"][0]["reply"]["available"], true, "{page}");

    // Forged calls: from outside any pi, and from the coordinator's own bash tool.
    let roster_before = d.config();
    let pid = d.coordinator_pid().to_string();
    let close = json!({"name": "W1"}).to_string();
    let o = d.env.run(&[
        "tool",
        "intercom_close_worker",
        "--pi-pid",
        &pid,
        "--config",
        &d.sys,
        "--args",
        &close,
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stdout).contains("not an ancestor"));
    // pi's bash tool runs commands in a session of their own: the coordinator's pi is their
    // ancestor, but it did not start this command itself.
    let cmd = format!(
        "intercom-pane tool intercom_close_worker --pi-pid {pid} --config {} --args '{close}'",
        d.sys
    );
    let (out, _) = d.call("bash", &json!({"command": cmd}), 60_000);
    assert!(
        out.to_string().contains("not started by that pi"),
        "from pi's bash tool: {out}"
    );
    // A worker's model calling the tool: pi has no such tool there.
    let before = d.entries(W1).len();
    d.prompt(
        "W1",
        "worker TOOLCALL intercom_close_worker {\"name\":\"W2\"}",
    );
    let r = wait_for(30_000, || {
        d.entries(W1)
            .into_iter()
            .skip(before)
            .find(|e| e["message"]["role"] == "toolResult")
    })
    .expect("the worker's call was answered");
    assert_eq!(r["message"]["isError"], true, "{r}");
    assert!(
        r["message"]["content"].to_string().contains("not found"),
        "{r}"
    );
    d.wait_settled(W1);
    assert_eq!(
        d.config(),
        roster_before,
        "nothing forged changed the roster"
    );
    // pi offered the tools to the coordinator's model only.
    for (text, offered) in requests() {
        let has = TOOLS.iter().any(|t| offered.iter().any(|o| o == t));
        let coordinator =
            text.starts_with("TOOLCALL ") || text.contains("intercom_close_worker finished");
        if coordinator {
            assert!(has, "the coordinator was not offered the tools: {text}");
        } else {
            assert!(!has, "a worker was offered the tools ({text}): {offered:?}");
        }
    }

    // The close: accepted at once with a job id; the worker closed; the outcome arrives.
    d.wait_settled(W2);
    let before = d.results("intercom_close_worker").len();
    let asked = Instant::now();
    d.prompt(
        "C",
        &format!("TOOLCALL intercom_close_worker {}", json!({"name": "W2"})),
    );
    let (accepted, err) = wait_for(30_000, || {
        d.results("intercom_close_worker").into_iter().nth(before)
    })
    .expect("the close answered");
    let answered = asked.elapsed();
    // The job was still running when the answer was recorded: W2's pane was still there.
    let sessions_then = d.server.tmux(&["list-sessions", "-F", "#{session_name}"]);
    assert!(!err, "{accepted}");
    assert_eq!(accepted["accepted"], true, "{accepted}");
    let job = accepted["jobId"].as_str().unwrap().to_string();
    assert!(
        sessions_then.lines().any(|s| s == "W2"),
        "the answer waited for the close: {sessions_then}"
    );
    eprintln!("close accepted after {answered:?}");
    let outcome = wait_for(120_000, || {
        d.entries(C).into_iter().find(|e| {
            e["type"] == "custom_message"
                && e["content"]
                    .to_string()
                    .contains("intercom_close_worker finished for W2")
        })
    })
    .unwrap_or_else(|| panic!("no outcome message:\n{}", d.screen("C")));
    assert!(
        outcome["content"].to_string().contains("closed."),
        "{outcome}"
    );
    assert!(outcome["content"].to_string().contains(&job), "{outcome}");
    let sessions = d.server.tmux(&["list-sessions", "-F", "#{session_name}"]);
    assert!(
        !sessions.lines().any(|s| s == "W2"),
        "W2's pane is gone: {sessions}"
    );
    let w2 = d.agent("W2");
    assert_eq!(w2["closeJob"]["jobId"], job.as_str());
    assert_eq!(w2["closeJob"]["state"], "closed");
    // The board shows the close too.
    d.wait_settled(C);
    let (page, _) = d.call("intercom_board", &json!({"name": "W2"}), 30_000);
    assert_eq!(page["seats"][0]["closeJob"]["state"], "closed", "{page}");

    // A close outlives its caller: once W1's close is accepted, the coordinator's pi and its
    // whole process group are killed; the job still closes W1.
    let before = d.results("intercom_close_worker").len();
    d.prompt(
        "C",
        &format!("TOOLCALL intercom_close_worker {}", json!({"name": "W1"})),
    );
    let (accepted, _) = wait_for(30_000, || {
        d.results("intercom_close_worker").into_iter().nth(before)
    })
    .expect("the second close answered");
    assert_eq!(accepted["accepted"], true, "{accepted}");
    let pgid = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .unwrap()
        .rsplit(") ")
        .next()
        .unwrap()
        .split(' ')
        .nth(2)
        .unwrap()
        .to_string();
    let killed = std::process::Command::new("kill")
        .args(["-KILL", "--", &format!("-{pgid}")])
        .status()
        .unwrap();
    assert!(killed.success());
    wait_for(10_000, || {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        (stat.is_empty() || stat.contains(") Z ")).then_some(())
    })
    .expect("the coordinator's pi is gone");
    let closed = wait_for(120_000, || {
        let w1 = d.agent("W1");
        matches!(
            w1["closeJob"]["state"].as_str(),
            Some("closed" | "failed" | "timed_out")
        )
        .then_some(w1)
    })
    .expect("the job ended");
    assert_eq!(closed["closeJob"]["jobId"], accepted["jobId"]);
    assert_eq!(closed["closeJob"]["state"], "closed", "{closed}");
    eprintln!("W1 closed with its caller killed: {}", closed["closeJob"]);
    let sessions = d.server.tmux(&["list-sessions", "-F", "#{session_name}"]);
    assert!(
        !sessions.lines().any(|s| s == "W1"),
        "W1's pane is gone: {sessions}"
    );
}

const MODULE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/linux/pi-extension/lib/coordinator-tools.ts"
);

/// A stand-in for the binary: answers `tool check` as for a coordinator, prints a board with raw
/// escape sequences, accepts a close at once and reports it 2 s later, and never ends a wait.
/// Each argv is logged to `argv.log`.
const STUB: &str = r#"#!/bin/bash
printf '%s\n' "$*" >> "$(dirname "$0")/argv.log"
case "$2" in
  check) printf '%s\n' '{"coordinator":true,"tools":[
    {"name":"intercom_board","label":"B","description":"b","parameters":{"type":"object"},"timeoutMs":5000,"background":false},
    {"name":"intercom_close_worker","label":"C","description":"c","parameters":{"type":"object"},"timeoutMs":5000,"background":true},
    {"name":"intercom_wait","label":"W","description":"w","parameters":{"type":"object"},"timeoutMs":1000,"background":false}]}' | tr -d '\n'; echo ;;
  intercom_board) printf '{"seats":[{"name":"W\033[2J\033]0;title\007x\302\233" "31m\342\200\256"}]}\n' ;;
  intercom_close_worker) echo '{"accepted":true,"jobId":"j1","worker":"W"}'; sleep 2
    echo '{"done":true,"worker":"W","closed":true,"report":{"state":"closed"}}' ;;
  intercom_wait) exec sleep 30 ;;
esac
"#;

#[test]
#[cfg_attr(
    not(real_pi),
    ignore = "real-pi tier: INTERCOM_PANE_REAL_PI names no folder with pi and node 22 (.ci/run installs them)"
)]
fn the_tools_module_only_runs_the_binary_bounded_and_sanitized() {
    let dir = tempfile::tempdir().unwrap();
    let stub = dir.path().join("intercom-pane");
    std::fs::write(&stub, STUB).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&stub, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = dir.path().join("out.json");
    let script = format!(
        "const m = await import({module});\n\
         const fs = await import('node:fs');\n\
         const tools = []; const msgs = []; const o = {{}};\n\
         const pi = {{ registerTool: (d) => tools.push(d), sendMessage: (msg, opts) => msgs.push({{msg, opts, at: Date.now()}}) }};\n\
         process.env.INTERCOM_PANE_TOOLS = 'off';\n\
         o.off = (await m.registerCoordinatorTools(pi, {{bin: {bin}, cwd: '/'}})).names;\n\
         o.offLogged = fs.existsSync({log});\n\
         delete process.env.INTERCOM_PANE_TOOLS;\n\
         o.on = (await m.registerCoordinatorTools(pi, {{bin: {bin}, cwd: '/', config: '/etc/x.json'}})).names;\n\
         const t = (n) => tools.find((d) => d.name === n);\n\
         o.board = await t('intercom_board').execute('1', {{limit: 1}});\n\
         let at = Date.now(); o.accept = await t('intercom_close_worker').execute('2', {{name: 'W'}});\n\
         o.acceptMs = Date.now() - at; at = Date.now();\n\
         for (let i = 0; i < 100 && msgs.length === 0; i++) await new Promise((r) => setTimeout(r, 100));\n\
         o.msgs = msgs; o.msgMs = msgs.length ? msgs[0].at - at : null;\n\
         at = Date.now(); o.wait = await t('intercom_wait').execute('3', {{name: 'W'}});\n\
         o.waitMs = Date.now() - at;\n\
         fs.writeFileSync({out}, JSON.stringify(o));",
        module = json!(format!("file://{MODULE}")),
        bin = json!(stub),
        log = json!(dir.path().join("argv.log")),
        out = json!(out),
    );
    run_node_script(&script);
    let v: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    // Off: nothing registered, the binary never asked.
    assert_eq!(v["off"], json!([]));
    assert_eq!(v["offLogged"], false);
    assert_eq!(
        v["on"],
        json!(["intercom_board", "intercom_close_worker", "intercom_wait"])
    );
    // The binary is asked with this process's pid, the config, and the arguments as JSON.
    let argv = std::fs::read_to_string(dir.path().join("argv.log")).unwrap();
    let lines: Vec<&str> = argv.lines().collect();
    assert!(lines[0].starts_with("tool check --pi-pid "), "{argv}");
    assert!(lines[0].ends_with("--config /etc/x.json"), "{argv}");
    assert!(
        lines[1].starts_with("tool intercom_board --pi-pid ")
            && lines[1].ends_with(r#"--args {"limit":1}"#),
        "{argv}"
    );
    // No escape sequence or control reaches the model.
    let text = v["board"]["content"][0]["text"].as_str().unwrap();
    assert!(
        !text
            .chars()
            .any(|c| c.is_control() || ('\u{202a}'..='\u{202e}').contains(&c)),
        "{text:?}"
    );
    assert_eq!(text, r#"{"seats":[{"name":"Wx" "31m"}]}"#);
    assert_eq!(v["board"]["isError"], false);
    // The close answers at once; the outcome comes as a message when the job ends.
    assert_eq!(v["accept"]["details"]["accepted"], true, "{v}");
    assert!(v["acceptMs"].as_u64().unwrap() < 1500, "{v}");
    let msg = &v["msgs"][0];
    assert!(
        msg["msg"]["content"]
            .as_str()
            .unwrap()
            .starts_with("intercom_close_worker finished for W: closed."),
        "{msg}"
    );
    assert_eq!(msg["msg"]["customType"], "intercom-pane");
    assert_eq!(
        msg["opts"],
        json!({"triggerTurn": true, "deliverAs": "followUp"})
    );
    assert!(v["msgMs"].as_u64().unwrap() >= 1000, "{v}");
    // A call past its bound is killed and answers an error.
    assert_eq!(v["wait"]["isError"], true, "{v}");
    assert!(v["waitMs"].as_u64().unwrap() < 5000, "{v}");
}
