//! `intercom-pane resume-worker NAME --confirm-closed` on a real tmux server: the coordinator's
//! pane is registered from the inside; the resumed worker's program is a stand-in `pi` that
//! records its argv and folder and registers like the extension. One resume, one window; every
//! precondition refused on its own, with nothing launched.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_support;
use crate::pi_support;
use crate::scan_support;

use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use mux_support::{wait_for, TmuxServer};
use scan_support::*;
use serde_json::{json, Value};

/// One session id per test: the tests run at once, and a process naming one test's session
/// would be a live witness for another.
const ID1: &str = "01a2f000-0000-7000-8000-00000000ee01";
const ID2: &str = "01a2f000-0000-7000-8000-00000000ee02";
const ID3: &str = "01a2f000-0000-7000-8000-00000000ee03";
const ID4: &str = "01a2f000-0000-7000-8000-00000000ee04";
const ID5: &str = "01a2f000-0000-7000-8000-00000000ee05";
/// The newer session beside ID5's saved file (named by no other test either).
const ID6: &str = "01a2f000-0000-7000-8000-00000000ee06";
const COORD: &str = "01a2f000-0000-7000-8000-00000000ee00";

/// Root with a coordinator and one closed worker named `name` in `project`, and the worker's
/// saved session file.
pub(crate) fn setup(env: &Env, id: &str, name: &str, project: &str) -> PathBuf {
    let root = env.path("root");
    std::fs::create_dir_all(root.join(".pi-intercom")).unwrap();
    std::fs::create_dir_all(root.join(project)).unwrap();
    let closed = json!({"jobId": "j1", "state": "closed", "createdAt": "2026-11-29T23:00:00.000Z",
        "updatedAt": "2026-11-29T23:01:00.000Z", "deadlineAt": "2026-11-29T23:02:00.000Z"});
    let handoff = json!({"version": 1, "jobId": "j1", "summary": "Docs merged; notes left.",
        "updatedAt": "2026-11-29T23:00:30.000Z"});
    std::fs::write(
        root.join(".pi-intercom/config.json"),
        json!({"version": 1, "agents": [
            {"sessionId": COORD, "name": "Coordinator", "coordinator": true, "description": "C.", "port": 1, "projectDirectory": "."},
            {"sessionId": id, "name": name, "coordinator": false, "description": "Writes docs.",
             "port": closed_port(), "projectDirectory": project, "closeJob": closed, "handoff": handoff}]})
        .to_string(),
    )
    .unwrap();
    settled_session(env, id, &root)
}

/// A loopback port nothing listens on.
fn closed_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// The coordinator's pane: the pi stand-in (`pi_support`) registering the coordinator's session.
fn coordinator(env: &Env) -> TmuxServer {
    coordinator_on(env, TmuxServer::start)
}

/// `coordinator`, on a server started by `start` (`TmuxServer::start_logged`, say).
pub(crate) fn coordinator_on(
    env: &Env,
    start: fn(&str, &Path, &[&str]) -> TmuxServer,
) -> TmuxServer {
    let bin = env!("CARGO_BIN_EXE_intercom-pane");
    let sys = env.system_config();
    let root = env.path("root").display().to_string();
    let script = format!(
        "{bin} register --config {sys} --event session_start --seq 1 --pi-pid $$ --session-id {COORD} --cwd {root} >/dev/null; sleep 600"
    );
    let argv = pi_support::pi_pane_argv(&env.path("pi-bin"), &script);
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let server = start("coord", &env.path("root"), &argv);
    wait_registered(&env.path("root/.pi-intercom/seats"));
    server
}

