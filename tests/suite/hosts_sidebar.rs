//! The real sidebar (`intercom-pane monitor`, the built binary) in a private tmux pane over
//! real sshd hosts, read with `capture-pane`: what the person sees. Every host's rows appear
//! tagged with the host; a worker asking on host b shows at once; b cut off reads "not
//! answering" with its rows kept (dated, not live) while host a and this machine go on.

use crate::hosts_support::Net;
use crate::mux_support::wait_for;

#[test]
#[cfg_attr(
    not(hosts_tier),
    ignore = "needs root, OpenSSH's sshd, ssh, ssh-keygen, ip and unshare (the multi-host tier; .ci/run installs openssh-server)"
)]
fn the_sidebar_shows_every_hosts_rows_and_a_silent_host() {
    let net = Net::new(&[("a", &["Builder"]), ("b", &["Reviewer"])], &["Local"]);
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
    seen("every host's rows", 30_000, &|c| {
        c.contains("a:Builder") && c.contains("b:Reviewer") && c.contains("Local")
    });

    net.host("b").ask(0, "which region?");
    seen("b's Reviewer waiting", 5_000, &|c| {
        c.lines()
            .any(|l| l.contains("b:Reviewer") && l.to_lowercase().contains("wait"))
    });

    net.host("b").link(false);
    let c = seen("b not answering", 15_000, &|c| {
        c.contains("host b: not answering since")
    });
    eprintln!("the sidebar with b cut off:\n{c}");
    assert!(c.contains("b:Reviewer"), "its rows stay listed:\n{c}");
    assert!(c.contains("a:Builder"), "{c}");
    assert!(
        !c.contains("host a:"),
        "an answering host has no line:\n{c}"
    );
    // No ssh words leaked onto the screen outside the host's own line.
    assert!(!c.contains("Warning:") && !c.contains("debug1"), "{c}");
    net.host("b").link(true);
    seen("b answering again", 20_000, &|c| {
        !c.contains("host b: not answering")
    });
}

/// The hosts view (`m`) of the real sidebar: every host of the file with its state, since when,
/// its rows and its last answer; `H` there asks the selected host again at once (a host whose
/// key was unknown is otherwise asked again only after 30 s).
#[test]
#[cfg_attr(
    not(hosts_tier),
    ignore = "needs root, OpenSSH's sshd, ssh, ssh-keygen, ip and unshare (the multi-host tier; .ci/run installs openssh-server)"
)]
fn the_hosts_view_lists_every_host_and_retries_the_selected_one() {
    let mut net = Net::new(
        &[("a", &["Builder"]), ("b", &["Reviewer", "Tester"])],
        &["Local"],
    );
    let screen = net.sidebar();
    screen.tmux(&["resize-window", "-t", "mon", "-x", "160", "-y", "30"]);
    let capture = || screen.tmux(&["capture-pane", "-p", "-t", "mon"]);
    let keys = |k: &str| {
        screen.tmux(&["send-keys", "-t", "mon", k]);
    };
    let log = net.dir.path().join("sidebar.log");
    let seen = |what: &str, ms: u64, pred: &dyn Fn(&str) -> bool| -> String {
        wait_for(ms, || {
            let c = capture();
            pred(&c).then_some(c)
        })
        .unwrap_or_else(|| {
            panic!(
                "{what}: not on screen within {ms} ms:\n{}\nlog:\n{}",
                capture(),
                std::fs::read_to_string(&log).unwrap_or_default()
            )
        })
    };
    seen("every host's rows", 30_000, &|c| {
        c.contains("a:Builder") && c.contains("b:Tester")
    });
    keys("m");
    let c = seen("the hosts view", 5_000, &|c| {
        c.contains("Hosts: 2 other, 2 answering")
    });
    let line = |c: &str, start: &str| -> String {
        c.lines()
            .skip_while(|l| !l.trim_start_matches('▸').trim_start().starts_with(start))
            .take(2)
            .collect::<Vec<_>>()
            .join("\n")
    };
    let a = line(&c, "a  answering");
    assert!(
        a.starts_with("▸ a  answering"),
        "the first host selected:\n{c}"
    );
    assert!(
        a.contains("· 1 row · last answered") && a.contains("via watch"),
        "{c}"
    );
    assert!(line(&c, "b  answering").contains("· 2 rows ·"), "{c}");
    assert!(!c.contains("a:Builder"), "the view covers the list:\n{c}");
    assert!(
        c.contains("H/⏎ retry now"),
        "its keys on the key line:\n{c}"
    );

    // b stops answering: the view says so, with ssh's words; a goes on answering.
    net.host_mut("b").kill_sshd();
    // Its first words are the stream's end; the next attempt (1 s later) meets a closed port.
    let c = seen("b not answering in the view", 20_000, &|c| {
        line(c, "b  not answering").contains("last answered") && c.contains("refused")
    });
    eprintln!("the hosts view with b's sshd stopped:\n{c}");
    let b = line(&c, "b  not answering");
    assert!(
        b.contains("· 2 rows · last answered"),
        "its rows kept:\n{c}"
    );
    assert!(line(&c, "a  answering").contains("· 1 row ·"), "{c}");
    assert!(c.contains("Hosts: 2 other, 1 answering"), "{c}");

    // b back with a key not known here: refused, asked again only every 30 s.
    net.forget(net.host("b"));
    net.host_mut("b").start_sshd();
    seen("b's key unknown", 20_000, &|c| {
        c.contains("b  host key unknown")
    });
    net.trust(net.host("b"));
    keys("j");
    seen("b selected", 5_000, &|c| {
        c.contains("▸ b  host key unknown")
    });
    let asked = std::time::Instant::now();
    keys("H");
    seen("the retry said", 5_000, &|c| {
        c.contains("asking host b again now")
    });
    seen("b answering after H", 12_000, &|c| {
        c.contains("▸ b  answering")
    });
    assert!(
        asked.elapsed() < std::time::Duration::from_secs(20),
        "answered only after its own 30 s pause: {:?}",
        asked.elapsed()
    );
    // An answering host has nothing to retry; Esc goes back to the list.
    keys("H");
    seen("nothing to retry", 5_000, &|c| {
        c.contains("host b is answering")
    });
    keys("Escape");
    seen("the list again", 5_000, &|c| {
        c.contains("a:Builder") && !c.contains("Hosts: 2 other")
    });
}
