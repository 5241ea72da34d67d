//! `intercom-pane restore` on a real tmux server on a private socket: a roster made by `init`,
//! its coordinator registered from its pane, workers started by `spawn` as the pi stand-in of
//! `tests/support/spawn_support` (it records every launch and registers from inside its window).
//! The server is killed (`tmux kill-server`), then `restore` brings the fleet back: the right
//! programs on the right session files with the right flags, the closed worker not started, the
//! cut-off one listed and not prompted; a second run starts nothing; two at once: one runs.
//! Hostile records (a launch spec naming another session's file, a swapped session file,
//! names tmux or a shell would read) are refused or kept as data.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_support::{tmux_cmd, wait_for};
use crate::scan_support;
use crate::spawn_support;

use std::path::{Path, PathBuf};

use scan_support::*;
use serde_json::{json, Value};
use spawn_support::{agent, ended, Team};

/// `restore` with the layout's flags, the stand-in as `--pi`, JSON; (exit, report, stderr).
fn restore(t: &Team, extra: &[&str], vars: &[(&str, &str)]) -> (i32, Value, String) {
    let child = restore_child(t, extra, vars);
    spawn_support::finished(child)
}

fn restore_child(t: &Team, extra: &[&str], vars: &[(&str, &str)]) -> std::process::Child {
    let pi = t.pi.display().to_string();
    let mut all = vec!["--pi", &pi, "--json", "--wait-secs", "20"];
    all.extend_from_slice(extra);
    t.child("restore", &all, vars)
}

/// Spawn `name` (more flags after it); its session id and session file.
fn spawned(t: &Team, args: &[&str]) -> (String, PathBuf) {
    let (code, out, err) = t.spawn(args);
    assert_eq!(code, 0, "{out} {err}");
    let id = out["sessionId"].as_str().unwrap().to_string();
    let file = t
        .env
        .path(&format!("sessions/2026-11-29T23-00-00-000Z_{id}.jsonl"));
    assert!(file.is_file(), "{}", file.display());
    (id, file)
}

/// Append one entry to a session file.
fn append(file: &Path, entry: Value) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new().append(true).open(file).unwrap();
    writeln!(f, "{entry}").unwrap();
}

/// The roster with `f` applied to the entry named `name`.
fn edit_agent(t: &Team, name: &str, f: impl FnOnce(&mut Value)) {
    let mut roster = t.roster();
    let a = roster["agents"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|a| a["name"] == name)
        .unwrap();
    f(a);
    std::fs::write(
        t.root.join(".pi-intercom/config.json"),
        serde_json::to_string_pretty(&roster).unwrap(),
    )
    .unwrap();
}

/// The coordinator's saved session (init makes none; its pi would have).
fn coordinator_session(t: &Team) -> PathBuf {
    settled_session(&t.env, &t.coordinator, &t.root)
}

/// Kill the server and wait until every pi the stand-in launched has ended.
fn kill_server(t: &Team) {
    let pids: Vec<i32> = t
        .launches()
        .iter()
        .map(|l| l["pid"].as_i64().unwrap() as i32)
        .collect();
    t.server.tmux(&["kill-server"]);
    for pid in pids {
        wait_for(10_000, || ended(pid).then_some(())).expect("a pi outlived its server");
    }
    let gone = || {
        let o = tmux_cmd(&t.server.sock)
            .arg("list-sessions")
            .output()
            .unwrap();
        (!o.status.success()).then_some(())
    };
    wait_for(10_000, gone).expect("the server stayed");
    // And every other process that ran in this team's folders (a pi the stand-in did not log
    // yet, a child of one): under load they outlive the server a moment, and a live pi there
    // is rightly taken by restore as one that could be running the session.
    let base = t.env.dir.path().to_path_buf();
    let me = std::process::id() as i32;
    let lingering = || {
        let left: Vec<i32> = std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
            .filter(|pid| *pid != me && !ended(*pid))
            .filter(|pid| {
                std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|c| c.starts_with(&base))
            })
            .collect();
        left.is_empty().then_some(())
    };
    wait_for(10_000, lingering).expect("a process of the team outlived its server");
}

