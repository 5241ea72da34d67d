//! The README's setup, word for word, on a fresh account, with a real pi 1.6.0: an empty HOME,
//! the binary where `cargo install` puts it, and a terminal outside tmux (a pane of a private
//! outer server, `$TMUX` unset) or inside it (a session of the person's own tmux server, attached
//! in that terminal). The block runs as written (the one line a test cannot run, the release
//! build of `cargo install`, is checked instead); the coordinator's pi places the sidebar, no pi
//! warns about tmux's extended keys, `intercom-pane doctor` finds every link in place, inside tmux
//! the person's own session is kept and their client switched (no nested tmux), and the README's
//! restart block brings an exited coordinator back beside the sidebar it kept. The roster comes
//! from `init` and `spawn` (no JSON, no session id typed): the first worker places the sidebar.
//!
//! Runs only when `INTERCOM_PANE_REAL_PI` names a folder holding `pi` and `node` (22); otherwise
//! `cargo test` reports it as ignored, with the reason.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_support;
use crate::readme_support;
use crate::real_pi_support;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use mux_support::{wait_for, TmuxServer};
use real_pi_support::real_pi;
use serde_json::{json, Value};

#[test]
#[cfg_attr(
    not(real_pi),
    ignore = "real-pi tier: INTERCOM_PANE_REAL_PI names no folder with pi and node 22 (.ci/run installs them)"
)]
fn the_readme_setup_runs_word_for_word_on_a_fresh_account_outside_tmux() {
    setup_word_for_word(false);
}

#[test]
#[cfg_attr(
    not(real_pi),
    ignore = "real-pi tier: INTERCOM_PANE_REAL_PI names no folder with pi and node 22 (.ci/run installs them)"
)]
fn the_readme_setup_runs_word_for_word_on_a_fresh_account_inside_tmux() {
    setup_word_for_word(true);
}

