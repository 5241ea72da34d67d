//! No format expansion of data at any tmux call site (`mux::tmux::literal`), on real tmux on
//! private sockets: `#(touch …)`, `#{…}`, `#S`, styles, the `%0},#(…)` target injection, newline
//! and TAB through window names, folders, titles, markers, session names and targets — of the
//! tmux client, the demo's private server and agent-send.sh. Each asserts that no marker file
//! appeared (after a job of our own ran, so "none yet" cannot pass for "none") and the exact
//! name, folder or title tmux then reports, or a clear refusal where tmux would change the value.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::hostile_support::{folders, reported, wait_cwd, Markers};
use crate::mux_support::{soon, wait_for, TmuxServer};

use std::path::Path;

use intercom_pane::seam::mux::session::{PrivateServer, SessionError};
use intercom_pane::seam::mux::tmux::Tmux;
use intercom_pane::seam::mux::{
    ErrorCode, Multiplexer, NewWindow, PaneIdentity, ServerIdentity, SplitAbove,
};

fn sleeper() -> Vec<String> {
    vec!["sleep".into(), "600".into()]
}

#[test]
fn unescaped_the_values_do_run_so_the_log_can_tell() {
    let base = tempfile::tempdir().unwrap();
    let server = TmuxServer::start_logged("h", base.path(), &[]);
    let m = Markers::on(&server);
    let name = format!("raw{}", m.job("raw"));
    server.tmux(&["new-window", "-d", "-n", &name, "sleep", "600"]);
    let jobs = server.jobs_run();
    assert!(
        jobs.iter().any(|l| l.contains("touch \"$M\"raw")),
        "tmux ran the #(…) of a raw window name: {jobs:?}"
    );
    assert_ne!(reported(&server, "=h:1", "window_name"), name);
}

/// A logged server with session `h`, its markers armed, our client for it and its first pane.
fn logged_server() -> (tempfile::TempDir, TmuxServer, Markers, Tmux, String) {
    let base = tempfile::tempdir().unwrap();
    let server = TmuxServer::start_logged("h", base.path(), &[]);
    let m = Markers::on(&server);
    let t = Tmux::at_socket(&server.sock);
    let first = server.tmux(&["display-message", "-p", "-t", "=h:", "#{pane_id}"]);
    let first = first.trim().to_string();
    (base, server, m, t, first)
}

#[test]
fn windows_splits_titles_and_markers_keep_hostile_values_exactly() {
    let (base, server, m, t, first) = logged_server();
    let first = first.as_str();
    let names = m.values("n");
    let dirs = folders(base.path(), &m.values("d"));
    let titles = m.values("t");
    let markers = m.values("k");
    for (i, name) in names.iter().enumerate() {
        let req = NewWindow {
            beside: first.to_string(),
            own_session: false,
            name: name.clone(),
            cwd: dirs[i].clone(),
            argv: sleeper(),
            env: vec![("HOSTILE".into(), name.clone())],
        };
        let made = t.new_window(&req, soon(10_000));
        if name.contains(['\n', '\t']) {
            let e = made.unwrap_err();
            assert_eq!(e.code, ErrorCode::BadRequest, "{e:?}");
            assert!(e.detail.contains("control character"), "{e:?}");
            continue;
        }
        let w = made.unwrap_or_else(|e| panic!("new window {name:?}: {e:?}"));
        assert_eq!(reported(&server, &w.id, "window_name"), *name);
        wait_cwd(&server, &w.id, &dirs[i]);
        // Our own listing reads the folder back exactly too.
        let listed = t.find_pane(&w.id, soon(5000)).unwrap().unwrap();
        assert_eq!(listed.cwd.as_deref(), Some(dirs[i].to_str().unwrap()));

        // A split above the new pane, in the same hostile folder.
        let split = SplitAbove {
            target: w.id.clone(),
            percent: 30,
            cwd: Some(dirs[i].clone()),
            argv: sleeper(),
            env: Vec::new(),
        };
        let s = t.split_above(&split, soon(10_000)).unwrap();
        wait_cwd(&server, &s.id, &dirs[i]);

        // A title (expanded by tmux) and our marker (a value tmux stores as given).
        t.rename(&s.id, &titles[i], soon(5000)).unwrap();
        assert_eq!(reported(&server, &s.id, "pane_title"), titles[i]);
        t.set_marker(&s.id, &markers[i], soon(5000)).unwrap();
        let raw = server.tmux(&[
            "show-options",
            "-p",
            "-v",
            "-t",
            &s.id,
            "@intercom-pane-owner",
        ]);
        assert_eq!(raw.strip_suffix('\n'), Some(markers[i].as_str()));
        assert_eq!(
            t.read_marker(&s.id, soon(5000)).unwrap(),
            Some(markers[i].clone())
        );
    }
    // Newline and TAB in a folder survive; in a name or title they are refused, not changed.
    let tabbed = dirs.last().unwrap();
    let req = NewWindow {
        beside: first.to_string(),
        own_session: false,
        name: "plain".into(),
        cwd: tabbed.clone(),
        argv: sleeper(),
        env: Vec::new(),
    };
    let w = t.new_window(&req, soon(10_000)).unwrap();
    wait_cwd(&server, &w.id, tabbed);
    let e = t.rename(&w.id, "a\tb", soon(5000)).unwrap_err();
    assert_eq!(e.code, ErrorCode::BadRequest);
    assert_eq!(reported(&server, &w.id, "window_name"), "plain");
    // A folder that does not exist is refused (tmux would start the pane in the home folder).
    let gone = NewWindow {
        cwd: base.path().join("missing#S"),
        ..req
    };
    assert_eq!(
        t.new_window(&gone, soon(5000)).unwrap_err().code,
        ErrorCode::BadRequest
    );
    m.assert_none_ran(&server);
}

