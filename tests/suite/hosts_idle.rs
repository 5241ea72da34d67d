//! The real sidebar over two answering hosts, idle (nothing changes anywhere): its threads for
//! the other hosts sleep until something comes. Each host's thread wakes once per line of its
//! stream (a heartbeat every 2 s), never on a timer of its own; the hosts file's thread wakes
//! only for the file (inotify) or the stop. Counted from the kernel's context switches of
//! each thread (`/proc/PID/task/TID/status`) over 10 s. The sidebar's `--no-probe` reaches the
//! hosts: their streams check no connection.

use std::time::Duration;

use crate::hosts_support::Net;
use crate::mux_support::wait_for;

/// Context switches (voluntary and not) of `pid`'s threads named `name`, summed.
fn switches(pid: i32, name: &str) -> Option<u64> {
    let mut total = None;
    for e in std::fs::read_dir(format!("/proc/{pid}/task"))
        .ok()?
        .flatten()
    {
        let dir = e.path();
        let comm = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
        if comm.trim_end() != name {
            continue;
        }
        let status = std::fs::read_to_string(dir.join("status")).unwrap_or_default();
        let n: u64 = status
            .lines()
            .filter(|l| l.contains("ctxt_switches:"))
            .filter_map(|l| l.split_whitespace().last()?.parse::<u64>().ok())
            .sum();
        *total.get_or_insert(0) += n;
    }
    total
}

#[test]
#[cfg_attr(
    not(hosts_tier),
    ignore = "needs root, OpenSSH's sshd, ssh, ssh-keygen, ip and unshare (the multi-host tier; .ci/run installs openssh-server)"
)]
fn an_idle_sidebar_wakes_for_other_hosts_only_when_they_say_something() {
    let net = Net::new(&[("a", &["Builder"]), ("b", &["Reviewer"])], &["Local"]);
    let screen = net.sidebar();
    screen.tmux(&["resize-window", "-t", "mon", "-x", "160", "-y", "30"]);
    let capture = || screen.tmux(&["capture-pane", "-p", "-t", "mon"]);
    wait_for(30_000, || {
        let c = capture();
        (c.contains("a:Builder") && c.contains("b:Reviewer")).then_some(())
    })
    .unwrap_or_else(|| panic!("every host's rows:\n{}", capture()));
    let pid: i32 = screen
        .tmux(&["display-message", "-p", "-t", "mon", "#{pane_pid}"])
        .trim()
        .parse()
        .unwrap();
    // Settled: both streams running, their whole boards in.
    std::thread::sleep(Duration::from_secs(3));
    let names = ["ip-host-a", "ip-host-b", "ip-hosts-file"];
    let before: Vec<u64> = names
        .iter()
        .map(|n| switches(pid, n).unwrap_or_else(|| panic!("no thread {n}")))
        .collect();
    let secs = 10;
    std::thread::sleep(Duration::from_secs(secs));
    let after: Vec<u64> = names.iter().map(|n| switches(pid, n).unwrap()).collect();
    let woke: Vec<u64> = after.iter().zip(&before).map(|(a, b)| a - b).collect();
    eprintln!("in {secs} s idle: {names:?} woke {woke:?} times");
    // A heartbeat every 2 s: 5 lines each, with room for a loaded machine (a timer of 250 ms
    // alone would be 40).
    for (n, w) in names.iter().zip(&woke).take(2) {
        assert!(*w <= 15, "{n} woke {w} times in {secs} s");
    }
    assert!(
        woke[2] <= 2,
        "the hosts file's thread woke {} times",
        woke[2]
    );
    let c = capture();
    assert!(
        c.contains("a:Builder") && !c.contains("not answering"),
        "{c}"
    );
    // The sidebar's `--no-probe` reaches every host: no stream there checks connections.
    for h in ["a", "b"] {
        let streams = net.host(h).streams();
        assert!(!streams.is_empty(), "no stream on {h}");
        for pid in streams {
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let words: Vec<&[u8]> = cmd.split(|b| *b == 0).collect();
            assert!(
                words.contains(&&b"--heartbeat-secs"[..]) && !words.contains(&&b"--probe"[..]),
                "{h}'s stream: {}",
                String::from_utf8_lossy(&cmd)
            );
        }
    }
}
