//! The README's setup, word for word, on a fresh account, with a real pi 1.6.0: an empty HOME,
//! a terminal outside tmux (a pane of a private outer server, `$TMUX` unset), the binary where
//! `cargo install` puts it. The block runs as written (the one line a test cannot run, the
//! release build of `cargo install`, is checked instead); the coordinator's pi places the
//! sidebar, no pi warns about tmux's extended keys, and `intercom-pane doctor` finds every link
//! in place.
//!
//! Runs only when `INTERCOM_PANE_REAL_PI` names a folder holding `pi` and `node` (22); otherwise
//! `cargo test` reports it as ignored, with the reason.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_support;
use crate::readme_support;
use crate::real_pi_support;

use std::path::Path;
use std::process::Command;

use mux_support::{wait_for, TmuxServer};
use real_pi_support::real_pi;
use serde_json::{json, Value};

#[test]
#[cfg_attr(
    not(real_pi),
    ignore = "real-pi tier: INTERCOM_PANE_REAL_PI names no folder with pi and node 22 (.ci/run installs them)"
)]
fn the_readme_setup_runs_word_for_word_on_a_fresh_account() {
    let _one = real_pi_support::SERIAL
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let bin = real_pi();
    let block = readme_support::sh_block("cat > .pi-intercom/config.json");
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
    // The terminal, outside tmux, in the checkout (the README's commands start there).
    let checkout = env!("CARGO_MANIFEST_DIR");
    let run = format!(
        "cd {checkout} && {env_line} bash -e {} > {}/setup.out 2>&1; sleep 600",
        script_path.display(),
        fresh.dir.path().display()
    );
    let outer = TmuxServer::start("terminal", fresh.dir.path(), &["bash", "-c", &run]);
    outer.tmux(&["resize-window", "-t", "=terminal:", "-x", "160", "-y", "50"]);
    let sock = tmux_tmp.join(format!("tmux-{}/default", nix::unistd::getuid()));
    wait_for(30_000, || sock.exists().then_some(())).unwrap_or_else(|| {
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
            .any(|l| l.starts_with("Coordinator intercom-pane:"))
            .then_some(())
    });
    let screens = || {
        ["Builder", "Reviewer", "Coordinator"]
            .iter()
            .map(|s| inner.tmux(&["capture-pane", "-p", "-t", &format!("={s}:")]))
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
    let (code, report) = wait_for(30_000, || {
        let (code, r) = doctor();
        (code == Some(0)).then_some((code, r))
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
    drop(inner);
    drop(outer);
}
