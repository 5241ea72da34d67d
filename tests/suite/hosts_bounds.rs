//! Nothing left behind on a host that hangs (docs/behaviour.md §12), on real sshd servers in
//! network namespaces: host h answers hello but its board program hangs. Counted on h before,
//! during and after: at most one hung program at a time while the board retries, none and no
//! sshd session once the board ends; a command whose host was cut off mid-call is ended there
//! by the host's own time limit; a host whose program floods is refused and its program ended
//! there.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::time::{Duration, Instant};

use intercom_pane::seam::snapshot::HostState;

use crate::hosts_board::{board, host_state, until};
use crate::hosts_support::{Net, SimHost};
use crate::mux_support::wait_for;

/// The marker of the hung program (`sleep` with a number no other process uses).
const HANG: &str = "1001";

/// A program for h: `hello` and `--version` answered by the real one, everything else hangs.
fn hang_bin(net: &Net) -> String {
    let h = net.host("h");
    let path = h.dir.join("hang-bin");
    std::fs::write(
        &path,
        format!(
            "#!/bin/sh\ncase \"$1\" in hello|--version) exec intercom-pane \"$@\";; esac\n\
             exec sleep {HANG}\n"
        ),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.display().to_string()
}

/// A program for f: `hello` answered by the real one, everything else floods its stdout.
fn flood_bin(net: &Net) -> String {
    let path = net.host("f").dir.join("flood-bin");
    std::fs::write(
        &path,
        "#!/bin/sh\ncase \"$1\" in hello|--version) exec intercom-pane \"$@\";; esac\n\
         exec yes flood\n",
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.display().to_string()
}

/// The flooding programs running on `h`.
fn floods(h: &SimHost) -> usize {
    h.sshd_tree()
        .iter()
        .filter(|pid| {
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            cmd.starts_with(b"yes\0flood")
        })
        .count()
}

/// The commands this machine runs on `h` at once (each under the host's `timeout`: one per
/// channel).
fn channels(h: &SimHost) -> usize {
    h.sshd_tree()
        .iter()
        .filter(|pid| {
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            cmd.split(|b| *b == 0)
                .next()
                .is_some_and(|w| w.ends_with(b"timeout"))
        })
        .count()
}

/// What runs on `h` under its sshd: (hung programs, sshd processes besides the listener).
fn on_host(h: &SimHost) -> (usize, usize) {
    let tree = h.sshd_tree();
    let (mut hung, mut sshd) = (0, 0);
    for pid in tree.iter().skip(1) {
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let words: Vec<&[u8]> = cmd.split(|b| *b == 0).collect();
        if words.first().is_some_and(|w| w.ends_with(b"sleep"))
            && words.get(1) == Some(&HANG.as_bytes())
        {
            hung += 1;
        }
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        if comm.starts_with("sshd") {
            sshd += 1;
        }
    }
    (hung, sshd)
}

#[test]
#[cfg_attr(
    not(hosts_tier),
    ignore = "needs root, OpenSSH's sshd, ssh, ssh-keygen, ip and unshare (the multi-host tier; .ci/run installs openssh-server)"
)]
fn a_hung_host_holds_one_program_at_most_and_nothing_after_the_board_ends() {
    let net = Net::new(&[("a", &["Builder"]), ("h", &["Builder"])], &[]);
    let bin = hang_bin(&net);
    net.write_hosts_file(&[("h", bin.as_str())]);
    let before = on_host(net.host("h"));
    assert_eq!(before, (0, 0), "nothing runs on h before the board");

    let mut src = board(&net);
    until(
        &mut src,
        30_000,
        "h not answering (its stream hangs)",
        |s| {
            host_state(s, "h") == HostState::NotAnswering
                && host_state(s, "a") == HostState::Answering
        },
    );
    // 25 s: the board retries h (1, 2, 4, 8 s apart) several times meanwhile.
    let (mut max_hung, mut max_sshd, mut seen_hung, mut max_channels) = (0, 0, false, 0);
    let end = Instant::now() + Duration::from_secs(25);
    while Instant::now() < end {
        let (hung, sshd) = on_host(net.host("h"));
        max_hung = max_hung.max(hung);
        max_channels = max_channels.max(channels(net.host("h")));
        max_sshd = max_sshd.max(sshd);
        seen_hung |= hung > 0;
        let _ = src.changed_within(Duration::from_millis(100));
    }
    eprintln!(
        "during: at most {max_hung} hung programs, {max_channels} commands, {max_sshd} sshd \
         processes on h"
    );
    assert!(
        max_channels <= 4,
        "{max_channels} commands at once on h (the cap is 4)"
    );
    assert!(seen_hung, "the board did retry h (a hung program was seen)");
    assert!(max_hung <= 1, "{max_hung} hung programs at once on h");
    // One shared connection: sshd's own processes for it (privilege separation included).
    assert!(max_sshd <= 3, "{max_sshd} sshd processes on h");

    let t = Instant::now();
    drop(src);
    let after = wait_for(10_000, || {
        let c = on_host(net.host("h"));
        (c == (0, 0)).then_some(c)
    });
    assert_eq!(
        after,
        Some((0, 0)),
        "after the board ended: (hung, sshd) on h = {:?}",
        on_host(net.host("h"))
    );
    eprintln!(
        "after: nothing on h {} ms after the board ended",
        t.elapsed().as_millis()
    );
}

