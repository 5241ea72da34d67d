//! ensure-monitor on Herdr, against the protocol-faithful fake Herdr server: split down, swap,
//! layout check, run, marker and name; the owned pane is kept on the next run.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_herdr_fake;

use intercom_pane::actions::monitor_pane::{self, EnsureRequest, Outcome};
use intercom_pane::evidence::config;
use intercom_pane::mux::MuxEnv;
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
    assert!(pos("pane.swap") < pos("pane.layout"));
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
        detail.contains("focus is on w2:p1 in w2 (was w1:p1 in w1)"),
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
    let mut shell = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
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
    let _ = shell.kill();
    let _ = shell.wait();
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
    // The monitor runs: something other than the shell is in the pane's foreground (≤ 10 s).
    let end = Instant::now() + Duration::from_secs(10);
    loop {
        let info = h.client().process_info(&pane, soon()).unwrap().unwrap();
        if info.foreground().map(|f| f.pid) != info.shell_pid {
            break;
        }
        assert!(Instant::now() < end, "the monitor did not start: {info:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}
