//! `status --watch --json-lines --host all` (and `--host a --host b`), the real binary over real
//! sshd servers in network namespaces: the whole board first (every host's state and seats,
//! each tagged with its host), then a line per change and each host's own state lines; a hung
//! host (its whole sshd tree stopped) reads `not_answering` while the others' changes keep
//! arriving within a second or two; it comes back; SIGTERM ends the stream with exit 0.
//! `--probe` checks this machine's part as it checks the one-machine stream.

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
    // The whole board first: every host's state, this machine included, in the order named,
    // and the seats of every host that answered meanwhile, each tagged with its host.
    let mut lines = until(&s.alerts, 30_000, "the first line", |_| true);
    let board = lines[0].clone();
    assert_eq!(board["kind"], "board", "{board:#}");
    assert_eq!(board["why"], "start", "{board:#}");
    assert_eq!(board["seq"], 1, "{board:#}");
    let hosts = board["hosts"].as_array().unwrap();
    let named: Vec<&str> = hosts.iter().filter_map(|v| v["host"].as_str()).collect();
    assert_eq!(named, ["local", "a", "b"], "{board:#}");
    assert_eq!(
        hosts[0]["state"], "answering",
        "this machine's first pass: {board:#}"
    );
    let in_board = |h: &str| -> Vec<Value> {
        board["seats"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|v| v["host"] == h)
            .cloned()
            .collect()
    };
    let builder = |seats: &[Value]| {
        seats
            .iter()
            .filter(|v| v["key"].as_str().is_some_and(|k| k.ends_with("/Builder")))
            .count()
    };
    assert_eq!(builder(&in_board("local")), 1, "{board:#}");
    // Each host's seats: in the board when it answered in time, else its lines after it.
    for (i, h) in ["local", "a", "b"].into_iter().enumerate() {
        let got = |v: &Value| is_seat(v, h, "idle") || is_seat(v, h, "working");
        if hosts[i]["state"] == "answering" {
            assert_eq!(builder(&in_board(h)), 1, "{h}: {board:#}");
            assert_eq!(hosts[i]["seats"], in_board(h).len(), "{h}: {board:#}");
            continue;
        }
        assert!(in_board(h).is_empty(), "{h}: {board:#}");
        lines.extend(until(&s.alerts, 30_000, &format!("{h}'s Builder"), got));
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
    // Its seats as lines: the board's (each tagged as a seat line is), then the seat lines.
    let seats = |lines: &[Value]| -> Vec<Value> {
        lines
            .iter()
            .flat_map(|v| match v["kind"].as_str() {
                Some("board") => v["seats"].as_array().cloned().unwrap_or_default(),
                Some("seat") => vec![v.clone()],
                _ => Vec::new(),
            })
            .map(|mut v| {
                v["kind"] = "seat".into();
                v
            })
            .collect()
    };
    let mut lines = until(&s.alerts, 30_000, "the board", |v| v["kind"] == "board");
    for h in ["a", "b"] {
        if !seats(&lines).iter().any(|v| v["host"] == h) {
            lines.extend(until(&s.alerts, 30_000, &format!("{h}'s seat"), |v| {
                v["kind"] == "seat" && v["host"] == h
            }));
        }
    }
    let named: Vec<&str> = lines[0]["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v["host"].as_str())
        .collect();
    assert_eq!(named, ["a", "b"], "{:#}", lines[0]);
    let lines = seats(&lines);
    assert!(lines.iter().all(|v| v["host"] != "local"), "{lines:#?}");
    assert!(
        lines.iter().any(|v| is_seat(v, "a", "waiting")),
        "{lines:#?}"
    );
    assert_eq!(s.stop().code(), Some(0));
}

/// `--probe` on the merged stream checks this machine's part as the one-machine stream checks
/// it (a worker whose loopback health answers reads `connected`, one on a closed port
/// `disconnected`); without it, neither stream checks (`unknown`). Here the hosts file names
/// no host, so `--host all` is this machine alone, merged.
#[test]
fn probe_checks_this_machines_part_of_the_merged_stream_as_the_plain_stream() {
    use crate::live_support::{sid, Fleet};
    use crate::probe_common::{healthy, Servers};
    let f = Fleet::new(2);
    let server = f.tmux(2);
    let servers = Servers::new();
    let up = servers.start(healthy(&sid(0)), None);
    let cfg_path = f.root.join(".pi-intercom/config.json");
    let mut cfg: Value =
        serde_json::from_str(&std::fs::read_to_string(&cfg_path).unwrap()).unwrap();
    for agent in cfg["agents"].as_array_mut().unwrap() {
        if agent["sessionId"] == sid(0) {
            agent["port"] = up.port.into();
        }
    }
    std::fs::write(&cfg_path, cfg.to_string()).unwrap();
    let sys = f.tmp.path().join("sys.json");
    std::fs::write(&sys, serde_json::json!({"dataRoot": f.data}).to_string()).unwrap();
    let home = f.tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();

    // The first line of `status --watch` with `extra`: each worker's connection, by name.
    let first = |extra: &[&str]| -> (Value, Vec<(String, String)>) {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_intercom-pane"))
            .args(["status", "--watch", "--json-lines"])
            .args(extra)
            .args([
                "--config",
                sys.to_str().unwrap(),
                "--root",
                f.root.to_str().unwrap(),
            ])
            .args([
                "--sessions-dir",
                f.sessions.to_str().unwrap(),
                "--fleet",
                "none",
            ])
            .args(["--tmux-socket", server.sock.to_str().unwrap()])
            .env("HOME", &home)
            .env("INTERCOM_PANE_HOSTS", f.tmp.path().join("no-hosts.json"))
            .env("XDG_RUNTIME_DIR", f.tmp.path())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let out = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            let mut line = String::new();
            let _ = std::io::BufReader::new(out).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx.recv_timeout(Duration::from_secs(30)).unwrap_or_default();
        let _ = child.kill();
        let _ = child.wait();
        let v: Value =
            serde_json::from_str(&line).unwrap_or_else(|_| panic!("{extra:?}: {line:?}"));
        assert_eq!(v["kind"], "board", "{v:#}");
        // The one-machine board's records, or the merged board's seats (this machine's).
        let records: Vec<Value> = match v["board"]["records"].as_array() {
            Some(r) => r.clone(),
            None => v["seats"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| {
                    assert_eq!(s["host"], "local", "{v:#}");
                    s["seat"].clone()
                })
                .collect(),
        };
        let mut conns: Vec<(String, String)> = records
            .iter()
            .map(|r| {
                let name = r["agent"].as_str().unwrap_or("?");
                let conn = r["intercom"]["connection"]["state"].as_str().unwrap_or("?");
                (name.to_string(), conn.to_string())
            })
            .collect();
        conns.sort();
        (v, conns)
    };
    let (plain, plain_conns) = first(&["--probe"]);
    let (merged, merged_conns) = first(&["--probe", "--host", "all"]);
    eprintln!("plain --probe: {plain_conns:?}\nmerged --probe: {merged_conns:?}");
    assert!(merged["hosts"][0]["host"] == "local", "{merged:#}");
    let of = |c: &[(String, String)], n: &str| {
        c.iter()
            .find(|(w, _)| w == n)
            .map(|(_, s)| s.clone())
            .unwrap_or_else(|| panic!("{n}: {c:?} {plain:#}"))
    };
    assert_eq!(of(&plain_conns, "w0"), "connected", "{plain:#}");
    assert_eq!(of(&plain_conns, "w1"), "disconnected", "{plain:#}");
    assert_eq!(merged_conns, plain_conns, "{merged:#}");
    // Without --probe: no checks on either.
    let (_, plain_conns) = first(&[]);
    let (_, merged_conns) = first(&["--host", "all"]);
    assert_eq!(of(&plain_conns, "w0"), "unknown");
    assert_eq!(merged_conns, plain_conns);
}

/// A probe round on a host that finds every worker as it was is no `seat` line, on the host's
/// own stream or the merged one: the new check times ride on the heartbeat (`checked`), and the
/// sidebar's board takes them into its rows without a frame of their own. (Each of the host's
/// workers has a port nothing listens on: `disconnected`, checked again every 15 s.)
#[test]
#[cfg_attr(
    not(hosts_tier),
    ignore = "needs root, OpenSSH's sshd, ssh, ssh-keygen, ip and unshare (the multi-host tier; .ci/run installs openssh-server)"
)]
fn a_probe_round_that_finds_the_same_is_a_heartbeat_not_a_seat_line() {
    use crate::hosts_support::{board, row};
    use intercom_pane::seam::ui::ports::SnapshotSource;
    let net = Net::new(&[("a", &["Builder"])], &["Builder"]);
    let log = net.dir.path().join("log.jsonl");
    let s = net.lines(
        &[
            "status",
            "--watch",
            "--json-lines",
            "--host",
            "a",
            "--probe",
            "--heartbeat-secs",
            "1",
        ],
        false,
        &log,
    );
    let mut sidebar = board(&net);
    // a's Builder as a line carries it: (connection state, its check time).
    let check = |v: &Value| -> Option<(String, String)> {
        let seat = match v["kind"].as_str()? {
            "seat" if v["host"] == "a" => &v["seat"],
            "board" => &v["seats"]
                .as_array()?
                .iter()
                .find(|s| s["host"] == "a" && s["seat"]["agent"] == "Builder")?["seat"],
            _ => return None,
        };
        (seat["agent"] == "Builder").then_some(())?;
        let c = &seat["intercom"]["connection"];
        Some((c["state"].as_str()?.into(), c["checkedAt"].as_str()?.into()))
    };
    let first = until(&s.alerts, 40_000, "a's Builder checked", |v| {
        check(v).is_some()
    });
    let (state, t0) = check(first.last().unwrap()).unwrap();
    assert_eq!(state, "disconnected", "{first:#?}");
    let key = |v: &Value| -> Option<String> {
        let hosts = v["hosts"].as_array()?;
        let a = hosts.iter().find(|h| h["host"] == "a")?;
        let (k, t) = a["checked"].as_object()?.iter().next()?;
        (k.ends_with("/Builder") && t.as_str()? > t0.as_str()).then(|| t.as_str().unwrap().into())
    };
    // The next round (within 15 s and a heartbeat): its time on a heartbeat, no seat line.
    let lines = until(
        &s.alerts,
        25_000,
        "a heartbeat with the new check time",
        |v| v["kind"] == "heartbeat" && key(v).is_some(),
    );
    let t1 = key(lines.last().unwrap()).unwrap();
    let seats: Vec<&Value> = lines
        .iter()
        .filter(|v| v["kind"] == "seat" || v["kind"] == "board")
        .collect();
    assert!(
        seats.is_empty(),
        "a round that found the same sent {seats:#?}"
    );
    eprintln!("a's Builder: checked {t0}, again {t1}, no seat line between");
    assert_eq!(s.stop().code(), Some(0));

    // The sidebar's board: its row of a's Builder takes the newer check times as they come.
    let at = |s: &intercom_pane::seam::snapshot::Snapshot| {
        row(s, "a", "Builder").and_then(|r| r.connection.checked_at)
    };
    let first = crate::hosts_support::until(&mut sidebar, 40_000, "a's Builder checked", |s| {
        at(s).is_some()
    });
    let t0 = at(&first).unwrap();
    let end = Instant::now() + Duration::from_secs(25);
    let mut now = t0;
    while now <= t0 && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(250));
        now = at(&sidebar.next_snapshot()).unwrap_or(t0);
    }
    assert!(now > t0, "the row's check time stayed {t0}");
    let r = row(&sidebar.next_snapshot(), "a", "Builder")
        .unwrap()
        .clone();
    assert_eq!(
        r.connection.state,
        intercom_pane::seam::states::ConnState::Disconnected,
        "{r:#?}"
    );
}
