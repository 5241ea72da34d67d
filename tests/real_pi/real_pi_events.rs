//! What pi tells its extension, on the board (issue 25): a real pi 1.6.0 with the shipped
//! extension and a small one that asks `ctx.ui.confirm()` before a bash tool runs reads
//! `waiting` (reason `dialog`, the title as its question) while the dialog is open and `working`
//! again after the answer; a scripted model that fails with retryable errors and then succeeds,
//! one that fails for good, a run stopped with Escape, and a compaction that runs and one that
//! fails each read as pi reports them; a dialog the model forges through pi's bash tool is
//! refused and recorded nowhere.
//!
//! Runs only with `INTERCOM_PANE_REAL_PI` (see tests/real_pi/real_pi.rs); otherwise it is
//! reported as ignored, with the reason.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_support;
use crate::real_pi_support;
use crate::scan_support;

use std::path::{Path, PathBuf};

use mux_support::{wait_for, TmuxServer};
use real_pi_support::{real_pi, start_model, submit_first, wait_ready, SERIAL};
use scan_support::*;
use serde_json::{json, Value};

/// An extension that asks before every bash tool call (a permission gate).
const GATE: &str = r#"export default function (pi) {
  pi.on("tool_call", async (event, ctx) => {
    if (event.toolName !== "bash") return;
    const ok = await ctx.ui.confirm("Allow bash?", "The model wants to run a command.");
    if (!ok) return { block: true, reason: "denied" };
  });
}
"#;

/// A real pi with the shipped extension in a private tmux, in a roster's worker `W`.
struct Seat {
    env: Env,
    server: TmuxServer,
    sock: String,
}

const PANE: &str = "=W:";

