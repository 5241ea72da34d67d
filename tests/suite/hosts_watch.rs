//! `intercom-pane watch` over several machines, end to end: the real binary here follows the
//! hosts of the hosts file over real sshd (each host streaming its board), and a worker on
//! host b asking a question becomes one alert line naming b, its seat key there and the jump
//! command that goes to it; a host that stops answering never stops this machine's alerts.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::hosts_support::Net;

#[test]
#[cfg_attr(
    not(hosts_tier),
    ignore = "needs root, OpenSSH's sshd, ssh, ssh-keygen, ip and unshare (the multi-host tier; .ci/run installs openssh-server)"
)]
fn watch_alerts_about_another_hosts_worker_and_names_the_host() {
    let net = Net::new(&[("a", &["Builder"]), ("b", &["Builder"])], &[]);
    let log = net.dir.path().join("log.jsonl");
    let w = net.watch(&["--no-status-line"], &log);
    // Both hosts answering (the log says each host's state).
    let answering = |h: &str| {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .any(|v| v["event"] == "host_state" && v["host"] == h && v["state"] == "answering")
    };
    let end = Instant::now() + Duration::from_secs(30);
    while !(answering("a") && answering("b")) {
        assert!(
            Instant::now() < end,
            "hosts never answered: {}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // Watch learned b's seat as it is (a seat first seen is recorded in its memory, not
    // alerted): its key there, with its host.
    let memory = intercom_pane::seam::alerts::memory_file::path(&net.local.join("data"));
    let end = Instant::now() + Duration::from_secs(15);
    while !std::fs::read_to_string(&memory).is_ok_and(|m| m.contains("b\\u001f")) {
        assert!(
            Instant::now() < end,
            "b's seat never known: {:?}",
            std::fs::read_to_string(&memory)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // a stops answering; b's worker asks.
    net.host("a").link(false);
    net.host("b").ask(0, "merge now?");
    let alert = w
        .alerts
        .recv_timeout(Duration::from_secs(15))
        .expect("no alert line within 15 s");
    net.host("a").link(true);
    assert_eq!(alert["host"], "b", "{alert}");
    assert_eq!(alert["seatKey"], "root/Builder", "{alert}");
    assert_eq!(alert["state"], "waiting", "{alert}");
    let jump: Vec<&str> = alert["jump"]["argv"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(jump.windows(2).any(|w| w == ["--host", "b"]), "{jump:?}");
    // One alert for one question: nothing else arrives meanwhile.
    assert!(w.alerts.recv_timeout(Duration::from_secs(2)).is_err());
    assert_eq!(w.stop().code(), Some(0));
}
