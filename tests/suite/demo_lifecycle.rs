//! The demo leaves nothing behind, however it ends: SIGINT to its process group (`timeout -s
//! INT`, Ctrl-C) while it starts and once it runs, SIGTERM, SIGHUP to the group (a closed
//! terminal), SIGKILL of the demo itself and of its parent, and a reader that stops reading
//! (`demo --print | head`). "Nothing" is checked on the machine: no process whose command line
//! or working folder lies in the demo's temporary folder (tmux server, simulated agents,
//! monitor, shells) and an empty temporary folder.
//!
//! `INTERCOM_PANE_DEMO_RUNS=N` repeats every case N times (the bar is 20 of 20; the
//! default here is one run of each).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;

fn runs() -> usize {
    std::env::var("INTERCOM_PANE_DEMO_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
}

fn demo(tmp: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_intercom-pane"));
    c.args(["demo", "--print", "--passes", "0", "--interval", "1"])
        .env("TMPDIR", tmp)
        .env_remove("TMUX")
        .stdin(Stdio::null())
        .stderr(Stdio::piped());
    c
}

/// Every live process whose command line or working folder lies under `dir`.
fn processes_in(dir: &Path) -> Vec<String> {
    let needle = dir.display().to_string();
    let me = std::process::id().to_string();
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.bytes().all(|b| b.is_ascii_digit()) || name == me {
            continue;
        }
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        if stat.rsplit(") ").next().is_some_and(|s| s.starts_with('Z')) {
            continue; // ended, waiting to be reaped: nothing runs
        }
        let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        let cwd = std::fs::read_link(e.path().join("cwd")).unwrap_or_default();
        if cmd.contains(&needle) || cwd.starts_with(dir) {
            out.push(format!(
                "{name}: {}",
                cmd.chars().take(120).collect::<String>()
            ));
        }
    }
    out
}

/// Wait (bounded) until nothing of the demo is left; panics with what is.
fn assert_nothing_left(tmp: &Path, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let procs = processes_in(tmp);
        let files: Vec<PathBuf> = std::fs::read_dir(tmp)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        if procs.is_empty() && files.is_empty() {
            return;
        }
        if Instant::now() > deadline {
            panic!("{what}: left behind\nprocesses: {procs:#?}\nfiles: {files:#?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The demo's socket once its server runs the coordinator, the monitor and four workers.
fn wait_running(tmp: &Path) -> PathBuf {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        let sock = std::fs::read_dir(tmp)
            .unwrap()
            .flatten()
            .map(|e| e.path().join("tmux.sock"))
            .find(|p| p.exists());
        if let Some(sock) = sock {
            let out = Command::new("tmux")
                .arg("-S")
                .arg(&sock)
                .args(["list-panes", "-a", "-F", "#{pane_id}"])
                .output()
                .unwrap();
            if String::from_utf8_lossy(&out.stdout).lines().count() >= 6 {
                return sock;
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("the demo never ran its six panes");
}

/// Wait until the demo's folder exists (it is setting up, the server not yet running).
fn wait_folder(tmp: &Path) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::fs::read_dir(tmp).unwrap().next().is_none() {
        assert!(Instant::now() < deadline, "no demo folder appeared");
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn wait_exit(child: &mut Child) -> std::process::ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        assert!(Instant::now() < deadline, "the demo did not end");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn stderr_of(child: &mut Child) -> String {
    let mut s = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut e, &mut s);
    }
    s
}

/// Start the demo in a process group of its own (as a shell job or `timeout` would), wait for
/// `ready`, deliver `signal` to the group or to the demo, and check the end.
fn signal_case(signal: Signal, to_group: bool, early: bool) {
    for run in 0..runs() {
        let what = format!(
            "{signal:?} to the {}, run {run}, early {early}",
            if to_group { "group" } else { "demo" }
        );
        let tmp = tempfile::tempdir().unwrap();
        let mut child = demo(tmp.path())
            .stdout(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap();
        let pid = Pid::from_raw(child.id() as i32);
        if early {
            wait_folder(tmp.path());
        } else {
            wait_running(tmp.path());
        }
        if to_group {
            killpg(pid, signal).unwrap();
        } else {
            kill(pid, signal).unwrap();
        }
        let status = wait_exit(&mut child);
        let err = stderr_of(&mut child);
        assert!(!err.contains("panicked"), "{what}: {err}");
        if signal != Signal::SIGKILL {
            use std::os::unix::process::ExitStatusExt;
            // Ended by its own clean-up (128 + the signal), or by the signal itself when it
            // came before the demo blocked it (nothing had been started then).
            assert!(
                status.code() == Some(128 + signal as i32)
                    || status.signal() == Some(signal as i32),
                "{what}: {status:?} {err}"
            );
        }
        assert_nothing_left(tmp.path(), &what);
    }
}

#[test]
fn sigint_to_the_group_while_the_demo_starts_leaves_nothing() {
    signal_case(Signal::SIGINT, true, true);
}

#[test]
fn sigint_to_the_group_while_the_demo_runs_leaves_nothing() {
    signal_case(Signal::SIGINT, true, false);
}

#[test]
fn sigterm_leaves_nothing() {
    signal_case(Signal::SIGTERM, false, false);
}

#[test]
fn sighup_to_the_group_leaves_nothing() {
    signal_case(Signal::SIGHUP, true, false);
}

#[test]
fn sigkill_of_the_demo_leaves_nothing() {
    signal_case(Signal::SIGKILL, false, false);
    signal_case(Signal::SIGKILL, false, true);
}

/// The demo's parent is killed (a shell closed with SIGKILL): the demo hears of it and ends.
#[test]
fn sigkill_of_the_demos_parent_leaves_nothing() {
    for run in 0..runs() {
        let tmp = tempfile::tempdir().unwrap();
        let line = format!(
            "'{}' demo --print --passes 0 --interval 1 >/dev/null 2>&1 & wait",
            env!("CARGO_BIN_EXE_intercom-pane")
        );
        let mut parent = Command::new("sh")
            .args(["-c", &line])
            .env("TMPDIR", tmp.path())
            .env_remove("TMUX")
            .stdin(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap();
        wait_running(tmp.path());
        parent.kill().unwrap();
        parent.wait().unwrap();
        assert_nothing_left(tmp.path(), &format!("parent killed, run {run}"));
    }
}

/// `demo --print | head -3`: the reader goes away, the demo ends cleanly (exit 0, no panic)
/// and removes everything.
#[test]
fn a_closed_output_ends_the_demo_cleanly() {
    for run in 0..runs() {
        let tmp = tempfile::tempdir().unwrap();
        let mut child = demo(tmp.path())
            .stdout(Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut first = Vec::new();
        for _ in 0..3 {
            let mut l = String::new();
            out.read_line(&mut l).unwrap();
            first.push(l);
        }
        assert!(first[0].starts_with("demo root: "), "{first:?}");
        drop(out);
        let status = wait_exit(&mut child);
        let err = stderr_of(&mut child);
        assert_eq!(status.code(), Some(0), "run {run}: {status:?} {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert_nothing_left(tmp.path(), &format!("closed output, run {run}"));
    }
}
