//! tmux behind the Multiplexer trait, on real tmux servers with private sockets.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_support;

use std::path::Path;
use std::time::{Duration, Instant};

use intercom_pane::seam::liveness::{
    seat_liveness, LivenessMode, PaneCache, SeatHint, SeatLiveness,
};
use intercom_pane::seam::mux::tmux::Tmux;
use intercom_pane::seam::mux::{
    CloseOutcome, ErrorCode, Liveness, Multiplexer, MuxError, MuxKind, PaneIdentity, PaneInfo,
    PaneList, ServerIdentity, SplitAbove,
};
use intercom_pane::seam::proc;
use mux_support::{fake_pi, soon, wait_for, TmuxServer};

const HOSTILE_SESSION: &str = "a b'c\"d;é ü;";
const SHELL_SESSION: &str = "shell only; \"x\"";

fn hint_session(s: &str) -> SeatHint {
    SeatHint::Pane {
        kind: MuxKind::Tmux,
        socket: None,
        pane_id: None,
        session: Some(s.into()),
    }
}

/// The scan's own liveness rule (`liveness::seat_liveness`) on one listing of one server.
fn verdict_from(list: &Result<PaneList, MuxError>, hint: &SeatHint) -> SeatLiveness {
    let cache = PaneCache::from_listings(vec![((MuxKind::Tmux, None), list.clone())]);
    seat_liveness(&cache, Some(hint), LivenessMode::Tmux)
}

fn verdict(panes: &[PaneInfo], hint: &SeatHint) -> Liveness {
    let list = PaneList {
        server: None,
        panes: panes.to_vec(),
    };
    verdict_from(&Ok(list), hint).liveness
}

/// The live pane's cwd the rule reports for the seat's workspace.
fn workspace(panes: &[PaneInfo], hint: &SeatHint) -> Option<String> {
    let list = PaneList {
        server: None,
        panes: panes.to_vec(),
    };
    verdict_from(&Ok(list), hint).pane_cwd.map(|(cwd, _)| cwd)
}

fn pane_by<'a>(panes: &'a [PaneInfo], session: &str) -> &'a PaneInfo {
    panes
        .iter()
        .find(|p| p.session_name.as_deref() == Some(session))
        .unwrap_or_else(|| panic!("no pane in {session:?}: {panes:?}"))
}