/// The line of the agent named `name`.
fn line<'a>(out: &'a Value, name: &str) -> &'a Value {
    out["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == name)
        .unwrap_or_else(|| panic!("no line for {name}: {out}"))
}

/// The launches recorded since the first `skip`, by session id.
fn launched_since(t: &Team, skip: usize) -> Vec<Value> {
    t.launches().into_iter().skip(skip).collect()
}

/// `/proc/<pid>/cmdline` as words.
fn cmdline(pid: i64) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .unwrap()
        .split(|b| *b == 0)
        .filter(|w| !w.is_empty())
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .collect()
}

#[test]
fn after_kill_server_the_fleet_comes_back_on_its_own_sessions_and_a_second_run_starts_nothing() {
    let t = Team::new();
    let coord_file = coordinator_session(&t);
    let (docs, docs_file) = spawned(&t, &["Docs"]);
    let (build, build_file) = spawned(&t, &["Build", "--model", "fake/m", "--thinking", "low"]);
    let (_, _) = spawned(&t, &["Closed"]);
    let (cut, cut_file) = spawned(&t, &["Cut"]);
    // Cut's last turn never ended: a tool call without its result.
    append(
        &cut_file,
        json!({"type":"message","id":"m1","parentId":null,"timestamp":"2026-11-29T23:00:01.000Z",
               "message":{"role":"user","content":"Run the long build."}}),
    );
    append(
        &cut_file,
        json!({"type":"message","id":"m2","parentId":"m1","timestamp":"2026-11-29T23:00:02.000Z",
               "message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"make"}}],
                          "provider":"p","model":"m","stopReason":"toolUse"}}),
    );
    // Closed was closed by the person (close-worker's record in the roster).
    edit_agent(&t, "Closed", |a| {
        a["closeJob"] = json!({"jobId": "j1", "state": "closed", "createdAt": "2026-11-29T23:00:00.000Z",
            "updatedAt": "2026-11-29T23:01:00.000Z", "deadlineAt": "2026-11-29T23:02:00.000Z"});
    });
    kill_server(&t);
    let before = t.launches().len();

    // A dry run says what it would do and starts nothing.
    let (code, out, err) = restore(&t, &["--dry-run"], &[]);
    assert_eq!(code, 0, "{out} {err}");
    assert_eq!(out["dryRun"], true);
    assert!(out["reason"].is_null(), "{out}");
    assert_eq!(line(&out, "Docs")["outcome"], "would_restore", "{out}");
    assert_eq!(line(&out, "Closed")["outcome"], "closed", "{out}");
    assert_eq!(t.launches().len(), before);
    assert!(
        !tmux_cmd(&t.server.sock)
            .arg("list-sessions")
            .output()
            .unwrap()
            .status
            .success(),
        "a dry run started a server"
    );

    let (code, out, err) = restore(&t, &[], &[]);
    assert_eq!(code, 0, "{out} {err}");
    // The coordinator first, then the roster's order.
    let names: Vec<&str> = out["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["Coordinator", "Docs", "Build", "Closed", "Cut"],
        "{out}"
    );
    for n in ["Coordinator", "Docs", "Build", "Cut"] {
        assert_eq!(line(&out, n)["outcome"], "restored", "{n}: {out}");
        assert!(line(&out, n)["registeredPid"].is_i64(), "{out}");
    }
    assert_eq!(line(&out, "Closed")["outcome"], "closed");
    let coord_pid = line(&out, "Coordinator")["registeredPid"].as_i64().unwrap();
    assert_eq!(line(&out, "Cut")["cutOff"], true);
    assert_eq!(line(&out, "Docs")["cutOff"], false);
    assert!(
        line(&out, "Cut")["reason"]
            .as_str()
            .unwrap()
            .contains("not prompted"),
        "{out}"
    );

    // The right programs on the right files with the right flags, each in its folder.
    let l = launched_since(&t, before);
    assert_eq!(l.len(), 4, "{l:?}");
    let by = |id: &str| l.iter().find(|x| x["sid"] == id).unwrap().clone();
    let s = |p: &Path| p.display().to_string();
    assert_eq!(
        by(&t.coordinator)["argv"],
        json!(["--session", s(&coord_file)])
    );
    assert_eq!(by(&docs)["argv"], json!(["--session", s(&docs_file)]));
    assert_eq!(
        by(&build)["argv"],
        json!([
            "--session",
            s(&build_file),
            "--model",
            "fake/m",
            "--thinking",
            "low"
        ])
    );
    assert_eq!(by(&cut)["argv"], json!(["--session", s(&cut_file)]));
    for x in &l {
        assert_eq!(x["cwd"], s(&t.root), "{x}");
        assert_eq!(x["env"]["INTERCOM_PANE_CONFIG"], t.env.system_config());
        // What runs is what was recorded: its command line, as /proc shows it.
        let words = cmdline(x["pid"].as_i64().unwrap());
        let argv: Vec<String> = serde_json::from_value(x["argv"].clone()).unwrap();
        assert!(words.ends_with(&argv), "{words:?} {argv:?}");
    }
    // The coordinator in a session of its own on its old socket; the workers beside it, as
    // spawn places them; the closed one nowhere.
    let windows = t.server.tmux(&[
        "list-windows",
        "-a",
        "-F",
        "#{session_name}\t#{window_name}\t#{pane_start_command}",
    ]);
    let rows: Vec<Vec<&str>> = windows.lines().map(|l| l.split('\t').collect()).collect();
    assert!(rows.iter().all(|r| r[0] == "Coordinator"), "{windows}");
    let wnames: Vec<&str> = rows.iter().skip(1).map(|r| r[1]).collect();
    assert_eq!(wnames, ["Docs", "Build", "Cut"], "{windows}");
    assert!(
        rows.iter()
            .any(|r| r[2].contains(&s(&build_file)) && r[2].contains("fake/m")),
        "{windows}"
    );
    // Cut was not prompted.
    assert!(t.texts().is_empty(), "{:?}", t.texts());
    // The launch records say what each was started with now.
    let specs = t.specs();
    let coord_spec = specs
        .iter()
        .find(|s| s["sessionId"] == t.coordinator.as_str())
        .expect("no launch record for the coordinator");
    assert_eq!(coord_spec["stage"], "registered");
    assert_eq!(coord_spec["program"], s(&t.pi));
    assert_eq!(coord_spec["placement"]["socket"], s(&t.server.sock));

    // A second run starts nothing.
    let (code, out, err) = restore(&t, &[], &[]);
    assert_eq!(code, 0, "{out} {err}");
    assert_eq!(out["startedNothing"], true, "{out}");
    for n in ["Coordinator", "Docs", "Build", "Cut"] {
        assert_eq!(line(&out, n)["outcome"], "already_running", "{n}: {out}");
    }
    assert_eq!(launched_since(&t, before).len(), 4);
    assert_eq!(
        t.server
            .tmux(&["list-windows", "-a", "-F", "#{window_name}"])
            .lines()
            .count(),
        4
    );

    // The coordinator's pane is kept as `init --start --detach` keeps it: when its pi ends, the
    // pane stays, dead, and `respawn-pane` (the README's line) starts the same command there.
    let first = "=Coordinator:{start}.{bottom}";
    let pane = |f: &str| t.server.tmux(&["display-message", "-p", "-t", first, f]);
    assert_eq!(pane("#{remain-on-exit}").trim(), "on");
    unsafe { libc::kill(coord_pid as i32, libc::SIGTERM) };
    wait_for(10_000, || {
        (pane("#{pane_dead}").trim() == "1").then_some(())
    })
    .unwrap_or_else(|| {
        panic!(
            "the coordinator's pane did not stay: {}",
            pane("#{pane_id}")
        )
    });
    let started = t.launches().len();
    t.server.tmux(&["respawn-pane", "-t", first]);
    let again = wait_for(10_000, || t.launches().get(started).cloned())
        .expect("respawn-pane started nothing");
    assert_eq!(again["sid"], t.coordinator.as_str(), "{again}");
    assert_eq!(again["argv"], json!(["--session", s(&coord_file)]));
}

