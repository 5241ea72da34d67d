//! The listening tmux control-mode client on a real tmux server: it hears windows and sessions
//! come and go, changes no window size, no session environment and nothing a person sees, and
//! ends with its server.

use std::time::{Duration, Instant};

use crate::mux_support::{wait_for, TmuxServer};
use intercom_pane::seam::mux::tmux::control::{ControlClient, Notice};
use intercom_pane::seam::mux::tmux::Tmux;

/// Read notices until `want` is among them (bounded).
fn hear(c: &mut ControlClient, want: Notice, ms: u64) -> bool {
    let end = Instant::now() + Duration::from_millis(ms);
    while Instant::now() < end {
        let mut p = libc::pollfd {
            fd: c.raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        unsafe { libc::poll(&mut p, 1, 50) };
        let mut out = Vec::new();
        c.read_notices(&mut out);
        if out.contains(&want) {
            return true;
        }
    }
    false
}

fn session_id(s: &TmuxServer, name: &str) -> String {
    s.tmux(&[
        "display-message",
        "-p",
        "-t",
        &format!("={name}:"),
        "#{session_id}",
    ])
    .trim()
    .to_string()
}

#[test]
fn a_listening_client_hears_windows_and_sessions_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let s = TmuxServer::start("one", dir.path(), &["sleep", "300"]);
    s.new_session("two", dir.path(), &["sleep", "300"]);
    s.tmux(&["set-environment", "-t", "=one:", "MARK", "kept"]);
    let size = || {
        s.tmux(&[
            "display-message",
            "-p",
            "-t",
            "=one:",
            "#{window_width}x#{window_height}",
        ])
    };
    let before = size();
    let tmux = Tmux::at_socket(&s.sock);
    let mut c = tmux
        .control_client(
            &session_id(&s, "one"),
            Instant::now() + Duration::from_secs(5),
        )
        .unwrap();
    assert!(hear(&mut c, Notice::Ready, 5000), "the client attached");
    assert!(c.ready());
    // It is a control client, read-only, ignoring sizes, without output.
    let clients = s.tmux(&[
        "list-clients",
        "-F",
        "#{client_control_mode} #{client_flags}",
    ]);
    let line = clients.lines().find(|l| l.starts_with("1 ")).unwrap();
    for flag in ["read-only", "ignore-size", "no-output"] {
        assert!(line.contains(flag), "{flag} in {line}");
    }
    assert_eq!(size(), before, "no window size changed");
    let env = s.tmux(&["show-environment", "-t", "=one:"]);
    assert!(env.contains("MARK=kept") && !env.contains("CARGO"), "{env}");
    // A window in another session, a new session, a split in its own session.
    s.tmux(&["new-window", "-d", "-t", "=two:", "sleep", "300"]);
    assert!(hear(&mut c, Notice::Panes, 5000), "window added elsewhere");
    s.new_session("three", dir.path(), &["sleep", "300"]);
    assert!(hear(&mut c, Notice::Panes, 5000), "session added");
    s.tmux(&["split-window", "-d", "-t", "=one:", "sleep", "300"]);
    assert!(
        hear(&mut c, Notice::Panes, 5000),
        "its own session's layout"
    );
    s.tmux(&["kill-session", "-t", "=three"]);
    assert!(hear(&mut c, Notice::Panes, 5000), "session closed");
    assert!(!c.ended());
    // Its session closed: it ends (the engine attaches it elsewhere).
    s.tmux(&["kill-session", "-t", "=one"]);
    assert!(hear(&mut c, Notice::Exit, 5000));
    assert!(c.ended());
}

#[test]
fn a_client_ends_with_its_server_and_a_bad_session_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = TmuxServer::start("one", dir.path(), &["sleep", "300"]);
    let tmux = Tmux::at_socket(&s.sock);
    assert!(tmux
        .control_client("one", Instant::now() + Duration::from_secs(5))
        .is_err());
    let mut c = tmux
        .control_client(
            &session_id(&s, "one"),
            Instant::now() + Duration::from_secs(5),
        )
        .unwrap();
    assert!(hear(&mut c, Notice::Ready, 5000));
    s.kill();
    assert!(hear(&mut c, Notice::Exit, 5000));
    // No server (tmux 3.3a leaves its socket file behind): refused, or a client that ends at once.
    match tmux.control_client("$0", Instant::now() + Duration::from_secs(5)) {
        Err(_) => {}
        Ok(mut dead) => assert!(hear(&mut dead, Notice::Exit, 5000)),
    }
    // A client for a session that does not exist ends at once.
    let s2 = TmuxServer::start("x", dir.path(), &["sleep", "300"]);
    let mut c2 = Tmux::at_socket(&s2.sock)
        .control_client("$99", Instant::now() + Duration::from_secs(5))
        .unwrap();
    assert!(hear(&mut c2, Notice::Exit, 5000));
    assert!(wait_for(2000, || {
        (!s2.tmux(&["list-clients", "-F", "#{client_control_mode}"])
            .contains('1'))
        .then_some(())
    })
    .is_some());
}