#[test]
fn lists_pi_and_shell_panes_with_hostile_names_exactly() {
    let work = tempfile::tempdir().unwrap();
    let odd = work.path().join("dir with 'quote' \"dq\" semi; é");
    std::fs::create_dir(&odd).unwrap();
    let pi = fake_pi(work.path());
    let srv = TmuxServer::start(HOSTILE_SESSION, &odd, &[pi.to_str().unwrap(), "1000"]);
    srv.new_session(SHELL_SESSION, work.path(), &["/bin/sh"]);
    let t = Tmux::at_socket(&srv.sock);

    // A just-forked pane shows tmux's own name until its program has started.
    let list = wait_for(10_000, || {
        let l = t.list_panes(soon(5000)).ok()?;
        let settled = l.panes.len() == 2
            && l.panes
                .iter()
                .all(|p| matches!(p.current_command.as_deref(), Some("pi") | Some("sh")));
        settled.then_some(l)
    })
    .expect("both panes started");
    match list.server.as_ref().unwrap() {
        ServerIdentity::Tmux {
            socket_path,
            server_pid,
            start_time,
        } => {
            assert_eq!(Path::new(socket_path), srv.sock);
            assert_eq!(*server_pid, srv.pid());
            assert!(*start_time > 1_600_000_000);
        }
        other => panic!("{other:?}"),
    }
    let agent = pane_by(&list.panes, HOSTILE_SESSION);
    assert_eq!(agent.current_command.as_deref(), Some("pi"));
    assert_eq!(agent.cwd.as_deref(), Some(odd.to_str().unwrap()));
    assert!(agent.id.starts_with('%') && agent.session_id.starts_with('$'));
    assert!(agent.tty.as_deref().unwrap().starts_with("/dev/pts/"));
    assert_eq!((agent.width, agent.height), (Some(200), Some(50)));
    let shell = pane_by(&list.panes, SHELL_SESSION);
    assert_eq!(shell.current_command.as_deref(), Some("sh"));

    // What the board would show: alive where pi runs, offline where only a shell runs.
    assert_eq!(
        verdict(&list.panes, &hint_session(HOSTILE_SESSION)),
        Liveness::Alive
    );
    assert_eq!(
        verdict(&list.panes, &hint_session(SHELL_SESSION)),
        Liveness::Offline
    );
    assert_eq!(
        verdict(&list.panes, &hint_session("no such session")),
        Liveness::Offline
    );
    let live = verdict_from(&Ok(list.clone()), &hint_session(HOSTILE_SESSION));
    assert_eq!(
        live.pane_cwd,
        Some((odd.to_str().unwrap().to_string(), MuxKind::Tmux))
    );
    assert_eq!(
        workspace(&list.panes, &hint_session(HOSTILE_SESSION)).as_deref(),
        Some(odd.to_str().unwrap())
    );
    assert_eq!(workspace(&list.panes, &hint_session(SHELL_SESSION)), None);

    // Exact lookup by id; a similar id (prefix) never matches.
    let found = t.find_pane(&agent.id, soon(5000)).unwrap().unwrap();
    assert_eq!(&found, agent);
    assert_eq!(t.find_pane("%99", soon(5000)).unwrap(), None);
    assert_eq!(
        t.find_pane("0", soon(5000)).unwrap_err().code,
        ErrorCode::BadRequest
    );
    let by_pane = SeatHint::Pane {
        kind: MuxKind::Tmux,
        socket: None,
        pane_id: Some(agent.id.clone()),
        session: None,
    };
    assert_eq!(verdict(&list.panes, &by_pane), Liveness::Alive);

    // The pi process exits: the same session is now offline.
    srv.tmux(&["respawn-pane", "-k", "-t", &agent.id, "/bin/sh"]);
    let offline = wait_for(10_000, || {
        let l = t.list_panes(soon(5000)).ok()?;
        (verdict(&l.panes, &hint_session(HOSTILE_SESSION)) == Liveness::Offline).then_some(())
    });
    assert!(offline.is_some(), "pane still counted as running pi");
}

#[test]
fn restarted_server_reuses_ids_but_never_matches_an_old_identity() {
    let work = tempfile::tempdir().unwrap();
    let pi = fake_pi(work.path());
    let argv = [pi.to_str().unwrap(), "1000"];
    let mut srv = TmuxServer::start("seat", work.path(), &argv);
    let t = Tmux::at_socket(&srv.sock);
    let before = t.list_panes(soon(5000)).unwrap();
    let old = PaneIdentity::of(before.server.as_ref().unwrap(), &before.panes[0]);
    assert_eq!(old.pane_id, "%0");
    assert_eq!(old.session_id, "$0");

    srv.kill();
    assert_eq!(
        t.list_panes(soon(5000)).unwrap_err().code,
        ErrorCode::NoServer
    );
    srv.launch("seat", work.path(), &argv);
    let after = t.list_panes(soon(5000)).unwrap();
    let new_server = after.server.clone().unwrap();
    let reused = &after.panes[0];
    // Same ids, same socket: only the server identity tells them apart.
    assert_eq!(
        (reused.id.as_str(), reused.session_id.as_str()),
        ("%0", "$0")
    );
    assert!(!old.server.same_server(&new_server));
    assert_eq!(old.mismatch(&new_server, reused), Some("server"));
    let outcome = t.close_if_matches(&old, soon(5000)).unwrap();
    assert_eq!(outcome, CloseOutcome::Refused("server_differs".into()));
    assert!(t.find_pane("%0", soon(5000)).unwrap().is_some());
}

