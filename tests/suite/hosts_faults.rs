//! A host's faults on the board, on real sshd servers in network namespaces: its sshd killed,
//! its link cut, its sshd stopped (SIGSTOP), its tmux restarted (pane ids issued again), its key
//! changed. Through each, this machine's rows and host a's keep refreshing at their own rate,
//! the faulty host reads "not answering" within 10 s with its last rows kept but not live, and
//! it comes back when the fault is gone; a changed key is refused, never accepted.

use std::time::{Duration, Instant};

use intercom_pane::seam::hosts::board::HostsSource;
use intercom_pane::seam::snapshot::{HostState, Snapshot};
use intercom_pane::seam::states::BoardState;
use nix::sys::signal::Signal;

use crate::hosts_board::{all_answering, board, host_state, row, until};
use crate::hosts_support::Net;

/// What a fault window showed of the healthy parts: the longest gap between this machine's
/// passes and between host a's answers.
struct Gaps {
    local: Duration,
    a: Duration,
}

/// Watch the board until `pred` holds (within `ms`), measuring the healthy parts' gaps.
fn watch_until(
    src: &mut HostsSource,
    ms: u64,
    what: &str,
    pred: impl Fn(&Snapshot) -> bool,
) -> (Snapshot, Gaps) {
    let end = Instant::now() + Duration::from_millis(ms);
    let (mut last_local, mut last_a) = (None::<i64>, None::<i64>);
    let mut gaps = Gaps {
        local: Duration::ZERO,
        a: Duration::ZERO,
    };
    let gap = |prev: &mut Option<i64>, now: i64, max: &mut Duration| {
        if let Some(p) = *prev {
            if now > p {
                *max = (*max).max(Duration::from_millis((now - p) as u64));
            }
        }
        if prev.is_none_or(|p| now > p) {
            *prev = Some(now);
        }
    };
    let mut last_hosts = Vec::new();
    while Instant::now() < end {
        let Some(s) = src.changed_within(end.saturating_duration_since(Instant::now())) else {
            break;
        };
        last_hosts = s.hosts.clone();
        gap(&mut last_local, s.scanned_at, &mut gaps.local);
        if let Some(a) = s
            .hosts
            .iter()
            .find(|h| h.name == "a")
            .and_then(|h| h.answered_at)
        {
            gap(&mut last_a, a, &mut gaps.a);
        }
        if pred(&s) {
            return (s, gaps);
        }
    }
    panic!("{what}: not within {ms} ms; the hosts last: {last_hosts:#?}");
}

/// One fault of host b: it reads "not answering" within 10 s, its rows kept and marked not
/// live, while this machine's passes and host a go on; a change on a arrives meanwhile.
fn fault(net: &Net, src: &mut HostsSource, what: &str, n: usize) {
    let t0 = Instant::now();
    let (s, gaps) = watch_until(src, 10_000, &format!("{what}: b not answering"), |s| {
        host_state(s, "b") == HostState::NotAnswering
    });
    eprintln!(
        "{what}: b not answering after {} ms; longest gaps meanwhile: local {} ms, host a {} ms",
        t0.elapsed().as_millis(),
        gaps.local.as_millis(),
        gaps.a.as_millis()
    );
    let b = row(&s, "b", "Builder").expect("b's last rows are kept");
    assert!(
        !b.host.as_ref().unwrap().answering,
        "b's rows are not live: {b:?}"
    );
    // This machine passes every 500 ms (plus the pass); host a answers every 2 s: generous
    // bounds for a loaded machine, far below the fault's own timeouts.
    assert!(
        gaps.local < Duration::from_millis(3_000),
        "{what}: local gap {:?}",
        gaps.local
    );
    assert!(
        gaps.a < Duration::from_millis(6_000),
        "{what}: host a gap {:?}",
        gaps.a
    );
    // A change on a arrives while b is down.
    let t1 = Instant::now();
    net.host("a").ask(0, &format!("question {n}"));
    let s = until(src, 8_000, &format!("{what}: a's question"), |s| {
        row(s, "a", "Builder").is_some_and(|r| {
            r.state == BoardState::Waiting
                && r.question
                    .as_deref()
                    .is_some_and(|q| q.contains(&format!("question {n}")))
        })
    });
    eprintln!(
        "{what}: a's change arrived after {} ms",
        t1.elapsed().as_millis()
    );
    assert_eq!(host_state(&s, "b"), HostState::NotAnswering);
}

