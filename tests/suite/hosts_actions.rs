//! Actions on a worker of another host run there, as the same guarded commands, on real sshd
//! servers in network namespaces: a reply arrives exactly once (from the command and from the
//! sidebar's port), a close of a worker whose pi was replaced after the board read it is refused
//! there, a jump opens (then reuses) a local window attached to the host's pane, and nothing on
//! this machine is touched by any of it.

use std::time::Duration;

use intercom_pane::seam::cmd::monitor_hosts::HostPorts;
use intercom_pane::seam::hosts::expect::SeatExpect;
use intercom_pane::seam::ui::ports::{
    NoReplyPath, NoWorkerControl, ReplyOutcome, ReplyRequest, ReplySender, SeatRef, WorkerAction,
    WorkerControl,
};

use crate::hosts_board::{all_answering, board, row, until};
use crate::hosts_support::Net;
use crate::mux_support::wait_for;

fn count(hay: &str, needle: &str) -> usize {
    hay.matches(needle).count()
}

/// Wait until `text` is in worker `w` of `host`'s transcript, then long enough for a second copy
/// to show if one were coming; how many there are.
fn arrivals(net: &Net, host: &str, w: usize, text: &str) -> usize {
    wait_for(15_000, || {
        (count(&net.host(host).transcript(w), text) > 0).then_some(())
    })
    .unwrap_or_else(|| panic!("{text:?} never arrived on {host}"));
    // A duplicate would come within the same delivery: give it a moment to show.
    let _ = wait_for(1_500, || {
        (count(&net.host(host).transcript(w), text) > 1).then_some(())
    });
    count(&net.host(host).transcript(w), text)
}

fn ports(net: &Net) -> HostPorts {
    HostPorts {
        hosts: net.board_hosts().into(),
        reply: std::sync::Arc::new(NoReplyPath),
        navigator: std::sync::Arc::new(intercom_pane::seam::ui::ports::NoNavigator {
            reason: "local".into(),
        }),
        workers: std::sync::Arc::new(NoWorkerControl {
            reason: "local".into(),
        }),
        own: None,
    }
}