fn setup_word_for_word(inside_tmux: bool) {
    let _one = real_pi_support::SERIAL
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let bin = real_pi();
    let block = readme_support::sh_block("intercom-pane init --start --detach");
    // A test cannot make a release build for `cargo install`: this build stands in, in
    // ~/.cargo/bin, and the line itself must keep to the lock file.
    let cargo: Vec<&str> = block
        .lines()
        .filter(|l| l.starts_with("cargo install"))
        .collect();
    assert_eq!(cargo.len(), 1, "{block}");
    assert!(
        cargo[0].starts_with("cargo install --locked --path ."),
        "{}",
        cargo[0]
    );
    let script: String = block
        .lines()
        .filter(|l| !l.starts_with("cargo install"))
        .map(|l| format!("{l}\n"))
        .collect();
    let fresh = readme_support::FreshHome::new();
    let home = fresh.home();
    // The person's pi, already set up (the README starts from "pi 1.6 installed"): a model to
    // start with, never asked (no prompt is sent).
    let agent = home.join(".pi/agent");
    std::fs::create_dir_all(&agent).unwrap();
    real_pi_support::never_asked_model(&agent);
    std::fs::write(
        agent.join("settings.json"),
        json!({"defaultProvider": "fake", "defaultModel": "fake-model"}).to_string(),
    )
    .unwrap();
    let tmux_tmp = fresh.dir.path().join("tmux-tmp");
    std::fs::create_dir_all(&tmux_tmp).unwrap();
    let script_path = fresh.dir.path().join("setup.sh");
    std::fs::write(&script_path, &script).unwrap();
    let path = fresh.path_env(&[&bin]);
    let env_line = format!(
        "env -i HOME={} PATH={path} TERM=xterm-256color TMUX_TMPDIR={} PI_OFFLINE=1",
        home.display(),
        tmux_tmp.display()
    );
    // The terminal, in the checkout (the README's commands start there): outside tmux the
    // block runs in it; inside, in a session of the person's own tmux server attached there.
    let checkout = env!("CARGO_MANIFEST_DIR");
    let block_run = format!(
        "bash -e {} > {}/setup.out 2>&1; sleep 600",
        script_path.display(),
        fresh.dir.path().display()
    );
    let run = if inside_tmux {
        format!(
            "cd {checkout} && {env_line} tmux new-session -s mine {}",
            readme_support::shell_word(&block_run)
        )
    } else {
        format!("cd {checkout} && {env_line} {block_run}")
    };
    let outer = TmuxServer::start("terminal", fresh.dir.path(), &["bash", "-c", &run]);
    outer.tmux(&["resize-window", "-t", "=terminal:", "-x", "160", "-y", "50"]);
    let sock = tmux_tmp.join(format!("tmux-{}/default", nix::unistd::getuid()));
    // The socket is there a moment before its server answers.
    let answers = || {
        Command::new("tmux")
            .arg("-S")
            .arg(&sock)
            .args(["list-sessions"])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    wait_for(30_000, || answers().then_some(())).unwrap_or_else(|| {
        panic!(
            "the README's tmux made no server:\n{}",
            std::fs::read_to_string(fresh.dir.path().join("setup.out")).unwrap_or_default()
        )
    });
    let inner = TmuxServer::adopt(&sock);
    // The coordinator's pi starts in the attached session; its extension places the sidebar.
    let sidebar = wait_for(60_000, || {
        // Sessions come one by one: a listing may fail before the first is there.
        let o = Command::new("tmux")
            .arg("-S")
            .arg(&sock)
            .args([
                "list-panes",
                "-a",
                "-F",
                "#{session_name} #{@intercom-pane-owner}",
            ])
            .output()
            .ok()?;
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .any(|l| l.starts_with("proj-coordinator intercom-pane:"))
            .then_some(())
    });
    let screens = || {
        // Every window there is now (the workers come one by one).
        inner
            .tmux(&["list-panes", "-a", "-F", "#{pane_id}"])
            .lines()
            .map(|p| inner.tmux(&["capture-pane", "-p", "-t", p]))
            .collect::<Vec<_>>()
            .join("\n----\n")
    };
    assert!(
        sidebar.is_some(),
        "no sidebar above the coordinator:\n{}\n{}",
        screens(),
        std::fs::read_to_string(fresh.dir.path().join("setup.out")).unwrap_or_default()
    );
    // pi asks for tmux's extended keys; the plugin line of the setup turned them on.
    assert_eq!(inner.tmux(&["show", "-gv", "extended-keys"]).trim(), "on");
    // The workers `spawn` added, each in a window of the coordinator's session (the second
    // comes after the sidebar the first placed).
    let windows = || {
        inner.tmux(&[
            "list-windows",
            "-t",
            "=proj-coordinator:",
            "-F",
            "#{window_name}",
        ])
    };
    let both = wait_for(90_000, || {
        let w = windows();
        // Each new window comes right after the coordinator's: the newest first.
        let mut names: Vec<&str> = w.lines().skip(1).collect();
        names.sort_unstable();
        (names == ["Builder", "Reviewer"]).then_some(())
    });
    assert!(
        both.is_some(),
        "{}\n{}\n{}",
        windows(),
        screens(),
        std::fs::read_to_string(fresh.dir.path().join("setup.out")).unwrap_or_default()
    );
    // Step 4, from another pane: every link in place.
    let proj = home.join("proj");
    let doctor = || {
        let o = Command::new(home.join(".cargo/bin/intercom-pane"))
            .args(["doctor", "--json"])
            .current_dir(&proj)
            .env_clear()
            .env("HOME", &home)
            .env("PATH", &path)
            .env("TMUX_TMPDIR", &tmux_tmp)
            .output()
            .unwrap();
        let r: Value = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
        (o.status.code(), r)
    };
    // The placement's last stages (label, run) may still be under way when doctor first
    // passes: wait for the monitor's row too.
    let monitor_ok = |r: &Value| {
        r["checks"].as_array().is_some_and(|c| {
            c.iter()
                .any(|c| c["name"] == "monitor" && c["status"] == "ok")
        })
    };
    let (code, report) = wait_for(30_000, || {
        let (code, r) = doctor();
        (code == Some(0) && monitor_ok(&r)).then_some((code, r))
    })
    .unwrap_or_else(|| {
        let (code, r) = doctor();
        panic!("doctor exit {code:?}: {r:#}\n{}", screens())
    });
    assert_eq!(code, Some(0));
    for name in [
        "tmux server",
        "binary",
        "extension",
        "roster",
        "sessions",
        "extension loaded",
    ] {
        let c = report["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("no {name}: {report:#}"));
        assert_eq!(c["status"], "ok", "{report:#}");
    }
    let monitor = &report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "monitor")
        .unwrap()["status"];
    assert_eq!(monitor, "ok", "{report:#}");
    let shown = screens();
    assert!(!shown.contains("extended-keys is off"), "{shown}");

    assert!(Path::new(&home.join(".tmux.conf")).exists());
    if inside_tmux {
        // No nested tmux: the person's own session is still there, and their one client now
        // shows the coordinator.
        let clients = wait_for(10_000, || {
            let c = inner.tmux(&["list-clients", "-F", "#{client_session}"]);
            (c.trim() == "proj-coordinator").then_some(c)
        });
        assert!(
            clients.is_some(),
            "{}",
            inner.tmux(&["list-clients", "-F", "#{client_session}"])
        );
        assert!(inner.tmux(&["list-sessions", "-F", "#S"]).contains("mine"));
    }
    restart_the_coordinator(&inner, &outer, &fresh, &env_line, inside_tmux, &doctor);
    drop(inner);
    drop(outer);
}

/// The coordinator's pi exits (ended by a signal, as a crash or a closed terminal would); its
/// pane stays, dead, under the sidebar. The README's restart block, run from the roster's folder
/// in a new terminal window, starts it again there on its session: the same panes, one sidebar,
/// and doctor finds every link again.
fn restart_the_coordinator(
    inner: &TmuxServer,
    outer: &TmuxServer,
    fresh: &readme_support::FreshHome,
    env_line: &str,
    inside_tmux: bool,
    doctor: &dyn Fn() -> (Option<i32>, Value),
) {
    let panes = || {
        inner.tmux(&[
            "list-panes",
            "-t",
            "=proj-coordinator:{start}",
            "-F",
            "#{pane_id} #{pane_pid} #{@intercom-pane-owner}#{?pane_dead, dead,}",
        ])
    };
    let listed = panes();
    let sidebar = listed
        .lines()
        .find(|l| l.contains(" intercom-pane:"))
        .and_then(|l| l.split(' ').next())
        .unwrap_or_else(|| panic!("no sidebar: {listed}"))
        .to_string();
    let pi_line = listed
        .lines()
        .find(|l| !l.contains(" intercom-pane:"))
        .unwrap_or_else(|| panic!("no coordinator pane: {listed}"))
        .to_string();
    let mut words = pi_line.split(' ');
    let pi_pane = words.next().unwrap().to_string();
    let pane_pid: i32 = words.next().unwrap().parse().unwrap();
    // The pane runs the shell that keeps it (`init --detach`); pi is its one child.
    let children = std::fs::read_to_string(format!("/proc/{pane_pid}/task/{pane_pid}/children"))
        .unwrap_or_default();
    let pi_pid: i32 = children
        .split_whitespace()
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no pi under the coordinator's pane {pane_pid}: {children:?}"));
    let server_pid = inner.tmux(&["display-message", "-p", "#{pid}"]);
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pi_pid),
        nix::sys::signal::Signal::SIGKILL,
    );
    let dead = wait_for(15_000, || {
        panes()
            .lines()
            .any(|l| l.starts_with(&format!("{pi_pane} ")) && l.ends_with(" dead"))
            .then_some(())
    });
    assert!(
        dead.is_some(),
        "the coordinator's pane did not stay: {}",
        panes()
    );
    // The person clicks the sidebar and back: tmux before 3.5 crashed here, every session
    // with it, when the dead pane's pi had left focus reports on.
    inner.tmux(&["select-pane", "-t", &sidebar]);
    inner.tmux(&["select-pane", "-t", &pi_pane]);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        inner.tmux(&["display-message", "-p", "#{pid}"]),
        server_pid,
        "the tmux server restarted"
    );
    let block = readme_support::sh_block("tmux respawn-pane");
    let path = fresh.dir.path().join("restart.sh");
    std::fs::write(&path, &block).unwrap();
    let proj = fresh.home().join("proj");
    let run = format!(
        "cd {} && bash -e {} > {}/restart.out 2>&1; sleep 600",
        proj.display(),
        path.display(),
        fresh.dir.path().display()
    );
    // The person's environment (the test's own PATH has no pi; tmux gives a window made by
    // an unattached client that client's PATH).
    let person = env_line.replacen("env -i ", "env ", 1);
    let line = format!("{person} bash -c {}", readme_support::shell_word(&run));
    if inside_tmux {
        // A new window of the person's own session: `$TMUX` is set there.
        inner.tmux(&["new-window", "-d", "-t", "=mine:", "bash", "-c", &line]);
    } else {
        let line = format!("env -u TMUX {line}");
        outer.tmux(&["new-window", "-d", "-t", "=terminal:", "bash", "-c", &line]);
    }
    let back = wait_for(60_000, || {
        let l = panes();
        let pi = l.lines().find(|l| l.starts_with(&format!("{pi_pane} ")))?;
        (!pi.ends_with(" dead") && l.contains(&sidebar)).then_some(())
    });
    assert!(
        back.is_some(),
        "the restart block: {}\n{}\n{}\n{}",
        panes(),
        inner.tmux(&[
            "list-panes",
            "-a",
            "-F",
            "#{session_name} #{window_index} #{pane_id} #{pane_dead} #{pane_current_command}"
        ]),
        inner.tmux(&["capture-pane", "-p", "-t", "=proj-coordinator:{start}"])
            + &inner.tmux(&["capture-pane", "-p", "-t", "=mine:1"]),
        std::fs::read_to_string(fresh.dir.path().join("restart.out")).unwrap_or_default()
    );
    let ok = wait_for(30_000, || {
        let (code, r) = doctor();
        let monitor = r["checks"].as_array().is_some_and(|c| {
            c.iter()
                .any(|c| c["name"] == "monitor" && c["status"] == "ok")
        });
        (code == Some(0) && monitor).then_some(())
    });
    assert!(ok.is_some(), "doctor after the restart: {:#}", doctor().1);
    let everywhere = inner.tmux(&["list-panes", "-a", "-F", "#{@intercom-pane-owner}"]);
    assert_eq!(
        everywhere
            .lines()
            .filter(|l| l.starts_with("intercom-pane:"))
            .count(),
        1,
        "one sidebar, the one kept: {}",
        panes()
    );
    assert!(panes().contains(&sidebar), "{}", panes());
}
