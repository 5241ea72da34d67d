//! The board following a host's real stream (`intercom-pane status --watch --json-lines`,
//! docs/interop.md §10) over real ssh: host `s` runs this build, which streams; host `p` runs
//! this build behind a wrapper whose hello says `"watch": false` (a program from before the
//! stream), so its board is read by `scan --json` polls. A change on `s` shows within 1 s; its
//! stream stopped (the remote `status --watch` process frozen with SIGSTOP, its ssh connection
//! still up) reads "not answering" within 10 s, its rows kept but not live, and comes back.

use std::time::Instant;

use intercom_pane::seam::snapshot::HostState;
use intercom_pane::seam::states::BoardState;

use crate::hosts_support::{all_answering, board, host_state, row, until, Net};

fn streams(net: &Net, h: &str) -> Vec<i32> {
    net.host(h).streams()
}

#[test]
#[cfg_attr(
    not(hosts_tier),
    ignore = "needs root, OpenSSH's sshd, ssh, ssh-keygen, ip and unshare (the multi-host tier; .ci/run installs openssh-server)"
)]
fn a_streaming_host_shows_a_change_within_a_second_and_a_frozen_stream_is_noticed() {
    let net = Net::new(&[("s", &["Builder"]), ("p", &["Builder"])], &[]);
    let older = net.dir.path().join("older-ip");
    std::fs::write(
        &older,
        format!(
            "#!/bin/sh\nif [ \"$1\" = hello ]; then\n  \"{bin}\" \"$@\" | sed 's/\"watch\":true/\"watch\":false/'\nelse\n  exec \"{bin}\" \"$@\"\nfi\n",
            bin = env!("CARGO_BIN_EXE_intercom-pane"),
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&older, std::fs::Permissions::from_mode(0o755)).unwrap();
    net.write_hosts_file(&[("p", older.to_str().unwrap())]);

    let mut src = board(&net);
    let s = until(&mut src, 30_000, "both hosts answering", |s| {
        all_answering(s) && s.rows.len() == 2
    });
    let via = |s: &intercom_pane::seam::snapshot::Snapshot, h: &str| {
        s.hosts.iter().find(|x| x.name == h).and_then(|x| x.via)
    };
    assert_eq!(via(&s, "s"), Some("watch"));
    assert_eq!(
        via(&s, "p"),
        Some("poll"),
        "a host without the stream is polled"
    );
    // The real program streams on s (one process, through one ssh channel); p runs none.
    let on_s = streams(&net, "s");
    assert_eq!(on_s.len(), 1, "{on_s:?}");
    assert!(streams(&net, "p").is_empty());

    let t0 = Instant::now();
    net.host("s").ask(0, "which branch?");
    until(&mut src, 5_000, "s's Builder waiting", |s| {
        row(s, "s", "Builder").is_some_and(|r| r.state == BoardState::Waiting)
    });
    let took = t0.elapsed();
    eprintln!(
        "a change on the streaming host showed after {} ms",
        took.as_millis()
    );
    assert!(took.as_millis() < 1_000, "{took:?}");

    // The polled host's change shows too (within its 2 s poll).
    net.host("p").ask(0, "which flag?");
    until(&mut src, 5_000, "p's Builder waiting", |s| {
        row(s, "p", "Builder").is_some_and(|r| r.state == BoardState::Waiting)
    });

    // The remote stream freezes (no line, no heartbeat; ssh itself still answers): not
    // answering within 10 s, rows kept, not live; p unaffected.
    let frozen = on_s[0];
    let stop = |sig| {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(frozen), sig);
    };
    stop(nix::sys::signal::Signal::SIGSTOP);
    let t1 = Instant::now();
    let s = until(&mut src, 10_000, "s not answering", |s| {
        host_state(s, "s") == HostState::NotAnswering
    });
    eprintln!(
        "the frozen stream read not answering after {} ms",
        t1.elapsed().as_millis()
    );
    let r = row(&s, "s", "Builder").unwrap();
    assert!(!r.host.as_ref().unwrap().answering);
    assert_eq!(r.state, BoardState::Waiting, "the last rows are kept");
    assert_eq!(host_state(&s, "p"), HostState::Answering);
    stop(nix::sys::signal::Signal::SIGCONT);
    until(&mut src, 20_000, "s answering again", |s| {
        host_state(s, "s") == HostState::Answering
    });
    // The frozen stream was let go: a new one replaced it, never two.
    let one = crate::mux_support::wait_for(10_000, || {
        let now = streams(&net, "s");
        (now.len() == 1 && !now.contains(&frozen)).then_some(now)
    });
    assert!(one.is_some(), "streams on s: {:?}", streams(&net, "s"));
}