#[test]
fn a_pane_process_with_another_start_time_is_not_the_recorded_one() {
    let work = tempfile::tempdir().unwrap();
    let pi = fake_pi(work.path());
    let srv = TmuxServer::start("seat", work.path(), &[pi.to_str().unwrap(), "1000"]);
    let t = Tmux::at_socket(&srv.sock);
    let pane = t.list_panes(soon(5000)).unwrap().panes.remove(0);
    let recorded = proc::identity(pane.pid.unwrap()).unwrap();
    assert!(proc::is_alive(&recorded));
    // Simulate "pid taken by another process": same pid, different start ticks.
    let mut reused = recorded.clone();
    reused.start_ticks += 1;
    assert!(!proc::is_alive(&reused));
    // And the real thing: the process exits and a new one starts in the pane.
    srv.tmux(&[
        "respawn-pane",
        "-k",
        "-t",
        &pane.id,
        pi.to_str().unwrap(),
        "1000",
    ]);
    let newer = wait_for(10_000, || {
        let p = t.find_pane(&pane.id, soon(5000)).ok()??;
        (p.pid != pane.pid).then_some(p)
    })
    .expect("respawned");
    // The old process gets its SIGHUP from respawn-pane and dies a moment later (later still on
    // a loaded machine): its recorded identity must read not alive then, bounded.
    wait_for(10_000, || (!proc::is_alive(&recorded)).then_some(()))
        .expect("the replaced process still reads alive");
    assert!(proc::identity(newer.pid.unwrap()).is_some());
}

#[test]
fn compare_and_close_refuses_any_difference_and_closes_an_exact_match() {
    let work = tempfile::tempdir().unwrap();
    let pi = fake_pi(work.path());
    let srv = TmuxServer::start("keep", work.path(), &[pi.to_str().unwrap(), "1000"]);
    srv.new_session("victim", work.path(), &[pi.to_str().unwrap(), "1000"]);
    let t = Tmux::at_socket(&srv.sock);
    let list = t.list_panes(soon(5000)).unwrap();
    let server = list.server.clone().unwrap();
    let victim = pane_by(&list.panes, "victim");
    let exact = PaneIdentity::of(&server, victim);

    let mut variants: Vec<(PaneIdentity, &str)> = Vec::new();
    let mut v = exact.clone();
    v.session_id = "$0".into();
    variants.push((v, "session_id_differs"));
    let mut v = exact.clone();
    v.window_id = "@0".into();
    variants.push((v, "window_id_differs"));
    let mut v = exact.clone();
    v.pane_pid = Some(victim.pid.unwrap() + 1);
    variants.push((v, "pane_pid_differs"));
    let mut v = exact.clone();
    if let ServerIdentity::Tmux { start_time, .. } = &mut v.server {
        *start_time -= 1;
    }
    variants.push((v, "server_differs"));
    let mut v = exact.clone();
    if let ServerIdentity::Tmux { server_pid, .. } = &mut v.server {
        *server_pid += 1;
    }
    variants.push((v, "server_differs"));
    let mut v = exact.clone();
    v.pane_pid = None;
    variants.push((v, "invalid_identity"));
    for (ident, reason) in variants {
        assert_eq!(
            t.close_if_matches(&ident, soon(5000)).unwrap(),
            CloseOutcome::Refused(reason.into()),
            "{ident:?}"
        );
        assert!(t.find_pane(&victim.id, soon(5000)).unwrap().is_some());
    }

    assert_eq!(
        t.close_if_matches(&exact, soon(5000)).unwrap(),
        CloseOutcome::Closed
    );
    let after = t.list_panes(soon(5000)).unwrap();
    assert!(after.panes.iter().all(|p| p.id != victim.id));
    assert_eq!(after.panes.len(), 1, "only the victim was closed");
    assert_eq!(
        t.close_if_matches(&exact, soon(5000)).unwrap(),
        CloseOutcome::AlreadyGone
    );
}