fn back(src: &mut HostsSource, what: &str) {
    let t0 = Instant::now();
    until(src, 20_000, &format!("{what}: b answering again"), |s| {
        host_state(s, "b") == HostState::Answering
            && row(s, "b", "Builder").is_some_and(|r| r.host.as_ref().unwrap().answering)
    });
    eprintln!(
        "{what}: b answering again after {} ms",
        t0.elapsed().as_millis()
    );
}

#[test]
#[cfg_attr(
    not(hosts_tier),
    ignore = "needs root, OpenSSH's sshd, ssh, ssh-keygen, ip and unshare (the multi-host tier; .ci/run installs openssh-server)"
)]
fn a_failing_host_never_holds_up_the_others() {
    let mut net = Net::new(
        &[
            ("a", &["Builder"]),
            ("b", &["Builder"]),
            ("c", &["Builder", "Reviewer"]),
        ],
        &["Builder"],
    );
    let mut src = board(&net);
    until(&mut src, 30_000, "every host answering", |s| {
        all_answering(s) && s.rows.len() == 5
    });

    net.host_mut("b").kill_sshd();
    fault(&net, &mut src, "sshd killed", 1);
    net.host_mut("b").start_sshd();
    back(&mut src, "sshd killed");

    net.host("b").link(false);
    fault(&net, &mut src, "link down", 2);
    net.host("b").link(true);
    back(&mut src, "link down");

    net.host("b").signal_sshd(Signal::SIGSTOP);
    fault(&net, &mut src, "sshd stopped", 3);
    net.host("b").signal_sshd(Signal::SIGCONT);
    back(&mut src, "sshd stopped");

    // c's tmux restarts: its workers come back in new panes with new pis; the board shows
    // exactly those, never the old ones.
    let old: Vec<i32> = (0..2).map(|w| net.host("c").pi_pid(w)).collect();
    let panes_of = |s: &Snapshot| -> Vec<String> {
        let mut v: Vec<String> = ["Builder", "Reviewer"]
            .iter()
            .filter_map(|n| {
                row(s, "c", n)
                    .and_then(|r| r.pane.as_ref())
                    .map(|p| p.pane_id.clone())
            })
            .collect();
        v.sort();
        v
    };
    let s = until(&mut src, 10_000, "c's panes", |s| panes_of(s).len() == 2);
    let old_panes = panes_of(&s);
    net.host_mut("c").restart_tmux();
    let new: Vec<i32> = (0..2).map(|w| net.host("c").pi_pid(w)).collect();
    assert!(old.iter().all(|p| !new.contains(p)));
    // Until the pis registered, the host may show them as pane seats (`Builder %0`); then
    // exactly the two workers, in their new pis.
    let c_rows = |s: &Snapshot| {
        s.rows
            .iter()
            .filter(|r| r.host.as_ref().is_some_and(|h| h.name == "c"))
            .count()
    };
    let s = until(&mut src, 15_000, "c's rows with the new pis", |s| {
        c_rows(s) == 2
            && ["Builder", "Reviewer"].iter().zip(&new).all(|(n, pid)| {
                row(s, "c", n).is_some_and(|r| {
                    r.state == BoardState::Idle
                        && r.pane.as_ref().and_then(|p| p.pi.as_ref()).map(|p| p.0) == Some(*pid)
                })
            })
    });
    assert_eq!(host_state(&s, "c"), HostState::Answering);
    // The new server issued the same pane ids again: the board tells the pis apart anyway.
    assert_eq!(panes_of(&s), old_panes, "pane ids reissued");

    // b's host key changes: refused, never accepted; its rows stay, not live.
    net.host_mut("b").change_host_key();
    let s = until(&mut src, 20_000, "b's changed key refused", |s| {
        host_state(s, "b") == HostState::HostKeyChanged
    });
    let b = row(&s, "b", "Builder").unwrap();
    assert!(!b.host.as_ref().unwrap().answering);
    let view = s.hosts.iter().find(|h| h.name == "b").unwrap();
    assert!(view.detail.contains("host key changed"), "{view:?}");
    // The known_hosts file was not touched (no key accepted on the way).
    let kh = std::fs::read_to_string(&net.known_hosts).unwrap();
    let new_key = std::fs::read_to_string(net.host("b").dir.join("hostkey.pub")).unwrap();
    assert!(!kh.contains(new_key.split_whitespace().nth(1).unwrap()));
    // An action on b is refused before anything runs there.
    let o = net.run(&["reply", "--host", "b", "Builder", "hello"], None);
    assert_eq!(
        o.status.code(),
        Some(20),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("host key changed"));
    assert!(!net.host("b").transcript(0).contains("hello"));
}
