//! ensure-monitor on Herdr, against the protocol-faithful fake Herdr server: split down, swap,
//! layout check, run, marker and name; the owned pane is kept on the next run.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_herdr_fake;

use intercom_pane::seam::actions::monitor_pane::{self, EnsureRequest};
use intercom_pane::seam::actions::monitor_run::Outcome;
use intercom_pane::seam::evidence::config;
use intercom_pane::seam::mux::MuxEnv;
use mux_herdr_fake::FakeHerdr;
use serde_json::json;

#[test]
fn places_and_keeps_a_monitor_above_the_coordinator_on_herdr() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir_all(root.join(".pi-intercom")).unwrap();
    std::fs::write(
        root.join(".pi-intercom/config.json"),
        json!({"version": 1, "multiplexer": "herdr", "agents": [
            {"sessionId": "coord", "name": "Coordinator", "coordinator": true, "description": "C.", "port": 1, "projectDirectory": "."},
            {"sessionId": "w", "name": "W", "coordinator": false, "description": "W.", "port": 2, "projectDirectory": "."}]})
        .to_string(),
    )
    .unwrap();
    let cfg = config::load(&root).unwrap();
    // The coordinator's pane w1:p1 has this test process as its shell: ancestry finds it.
    let me = std::process::id();
    let herdr = FakeHerdr::start(me);
    let env = MuxEnv {
        herdr_env: true,
        herdr_socket_path: Some(herdr.socket.display().to_string()),
        herdr_pane_id: Some("w1:p1".into()),
        ..Default::default()
    };
    let req = EnsureRequest {
        config: &cfg,
        session_id: Some("coord".into()),
        caller_pid: me as i32,
        monitor_argv: vec![
            "intercom-pane".into(),
            "monitor".into(),
            "--root".into(),
            root.display().to_string(),
        ],
        recover: false,
        now: 0,
    };
    let pane = match monitor_pane::ensure(&req, &env).unwrap() {
        Outcome::Created { pane } => pane,
        other => panic!("{other:?}"),
    };
    assert_ne!(pane, "w1:p1");
    let methods = herdr.methods();
    let pos = |m: &str| {
        methods
            .iter()
            .position(|x| x == m)
            .unwrap_or_else(|| panic!("{m} not called: {methods:?}"))
    };
    assert!(pos("pane.split") < pos("pane.swap"));
    // The layout is checked after the swap too (the last layout request).
    let last = |m: &str| methods.iter().rposition(|x| x == m).unwrap();
    assert!(pos("pane.swap") < last("pane.layout"));
    // Labelled before the command is typed (a stage each).
    assert!(pos("pane.rename") < pos("pane.send_input"));
    let (label, marker) = herdr.with(|s| {
        let p = s.panes.iter().find(|p| p.id == pane).unwrap();
        (p.label.clone(), p.tokens.values().next().cloned())
    });
    assert_eq!(label.as_deref(), Some("Intercom monitor"));
    let rec: serde_json::Value =
        serde_json::from_slice(&std::fs::read(monitor_pane::record_path(&root, "coord")).unwrap())
            .unwrap();
    assert_eq!(rec["stage"], "submitted");
    assert_eq!(rec["pane"], pane);
    assert_eq!(rec["caller"], "w1:p1");
    assert_eq!(rec["multiplexer"], "herdr");
    assert_eq!(marker.as_deref(), rec["marker"].as_str());
    // The typed command ran in the new pane.
    let typed = herdr.with(|s| {
        s.inputs
            .iter()
            .any(|(p, t, _)| p == &pane && t.contains("monitor"))
    });
    assert!(typed, "the monitor command was typed into the new pane");

    // Next run: kept, nothing split again.
    let splits = herdr
        .methods()
        .iter()
        .filter(|m| *m == "pane.split")
        .count();
    assert_eq!(
        monitor_pane::ensure(&req, &env).unwrap(),
        Outcome::Preserved { pane: pane.clone() }
    );
    assert_eq!(
        herdr
            .methods()
            .iter()
            .filter(|m| *m == "pane.split")
            .count(),
        splits
    );
}