#[test]
#[cfg_attr(
    not(hosts_tier),
    ignore = "needs root, OpenSSH's sshd, ssh, ssh-keygen, ip and unshare (the multi-host tier; .ci/run installs openssh-server)"
)]
fn a_call_cut_off_mid_way_is_ended_by_the_hosts_own_time_limit() {
    let net = Net::new(&[("h", &["Builder"])], &[]);
    let bin = hang_bin(&net);
    net.write_hosts_file(&[("h", bin.as_str())]);
    let started = Instant::now();
    let mut cmd = net.command(&["status", "--json", "--host", "h"]);
    cmd.stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0);
    let mut child = cmd.spawn().unwrap();
    wait_for(15_000, || (on_host(net.host("h")).0 == 1).then_some(()))
        .expect("the status call hangs on h");
    // Cut off: no signal from here can reach h any more; this side is killed outright.
    net.host("h").link(false);
    let pgid = nix::unistd::Pid::from_raw(-(child.id() as i32));
    let _ = nix::sys::signal::kill(pgid, nix::sys::signal::Signal::SIGKILL);
    let _ = child.wait();
    // `status --host` allows 20 s: the host's own limit ends the program before that.
    let gone = wait_for(25_000, || (on_host(net.host("h")).0 == 0).then_some(()));
    let took = started.elapsed();
    net.host("h").link(true);
    assert!(
        gone.is_some(),
        "the hung program still runs on h after {took:?}"
    );
    assert!(took < Duration::from_secs(21), "ended there after {took:?}");
    eprintln!(
        "the hung program ended on h {} ms after the call began",
        took.as_millis()
    );
}

#[test]
#[cfg_attr(
    not(hosts_tier),
    ignore = "needs root, OpenSSH's sshd, ssh, ssh-keygen, ip and unshare (the multi-host tier; .ci/run installs openssh-server)"
)]
fn a_flooding_host_is_refused_and_its_program_ended_there() {
    let net = Net::new(&[("f", &["Builder"])], &[]);
    let bin = flood_bin(&net);
    net.write_hosts_file(&[("f", bin.as_str())]);
    assert_eq!(floods(net.host("f")), 0);
    let mut src = board(&net);
    let s = until(
        &mut src,
        30_000,
        "f refused (its stream is not understood)",
        |s| host_state(s, "f") == HostState::Refused,
    );
    let detail = &s.hosts.iter().find(|h| h.name == "f").unwrap().detail;
    assert!(detail.contains("not understood"), "{detail}");
    // Given up on: its program there is ended, not left flooding a closed channel.
    let gone = wait_for(8_000, || (floods(net.host("f")) == 0).then_some(()));
    assert!(
        gone.is_some(),
        "{} flooding programs still on f",
        floods(net.host("f"))
    );
    drop(src);
    let after = wait_for(10_000, || {
        let c = on_host(net.host("f"));
        (c == (0, 0) && floods(net.host("f")) == 0).then_some(c)
    });
    assert!(
        after.is_some(),
        "after the board: {:?}",
        on_host(net.host("f"))
    );
}

/// The hung programs' pids on `h`.
fn hung_pids(h: &SimHost) -> Vec<i32> {
    h.sshd_tree()
        .into_iter()
        .filter(|pid| {
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let words: Vec<&[u8]> = cmd.split(|b| *b == 0).collect();
            words.first().is_some_and(|w| w.ends_with(b"sleep"))
                && words.get(1) == Some(&HANG.as_bytes())
        })
        .collect()
}

