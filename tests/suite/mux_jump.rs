//! Taking the person to a pane, on a real tmux with a real attached client (an outer private
//! server whose pane runs `tmux attach`): the client that shows the caller's pane is switched to
//! the target's session, window and pane; anything not a plain pane id is refused unsent.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_support;

use std::path::Path;

use intercom_pane::seam::mux::tmux::Tmux;
use intercom_pane::seam::mux::{ErrorCode, Multiplexer};
use mux_support::{soon, TmuxServer};

#[test]
fn the_client_showing_the_callers_pane_moves_to_the_target_in_another_session() {
    let inner = TmuxServer::start("side", Path::new("/"), &[]);
    let from = inner.client_pane_or_active("side");
    // A target in another session, in its second window, not that window's active pane.
    inner.new_session("work", Path::new("/"), &[]);
    inner.tmux(&["new-window", "-t", "=work:"]);
    let target = inner
        .tmux(&[
            "split-window",
            "-d",
            "-t",
            "=work:1",
            "-P",
            "-F",
            "#{pane_id}",
        ])
        .trim()
        .to_string();
    let _client = inner.attach_client("side", 100, 30);
    assert_eq!(inner.client_pane(), from);
    let t = Tmux::at_socket(&inner.sock);
    t.jump_to(&target, Some(&from), soon(5000)).unwrap();
    assert_eq!(inner.client_pane(), target);
    assert_eq!(inner.person_clients("#{session_name}").join("\n"), "work");
    // The caller's pane is no longer what any client shows: nothing to switch.
    let e = t.jump_to(&from, Some(&from), soon(5000)).unwrap_err();
    assert_eq!(e.code, ErrorCode::Failed, "{e:?}");
    assert_eq!(inner.client_pane(), target);
    // Only plain pane ids reach tmux.
    for bad in ["#{pane_id}", "%1;", "=side:", "%1 ", ""] {
        let e = t.jump_to(bad, Some(&target), soon(5000)).unwrap_err();
        assert_eq!(e.code, ErrorCode::BadRequest, "{bad:?}");
        let e = t.jump_to(&from, Some(bad), soon(5000)).unwrap_err();
        assert_eq!(e.code, ErrorCode::BadRequest, "{bad:?}");
    }
    assert_eq!(inner.client_pane(), target);
    // Without the caller's pane (`intercom-pane jump` outside tmux): the attached client used
    // last moves.
    t.jump_to(&from, None, soon(5000)).unwrap();
    assert_eq!(inner.client_pane(), from);
}

#[test]
fn grow_to_takes_rows_from_the_neighbour_and_never_shrinks() {
    let s = TmuxServer::start("g", Path::new("/"), &[]);
    let top = s
        .tmux(&[
            "split-window",
            "-b",
            "-d",
            "-l",
            "3",
            "-t",
            "=g:",
            "-P",
            "-F",
            "#{pane_id}",
        ])
        .trim()
        .to_string();
    let t = Tmux::at_socket(&s.sock);
    assert!(t.grow_to(&top, 7, soon(5000)).unwrap());
    let h = |p: &str| s.tmux(&["display-message", "-p", "-t", p, "#{pane_height}"]);
    assert_eq!(h(&top).trim(), "7");
    assert!(!t.grow_to(&top, 5, soon(5000)).unwrap());
    assert_eq!(h(&top).trim(), "7");
    assert_eq!(
        t.grow_to("#{pane_id}", 7, soon(5000)).unwrap_err().code,
        ErrorCode::BadRequest
    );
}

use crate::mux_herdr_fake;
use intercom_pane::seam::mux::herdr::Herdr;