/// A roster with a coordinator and one worker under a fresh root.
fn roster(dir: &std::path::Path) -> std::path::PathBuf {
    let root = dir.join("root");
    std::fs::create_dir_all(root.join(".pi-intercom")).unwrap();
    std::fs::write(
        root.join(".pi-intercom/config.json"),
        json!({"version": 1, "multiplexer": "herdr", "agents": [
            {"sessionId": "coord", "name": "Coordinator", "coordinator": true, "description": "C.", "port": 1, "projectDirectory": "."},
            {"sessionId": "w", "name": "W", "coordinator": false, "description": "W.", "port": 2, "projectDirectory": "."}]})
        .to_string(),
    )
    .unwrap();
    root
}

fn request<'a>(cfg: &'a config::IntercomConfig, caller: u32) -> EnsureRequest<'a> {
    EnsureRequest {
        config: cfg,
        session_id: Some("coord".into()),
        caller_pid: caller as i32,
        monitor_argv: vec![
            "intercom-pane".into(),
            "monitor".into(),
            "--root".into(),
            cfg.root.display().to_string(),
        ],
        recover: false,
        now: 0,
    }
}

fn herdr_env(h: &FakeHerdr) -> MuxEnv {
    MuxEnv {
        herdr_socket_path: Some(h.socket.display().to_string()),
        ..Default::default()
    }
}

/// (focused workspace, focused pane, each workspace's own focused pane).
fn focus_state(h: &FakeHerdr) -> (String, String, Vec<String>) {
    h.with(|s| {
        (
            s.focused_ws.clone(),
            s.focused.clone(),
            s.workspaces
                .iter()
                .map(|w| w.focused_pane.clone())
                .collect(),
        )
    })
}

fn record(root: &std::path::Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(monitor_pane::record_path(root, "coord")).unwrap())
        .unwrap()
}

/// Panes whose foreground program is the monitor (what "a running monitor" is in the fake).
fn running_monitors(h: &FakeHerdr) -> usize {
    h.with(|s| {
        s.panes
            .iter()
            .filter(|p| p.foreground.iter().any(|f| f.1 == "intercom-pane"))
            .count()
    })
}

/// A coordinator in a background workspace gets its monitor while the person stays where they
/// are: Herdr's swap focuses the coordinator's workspace (captured), and ensure-monitor puts the
/// focused workspace, the focused pane and the background workspace's own focus back.
#[test]
fn a_background_coordinator_gets_its_monitor_without_moving_the_focus() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config::load(&roster(dir.path())).unwrap();
    let me = std::process::id();
    // w1:p1 (focused, the person's) runs some other shell; the coordinator is w2:p1.
    let herdr = FakeHerdr::start(1_999_999);
    let coord = herdr.with(|s| {
        let c = s.add_workspace("background", me, "/tmp");
        // w2 has a second pane that is its own focused one.
        let other = s.add_pane("w2", 1_999_998);
        s.workspaces[1].focused_pane = other;
        c
    });
    assert_eq!(coord, "w2:p1");
    let before = focus_state(&herdr);
    assert_eq!(before.0, "w1");
    let out = monitor_pane::ensure(&request(&cfg, me), &herdr_env(&herdr)).unwrap();
    let Outcome::Created { pane } = out else {
        panic!("{out:?}")
    };
    assert!(pane.starts_with("w2:"), "{pane}");
    assert!(herdr.methods().iter().any(|m| m == "pane.swap"));
    assert_eq!(
        focus_state(&herdr),
        before,
        "focus is where the person left it"
    );
    let methods = herdr.methods();
    let swap = methods.iter().position(|m| m == "pane.swap").unwrap();
    assert!(
        methods[swap..].iter().any(|m| m == "workspace.focus"),
        "the swap moved the focus and it was put back: {methods:?}"
    );
    let rec = record(&cfg.root);
    assert_eq!(rec["focus"], "restored");
    assert_eq!(rec["placement"], "split_down_swap");
    assert_eq!(rec["workspace"], "w2");
    // The monitor is above the coordinator.
    let (m, c) = herdr.with(|s| {
        let r = |id: &str| s.panes.iter().find(|p| p.id == id).unwrap().rect;
        (r(&pane), r("w2:p1"))
    });
    assert!(m.y < c.y);
}