#[test]
fn two_restores_at_once_one_runs_and_the_other_says_so() {
    let t = Team::new();
    coordinator_session(&t);
    spawned(&t, &["Docs"]);
    kill_server(&t);
    let before = t.launches().len();
    let pause = t.env.path("paused");
    let p = pause.display().to_string();
    let first = restore_child(&t, &[], &[("INTERCOM_PANE_TEST_PAUSE_IN_RESTORE", &p)]);
    wait_for(10_000, || pause.exists().then_some(())).expect("the first restore never paused");
    let (code, out, err) = restore(&t, &[], &[]);
    assert_eq!(code, 5, "{out} {err}");
    assert!(
        out["reason"].as_str().unwrap().contains("another restore"),
        "{out}"
    );
    assert_eq!(t.launches().len(), before);
    std::fs::remove_file(&pause).unwrap();
    let (code, out, err) = spawn_support::finished(first);
    assert_eq!(code, 0, "{out} {err}");
    assert_eq!(line(&out, "Docs")["outcome"], "restored", "{out}");
    assert_eq!(t.launches().len(), before + 2);
}

#[test]
fn hostile_records_are_refused_and_names_stay_data() {
    let t = Team::new();
    coordinator_session(&t);
    let (w1, _w1_file) = spawned(&t, &["W1"]);
    let (_w2, w2_file) = spawned(&t, &["W2"]);
    let (_w3, w3_file) = spawned(&t, &["W3"]);
    let shell = "$(touch pwned)";
    let hash = "#(touch pwned2)";
    spawned(&t, &[shell]);
    spawned(&t, &[hash]);
    kill_server(&t);
    // W1's launch record edited to run W2's session file.
    let spec_path = std::fs::read_dir(t.root.join(".pi-intercom/workers"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            let v: Value = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
            v["sessionId"] == w1.as_str()
        })
        .unwrap();
    let mut spec: Value = serde_json::from_slice(&std::fs::read(&spec_path).unwrap()).unwrap();
    spec["args"]
        .as_array_mut()
        .unwrap()
        .extend([json!("--session"), json!(w2_file.display().to_string())]);
    std::fs::write(&spec_path, serde_json::to_vec(&spec).unwrap()).unwrap();
    // W3's session file swapped for W2's (its header names W2's session).
    std::fs::copy(&w2_file, &w3_file).unwrap();
    // Names a shell or tmux would read, added by hand, each with its own saved session.
    let write = |roster: &Value| {
        std::fs::write(
            t.root.join(".pi-intercom/config.json"),
            serde_json::to_string_pretty(roster).unwrap(),
        )
        .unwrap()
    };
    let before = t.launches().len();
    let mut roster = t.roster();
    for (i, name) in ["-x", "a\nb"].iter().enumerate() {
        let id = format!("01a2f000-0000-7000-8000-0000000099{i:02}");
        settled_session(&t.env, &id, &t.root);
        roster["agents"].as_array_mut().unwrap().push(json!({
            "sessionId": id, "name": name, "coordinator": false, "description": "d",
            "port": 1, "projectDirectory": "."}));
    }
    // A newline in a name: the roster is refused as a whole, nothing starts.
    write(&roster);
    let (code, out, _) = restore(&t, &[], &[]);
    assert_eq!(code, 2, "{out}");
    assert!(out["reason"].as_str().unwrap().contains("name"), "{out}");
    assert_eq!(t.launches().len(), before);
    roster["agents"].as_array_mut().unwrap().pop();
    write(&roster);

    let (code, out, err) = restore(&t, &[], &[]);
    assert_eq!(code, 3, "{out} {err}");
    let w1_line = line(&out, "W1");
    assert_eq!(w1_line["outcome"], "cannot", "{out}");
    assert!(
        w1_line["reason"]
            .as_str()
            .unwrap()
            .contains("another session"),
        "{out}"
    );
    let w3_line = line(&out, "W3");
    assert_eq!(w3_line["outcome"], "cannot", "{out}");
    // The board does not take a file whose header names another session as W3's: no file.
    let why = w3_line["reason"].as_str().unwrap();
    assert!(
        why.contains("header names another session") || why.contains("no saved session file"),
        "{out}"
    );
    // W2 comes back on its own file, once; nothing runs W1's or W3's session.
    assert_eq!(line(&out, "W2")["outcome"], "restored", "{out}");
    let l = launched_since(&t, before);
    let on_w2 = l
        .iter()
        .filter(|x| {
            x["argv"]
                .to_string()
                .contains(&w2_file.display().to_string())
        })
        .count();
    assert_eq!(on_w2, 1, "{l:?}");
    assert!(
        !l.iter().any(|x| x["argv"]
            .to_string()
            .contains(&w3_file.display().to_string())),
        "{l:?}"
    );
    // The shell-looking name is a window name, nothing ran it.
    assert_eq!(line(&out, shell)["outcome"], "restored", "{out}");
    assert!(!t.env.path("pwned").exists() && !t.root.join("pwned").exists());
    let windows = t
        .server
        .tmux(&["list-windows", "-a", "-F", "#{window_name}"]);
    assert!(windows.lines().any(|w| w == shell), "{windows}");
    // A leading `-` is a name, not a flag; a newline cannot be a window name exactly.
    let dash = line(&out, "-x");
    assert_eq!(dash["outcome"], "restored", "{out}");
    assert!(windows.lines().any(|w| w == "-x"), "{windows}");
    assert_eq!(line(&out, hash)["outcome"], "restored", "{out}");
    assert!(windows.lines().any(|w| w == hash), "{windows}");
    assert!(!t.env.path("pwned2").exists() && !t.root.join("pwned2").exists());
    assert_eq!(l.len(), 5, "{l:?}"); // the coordinator, W2, both shell names, -x
    let _ = agent(&t.roster(), "W1").unwrap();
}

