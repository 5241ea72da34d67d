//! Servers that accept and never answer cost a pass one deadline, however many there are: every
//! server is listed at once under the pass's deadline. Real sockets: Unix listeners that accept
//! and stay silent (as tmux and as Herdr sockets), real tmux servers frozen with SIGSTOP, and a
//! live tmux server named after all of them (past the sixteenth, which used never to be asked).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_support::TmuxServer;

use std::os::unix::net::UnixListener;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use intercom_pane::seam::board::reason::{StateReason, Unanswered};
use intercom_pane::seam::liveness::{seat_liveness, LivenessMode, PaneCache, SeatHint, ServerKey};
use intercom_pane::seam::mux::{ErrorCode, Liveness, MuxKind};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

/// A Unix socket that accepts every connection and never writes a byte.
fn silent(dir: &std::path::Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    let l = UnixListener::bind(&path).unwrap();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for c in l.incoming().flatten() {
            held.push(c);
        }
    });
    path
}

fn hint(kind: MuxKind, socket: &str, session: &str) -> SeatHint {
    SeatHint::Pane {
        kind,
        socket: Some(socket.to_string()),
        pane_id: None,
        session: Some(session.to_string()),
    }
}

#[test]
fn twenty_silent_servers_cost_one_deadline_and_a_live_one_past_them_is_still_asked() {
    let dir = tempfile::tempdir().unwrap();
    let mut keys: Vec<ServerKey> = Vec::new();
    for i in 0..10 {
        let p = silent(dir.path(), &format!("tmux-{i}.sock"));
        keys.push((MuxKind::Tmux, Some(p.display().to_string())));
    }
    for i in 0..10 {
        let p = silent(dir.path(), &format!("herdr-{i}.sock"));
        keys.push((MuxKind::Herdr, Some(p.display().to_string())));
    }
    // Two real tmux servers, frozen: their sockets accept, nothing answers.
    let frozen: Vec<TmuxServer> = (0..2)
        .map(|_| TmuxServer::start("f", dir.path(), &[]))
        .collect();
    for f in &frozen {
        kill(Pid::from_raw(f.pid()), Signal::SIGSTOP).unwrap();
        keys.push((MuxKind::Tmux, Some(f.sock.display().to_string())));
    }
    let pi = crate::mux_support::fake_pi(dir.path());
    let live = TmuxServer::start("Alive", dir.path(), &[pi.to_str().unwrap(), "600"]);
    let live_sock = live.sock.display().to_string();
    keys.push((MuxKind::Tmux, Some(live_sock.clone())));
    assert!(keys.len() > 16);

    let started = Instant::now();
    let cache = PaneCache::collect(LivenessMode::Tmux, &keys, None, None);
    let took = started.elapsed();
    eprintln!(
        "{} servers (20 silent, 2 stopped, 1 live) listed in {took:?}",
        keys.len()
    );
    for f in &frozen {
        kill(Pid::from_raw(f.pid()), Signal::SIGCONT).unwrap();
    }
    // One pass deadline (2 s) for all of them, not 2 s each (46 s one after another); the bound
    // leaves room for a loaded machine.
    assert!(took < Duration::from_secs(8), "the pass took {took:?}");

    let v = seat_liveness(
        &cache,
        Some(&hint(MuxKind::Tmux, &live_sock, "Alive")),
        LivenessMode::Tmux,
    );
    assert_eq!(v.liveness, Liveness::Alive, "{v:?}");
    let v = seat_liveness(
        &cache,
        Some(&hint(MuxKind::Tmux, &live_sock, "Gone")),
        LivenessMode::Tmux,
    );
    assert_eq!(v.liveness, Liveness::Offline, "{v:?}");
    for (kind, sock) in &keys[..keys.len() - 1] {
        let v = seat_liveness(
            &cache,
            Some(&hint(*kind, sock.as_deref().unwrap(), "x")),
            LivenessMode::Tmux,
        );
        assert_eq!(v.liveness, Liveness::Unknown, "{sock:?}: {v:?}");
        assert!(
            matches!(
                v.reason,
                StateReason::MuxUnanswered(_, Unanswered::Failed(_))
            ),
            "{sock:?}: {v:?}"
        );
    }
    // The frozen tmux servers ran out of time (their clients were killed at the deadline).
    let v = seat_liveness(
        &cache,
        Some(&hint(
            MuxKind::Tmux,
            &frozen[0].sock.display().to_string(),
            "f",
        )),
        LivenessMode::Tmux,
    );
    assert_eq!(
        v.reason,
        StateReason::MuxUnanswered(MuxKind::Tmux, Unanswered::Failed(ErrorCode::Timeout)),
        "{v:?}"
    );
}

#[test]
fn servers_past_the_cap_are_not_asked_and_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let keys: Vec<ServerKey> = (0..70)
        .map(|i| {
            let p = silent(dir.path(), &format!("s{i}.sock"));
            (MuxKind::Herdr, Some(p.display().to_string()))
        })
        .collect();
    let started = Instant::now();
    let cache = PaneCache::collect(LivenessMode::Tmux, &keys, None, None);
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    let last = keys[69].1.clone().unwrap();
    let v = seat_liveness(
        &cache,
        Some(&hint(MuxKind::Herdr, &last, "x")),
        LivenessMode::Tmux,
    );
    assert_eq!(
        v.reason,
        StateReason::MuxUnanswered(MuxKind::Herdr, Unanswered::NotAsked),
        "{v:?}"
    );
    let first = keys[0].1.clone().unwrap();
    let v = seat_liveness(
        &cache,
        Some(&hint(MuxKind::Herdr, &first, "x")),
        LivenessMode::Tmux,
    );
    assert!(
        matches!(
            v.reason,
            StateReason::MuxUnanswered(_, Unanswered::Failed(_))
        ),
        "{v:?}"
    );
}
