//! `intercom-pane ensure-monitor` on a real tmux server: placed above the coordinator without
//! focus, owned (record + marker), kept on the next run, fenced after a half launch; a pane that
//! is only titled like a monitor is neither taken for ours nor in the way.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_support;
use crate::scan_support;

use std::path::Path;

use mux_support::{wait_for, TmuxServer};
use scan_support::*;
use serde_json::{json, Value};

const COORD: &str = "01a2f000-0000-7000-8000-00000000c0de";

fn roster(env: &Env, workers: bool) {
    let root = env.path("root");
    std::fs::create_dir_all(root.join(".pi-intercom")).unwrap();
    let mut agents = vec![
        json!({"sessionId": COORD, "name": "Coordinator", "coordinator": true,
        "description": "C.", "port": 1, "projectDirectory": "."}),
    ];
    if workers {
        agents.push(
            json!({"sessionId": "w-1", "name": "Worker", "coordinator": false,
            "description": "W.", "port": 2, "projectDirectory": "."}),
        );
    }
    std::fs::write(
        root.join(".pi-intercom/config.json"),
        json!({"version": 1, "agents": agents}).to_string(),
    )
    .unwrap();
}

/// Run ensure-monitor inside the coordinator's pane (so ancestry finds it); (exit code, output).
fn ensure_in_pane(env: &Env, server: &TmuxServer, extra: &str) -> (i32, String) {
    ensure_in_pane_with(env, server, "", extra)
}

/// The same with `vars` (`NAME=value …`) in its environment.
fn ensure_in_pane_with(env: &Env, server: &TmuxServer, vars: &str, extra: &str) -> (i32, String) {
    let rc = env.path("rc");
    let out = env.path("out");
    let _ = std::fs::remove_file(&rc);
    let cmd = format!(
        "{vars} {} ensure-monitor --root {} --config {} {extra} > {} 2>&1; echo $? > {}",
        env!("CARGO_BIN_EXE_intercom-pane"),
        env.path("root").display(),
        env.system_config(),
        out.display(),
        rc.display()
    );
    server.tmux(&["send-keys", "-t", "=coord:", &cmd, "Enter"]);
    finished(env)
}

/// (exit code, output) of an ensure-monitor run in a pane that writes them to `rc` and `out`.
pub(crate) fn finished(env: &Env) -> (i32, String) {
    let code = wait_for(15_000, || {
        std::fs::read_to_string(env.path("rc"))
            .ok()?
            .trim()
            .parse::<i32>()
            .ok()
    })
    .expect("ensure-monitor finished");
    (
        code,
        std::fs::read_to_string(env.path("out")).unwrap_or_default(),
    )
}

/// (pane id, top, active, title, marker, command) for every pane of the coordinator's window.
fn panes(server: &TmuxServer) -> Vec<(String, u32, bool, String, String, String)> {
    server
        .tmux(&[
            "list-panes", "-t", "=coord:", "-F",
            "#{pane_id}\t#{pane_top}\t#{pane_active}\t#{pane_title}\t#{@intercom-pane-owner}\t#{pane_current_command}",
        ])
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (
                f[0].to_string(),
                f[1].parse().unwrap(),
                f[2] == "1",
                f[3].to_string(),
                f[4].to_string(),
                f[5].to_string(),
            )
        })
        .collect()
}

fn record(env: &Env) -> Value {
    let dir = env.path("root/.pi-intercom");
    let p = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            let n = p.file_name().unwrap().to_string_lossy().into_owned();
            n.starts_with("monitor-") && n.ends_with(".json")
        })
        .expect("ownership record");
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

fn start(env: &Env) -> TmuxServer {
    let s = TmuxServer::start("coord", &env.path("root"), &[]);
    s.tmux(&["resize-window", "-t", "=coord:", "-x", "120", "-y", "40"]);
    std::thread::sleep(std::time::Duration::from_millis(300));
    s
}

