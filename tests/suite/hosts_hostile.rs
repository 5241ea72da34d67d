//! Hostile words on the way to another host, over real sshd: the remote program, its root,
//! its flags' paths and its tmux socket live in folders whose names are shell code, tmux
//! formats, quotes, a TAB; worker names and `--host` values given to the commands are shell
//! code too. Everything reaches the far side as the same words (the board reads that host's
//! rows; a jump's command names its socket exactly, through both shells), and nothing is ever
//! run: no file the hostile words would create appears, here or in the remote shell's home.

use std::path::{Path, PathBuf};

use intercom_pane::seam::snapshot::HostState;
use intercom_pane::seam::states::BoardState;

use crate::hosts_support::{all_answering, board, row, until, Net};

/// A folder name holding shell code that would create `mark` in the shell's working folder.
fn hostile(mark: &str, i: u32) -> String {
    format!("x $(touch {mark}-{i}a) `touch {mark}-{i}b` ;touch {mark}-{i}c; '\"#{{S}}#(touch {mark}-{i}d) %1 ${{HOME}}")
}

/// Where the marks could appear: the test's folder and the remote login shell's home.
fn marks_found(net: &Net, mark: &str) -> Vec<PathBuf> {
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    let mut found = Vec::new();
    for d in [net.dir.path(), Path::new(&home), Path::new("/")] {
        for e in std::fs::read_dir(d).unwrap().flatten() {
            if e.file_name().to_string_lossy().starts_with(mark) {
                found.push(e.path());
            }
        }
    }
    for f in &found {
        let _ = std::fs::remove_file(f);
    }
    found
}

/// The words `sh` makes of `line` (NUL-separated by printf).
fn sh_words(line: &str) -> Vec<String> {
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("printf '%s\\0' {line}"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let mut v: Vec<String> = text.split('\0').map(str::to_string).collect();
    v.pop();
    v
}

#[test]
#[cfg_attr(
    not(hosts_tier),
    ignore = "needs root, OpenSSH's sshd, ssh, ssh-keygen, ip and unshare (the multi-host tier; .ci/run installs openssh-server)"
)]
fn hostile_paths_names_and_hosts_reach_the_far_side_as_words_and_run_nothing() {
    let mark = format!("ip-pwned-{}", std::process::id());
    let mut net = Net::new(&[("h", &["Builder"])], &[]);
    let h = net.host("h");
    let hdir = h.dir.clone();
    let sock = h.tmux.as_ref().unwrap().sock.clone();
    // The program and the tmux socket are reached through links whose names are hostile; the
    // system config and the repository are in folders whose names are hostile (the config is
    // never read through a link; the registrations keep the real root and session files).
    let link = |i: u32, to: &Path| -> String {
        let p = hdir.join(hostile(&mark, i));
        std::os::unix::fs::symlink(to, &p).unwrap();
        p.display().to_string()
    };
    let folder = |i: u32| -> PathBuf {
        let p = hdir.join(hostile(&mark, i));
        std::fs::create_dir(&p).unwrap();
        p
    };
    let bin_dir = link(1, &hdir.join("bin"));
    let socket = link(4, &sock);
    let sys = folder(3).join("sys.json");
    std::fs::copy(hdir.join("sys.json"), &sys).unwrap();
    let repo = folder(5);
    let d = |p: &str| hdir.join(p).display().to_string();
    net.host_mut("h").args = Some(vec![
        "--root".into(),
        d("root"),
        "--config".into(),
        sys.display().to_string(),
        "--sessions-dir".into(),
        d("sessions"),
        "--fleet".into(),
        "none".into(),
        "--repo".into(),
        repo.display().to_string(),
        "--tmux-socket".into(),
        socket.clone(),
    ]);
    let bin = format!("{bin_dir}/intercom-pane");
    net.write_hosts_file(&[("h", &bin)]);

    // The board: the host answers through its hostile program path and reads its rows.
    let mut src = board(&net);
    until(&mut src, 30_000, "h answering with Builder idle", |s| {
        all_answering(s) && row(s, "h", "Builder").is_some_and(|r| r.state == BoardState::Idle)
    });
    net.host("h").ask(0, "which one?");
    until(&mut src, 5_000, "h's Builder waiting", |s| {
        row(s, "h", "Builder").is_some_and(|r| r.state == BoardState::Waiting)
    });
    drop(src);

    // Hostile worker names: the seat is not found there (exit 5, 2), nothing runs.
    for name in [
        format!("$(touch {mark}-n1)"),
        format!("Builder'; touch {mark}-n2; '"),
        format!("`touch {mark}-n3`"),
    ] {
        let o = net.run(&["reply", "--host", "h", &name, "hello"], None);
        assert_eq!(o.status.code(), Some(5), "{o:?}");
        let o = net.run(&["close-worker", "--host", "h", &name, "--dry-run"], None);
        assert_ne!(o.status.code(), Some(0), "{o:?}");
    }
    assert!(!net.host("h").transcript(0).contains("hello"));

    // Hostile --host values are refused here (exit 2) before ssh runs.
    for host in [
        format!("h;touch {mark}-h1"),
        format!("x=h$(touch {mark}-h2)"),
        format!("x=-oProxyCommand=touch {mark}-h3"),
        format!("x=h\ttouch {mark}-h4"),
        "x=#{S}".to_string(),
    ] {
        let o = net.run(&["reply", "--host", &host, "Builder", "hi"], None);
        assert_eq!(o.status.code(), Some(2), "{host}: {o:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!err.contains('\t') && !err.contains('\u{1b}'), "{err}");
    }

    // A jump (asked through the hostile program path): the host names the socket its pi's
    // registration holds; the printed command hands tmux exactly that path after this
    // machine's shell and the remote shell each parsed it.
    let o = net.run(&["jump", "--host", "h", "--print", "Builder"], None);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let line = String::from_utf8(o.stdout).unwrap();
    let line = line.trim_end();
    let local = sh_words(line);
    assert_eq!(local[0], "ssh");
    let dest = local.iter().position(|w| w == "--").unwrap() + 1;
    assert_eq!(local[dest], net.host("h").addr);
    let remote = sh_words(&local[dest + 1..].join(" "));
    let pane = remote[5].clone();
    assert_eq!(
        remote,
        [
            "tmux",
            "-S",
            sock.to_str().unwrap(),
            "attach-session",
            "-t",
            &pane,
            ";",
            "select-pane",
            "-t",
            &pane
        ]
    );
    assert!(pane.starts_with('%'));

    // A host that refuses its own flags (its config reached through a link, which it never
    // reads) says so on the board: refused, with its own words, not "not answering".
    let cfg_link = link(6, &hdir.join("sys.json"));
    let mut args = net.host("h").args.clone().unwrap();
    args[3] = cfg_link;
    net.host_mut("h").args = Some(args);
    net.write_hosts_file(&[("h", &bin)]);
    let mut src = board(&net);
    let s = until(&mut src, 20_000, "h refused", |s| {
        s.hosts.iter().any(|v| v.state == HostState::Refused)
    });
    let view = &s.hosts[0];
    assert!(
        view.detail.contains("exit 2") && view.detail.contains("link_refused"),
        "{view:?}"
    );
    drop(src);

    let found = marks_found(&net, &mark);
    assert!(found.is_empty(), "hostile words ran: {found:?}");
}
