//! The ssh control folder's fallback (docs/interop.md §13), on a real sshd in a network
//! namespace: without `XDG_RUNTIME_DIR`, another user made `/tmp/intercom-pane-<uid>` first
//! (here: a folder of uid 65534 bind-mounted over it, in a private mount namespace, so nothing
//! outside this test sees it). The command falls back to `<data root>/ssh`, works, and says
//! which folder it used (the log, the doctor); when the fallback is refused too, the host reads
//! `refused` with the reason, never `not_answering`.

use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::hosts_support::Net;

const BIN: &str = env!("CARGO_BIN_EXE_intercom-pane");

/// A folder owned by uid 65534 (another local user), mode 0755.
fn others_folder(p: &Path) {
    std::fs::create_dir_all(p).unwrap();
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::chown(p, Some(65534), Some(65534)).unwrap();
}

/// The binary in a private mount namespace where `/tmp/intercom-pane-<uid>` is `evil`, without
/// `XDG_RUNTIME_DIR`, with the data root under `state`.
fn run_shadowed(
    net: &Net,
    evil: &Path,
    state: &Path,
    log: &Path,
    args: &[&str],
) -> std::process::Output {
    shadowed(net, evil, state, log, args).output().unwrap()
}

/// `run_shadowed`'s command, not started.
fn shadowed(net: &Net, evil: &Path, state: &Path, log: &Path, args: &[&str]) -> Command {
    let usual = format!(
        "/tmp/intercom-pane-{}",
        intercom_pane::seam::fsguard::my_uid()
    );
    // The mount point must exist; made as the program itself would (0700, this user's).
    let _ = std::fs::DirBuilder::new().mode(0o700).create(&usual);
    let mut c = Command::new("unshare");
    c.args(["--mount", "--propagation", "private", "sh", "-c"])
        .arg("mount --bind \"$1\" \"$2\" && shift 2 && exec \"$@\"")
        .arg("sh")
        .arg(evil)
        .arg(&usual)
        .arg(BIN)
        .args(args)
        .current_dir(net.dir.path())
        .env("INTERCOM_PANE_HOSTS", &net.hosts_file)
        .env("INTERCOM_PANE_LOG", log)
        .env("XDG_STATE_HOME", state)
        .env("TMUX_TMPDIR", net.local.join("tmux-tmp"))
        .env_remove("XDG_RUNTIME_DIR")
        .env_remove("TMUX")
        .env_remove("TMUX_PANE")
        .stdin(Stdio::null());
    c
}

#[test]
#[cfg_attr(
    not(hosts_tier),
    ignore = "needs root, OpenSSH's sshd, ssh, ssh-keygen, ip and unshare (the multi-host tier; .ci/run installs openssh-server)"
)]
fn a_refused_control_folder_falls_back_to_the_data_root_and_says_so() {
    let net = Net::new(&[("a", &["Builder"])], &[]);
    let evil = net.dir.path().join("evil");
    others_folder(&evil);
    let state = net.dir.path().join("state");
    let log = net.dir.path().join("log.jsonl");

    let o = run_shadowed(
        &net,
        &evil,
        &state,
        &log,
        &["status", "--json", "--host", "a"],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "stderr: {err}");
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v.to_string().contains("Builder"), "{v}");
    // Nothing was made in the other user's folder.
    assert_eq!(std::fs::read_dir(&evil).unwrap().count(), 0);
    let fallback = state.join("intercom-pane/ssh");
    assert!(fallback.is_dir());
    let mode = std::fs::metadata(&fallback).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
    let logged = std::fs::read_to_string(&log).unwrap();
    let line = logged
        .lines()
        .find(|l| l.contains("\"host_control\""))
        .unwrap_or_else(|| panic!("no host_control event in {logged}"));
    assert!(line.contains(&fallback.display().to_string()), "{line}");
    assert!(line.contains("owned by uid 65534"), "{line}");

    // The doctor names the folder used and why the usual one was refused.
    let o = run_shadowed(&net, &evil, &state, &log, &["doctor"]);
    let out = String::from_utf8_lossy(&o.stdout);
    let l = out
        .lines()
        .find(|l| l.contains("ssh control folder"))
        .unwrap_or_else(|| panic!("no control folder line: {out}"));
    assert!(
        l.contains(&fallback.display().to_string()) && l.contains("owned by uid 65534"),
        "{l}"
    );

    // The fallback refused too (another user's data root): `refused`, with both reasons.
    let state2 = net.dir.path().join("state2");
    others_folder(&state2.join("intercom-pane"));
    let o = run_shadowed(
        &net,
        &evil,
        &state2,
        &log,
        &["scan", "--json", "--host", "a"],
    );
    assert_eq!(o.status.code(), Some(20));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let a = &v["hosts"][0];
    assert_eq!(a["name"], "a");
    assert_eq!(a["state"], "refused", "{a}");
    let detail = a["detail"].as_str().unwrap();
    assert!(
        detail.contains("no private ssh control folder") && detail.contains("owned by uid 65534"),
        "{detail}"
    );

    // The board (`watch` follows every host) says `refused` too, never `not_answering`.
    let log2 = net.dir.path().join("log2.jsonl");
    let mut args = vec![
        "watch",
        "--settle-secs",
        "0",
        "--no-desktop",
        "--no-status-line",
    ];
    let local = net.local_args();
    args.extend(local.iter().map(String::as_str));
    let mut child = shadowed(&net, &evil, &state2, &log2, &args)
        .env("XDG_CONFIG_HOME", net.dir.path().join("config"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let states = || -> Vec<Value> {
        std::fs::read_to_string(&log2)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|v| v["event"] == "host_state" && v["host"] == "a")
            .collect()
    };
    let seen = crate::mux_support::wait_for(15_000, || {
        let s = states();
        (!s.is_empty()).then_some(s)
    });
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    );
    let _ = child.wait();
    let seen = seen.expect("watch said a's state");
    assert!(
        seen.iter().all(|v| v["state"] == "refused"),
        "the board's states of a: {seen:?}"
    );
    assert!(
        seen[0]["detail"]
            .as_str()
            .is_some_and(|d| d.contains("no private ssh control folder")),
        "{seen:?}"
    );
}
