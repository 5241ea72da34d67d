//! ssh's own words never reach the terminal (docs/interop.md §13), on a real sshd in a network
//! namespace: the shared connection's control path is stale (something that is not a master
//! sits there), so the real ssh client complains ("… disabling multiplexing") and goes on
//! without it. `reply --host` and `close-worker --host` print only what the program there
//! said; ssh's words land in the log (`host_call`'s `ssh`).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::hosts_support::{Net, SimHost};
use crate::mux_support::wait_for;

/// The control socket path ssh itself computes for `h` in `ctl` (`ssh -G` expands `%C`).
fn control_path(h: &SimHost, ctl: &Path) -> PathBuf {
    let out = Command::new("ssh")
        .arg("-F")
        .arg(h.dir.join("ssh_config"))
        .arg("-G")
        .arg("-o")
        .arg(format!("ControlPath={}/%C", ctl.display()))
        .arg(&h.addr)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("controlpath "))
        .unwrap_or_else(|| panic!("no controlpath in ssh -G: {text}"));
    PathBuf::from(line.trim())
}

fn ssh_words(s: &str) -> Vec<&str> {
    s.lines()
        .filter(|l| {
            [
                "mux_",
                "muxclient",
                "multiplexing",
                "ControlSocket",
                "Control socket",
                "ssh:",
            ]
            .iter()
            .any(|m| l.contains(m))
        })
        .collect()
}

#[test]
#[cfg_attr(
    not(hosts_tier),
    ignore = "needs root, OpenSSH's sshd, ssh, ssh-keygen, ip and unshare (the multi-host tier; .ci/run installs openssh-server)"
)]
fn a_stale_master_says_nothing_on_the_terminal_of_reply_and_close_worker() {
    let net = Net::new(&[("a", &["Builder", "Reviewer"])], &[]);
    let ctl = net.dir.path().join("run/intercom-pane/ssh");
    std::fs::create_dir_all(&ctl).unwrap();
    let stale = control_path(net.host("a"), &ctl);
    // Not a master: a folder where the socket should be (ssh can neither reach nor replace it).
    std::fs::create_dir_all(&stale).unwrap();
    let log = net.dir.path().join("log.jsonl");

    let mut c = net.command(&[
        "reply",
        "--host",
        "a",
        "Builder",
        "hello over a stale master",
    ]);
    c.env("INTERCOM_PANE_LOG", &log);
    let o = c.output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(0), "stderr: {err}");
    assert!(
        ssh_words(&err).is_empty(),
        "ssh's words on the terminal: {err}"
    );
    // The receipt names the host it acted on.
    let receipt = String::from_utf8_lossy(&o.stdout);
    assert!(
        !receipt.trim().is_empty() && receipt.lines().all(|l| l.starts_with("host a: ")),
        "{receipt}"
    );
    wait_for(10_000, || {
        net.host("a")
            .transcript(0)
            .contains("hello over a stale master")
            .then_some(())
    })
    .expect("the reply arrived");

    // A close refused there (the seat is not the one expected): the program's own refusal comes
    // back on the terminal, ssh's words do not.
    let mut c = net.command(&[
        "close-worker",
        "--host",
        "a",
        "--expect-seat",
        r#"{"pid": 1}"#,
        "Reviewer",
    ]);
    c.env("INTERCOM_PANE_LOG", &log);
    let o = c.output().unwrap();
    let err2 = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(14), "stderr: {err2}");
    assert!(!err2.trim().is_empty(), "the refusal there is shown");
    assert!(
        ssh_words(&err2).is_empty(),
        "ssh's words on the terminal: {err2}"
    );

    // What ssh said is kept in the log, with the host.
    let logged = std::fs::read_to_string(&log).unwrap();
    let said: Vec<&str> = logged
        .lines()
        .filter(|l| l.contains("\"host_call\"") && l.contains("multiplexing"))
        .collect();
    assert!(!said.is_empty(), "ssh's words are not in the log: {logged}");
    assert!(
        said.iter().all(|l| l.contains("\"host\":\"a\"")),
        "{said:?}"
    );
}