#[test]
fn places_keeps_and_replaces_an_owned_monitor() {
    let env = Env::new().with_system_path();
    roster(&env, true);
    let server = start(&env);
    let coord_pane = panes(&server)[0].0.clone();

    let (code, out) = ensure_in_pane(&env, &server, "");
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("created: monitor in %"), "{out}");
    let p = panes(&server);
    assert_eq!(p.len(), 2);
    let monitor = p.iter().find(|x| x.0 != coord_pane).unwrap().clone();
    let coord = p.iter().find(|x| x.0 == coord_pane).unwrap().clone();
    assert!(monitor.1 < coord.1, "monitor above the coordinator");
    assert!(coord.2 && !monitor.2, "focus stays on the coordinator");
    assert_eq!(monitor.3, "Intercom monitor");
    assert!(monitor.4.starts_with("intercom-pane:"));
    let rec = record(&env);
    assert_eq!(rec["stage"], "submitted");
    assert_eq!(rec["pane"], monitor.0);
    assert_eq!(rec["caller"], coord_pane);
    assert_eq!(rec["sessionId"], COORD);
    assert_eq!(rec["marker"], monitor.4);
    wait_for(10_000, || {
        let c = &panes(&server).iter().find(|x| x.0 == monitor.0)?.5.clone();
        (c == "intercom-pane").then_some(())
    })
    .expect("the monitor runs in the new pane");

    // Second run: the owned pane is kept, nothing new is created.
    let (code, out) = ensure_in_pane(&env, &server, "");
    assert_eq!(code, 0);
    assert_eq!(
        out.trim(),
        format!("kept: the monitor already runs in {}", monitor.0)
    );
    assert_eq!(panes(&server).len(), 2);

    // The monitor pane is gone: a new one replaces it.
    server.tmux(&["kill-pane", "-t", &monitor.0]);
    let (code, out) = ensure_in_pane(&env, &server, "");
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("created:"));
    assert_eq!(panes(&server).len(), 2);
    assert_ne!(record(&env)["pane"], monitor.0);
}

#[test]
fn a_half_launch_is_fenced_until_recovered() {
    let env = Env::new().with_system_path();
    roster(&env, true);
    let server = start(&env);
    let path = intercom_pane::seam::actions::monitor_pane::record_path(&env.path("root"), COORD);
    std::fs::write(
        &path,
        json!({"version": 1, "sessionId": COORD, "caller": "%0", "stage": "split_pending"})
            .to_string(),
    )
    .unwrap();
    let (code, out) = ensure_in_pane(&env, &server, "");
    assert_eq!(code, 5, "{out}");
    assert!(out.contains("split_pending"), "{out}");
    assert_eq!(panes(&server).len(), 1, "nothing repeated");
    let (code, out) = ensure_in_pane(&env, &server, "--recover");
    assert_eq!(code, 0, "{out}");
    assert_eq!(panes(&server).len(), 2);
}

/// A resumed worker opens in a window of the coordinator's session; its bash tool can title its
/// pane `Intercom monitor` (an escape sequence, no tmux command needed). The sidebar is placed
/// anyway, kept on the next run, and the look-alike is left exactly as it was.
#[test]
fn a_pane_titled_like_a_monitor_neither_blocks_the_sidebar_nor_is_taken_for_it() {
    let env = Env::new().with_system_path();
    roster(&env, true);
    let server = start(&env);
    // The worker's window, its process titling its own pane, then waiting.
    server.tmux(&[
        "new-window",
        "-d",
        "-t",
        "=coord:",
        "-n",
        "worker",
        "printf '\\033]2;Intercom monitor\\033\\\\'; exec sleep 600",
    ]);
    // And one in the coordinator's own window, titled by tmux.
    server.tmux(&["split-window", "-d", "-t", "=coord:0"]);
    let beside = panes(&server).into_iter().find(|p| !p.2).unwrap().0;
    server.tmux(&["select-pane", "-t", &beside, "-T", "Intercom monitor"]);
    let titled = |server: &TmuxServer| -> Vec<String> {
        server
            .tmux(&[
                "list-panes",
                "-s",
                "-t",
                "=coord:",
                "-F",
                "#{pane_id}\t#{pane_title}\t#{@intercom-pane-owner}",
            ])
            .lines()
            .filter(|l| l.contains("\tIntercom monitor\t"))
            .map(str::to_string)
            .collect()
    };
    wait_for(5_000, || (titled(&server).len() == 2).then_some(()))
        .unwrap_or_else(|| panic!("look-alikes: {:?}", titled(&server)));
    let (code, out) = ensure_in_pane(&env, &server, "");
    assert_eq!(code, 0, "{out}");
    let rec = record(&env);
    let ours = rec["pane"].as_str().unwrap().to_string();
    assert!(ours != beside, "{out}");
    let now = titled(&server);
    assert_eq!(now.len(), 3, "{now:?}");
    assert!(
        now.iter()
            .any(|l| l.starts_with(&format!("{ours}\t"))
                && l.ends_with(rec["marker"].as_str().unwrap())),
        "ours is marked: {now:?}"
    );
    // The look-alikes carry no marker and still run what they ran.
    assert_eq!(
        now.iter().filter(|l| l.ends_with('\t')).count(),
        2,
        "{now:?}"
    );
    // The next run keeps ours and creates nothing.
    let (code, out) = ensure_in_pane(&env, &server, "");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("kept") || out.contains(&ours), "{out}");
    assert_eq!(titled(&server).len(), 3);
    assert_eq!(record(&env)["pane"], ours.as_str());
}