const PLUGIN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/linux/tmux/intercom-pane.tmux");

#[test]
fn the_plugin_option_restores_the_roster_when_the_tmux_server_starts() {
    let t = Team::new();
    let coord_file = coordinator_session(&t);
    let (docs, docs_file) = spawned(&t, &["Docs"]);
    kill_server(&t);
    let before = t.launches().len();
    // The program the plugin runs: intercom-pane with the test layout's flags after its own.
    let wrapper = t.env.path("ip-wrapper");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nexec '{}' \"$@\" --config '{}' --sessions-dir '{}' --fleet none --pi '{}' --json\n",
            env!("CARGO_BIN_EXE_intercom-pane"),
            t.env.system_config(),
            t.env.path("sessions").display(),
            t.pi.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let conf = t.env.path("tmux.conf");
    std::fs::write(
        &conf,
        format!(
            "set -g @intercom-pane-restore on\nset -g @intercom-pane-restore-root '{}'\nset -g @intercom-pane-bin '{}'\nrun-shell '{PLUGIN}'\n",
            t.root.display(),
            wrapper.display()
        ),
    )
    .unwrap();
    // A new server, as after a reboot: the person's first session, the config loaded.
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("sock");
    let o = tmux_cmd(&sock)
        .args([
            "-f",
            conf.to_str().unwrap(),
            "new-session",
            "-d",
            "-s",
            "first",
            "sleep 600",
        ])
        .env("HOME", t.env.path("home"))
        .env("XDG_STATE_HOME", t.env.path("state"))
        .env("PATH", &t.env.path_env)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let server = crate::mux_support::TmuxServer::adopt(&sock);
    wait_for(30_000, || (t.launches().len() >= before + 2).then_some(()))
        .unwrap_or_else(|| panic!("nothing restored: {:?}", t.launches()));
    let l = launched_since(&t, before);
    let s = |p: &Path| p.display().to_string();
    let by = |id: &str| l.iter().find(|x| x["sid"] == id).unwrap().clone();
    assert_eq!(
        by(&t.coordinator)["argv"],
        json!(["--session", s(&coord_file)])
    );
    assert_eq!(by(&docs)["argv"], json!(["--session", s(&docs_file)]));
    // On this new server: the coordinator's session, the worker's window in it.
    let windows = server.tmux(&[
        "list-windows",
        "-a",
        "-F",
        "#{session_name}\t#{window_name}",
    ]);
    assert!(
        windows.lines().any(|w| w == "Coordinator\tDocs"),
        "{windows}"
    );
    // It says how it ended (and a person attached sees it in the message line).
    wait_for(20_000, || {
        let o = tmux_cmd(&sock)
            .args(["show-option", "-gqv", "@intercom-pane-restore-exit"])
            .output()
            .unwrap();
        (String::from_utf8_lossy(&o.stdout).trim() == "0").then_some(())
    })
    .expect("the plugin never said how restore ended");
    drop(server);
}