/// A window in a session of its own (`resume-worker`'s placement): the session is named like
/// the hostile name exactly (only `:` `.` `\\` `$`, which tmux would change, become `_`), a taken
/// name gets `-2`, the window keeps the name and the folder exactly, nothing is expanded, and the
/// session outlives the one it was opened beside.
#[test]
fn own_sessions_keep_hostile_names_exactly_and_outlive_the_first_session() {
    let (base, server, m, t, first) = logged_server();
    let first = first.as_str();
    let names = m.name_values("o");
    let dirs = folders(base.path(), &m.values("e"));
    let mut made = Vec::new();
    for (i, name) in names.iter().enumerate() {
        if name.contains(['\n', '\t']) {
            continue;
        }
        let req = NewWindow {
            beside: first.to_string(),
            own_session: true,
            name: name.clone(),
            cwd: dirs[i].clone(),
            argv: sleeper(),
            env: Vec::new(),
        };
        let w = t
            .new_window(&req, soon(10_000))
            .unwrap_or_else(|e| panic!("own session {name:?}: {e:?}"));
        let like = intercom_pane::seam::mux::tmux::literal::session_name_like(name);
        assert_eq!(reported(&server, &w.id, "session_name"), like);
        assert_eq!(reported(&server, &w.id, "window_name"), *name);
        wait_cwd(&server, &w.id, &dirs[i]);
        // The same name again: a session of its own beside it, never the same one.
        let again = t.new_window(&req, soon(10_000)).unwrap();
        assert_eq!(
            reported(&server, &again.id, "session_name"),
            format!("{like}-2")
        );
        made.push(w.id);
    }
    assert!(made.len() >= 3, "{names:?}");
    server.tmux(&["kill-session", "-t", "=h"]);
    for id in &made {
        assert!(
            t.find_pane(id, soon(5000)).unwrap().is_some(),
            "{id} ended with the first session"
        );
    }
    m.assert_none_ran(&server);
}

#[test]
fn every_target_but_a_pane_id_is_refused_before_tmux_runs() {
    let base = tempfile::tempdir().unwrap();
    let server = TmuxServer::start_logged("h", base.path(), &["sh", "-c", "cat"]);
    let m = Markers::on(&server);
    let t = Tmux::at_socket(&server.sock);
    let mut targets = m.values("g");
    targets.extend(
        [
            "=h:",
            "h",
            "%1 ",
            " %0",
            "%",
            "@0",
            "$0",
            "%0;",
            "%01234567890",
        ]
        .map(String::from),
    );
    let ident = |pane: &str| PaneIdentity {
        server: ServerIdentity::Tmux {
            socket_path: server.sock.display().to_string(),
            server_pid: server.pid(),
            start_time: 1,
        },
        pane_id: pane.to_string(),
        session_id: "$0".into(),
        window_id: "@0".into(),
        pane_pid: Some(1),
        terminal_id: None,
    };
    for target in &targets {
        let bad = |r: Result<(), intercom_pane::seam::mux::MuxError>, what: &str| {
            let e = r.expect_err(what);
            assert_eq!(e.code, ErrorCode::BadRequest, "{what} {target:?}: {e:?}");
        };
        bad(t.find_pane(target, soon(5000)).map(|_| ()), "find_pane");
        bad(t.set_marker(target, "x", soon(5000)), "set_marker");
        bad(t.read_marker(target, soon(5000)).map(|_| ()), "read_marker");
        bad(t.rename(target, "x", soon(5000)), "rename");
        bad(t.swap(target, "%0", soon(5000)).map(|_| ()), "swap");
        bad(t.swap("%0", target, soon(5000)).map(|_| ()), "swap");
        bad(t.send_text(target, "typed", soon(15_000)), "send_text");
        let req = SplitAbove {
            target: target.clone(),
            percent: 30,
            cwd: None,
            argv: sleeper(),
            env: Vec::new(),
        };
        bad(t.split_above(&req, soon(5000)).map(|_| ()), "split_above");
        let w = NewWindow {
            beside: target.clone(),
            own_session: false,
            name: "w".into(),
            cwd: base.path().to_path_buf(),
            argv: sleeper(),
            env: Vec::new(),
        };
        bad(t.new_window(&w, soon(5000)).map(|_| ()), "new_window");
        let closed = t.close_if_matches(&ident(target), soon(5000)).unwrap();
        assert_eq!(
            closed,
            intercom_pane::seam::mux::CloseOutcome::Refused("invalid_identity".into())
        );
    }
    // Nothing was typed into the first pane, nothing created, nothing titled.
    let panes = server.tmux(&["list-panes", "-a", "-F", "#{pane_id} #{pane_title}"]);
    assert_eq!(panes.lines().count(), 1, "{panes}");
    let screen = server.tmux(&["capture-pane", "-p", "-t", "%0"]);
    assert!(!screen.contains("typed"), "{screen}");
    m.assert_none_ran(&server);
}

