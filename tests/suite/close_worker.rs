//! `intercom-pane close-worker` and `handoff` end to end on a real tmux server: the worker (a
//! process named `pi` in its own pane, registered from the inside) is asked for its handoff
//! through the reply path, saves it, settles; only then is exactly its pane closed.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::close_support;
use crate::mux_support;
use crate::pi_support;
use crate::scan_support;

use std::os::unix::fs::PermissionsExt;

use close_support::*;
use mux_support::{wait_for, TmuxServer};
use scan_support::*;
use serde_json::{json, Value};

#[test]
fn closes_exactly_the_worker_after_its_handoff_settles() {
    let env = Env::new().with_system_path();
    let file = setup(&env, None);
    // A huge integer and mode 0644 in the shared config survive the handoff and the close.
    let cfg_path = env.path("root/.pi-intercom/config.json");
    let text = std::fs::read_to_string(&cfg_path).unwrap().replacen(
        "{",
        "{\"big\":123456789012345678901234567890,",
        1,
    );
    std::fs::write(&cfg_path, text).unwrap();
    std::fs::set_permissions(&cfg_path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let server = worker(&env, &file, true);
    // A bystander pane on the same server is never touched.
    server.new_session("bystander", &env.path("root"), &[]);
    assert_eq!(panes(&server), 2);

    let (code, report, err) = close(&env, &server, &["Worker", "--deadline-secs", "30"]);
    assert_eq!(
        code,
        0,
        "{report} {err} {}",
        std::fs::read_to_string(env.path("handoff.out")).unwrap_or_default()
    );
    assert_eq!(report["state"], "closed");
    assert_eq!(panes(&server), 1, "only the worker's pane is gone");
    let text = std::fs::read_to_string(&cfg_path).unwrap();
    assert!(text.starts_with("{\"big\":123456789012345678901234567890,"));
    let mode = std::fs::metadata(&cfg_path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o644);
    let w = &config(&env)["agents"][1];
    assert_eq!(w["closeJob"]["state"], "closed");
    assert_eq!(w["handoff"]["summary"], "Docs merged; release notes left.");
    assert_eq!(w["handoff"]["jobId"], w["closeJob"]["jobId"]);
    // Registration and handoff are kept; the machine-local job record holds the identities.
    assert!(
        std::fs::read_dir(env.path("root/.pi-intercom/seats"))
            .unwrap()
            .count()
            >= 1
    );
    let job = w["closeJob"]["jobId"].as_str().unwrap();
    let rec_path = env.path(&format!("root/.pi-intercom/jobs/{job}.json"));
    let mode = std::fs::metadata(&rec_path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let rec: Value = serde_json::from_slice(&std::fs::read(&rec_path).unwrap()).unwrap();
    assert_eq!(rec["mux"]["kind"], "tmux");
    assert!(rec["pi"]["startTicks"].is_u64());
    let text = std::fs::read_to_string(env.path("root/.pi-intercom/config.json")).unwrap();
    assert!(
        !text.contains("startTicks") && !text.contains("paneId"),
        "nothing private in config"
    );
}

#[test]
fn no_handoff_means_timed_out_and_nothing_closed() {
    let env = Env::new().with_system_path();
    let file = setup(&env, None);
    let server = worker(&env, &file, false);
    let (code, report, err) = close(&env, &server, &["Worker", "--deadline-secs", "2"]);
    assert_eq!(code, 1, "{report} {err}");
    assert_eq!(report["state"], "timed_out");
    assert_eq!(panes(&server), 1, "the pane is still there");
    assert_eq!(config(&env)["agents"][1]["closeJob"]["state"], "timed_out");
    // A handoff arriving after the deadline does not reopen the ended job.
    let before = std::fs::read(env.path("root/.pi-intercom/config.json")).unwrap();
    let job = report["jobId"].as_str().unwrap().to_string();
    let root = env.path("root").display().to_string();
    let o = env.run(&[
        "handoff",
        "--job",
        &job,
        "--summary",
        "Late.",
        "--session-id",
        ID,
        "--root",
        &root,
    ]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("timed_out"),
        "{o:?}"
    );
    assert_eq!(
        std::fs::read(env.path("root/.pi-intercom/config.json")).unwrap(),
        before
    );
}

#[test]
fn refusals_dry_run_and_fenced_jobs() {
    let env = Env::new().with_system_path();
    let file = setup(&env, None);
    let server = worker(&env, &file, false);
    let before = std::fs::read(env.path("root/.pi-intercom/config.json")).unwrap();
    let (code, _, err) = close(&env, &server, &["Coordinator"]);
    assert_eq!(code, 2, "{err}");
    let (code, _, _) = close(&env, &server, &["Nobody"]);
    assert_eq!(code, 2);
    let (code, report, err) = close(&env, &server, &["Worker", "--dry-run"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(report["mutated"], false);
    assert_eq!(report["registrationAlive"], true);
    assert_eq!(report["identity"], "verified", "{report}");
    assert_eq!(
        std::fs::read(env.path("root/.pi-intercom/config.json")).unwrap(),
        before
    );

    // A job left `closing` by a dead run is never replayed: it becomes uncertain and stays fenced
    // until a person recovers it.
    let t = "2026-11-29T23:00:00.000Z";
    let job = json!({"jobId": "dead-run", "state": "closing", "createdAt": t, "updatedAt": t, "deadlineAt": t});
    setup(&env, Some(job));
    let (code, report, _) = close(&env, &server, &["Worker"]);
    assert_eq!((code, report["now"].as_str()), (5, Some("uncertain")));
    let (code, _, err) = close(&env, &server, &["Worker"]);
    assert_eq!(code, 5);
    assert!(err.contains("uncertain"), "{err}");
    let (code, report, _) = close(&env, &server, &["Worker", "--recover"]);
    assert_eq!((code, report["now"].as_str()), (0, Some("failed")));

    // A pending job whose lock file is still there (naming this live pid, even) but held by no
    // one: the run died, so the job is a dead run's (interrupted), not running.
    let job = json!({"jobId": "reused-pid", "state": "awaiting_handoff", "createdAt": t, "updatedAt": t, "deadlineAt": t});
    setup(&env, Some(job));
    let jobs = env.path("root/.pi-intercom/jobs");
    std::fs::create_dir_all(&jobs).unwrap();
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap();
    std::fs::write(
        jobs.join("reused-pid.lock"),
        format!("{} 1 {}\n", std::process::id(), boot.trim()),
    )
    .unwrap();
    let (code, report, err) = close(&env, &server, &["Worker"]);
    assert_eq!(
        (code, report["now"].as_str()),
        (5, Some("interrupted")),
        "{err}"
    );
    assert_eq!(panes(&server), 1, "nothing was closed along the way");
}

#[test]
fn a_worker_without_a_live_registration_is_not_asked() {
    let env = Env::new().with_system_path();
    setup(&env, None);
    let server = TmuxServer::start("other", &env.path("root"), &[]);
    let before = std::fs::read(env.path("root/.pi-intercom/config.json")).unwrap();
    let (code, _, err) = close(&env, &server, &["Worker"]);
    assert_eq!(code, 6, "{err}");
    assert!(err.contains("registered seat"), "{err}");
    assert_eq!(
        std::fs::read(env.path("root/.pi-intercom/config.json")).unwrap(),
        before
    );
}

#[test]
fn a_handoff_from_another_process_closes_nothing() {
    let env = Env::new().with_system_path();
    let file = setup(&env, None);
    let server = worker(&env, &file, false);
    let sock = server.sock.display().to_string();
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_intercom-pane"))
        .args(layout_args(
            &env,
            &["close-worker"],
            &["--tmux-socket", &sock, "Worker", "--deadline-secs", "5"],
        ))
        .current_dir(env.dir.path())
        .env("HOME", env.path("home"))
        .env("TMUX_TMPDIR", env.path("tmux-tmp"))
        .env_remove("TMUX")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let job = wait_for(10_000, || {
        let c = config(&env);
        let j = &c["agents"][1]["closeJob"];
        (j["state"] == "awaiting_handoff").then(|| j["jobId"].as_str().unwrap().to_string())
    })
    .expect("the close job awaits the handoff");
    // Another `pi` in another pane claims to be the worker and saves a handoff for its job.
    let bin = env!("CARGO_BIN_EXE_intercom-pane");
    let root = env.path("root").display().to_string();
    let f = file.display();
    let out_path = env.path("forged.out");
    let fout = out_path.display();
    let script = format!(
        "{bin} handoff --job {job} --summary 'Not really me.' --session-id {ID} --session-file {f} --root {root} > {fout} 2>&1; echo \"rc=$?\" >> {fout}; \
         ts=$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ); \
         printf '%s\\n' \"{{\\\"type\\\":\\\"message\\\",\\\"id\\\":\\\"b1\\\",\\\"parentId\\\":\\\"a2\\\",\\\"timestamp\\\":\\\"$ts\\\",\\\"message\\\":{{\\\"role\\\":\\\"assistant\\\",\\\"content\\\":[{{\\\"type\\\":\\\"text\\\",\\\"text\\\":\\\"ok\\\"}}],\\\"stopReason\\\":\\\"stop\\\"}}}}\" >> {f}; sleep 600; true"
    );
    let argv = pi_support::pi_pane_argv(&env.path("pi-bin"), &script);
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    server.new_session("impostor", &env.path("root"), &argv);
    let out = child.wait_with_output().unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    // The forged handoff is refused before anything is written; the job waits it out.
    let forged = std::fs::read_to_string(&out_path).unwrap_or_default();
    assert!(
        forged.contains("refused") && forged.contains("rc=2"),
        "{forged}"
    );
    assert_eq!(out.status.code(), Some(1), "{report}");
    assert_eq!(report["state"], "timed_out", "{report}");
    assert!(config(&env)["agents"][1].get("handoff").is_none());
    assert_eq!(panes(&server), 2, "neither pane was closed");
}

/// Two close-worker runs for one worker at the same moment: exactly one asks and runs the job;
/// the other is refused (fenced by the live job, or by the check under the config lock), and the
/// running job is never mistaken for a dead run's.
#[test]
fn two_runs_at_once_start_one_job() {
    let env = Env::new().with_system_path();
    let file = setup(&env, None);
    let server = worker(&env, &file, false);
    let outcomes: Vec<(i32, Value, String)> = std::thread::scope(|sc| {
        let handles: Vec<_> = (0..2)
            .map(|_| sc.spawn(|| close(&env, &server, &["Worker", "--deadline-secs", "2"])))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut codes: Vec<i32> = outcomes.iter().map(|o| o.0).collect();
    codes.sort();
    let refused = outcomes.iter().find(|o| o.0 != 1);
    assert!(
        codes == [1, 2] || codes == [1, 5],
        "one job runs (and times out), the other is refused: {outcomes:?}"
    );
    let refused = refused.unwrap();
    assert!(
        refused.2.contains("started meanwhile") || refused.2.contains("is running"),
        "{refused:?}"
    );
    let w = &config(&env)["agents"][1];
    assert_eq!(w["closeJob"]["state"], "timed_out", "{w}");
    assert_eq!(panes(&server), 1, "nothing was closed");
}

/// On a terminal the wait shows one line, rewritten in place (stage, elapsed, deadline), ended
/// before the report; the report itself goes to stdout.
#[test]
fn progress_on_a_terminal_is_one_updating_line() {
    let env = Env::new().with_system_path();
    let file = setup(&env, None);
    let server = worker(&env, &file, false);
    let bin = env!("CARGO_BIN_EXE_intercom-pane");
    let sock = server.sock.display().to_string();
    let args = layout_args(
        &env,
        &["close-worker"],
        &["--tmux-socket", &sock, "Worker", "--deadline-secs", "2"],
    )
    .join(" ");
    let (out, raw) = (env.path("report.out"), env.path("tty.raw"));
    let script = format!(
        "cd {dir}; read -r go; env -i HOME={home} XDG_STATE_HOME={state} PATH={path} TMUX_TMPDIR={tmp} \
         {bin} {args} >{out}; echo \"rc=$?\" >>{out}; sleep 600",
        dir = env.dir.path().display(),
        home = env.path("home").display(),
        state = env.path("state").display(),
        path = env.path_env,
        tmp = env.path("tmux-tmp").display(),
        out = out.display(),
    );
    // The terminal: a pane of another private tmux server, its output also logged raw.
    let term = TmuxServer::start("term", env.dir.path(), &["/bin/bash", "-c", &script]);
    term.tmux(&[
        "pipe-pane",
        "-o",
        "-t",
        "term",
        &format!("cat >> {}", raw.display()),
    ]);
    term.tmux(&["send-keys", "-t", "term", "go", "Enter"]);
    let report = wait_for(15_000, || {
        std::fs::read_to_string(&out)
            .ok()
            .filter(|t| t.contains("rc="))
    })
    .expect("close-worker ran on the terminal");
    assert!(report.contains("rc=1"), "{report}");
    assert!(report.contains("timed_out"), "{report}");
    let shown = term.tmux(&["capture-pane", "-p", "-t", "term"]);
    let lines: Vec<&str> = shown
        .lines()
        .filter(|l| l.contains("close-worker: awaiting handoff"))
        .collect();
    assert_eq!(lines.len(), 1, "one progress line on screen:\n{shown}");
    assert!(lines[0].contains("s elapsed, deadline in"), "{}", lines[0]);
    let raw = std::fs::read(&raw).unwrap_or_default();
    let redraws = raw.windows(4).filter(|w| w == b"\r\x1b[K").count();
    assert!(
        redraws >= 2,
        "the line is rewritten in place ({redraws} times)"
    );
    eprintln!("progress line redrawn {redraws} times in a 2 s wait");
}