impl Seat {
    /// `settings`: pi settings besides the package; `gate`: load `GATE` too.
    fn start(id: &str, settings: Value, gate: bool) -> Seat {
        let bin = real_pi();
        let env = Env::new().with_system_path();
        let agent = env.dir.path().to_path_buf();
        let port = start_model(3);
        std::fs::write(
            agent.join("models.json"),
            json!({"providers": {"fake": {"baseUrl": format!("http://127.0.0.1:{port}/v1"),
                "api": "openai-completions", "apiKey": "fake",
                "models": [{"id": "fake-model", "contextWindow": 128000, "maxTokens": 4096,
                    "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}}]}}})
            .to_string(),
        )
        .unwrap();
        let mut s = settings;
        s["packages"] = json!([Path::new(env!("CARGO_MANIFEST_DIR")).join("linux/pi-extension")]);
        std::fs::write(agent.join("settings.json"), s.to_string()).unwrap();
        if gate {
            std::fs::create_dir_all(agent.join("extensions")).unwrap();
            std::fs::write(agent.join("extensions/gate.ts"), GATE).unwrap();
        }
        let root = env.path("root");
        write_roster(&root, &[(id, "W")]);
        let sys = env.system_config();
        let server = TmuxServer::start("W", &root, &[]);
        server.tmux(&[
            "send-keys",
            "-t",
            PANE,
            &format!(
                "export PI_OFFLINE=1 PATH={}:$PATH PI_CODING_AGENT_DIR={} INTERCOM_PANE_BIN={} INTERCOM_PANE_CONFIG={sys}; pi --provider fake --model fake-model --session-id {id}",
                bin.display(),
                agent.display(),
                env!("CARGO_BIN_EXE_intercom-pane")
            ),
            "Enter",
        ]);
        wait_ready(&server, PANE);
        let sock = server.sock.display().to_string();
        Seat { env, server, sock }
    }

    /// `cmd` (a `scan --json` or an `explain`) at the real time on the roster, reading
    /// sessions from `sessions_dir` (relative to the test folder): its output.
    fn run(&self, cmd: &[&str], sessions_dir: &str) -> std::process::Output {
        let cfg = self.env.system_config();
        let mut args: Vec<&str> = cmd.to_vec();
        args.extend([
            "--config",
            &cfg,
            "--root",
            "root",
            "--sessions-dir",
            sessions_dir,
        ]);
        args.extend(["--fleet", "none", "--tmux-socket", &self.sock]);
        self.env.run(&args)
    }

    /// The worker's record from a scan, reading sessions from `sessions_dir`.
    fn record_in(&self, sessions_dir: &str) -> Value {
        let idx = stdout_json(&self.run(&["scan", "--json"], sessions_dir));
        record(&idx, "W").clone()
    }

    fn record(&self) -> Value {
        self.record_in("sessions")
    }

    /// The index's tokens and cost over all seats.
    fn totals(&self) -> Value {
        stdout_json(&self.run(&["scan", "--json"], "sessions"))["usage"].clone()
    }

    /// The registration's `pi` section, as register wrote it.
    fn pi_section(&self) -> Value {
        let w = self.record();
        let Some(path) = w["registered"]["path"].as_str() else {
            return Value::Null;
        };
        std::fs::read(PathBuf::from(path))
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
            .map(|v| v["pi"].clone())
            .unwrap_or(Value::Null)
    }

    /// Wait until `want` holds for the `pi` section; it, or a panic naming the last one seen.
    fn wait_pi(&self, what: &str, ms: u64, want: impl Fn(&Value) -> bool) -> Value {
        wait_for(ms, || {
            let p = self.pi_section();
            want(&p).then_some(p)
        })
        .unwrap_or_else(|| {
            panic!(
                "{what}: pi section {}\nscreen:\n{}",
                self.pi_section(),
                self.screen()
            )
        })
    }

    /// Wait until the worker reads `state` (and `reason`, when given); its record.
    fn wait_state(&self, state: &str, reason: Option<&str>, ms: u64) -> Value {
        let ok = |w: &Value| w["state"] == state && reason.is_none_or(|r| w["stateReason"] == r);
        wait_for(ms, || Some(self.record()).filter(ok)).unwrap_or_else(|| {
            panic!(
                "never {state} {reason:?}: {}\npi: {}\nscreen:\n{}",
                self.record(),
                self.pi_section(),
                self.screen()
            )
        })
    }

    /// `explain W` (text, or `--json`) at the real time.
    fn explain(&self, json: bool) -> String {
        let cmd: &[&str] = if json {
            &["explain", "W", "--json"]
        } else {
            &["explain", "W"]
        };
        let o = self.run(cmd, "sessions");
        assert!(o.status.success(), "{o:?}");
        String::from_utf8(o.stdout).unwrap()
    }

    fn screen(&self) -> String {
        self.server.tmux(&["capture-pane", "-p", "-t", PANE])
    }

    /// The sidebar: `monitor` on the roster in session `mon` of the same server.
    fn start_monitor(&self) {
        let root = self.env.path("root");
        self.server.start_monitor(
            &root,
            Path::new(&self.env.system_config()),
            &root,
            &self.env.path("sessions"),
            30,
        );
    }

    /// Wait until the sidebar's screen shows `what`; the screen.
    fn wait_monitor(&self, what: &str, ms: u64) -> String {
        let screen = || self.server.tmux(&["capture-pane", "-p", "-t", "=mon:"]);
        wait_for(ms, || Some(screen()).filter(|s| s.contains(what)))
            .unwrap_or_else(|| panic!("the sidebar never showed {what:?}:\n{}", screen()))
    }

    fn send(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", PANE];
        args.extend_from_slice(keys);
        self.server.tmux(&args);
    }
}

#[test]
#[cfg_attr(
    not(real_pi),
    ignore = "real-pi tier: INTERCOM_PANE_REAL_PI names no folder with pi and node 22 (.ci/run installs them)"
)]
fn a_dialog_reads_waiting_with_its_title_and_working_after_the_answer() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let seat = Seat::start("0d1a1090-0000-4000-8000-0000000000d1", json!({}), true);
    seat.start_monitor();
    seat.wait_monitor(" W ", 20_000);
    submit_first(&seat.server, PANE, "SCENARIO:tool please");
    // The dialog is on pi's screen: within one refresh (3 s) the board reads waiting.
    wait_for(20_000, || {
        seat.screen().contains("Allow bash?").then_some(())
    })
    .unwrap_or_else(|| panic!("no dialog on screen:\n{}", seat.screen()));
    let w = seat.wait_state("waiting", Some("dialog"), 3_000);
    assert_eq!(w["question"], "Allow bash?", "{w}");
    assert_eq!(w["stateSource"], "pi extension: dialog", "{w}");
    // The sidebar shows the dialog's title as what the seat asks, on its row.
    let s = seat.wait_monitor("Allow bash?", 5_000);
    assert!(
        s.lines()
            .any(|l| l.contains(" W ") && l.contains("Allow bash?")),
        "{s}"
    );
    let p = seat.wait_pi("the dialog is recorded", 5_000, |p| {
        p["dialog"]["title"] == "Allow bash?"
    });
    assert_eq!(p["dialog"]["kind"], "confirm", "{p}");
    // explain says which source decided, and why.
    let text = seat.explain(false);
    assert!(text.contains("pi extension: dialog"), "{text}");
    assert!(text.contains("outranks the file"), "{text}");
    assert!(text.contains("dialog confirm \"Allow bash?\""), "{text}");
    let e: Value = serde_json::from_str(&seat.explain(true)).unwrap();
    assert_eq!(e["stateReason"], "dialog", "{e}");
    assert_eq!(e["extension"]["counted"], true, "{e}");
    assert_eq!(e["registration"]["alive"], true, "{e}");
    assert_eq!(e["transcript"]["newestEntry"]["toolCall"], true, "{e}");
    // The answer: pi's confirm takes Enter on its first choice (Yes).
    seat.send(&["Enter"]);
    let p = seat.wait_pi("the dialog is closed and the tool runs", 15_000, |p| {
        p["dialog"].is_null() && p["tool"]["name"] == "bash"
    });
    assert_eq!(p["tool"]["running"], 1, "{p}");
    let w = seat.wait_state("working", Some("tool_running"), 3_000);
    assert!(w["question"].is_null(), "{w}");
    seat.wait_monitor("running bash", 5_000);
    let p = seat.wait_pi("the run settled", 20_000, |p| p["settled"].is_object());
    assert_eq!(p["settled"]["aborted"], false, "{p}");
    assert!(p["tool"].is_null(), "{p}");
    assert!(p["context"]["window"] == 128000, "{p}");

    // A question in the transcript: waiting. A scan whose environment does not share pi's
    // session folders reads the same file through the live registration, and the same state.
    seat.send(&["SCENARIO:waiting now", "Enter"]);
    let w = seat.wait_state("waiting", Some("input_needed"), 20_000);
    std::fs::create_dir_all(seat.env.path("elsewhere")).unwrap();
    let away = seat.record_in("elsewhere");
    for k in ["state", "stateReason", "sessionFile", "lastActivity"] {
        assert_eq!(away[k], w[k], "{k}: {away}");
    }

    // Tokens and cost: the sums of the usage fields pi wrote in the transcript, per seat and
    // in the index's totals; the context fill as pi reports it.
    let file = w["sessionFile"].as_str().unwrap().to_string();
    let (mut calls, mut input, mut output, mut cost) = (0u64, 0u64, 0u64, 0f64);
    for line in std::fs::read_to_string(&file).unwrap().lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let u = &v["message"]["usage"];
        if v["type"] == "message" && v["message"]["role"] == "assistant" && u.is_object() {
            calls += 1;
            input += u["input"].as_u64().unwrap();
            output += u["output"].as_u64().unwrap();
            cost += u["cost"]["total"].as_f64().unwrap();
        }
    }
    assert!(calls >= 3 && cost > 0.0, "{calls} calls, {cost}");
    let u = &w["usage"];
    assert_eq!(
        (
            u["calls"].as_u64(),
            u["input"].as_u64(),
            u["output"].as_u64()
        ),
        (Some(calls), Some(input), Some(output)),
        "{w}"
    );
    assert!(
        (u["cost"].as_f64().unwrap() - cost).abs() < 1e-9,
        "{u} vs {cost}"
    );
    assert_eq!(u["atLeast"], false, "{u}");
    assert_eq!(w["context"]["window"], 128000, "{w}");
    assert!(w["context"]["tokens"].as_u64().unwrap() > 0, "{w}");
    let text = seat.explain(false);
    assert!(
        text.contains("usage ") && text.contains("context "),
        "{text}"
    );
    let all = seat.totals();
    assert_eq!(all["calls"].as_u64(), Some(calls), "{all}");
    assert!((all["cost"].as_f64().unwrap() - cost).abs() < 1e-9, "{all}");
}

#[test]
#[cfg_attr(
    not(real_pi),
    ignore = "real-pi tier: INTERCOM_PANE_REAL_PI names no folder with pi and node 22 (.ci/run installs them)"
)]
fn retries_that_succeed_retries_that_fail_and_an_aborted_run() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // Backoffs of 2 s and 4 s and two retries: long enough to read, short enough to end.
    let settings = json!({"retry": {"baseDelayMs": 2000, "maxRetries": 2}});
    let seat = Seat::start("0d1a1090-0000-4000-8000-0000000000d2", settings, false);
    // Fails twice, then answers: attempts 1 and 2 are retries, the second succeeds.
    submit_first(&seat.server, PANE, "SCENARIO:flaky now");
    let p = seat.wait_pi("a retry is recorded", 20_000, |p| {
        p["retry"]["attempt"].as_u64().is_some_and(|a| a >= 1)
    });
    assert!(
        ["waiting", "running", "succeeded"].contains(&p["retry"]["phase"].as_str().unwrap()),
        "{p}"
    );
    // While pi waits out a backoff: working, the attempt in the source.
    let w = seat.wait_state("working", Some("retrying"), 10_000);
    assert!(
        w["stateSource"]
            .as_str()
            .unwrap()
            .starts_with("pi extension: retry attempt"),
        "{w}"
    );
    let p = seat.wait_pi("the retries succeeded", 20_000, |p| {
        p["retry"]["phase"] == "succeeded" && p["settled"].is_object()
    });
    assert_eq!(p["retry"]["attempt"], 2, "{p}");
    assert_eq!(p["settled"]["error"], false, "{p}");
    seat.wait_state("idle", Some("completed_reply"), 5_000);

    // Fails every time: two retries, then pi gives up.
    seat.send(&["SCENARIO:fail now", "Enter"]);
    let p = seat.wait_pi("the retries are exhausted", 20_000, |p| {
        p["retry"]["phase"] == "exhausted"
    });
    assert_eq!(p["retry"]["attempt"], 2, "{p}");
    assert_eq!(p["settled"]["error"], true, "{p}");
    assert!(
        p["retry"]["error"].as_str().unwrap().contains("overloaded"),
        "{p}"
    );
    let w = seat.wait_state("error", Some("retries_exhausted"), 5_000);
    assert_eq!(w["stateSource"], "pi extension: retry attempt 2", "{w}");

    // A run stopped with Escape while its tool runs.
    seat.send(&["SCENARIO:tool again", "Enter"]);
    seat.wait_pi("the tool runs", 15_000, |p| p["tool"]["name"] == "bash");
    seat.send(&["Escape"]);
    let p = seat.wait_pi("the aborted run settled", 15_000, |p| {
        p["settled"]["aborted"] == true
    });
    assert!(p["tool"].is_null(), "{p}");
    // Stopped by the person: its own reason, not an error.
    let w = seat.wait_state("idle", Some("run_aborted"), 5_000);
    assert_eq!(w["stateSource"], "pi extension: settled run", "{w}");

    // The model forges a dialog through pi's own bash tool, naming pi (its parent) as the
    // caller: refused (what the tool runs is not started by pi itself), nothing recorded.
    let out = seat.env.path("forged.txt");
    let cmd = format!(
        "{bin} register --config {sys} --event ui_prompt_start --seq 99999999 --pi-pid $PPID \
         --session-id 0d1a1090-0000-4000-8000-0000000000d2 --cwd \"$PWD\" \
         --pi-state '{{\"dialog\":{{\"kind\":\"confirm\",\"title\":\"FORGED\",\"since\":\"2026-01-01T00:00:00Z\"}}}}' \
         >{out} 2>&1; echo \"exit $?\" >>{out}",
        bin = env!("CARGO_BIN_EXE_intercom-pane"),
        sys = seat.env.system_config(),
        out = out.display(),
    );
    let text = format!("TOOLCALL bash {}", json!({ "command": cmd }));
    seat.server.tmux(&["send-keys", "-t", PANE, "-l", &text]);
    wait_for(5_000, || {
        seat.screen().contains("TOOLCALL bash").then_some(())
    })
    .unwrap_or_else(|| panic!("not typed:\n{}", seat.screen()));
    seat.send(&["Enter"]);
    let said = wait_for(30_000, || {
        std::fs::read_to_string(&out)
            .ok()
            .filter(|t| t.contains("exit "))
    })
    .unwrap_or_else(|| panic!("the tool never ran:\n{}", seat.screen()));
    assert!(said.contains("exit 2"), "{said}");
    assert!(said.contains("not started by that pi"), "{said}");
    let p = seat.wait_pi("the run settled", 20_000, |p| p["tool"].is_null());
    assert!(!p.to_string().contains("FORGED"), "{p}");
    assert_ne!(seat.record()["stateReason"], "dialog");
}

