//! What close-worker and handoff refuse, on a real tmux server with the simulated pi: forged
//! handoffs (from another pi, a renamed bash, another pane), protected targets (the caller's own
//! pane, a monitor pane) before anything is written or sent, and `--recover` with nothing fenced.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::close_support;
use crate::mux_support;
use crate::pi_support;
use crate::scan_support;

use std::time::{Duration, Instant};

use close_support::*;
use mux_support::{wait_for, TmuxServer};
use scan_support::*;
use serde_json::{json, Value};

/// How many scan passes the log at `log` records.
fn scan_passes(log: &std::path::Path) -> usize {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains("\"scan_pass\""))
        .count()
}

fn cfg_bytes(env: &Env) -> Vec<u8> {
    std::fs::read(env.path("root/.pi-intercom/config.json")).unwrap()
}

/// Run `script` in a new session `name` (under `argv0`, e.g. a copy of bash named `pi`) and
/// return what it printed once it says `rc=`.
fn run_in_pane(server: &TmuxServer, env: &Env, name: &str, argv: &[&str]) -> String {
    server.new_session(name, &env.path("root"), argv);
    let out = env.path(&format!("{name}.out"));
    wait_for(15_000, || {
        std::fs::read_to_string(&out)
            .ok()
            .filter(|t| t.contains("rc="))
    })
    .unwrap_or_else(|| panic!("{name} never finished"))
}

#[test]
fn forged_handoffs_are_refused_and_config_stays_byte_identical() {
    let env = Env::new().with_system_path();
    let file = setup(&env, None);
    let server = worker(&env, &file, false);
    let child = spawn_close(
        &env,
        &server,
        &["Worker", "--deadline-secs", "12", "--json"],
    );
    let job = wait_for(10_000, || {
        let c = config(&env);
        let j = &c["agents"][1]["closeJob"];
        (j["state"] == "awaiting_handoff").then(|| j["jobId"].as_str().unwrap().to_string())
    })
    .expect("the close job awaits the handoff");
    let before = cfg_bytes(&env);
    let bin = env!("CARGO_BIN_EXE_intercom-pane");
    let root = env.path("root").display().to_string();
    let f = file.display();
    let handoff = |out: &str| {
        format!(
            "{bin} handoff --job {job} --summary 'Not really me.' --session-id {ID} --session-file {f} --root {root} > {out} 2>&1; echo rc=$? >> {out}; sleep 600"
        )
    };
    let pi = mux_support::program_named("/bin/bash", &env.path("pi"))
        .display()
        .to_string();
    // 1. Another pi (the coordinator's, in its own pane) naming the worker's session.
    let out = env.path("coord.out").display().to_string();
    let coord = run_in_pane(&server, &env, "coord", &[&pi, "-c", &handoff(&out)]);
    // 2. A bash renamed `pi` (argv[0]) in another pane.
    let out = env.path("renamed.out").display().to_string();
    let inner = handoff(&out).replace('\'', "'\\''");
    let renamed = run_in_pane(
        &server,
        &env,
        "renamed",
        &[
            "/bin/bash",
            "-c",
            &format!("exec -a pi /bin/bash -c '{inner}'"),
        ],
    );
    // 3. A pi in another pane of the worker's own window.
    let out = env.path("split.out").display().to_string();
    let script = handoff(&out);
    server.tmux(&["split-window", "-d", "-t", "work", "--", &pi, "-c", &script]);
    let split = wait_for(15_000, || {
        std::fs::read_to_string(&out)
            .ok()
            .filter(|t| t.contains("rc="))
    })
    .expect("the split pane's handoff finished");
    for (what, text) in [("coord", &coord), ("renamed", &renamed), ("split", &split)] {
        assert!(
            text.contains("refused") && text.contains("rc=2"),
            "{what}: {text}"
        );
    }
    assert_eq!(cfg_bytes(&env), before, "config is byte-identical");
    let out = child.wait_with_output().unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(report["state"], "timed_out", "{report}");
    assert!(config(&env)["agents"][1].get("handoff").is_none());
}

#[test]
fn a_monitor_pane_is_refused_at_once_with_nothing_written_or_sent() {
    let env = Env::new().with_system_path();
    let file = setup(&env, None);
    let server = worker(&env, &file, false);
    let pane = server
        .tmux(&["list-panes", "-t", "work", "-F", "#{pane_id}"])
        .trim()
        .to_string();
    let rec = env.path("root/.pi-intercom/monitor-0123456789abcdef01234567.json");
    std::fs::write(
        &rec,
        json!({"version": 1, "sessionId": "coord", "pane": pane,
            "socket": server.sock.display().to_string(), "stage": "submitted"})
        .to_string(),
    )
    .unwrap();
    let before = cfg_bytes(&env);
    // "At once" is "before any scan": the log (INTERCOM_PANE_LOG) names every scan pass. A
    // scan with the same log shows the check can see one.
    let log = env.path("close.log");
    let sock = server.sock.display().to_string();
    let logged = |cmd: &str, extra: &[&str]| {
        let mut args = vec!["--tmux-socket", sock.as_str()];
        args.extend_from_slice(extra);
        env.run_with(
            &layout_args(&env, &[cmd], &args),
            &[("INTERCOM_PANE_LOG", log.as_os_str())],
        )
    };
    logged("scan", &["--json"]);
    assert!(scan_passes(&log) >= 1, "the log shows a scan pass");
    let scanned = scan_passes(&log);
    let mut fastest = Duration::MAX;
    for _ in 0..3 {
        let t = Instant::now();
        let o = logged("close-worker", &["Worker"]);
        fastest = fastest.min(t.elapsed());
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains("monitor pane"), "{err}");
    }
    assert_eq!(scan_passes(&log), scanned, "refused without a scan");
    // A bound against any wait (the deadline is 120 s), not a speed check: speed is measured
    // in benches, and a loaded runner takes hundreds of ms just to start the binary.
    assert!(fastest < Duration::from_secs(10), "refused in {fastest:?}");
    assert_eq!(cfg_bytes(&env), before);
    assert!(
        !env.path("root/.pi-intercom/jobs").exists(),
        "no job record"
    );
    let shown = server.tmux(&["capture-pane", "-p", "-t", &pane]);
    assert!(!shown.contains("close requested"), "nothing sent: {shown}");
    eprintln!("monitor pane refused in {fastest:?}");
}