#[test]
fn the_demos_private_server_keeps_session_names_and_folders_or_refuses_them() {
    let m = Markers::new();
    let base = tempfile::tempdir().unwrap();
    // `start`: a hostile first session name (before `M` can be set: a job by absolute path),
    // kept exactly (expanded, it would be "c" and the job's output).
    let sock = base.path().join("demo.sock");
    let first = format!("c{}", m.job_abs("start"));
    let started = PrivateServer::start(&sock, &first, base.path(), (120, 40), &sleeper()).unwrap();
    let adopted = TmuxServer::adopt(&sock);
    let names = adopted.tmux(&["list-sessions", "-F", "#{session_name}"]);
    assert_eq!(names.strip_suffix('\n'), Some(first.as_str()));
    started.kill();
    // The other calls on a server that logs its format jobs.
    let server = TmuxServer::start_logged("h", base.path(), &[]);
    m.arm(&server);
    let ps = PrivateServer {
        socket: server.sock.clone(),
    };
    let dirs = folders(base.path(), &m.values("d"));
    for (i, name) in m.name_values("s").iter().enumerate() {
        let made = ps.new_session(name, &dirs[i], &sleeper());
        if name.contains(['\n', '\t']) {
            assert!(matches!(made, Err(SessionError::Refused(_))), "{made:?}");
            continue;
        }
        made.unwrap_or_else(|e| panic!("session {name:?}: {e}"));
        let target = format!("={name}:");
        assert_eq!(reported(&server, &target, "session_name"), *name);
        wait_cwd(&server, &target, &dirs[i]);
        ps.set_window_option(name, "remain-on-exit", "on").unwrap();
    }
    // tmux would change these (`.` and `:` to `_`, `\` and `$M` escaped): refused, nothing
    // created.
    let job = format!("j{}", m.job("sj"));
    let sessions = || server.tmux(&["list-sessions", "-F", "#{session_id}"]);
    let before = sessions();
    for name in ["a.b", "a:b", "a\\b", &job] {
        let made = ps.new_session(name, base.path(), &sleeper());
        assert!(matches!(made, Err(SessionError::Refused(_))), "{made:?}");
    }
    assert_eq!(sessions(), before);
    // The last folder holds a newline and a TAB: kept exactly.
    ps.new_session("tabbed", dirs.last().unwrap(), &sleeper())
        .unwrap();
    wait_cwd(&server, "=tabbed:", dirs.last().unwrap());
    m.assert_none_ran(&server);
}

#[test]
fn agent_send_takes_only_a_pane_id() {
    let base = tempfile::tempdir().unwrap();
    let server = TmuxServer::start_logged("h", base.path(), &["sh", "-c", "cat"]);
    let m = Markers::on(&server);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/agent-send.sh");
    let send = |target: &str| {
        std::process::Command::new("bash")
            .arg(&script)
            .args(["-s", target, "-S", "test", "-L"])
            .arg(&server.sock)
            .args(["-m", "typed by agent-send"])
            .env_remove("TMUX")
            .output()
            .unwrap()
    };
    let mut targets = m.values("a");
    targets.extend(["h", "=h:", "%0 ", "%0;", "%"].map(String::from));
    for target in &targets {
        let out = send(target);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{target:?}: {err}");
        assert!(err.contains("pane id"), "{err}");
    }
    // A pane id that names no pane: exit 3, nothing typed.
    let out = send("%99");
    assert_eq!(out.status.code(), Some(3));
    let screen = server.tmux(&["capture-pane", "-p", "-t", "%0"]);
    assert!(!screen.contains("typed by"), "{screen}");
    // The pane's own id still works (the tool is not just refusing everything).
    let out = send("%0");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    wait_for(10_000, || {
        server
            .tmux(&["capture-pane", "-p", "-t", "%0"])
            .contains("typed by agent-send")
            .then_some(())
    })
    .expect("typed into %0");
    m.assert_none_ran(&server);
}