#[test]
#[cfg_attr(
    not(real_pi),
    ignore = "real-pi tier: INTERCOM_PANE_REAL_PI names no folder with pi and node 22 (.ci/run installs them)"
)]
fn a_compaction_reads_compacting_while_it_runs_and_a_failed_one_reads_error() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // Keep almost nothing: two short turns are enough to compact.
    let settings = json!({"compaction": {"keepRecentTokens": 1}});
    let seat = Seat::start("0d1a1090-0000-4000-8000-0000000000d3", settings, false);
    submit_first(&seat.server, PANE, "hello there");
    seat.wait_pi("the first run settled", 20_000, |p| {
        p["settled"].is_object()
    });
    let first = seat.pi_section()["settled"]["at"].clone();
    seat.send(&["and again", "Enter"]);
    seat.wait_pi("the second run settled", 20_000, |p| {
        p["settled"].is_object() && p["settled"]["at"] != first
    });
    seat.wait_state("idle", Some("completed_reply"), 5_000);

    // A manual compaction whose summary takes 4 s: working (compacting) while it runs, not
    // stuck on idle; idle again after it.
    seat.send(&["/compact COMPACTSLOW", "Enter"]);
    let w = seat.wait_state("working", Some("compacting"), 5_000);
    assert_eq!(w["stateSource"], "pi extension: compaction", "{w}");
    let p = seat.wait_pi("the compaction is done", 20_000, |p| {
        p["compaction"]["phase"] == "done"
    });
    assert_eq!(p["compaction"]["reason"], "manual", "{p}");
    let w = seat.wait_state("idle", None, 5_000);
    assert_ne!(w["stateReason"], "compacting", "{w}");
    // pi refuses another at once (already compacted): nothing ran, no failure is reported.
    seat.send(&["/compact", "Enter"]);
    wait_for(10_000, || {
        seat.screen().contains("Already compacted").then_some(())
    })
    .unwrap_or_else(|| panic!("no refusal on screen:\n{}", seat.screen()));
    // A report would land within a command's run after pi's event (coalesced by 150 ms).
    let failed = wait_for(3_000, || {
        Some(seat.pi_section()).filter(|p| p["compaction"]["phase"] != "done")
    });
    assert!(failed.is_none(), "{failed:?}");
    seat.wait_state("idle", None, 3_000);

    // One whose summary the provider refuses: error (compaction_failed), the error kept.
    let second = seat.pi_section()["settled"]["at"].clone();
    seat.send(&["and a third", "Enter"]);
    seat.wait_pi("the third run settled", 20_000, |p| {
        p["settled"].is_object() && p["settled"]["at"] != second
    });
    seat.wait_state("idle", Some("completed_reply"), 10_000);
    seat.send(&["/compact COMPACTFAIL", "Enter"]);
    let p = seat.wait_pi("the compaction failed", 20_000, |p| {
        p["compaction"]["phase"] == "failed"
    });
    assert!(
        p["compaction"]["error"]
            .as_str()
            .is_some_and(|e| e.contains("Compaction failed")),
        "{p}"
    );
    let w = seat.wait_state("error", Some("compaction_failed"), 5_000);
    assert_eq!(w["stateSource"], "pi extension: compaction", "{w}");
    // The seat's error is pi's, not the last reply's text.
    assert!(
        w["lastError"]
            .as_str()
            .is_some_and(|e| e.contains("Compaction failed")),
        "{w}"
    );
}
