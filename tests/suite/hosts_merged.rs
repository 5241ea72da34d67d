//! `status --watch --json-lines --host all` (and `--host a --host b`), the real binary over real
//! sshd servers in network namespaces: one stream of every host's seats, each line tagged with
//! its host, and each host's own state lines; a hung host (its whole sshd tree stopped) reads
//! `not_answering` while the others' changes keep arriving within a second or two; it comes
//! back; SIGTERM ends the stream with exit 0.

use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::hosts_support::Net;

/// Read lines until `pred` holds for one (within `ms`); every line read meanwhile, with it last.
pub(crate) fn until(
    rx: &Receiver<Value>,
    ms: u64,
    what: &str,
    pred: impl Fn(&Value) -> bool,
) -> Vec<Value> {
    let end = Instant::now() + Duration::from_millis(ms);
    let mut seen = Vec::new();
    loop {
        let left = end.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(v) => {
                let hit = pred(&v);
                seen.push(v);
                if hit {
                    return seen;
                }
            }
            Err(_) => {
                let tail: Vec<String> = seen.iter().rev().take(20).map(|v| v.to_string()).collect();
                panic!("{what}: not within {ms} ms; last lines (newest first): {tail:#?}");
            }
        }
    }
}

fn is_host(v: &Value, host: &str, state: &str) -> bool {
    v["kind"] == "host" && v["host"] == host && v["state"] == state
}

fn is_seat(v: &Value, host: &str, state: &str) -> bool {
    v["kind"] == "seat"
        && v["host"] == host
        && v["key"].as_str().is_some_and(|k| k.ends_with("/Builder"))
        && v["seat"]["state"] == state
}

#[test]
#[cfg_attr(
    not(hosts_tier),
    ignore = "needs root, OpenSSH's sshd, ssh, ssh-keygen, ip and unshare (the multi-host tier; .ci/run installs openssh-server)"
)]
fn one_stream_of_every_host_tagged_with_its_host_and_a_hung_host_delays_nobody() {
    let net = Net::new(&[("a", &["Builder"]), ("b", &["Builder"])], &["Builder"]);
    let log = net.dir.path().join("log.jsonl");
    let s = net.lines(
        &[
            "status",
            "--watch",
            "--json-lines",
            "--host",
            "all",
            "--heartbeat-secs",
            "1",
        ],
        true,
        &log,
    );
    // Every host first says its state, this machine included, in the order named.
    let mut lines: Vec<Value> = (0..3)
        .flat_map(|_| until(&s.alerts, 10_000, "a first line", |_| true))
        .collect();
    let named: Vec<&str> = lines.iter().filter_map(|v| v["host"].as_str()).collect();
    assert_eq!(named, ["local", "a", "b"], "{lines:#?}");
    assert!(lines.iter().all(|v| v["kind"] == "host"), "{lines:#?}");
    assert!(is_host(&lines[2], "b", "connecting"), "{lines:#?}");
    // Then each host answers and its Builder arrives, tagged with its host.
    for h in ["local", "a", "b"] {
        let got = |v: &Value| is_seat(v, h, "idle") || is_seat(v, h, "working");
        if !lines.iter().any(got) {
            lines.extend(until(&s.alerts, 30_000, &format!("{h}'s Builder"), got));
        }
        assert!(
            lines.iter().any(|v| is_host(v, h, "answering")),
            "{h} answering before its seats: {lines:#?}"
        );
    }
    // Every line is a version 1 line with a rising seq.
    let seqs: Vec<u64> = lines.iter().map(|v| v["seq"].as_u64().unwrap()).collect();
    assert!(seqs.windows(2).all(|w| w[1] > w[0]), "{seqs:?}");
    assert!(lines.iter().all(|v| v["v"] == 1));

    // A change on a arrives within a second.
    let t0 = Instant::now();
    net.host("a").ask(0, "which branch?");
    let got = until(&s.alerts, 5_000, "a's Builder waiting", |v| {
        is_seat(v, "a", "waiting")
    });
    let took = t0.elapsed();
    eprintln!(
        "a's change reached the merged stream after {} ms",
        took.as_millis()
    );
    assert!(took < Duration::from_millis(1_500), "{took:?}");
    let seat = &got.last().unwrap()["seat"];
    assert!(seat.to_string().contains("which branch?"), "{seat}");

    // b hangs (its whole sshd tree stopped): b reads not answering; meanwhile a's and this
    // machine's heartbeat states stay answering, and a's next change arrives promptly.
    net.host("b").signal_sshd(nix::sys::signal::Signal::SIGSTOP);
    let t1 = Instant::now();
    let during = until(&s.alerts, 12_000, "b not answering", |v| {
        is_host(v, "b", "not_answering")
    });
    eprintln!(
        "the hung host read not_answering after {} ms",
        t1.elapsed().as_millis()
    );
    let b_line = during.last().unwrap();
    assert!(b_line["since"].as_str().is_some(), "{b_line}");
    // Heartbeats kept coming while b hung (one a second asked for).
    let beats = during.iter().filter(|v| v["kind"] == "heartbeat").count();
    assert!(
        beats as u64 + 3 >= t1.elapsed().as_secs(),
        "{beats} heartbeats in {:?}",
        t1.elapsed()
    );
    let t2 = Instant::now();
    net.host("a").ask(0, "and now?");
    let got = until(&s.alerts, 5_000, "a's second question", |v| {
        v["kind"] == "seat" && v["host"] == "a" && v.to_string().contains("and now?")
    });
    let took = t2.elapsed();
    eprintln!(
        "with b hung, a's change arrived after {} ms",
        took.as_millis()
    );
    assert!(took < Duration::from_millis(1_500), "{took:?}");
    assert!(
        !got.iter().any(|v| v["kind"] == "seat" && v["host"] == "b"),
        "nothing of b while it hangs: {got:#?}"
    );
    let beat = until(&s.alerts, 3_000, "a heartbeat", |v| {
        v["kind"] == "heartbeat"
    });
    let hosts = &beat.last().unwrap()["hosts"];
    let state = |h: &str| {
        hosts
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["host"] == h)
            .map(|x| x["state"].clone())
    };
    assert_eq!(state("a"), Some("answering".into()), "{hosts}");
    assert_eq!(state("local"), Some("answering".into()), "{hosts}");
    assert_eq!(state("b"), Some("not_answering".into()), "{hosts}");

    net.host("b").signal_sshd(nix::sys::signal::Signal::SIGCONT);
    until(&s.alerts, 25_000, "b answering again", |v| {
        is_host(v, "b", "answering")
    });
    assert_eq!(s.stop().code(), Some(0));

    // Two hosts named, this machine not: only their lines.
    let s = net.lines(
        &["status", "--watch", "--host", "a", "--host", "b"],
        false,
        &log,
    );
    let mut lines = until(&s.alerts, 30_000, "a seat", |v| v["kind"] == "seat");
    let other = if lines.last().unwrap()["host"] == "a" {
        "b"
    } else {
        "a"
    };
    lines.extend(until(&s.alerts, 30_000, "the other host's seat", |v| {
        v["kind"] == "seat" && v["host"] == other
    }));
    assert!(lines.iter().all(|v| v["host"] != "local"), "{lines:#?}");
    assert!(
        lines.iter().any(|v| is_seat(v, "a", "waiting")),
        "{lines:#?}"
    );
    assert_eq!(s.stop().code(), Some(0));
}