#[test]
fn split_above_keeps_focus_and_marks_and_names_the_new_pane() {
    let work = tempfile::tempdir().unwrap();
    let pi = fake_pi(work.path());
    let srv = TmuxServer::start("coord", work.path(), &["/bin/sh"]);
    let t = Tmux::at_socket(&srv.sock);
    let coord = t.list_panes(soon(5000)).unwrap().panes.remove(0);
    let active_before = srv.tmux(&["display-message", "-p", "-t", "coord", "#{pane_id}"]);
    let title_before = coord.title.clone();

    // Arguments ending in `;` must reach the program intact (escaped as `\;` for tmux).
    let out_file = work.path().join("ran;");
    let script = format!(
        "printf '%s' \"$1\" > '{}'; exec \"$2\" 1000",
        out_file.display()
    );
    let req = SplitAbove {
        target: coord.id.clone(),
        percent: 25,
        cwd: Some(work.path().to_path_buf()),
        argv: vec![
            "sh".into(),
            "-c".into(),
            script,
            "arg0".into(),
            "semi;".into(),
            pi.to_str().unwrap().into(),
        ],
        env: vec![("INTERCOM_TEST".into(), "v;".into())],
    };
    let new = t.split_above(&req, soon(5000)).unwrap();
    assert_ne!(new.id, coord.id);
    // The shell creates the file before printf writes into it: wait for the content.
    let ran = wait_for(10_000, || {
        std::fs::read_to_string(&out_file)
            .ok()
            .filter(|s| !s.is_empty())
    })
    .expect("command ran");
    assert_eq!(ran, "semi;");

    let list = t.list_panes(soon(5000)).unwrap();
    let old = list.panes.iter().find(|p| p.id == coord.id).unwrap();
    let new = list.panes.iter().find(|p| p.id == new.id).unwrap();
    assert!(new.top.unwrap() < old.top.unwrap(), "{new:?} above {old:?}");
    let h = new.height.unwrap() as f64 / 49.0;
    assert!((0.15..0.35).contains(&h), "about a quarter: {h}");
    let active_after = srv.tmux(&["display-message", "-p", "-t", "coord", "#{pane_id}"]);
    assert_eq!(active_before, active_after, "focus unchanged");

    // Marker: set, read back exactly (a trailing `;` included), absent elsewhere.
    assert_eq!(t.read_marker(&new.id, soon(5000)).unwrap(), None);
    t.set_marker(&new.id, "owner-123;", soon(5000)).unwrap();
    assert_eq!(
        t.read_marker(&new.id, soon(5000)).unwrap().as_deref(),
        Some("owner-123;")
    );
    assert_eq!(t.read_marker(&coord.id, soon(5000)).unwrap(), None);
    assert_eq!(
        t.read_marker("%77", soon(5000)).unwrap_err().code,
        ErrorCode::PaneNotFound
    );

    // Rename: the new pane gets the title literally; the coordinator keeps its own.
    t.rename(&new.id, "Intercom monitor #{pane_id}", soon(5000))
        .unwrap();
    let list = t.list_panes(soon(5000)).unwrap();
    let named = list.panes.iter().find(|p| p.id == new.id).unwrap();
    assert_eq!(named.title.as_deref(), Some("Intercom monitor #{pane_id}"));
    let coord_now = list.panes.iter().find(|p| p.id == coord.id).unwrap();
    assert_eq!(coord_now.title, title_before);

    // Swap moves the panes and keeps focus.
    assert!(t.swap(&new.id, &coord.id, soon(5000)).unwrap());
    let list = t.list_panes(soon(5000)).unwrap();
    let old = list.panes.iter().find(|p| p.id == coord.id).unwrap();
    assert_eq!(old.top, Some(0));
    let active = srv.tmux(&["display-message", "-p", "-t", "coord", "#{pane_id}"]);
    assert_eq!(active_before, active);
    // And back, with the active pane as the source this time.
    assert!(t.swap(&coord.id, &new.id, soon(5000)).unwrap());
    let list = t.list_panes(soon(5000)).unwrap();
    let new_now = list.panes.iter().find(|p| p.id == new.id).unwrap();
    assert_eq!(new_now.top, Some(0));
    let active = srv.tmux(&["display-message", "-p", "-t", "coord", "#{pane_id}"]);
    assert_eq!(active_before, active);
}

