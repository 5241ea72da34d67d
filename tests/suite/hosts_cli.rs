//! `--host` on the commands, against real sshd servers in network namespaces (the multi-host
//! tier: root, OpenSSH's sshd and `ip netns`; ignored with the reason elsewhere).

use serde_json::Value;

use crate::hosts_support::Net;

const NEEDS: &str = "needs root, OpenSSH's sshd, ssh, ssh-keygen, ip and unshare (the multi-host tier; .ci/run installs openssh-server)";

fn json_of(o: &std::process::Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|_| {
        panic!(
            "not JSON: {}\nstderr: {}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

#[test]
#[cfg_attr(
    not(hosts_tier),
    ignore = "needs root, OpenSSH's sshd, ssh, ssh-keygen, ip and unshare (the multi-host tier; .ci/run installs openssh-server)"
)]
fn scan_reads_three_hosts_and_tags_every_record() {
    let _ = NEEDS;
    let net = Net::new(
        &[
            ("a", &["Builder", "Reviewer"]),
            ("b", &["Builder", "Reviewer"]),
            ("c", &["Builder"]),
        ],
        &["Builder"],
    );
    let mut args = vec![
        "scan", "--json", "--host", "a", "--host", "b", "--host", "c", "--host", "local",
    ];
    let local = net.local_args();
    args.extend(local.iter().map(String::as_str));
    let o = net.run(&args, None);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v = json_of(&o);
    let hosts: Vec<&str> = v["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["state"].as_str().unwrap())
        .collect();
    assert_eq!(hosts, ["answering"; 4]);
    let mut seen: Vec<(String, String, String)> = v["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["agent"] != "Coordinator")
        .map(|r| {
            (
                r["host"].as_str().unwrap().to_string(),
                r["agent"].as_str().unwrap().to_string(),
                r["state"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    seen.sort();
    let want: Vec<(String, String, String)> = [
        ("a", "Builder"),
        ("a", "Reviewer"),
        ("b", "Builder"),
        ("b", "Reviewer"),
        ("c", "Builder"),
        ("local", "Builder"),
    ]
    .iter()
    .map(|(h, n)| (h.to_string(), n.to_string(), "idle".to_string()))
    .collect();
    assert_eq!(seen, want);
    // Each remote record carries the seat a board acts on: its pane and registered pi.
    for r in v["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["agent"] == "Builder")
    {
        let pane = &r["seat"]["pane"];
        assert!(pane["paneId"].as_str().unwrap().starts_with('%'), "{r}");
        assert!(pane["pi"]["pid"].as_i64().unwrap() > 1, "{r}");
        assert!(pane["pi"]["startTicks"].as_u64().is_some(), "{r}");
    }

    // `board --host a`: a's own page (the coordinator's page format), as a printed it.
    net.host("a").ask(1, "which test?");
    let o = net.run(&["board", "--host", "a", "--attention"], None);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let page = json_of(&o);
    let names: Vec<&str> = page["seats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Reviewer"], "{page}");
    assert_eq!(page["filter"]["host"], "local", "{page}");
    // `scan --watch` writes this machine's board files: refused with another host, nothing
    // run there (`status --watch --host` merges the hosts' streams: hosts_merged).
    let o = net.run(&["scan", "--watch", "--host", "a"], None);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--watch streams this machine's board only")
    );
}
