//! Hosts that are refused, each for its own reason, on real sshd servers in network
//! namespaces: a host whose key is not in known_hosts (refused, never added), a host that does
//! not accept this machine's key (no prompt: BatchMode), hosts running another version (both
//! versions named), a program that is not there. Their state is said on the board and by the
//! commands; ssh's own words never reach the screen; nothing runs there.

use intercom_pane::seam::hosts::hello;
use intercom_pane::seam::snapshot::HostState;

use crate::hosts_board::{board, host_state, until};
use crate::hosts_support::Net;

fn script(net: &Net, name: &str, body: &str) -> String {
    let p = net.dir.path().join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p.display().to_string()
}

#[test]
#[cfg_attr(
    not(hosts_tier),
    ignore = "needs root, OpenSSH's sshd, ssh, ssh-keygen, ip and unshare (the multi-host tier; .ci/run installs openssh-server)"
)]
fn refused_hosts_say_why_and_run_nothing() {
    let net = Net::new(
        &[
            ("old", &["Builder"]),
            ("future", &["Builder"]),
            ("unknown", &["Builder"]),
            ("denied", &["Builder"]),
            ("missing", &["Builder"]),
        ],
        &[],
    );
    let old = script(&net, "old-ip", "case \"$1\" in --version) echo 'intercom-pane 0.0.1';; *) echo \"error: unrecognized subcommand '$1'\" >&2; exit 2;; esac");
    let future = script(&net, "future-ip", "printf '%s\\n' '{\"v\":1,\"program\":\"intercom-pane\",\"version\":\"9.0.0\",\"protocol\":99,\"echo\":null}'");
    net.write_hosts_file(&[
        ("old", &old),
        ("future", &future),
        ("missing", "/nonexistent/intercom-pane"),
    ]);
    net.forget(net.host("unknown"));
    net.host("denied").deny();
    let known_before = std::fs::read(&net.known_hosts).unwrap();

    let mut src = board(&net);
    let s = until(&mut src, 40_000, "every host refused for its reason", |s| {
        host_state(s, "old") == HostState::WrongVersion
            && host_state(s, "future") == HostState::WrongVersion
            && host_state(s, "unknown") == HostState::HostKeyUnknown
            && host_state(s, "denied") == HostState::AuthFailed
            && host_state(s, "missing") == HostState::Refused
    });
    let detail = |n: &str| s.hosts.iter().find(|h| h.name == n).unwrap().detail.clone();
    assert!(
        detail("old").contains("0.0.1") && detail("old").contains(hello::version()),
        "{}",
        detail("old")
    );
    assert!(
        detail("future").contains("9.0.0") && detail("future").contains("protocol 99"),
        "{}",
        detail("future")
    );
    assert!(
        detail("missing").contains("not installed"),
        "{}",
        detail("missing")
    );
    assert!(
        s.rows.is_empty(),
        "no refused host has rows: {:?}",
        s.rows.len()
    );

    // The commands say the same, in their own words, and run nothing there.
    for (host, words) in [
        ("unknown", "host key unknown"),
        ("denied", "authentication failed"),
        ("old", "0.0.1"),
        ("future", "9.0.0"),
    ] {
        let o = net.run(&["reply", "--host", host, "Builder", "hello there"], None);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(20), "{host}: {err}");
        assert!(err.contains(words), "{host}: {err}");
        assert!(
            !err.contains("@@@")
                && !err.contains("No ED25519")
                && !err.contains("Permission denied"),
            "{host}: ssh's words: {err}"
        );
        assert!(o.stdout.is_empty());
        assert!(!net.host(host).transcript(0).contains("hello there"));
    }
    // `scan --json --host …` says each host's state in the board's own words (one vocabulary).
    let mut args = vec!["scan", "--json"];
    for h in ["old", "future", "unknown", "denied", "missing"] {
        args.extend(["--host", h]);
    }
    let o = net.run(&args, None);
    assert_eq!(o.status.code(), Some(20), "{o:?}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for h in v["hosts"].as_array().unwrap() {
        let name = h["name"].as_str().unwrap();
        assert_eq!(
            h["state"],
            host_state(&s, name).as_str(),
            "{name}: the command's state and the board's differ: {h}"
        );
    }
    // No key was ever accepted.
    assert_eq!(std::fs::read(&net.known_hosts).unwrap(), known_before);
}