#[test]
fn split_with_a_single_argument_runs_it_as_one_program() {
    let work = tempfile::tempdir().unwrap();
    let odd = work.path().join("bin dir; 'x'");
    std::fs::create_dir(&odd).unwrap();
    let marker = work.path().join("single-ran");
    let script = odd.join("mon itor;");
    std::fs::write(
        &script,
        format!("#!/bin/sh\ntouch '{}'\nexec sleep 1000\n", marker.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let srv = TmuxServer::start("s", work.path(), &["/bin/sh"]);
    let t = Tmux::at_socket(&srv.sock);
    let coord = t.list_panes(soon(5000)).unwrap().panes.remove(0);
    let req = SplitAbove {
        target: coord.id.clone(),
        percent: 30,
        cwd: None,
        argv: vec![script.to_str().unwrap().into()],
        env: vec![],
    };
    t.split_above(&req, soon(5000)).unwrap();
    assert!(wait_for(10_000, || marker.exists().then_some(())).is_some());
}

/// `send_text` runs the one typed path (`mux::tmux::typed`, agent-send.sh), the one `reply` uses.
#[test]
fn send_text_is_one_bracketed_paste_then_enter() {
    let work = tempfile::tempdir().unwrap();
    // The reader asks for bracketed paste (as pi does) and shows control characters.
    let reader = "printf '\\033[?2004h'; exec cat -v";
    let srv = TmuxServer::start("reader", work.path(), &["sh", "-c", reader]);
    let t = Tmux::at_socket(&srv.sock);
    let pane = t.list_panes(soon(5000)).unwrap().panes.remove(0);
    wait_for(10_000, || {
        (t.find_pane(&pane.id, soon(5000))
            .ok()??
            .current_command
            .as_deref()
            == Some("cat"))
        .then_some(())
    })
    .expect("reader ready");
    t.send_text(&pane.id, "hello 'world'; done;\nsecond line", soon(5000))
        .unwrap();
    // Enter came after the paste end, as its own key: the line is submitted to cat, which
    // prints it once more after the tty's echo (wait for both; they arrive one after the other).
    let shown = wait_for(10_000, || {
        let cap = srv.tmux(&["capture-pane", "-p", "-t", &pane.id]);
        (cap.matches("second line^[[201~").count() >= 2).then_some(cap)
    })
    .unwrap_or_else(|| srv.tmux(&["capture-pane", "-p", "-t", &pane.id]));
    assert!(
        shown.contains("^[[200~hello 'world'; done;"),
        "bracketed start: {shown}"
    );
    assert!(shown.matches("second line^[[201~").count() >= 2, "{shown}");
    // No buffer is left behind.
    assert_eq!(
        srv.tmux(&["list-buffers", "-F", "#{buffer_name}"]).trim(),
        ""
    );
    assert_eq!(
        t.send_text(&pane.id, "  ", soon(5000)).unwrap_err().code,
        ErrorCode::BadRequest
    );
    assert_eq!(
        t.send_text("%55", "x", soon(5000)).unwrap_err().code,
        ErrorCode::PaneNotFound
    );
    assert_eq!(
        srv.tmux(&["list-buffers", "-F", "#{buffer_name}"]).trim(),
        ""
    );
}

#[test]
fn absent_tmux_and_dead_sockets_are_unknown_not_offline() {
    let work = tempfile::tempdir().unwrap();
    let hint = hint_session("seat");
    // tmux not on PATH.
    let empty = tempfile::tempdir().unwrap();
    let t = Tmux::at_socket(&work.path().join("sock")).with_path_env(empty.path());
    let r = t.list_panes(soon(5000));
    assert_eq!(r.as_ref().unwrap_err().code, ErrorCode::NotInstalled);
    assert_eq!(verdict_from(&r, &hint).liveness, Liveness::Unknown);
    // A socket file nobody listens on.
    let dead = work.path().join("dead.sock");
    drop(std::os::unix::net::UnixListener::bind(&dead).unwrap());
    let r = Tmux::at_socket(&dead).list_panes(soon(5000));
    assert_eq!(r.as_ref().unwrap_err().code, ErrorCode::NoServer);
    assert_eq!(verdict_from(&r, &hint).liveness, Liveness::Unknown);
    // No socket at all.
    let r = Tmux::at_socket(&work.path().join("missing")).list_panes(soon(5000));
    assert_eq!(r.as_ref().unwrap_err().code, ErrorCode::NoServer);
    assert_eq!(verdict_from(&r, &hint).liveness, Liveness::Unknown);
    // A too-old tmux (a shim that claims 3.1).
    let shim_dir = tempfile::tempdir().unwrap();
    let shim = shim_dir.path().join("tmux");
    std::fs::write(&shim, "#!/bin/sh\necho 'tmux 3.1c'\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).unwrap();
    let r = Tmux::at_socket(&dead)
        .with_program(&shim)
        .list_panes(soon(5000));
    assert_eq!(r.as_ref().unwrap_err().code, ErrorCode::TooOld);
    assert_eq!(verdict_from(&r, &hint).liveness, Liveness::Unknown);
}

#[test]
fn a_stopped_server_times_out_within_the_deadline() {
    let work = tempfile::tempdir().unwrap();
    let srv = TmuxServer::start("s", work.path(), &["/bin/sh"]);
    let t = Tmux::at_socket(&srv.sock);
    t.list_panes(soon(5000)).unwrap();
    let pid = nix::unistd::Pid::from_raw(srv.pid());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGSTOP).unwrap();
    let started = Instant::now();
    let deadline = started + Duration::from_millis(300);
    let r = t.list_panes(deadline);
    let returned = Instant::now();
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGCONT).unwrap();
    // The deadline was hit (a timeout, not an answer) and kept to within the promised overrun.
    assert_eq!(r.unwrap_err().code, ErrorCode::Timeout);
    assert!(returned >= deadline, "a timeout before the deadline");
    assert!(
        returned < deadline + intercom_pane::seam::mux::DEADLINE_OVERRUN,
        "{:?} past the deadline",
        returned - deadline
    );
    assert_eq!(
        verdict_from(&t.list_panes(started), &hint_session("s")).liveness,
        Liveness::Unknown
    );
    assert!(t.list_panes(soon(5000)).is_ok());
}

#[test]
fn server_identity_matches_the_listing() {
    let work = tempfile::tempdir().unwrap();
    let srv = TmuxServer::start("s", work.path(), &["/bin/sh"]);
    let t = Tmux::from_tmux_env(&format!("{},{},0", srv.sock.display(), srv.pid())).unwrap();
    let id = t.server_identity(soon(5000)).unwrap();
    assert_eq!(Some(id), t.list_panes(soon(5000)).unwrap().server);
}

#[test]
fn values_with_control_characters_and_separators_round_trip_and_one_listing_is_one_tmux() {
    let work = tempfile::tempdir().unwrap();
    // Every byte the listing's quoting treats specially, plus newlines and control characters
    // (no `#` here: tmux expands formats in `-c`; the title and the marker carry them).
    let odd = work
        .path()
        .join("d\n|x\u{1f};\\ $`\"'*?[=%&<>()\u{1}\u{7f}é");
    std::fs::create_dir(&odd).unwrap();
    let srv = TmuxServer::start("s", &odd, &["/bin/sh"]);
    let window = "w|\u{1}\n\\|#x;";
    srv.tmux(&["rename-window", "-t", "s", window]);
    let title = "t|i\\t;le ## \"q\" é";
    // `select-pane -T` expands formats: `##` is one `#`.
    srv.tmux(&["select-pane", "-t", "s", "-T", &title.replace('#', "##")]);
    let marker = "m|a\\r;k#{x}\n\u{1}|";
    srv.tmux(&[
        "set-option",
        "-p",
        "-t",
        "s",
        "@intercom-pane-owner",
        marker,
    ]);
    // A second pane, so a value that swallowed a separator would show in the next row.
    srv.new_session("t|x y", work.path(), &["/bin/sh"]);
    // tmux learns a pane's cwd from its running process: on a loaded machine the new pane can
    // be listed before its shell runs (no cwd yet), or before its child has changed into the
    // pane's folder (a wrong one). Wait (bounded) until tmux reports both panes in the folders
    // they were started in, outside the shim, so the counted listings below see a settled server.
    let plain = Tmux::at_socket(&srv.sock);
    let expected = [
        ("s", odd.to_str().unwrap()),
        ("t|x y", work.path().to_str().unwrap()),
    ];
    let mut last = None;
    let both_known = wait_for(10_000, || {
        let l = plain.list_panes(soon(5000)).ok()?;
        let settled = l.panes.len() == 2
            && expected.iter().all(|(session, cwd)| {
                l.panes.iter().any(|p| {
                    p.session_name.as_deref() == Some(*session) && p.cwd.as_deref() == Some(*cwd)
                })
            });
        last = Some(l);
        settled.then_some(())
    });
    assert!(
        both_known.is_some(),
        "tmux never reported both panes in their folders: {last:?}"
    );

    // tmux run through a shim on PATH that logs each call and runs the real one.
    let shim_dir = work.path().join("shim");
    std::fs::create_dir(&shim_dir).unwrap();
    let log = work.path().join("calls.log");
    let real = String::from_utf8(
        std::process::Command::new("sh")
            .args(["-c", "command -v tmux"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let shim = shim_dir.join("tmux");
    std::fs::write(
        &shim,
        format!(
            "#!/bin/sh\necho \"$1 $2 $3 $4 $5\" >> '{}'\nexec '{}' \"$@\"\n",
            log.display(),
            real.trim()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path_env = format!("{}:/usr/local/bin:/usr/bin:/bin", shim_dir.display());
    let t = Tmux::at_socket(&srv.sock).with_path_env(&path_env);

    let list = t.list_panes(soon(5000)).unwrap();
    assert_eq!(list.panes.len(), 2);
    let p = pane_by(&list.panes, "s");
    assert_eq!(p.cwd.as_deref(), Some(odd.to_str().unwrap()));
    // tmux stores a window name with its control characters made visible (`\001`).
    let stored = srv.tmux(&["display-message", "-p", "-t", &p.id, "#{window_name}"]);
    assert_eq!(p.window_name.as_deref(), stored.strip_suffix('\n'));
    assert!(stored.contains("\\001\\n\\\\|#x;"), "{stored:?}");
    assert_eq!(p.title.as_deref(), Some(title));
    // The marker is read as text: its control characters turned into spaces, nothing else lost.
    assert_eq!(
        p.marker.as_deref(),
        Some(intercom_pane::seam::text::sanitize(marker).as_str())
    );
    assert_eq!(p.marker.as_deref(), Some("m|a\\r;k#{x} |"));
    assert_eq!(
        pane_by(&list.panes, "t|x y").cwd.as_deref(),
        Some(work.path().to_str().unwrap())
    );
    assert_eq!(t.find_pane(&p.id, soon(5000)).unwrap().as_ref(), Some(p));
    assert_eq!(
        t.list_panes(soon(5000)).unwrap().server,
        list.server,
        "the same server every time"
    );

    // Three listings: three tmux clients, each `list-panes`, no `tmux -V` and no `-N`.
    let calls = std::fs::read_to_string(&log).unwrap();
    let calls: Vec<&str> = calls.lines().collect();
    assert_eq!(calls.len(), 3, "{calls:?}");
    assert!(
        calls
            .iter()
            .all(|c| c.starts_with("-u -S ") && c.ends_with(" list-panes -a")),
        "{calls:?}"
    );
}