#[test]
fn skips_without_workers_or_for_a_worker_and_refuses_outside_a_pane() {
    let env = Env::new().with_system_path();
    roster(&env, false);
    let server = start(&env);
    let (code, out) = ensure_in_pane(&env, &server, "");
    assert_eq!((code, out.trim()), (0, "skipped: the roster has no worker"));
    roster(&env, true);
    let (code, out) = ensure_in_pane(&env, &server, "--session-id w-1");
    assert_eq!(
        (code, out.trim()),
        (0, "skipped: workers never create monitors")
    );
    assert_eq!(panes(&server).len(), 1);
    // From outside any pane (this test process): refused, nothing written.
    let sys = env.system_config();
    let root = env.path("root").display().to_string();
    let o = env.run(&["ensure-monitor", "--root", &root, "--config", &sys]);
    assert_eq!(o.status.code(), Some(3));
    assert!(
        !Path::new(&intercom_pane::seam::actions::monitor_pane::record_path(
            &env.path("root"),
            COORD
        ))
        .exists()
    );
}

#[test]
fn the_shipped_tmux_bindings_load_on_a_real_server() {
    let env = Env::new();
    let server = start_plain(&env);
    let conf = Path::new(env!("CARGO_MANIFEST_DIR")).join("linux/tmux/intercom-pane.conf");
    server.tmux(&["source-file", &conf.display().to_string()]);
    let keys = server.tmux(&["list-keys", "-T", "prefix"]);
    let key = |k: &str| {
        keys.lines()
            .find(|l| l.split_whitespace().nth(3) == Some(k))
            .unwrap_or_else(|| panic!("prefix {k} not bound:\n{keys}"))
            .to_string()
    };
    let m_upper = key("M");
    assert!(m_upper.contains("split-window -bdv") && m_upper.contains("intercom-pane monitor"));
    assert!(!m_upper.contains(" -p "), "never -p (broken in tmux 3.4)");
    let m_lower = key("m");
    assert!(m_lower.contains("display-popup") && m_lower.contains("intercom-pane monitor"));
}

fn start_plain(env: &Env) -> TmuxServer {
    std::fs::create_dir_all(env.path("root")).unwrap();
    TmuxServer::start("keys", &env.path("root"), &[])
}

/// A `.pi-intercom/.gitignore` the writers cannot keep (a link, a file over 64 KiB) is left as it
/// is and reported: on the writer's stderr, in the log, and by `doctor`.
#[test]
fn a_gitignore_that_cannot_be_kept_is_reported_and_checked_by_doctor() {
    for case in ["link", "large"] {
        let env = Env::new().with_system_path();
        roster(&env, true);
        let state = env.path("root/.pi-intercom");
        let ignore = state.join(".gitignore");
        let elsewhere = env.path("elsewhere.txt");
        std::fs::write(&elsewhere, "kept\n").unwrap();
        let big = "# a long list\n".repeat(6000);
        match case {
            "link" => std::os::unix::fs::symlink(&elsewhere, &ignore).unwrap(),
            _ => std::fs::write(&ignore, &big).unwrap(),
        }
        let server = start(&env);
        let log = env.path("ip.log");
        let (code, out) = ensure_in_pane_with(
            &env,
            &server,
            &format!("INTERCOM_PANE_LOG={}", log.display()),
            "",
        );
        assert_eq!(code, 0, "{out}");
        let want = if case == "link" {
            "symbolic link"
        } else {
            "larger than 64 KiB"
        };
        assert!(
            out.contains(".gitignore") && out.contains(want),
            "{case}: {out}"
        );
        assert!(out.contains("doctor"), "{out}");
        // Said once per run, and logged.
        assert_eq!(out.matches(".gitignore").count(), 1, "{out}");
        let logged = std::fs::read_to_string(&log).unwrap();
        let event = logged
            .lines()
            .find(|l| l.contains("\"gitignore_problem\""))
            .unwrap_or_else(|| panic!("{logged}"));
        assert!(event.contains(want), "{event}");
        // Left exactly as it was.
        match case {
            "link" => {
                assert!(std::fs::symlink_metadata(&ignore)
                    .unwrap()
                    .file_type()
                    .is_symlink());
                assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), "kept\n");
            }
            _ => assert_eq!(std::fs::read_to_string(&ignore).unwrap(), big),
        }
        let o = env.run(&[
            "doctor",
            "--root",
            &env.path("root").display().to_string(),
            "--config",
            &env.system_config(),
            "--fleet",
            "none",
            "--tmux-socket",
            &server.sock.display().to_string(),
        ]);
        let text = String::from_utf8_lossy(&o.stdout);
        let line = text
            .lines()
            .find(|l| l.contains("gitignore:"))
            .unwrap_or_else(|| panic!("{text}"));
        assert!(line.starts_with("warn") && line.contains(want), "{line}");
    }
}

