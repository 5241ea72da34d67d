//! The board over several machines, in this process (the sidebar's own source, `HostsSource`,
//! without the terminal), against real sshd servers in network namespaces: rows of every host
//! tagged, names repeating across hosts, a change on a host arriving, and each host's own state.

use std::time::{Duration, Instant};

use clap::Parser;
use intercom_pane::cli::{Cli, Command};
use intercom_pane::clock::{Clock, SystemClock};
use intercom_pane::cmd::monitor_cmd::ScanSource;
use intercom_pane::hosts::board::HostsSource;
use intercom_pane::snapshot::{HostState, Row, Snapshot};
use intercom_pane::states::BoardState;

use crate::hosts_support::Net;

/// The board of `net`: this machine's passes every 500 ms and every host of the hosts file.
pub fn board(net: &Net) -> HostsSource {
    let mut argv = vec![
        "intercom-pane".to_string(),
        "monitor".into(),
        "--no-probe".into(),
    ];
    argv.extend(net.local_args());
    let Command::Monitor(m) = Cli::try_parse_from(argv).unwrap().command else {
        unreachable!()
    };
    let r = intercom_pane::cmd::options::resolve(&m.src).unwrap();
    let clock: std::sync::Arc<dyn Clock> = std::sync::Arc::new(SystemClock);
    let memory = std::sync::Arc::new(intercom_pane::evidence::ScanMemory::new());
    let local = ScanSource::new(r.opts, clock.clone(), false, memory);
    HostsSource::start(
        Box::new(local),
        net.board_hosts(),
        clock,
        Duration::from_millis(500),
    )
    .unwrap()
}

/// The board once `pred` holds, within `ms`; the last board in the panic otherwise.
pub fn until(
    src: &mut HostsSource,
    ms: u64,
    what: &str,
    pred: impl Fn(&Snapshot) -> bool,
) -> Snapshot {
    let end = Instant::now() + Duration::from_millis(ms);
    let mut last = None;
    while Instant::now() < end {
        if let Some(s) = src.changed_within(end.saturating_duration_since(Instant::now())) {
            if pred(&s) {
                return s;
            }
            last = Some(s);
        }
    }
    panic!(
        "{what}: not within {ms} ms; last board: {:#?}",
        last.map(|s| (s.hosts, names(&s.rows)))
    );
}

/// Each row as `host:name state` (`local` for this machine's).
pub fn names(rows: &[Row]) -> Vec<String> {
    let mut v: Vec<String> = rows
        .iter()
        .map(|r| {
            let h = r.host.as_ref().map_or("local", |h| h.name.as_str());
            format!("{h}:{} {}", r.name, r.state.as_str())
        })
        .collect();
    v.sort();
    v
}

pub fn host_state(s: &Snapshot, name: &str) -> HostState {
    s.hosts
        .iter()
        .find(|h| h.name == name)
        .map(|h| h.state)
        .unwrap_or(HostState::Connecting)
}

pub fn row<'a>(s: &'a Snapshot, host: &str, name: &str) -> Option<&'a Row> {
    s.rows
        .iter()
        .find(|r| r.name == name && r.host.as_ref().map_or("local", |h| h.name.as_str()) == host)
}

pub fn all_answering(s: &Snapshot) -> bool {
    !s.hosts.is_empty() && s.hosts.iter().all(|h| h.state == HostState::Answering)
}

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