#[test]
fn continue_prompts_only_the_cut_off_and_only_and_include_closed_pick_the_agents() {
    let t = Team::new();
    coordinator_session(&t);
    let (cut, cut_file) = spawned(&t, &["Cut"]);
    let (settled, _) = spawned(&t, &["Settled"]);
    let (closed, _) = spawned(&t, &["Closed"]);
    // Cut: the person's message never got an answer.
    append(
        &cut_file,
        json!({"type":"message","id":"m1","parentId":null,"timestamp":"2026-11-29T23:00:01.000Z",
               "message":{"role":"user","content":"Fix the build."}}),
    );
    edit_agent(&t, "Closed", |a| {
        a["closeJob"] = json!({"jobId": "j2", "state": "closed", "createdAt": "2026-11-29T23:00:00.000Z",
            "updatedAt": "2026-11-29T23:01:00.000Z", "deadlineAt": "2026-11-29T23:02:00.000Z"});
    });
    kill_server(&t);
    let before = t.launches().len();
    // An unknown name is refused before anything.
    let (code, out, _) = restore(&t, &["--only", "Nobody"], &[]);
    assert_eq!(code, 2, "{out}");
    assert_eq!(t.launches().len(), before);
    // Only the coordinator and Cut, with --continue: Cut alone gets "continue".
    let (code, out, err) = restore(&t, &["--only", "coordinator", "cut", "--continue"], &[]);
    assert_eq!(code, 0, "{out} {err}");
    let names: Vec<&str> = out["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Coordinator", "Cut"], "{out}");
    assert_eq!(line(&out, "Cut")["continued"]["delivered"], true, "{out}");
    assert!(line(&out, "Coordinator")["continued"].is_null(), "{out}");
    let texts = t.texts();
    assert_eq!(texts.len(), 1, "{texts:?}");
    assert_eq!(texts[0]["sid"], cut.as_str());
    assert_eq!(texts[0]["text"], "continue");
    // The rest, the closed one too when asked; nobody else is prompted.
    let (code, out, err) = restore(&t, &["--include-closed"], &[]);
    assert_eq!(code, 0, "{out} {err}");
    assert_eq!(line(&out, "Cut")["outcome"], "already_running", "{out}");
    assert_eq!(line(&out, "Settled")["outcome"], "restored", "{out}");
    assert_eq!(line(&out, "Closed")["outcome"], "restored", "{out}");
    let sids: Vec<Value> = launched_since(&t, before)
        .iter()
        .map(|l| l["sid"].clone())
        .collect();
    assert_eq!(sids.len(), 4, "{sids:?}");
    assert!(sids.contains(&json!(settled)) && sids.contains(&json!(closed)));
    assert_eq!(t.texts().len(), 1);
}