#[test]
fn herdr_jump_focuses_the_workspace_and_pane_and_says_when_it_did_not() {
    let fake = mux_herdr_fake::FakeHerdr::start(std::process::id());
    let (target, other) = fake.with(|s| {
        let t = s.add_workspace("work", std::process::id(), "/tmp");
        let o = s.add_pane("w2", std::process::id());
        (t, o)
    });
    let h = Herdr::at_socket(&fake.socket);
    // w2's own focused pane is `target`; jump to the other one: workspace, then pane.
    h.jump_to(&other, None, soon(5000)).unwrap();
    let f = h.focus(soon(3000)).unwrap();
    assert_eq!(
        (f.workspace.as_str(), f.pane.as_str()),
        ("w2", other.as_str())
    );
    h.jump_to(&target, None, soon(5000)).unwrap();
    assert_eq!(h.focus(soon(3000)).unwrap().pane, target);
    assert_eq!(
        h.jump_to("w9:p9", None, soon(5000)).unwrap_err().code,
        ErrorCode::PaneNotFound
    );
    fake.with(|s| s.refuse_focus = true);
    assert!(h.jump_to("w1:p1", None, soon(5000)).is_err());
    assert_eq!(h.focus(soon(3000)).unwrap().pane, target);
}

#[test]
#[cfg_attr(not(real_herdr), ignore = "real-Herdr tier: no `herdr` on PATH")]
fn real_herdr_jump_focuses_a_pane_in_a_background_workspace() {
    let h = mux_herdr_fake::real::RealHerdr::start();
    let first = h.background_pane("/tmp", "first");
    let target = h.background_pane("/tmp", "second");
    let c = h.client();
    let before = c.focus(soon(3000)).unwrap();
    assert_ne!(before.pane, target, "a background workspace has no focus");
    c.jump_to(&target, None, soon(10_000)).unwrap();
    let now = c.focus(soon(3000)).unwrap();
    assert_eq!(now.pane, target);
    c.jump_to(&first, None, soon(10_000)).unwrap();
    assert_eq!(c.focus(soon(3000)).unwrap().pane, first);
    // A pane in a second tab, not focused, of the other workspace: its tab comes forward too.
    let ws = c
        .pane_get(&target, soon(3000))
        .unwrap()
        .unwrap()
        .workspace_id;
    let tab = h.result(&["tab", "create", "--workspace", &ws, "--no-focus"]);
    let in_tab = tab["root_pane"]["pane_id"].as_str().unwrap().to_string();
    c.jump_to(&in_tab, None, soon(10_000)).unwrap();
    let now = c.focus(soon(3000)).unwrap();
    assert_eq!((now.workspace, now.pane), (ws, in_tab.clone()));
    let layout = c.layout(&in_tab, soon(3000)).unwrap();
    assert_eq!(layout.focused_pane_id, in_tab);
}

