//! The board over several machines, in this process (the sidebar's own source, `HostsSource`,
//! without the terminal), against real sshd servers in network namespaces: rows of every host
//! tagged, names repeating across hosts, a change on a host arriving, and each host's own state.

use std::time::Instant;

use intercom_pane::seam::states::BoardState;

use crate::hosts_support::Net;
pub use crate::hosts_support::{all_answering, board, host_state, names, row, until};

#[test]
#[cfg_attr(
    not(hosts_tier),
    ignore = "needs root, OpenSSH's sshd, ssh, ssh-keygen, ip and unshare (the multi-host tier; .ci/run installs openssh-server)"
)]
fn rows_of_three_hosts_are_tagged_and_a_question_arrives() {
    let net = Net::new(
        &[
            ("a", &["Builder", "Reviewer"]),
            ("b", &["Builder", "Reviewer"]),
            ("c", &["Builder"]),
        ],
        &["Builder"],
    );
    let mut src = board(&net);
    let s = until(
        &mut src,
        30_000,
        "every host answering with its rows",
        |s| all_answering(s) && s.rows.len() == 6,
    );
    assert_eq!(
        names(&s.rows),
        [
            "a:Builder idle",
            "a:Reviewer idle",
            "b:Builder idle",
            "b:Reviewer idle",
            "c:Builder idle",
            "local:Builder idle"
        ]
    );
    // The same name on four machines is four seats, each keyed with its host.
    let ids: std::collections::HashSet<&str> = s.rows.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids.len(), 6);
    let b = row(&s, "b", "Builder").unwrap();
    assert_eq!(b.host.as_ref().unwrap().key, "root/Builder");
    assert!(
        b.state_source.to_string().starts_with("host b: "),
        "{}",
        b.state_source
    );
    assert!(
        b.pane.as_ref().unwrap().pi.is_some(),
        "the pi the board shows: {b:?}"
    );
    // A worker on b asks a question: the board shows it waiting, with the question.
    let t0 = Instant::now();
    net.host("b").ask(0, "staging or production?");
    let s = until(&mut src, 10_000, "b's Builder waiting", |s| {
        row(s, "b", "Builder").is_some_and(|r| r.state == BoardState::Waiting)
    });
    let took = t0.elapsed();
    let via = s.hosts.iter().find(|h| h.name == "b").and_then(|h| h.via);
    eprintln!(
        "b's Builder read waiting after {} ms (via {via:?})",
        took.as_millis()
    );
    // Every host runs this build, which streams: within 1 s (the bar).
    assert_eq!(via, Some("watch"));
    assert!(took.as_millis() < 1_000, "{took:?}");
    let r = row(&s, "b", "Builder").unwrap();
    assert!(r
        .question
        .as_deref()
        .unwrap()
        .contains("staging or production?"));
    // Nothing else moved.
    assert_eq!(row(&s, "a", "Builder").unwrap().state, BoardState::Idle);
    assert_eq!(row(&s, "local", "Builder").unwrap().state, BoardState::Idle);
}