#[test]
fn a_pi_started_by_hand_gets_its_launch_record_from_its_live_registration() {
    let t = Team::new();
    coordinator_session(&t);
    let spec_of = |t: &Team| {
        t.specs()
            .into_iter()
            .find(|s| s["sessionId"] == t.coordinator.as_str())
    };
    // A dry run writes nothing.
    let (code, out, err) = restore(&t, &["--dry-run"], &[]);
    assert_eq!(code, 0, "{out} {err}");
    assert_eq!(
        line(&out, "Coordinator")["outcome"],
        "already_running",
        "{out}"
    );
    assert!(spec_of(&t).is_none());
    // A run sees it running, starts nothing, and records what its registration tells.
    let (code, out, err) = restore(&t, &[], &[]);
    assert_eq!(code, 0, "{out} {err}");
    assert_eq!(out["startedNothing"], true, "{out}");
    let spec = spec_of(&t).expect("no launch record for the hand-started coordinator");
    assert_eq!(spec["args"], json!(["--session-id", t.coordinator]));
    assert_eq!(spec["cwd"], t.root.display().to_string());
    assert_eq!(spec["stage"], "registered");
    assert_eq!(
        spec["placement"]["socket"],
        t.server.sock.display().to_string()
    );
    assert!(spec["program"].is_null(), "{spec}");
    let names: Vec<&str> = spec["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p[0].as_str().unwrap())
        .collect();
    assert!(names.contains(&"PATH"), "{spec}");
    assert!(
        names.iter().all(|n| [
            "PATH",
            "PI_CODING_AGENT_DIR",
            "PI_CODING_AGENT_SESSION_DIR",
            "PI_OFFLINE",
            "INTERCOM_PANE_CONFIG"
        ]
        .contains(n)),
        "{spec}"
    );
    // In words: one line per agent, then what happened.
    let pi = t.pi.display().to_string();
    let o = t
        .env
        .run(&layout_args(&t.env, &["restore"], &["--pi", &pi]));
    assert_eq!(o.status.code(), Some(0));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.starts_with("already_running: Coordinator (coordinator)\n  reason: pid ")
            && text.ends_with("nothing was started\n"),
        "{text}"
    );
    // After the server died, it comes back from that record.
    kill_server(&t);
    let (code, out, err) = restore(&t, &[], &[]);
    assert_eq!(code, 0, "{out} {err}");
    assert_eq!(line(&out, "Coordinator")["outcome"], "restored", "{out}");
}

