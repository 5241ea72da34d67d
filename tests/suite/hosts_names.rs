//! A seat named as the board shows another host's row, `HOST:NAME` (docs/behaviour.md §12),
//! on a real sshd in a network namespace: `reply a:Builder …` is host a's Builder (as `--host a
//! Builder`), its receipt names a; an unknown prefix stays part of the name (refused as no such
//! seat here, nothing sent anywhere); `log`, `explain` and `review` take the same name.

use crate::hosts_support::Net;
use crate::mux_support::wait_for;

#[test]
#[cfg_attr(
    not(hosts_tier),
    ignore = "needs root, OpenSSH's sshd, ssh, ssh-keygen, ip and unshare (the multi-host tier; .ci/run installs openssh-server)"
)]
fn host_colon_name_is_that_hosts_seat() {
    let net = Net::new(&[("a", &["Builder"])], &["Builder"]);
    let o = net.run(
        &["reply", "--json", "a:Builder", "hello by host and name"],
        None,
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let receipt: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(receipt["host"], "a", "{receipt}");
    assert_eq!(receipt["agent"], "root/Builder", "{receipt}");
    wait_for(10_000, || {
        net.host("a")
            .transcript(0)
            .contains("hello by host and name")
            .then_some(())
    })
    .expect("the reply arrived on a");

    // `--host a` and the same prefix agree; an unknown prefix is part of the name.
    let o = net.run(
        &[
            "reply",
            "--host",
            "a",
            "a:Builder",
            "second by host and name",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let mut args = vec!["reply".to_string(), "zz:Builder".into(), "nope".into()];
    args.extend(net.local_args());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = net.run(&args, None);
    assert_ne!(o.status.code(), Some(0), "{o:?}");
    assert!(!net.host("a").transcript(0).contains("nope"));

    // Wherever a seat is named: log, explain and review read a's seat there, tagged with a.
    for cmd in [
        &["log", "--json", "a:Builder"][..],
        &["explain", "--json", "a:Builder"][..],
        &["review", "--json", "a:Builder"][..],
    ] {
        let o = net.run(cmd, None);
        let out = String::from_utf8_lossy(&o.stdout);
        let first: serde_json::Value = out
            .lines()
            .next()
            .and_then(|l| serde_json::from_str(l).ok())
            .or_else(|| serde_json::from_slice(&o.stdout).ok())
            .unwrap_or_else(|| panic!("{cmd:?}: not JSON: {o:?}"));
        assert_eq!(first["host"], "a", "{cmd:?}: {first}");
        assert!(
            !String::from_utf8_lossy(&o.stderr).contains("no seat"),
            "{cmd:?}: {o:?}"
        );
    }
}
