//! `intercom-pane log NAME` on a real pi 1.6.0 worker (the shipped extension loaded, a scripted
//! model): a tool call that works, one that fails, a question answered through `reply` (the CLI)
//! and one answered from the sidebar's reply box (the real sidebar in a pane of the same
//! server), a provider failure pi retries, and a turn the person aborts with Escape while its
//! tool runs; `log --json` lists them in order, each with how it ended and who sent the answer;
//! `log --follow` shows a new tool call within 200 ms of pi writing it (measured against the
//! file, polled every 2 ms).
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

    /// The sidebar (`monitor`) in session `C` of the same server, as a person runs it.
    fn start_sidebar(&self) {
        let mut argv: Vec<String> = vec![
            "env".into(),
            format!("HOME={}", self.env.path("home").display()),
            format!("XDG_STATE_HOME={}", self.env.path("state").display()),
            "TERM=xterm-256color".into(),
            env!("CARGO_BIN_EXE_intercom-pane").into(),
        ];
        argv.extend(self.args(&["monitor", "--no-probe"]));
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        self.server.new_session("C", &self.root, &argv);
    }

    fn sidebar(&self) -> String {
        self.server.tmux(&["capture-pane", "-p", "-t", "=C:"])
    }

    fn wait_sidebar(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        wait_for(30_000, || {
            let s = self.sidebar();
            pred(&s).then_some(s)
        })
        .unwrap_or_else(|| panic!("the sidebar never showed {what}:\n{}", self.sidebar()))
    }

    fn sidebar_keys(&self, keys: &[&str]) {
        let mut a = vec!["send-keys", "-t", "=C:"];
        a.extend_from_slice(keys);
        self.server.tmux(&a);
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
    // 4. A question answered from the sidebar's reply box.
    d.start_sidebar();
    d.prompt("ship it SCENARIO:waiting");
    d.wait_settled(6);
    d.wait_sidebar("W waiting", |s| {
        s.lines()
            .any(|l| l.contains(" W ") && l.contains("waiting"))
    });
    d.sidebar_keys(&["n"]);
    d.wait_sidebar("W selected", |s| {
        s.lines().any(|l| l.starts_with('›') && l.contains(" W "))
    });
    d.sidebar_keys(&["r"]);
    d.wait_sidebar("the reply box", |s| s.contains("Reply to W"));
    d.sidebar_keys(&["-l", "staging, from the sidebar"]);
    d.wait_sidebar("the typed answer", |s| {
        s.contains("staging, from the sidebar")
    });
    d.sidebar_keys(&["Enter"]);
    d.wait_sidebar("the receipt", |s| {
        s.contains("delivered") || s.contains("queued")
    });
    d.wait_settled(7);
    // 5. A turn the person aborts with Escape while its tool runs.
    d.prompt("stop me SCENARIO:tool");
    wait_for(60_000, || {
        let e = d.entries();
        let last = e.last()?;
        (last["message"]["role"] == "assistant"
            && last["message"]["content"]
                .as_array()
                .is_some_and(|c| c.iter().any(|p| p["type"] == "toolCall")))
        .then_some(())
    })
    .unwrap_or_else(|| panic!("the slow tool never started:\n{}", d.screen()));
    // The tool runs (pi starts it right after writing its call).
    std::thread::sleep(Duration::from_millis(500));
    d.server.tmux(&["send-keys", "-t", "=W:", "Escape"]);
    wait_for(30_000, || {
        d.entries()
            .iter()
            .any(|x| x["message"]["stopReason"] == "aborted")
            .then_some(())
    })
    .unwrap_or_else(|| panic!("pi never recorded the abort:\n{}", d.screen()));

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
    let prompted = |what: &str| {
        entries
            .iter()
            .rposition(|e| {
                e["kind"] == "turn" && e["prompt"].as_str().is_some_and(|p| p.contains(what))
            })
            .unwrap_or_else(|| panic!("no turn prompted {what}: {k:?}"))
    };
    let flaky = prompted("SCENARIO:flaky");
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
    // The sidebar's answer, after the retried turn, named as the sidebar's.
    let second_q = pos("question", flaky + 1);
    let from_sidebar = pos("answer", second_q + 1);
    assert_eq!(
        entries[from_sidebar]["sender"], "sidebar",
        "{}",
        entries[from_sidebar]
    );
    assert!(
        entries[from_sidebar]["text"]
            .as_str()
            .is_some_and(|t| t.contains("staging, from the sidebar")),
        "{}",
        entries[from_sidebar]
    );
    // The aborted turn last: its tool ended in error, the turn `aborted`.
    let aborted = prompted("stop me SCENARIO:tool");
    assert!(aborted > from_sidebar, "{k:?}");
    assert_eq!(
        entries[aborted]["outcome"], "aborted",
        "{}",
        entries[aborted]
    );
    let slow = pos("tool:error", aborted + 1);
    assert!(
        entries[slow]["args"].as_str().unwrap().contains("sleep"),
        "{}",
        entries[slow]
    );

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
    // Its lines, each with when it arrived.
    let (tx, rx) = std::sync::mpsc::channel::<(Instant, String)>();
    let out = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send((Instant::now(), line)).is_err() {
                break;
            }
        }
    });
    // The first read is out once the prompt of the last turn shows.
    let first = wait_for(30_000, || {
        rx.try_iter()
            .any(|(_, l)| l.contains("stop me SCENARIO:tool"))
            .then_some(())
    });
    assert!(first.is_some(), "--follow printed no first read");
    // When pi writes the call: the session file polled every 2 ms from another thread.
    let file = d.file().unwrap();
    let (ftx, frx) = std::sync::mpsc::channel::<Instant>();
    let watcher = std::thread::spawn(move || {
        let end = Instant::now() + Duration::from_secs(90);
        while Instant::now() < end {
            let text = std::fs::read_to_string(&file).unwrap_or_default();
            if text
                .lines()
                .any(|l| l.contains("\"toolCall\"") && l.contains("followed-marker"))
            {
                let _ = ftx.send(Instant::now());
                return;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    });
    d.prompt(&format!(
        "TOOLCALL bash {}",
        json!({"command": "echo followed-marker"})
    ));
    let shown = wait_for(60_000, || {
        rx.try_iter()
            .find(|(_, l)| l.contains("followed-marker") && l.contains("\"kind\":\"tool\""))
            .map(|(at, _)| at)
    });
    let written = frx.recv_timeout(Duration::from_secs(60)).ok();
    let _ = watcher.join();
    let _ = child.kill();
    let _ = child.wait();
    let shown = shown.expect("the new tool call never showed in --follow");
    let written = written.expect("pi never wrote the tool call");
    // The poll may see the line a moment after --follow printed it (≤ 2 ms plus a read).
    let lag = shown.saturating_duration_since(written);
    eprintln!(
        "--follow showed the tool call {lag:?} after the 2 ms poll saw it written ({:?} before)",
        written.saturating_duration_since(shown)
    );
    assert!(
        lag <= Duration::from_millis(200),
        "--follow showed the tool call {lag:?} after pi wrote it (want ≤ 200 ms)"
    );
}