/// doctor's fix first (the plugin's key opened a sidebar above the coordinator: our marker, no
/// record), then the coordinator's start: that sidebar is taken as the coordinator's and kept,
/// never a second beside it; the next run keeps it by its record.
#[test]
fn a_sidebar_the_plugins_key_opened_is_kept_not_doubled() {
    const MARK: &str = "intercom-pane:0b5e0b5e-1111-4222-8333-444455556666";
    let env = Env::new().with_system_path();
    roster(&env, true);
    let server = start(&env);
    let coord_pane = panes(&server)[0].0.clone();
    // A pane split off the coordinator's, marked `marker` (as the plugin's script marks one).
    let marked_split = |flags: &[&str], marker: &str| {
        let mut args = vec![
            "split-window",
            "-d",
            "-t",
            &coord_pane,
            "-P",
            "-F",
            "#{pane_id}",
        ];
        args.extend_from_slice(flags);
        args.extend(["--", "sleep", "600"]);
        let pane = server.tmux(&args).trim().to_string();
        server.tmux(&[
            "set-option",
            "-p",
            "-t",
            &pane,
            "@intercom-pane-owner",
            marker,
        ]);
        pane
    };
    // As the plugin opens one: in the folder of the pane the key was pressed in.
    let root = env.path("root").display().to_string();
    let side = marked_split(&["-b", "-v", "-l", "8", "-c", &root], MARK);
    for _ in 0..2 {
        let (code, out) = ensure_in_pane(&env, &server, "");
        assert_eq!(code, 0, "{out}");
        assert_eq!(
            out.trim(),
            format!("kept: the monitor already runs in {side}")
        );
        let p = panes(&server);
        assert_eq!(p.len(), 2, "{p:?}");
        let rec = record(&env);
        assert_eq!(rec["pane"], side.as_str(), "{rec}");
        assert_eq!(rec["stage"], "submitted", "{rec}");
        assert_eq!(rec["marker"], MARK);
    }
    // Another roster's sidebar in the same session (opened by the key in a pane of another
    // project's folder) is that roster's: not taken.
    server.tmux(&["kill-pane", "-t", &side]);
    let other_root = env.path("other-project");
    std::fs::create_dir_all(other_root.join(".pi-intercom")).unwrap();
    std::fs::copy(
        env.path("root/.pi-intercom/config.json"),
        other_root.join(".pi-intercom/config.json"),
    )
    .unwrap();
    let theirs = marked_split(&["-c", &other_root.display().to_string()], MARK);
    let placed = |out: &str| {
        assert!(out.starts_with("created: monitor in %"), "{out}");
        let rec = record(&env);
        assert_ne!(rec["pane"], theirs.as_str(), "{rec}");
    };
    let (code, out) = ensure_in_pane(&env, &server, "");
    assert_eq!(code, 0, "{out}");
    placed(&out);

    // A pane marked with something else is not taken.
    server.tmux(&["kill-pane", "-t", &theirs]);
    let mine = record(&env)["pane"].as_str().unwrap().to_string();
    server.tmux(&["kill-pane", "-t", &mine]);
    let other = marked_split(&[], "someone");
    let (code, out) = ensure_in_pane(&env, &server, "");
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("created: monitor in %"), "{out}");
    assert_ne!(record(&env)["pane"], other.as_str());
}