#[test]
#[cfg_attr(
    not(hosts_tier),
    ignore = "needs root, OpenSSH's sshd, ssh, ssh-keygen, ip and unshare (the multi-host tier; .ci/run installs openssh-server)"
)]
fn replies_arrive_once_and_a_replaced_pi_is_never_closed() {
    let net = Net::new(
        &[("a", &["Builder"]), ("b", &["Builder", "Reviewer"])],
        &["Builder"],
    );
    let before = net.local_listing();

    // From the command: the text travels on stdin, its receipt and exit code come back.
    let text = "hello from local; $(touch /tmp/ip-hosts-pwned) `id` #(x) 'quoted'";
    let o = net.run(
        &["reply", "--host", "b", "--json", "Builder", "-"],
        Some(text),
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let receipt: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(receipt["transport"], "typed", "{receipt}");
    assert_eq!(receipt["agent"], "root/Builder");
    assert_eq!(
        receipt["host"], "b",
        "the receipt names the host: {receipt}"
    );
    assert_eq!(
        arrivals(
            &net,
            "b",
            0,
            "hello from local; $(touch /tmp/ip-hosts-pwned)"
        ),
        1
    );
    assert!(!std::path::Path::new("/tmp/ip-hosts-pwned").exists());
    assert_eq!(count(&net.host("a").transcript(0), "hello from local"), 0);

    // From the sidebar's port, with the seat the board showed.
    let mut src = board(&net);
    let s = until(&mut src, 30_000, "both hosts answering", |s| {
        all_answering(s) && s.rows.len() == 4
    });
    let r = row(&s, "b", "Reviewer").unwrap().clone();
    let p = ports(&net);
    let out = p.send(&ReplyRequest {
        row_id: r.id.clone(),
        seen_key: r.seen_key.clone(),
        name: r.name.clone(),
        target: "ignored".into(),
        text: "second reply from the sidebar".into(),
        host: r.host.clone(),
        pane: r.pane.clone(),
    });
    assert!(
        matches!(
            &out,
            ReplyOutcome::Delivered {
                outcome: "delivered" | "queued",
                ..
            }
        ),
        "{out:?}"
    );
    assert_eq!(arrivals(&net, "b", 1, "second reply from the sidebar"), 1);

    // The board read b's Builder; then its pi is replaced. A close carrying what the board
    // showed is refused there, and the new pi runs on.
    let s = until(&mut src, 10_000, "b's Builder", |s| {
        row(s, "b", "Builder").is_some()
    });
    let seen = row(&s, "b", "Builder").unwrap().clone();
    let token =
        SeatExpect::of_row(&seen, seen.host.as_ref().unwrap().session_id.as_deref()).token();
    let new_pid = net.host("b").replace_pi(0);
    let o = net.run(
        &[
            "close-worker",
            "--host",
            "b",
            "--json",
            "--expect-seat",
            &token,
            "Builder",
        ],
        None,
    );
    assert_eq!(
        o.status.code(),
        Some(14),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        report["refused"]
            .as_str()
            .unwrap()
            .contains("not the one the board showed"),
        "{report}"
    );
    assert!(intercom_pane::seam::proc::read_stat(new_pid).is_some_and(|s| !s.is_gone_state()));
    // The sidebar's close of the row it still shows: refused the same way.
    let outcome = p.run(WorkerAction::Close, &SeatRef::of(&seen), &|_| {});
    assert!(!outcome.ok && outcome.result == "refused", "{outcome:?}");
    assert!(
        outcome.detail.contains("not the one the board showed"),
        "{outcome:?}"
    );
    assert!(intercom_pane::seam::proc::read_stat(new_pid).is_some_and(|s| !s.is_gone_state()));
    let cfg =
        std::fs::read_to_string(net.host("b").dir.join("root/.pi-intercom/config.json")).unwrap();
    assert!(
        !cfg.contains("closeJob"),
        "no close job was even recorded: {cfg}"
    );
    // The board follows: b's Builder now shows the new pi.
    until(&mut src, 15_000, "b's Builder with its new pi", |s| {
        row(s, "b", "Builder").is_some_and(|r| {
            r.pane.as_ref().and_then(|p| p.pi.as_ref()).map(|p| p.0) == Some(new_pid)
        })
    });

    // Nothing here was touched by any of it.
    assert_eq!(net.local_listing(), before);
}

#[test]
#[cfg_attr(
    not(hosts_tier),
    ignore = "needs root, OpenSSH's sshd, ssh, ssh-keygen, ip and unshare (the multi-host tier; .ci/run installs openssh-server)"
)]
fn jump_opens_then_reuses_a_local_window_attached_to_the_hosts_pane() {
    let net = Net::new(&[("b", &["Builder"])], &["Builder"]);
    let b = net.host("b");
    let b_sock = b.tmux.as_ref().unwrap().sock.display().to_string();
    let b_pane = b
        .tmux
        .as_ref()
        .unwrap()
        .tmux(&["list-panes", "-t", "=Builder", "-F", "#{pane_id}"])
        .trim()
        .to_string();

    // --print: the exact command for this machine's shell; its last word is the remote
    // command, each word of it quoted for the remote shell.
    let o = net.run(&["jump", "--host", "b", "--print", "Builder"], None);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let line = String::from_utf8_lossy(&o.stdout).trim().to_string();
    let rest = line
        .strip_prefix("ssh ")
        .unwrap_or_else(|| panic!("{line}"));
    let words = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("printf '%s\\0' {rest}"))
        .output()
        .unwrap();
    let words: Vec<String> = String::from_utf8(words.stdout)
        .unwrap()
        .split('\0')
        .map(str::to_string)
        .collect();
    assert!(
        words.contains(&"BatchMode=yes".to_string()) && words.contains(&"-t".to_string()),
        "{words:?}"
    );
    assert_eq!(
        words[words.len() - 2],
        format!("'tmux' '-S' '{b_sock}' 'attach-session' '-t' '{b_pane}' ';' 'select-pane' '-t' '{b_pane}'"),
        "{line}"
    );

    // From a pane of this machine's tmux: a window opens running ssh -t, and b's tmux server
    // then has a client on the Builder pane's session.
    let local = net.local_tmux.as_ref().unwrap();
    let out = net.dir.path().join("jump.out");
    let script = format!(
        "INTERCOM_PANE_HOSTS={} XDG_RUNTIME_DIR={} {} jump --host b Builder > {} 2>&1; sleep 60",
        net.hosts_file.display(),
        net.dir.path().join("run").display(),
        env!("CARGO_BIN_EXE_intercom-pane"),
        out.display()
    );
    let windows = || local.tmux(&["list-windows", "-a"]).lines().count();
    let before = windows();
    local.tmux(&["new-window", "-d", "--", "sh", "-c", &script]);
    wait_for(20_000, || {
        std::fs::read_to_string(&out)
            .ok()
            .filter(|t| t.contains("window"))
            .map(|_| ())
    })
    .unwrap_or_else(|| panic!("jump said: {:?}", std::fs::read_to_string(&out)));
    assert!(std::fs::read_to_string(&out)
        .unwrap()
        .starts_with("opened window @"));
    assert_eq!(
        windows(),
        before + 2,
        "the caller's window and the jump window"
    );
    let clients = || {
        b.tmux
            .as_ref()
            .unwrap()
            .tmux(&["list-clients", "-F", "#{pane_id}"])
    };
    wait_for(20_000, || clients().contains(&b_pane).then_some(()))
        .unwrap_or_else(|| panic!("no client on b's pane; clients: {:?}", clients()));

    // Again: the same window is selected, none opened.
    let out2 = net.dir.path().join("jump2.out");
    let script2 = script.replace(&out.display().to_string(), &out2.display().to_string());
    local.tmux(&["new-window", "-d", "--", "sh", "-c", &script2]);
    wait_for(20_000, || {
        std::fs::read_to_string(&out2)
            .ok()
            .filter(|t| t.contains("window"))
            .map(|_| ())
    })
    .unwrap_or_else(|| panic!("jump said: {:?}", std::fs::read_to_string(&out2)));
    assert!(std::fs::read_to_string(&out2)
        .unwrap()
        .starts_with("selected window @"));
    assert_eq!(
        windows(),
        before + 3,
        "only the second caller's window is new"
    );
    std::thread::sleep(Duration::from_millis(10));
}