/// When the focus cannot be put back, the monitor is still placed (exit 0), and the record and
/// the outcome say where the focus is.
#[test]
fn a_focus_that_cannot_be_put_back_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config::load(&roster(dir.path())).unwrap();
    let me = std::process::id();
    let herdr = FakeHerdr::start(1_999_999);
    herdr.with(|s| {
        s.add_workspace("background", me, "/tmp");
        s.refuse_focus = true;
    });
    let out = monitor_pane::ensure(&request(&cfg, me), &herdr_env(&herdr)).unwrap();
    let Outcome::CreatedFocusMoved { detail, .. } = out else {
        panic!("{out:?}")
    };
    assert!(
        detail.contains("focus is on w2:p1 in w2 / w2:t1 (was w1:p1 in w1 / w1:t1)"),
        "{detail}"
    );
    let rec = record(&cfg.root);
    assert_eq!(rec["focus"], "not_restored");
    assert_eq!(rec["focusDetail"], detail.as_str());
    assert_eq!(rec["stage"], "submitted");
}

/// In the focused workspace, with the coordinator focused, the swap moves nothing.
#[test]
fn a_focused_coordinator_keeps_the_focus_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config::load(&roster(dir.path())).unwrap();
    let me = std::process::id();
    let herdr = FakeHerdr::start(me);
    let before = focus_state(&herdr);
    monitor_pane::ensure(&request(&cfg, me), &herdr_env(&herdr)).unwrap();
    assert_eq!(focus_state(&herdr), before);
    assert_eq!(record(&cfg.root)["focus"], "unchanged");
}

/// After a Herdr server restart the monitor's pane is back (same id, label, workspace) as a
/// fresh shell with a new terminal id and no marker: ensure-monitor recognises it and starts
/// the monitor there again (exit 0, one running monitor), and keeps it on the next run.
#[test]
fn after_a_server_restart_the_monitor_runs_again_in_its_own_pane() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config::load(&roster(dir.path())).unwrap();
    let me = std::process::id();
    let herdr = FakeHerdr::start(me);
    let env = herdr_env(&herdr);
    let Outcome::Created { pane } = monitor_pane::ensure(&request(&cfg, me), &env).unwrap() else {
        panic!()
    };
    assert_eq!(running_monitors(&herdr), 1);
    // The restart: every process of every pane is gone; the coordinator's pane gets a new shell
    // (a real process, so ancestry finds it), the others a shell that is only a label.
    let shell = crate::mux_support::Sleeper::start(30);
    let new_shell = shell.id();
    herdr.with(|s| {
        s.restart(|p| {
            if p.id == "w1:p1" {
                new_shell
            } else {
                1_999_990
            }
        })
    });
    assert_eq!(running_monitors(&herdr), 0);
    // The command itself, as the pi extension runs it: exit 0, `relaunched`.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_intercom-pane"))
        .args(["ensure-monitor", "--session-id", "coord", "--caller-pid"])
        .arg(new_shell.to_string())
        .arg("--root")
        .arg(&cfg.root)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HERDR_SOCKET_PATH", &herdr.socket)
        .output()
        .unwrap();
    // The next start keeps it (marker and record agree again).
    let kept = monitor_pane::ensure(&request(&cfg, new_shell), &env);
    drop(shell);
    assert_eq!(kept.unwrap(), Outcome::Preserved { pane: pane.clone() });
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.starts_with(&format!("relaunched: the monitor runs again in {pane}")),
        "{stdout}"
    );
    // What it typed: this binary's monitor for this root.
    let typed = herdr.with(|s| s.inputs.last().cloned()).unwrap();
    assert_eq!(typed.0, pane);
    assert!(typed.1.contains(" monitor --root "), "{typed:?}");
    assert_eq!(running_monitors(&herdr), 1);
    let splits = herdr
        .methods()
        .iter()
        .filter(|m| *m == "pane.split")
        .count();
    assert_eq!(splits, 1, "no second pane");
    let rec = record(&cfg.root);
    assert_eq!(rec["stage"], "submitted");
    assert_eq!(rec["relaunched"], "after_server_restart");
    let (terminal, marker) = herdr.with(|s| {
        let p = s.panes.iter().find(|p| p.id == pane).unwrap();
        (p.terminal_id.clone(), p.tokens.values().next().cloned())
    });
    assert_eq!(rec["paneTerminal"], terminal.as_str());
    assert_eq!(marker.as_deref(), rec["marker"].as_str());
}

