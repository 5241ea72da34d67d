//! Which multiplexer owns a process: decided by ancestry, innermost wins; env only points.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_herdr_fake;
use crate::mux_support;

use intercom_pane::seam::mux::tmux::Tmux;
use intercom_pane::seam::mux::{owning_multiplexer, Multiplexer, MuxEnv, MuxKind};
use intercom_pane::seam::proc;
use mux_herdr_fake::FakeHerdr;
use mux_support::{fake_pi, soon, wait_for, TmuxServer};

/// A tmux pane whose process tree is: pane shell P → inner shell Q → `pi` R.
struct Nest {
    srv: TmuxServer,
    pane_id: String,
    p: i32,
    q: i32,
    r: i32,
    _work: tempfile::TempDir,
}

fn nest() -> Nest {
    let work = tempfile::tempdir().unwrap();
    let pi = fake_pi(work.path());
    // `; :` after each command keeps the shells from exec'ing their last command.
    let inner = format!("'{}' 1000; :", pi.display());
    let outer = format!("sh -c \"{inner}\"; :");
    let srv = TmuxServer::start("nest", work.path(), &["sh", "-c", &outer]);
    let t = Tmux::at_socket(&srv.sock);
    let pane = t.list_panes(soon(5000)).unwrap().panes.remove(0);
    let p = pane.pid.unwrap();
    // Until the inner shell's child has exec'd `pi` (a fork not yet exec'd reads `sh`).
    let (q, r) = wait_for(10_000, || {
        let d = proc::descendants(p, 8);
        let is_pi = |pid: i32| proc::read_stat(pid).is_some_and(|st| st.comm == "pi");
        (d.len() == 2 && is_pi(d[1])).then(|| (d[0], d[1]))
    })
    .expect("nested processes");
    assert_eq!(proc::read_stat(r).unwrap().comm, "pi");
    Nest {
        srv,
        pane_id: pane.id,
        p,
        q,
        r,
        _work: work,
    }
}

fn tmux_env(n: &Nest) -> String {
    format!("{},{},0", n.srv.sock.display(), n.srv.pid())
}

#[test]
fn tmux_owns_the_process_through_its_pane_shell() {
    let n = nest();
    let env = MuxEnv {
        tmux: Some(tmux_env(&n)),
        tmux_pane: Some(n.pane_id.clone()),
        ..Default::default()
    };
    let owner = owning_multiplexer(n.r, &env, soon(5000)).expect("owner");
    assert_eq!(owner.kind, MuxKind::Tmux);
    assert_eq!(owner.pane.id, n.pane_id);
    assert_eq!(owner.pane.pid, Some(n.p));
    assert_eq!(owner.depth, 2);
    assert_eq!(owner.socket_path, n.srv.sock);
    assert_eq!(owner.server.socket_path(), n.srv.sock.to_str().unwrap());
    // The pane shell itself is owned at depth 0.
    assert_eq!(owning_multiplexer(n.p, &env, soon(5000)).unwrap().depth, 0);
    // No candidate in the environment: no owner (we never scan for servers).
    assert_eq!(
        owning_multiplexer(n.r, &MuxEnv::default(), soon(5000)),
        None
    );
    // An environment pointing at a server whose panes are not our ancestors: no owner.
    let me = std::process::id() as i32;
    assert_eq!(owning_multiplexer(me, &env, soon(5000)), None);
}

#[test]
fn herdr_inside_tmux_wins_when_its_shell_is_nearer() {
    let n = nest();
    // Herdr's pane shell is Q: nearer to R than tmux's P.
    let herdr = FakeHerdr::start(n.q as u32);
    let env = MuxEnv {
        tmux: Some(tmux_env(&n)),
        herdr_env: true,
        herdr_socket_path: Some(herdr.socket.to_string_lossy().into_owned()),
        herdr_pane_id: Some("w1:p1".into()),
        ..Default::default()
    };
    let owner = owning_multiplexer(n.r, &env, soon(5000)).expect("owner");
    assert_eq!(owner.kind, MuxKind::Herdr);
    assert_eq!(owner.pane.id, "w1:p1");
    assert_eq!(owner.depth, 1);
}

#[test]
fn tmux_inside_herdr_wins_when_its_shell_is_nearer() {
    let n = nest();
    // Herdr's pane shell is the tmux server: farther out than the tmux pane shell P.
    let herdr = FakeHerdr::start(n.srv.pid() as u32);
    let env = MuxEnv {
        tmux: Some(tmux_env(&n)),
        herdr_env: true,
        herdr_socket_path: Some(herdr.socket.to_string_lossy().into_owned()),
        herdr_pane_id: Some("w1:p1".into()),
        ..Default::default()
    };
    let owner = owning_multiplexer(n.r, &env, soon(5000)).expect("owner");
    assert_eq!(owner.kind, MuxKind::Tmux);
    assert_eq!(owner.depth, 2);
}

#[test]
fn herdr_variables_alone_do_not_make_an_owner() {
    let n = nest();
    // HERDR_* inherited from somewhere else: the Herdr pane's shell is not our ancestor.
    let herdr = FakeHerdr::start(1_999_999);
    let env = MuxEnv {
        herdr_env: true,
        herdr_socket_path: Some(herdr.socket.to_string_lossy().into_owned()),
        herdr_pane_id: Some("w1:p1".into()),
        ..Default::default()
    };
    assert_eq!(owning_multiplexer(n.r, &env, soon(5000)), None);
    // A stale $TMUX to a dead server, plus those Herdr variables: still no owner.
    let env = MuxEnv {
        tmux: Some("/nonexistent/sock,1,0".into()),
        ..env
    };
    assert_eq!(owning_multiplexer(n.r, &env, soon(5000)), None);
}