#[test]
#[cfg_attr(
    not(hosts_tier),
    ignore = "needs root, OpenSSH's sshd, ssh, ssh-keygen, ip and unshare (the multi-host tier; .ci/run installs openssh-server)"
)]
fn a_seen_mark_of_another_hosts_row_is_kept_on_that_host() {
    use intercom_pane::seam::cmd::monitor_cmd::DataRootSeen;
    use intercom_pane::seam::ui::ports::SeenWriter;
    let net = Net::new(&[("b", &["Builder"])], &["Builder"]);
    // b's data root has no `board/` yet: the first mark makes it (its live engine must
    // notice the folder and what was written in it at once).
    assert!(!net.host("b").dir.join("data/board").exists());
    let mut src = board(&net);
    net.host("b").ask(0, "ship it?");
    let s = until(&mut src, 30_000, "b's Builder waiting on you", |s| {
        all_answering(s) && row(s, "b", "Builder").is_some_and(|r| r.waiting_on_you && !r.seen)
    });
    let r = row(&s, "b", "Builder").unwrap().clone();
    let last = intercom_pane::seam::clock::format_iso(r.last_activity.unwrap());
    // The sidebar's writer (`s` on the row): the mark is written on b, and b's stream brings
    // the row back seen.
    let local_before = net.local_listing();
    let w = DataRootSeen {
        data_root: net.local.join("data"),
        hosts: net.board_hosts().into(),
    };
    w.set_seen(&r.seen_key, &last, true).unwrap();
    let marks = std::fs::read_to_string(net.host("b").dir.join("data/board/seen.json")).unwrap();
    assert!(marks.contains(&r.host.as_ref().unwrap().key), "{marks}");
    until(&mut src, 5_000, "b's Builder seen", |s| {
        row(s, "b", "Builder").is_some_and(|r| r.seen && !r.waiting_on_you)
    });
    w.set_seen(&r.seen_key, &last, false).unwrap();
    until(&mut src, 5_000, "b's Builder unseen", |s| {
        row(s, "b", "Builder").is_some_and(|r| !r.seen && r.waiting_on_you)
    });
    // Nothing of this machine was written.
    assert_eq!(net.local_listing(), local_before);

    // The command: a key that is not one, or a time that is not one, is refused there (exit 2)
    // and nothing is written; a host not on the board is refused here.
    for (key, at) in [
        ("$(touch x)", last.as_str()),
        ("root/Builder", "yesterday"),
        ("root/Builder\u{1b}[2J", last.as_str()),
    ] {
        let o = net.run(&["seen", "--host", "b", "--last-activity", at, key], None);
        assert_eq!(o.status.code(), Some(2), "{o:?}");
    }
    let again = std::fs::read_to_string(net.host("b").dir.join("data/board/seen.json")).unwrap();
    assert!(!again.contains("touch"), "{again}");
    let o = net.run(
        &[
            "seen",
            "--host",
            "b",
            "--last-activity",
            &last,
            "root/Builder",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let said: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(said["seen"], true);
    let e = w.set_seen("zz\u{1f}root/Builder", &last, true).unwrap_err();
    assert!(e.to_string().contains("not on this board"), "{e}");
}

#[test]
#[cfg_attr(
    not(hosts_tier),
    ignore = "needs root, OpenSSH's sshd, ssh, ssh-keygen, ip and unshare (the multi-host tier; .ci/run installs openssh-server)"
)]
fn jump_last_to_another_host_goes_only_to_the_pi_that_alerted() {
    use intercom_pane::seam::alerts::memory::{LastAlert, Memory, PaneRef};
    let net = Net::new(&[("b", &["Builder"])], &[]);
    let mut src = board(&net);
    net.host("b").ask(0, "deploy?");
    let s = until(&mut src, 30_000, "b's Builder waiting", |s| {
        row(s, "b", "Builder")
            .is_some_and(|r| r.state == intercom_pane::seam::states::BoardState::Waiting)
    });
    drop(src);
    let r = row(&s, "b", "Builder").unwrap().clone();
    let pane = r.pane.clone().unwrap();
    assert!(pane.pi.is_some(), "{pane:?}");
    // The last alert, as watch records it for a row of b (its id keyed with its host).
    let data_root = net.local.join("data");
    let memory = Memory {
        version: 1,
        seats: Default::default(),
        last: Some(LastAlert {
            session: r.id.clone(),
            seat_key: r.seen_key.clone(),
            name: r.name.clone(),
            state: "waiting".into(),
            at: crate::hosts_support::now_ms(),
            pane: Some(PaneRef {
                kind: pane.kind,
                socket: pane.socket.clone(),
                pane_id: pane.pane_id.clone(),
                pi: pane.pi.clone(),
            }),
            root: None,
        }),
    };
    let file = intercom_pane::seam::alerts::memory_file::path(&data_root);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, memory.to_bytes()).unwrap();
    let mut args = vec!["jump", "--last", "--print"];
    let local = net.local_args();
    args.extend(local.iter().map(String::as_str));
    let o = net.run(&args, None);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stdout).contains(&pane.pane_id));
    // Its pi is replaced on b: the jump to what alerted is refused there (exit 4), nothing
    // printed (the same session in another pane and pi is not what the alert was about).
    net.host("b").replace_pi(0);
    let o = net.run(&args, None);
    assert_eq!(o.status.code(), Some(4), "{o:?}");
    assert!(o.stdout.is_empty(), "{o:?}");
}