/// The sidebar's ⏎ on a Herdr seat, end to end below the keys: a real scan finds the seat by
/// its registered pi in the fake Herdr's pane, the navigator re-checks it with a fresh pass and
/// focuses its workspace and pane; once that pi is gone, nothing moves and it says why.
#[test]
fn the_sidebar_navigator_focuses_a_herdr_seat_and_refuses_one_that_moved() {
    use crate::scan_support::{pi_root, Env};
    use intercom_pane::seam::ui::ports::{JumpOutcome, Navigator, SeatRef};

    let env = Env::new();
    let ids = pi_root(&env, &["idle"]);
    let mut pi = std::process::Command::new("bash")
        .args(["-c", "exec -a pi sleep 60"])
        .spawn()
        .unwrap();
    let pid = pi.id();
    mux_support::wait_for(2_000, || {
        std::fs::read(format!("/proc/{pid}/cmdline"))
            .ok()
            .filter(|c| c.starts_with(b"pi\0"))
    })
    .expect("exec -a pi");
    let fake = mux_herdr_fake::FakeHerdr::start(pid);
    // The person is in another workspace.
    fake.with(|s| {
        let other = s.add_workspace("elsewhere", std::process::id(), "/tmp");
        s.focus_pane(&other);
    });
    register_herdr(&env, &ids[0].1, pid, &fake.socket, "w1:p1");
    let (nav, row) = navigator_and_row(&env);
    let pane = row.pane.clone().expect("a live pane");
    assert_eq!(
        (pane.kind.name(), pane.pane_id.as_str()),
        ("herdr", "w1:p1")
    );
    assert_eq!(pane.pi.as_ref().map(|p| p.0), Some(pid as i32));
    let seat = SeatRef::of(&row);
    assert_eq!(
        nav.jump(&seat),
        JumpOutcome::Moved {
            pane: "herdr w1:p1".into()
        }
    );
    let h = Herdr::at_socket(&fake.socket);
    let f = h.focus(soon(3000)).unwrap();
    assert_eq!((f.workspace.as_str(), f.pane.as_str()), ("w1", "w1:p1"));

    // Its pi is gone: the fresh pass no longer shows that pane and pi; nothing moves.
    fake.with(|s| {
        let other = s.workspaces[1].focused_pane.clone();
        s.focus_pane(&other);
    });
    let _ = pi.kill();
    let _ = pi.wait();
    match nav.jump(&seat) {
        JumpOutcome::Refused { reason } => {
            assert!(reason.contains("W-idle"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    assert_ne!(h.focus(soon(3000)).unwrap().pane, "w1:p1");
}

/// A seat registration naming a Herdr pane, with the pi's full identity.
fn register_herdr(
    env: &crate::scan_support::Env,
    session: &str,
    pid: u32,
    socket: &std::path::Path,
    pane: &str,
) {
    let me = intercom_pane::seam::proc::identity(pid as i32).unwrap();
    let seat_dir = env.path("data/seats/herdr/idle");
    std::fs::create_dir_all(&seat_dir).unwrap();
    std::fs::write(
        seat_dir.join("registration.json"),
        serde_json::json!({"version": 1, "sessionId": session, "pid": pid,
            "startTicks": me.start_ticks, "bootId": me.boot_id,
            "startedAt": "2026-11-29T23:13:00.000Z",
            "mux": {"kind": "herdr", "socket": socket.display().to_string(), "paneId": pane}})
        .to_string(),
    )
    .unwrap();
}

/// A pi stand-in (`exec -a pi sleep`) in a new background workspace's pane of a real Herdr,
/// registered as `session`'s seat; its pane.
fn pi_seat(
    h: &mux_herdr_fake::real::RealHerdr,
    env: &crate::scan_support::Env,
    session: &str,
) -> String {
    let pane = h.background_pane("/tmp", "seat");
    h.shell_pid(&pane);
    h.cli(&["pane", "run", &pane, "exec -a pi sleep 120"]);
    let pid = mux_support::wait_for(20_000, || {
        let info = h.client().process_info(&pane, soon(3000)).ok()??;
        info.foreground()
            .filter(|f| {
                f.argv
                    .as_deref()
                    .and_then(|a| a.first())
                    .map(String::as_str)
                    == Some("pi")
            })
            .map(|f| f.pid)
    })
    .expect("the pi stand-in runs in the pane");
    register_herdr(env, session, pid, &h.socket, &pane);
    pane
}

/// The sidebar's navigator on the `pi_root` layout (no tmux), and the `W-idle` row of a pass.
fn navigator_and_row(
    env: &crate::scan_support::Env,
) -> (
    intercom_pane::seam::cmd::monitor_ports::ScanNavigator,
    intercom_pane::seam::snapshot::Row,
) {
    use intercom_pane::seam::clock::SystemClock;
    use intercom_pane::seam::liveness::LivenessMode;
    use intercom_pane::seam::scan::{self, ScanOptions};
    let opts = ScanOptions {
        liveness: LivenessMode::Tmux,
        tmux_socket: Some(env.path("no-tmux.sock")),
        ..crate::scan_support::scan_options(env, env.path("root"))
    };
    let pass = scan::run(&opts, &SystemClock, None, None).unwrap();
    let row = pass
        .snapshot
        .rows
        .iter()
        .find(|r| r.name == "W-idle")
        .unwrap()
        .clone();
    let nav = intercom_pane::seam::cmd::monitor_ports::ScanNavigator {
        opts,
        clock: std::sync::Arc::new(SystemClock),
        own: None,
    };
    (nav, row)
}

/// The same on a real Herdr 0.8.2: a pi stand-in (`exec -a pi sleep`) in a background
/// workspace's pane, registered; the navigator's jump leaves Herdr focused on that pane.
#[test]
#[cfg_attr(not(real_herdr), ignore = "real-Herdr tier: no `herdr` on PATH")]
fn the_sidebar_navigator_focuses_a_seat_on_a_real_herdr() {
    use crate::scan_support::{pi_root, Env};
    use intercom_pane::seam::ui::ports::{JumpOutcome, Navigator, SeatRef};
    let h = mux_herdr_fake::real::RealHerdr::start();
    let env = Env::new();
    let ids = pi_root(&env, &["idle"]);
    // The first workspace takes the focus; the seat's is in the background.
    let _desk = h.background_pane("/tmp", "desk");
    let pane = pi_seat(&h, &env, &ids[0].1);
    let (nav, row) = navigator_and_row(&env);
    assert_eq!(
        row.pane.as_ref().map(|p| p.pane_id.as_str()),
        Some(pane.as_str())
    );
    let c = h.client();
    assert_ne!(c.focus(soon(3000)).unwrap().pane, pane);
    assert_eq!(
        nav.jump(&SeatRef::of(&row)),
        JumpOutcome::Moved {
            pane: format!("herdr {pane}")
        }
    );
    assert_eq!(c.focus(soon(3000)).unwrap().pane, pane);
}

/// The way back on a real Herdr 0.8.2: the sidebar's ⏎ (its navigator, running in the `desk`
/// pane that carries our marker) takes the person to a seat in another workspace and records
/// where it came from; `intercom-pane jump --back` (what a Herdr `[[keys.command]]` of type
/// `shell` runs) focuses that sidebar again. A sidebar no longer ours is not gone back to.
#[test]
#[cfg_attr(not(real_herdr), ignore = "real-Herdr tier: no `herdr` on PATH")]
fn real_herdr_jump_back_returns_to_the_sidebar_the_enter_came_from() {
    use crate::scan_support::{pi_root, Env};
    use intercom_pane::seam::mux::{owning_multiplexer, MuxEnv, MuxKind};
    use intercom_pane::seam::ui::ports::{JumpOutcome, Navigator, SeatRef};
    let h = mux_herdr_fake::real::RealHerdr::start();
    let env = Env::new().with_system_path();
    let ids = pi_root(&env, &["idle"]);
    let desk = h.background_pane("/tmp", "desk");
    let desk_pid = h.shell_pid(&desk);
    let pane = pi_seat(&h, &env, &ids[0].1);
    let c = h.client();
    c.set_marker(&desk, "intercom-pane:desk", soon(5000))
        .unwrap();
    let (mut nav, row) = navigator_and_row(&env);
    nav.own = owning_multiplexer(
        desk_pid as i32,
        &MuxEnv::pointing_at(MuxKind::Herdr, &h.socket),
        soon(5000),
    );
    assert_eq!(
        nav.own.as_ref().map(|o| o.pane.id.clone()),
        Some(desk.clone())
    );
    c.jump_to(&desk, None, soon(10_000)).unwrap();
    assert_eq!(
        nav.jump(&SeatRef::of(&row)),
        JumpOutcome::Moved {
            pane: format!("herdr {pane}")
        }
    );
    assert_eq!(c.focus(soon(3000)).unwrap().pane, pane);
    let sys = env.system_config();
    let back = env.run(&["jump", "--back", "--config", &sys]);
    assert_eq!(
        back.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&back.stderr)
    );
    assert_eq!(c.focus(soon(3000)).unwrap().pane, desk);
    // No longer ours: nothing moves, and it says why.
    c.jump_to(&pane, None, soon(10_000)).unwrap();
    c.set_marker(&desk, "someone-else", soon(5000)).unwrap();
    let back = env.run(&["jump", "--back", "--config", &sys]);
    assert_eq!(back.status.code(), Some(3));
    assert!(
        String::from_utf8_lossy(&back.stderr).contains("is gone (or no longer ours)"),
        "{}",
        String::from_utf8_lossy(&back.stderr)
    );
    assert_eq!(c.focus(soon(3000)).unwrap().pane, pane);
    // Nothing recorded: said, nothing moves.
    std::fs::remove_file(env.path("data/jump-back.json")).unwrap();
    let back = env.run(&["jump", "--back", "--config", &sys]);
    assert_eq!(back.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&back.stderr).contains("no way back recorded"));
}

/// The Herdr key binding docs/commands.md gives for `jump --back` is one Herdr 0.8.2 accepts
/// (`herdr config check` on exactly that block).
#[test]
#[cfg_attr(not(real_herdr), ignore = "real-Herdr tier: no `herdr` on PATH")]
fn the_documented_herdr_binding_for_the_way_back_is_valid() {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/commands.md")).unwrap();
    let block: String = doc
        .split("```toml\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .unwrap()
        .lines()
        .map(|l| format!("{}\n", l.trim_start()))
        .collect();
    assert!(block.contains("intercom-pane jump --back"), "{block}");
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("herdr")).unwrap();
    std::fs::write(dir.path().join("herdr/config.toml"), &block).unwrap();
    let o = std::process::Command::new("herdr")
        .args(["config", "check"])
        .env("XDG_CONFIG_HOME", dir.path())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    assert_eq!(out.trim().to_lowercase(), "config: ok", "{block}");
}

/// `jump --back` on tmux: the record a sidebar's ⏎ leaves (here written as it writes it) takes
/// the attached client back to that sidebar's pane in another session, only while the pane
/// carries our marker.
#[test]
fn jump_back_on_tmux_returns_the_client_to_the_recorded_sidebar() {
    use crate::scan_support::Env;
    let env = Env::new().with_system_path();
    let inner = TmuxServer::start("side", Path::new("/"), &[]);
    let side = inner.client_pane_or_active("side");
    inner.new_session("work", Path::new("/"), &[]);
    let worker = inner
        .tmux(&["list-panes", "-t", "=work:", "-F", "#{pane_id}"])
        .trim()
        .to_string();
    let _client = inner.attach_client("work", 100, 30);
    assert_eq!(inner.client_pane(), worker);
    std::fs::create_dir_all(env.path("data")).unwrap();
    std::fs::write(
        env.path("data/jump-back.json"),
        serde_json::json!({"multiplexer": "tmux", "socket": inner.sock, "sidebar": side,
            "wentTo": worker, "at": 0})
        .to_string(),
    )
    .unwrap();
    let sys = env.system_config();
    // Not marked as ours: nothing moves.
    let o = env.run(&["jump", "--back", "--config", &sys]);
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(inner.client_pane(), worker);
    inner.tmux(&[
        "set-option",
        "-p",
        "-t",
        &side,
        "@intercom-pane-owner",
        "intercom-pane:s",
    ]);
    let o = env.run(&["jump", "--back", "--config", &sys]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(inner.client_pane(), side);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains(&format!("back to the sidebar (tmux {side})"))
    );
    // A record naming anything but a pane id moves nothing and runs nothing.
    let markers = crate::hostile_support::Markers::on(&inner);
    inner.tmux(&["switch-client", "-t", &worker]);
    assert_eq!(inner.client_pane(), worker);
    for bad in markers.values("b") {
        std::fs::write(
            env.path("data/jump-back.json"),
            serde_json::json!({"multiplexer": "tmux", "socket": inner.sock, "sidebar": bad,
                "wentTo": worker, "at": 0})
            .to_string(),
        )
        .unwrap();
        let o = env.run(&["jump", "--back", "--config", &sys]);
        assert_ne!(o.status.code(), Some(0), "{bad:?}");
        assert_eq!(inner.client_pane(), worker, "{bad:?}");
    }
    assert!(markers.found().is_empty(), "{:?}", markers.found());
    // This machine's sidebar only.
    let o = env.run(&[
        "jump",
        "--back",
        "--host",
        "b=build.example.com",
        "--config",
        &sys,
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--back goes to a sidebar on this machine"));
}
