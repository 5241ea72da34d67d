//! The board following a host's stream (`status --watch --json-lines`, schema version 1) over
//! real ssh: until that command ships, the host's program is a small script that answers hello
//! with `"watch": true` and streams what the real binary's `scan --json` says as `board` lines
//! (every 200 ms) with heartbeats, as the stream would. A change there shows within 1 s; a
//! stream that stops (the script told to go quiet) reads "not answering" within 10 s, its rows
//! kept but not live.

use std::time::Instant;

use intercom_pane::snapshot::HostState;
use intercom_pane::states::BoardState;

use crate::hosts_support::{all_answering, board, host_state, row, until, Net};

#[test]
#[cfg_attr(
    not(hosts_tier),
    ignore = "needs root, OpenSSH's sshd, ssh, ssh-keygen, ip and unshare (the multi-host tier; .ci/run installs openssh-server)"
)]
fn a_streaming_host_shows_a_change_within_a_second_and_a_silent_stream_is_noticed() {
    let net = Net::new(&[("s", &["Builder"]), ("p", &["Builder"])], &[]);
    let quiet = net.dir.path().join("quiet");
    let script = net.dir.path().join("streaming-ip");
    std::fs::write(
        &script,
        format!(
            "#!/bin/bash\nREAL={bin}\ncmd=$1; shift\n\
             case \"$cmd\" in\n\
             hello) \"$REAL\" hello \"$@\" | sed 's/\"watch\":false/\"watch\":true/';;\n\
             status) args=(); skip=0; for a in \"$@\"; do if [ $skip = 1 ]; then skip=0; continue; fi;\n\
               case $a in --watch|--json-lines|--probe) ;; --heartbeat-secs) skip=1;; *) args+=(\"$a\");; esac; done;\n\
               n=0; while true; do n=$((n+1));\n\
                 if [ -e {quiet} ]; then sleep 0.2; continue; fi;\n\
                 b=$(\"$REAL\" scan --json \"${{args[@]}}\" 2>/dev/null | tr -d '\\n');\n\
                 printf '{{\"v\":1,\"kind\":\"board\",\"seq\":%s,\"at\":\"x\",\"why\":\"pass\",\"board\":%s}}\\n' $n \"$b\" || exit 0;\n\
                 printf '{{\"v\":1,\"kind\":\"heartbeat\",\"seq\":%s}}\\n' $n || exit 0;\n\
                 sleep 0.2; done;;\n\
             *) exec \"$REAL\" \"$cmd\" \"$@\";;\n\
             esac\n",
            bin = env!("CARGO_BIN_EXE_intercom-pane"),
            quiet = quiet.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    net.write_hosts_file(&[("s", script.to_str().unwrap())]);

    let mut src = board(&net);
    let s = until(&mut src, 30_000, "both hosts answering", |s| {
        all_answering(s) && s.rows.len() == 2
    });
    let via = |s: &intercom_pane::snapshot::Snapshot, h: &str| {
        s.hosts.iter().find(|x| x.name == h).and_then(|x| x.via)
    };
    assert_eq!(via(&s, "s"), Some("watch"));
    assert_eq!(
        via(&s, "p"),
        Some("poll"),
        "a host without the stream is polled"
    );

    let t0 = Instant::now();
    net.host("s").ask(0, "which branch?");
    until(&mut src, 5_000, "s's Builder waiting", |s| {
        row(s, "s", "Builder").is_some_and(|r| r.state == BoardState::Waiting)
    });
    let took = t0.elapsed();
    eprintln!(
        "a change on the streaming host showed after {} ms",
        took.as_millis()
    );
    assert!(took.as_millis() < 1_000, "{took:?}");

    // The stream goes quiet (no line at all): not answering within 10 s, rows kept, not live.
    std::fs::write(&quiet, "").unwrap();
    let t1 = Instant::now();
    let s = until(&mut src, 10_000, "s not answering", |s| {
        host_state(s, "s") == HostState::NotAnswering
    });
    eprintln!(
        "the quiet stream read not answering after {} ms",
        t1.elapsed().as_millis()
    );
    let r = row(&s, "s", "Builder").unwrap();
    assert!(!r.host.as_ref().unwrap().answering);
    assert_eq!(host_state(&s, "p"), HostState::Answering);
    std::fs::remove_file(&quiet).unwrap();
    until(&mut src, 20_000, "s answering again", |s| {
        host_state(s, "s") == HostState::Answering
    });
}
