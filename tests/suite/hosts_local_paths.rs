//! A remote row's socket, pane and pid are never used on this machine (docs/behaviour.md §12).
//! Host a's tmux server listens at a path that a local tmux server answers too (in this rig the
//! host's server runs here: exactly the case of `/tmp/tmux-1000/default` naming a local server
//! on a real machine), with a person's client attached and looking at a's worker pane. `watch`
//! over the hosts sets its status option only on this machine's own server, never on the
//! server at a's path, and a question of a's worker alerts: that a client here looks at a pane
//! `%N` says nothing about the pane `%N` of host a.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::hosts_support::Net;
use crate::mux_support::wait_for;

const OPTION: &str = "@intercom_pane_status";

#[test]
#[cfg_attr(
    not(hosts_tier),
    ignore = "needs root, OpenSSH's sshd, ssh, ssh-keygen, ip and unshare (the multi-host tier; .ci/run installs openssh-server)"
)]
fn watch_never_sets_or_asks_the_server_at_a_remote_rows_socket_path() {
    let net = Net::new(&[("a", &["Builder"])], &["Builder"]);
    let a_tmux = net.host("a").tmux.as_ref().unwrap();
    let local_tmux = net.local_tmux.as_ref().unwrap();
    // A person's client here, attached to the server at a's path, looking at a's worker.
    let mut client = Command::new("script")
        .args(["-qfec"])
        .arg(format!(
            "tmux -S {} attach-session -t =Builder",
            a_tmux.sock.display()
        ))
        .arg("/dev/null")
        .env("TERM", "xterm")
        .env_remove("TMUX")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(10_000, || {
        (!a_tmux
            .tmux(&["list-clients", "-F", "#{client_name}"])
            .trim()
            .is_empty())
        .then_some(())
    })
    .expect("a client attached at a's path");

    let log = net.dir.path().join("log.jsonl");
    let w = net.watch(&[], &log);
    // a's seat known (recorded in the memory as first seen, not alerted).
    let memory = intercom_pane::seam::alerts::memory_file::path(&net.local.join("data"));
    let end = Instant::now() + Duration::from_secs(30);
    while !std::fs::read_to_string(&memory).is_ok_and(|m| m.contains("a\\u001f")) {
        assert!(Instant::now() < end, "a's seat never known");
        std::thread::sleep(Duration::from_millis(100));
    }
    net.host("a").ask(0, "ship it?");
    let alert = w
        .alerts
        .recv_timeout(Duration::from_secs(15))
        .expect("a's question alerts: a client here looking at a pane of the same id is not someone looking at a's pane");
    assert_eq!(alert["host"], "a", "{alert}");
    // This machine's own server carries the count (1 waiting: a's worker)…
    let shown = wait_for(10_000, || {
        let v = local_tmux.tmux(&["show-options", "-gqv", OPTION]);
        (!v.trim().is_empty()).then_some(v)
    })
    .expect("the status option on this machine's own server");
    eprintln!("status here: {}", shown.trim());
    // …the server at a's path never gets it.
    assert_eq!(a_tmux.tmux(&["show-options", "-gqv", OPTION]).trim(), "");
    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    let a_sock = a_tmux.sock.display().to_string();
    for l in logged.lines().filter(|l| l.contains("alert_")) {
        assert!(!l.contains(&a_sock), "a's socket path used here: {l}");
    }
    w.stop();
    let _ = client.kill();
    let _ = client.wait();
}
