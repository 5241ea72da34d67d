//! `intercom-pane close-worker` and `handoff` end to end on a real tmux server: the worker (a
//! process named `pi` in its own pane, registered from the inside) is asked for its handoff
//! through the reply path, saves it, settles; only then is exactly its pane closed. The same on
//! the fake Herdr 0.8.2 (the `herdr_` tests), with its restart and impostor cases.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::close_support;
use crate::mux_herdr_fake;
use crate::mux_support;
use crate::pi_support;
use crate::scan_support;

use std::os::unix::fs::PermissionsExt;

use close_support::*;
use mux_herdr_fake::FakeHerdr;
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
    let child = spawn_close(&env, &server, &["Worker", "--deadline-secs", "5", "--json"]);
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

/// Ctrl-C while close-worker waits for the handoff ends the job `interrupted`, recorded, with
/// nothing closed, and says so; the next close starts afresh instead of meeting a fence.
#[test]
fn ctrl_c_while_waiting_stops_the_job_cleanly() {
    let env = Env::new().with_system_path();
    let file = setup(&env, None);
    let server = worker(&env, &file, false);
    let child = spawn_close(&env, &server, &["Worker", "--deadline-secs", "60"]);
    wait_for(10_000, || {
        (config(&env)["agents"][1]["closeJob"]["state"] == "awaiting_handoff").then_some(())
    })
    .expect("the close job awaits the handoff");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    let receipt = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{receipt}");
    assert!(
        receipt.starts_with(
            "not closed: Worker — stopped while waiting for the handoff; nothing was closed"
        ),
        "{receipt}"
    );
    assert!(
        receipt.contains("next: run `intercom-pane close-worker Worker` again"),
        "{receipt}"
    );
    let job = &config(&env)["agents"][1]["closeJob"];
    assert_eq!(job["state"], "interrupted", "{job}");
    assert_eq!(job["reason"], "interrupted", "{job}");
    assert_eq!(panes(&server), 1, "nothing was closed");
    // The next close is not fenced by it: it asks anew (and times out here).
    let (code, report, err) = close(&env, &server, &["Worker", "--deadline-secs", "1"]);
    assert_eq!((code, &report["state"]), (1, &json!("timed_out")), "{err}");
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
    // The receipt, readable: what happened and what to do next.
    assert!(
        report.starts_with("not closed: Worker — the deadline passed: it did not save its handoff"),
        "{report}"
    );
    assert!(
        report.contains("nothing was closed; Worker runs on")
            && report.contains("next: look at its pane"),
        "{report}"
    );
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

// ---- close-worker on Herdr, against the fake Herdr 0.8.2 -------------------------------------
//
// The worker is the pi stand-in, the shell of the fake's pane w1:p1 (`Layout::Own`) or a child of
// a bash that is (`Layout::Shell`), registered from inside like the extension; it reads its
// commands from stdin. Herdr's `agent.prompt` types the close request into the pane: here a
// relay thread plays that part (it answers the request the fake recorded by running `handoff`
// in the worker, then completes a reply in its session file).

struct HerdrWorker {
    herdr: FakeHerdr,
    shell: std::process::Child,
    pi: i32,
    stdin: Option<std::process::ChildStdin>,
}

impl Drop for HerdrWorker {
    fn drop(&mut self) {
        unsafe { libc::kill(self.pi, libc::SIGKILL) };
        let _ = self.shell.kill();
        let _ = self.shell.wait();
    }
}

fn proc_state(pid: i32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(") ").next()?.chars().next()
}

/// The worker's pi in the fake Herdr's pane w1:p1 (a bystander pane w1:p2 beside it),
/// registered from the inside.
fn herdr_worker(env: &Env, file: &std::path::Path, layout: Layout) -> HerdrWorker {
    use std::io::Write;
    let (node, cli) = pi_support::fake_pi_program(&env.path("pi-bin"));
    let impostor = mux_support::program_named("/bin/sleep", &env.path("impostor"));
    let herdr = FakeHerdr::start(mux_herdr_fake::NO_SHELL);
    let sock = herdr.socket.display().to_string();
    let mut cmd = match layout {
        Layout::Own => std::process::Command::new(&node),
        Layout::Shell => {
            let mut c = std::process::Command::new("/bin/bash");
            c.args(["-c", "\"$@\"; exec \"$IMPOSTOR\" 600", "shell"])
                .env("IMPOSTOR", &impostor)
                .arg(&node);
            c
        }
    };
    // The pi runs in the worker's folder (the roster's `.`): `register` records its real one.
    let mut shell = cmd
        .arg(&cli)
        .current_dir(env.path("root"))
        .env("HOME", env.path("home"))
        .env("XDG_STATE_HOME", env.path("state"))
        .env("PATH", &env.path_env)
        .env("HERDR_ENV", "1")
        .env("HERDR_SOCKET_PATH", &sock)
        .env("HERDR_PANE_ID", "w1:p1")
        .env_remove("TMUX")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let shell_pid = shell.id() as i32;
    let pi = match layout {
        Layout::Own => shell_pid,
        Layout::Shell => wait_for(5_000, || {
            std::fs::read_to_string(format!("/proc/{shell_pid}/task/{shell_pid}/children"))
                .ok()?
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
        .expect("the shell started the pi"),
    };
    herdr.with(|s| {
        s.panes[0].shell_pid = shell_pid as u32;
        s.panes[0].foreground = vec![(pi as u32, "pi".into(), vec!["pi".into()])];
        s.add_pane("w1", mux_herdr_fake::NO_SHELL);
    });
    let mut stdin = shell.stdin.take().unwrap();
    let bin = env!("CARGO_BIN_EXE_intercom-pane");
    let sys = env.system_config();
    let root = env.path("root").display().to_string();
    writeln!(
        stdin,
        "{bin} register --config {sys} --event session_start --seq 1 --pi-pid $$ --session-id {ID} --cwd {root} --session-file {} >/dev/null 2>&1",
        file.display()
    )
    .unwrap();
    wait_registered(&env.path("root/.pi-intercom/seats"));
    HerdrWorker {
        herdr,
        shell,
        pi,
        stdin: Some(stdin),
    }
}

/// Play Herdr typing the close request into the worker's pane: once the fake took the prompt,
/// the worker runs `handoff` for the named job, then completes a reply. The worker's stdin comes
/// back from the thread (closing it would end the pi's command loop, and the pi with it).
fn relay(
    w: &mut HerdrWorker,
    env: &Env,
    file: &std::path::Path,
) -> std::thread::JoinHandle<std::process::ChildStdin> {
    use std::io::Write;
    let state = w.herdr.state.clone();
    let mut stdin = w.stdin.take().unwrap();
    let bin = env!("CARGO_BIN_EXE_intercom-pane");
    let root = env.path("root").display().to_string();
    let done = env.path("handoff.done");
    let out = env.path("handoff.out");
    let file = file.to_path_buf();
    std::thread::spawn(move || {
        let job = wait_for(20_000, || {
            let prompts = state.lock().unwrap().prompts.clone();
            prompts.iter().find_map(|(pane, text)| {
                let rest = text.split("(job ").nth(1)?;
                (pane == "w1:p1").then(|| rest.split(')').next().unwrap().to_string())
            })
        });
        let Some(job) = job else { return stdin };
        let _ = writeln!(
            stdin,
            "{bin} handoff --job {job} --summary 'Docs merged; release notes left.' --session-id {ID} --session-file {} --root {root} > {} 2>&1; echo $? > {}",
            file.display(),
            out.display(),
            done.display()
        );
        if wait_for(20_000, || done.exists().then_some(())).is_none() {
            return stdin;
        }
        std::thread::sleep(std::time::Duration::from_millis(300));
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64;
        let line = json!({"type":"message","id":"a3","parentId":"a2",
            "timestamp": intercom_pane::seam::clock::format_iso(now),
            "message":{"role":"assistant","content":[{"type":"text","text":"Handoff saved."}],"stopReason":"stop"}});
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&file)
            .unwrap();
        writeln!(f, "{line}").unwrap();
        stdin
    })
}

fn close_herdr(env: &Env, deadline: &str) -> std::process::Child {
    std::process::Command::new(env!("CARGO_BIN_EXE_intercom-pane"))
        .args(layout_args(
            env,
            &["close-worker"],
            &["Worker", "--deadline-secs", deadline, "--json"],
        ))
        .current_dir(env.dir.path())
        .env_clear()
        .env("HOME", env.path("home"))
        .env("XDG_STATE_HOME", env.path("state"))
        .env("PATH", &env.path_env)
        .env("TMUX_TMPDIR", env.path("tmux-tmp"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

fn herdr_panes(herdr: &FakeHerdr) -> Vec<String> {
    herdr.with(|s| s.panes.iter().map(|p| p.id.clone()).collect())
}

fn pane_closes(herdr: &FakeHerdr) -> usize {
    herdr
        .methods()
        .iter()
        .filter(|m| *m == "pane.close")
        .count()
}

#[test]
fn herdr_closes_exactly_the_workers_pane_through_the_pin() {
    for layout in [Layout::Own, Layout::Shell] {
        let env = Env::new().with_system_path();
        let file = setup(&env, None);
        let mut w = herdr_worker(&env, &file, layout);
        let relay = relay(&mut w, &env, &file);
        let out = close_herdr(&env, "30").wait_with_output().unwrap();
        w.stdin = Some(relay.join().unwrap());
        let report: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{layout:?}: {report} {err} {}",
            std::fs::read_to_string(env.path("handoff.out")).unwrap_or_default()
        );
        assert_eq!(report["state"], "closed", "{layout:?}: {report}");
        assert_eq!(report["closed"]["pane"], "w1:p1");
        assert_eq!(report["closed"]["pi"]["pid"], w.pi);
        // The request went through agent.prompt; exactly the worker's pane was closed, once.
        assert_eq!(w.herdr.with(|s| s.prompts.len()), 1);
        assert_eq!(herdr_panes(&w.herdr), vec!["w1:p2".to_string()]);
        assert_eq!(pane_closes(&w.herdr), 1);
        // The pinned pi was ended (a zombie of this test, or reaped).
        assert!(
            matches!(proc_state(w.pi), None | Some('Z') | Some('X')),
            "{layout:?}: pi state {:?}",
            proc_state(w.pi)
        );
        let c = config(&env);
        assert_eq!(c["agents"][1]["closeJob"]["state"], "closed");
        let job = c["agents"][1]["closeJob"]["jobId"].as_str().unwrap();
        let rec: Value = serde_json::from_slice(
            &std::fs::read(env.path(&format!("root/.pi-intercom/jobs/{job}.json"))).unwrap(),
        )
        .unwrap();
        assert_eq!(rec["mux"]["kind"], "herdr");
        assert_eq!(rec["mux"]["paneId"], "w1:p1");
    }
}

/// After a Herdr restart the worker's pane id is back as a fresh shell: its registered pi is
/// gone, so nothing is asked, recorded or closed.
#[test]
fn herdr_a_restarted_pane_with_the_same_id_is_not_the_worker() {
    let env = Env::new().with_system_path();
    let file = setup(&env, None);
    let w = herdr_worker(&env, &file, Layout::Own);
    let fresh = mux_support::Sleeper::start(600);
    let fresh_pid = fresh.id();
    // Herdr's stop ends every pane process; the pane comes back under its id as a new shell.
    unsafe { libc::kill(w.pi, libc::SIGKILL) };
    wait_for(5_000, || {
        matches!(proc_state(w.pi), None | Some('Z')).then_some(())
    })
    .unwrap();
    w.herdr.with(|s| s.restart(|_| fresh_pid));
    let before = std::fs::read(env.path("root/.pi-intercom/config.json")).unwrap();
    let out = close_herdr(&env, "5").wait_with_output().unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert!(
        matches!(out.status.code(), Some(2 | 6)),
        "{report} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(report["refused"].is_string(), "{report}");
    assert_eq!(
        std::fs::read(env.path("root/.pi-intercom/config.json")).unwrap(),
        before,
        "nothing recorded"
    );
    assert!(w.herdr.with(|s| s.prompts.is_empty()), "nothing sent");
    assert_eq!(pane_closes(&w.herdr), 0);
    assert_eq!(herdr_panes(&w.herdr).len(), 2);
    drop(fresh);
}

/// What changes in the worker's pane once the job recorded a stage.
#[derive(Debug, Clone, Copy)]
enum HerdrSwap {
    /// A Herdr restart: the same pane id, a fresh shell, a new terminal id (the pi, in this
    /// harder case, still runs).
    Restart,
    /// The pane's terminal is recreated under the same shell pid.
    Terminal,
    /// The pi exits; its shell (or the pane's process) is something else now.
    PiGone,
}

/// close-worker on Herdr with the pane or the pi changed right before the close: the run stops
/// with nothing closed, and a pi it had frozen runs again.
#[test]
fn herdr_a_pane_or_pi_changed_before_the_close_is_never_closed() {
    // At `ready` the change lands before the run's verify (the recorded pane incarnation
    // refuses it); at `closing`, after it (the close's own last look refuses it).
    let cases = [
        (Layout::Own, HerdrSwap::Restart, "closing"),
        (Layout::Shell, HerdrSwap::Restart, "closing"),
        (Layout::Shell, HerdrSwap::Terminal, "closing"),
        (Layout::Own, HerdrSwap::Terminal, "ready"),
        (Layout::Shell, HerdrSwap::PiGone, "closing"),
    ];
    for (layout, swap, at) in cases {
        let label = format!("{layout:?}/{swap:?}/{at}");
        let env = Env::new().with_system_path();
        let file = setup(&env, None);
        let mut w = herdr_worker(&env, &file, layout);
        let relay = relay(&mut w, &env, &file);
        let fresh = mux_support::Sleeper::start(600);
        let fresh_pid = fresh.id();
        // The change lands on the first request after the run recorded `at`.
        let cfg_path = env.path("root/.pi-intercom/config.json");
        let pi = w.pi;
        let mut done = false;
        w.herdr.with(|s| {
            s.hook = Some(mux_herdr_fake::Hook(Box::new(move |_req, s| {
                let closing = std::fs::read(&cfg_path)
                    .ok()
                    .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
                    .is_some_and(|c| c["agents"][1]["closeJob"]["state"] == at);
                if done || !closing {
                    return;
                }
                done = true;
                match swap {
                    HerdrSwap::Restart => s.restart(|_| fresh_pid),
                    HerdrSwap::Terminal => {
                        let t = s.next_terminal_id();
                        s.panes[0].terminal_id = t;
                    }
                    HerdrSwap::PiGone => unsafe {
                        libc::kill(pi, libc::SIGKILL);
                    },
                }
            })))
        });
        let child = close_herdr(&env, "20");
        let out = child.wait_with_output().unwrap();
        w.stdin = Some(relay.join().unwrap());
        let report: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_ne!(out.status.code(), Some(0), "{label}: {report} {err}");
        assert_ne!(report["state"], "closed", "{label}: {report}");
        assert!(report["closed"].is_null(), "{label}: {report}");
        assert_eq!(pane_closes(&w.herdr), 0, "{label}: {report}");
        assert_eq!(herdr_panes(&w.herdr).len(), 2, "{label}");
        if !matches!(swap, HerdrSwap::PiGone) {
            // Let go again: running (or sleeping), not stopped, not ended.
            assert!(
                matches!(proc_state(w.pi), Some('S' | 'R')),
                "{label}: pi state {:?} {report}",
                proc_state(w.pi)
            );
        }
        // Refused by the close's own last look: the pane is another one, or the pi is gone.
        let want = match (swap, at) {
            (HerdrSwap::PiGone, _) | (_, "ready") => "identity_failed",
            _ => "commit_rejected",
        };
        assert_eq!(report["reason"], want, "{label}: {report}");
        drop(fresh);
    }
}

/// Real-Herdr tier: a private headless `herdr server`; the worker is the pi stand-in started in
/// a Herdr pane (`exec -a pi …`, which Herdr detects as agent `pi`), registered from inside it.
/// `agent.prompt` types the close request; the worker saves its handoff and settles; exactly its
/// pane is closed, the bystander pane beside it is not.
#[test]
#[cfg_attr(not(real_herdr), ignore = "real-Herdr tier: no `herdr` on PATH")]
fn real_herdr_closes_exactly_the_workers_pane_after_its_handoff() {
    use std::time::{Duration, Instant};
    let h = mux_herdr_fake::real::RealHerdr::start();
    let env = Env::new().with_system_path();
    let file = setup(&env, None);
    let root = env.path("root").display().to_string();
    let pane = h.background_pane(&root, "work");
    let split = h.result(&["pane", "split", &pane, "--direction", "right", "--no-focus"]);
    let bystander = split["pane"]["pane_id"].as_str().unwrap().to_string();
    h.shell_pid(&pane);
    let argv = pi_support::pi_pane_argv(&env.path("pi-bin"), &worker_script(&env, &file, true));
    let line = format!("exec {}", intercom_pane::seam::mux::shell_line(&argv));
    h.cli(&["pane", "run", &pane, &line]);
    wait_registered(&env.path("root/.pi-intercom/seats"));
    // Herdr detects the agent a moment after it starts (`agent get` fails until then).
    let end = Instant::now() + Duration::from_secs(20);
    while !h.cli(&["agent", "get", &pane]).status.success() {
        assert!(
            Instant::now() < end,
            "Herdr never detected the pi in {pane}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let out = close_herdr(&env, "30").wait_with_output().unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{report} {} {}",
        String::from_utf8_lossy(&out.stderr),
        std::fs::read_to_string(env.path("handoff.out")).unwrap_or_default()
    );
    assert_eq!(report["state"], "closed", "{report}");
    assert_eq!(report["closed"]["pane"], pane.as_str());
    let listed = h.result(&["pane", "list"]).to_string();
    assert!(!listed.contains(&format!("\"{pane}\"")), "{listed}");
    assert!(listed.contains(&format!("\"{bystander}\"")), "{listed}");
    assert_eq!(config(&env)["agents"][1]["closeJob"]["state"], "closed");
}