/// A session of the person's already named like the coordinator: restore opens `Coordinator-2`
/// and keeps only its own pane; the person's pane keeps its options (the `set-option` rides in
/// the `new-session`'s own command, which tmux skips when that `new-session` is refused).
#[test]
fn a_kept_pane_is_only_the_one_restore_opened() {
    let t = Team::new();
    coordinator_session(&t);
    kill_server(&t);
    let mine = tmux_cmd(&t.server.sock)
        .args(["-f", "/dev/null", "new-session", "-d", "-s", "Coordinator"])
        .args(["-P", "-F", "#{pane_id}", "--", "sleep", "600"])
        .output()
        .unwrap();
    assert!(mine.status.success(), "{mine:?}");
    let mine = String::from_utf8_lossy(&mine.stdout).trim().to_string();
    let (code, out, err) = restore(&t, &[], &[]);
    assert_eq!(code, 0, "{out} {err}");
    assert_eq!(line(&out, "Coordinator")["outcome"], "restored", "{out}");
    let kept = |target: &str| {
        t.server
            .tmux(&["display-message", "-p", "-t", target, "#{remain-on-exit}"])
            .trim()
            .to_string()
    };
    assert_eq!(kept(&mine), "off", "the person's pane was changed");
    assert_eq!(kept("=Coordinator-2:"), "on", "{out}");
    let theirs = line(&out, "Coordinator")["pane"]
        .as_str()
        .unwrap()
        .to_string();
    assert_ne!(theirs, mine);
    assert_eq!(kept(&theirs), "on");
}

#[test]
fn a_retired_worker_is_listed_as_retired_and_never_started() {
    let t = Team::new();
    coordinator_session(&t);
    spawned(&t, &["Old"]);
    kill_server(&t);
    let o = t
        .env
        .run(&layout_args(&t.env, &["retire"], &["Old", "--json"]));
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let before = t.launches().len();
    let (code, out, err) = restore(&t, &["--only", "Old"], &[]);
    assert_eq!(code, 0, "{out} {err}");
    assert_eq!(line(&out, "Old")["outcome"], "retired", "{out}");
    assert_eq!(out["agents"].as_array().unwrap().len(), 1, "{out}");
    assert_eq!(t.launches().len(), before);
}