#[test]
fn the_callers_own_pane_is_refused_at_once_with_nothing_written_or_sent() {
    let env = Env::new().with_system_path();
    setup(&env, None);
    let bin = env!("CARGO_BIN_EXE_intercom-pane");
    let sys = env.system_config();
    let root = env.path("root").display().to_string();
    let dir = env.dir.path().display().to_string();
    let out = env.path("self.out").display().to_string();
    let log_path = env.path("close.log");
    let log = log_path.display();
    let args = layout_args(&env, &["close-worker"], &["Worker", "--json"]).join(" ");
    // The worker's pi itself asks to close its own worker.
    let script = format!(
        "{bin} register --config {sys} --event session_start --seq 1 --pi-pid $$ --session-id {ID} --cwd {root} >/dev/null; \
         cd {dir}; t0=$(date +%s%N); INTERCOM_PANE_LOG={log} {bin} {args} > {out} 2>&1; rc=$?; \
         echo \"rc=$rc ms=$(( ($(date +%s%N) - t0) / 1000000 ))\" >> {out}; sleep 600"
    );
    let argv = pi_support::pi_pane_argv(&env.path("pi-bin"), &script);
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let before = cfg_bytes(&env);
    let server = TmuxServer::start("work", &env.path("root"), &argv);
    let text = wait_for(15_000, || {
        std::fs::read_to_string(&out)
            .ok()
            .filter(|t| t.contains("rc="))
    })
    .expect("close-worker ran in the worker's pane");
    assert!(text.contains("rc=2"), "{text}");
    assert!(
        text.contains("the caller's own pane") || text.contains("the caller runs inside"),
        "{text}"
    );
    let ms: u64 = text
        .rsplit("ms=")
        .next()
        .and_then(|m| m.trim().parse().ok())
        .unwrap();
    // "At once" is "before any scan" (the log names every scan pass; a scan with the same log
    // shows the check can see one), and far below any wait: not a speed check, which a loaded
    // runner would fail by starting the binary slowly.
    assert_eq!(scan_passes(&log_path), 0, "refused without a scan");
    assert!(ms < 10_000, "refused in {ms} ms");
    env.run_with(
        &layout_args(&env, &["scan"], &["--json"]),
        &[("INTERCOM_PANE_LOG", log_path.as_os_str())],
    );
    assert_eq!(scan_passes(&log_path), 1, "the log shows a scan pass");
    assert_eq!(cfg_bytes(&env), before);
    assert!(
        !env.path("root/.pi-intercom/jobs").exists(),
        "no job record"
    );
    let shown = server.tmux(&["capture-pane", "-p", "-t", "work"]);
    assert!(!shown.contains("close requested"), "nothing sent: {shown}");
    eprintln!("the caller's own pane refused in {ms} ms");
}

#[test]
fn recover_on_a_healthy_worker_closes_nothing() {
    let env = Env::new().with_system_path();
    let file = setup(&env, None);
    let server = worker(&env, &file, false);
    let before = cfg_bytes(&env);
    let (code, report, err) = close(&env, &server, &["Worker", "--recover"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(report["fenced"], false, "{report}");
    assert!(report["note"].as_str().unwrap().contains("no close"));
    assert_eq!(cfg_bytes(&env), before);
    assert_eq!(panes(&server), 1);
    assert!(!env.path("root/.pi-intercom/jobs").exists());
}

/// Bounded numbers are refused by the parser (exit 2, the flag named) before anything runs.
#[test]
fn out_of_range_numbers_are_refused_before_anything_runs() {
    let bin = env!("CARGO_BIN_EXE_intercom-pane");
    let cases: [(&[&str], &str); 5] = [
        (
            &["close-worker", "W", "--deadline-secs", "0"],
            "--deadline-secs",
        ),
        (
            &["close-worker", "W", "--deadline-secs", "121"],
            "--deadline-secs",
        ),
        (&["status", "--json", "--limit", "21"], "--limit"),
        (&["demo", "--print", "--interval", "0"], "--interval"),
        (&["ensure-monitor", "--caller-pid", "0"], "--caller-pid"),
    ];
    for (args, flag) in cases {
        let o = std::process::Command::new(bin).args(args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(flag), "{args:?}: {err}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
}
