//! Hosts without restarts: the hosts file written, extended, cut and changed under a running
//! sidebar (the real binary in a private tmux pane, read with `capture-pane`), a running
//! merged stream (`status --watch --host all`) and a running `watch`, over real sshd servers
//! in network namespaces. Each edit reaches them within a second (the stream's `host` line),
//! the host's rows follow, and a host taken out of the file leaves the sidebar and the
//! stream, with nothing of theirs left running there.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::hosts_merged::until;
use crate::hosts_support::Net;
use crate::mux_support::wait_for;

fn streams(net: &Net, h: &str) -> Vec<i32> {
    net.host(h).streams()
}

/// Whether `pid` has a thread named `name`.
fn has_thread(pid: i32, name: &str) -> bool {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|d| {
            d.flatten().any(|e| {
                std::fs::read_to_string(e.path().join("comm")).is_ok_and(|c| c.trim_end() == name)
            })
        })
        .unwrap_or(false)
}

fn is_host(v: &Value, host: &str, state: &str) -> bool {
    v["kind"] == "host" && v["host"] == host && v["state"] == state
}

#[test]
#[cfg_attr(
    not(hosts_tier),
    ignore = "needs root, OpenSSH's sshd, ssh, ssh-keygen, ip and unshare (the multi-host tier; .ci/run installs openssh-server)"
)]
fn the_hosts_file_edited_under_a_running_sidebar_and_stream() {
    let net = Net::new(&[("a", &["Builder"]), ("b", &["Reviewer"])], &["Local"]);
    // The coordinator's pi places the sidebar first; the hosts file comes later.
    std::fs::remove_file(&net.hosts_file).unwrap();
    let bin = env!("CARGO_BIN_EXE_intercom-pane");
    let screen = net.sidebar();
    screen.tmux(&["resize-window", "-t", "mon", "-x", "160", "-y", "30"]);
    let capture = || screen.tmux(&["capture-pane", "-p", "-t", "mon"]);
    let seen = |what: &str, ms: u64, pred: &dyn Fn(&str) -> bool| -> String {
        wait_for(ms, || {
            let c = capture();
            pred(&c).then_some(c)
        })
        .unwrap_or_else(|| panic!("{what}: not on screen within {ms} ms:\n{}", capture()))
    };
    let log = net.dir.path().join("log.jsonl");
    let s = net.lines(
        &[
            "status",
            "--watch",
            "--host",
            "all",
            "--heartbeat-secs",
            "1",
        ],
        true,
        &log,
    );
    // `watch` (alerts without a sidebar) follows the file too: its log says each host's state.
    let watch_log = net.dir.path().join("watch-log.jsonl");
    let watching = net.watch(&["--no-status-line"], &watch_log);
    let watch_says = |h: &str, state: &str| {
        std::fs::read_to_string(&watch_log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .any(|v| v["event"] == "host_state" && v["host"] == h && v["state"] == state)
    };
    // The whole board first: this machine's seat is in it (no host file names another yet).
    until(&s.alerts, 20_000, "this machine's seat", |v| {
        let in_board = v["kind"] == "board"
            && v["seats"]
                .as_array()
                .is_some_and(|s| s.iter().any(|x| x["host"] == "local"));
        in_board || (v["kind"] == "seat" && v["host"] == "local")
    });
    seen("this machine's row", 20_000, &|c| c.contains("Local"));
    // No host named yet: the sidebar runs its passes as without hosts (no board thread).
    let pid: i32 = screen
        .tmux(&["display-message", "-p", "-t", "mon", "#{pane_pid}"])
        .trim()
        .parse()
        .unwrap();
    assert!(has_thread(pid, "ip-hosts-file"), "the file is followed");
    assert!(
        !has_thread(pid, "ip-local-passes"),
        "a board thread with no host"
    );

    // Written: a joins both within a second, then its rows come.
    let t0 = Instant::now();
    net.write_hosts_only(&["a"], |_, _| {});
    until(&s.alerts, 5_000, "a on the stream", |v| {
        v["kind"] == "host" && v["host"] == "a"
    });
    let took = t0.elapsed();
    eprintln!("a written → on the stream after {} ms", took.as_millis());
    assert!(took < Duration::from_millis(1_500), "{took:?}");
    until(&s.alerts, 30_000, "a's Builder on the stream", |v| {
        v["kind"] == "seat" && v["host"] == "a"
    });
    seen("a's row on the sidebar", 30_000, &|c| {
        c.contains("a:Builder")
    });
    assert!(has_thread(pid, "ip-local-passes"), "the board's own passes");
    let heard = wait_for(30_000, || watch_says("a", "answering").then_some(()));
    assert!(heard.is_some(), "watch never followed a");

    // Extended: b joins; a goes on.
    net.write_hosts_only(&["a", "b"], |_, _| {});
    until(&s.alerts, 30_000, "b's Reviewer on the stream", |v| {
        v["kind"] == "seat" && v["host"] == "b"
    });
    seen("b's row on the sidebar", 30_000, &|c| {
        c.contains("b:Reviewer") && c.contains("a:Builder")
    });
    let each = wait_for(10_000, || (streams(&net, "a").len() == 3).then_some(()));
    assert!(
        each.is_some(),
        "a streams to the sidebar, the stream and watch, one each: {:?}",
        streams(&net, "a")
    );

    // Cut: a leaves the sidebar, the stream and watch; what they ran on a ends.
    let t1 = Instant::now();
    net.write_hosts_only(&["b"], |_, _| {});
    let gone = until(&s.alerts, 5_000, "a removed", |v| {
        is_host(v, "a", "removed")
    });
    eprintln!(
        "a cut → removed from the stream after {} ms",
        t1.elapsed().as_millis()
    );
    assert!(
        t1.elapsed() < Duration::from_millis(1_500),
        "{:?}",
        t1.elapsed()
    );
    assert!(
        gone.iter()
            .any(|v| v["kind"] == "removed" && v["host"] == "a"),
        "a's seat removed first: {gone:#?}"
    );
    seen("a's row gone from the sidebar", 5_000, &|c| {
        !c.contains("a:Builder") && c.contains("b:Reviewer") && c.contains("Local")
    });
    let none = wait_for(15_000, || streams(&net, "a").is_empty().then_some(()));
    assert!(none.is_some(), "left on a: {:?}", streams(&net, "a"));

    // Changed: b's entry names another program (a wrapper of the same): b starts again.
    let wrapper = net.dir.path().join("ip-wrapper");
    std::fs::write(&wrapper, format!("#!/bin/sh\nexec \"{bin}\" \"$@\"\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let w = wrapper.display().to_string();
    net.write_hosts_only(&["b"], |_, e| e["bin"] = w.clone().into());
    let again = until(&s.alerts, 5_000, "b started again", |v| {
        is_host(v, "b", "connecting")
    });
    assert!(
        again.iter().any(|v| is_host(v, "b", "removed")),
        "{again:#?}"
    );
    until(&s.alerts, 30_000, "b's Reviewer again", |v| {
        v["kind"] == "seat" && v["host"] == "b"
    });
    seen("b's row after the change", 30_000, &|c| {
        c.contains("b:Reviewer")
    });
    // A file refused (not JSON) changes nothing: both keep b.
    std::fs::write(&net.hosts_file, "{not json").unwrap();
    std::thread::sleep(Duration::from_millis(1_500));
    let c = capture();
    assert!(c.contains("b:Reviewer"), "{c}");
    assert_eq!(s.stop().code(), Some(0));
    assert_eq!(watching.stop().code(), Some(0));
}