/// The data root's launch records, by file.
fn data_records(t: &Team) -> Vec<(PathBuf, Value)> {
    let dir = t.env.path("data/launches");
    let mut out: Vec<(PathBuf, Value)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| {
            let v = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
            (p, v)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn a_coordinator_started_the_readme_way_comes_back_with_its_flags_from_its_registration() {
    // The extension passes pi's own arguments and model when the session starts: here a model,
    // a thinking level, a first message and a session flag, which must not come back.
    let t = Team::with_register_args(
        r#"--pi-args '["--model","fake/m","--thinking","high","fix the bug","-c"]' --model=fake/m"#,
    );
    let file = coordinator_session(&t);
    // Written right after the registration, by the same command.
    wait_for(10_000, || (!data_records(&t).is_empty()).then_some(()))
        .expect("no launch record in the data root");
    let recs = data_records(&t);
    assert_eq!(recs.len(), 1, "{recs:?}");
    let rec = &recs[0].1;
    assert_eq!(rec["sessionId"], t.coordinator.as_str());
    assert_eq!(rec["name"], "Coordinator");
    assert_eq!(
        rec["args"],
        json!([
            "--session-id",
            t.coordinator,
            "--model",
            "fake/m",
            "--thinking",
            "high"
        ])
    );
    assert_eq!(rec["model"], "fake/m");
    assert_eq!(rec["cwd"], t.root.display().to_string());
    assert!(
        t.specs().is_empty(),
        "no command launched it: nothing in the project"
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&recs[0].0).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);

    kill_server(&t);
    let before = t.launches().len();
    let (code, out, err) = restore(&t, &[], &[]);
    assert_eq!(code, 0, "{out} {err}");
    assert_eq!(line(&out, "Coordinator")["outcome"], "restored", "{out}");
    let l = launched_since(&t, before);
    assert_eq!(l.len(), 1, "{l:?}");
    assert_eq!(
        l[0]["argv"],
        json!([
            "--session",
            file.display().to_string(),
            "--model",
            "fake/m",
            "--thinking",
            "high"
        ])
    );
    assert_eq!(l[0]["cwd"], t.root.display().to_string());
    // The start is recorded in the project and its copy in the data root, and they agree.
    let spec = t
        .specs()
        .into_iter()
        .find(|s| s["sessionId"] == t.coordinator.as_str())
        .expect("restore recorded the start");
    assert_eq!(spec["args"], rec["args"]);
    assert_eq!(data_records(&t)[0].1["args"], rec["args"]);

    // Hostile: the project's spec edited (another model) no longer agrees with the data root's
    // copy: refused, nothing started.
    kill_server(&t);
    let spec_path = std::fs::read_dir(t.root.join(".pi-intercom/workers"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "json"))
        .unwrap();
    let mut edited = spec.clone();
    edited["args"][3] = json!("evil/model");
    std::fs::write(&spec_path, serde_json::to_vec(&edited).unwrap()).unwrap();
    let before = t.launches().len();
    let (code, out, err) = restore(&t, &[], &[]);
    assert_ne!(code, 0, "{out} {err}");
    let c = line(&out, "Coordinator");
    assert_eq!(c["outcome"], "cannot", "{out}");
    assert!(c["reason"].as_str().unwrap().contains("data root"), "{out}");
    // The data root's copy edited to bind another session: refused the same way.
    std::fs::write(&spec_path, serde_json::to_vec(&spec).unwrap()).unwrap();
    let (copy_path, mut copy) = data_records(&t).remove(0);
    copy["args"] = json!(["--session-id", "another-session", "--model", "fake/m"]);
    std::fs::write(&copy_path, serde_json::to_vec(&copy).unwrap()).unwrap();
    let (code, out, err) = restore(&t, &[], &[]);
    assert_ne!(code, 0, "{out} {err}");
    assert_eq!(line(&out, "Coordinator")["outcome"], "cannot", "{out}");
    assert_eq!(t.launches().len(), before, "nothing was started");
}

#[test]
fn a_flag_value_from_a_registration_stays_one_word_when_restored() {
    // What a shell or tmux would read, as the value of a kept flag: passed on as one argument.
    let value = "$(touch pwned) #(touch pwned2) #{session_name};x";
    let t = Team::with_register_args(&format!(r#"--pi-args '["--model","{value}","-e","-x"]'"#));
    let file = coordinator_session(&t);
    wait_for(10_000, || (!data_records(&t).is_empty()).then_some(()))
        .expect("no launch record in the data root");
    assert_eq!(
        data_records(&t)[0].1["args"],
        json!(["--session-id", t.coordinator, "--model", value, "-e", "-x"])
    );
    kill_server(&t);
    let before = t.launches().len();
    let (code, out, err) = restore(&t, &[], &[]);
    assert_eq!(code, 0, "{out} {err}");
    let l = launched_since(&t, before);
    assert_eq!(
        l[0]["argv"],
        json!([
            "--session",
            file.display().to_string(),
            "--model",
            value,
            "-e",
            "-x"
        ])
    );
    for f in ["pwned", "pwned2"] {
        assert!(!t.env.dir.path().join(f).exists() && !t.root.join(f).exists());
    }
}
