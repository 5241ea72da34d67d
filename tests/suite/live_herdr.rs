//! Herdr's event stream as the live engine's listener (real Herdr 0.8.2): a new workspace or a
//! closed pane marks the server for a listing at once; a stopped server ends the listener.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use crate::mux_herdr_fake::real::RealHerdr;
use intercom_pane::seam::live::panes::{Panes, ServerWatch};
use intercom_pane::seam::mux::MuxKind;

/// Poll the listeners' fds until `socket` is marked (bounded).
fn marked(p: &mut Panes, ms: u64) -> bool {
    let end = Instant::now() + Duration::from_millis(ms);
    while Instant::now() < end {
        let mut fds: Vec<libc::pollfd> = p
            .fds()
            .iter()
            .map(|(fd, _)| libc::pollfd {
                fd: *fd,
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        // SAFETY: a valid slice of pollfd.
        unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 50) };
        let mut stale = BTreeSet::new();
        for (_, i) in p.fds() {
            p.read(i, Instant::now(), &mut stale);
        }
        if !stale.is_empty() {
            return true;
        }
    }
    false
}

#[test]
#[cfg_attr(not(real_herdr), ignore = "real-Herdr tier: no `herdr` on PATH")]
fn herdr_events_mark_the_server_and_a_stop_ends_the_listener() {
    let mut h = RealHerdr::start();
    let mut p = Panes::new();
    p.sync(
        &[ServerWatch {
            kind: MuxKind::Herdr,
            socket: h.socket.clone(),
            session: None,
            server_pid: None,
        }],
        Instant::now(),
    );
    assert!(p.health()[0].listening, "{:?}", p.health());
    assert!(!marked(&mut p, 300), "nothing happened yet");
    let pane = h.background_pane("/", "ws-live");
    assert!(marked(&mut p, 5000), "workspace created");
    h.result(&["pane", "close", &pane]);
    assert!(marked(&mut p, 5000), "pane closed");
    h.stop_server();
    assert!(marked(&mut p, 5000), "server stopped");
    assert!(!p.health()[0].listening);
}