#[test]
#[cfg_attr(
    not(hosts_tier),
    ignore = "needs root, OpenSSH's sshd, ssh, ssh-keygen, ip and unshare (the multi-host tier; .ci/run installs openssh-server)"
)]
fn a_stream_left_while_the_link_was_down_is_ended_when_the_host_is_back() {
    let net = Net::new(&[("h", &["Builder"])], &[]);
    let bin = hang_bin(&net);
    net.write_hosts_file(&[("h", bin.as_str())]);
    let mut src = board(&net);
    let first = wait_for(30_000, || {
        let _ = src.changed_within(Duration::from_millis(50));
        hung_pids(net.host("h")).first().copied()
    })
    .expect("a hung stream on h");
    // Cut off while it runs: giving it up cannot reach h.
    net.host("h").link(false);
    let detail = |s: &intercom_pane::seam::snapshot::Snapshot| {
        s.hosts
            .iter()
            .find(|x| x.name == "h")
            .map(|x| x.detail.clone())
            .unwrap_or_default()
    };
    // The stream was given up on (stalled), and a later attempt failed on the cut link.
    until(
        &mut src,
        40_000,
        "h's stream given up and h out of reach",
        |s| host_state(s, "h") == HostState::NotAnswering && !detail(s).contains("no line for"),
    );
    assert!(
        hung_pids(net.host("h")).contains(&first),
        "the program there outlived its stream (nothing could reach it)"
    );
    net.host("h").link(true);
    let gone = wait_for(40_000, || {
        let _ = src.changed_within(Duration::from_millis(50));
        (!hung_pids(net.host("h")).contains(&first)).then_some(())
    });
    assert!(
        gone.is_some(),
        "the program of the stream given up on still runs on h"
    );
    assert!(hung_pids(net.host("h")).len() <= 1);
}

#[test]
#[cfg_attr(
    not(hosts_tier),
    ignore = "needs root, OpenSSH's sshd, ssh, ssh-keygen, ip and unshare (the multi-host tier; .ci/run installs openssh-server)"
)]
fn the_sidebar_that_quits_leaves_nothing_on_a_hung_host() {
    let net = Net::new(&[("h", &["Builder"])], &["Local"]);
    let bin = hang_bin(&net);
    net.write_hosts_file(&[("h", bin.as_str())]);
    let screen = net.sidebar();
    screen.tmux(&["set-option", "-s", "exit-empty", "off"]);
    let pid: i32 = screen
        .tmux(&["display-message", "-p", "-t", "mon", "#{pane_pid}"])
        .trim()
        .parse()
        .unwrap();
    let started = start_ticks(pid).expect("the sidebar runs");
    // The sidebar quits while a hung stream of it runs on h.
    wait_for(30_000, || {
        (!hung_pids(net.host("h")).is_empty()).then_some(())
    })
    .expect("a hung stream on h");
    screen.tmux(&["send-keys", "-t", "mon", "q"]);
    // Bounded, with room for a loaded machine (CI runs the real-pi tier alongside): the quit
    // itself waits up to 2 s for the host threads, then stops the shared connections.
    // Seen once in a full CI run on 2 loaded cores: the quit took over 30 s (not reproduced
    // alone or beside the other hosts tests); the log's tail says where it was.
    // Ended: gone, exited and not yet reaped, or its pid already another process's (pids
    // wrap within a minute on a busy machine with pid_max 32768).
    wait_for(90_000, || {
        (start_ticks(pid) != Some(started) || state_of(pid) == Some('Z')).then_some(())
    })
    .unwrap_or_else(|| {
        panic!(
            "the sidebar did not quit; its threads:\n{}\nits log:\n{}",
            threads_of(pid),
            net.sidebar_log_tail()
        )
    });
    // The host's sshd ends the connection's process once it sees the master go; on a loaded
    // machine that has taken over 5 s (CI's full suite), never more than a few seconds alone.
    let after = wait_for(30_000, || {
        let c = on_host(net.host("h"));
        (c == (0, 0)).then_some(c)
    });
    assert!(
        after.is_some(),
        "after the sidebar quit: (hung, sshd) on h = {:?}; its log:\n{}",
        on_host(net.host("h")),
        net.sidebar_log_tail()
    );
}

/// Each thread of `pid`: its name, state, kernel wait channel and kernel stack (root reads it).
fn threads_of(pid: i32) -> String {
    let read = |p: String| std::fs::read_to_string(p).unwrap_or_default();
    let mut out = read(format!("/proc/{pid}/status"))
        .lines()
        .filter(|l| l.starts_with("State") || l.starts_with("PPid") || l.starts_with("Threads"))
        .collect::<Vec<_>>()
        .join("; ");
    for t in std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let d = t.path().display().to_string();
        out.push_str(&format!(
            "\n  {} {} wchan={} {}",
            read(format!("{d}/comm")).trim(),
            read(format!("{d}/stat"))
                .split(") ")
                .nth(1)
                .unwrap_or("")
                .chars()
                .next()
                .unwrap_or('?'),
            read(format!("{d}/wchan")),
            read(format!("{d}/stack")).replace('\n', " | ")
        ));
    }
    out
}

/// A process's start time (`/proc/<pid>/stat` field 22), while it exists.
fn start_ticks(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(") ")?.1.split(' ').nth(19)?.parse().ok()
}

/// A process's state letter (`R`, `S`, `Z` …), while it exists.
fn state_of(pid: i32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(") ")?.1.chars().next()
}