/// `review --host` and `land --host` run there, on that host's roster and git checkout, their
/// answers and exit codes unchanged; nothing here is touched.
#[test]
#[cfg_attr(
    not(hosts_tier),
    ignore = "needs root, OpenSSH's sshd, ssh, ssh-keygen, ip and unshare (the multi-host tier; .ci/run installs openssh-server)"
)]
fn review_and_land_run_on_the_host_named() {
    let net = Net::new(&[("b", &["Builder"])], &[]);
    let before = net.local_listing();
    let root = net.host("b").dir.join("root");
    crate::scan_support::git(&root, &["init", "-q", "-b", "main"]);
    std::fs::write(root.join("notes.txt"), "one\n").unwrap();
    crate::scan_support::git(&root, &["add", "notes.txt"]);
    crate::scan_support::git(&root, &["commit", "-qm", "start"]);
    std::fs::write(
        root.join("notes.txt"),
        "one\ntwo $(touch /tmp/ip-hosts-pwned)\n",
    )
    .unwrap();

    let o = net.run(&["review", "--host", "b", "--json", "Builder"], None);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["worker"], "Builder");
    assert_eq!(r["checkout"], root.display().to_string().as_str());
    let f = r["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "notes.txt")
        .unwrap_or_else(|| panic!("{r}"));
    assert_eq!(
        (f["where"].as_str(), f["added"].as_u64()),
        (Some("uncommitted"), Some(1))
    );

    // It works in the host's main checkout itself: nothing to land, refused there (exit 3).
    let o = net.run(
        &["land", "--host", "b", "--json", "--dry-run", "Builder"],
        None,
    );
    assert_eq!(o.status.code(), Some(3), "{o:?}");
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        r["steps"][0]["detail"]
            .as_str()
            .unwrap()
            .contains("main checkout itself"),
        "{r}"
    );
    assert!(!std::path::Path::new("/tmp/ip-hosts-pwned").exists());
    assert_eq!(net.local_listing(), before, "nothing here was touched");
}