/// The program the resume launches as pi: records its argv and folder, then becomes the pi
/// stand-in (`pi_support`), which registers from the inside the way the extension does (binary
/// and config from the environment the resume passed) and waits.
pub(crate) fn stand_in_pi(env: &Env) -> PathBuf {
    let (node, cli) = pi_support::fake_pi_program(&env.path("pi-bin"));
    let dir = env.path("fake-pi");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("pi");
    let rec = env.path("launched");
    let inner = "\"$INTERCOM_PANE_BIN\" register --config \"$INTERCOM_PANE_CONFIG\" --event session_start --seq 1 --pi-pid $$ --session-id \"$RESUMED_ID\" --session-file \"$RESUMED_FILE\" --cwd \"$PWD\" >/dev/null 2>&1; sleep 600";
    std::fs::write(
        &p,
        format!(
            "#!/bin/bash\nprintf '%s\\n' \"$@\" >> {rec}.argv\npwd > {rec}.cwd\n\
             export RESUMED_FILE=\"$2\"; id=\"${{2##*_}}\"; export RESUMED_ID=\"${{id%.jsonl}}\"\n\
             exec -a pi {node} {cli} '{inner}'\n",
            rec = rec.display(),
            node = node.display(),
            cli = cli.display(),
        ),
    )
    .unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

pub(crate) fn resume(env: &Env, pi: &Path, extra: &[&str]) -> (i32, Value, String) {
    let pi = pi.display().to_string();
    let mut args = vec!["--pi", &pi, "--json", "--wait-secs", "15"];
    args.extend_from_slice(extra);
    let o = env.run(&layout_args(env, &["resume-worker"], &args));
    (
        o.status.code().unwrap_or(-1),
        serde_json::from_slice(&o.stdout).unwrap_or(Value::Null),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The coordinator's window first, then every other window's name (the resumed workers open in
/// sessions of their own, which tmux may list before `coord`).
fn windows(server: &TmuxServer) -> Vec<String> {
    let listed = server.tmux(&[
        "list-windows",
        "-a",
        "-F",
        "#{session_name}\t#{window_name}",
    ]);
    let (coord, others): (Vec<_>, Vec<_>) = listed
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .partition(|(s, _)| *s == "coord");
    coord
        .into_iter()
        .chain(others)
        .map(|(_, w)| w.to_string())
        .collect()
}

#[test]
fn a_closed_worker_resumes_once_in_a_session_of_its_own_that_outlives_the_coordinators() {
    let env = Env::new().with_system_path();
    let file = setup(&env, ID1, "Docs", "docs");
    let server = coordinator(&env);
    let pi = stand_in_pi(&env);
    let active_before = server.tmux(&["display-message", "-p", "-t", "=coord:", "#{window_id}"]);

    let (code, out, err) = resume(&env, &pi, &["Docs", "--confirm-closed"]);
    assert_eq!(code, 0, "{out} {err}");
    assert_eq!(out["result"], "resumed", "{out}");
    assert_eq!(out["handoff"]["summary"], "Docs merged; notes left.");
    assert_eq!(windows(&server)[1..], ["Docs"]);
    // Focus stayed where the person had it.
    let active_after = server.tmux(&["display-message", "-p", "-t", "=coord:", "#{window_id}"]);
    assert_eq!(active_before, active_after);
    let argv = std::fs::read_to_string(env.path("launched.argv")).unwrap();
    assert_eq!(argv, format!("--session\n{}\n", file.display()));
    let cwd = std::fs::read_to_string(env.path("launched.cwd")).unwrap();
    assert_eq!(cwd.trim(), env.path("root/docs").display().to_string());
    // A launch record now says what it was started with (for `restore`): its session by id,
    // the program, the folder, the server and pane.
    let specs: Vec<Value> = std::fs::read_dir(env.path("root/.pi-intercom/workers"))
        .unwrap()
        .flatten()
        .map(|e| serde_json::from_slice(&std::fs::read(e.path()).unwrap()).unwrap())
        .collect();
    assert_eq!(specs.len(), 1, "{specs:?}");
    assert_eq!(specs[0]["sessionId"], ID1);
    assert_eq!(specs[0]["args"], json!(["--session-id", ID1]));
    assert_eq!(specs[0]["program"], pi.display().to_string());
    assert_eq!(specs[0]["cwd"], env.path("root/docs").display().to_string());
    assert_eq!(specs[0]["stage"], "registered");
    assert_eq!(
        specs[0]["placement"]["socket"],
        server.sock.display().to_string()
    );
    // The fence is lifted by the registration; a second resume sees the worker live.
    let (code, out, _) = resume(&env, &pi, &["Docs", "--confirm-closed"]);
    assert_eq!(code, 4, "{out}");
    assert_eq!(windows(&server)[1..], ["Docs"]);
    // The refusal says where it runs, and what to do instead.
    let why = out["reason"].as_str().unwrap();
    let pane = server
        .tmux(&[
            "list-panes",
            "-t",
            "=Docs:",
            "-F",
            "#{pane_id} #{window_id}",
        ])
        .trim()
        .to_string();
    let (pane, window) = pane.split_once(' ').unwrap();
    assert!(
        why.starts_with("registration: pid")
            && why.contains(&format!(
                "in tmux pane {pane} (session Docs, window {window})"
            ))
            && why.contains("nothing to resume: go to it with the sidebar's ⏎"),
        "{why}"
    );
    // Ending the coordinator's session (as restarting the coordinator may) leaves it running.
    server.tmux(&["kill-session", "-t", "=coord"]);
    let still = server.tmux(&["list-panes", "-t", "=Docs:", "-F", "#{pane_id}"]);
    assert_eq!(still.trim(), pane);
}

#[test]
fn refusals_launch_nothing() {
    let env = Env::new().with_system_path();
    setup(&env, ID2, "Docs", "docs");
    let server = coordinator(&env);
    let pi = stand_in_pi(&env);
    // Without --confirm-closed.
    let (code, out, _) = resume(&env, &pi, &["Docs"]);
    assert_eq!(
        (code, out["result"].as_str()),
        (3, Some("refused")),
        "{out}"
    );
    // Unknown name, and the coordinator.
    assert_eq!(resume(&env, &pi, &["Nobody", "--confirm-closed"]).0, 2);
    assert_eq!(resume(&env, &pi, &["coordinator", "--confirm-closed"]).0, 2);
    // A dry run prints the checks and the launch, and launches nothing.
    let (code, out, _) = resume(&env, &pi, &["Docs", "--confirm-closed", "--dry-run"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(out["argv"]["argv"][1], "--session");
    // A live health endpoint answering as the worker's session.
    let cfg_path = env.path("root/.pi-intercom/config.json");
    let mut cfg: Value = serde_json::from_slice(&std::fs::read(&cfg_path).unwrap()).unwrap();
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    cfg["agents"][1]["port"] = json!(l.local_addr().unwrap().port());
    std::fs::write(&cfg_path, cfg.to_string()).unwrap();
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        for mut s in l.incoming().flatten().take(4) {
            let mut b = [0u8; 1024];
            let _ = s.read(&mut b);
            let body = json!({"version": 1, "sessionId": ID2}).to_string();
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    let (code, out, _) = resume(&env, &pi, &["Docs", "--confirm-closed"]);
    assert_eq!(code, 4, "{out}");
    assert!(
        out["reason"].as_str().unwrap().starts_with("health"),
        "{out}"
    );
    cfg["agents"][1]["port"] = json!(closed_port());
    // A pending close job.
    cfg["agents"][1]["closeJob"]["state"] = json!("awaiting_handoff");
    std::fs::write(&cfg_path, cfg.to_string()).unwrap();
    assert_eq!(resume(&env, &pi, &["Docs", "--confirm-closed"]).0, 5);
    cfg["agents"][1]["closeJob"]["state"] = json!("closed");
    std::fs::write(&cfg_path, cfg.to_string()).unwrap();
    // A process still running the session (named on its command line).
    let mut holder = std::process::Command::new("/bin/bash")
        .args(["-c", "sleep 30; true", "pi", "--session-id", ID2])
        .spawn()
        .unwrap();
    let cmdline = format!("/proc/{}/cmdline", holder.id());
    wait_for(3000, || {
        let c = std::fs::read(&cmdline).ok()?;
        c.windows(ID2.len())
            .any(|w| w == ID2.as_bytes())
            .then_some(())
    })
    .expect("the holder runs");
    let (code, out, _) = resume(&env, &pi, &["Docs", "--confirm-closed"]);
    let _ = holder.kill();
    let _ = holder.wait();
    assert_eq!(code, 4, "{out}");
    assert!(
        out["reason"].as_str().unwrap().starts_with("process"),
        "{out}"
    );
    // The saved session file's header names another session.
    let file = env.path(&format!("sessions/2026-11-29T23-00-00-000Z_{ID2}.jsonl"));
    let text = std::fs::read_to_string(&file)
        .unwrap()
        .replacen(ID2, "other", 1);
    std::fs::write(&file, text).unwrap();
    let (code, out, _) = resume(&env, &pi, &["Docs", "--confirm-closed"]);
    assert_eq!(code, 6, "{out}");
    assert_eq!(windows(&server).len(), 1);
    assert!(!env.path("launched.argv").exists());
}

#[test]
fn two_resumes_at_once_open_one_window_and_odd_names_and_paths_launch_exactly() {
    let env = Env::new().with_system_path();
    let name = "Doc's \"writer\"; rm";
    let file = setup(&env, ID3, name, "my project");
    let server = coordinator(&env);
    let pi = stand_in_pi(&env);
    let runs: Vec<_> = (0..2)
        .map(|_| {
            let pi = pi.clone();
            let args = layout_args(
                &env,
                &["resume-worker"],
                &[
                    "--pi",
                    &pi.display().to_string(),
                    "--json",
                    "--wait-secs",
                    "15",
                    name,
                    "--confirm-closed",
                ],
            );
            std::process::Command::new(env!("CARGO_BIN_EXE_intercom-pane"))
                .args(&args)
                .current_dir(env.dir.path())
                .env_clear()
                .env("HOME", env.path("home"))
                .env("XDG_STATE_HOME", env.path("state"))
                .env("PATH", &env.path_env)
                .env("TMUX_TMPDIR", env.path("tmux-tmp"))
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let codes: Vec<i32> = runs
        .into_iter()
        .map(|c| c.wait_with_output().unwrap().status.code().unwrap_or(-1))
        .collect();
    assert_eq!(codes.iter().filter(|&&c| c == 0).count(), 1, "{codes:?}");
    assert!(codes.iter().all(|c| [0, 4, 5].contains(c)), "{codes:?}");
    let w = wait_for(3000, || {
        let w = windows(&server);
        (w.len() == 2).then_some(w)
    })
    .expect("exactly one new window");
    assert_eq!(w[1], name);
    let argv = std::fs::read_to_string(env.path("launched.argv")).unwrap();
    assert_eq!(argv, format!("--session\n{}\n", file.display()));
    let cwd = std::fs::read_to_string(env.path("launched.cwd")).unwrap();
    assert_eq!(
        cwd.trim(),
        env.path("root/my project").display().to_string()
    );
}

/// `resume-worker` started with the test-only pause before its re-check under the lock: it
/// creates `pause` once its first checks passed and waits until the test removes it.
fn paused_resume(env: &Env, pi: &Path, name: &str, pause: &Path) -> std::process::Child {
    let args = layout_args(
        env,
        &["resume-worker"],
        &[
            "--pi",
            &pi.display().to_string(),
            "--json",
            "--wait-secs",
            "15",
            name,
            "--confirm-closed",
        ],
    );
    std::process::Command::new(env!("CARGO_BIN_EXE_intercom-pane"))
        .args(&args)
        .current_dir(env.dir.path())
        .env_clear()
        .env("HOME", env.path("home"))
        .env("XDG_STATE_HOME", env.path("state"))
        .env("PATH", &env.path_env)
        .env("TMUX_TMPDIR", env.path("tmux-tmp"))
        .env("INTERCOM_PANE_TEST_PAUSE_BEFORE_RECHECK", pause)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// The config changes after the first check and before the launch (a close job starts, or the
/// worker's session id changes): the re-check under the lock refuses, nothing is launched.
#[test]
fn a_config_changed_between_check_and_launch_is_refused() {
    let env = Env::new().with_system_path();
    setup(&env, ID4, "Docs", "docs");
    let server = coordinator(&env);
    let pi = stand_in_pi(&env);
    let cfg_path = env.path("root/.pi-intercom/config.json");
    let original = std::fs::read(&cfg_path).unwrap();
    let pause = env.path("pause");
    type Change = fn(&mut Value);
    let changes: [(Change, &str); 2] = [
        (
            |c| c["agents"][1]["closeJob"]["state"] = json!("awaiting_handoff"),
            "close job j1 is awaiting_handoff",
        ),
        (
            |c| c["agents"][1]["sessionId"] = json!("01a2f000-0000-7000-8000-00000000ee44"),
            "the worker's session changed meanwhile",
        ),
    ];
    for (change, reason) in changes {
        std::fs::write(&cfg_path, &original).unwrap();
        let run = paused_resume(&env, &pi, "Docs", &pause);
        wait_for(10_000, || pause.exists().then_some(())).expect("the resume pauses");
        let mut cfg: Value = serde_json::from_slice(&original).unwrap();
        change(&mut cfg);
        let tmp = env.path("config.tmp");
        std::fs::write(&tmp, cfg.to_string()).unwrap();
        std::fs::rename(&tmp, &cfg_path).unwrap();
        std::fs::remove_file(&pause).unwrap();
        let o = run.wait_with_output().unwrap();
        let out: Value = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
        assert_eq!(o.status.code(), Some(5), "{out}");
        assert_eq!(out["result"], "refused", "{out}");
        assert_eq!(out["reason"], reason, "{out}");
        assert_eq!(windows(&server).len(), 1, "nothing launched");
        assert!(!env.path("launched.argv").exists());
    }
    // Unchanged, the same paused run resumes.
    std::fs::write(&cfg_path, &original).unwrap();
    let run = paused_resume(&env, &pi, "Docs", &pause);
    wait_for(10_000, || pause.exists().then_some(())).expect("the resume pauses");
    std::fs::remove_file(&pause).unwrap();
    let o = run.wait_with_output().unwrap();
    let out: Value = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    assert_eq!(
        (o.status.code(), &out["result"]),
        (Some(0), &json!("resumed")),
        "{out}"
    );
}

/// pi 1.6.0 hides `--session*` from its command line: a pi without a registration whose
/// session folder holds the worker's saved file (beside a newer session, which it would seem to
/// run) could be running the worker's session, and so could one started in the worker's folder.
/// Not knowing refuses (exit 4, saying why); once that pi is gone, the resume may go ahead.
#[test]
fn an_unregistered_pi_that_could_run_the_session_blocks_the_resume() {
    let env = Env::new().with_system_path();
    let file = setup(&env, ID5, "Docs", "docs");
    let server = coordinator(&env);
    let pi = stand_in_pi(&env);
    let sessions = env.path("sessions");
    std::fs::write(
        sessions.join(format!("2026-11-30T09-00-00-000Z_{ID6}.jsonl")),
        json!({"type":"session","version":3,"id":ID6,"timestamp":"2026-11-30T09:00:00.000Z","cwd":"/"})
            .to_string()
            + "\n",
    )
    .unwrap();
    assert!(file.exists());
    let (code, out, _) = resume(&env, &pi, &["Docs", "--confirm-closed", "--dry-run"]);
    assert_eq!(code, 0, "nothing runs it yet: {out}");
    // A pi writing into the folder that holds the saved file, with no registration.
    let dir = sessions.display().to_string();
    let argv = pi_support::pi_pane_argv_with(
        &env.path("pi-bin"),
        &[("PI_CODING_AGENT_SESSION_DIR", &dir)],
        "sleep 600",
    );
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    std::fs::create_dir_all(env.path("elsewhere")).unwrap();
    server.new_session("hidden", &env.path("elsewhere"), &argv);
    // The pane's pi starts a moment after its session (on a loaded machine, a while).
    let (code, out) = wait_for(15_000, || {
        let (code, out, _) = resume(&env, &pi, &["Docs", "--confirm-closed", "--dry-run"]);
        (code != 0).then_some((code, out))
    })
    .unwrap_or((0, json!("the pi in session hidden was never seen")));
    assert_eq!(code, 4, "{out}");
    let why = out["reason"].as_str().unwrap().to_string();
    assert!(why.starts_with("pi: pid"), "{why}");
    assert!(why.contains("cannot be told"), "{why}");
    assert!(
        windows(&server).iter().all(|w| w != "Docs"),
        "nothing launched"
    );
    server.tmux(&["kill-session", "-t", "hidden"]);
    wait_for(10_000, || {
        (resume(&env, &pi, &["Docs", "--confirm-closed", "--dry-run"]).0 == 0).then_some(())
    })
    .expect("once that pi is gone, the checks pass");
    // A pi in the worker's own folder, with no registration: it could be running it too.
    let argv = pi_support::pi_pane_argv(&env.path("pi-bin"), "sleep 600");
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    server.new_session("hidden2", &env.path("root/docs"), &argv);
    let (code, out, _) = resume(&env, &pi, &["Docs", "--confirm-closed", "--dry-run"]);
    assert_eq!(code, 4, "{out}");
}