/// A pane labelled like our monitor that lost its marker without a restart (same terminal) is
/// not provably ours any more: nothing is typed into it, and a new monitor is placed.
#[test]
fn a_lost_marker_without_a_restart_is_not_taken_for_ours() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config::load(&roster(dir.path())).unwrap();
    let me = std::process::id();
    let herdr = FakeHerdr::start(me);
    let env = herdr_env(&herdr);
    let Outcome::Created { pane } = monitor_pane::ensure(&request(&cfg, me), &env).unwrap() else {
        panic!()
    };
    herdr.with(|s| {
        s.panes
            .iter_mut()
            .find(|p| p.id == pane)
            .unwrap()
            .tokens
            .clear();
    });
    let typed_there = |h: &FakeHerdr| h.with(|s| s.inputs.iter().filter(|i| i.0 == pane).count());
    let before = typed_there(&herdr);
    let again = monitor_pane::ensure(&request(&cfg, me), &env).unwrap();
    let Outcome::Created { pane: new } = again else {
        panic!("{again:?}")
    };
    assert_ne!(new, pane);
    assert_eq!(
        typed_there(&herdr),
        before,
        "nothing typed into the unproven pane"
    );
}

/// Real-Herdr tier: a private headless `herdr server`. A coordinator in a background workspace
/// gets its monitor while the person's focus stays; after `herdr server stop` and a new start
/// the monitor runs again in the same pane, and there is one monitor pane.
#[test]
#[cfg_attr(not(real_herdr), ignore = "real-Herdr tier: no `herdr` on PATH")]
fn real_herdr_background_monitor_keeps_focus_and_survives_a_restart() {
    use mux_herdr_fake::real::RealHerdr;
    use std::time::{Duration, Instant};
    let soon = || Instant::now() + Duration::from_secs(5);
    let mut h = RealHerdr::start();
    let dir = tempfile::tempdir().unwrap();
    let cfg = config::load(&roster(dir.path())).unwrap();
    h.result(&["workspace", "create", "--cwd", "/tmp", "--label", "front"]);
    let coord = h.background_pane("/tmp", "back");
    let env = MuxEnv {
        herdr_socket_path: Some(h.socket.display().to_string()),
        ..Default::default()
    };
    let mut req = request(&cfg, h.shell_pid(&coord));
    req.monitor_argv[0] = env!("CARGO_BIN_EXE_intercom-pane").into();
    let before = h.client().focus(soon()).unwrap();
    let pane = match monitor_pane::ensure(&req, &env).unwrap() {
        Outcome::Created { pane } => pane,
        other => panic!("{other:?}"),
    };
    let after = h.client().focus(soon()).unwrap();
    assert_eq!(
        (&after.workspace, &after.pane),
        (&before.workspace, &before.pane)
    );
    assert_eq!(record(&cfg.root)["focus"], "restored");

    h.stop_server();
    h.start_server();
    req.caller_pid = h.shell_pid(&coord) as i32;
    assert_eq!(
        monitor_pane::ensure(&req, &env).unwrap(),
        Outcome::Relaunched { pane: pane.clone() }
    );
    let labelled = h.result(&["pane", "list"])["panes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["label"] == "Intercom monitor")
        .count();
    assert_eq!(labelled, 1);
    monitor_argv(&h, &pane);
}

/// The argv of what runs in the pane's foreground once it is not its shell: the monitor has
/// started (waited for, ≤ 10 s).
fn monitor_argv(h: &mux_herdr_fake::real::RealHerdr, pane: &str) -> Vec<String> {
    use std::time::{Duration, Instant};
    let end = Instant::now() + Duration::from_secs(10);
    loop {
        let info = h
            .client()
            .process_info(pane, Instant::now() + Duration::from_secs(5))
            .unwrap()
            .unwrap();
        let fg = info.foreground().cloned();
        if let Some(f) = fg.filter(|f| Some(f.pid) != info.shell_pid) {
            return f.argv.unwrap_or_default();
        }
        assert!(Instant::now() < end, "the monitor did not start: {info:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Real-Herdr tier: the coordinator's pane is in a tab its background workspace does not show.
/// Herdr's swap makes that tab the shown one (captured, `moves` 020/021); ensure-monitor puts
/// the shown tab back as well as the focus, and the record says `restored` only after checking
/// it (before, it restored the focus alone, left the workspace showing the coordinator's tab,
/// and still recorded `restored`).
#[test]
#[cfg_attr(not(real_herdr), ignore = "real-Herdr tier: no `herdr` on PATH")]
fn real_herdr_a_background_workspace_keeps_the_tab_it_shows() {
    use mux_herdr_fake::real::RealHerdr;
    use std::time::{Duration, Instant};
    let soon = || Instant::now() + Duration::from_secs(5);
    let h = RealHerdr::start();
    let dir = tempfile::tempdir().unwrap();
    let cfg = config::load(&roster(dir.path())).unwrap();
    h.result(&["workspace", "create", "--cwd", "/tmp", "--label", "front"]);
    let shown = h.background_pane("/tmp", "back");
    let ws = h.result(&["pane", "get", &shown])["pane"]["workspace_id"]
        .as_str()
        .unwrap()
        .to_string();
    let tab = h.result(&[
        "tab",
        "create",
        "--workspace",
        &ws,
        "--cwd",
        "/tmp",
        "--label",
        "coord",
        "--no-focus",
    ]);
    let coord = tab["root_pane"]["pane_id"].as_str().unwrap().to_string();
    let coord_tab = tab["tab"]["tab_id"].as_str().unwrap().to_string();
    let env = MuxEnv {
        herdr_socket_path: Some(h.socket.display().to_string()),
        ..Default::default()
    };
    let mut req = request(&cfg, h.shell_pid(&coord));
    req.monitor_argv[0] = env!("CARGO_BIN_EXE_intercom-pane").into();
    let before = h.client().focus(soon()).unwrap();
    assert_ne!(before.tab_of(&ws), Some(coord_tab.as_str()));
    let pane = match monitor_pane::ensure(&req, &env).unwrap() {
        Outcome::Created { pane } => pane,
        other => panic!("{other:?}"),
    };
    let after = h.client().focus(soon()).unwrap();
    assert_eq!(
        (&after.workspace, &after.tab, &after.pane),
        (&before.workspace, &before.tab, &before.pane)
    );
    assert_eq!(
        after.tab_of(&ws),
        before.tab_of(&ws),
        "the shown tab is back"
    );
    assert_eq!(
        after.pane_of_tab(&coord_tab),
        before.pane_of_tab(&coord_tab)
    );
    let rec = record(&cfg.root);
    assert_eq!(rec["focus"], "restored", "{rec}");
    assert!(rec["focusChecked"]
        .as_str()
        .unwrap()
        .contains("tab each workspace shows"));
    // The monitor is above the coordinator, in the coordinator's tab.
    let got = h.result(&["pane", "get", &pane]);
    assert_eq!(got["pane"]["tab_id"], coord_tab.as_str());
}

/// `intercom-pane ensure-monitor` for the coordinator whose pane's shell is `caller`, on the
/// real server `h`; `pause`: the stage after which its placement waits on a file (test hook).
fn ensure_command(
    h: &mux_herdr_fake::real::RealHerdr,
    root: &std::path::Path,
    caller: u32,
    pause: Option<(&str, &std::path::Path)>,
) -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_intercom-pane"));
    c.args(["ensure-monitor", "--root"])
        .arg(root)
        .args(["--session-id", "coord", "--caller-pid", &caller.to_string()])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", root)
        .env("HERDR_SOCKET_PATH", &h.socket)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    if let Some((stage, file)) = pause {
        c.env(
            intercom_pane::seam::actions::monitor_place::TEST_PAUSE_ENV,
            format!("{stage}:{}", file.display()),
        );
    }
    c
}

/// The panes labelled `Intercom monitor`, and every pane id.
fn monitor_panes(h: &mux_herdr_fake::real::RealHerdr) -> (Vec<String>, Vec<String>) {
    let list = h.result(&["pane", "list"]);
    let panes = list["panes"].as_array().unwrap();
    let ids = |f: &dyn Fn(&serde_json::Value) -> bool| {
        panes
            .iter()
            .filter(|p| f(p))
            .map(|p| p["pane_id"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    (ids(&|p| p["label"] == "Intercom monitor"), ids(&|_| true))
}

/// Wait (≤ 15 s) until the record reaches `stage`.
fn wait_stage(root: &std::path::Path, stage: &str) -> serde_json::Value {
    let path = monitor_pane::record_path(root, "coord");
    let end = std::time::Instant::now() + std::time::Duration::from_secs(15);
    loop {
        if let Some(v) = std::fs::read(&path)
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        {
            if v["stage"] == stage {
                return v;
            }
        }
        assert!(
            std::time::Instant::now() < end,
            "the record never reached {stage}: {:?}",
            std::fs::read_to_string(&path)
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

fn wait_file(p: &std::path::Path) {
    let end = std::time::Instant::now() + std::time::Duration::from_secs(15);
    while !p.exists() {
        assert!(
            std::time::Instant::now() < end,
            "{} never appeared",
            p.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The placing process of this root (`ensure-monitor --in-background`), found in /proc.
fn placing_pid(root: &std::path::Path) -> Option<i32> {
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: i32 = e.file_name().to_str()?.parse().ok()?;
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
        let cmd = String::from_utf8_lossy(&cmd);
        (cmd.contains("--in-background") && cmd.contains(&*root.to_string_lossy())).then_some(pid)
    })
}

/// Real-Herdr tier: the placement does not depend on its caller's patience. The command is
/// killed (SIGTERM, what the pi extension's 3 s timeout does) right after the split: the
/// placement goes on and finishes — labelled, running, the focus back, one monitor pane. Then
/// a placement killed outright (SIGKILL) half-way is taken up by the next run, which finishes it
/// in the same pane; and a placement that cannot finish closes its own half-made pane and
/// leaves no fence. Before: the killed placement left an unlabelled pane, the focus moved and a
/// record that fenced every later start until `--recover`.
#[test]
#[cfg_attr(not(real_herdr), ignore = "real-Herdr tier: no `herdr` on PATH")]
fn real_herdr_a_placement_outlives_its_caller_and_is_taken_up_after_a_crash() {
    use mux_herdr_fake::real::RealHerdr;
    use nix::sys::signal::{kill, Signal};
    use nix::unistd::Pid;
    use std::time::{Duration, Instant};
    let soon = || Instant::now() + Duration::from_secs(5);
    let h = RealHerdr::start();
    let dir = tempfile::tempdir().unwrap();
    let root = roster(dir.path());
    let gate = dir.path().join("gate");
    h.result(&["workspace", "create", "--cwd", "/tmp", "--label", "front"]);
    let coord = h.background_pane("/tmp", "back");
    let caller = h.shell_pid(&coord);
    let before = h.client().focus(soon()).unwrap();

    // 1. The caller gives up right after the split: the placement finishes anyway.
    let mut cmd = ensure_command(&h, &root, caller, Some(("swap_pending", &gate)))
        .spawn()
        .unwrap();
    wait_file(&gate);
    kill(Pid::from_raw(cmd.id() as i32), Signal::SIGTERM).unwrap();
    let _ = cmd.wait();
    std::fs::remove_file(&gate).unwrap();
    let rec = wait_stage(&root, "submitted");
    let pane = rec["pane"].as_str().unwrap().to_string();
    let (labelled, _) = monitor_panes(&h);
    assert_eq!(labelled, vec![pane.clone()], "{rec}");
    let after = h.client().focus(soon()).unwrap();
    assert_eq!(
        (&after.workspace, &after.pane),
        (&before.workspace, &before.pane)
    );
    assert!(
        matches!(rec["focus"].as_str(), Some("restored" | "unchanged")),
        "{rec}"
    );
    h.cli(&["pane", "close", &pane]);

    // 2. The placement itself is killed outright half-way (labelled, command not typed yet):
    //    the next run takes it up in the same pane.
    let mut cmd = ensure_command(&h, &root, caller, Some(("run_pending", &gate)))
        .spawn()
        .unwrap();
    wait_file(&gate);
    let placing = placing_pid(&root).expect("the placing process");
    kill(Pid::from_raw(placing), Signal::SIGKILL).unwrap();
    let _ = cmd.wait();
    let _ = std::fs::remove_file(&gate);
    let half = wait_stage(&root, "run_pending");
    let o = ensure_command(&h, &root, caller, None).output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{} {}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let rec = wait_stage(&root, "submitted");
    assert_eq!(rec["pane"], half["pane"], "the same pane, taken up");
    assert_eq!(
        monitor_panes(&h).0,
        vec![rec["pane"].as_str().unwrap().to_string()]
    );
    monitor_argv(&h, rec["pane"].as_str().unwrap());
    h.cli(&["pane", "close", rec["pane"].as_str().unwrap()]);

    // 3. A placement that cannot finish (the coordinator's pane closed under it) closes the
    //    pane it split and leaves no record to fence the next start.
    let (_, panes_before) = monitor_panes(&h);
    let mut cmd = ensure_command(&h, &root, caller, Some(("swap_pending", &gate)))
        .spawn()
        .unwrap();
    wait_file(&gate);
    let half = serde_json::from_slice::<serde_json::Value>(
        &std::fs::read(monitor_pane::record_path(&root, "coord")).unwrap(),
    )
    .unwrap();
    let split = half["pane"].as_str().unwrap().to_string();
    h.cli(&["pane", "close", &coord]);
    std::fs::remove_file(&gate).unwrap();
    // The command itself stopped waiting long ago (it said the placement goes on); the
    // placement ends when it has cleaned up.
    let _ = cmd.wait();
    let end = Instant::now() + Duration::from_secs(15);
    while monitor_pane::record_path(&root, "coord").exists() || placing_pid(&root).is_some() {
        assert!(Instant::now() < end, "the failed placement left its record");
        std::thread::sleep(Duration::from_millis(50));
    }
    let (_, panes_after) = monitor_panes(&h);
    assert!(
        !panes_after.contains(&split),
        "the half-made pane is closed: {panes_after:?}"
    );
    assert!(!panes_after.contains(&coord));
    assert_eq!(
        panes_after.len() + 1,
        panes_before.len(),
        "{panes_before:?} {panes_after:?}"
    );
}

/// Real-Herdr tier: every string handed to Herdr is checked for it. The sidebar's command is
/// typed into a shell, so a root folder full of shell syntax (`$(…)`, backticks, quotes, `;`,
/// `#`, a space) reaches the monitor exactly as its `--root` argument and runs nothing; the
/// environment given to the new pane is the placement's marker only; the label is ours.
#[test]
#[cfg_attr(not(real_herdr), ignore = "real-Herdr tier: no `herdr` on PATH")]
fn real_herdr_a_hostile_root_reaches_the_monitor_exactly() {
    use mux_herdr_fake::real::RealHerdr;
    let h = RealHerdr::start();
    let dir = tempfile::tempdir().unwrap();
    let hostile = dir
        .path()
        .join("r $(touch PWNED1) `touch PWNED2` 'q\" ;touch PWNED3 #{S} é");
    std::fs::create_dir_all(&hostile).unwrap();
    let root = roster(&hostile);
    let coord = h.background_pane("/tmp", "back");
    let caller = h.shell_pid(&coord);
    let o = ensure_command(&h, &root, caller, None).output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let rec = wait_stage(&root, "submitted");
    let pane = rec["pane"].as_str().unwrap().to_string();
    let argv = monitor_argv(&h, &pane);
    let at = argv.iter().position(|a| a == "--root").expect("--root");
    assert_eq!(argv[at + 1], root.display().to_string(), "{argv:?}");
    for n in ["PWNED1", "PWNED2", "PWNED3"] {
        for d in [&root, &hostile, dir.path(), std::path::Path::new("/tmp")] {
            assert!(!d.join(n).exists(), "{} ran", d.join(n).display());
        }
    }
    let got = h.result(&["pane", "get", &pane]);
    assert_eq!(got["pane"]["label"], "Intercom monitor");
}
