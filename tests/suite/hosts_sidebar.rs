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
