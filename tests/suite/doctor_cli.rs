//! `intercom-pane doctor`: a healthy setup exits 0; each broken link is named, with a fix, and
//! exits 1. Real files, the real tmux binary, a real tmux server on a private socket.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_herdr_fake;
use crate::mux_support;
use crate::scan_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use mux_support::{fake_pi, TmuxServer};
use scan_support::*;
use serde_json::{json, Value};

const PACKAGE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/linux/pi-extension");

/// A healthy layout: roster (coordinator + one worker) whose sessions are real pi fixtures, the
/// extension installed as a pi package in a private agent folder, the binary named for pi.
struct Setup {
    env: Env,
    agent: PathBuf,
    bin: String,
    extra: Vec<(String, String)>,
    /// A tmux server for the roster's agents to run on (none of them runs here yet).
    tmux: TmuxServer,
}

impl Setup {
    fn new() -> Setup {
        let env = Env::new().with_system_path();
        let root = env.path("root");
        std::fs::create_dir_all(root.join(".pi-intercom")).unwrap();
        let sessions = env.path("sessions").join("--work--");
        std::fs::create_dir_all(&sessions).unwrap();
        let mut agents = Vec::new();
        for (i, (fixture, name)) in [("idle", "Coordinator"), ("tool.completed", "W")]
            .iter()
            .enumerate()
        {
            let src = Path::new(FIXTURES)
                .join("pi-sessions")
                .join(format!("{fixture}.jsonl"));
            let id = header_id(&src);
            std::fs::copy(
                &src,
                sessions.join(format!("2026-11-29T23-13-4{i}-000Z_{id}.jsonl")),
            )
            .unwrap();
            agents.push(json!({"sessionId": id, "name": name, "coordinator": i == 0,
                "description": "d", "port": 41100 + i, "projectDirectory": "."}));
        }
        let roster = json!({"version": 1, "multiplexer": "tmux", "agents": agents});
        std::fs::write(root.join(".pi-intercom/config.json"), roster.to_string()).unwrap();
        let agent = env.path("agent");
        std::fs::create_dir_all(&agent).unwrap();
        std::fs::write(
            agent.join("settings.json"),
            json!({"packages": [PACKAGE]}).to_string(),
        )
        .unwrap();
        let tmux = TmuxServer::start("other", env.dir.path(), &[]);
        Setup {
            env,
            agent,
            bin: env!("CARGO_BIN_EXE_intercom-pane").to_string(),
            extra: Vec::new(),
            tmux,
        }
    }

    /// Where the coordinator's sidebar placement is recorded.
    fn monitor_record(&self) -> PathBuf {
        let root = self.env.path("root");
        let cfg: Value =
            serde_json::from_slice(&std::fs::read(root.join(".pi-intercom/config.json")).unwrap())
                .unwrap();
        let coordinator = cfg["agents"][0]["sessionId"].as_str().unwrap();
        intercom_pane::seam::actions::monitor_pane::record_path(&root, coordinator)
    }

    /// The doctor on the setup's tmux server, unless `extra` names another.
    fn doctor(&self, extra: &[&str]) -> Output {
        let mut args = layout_args(&self.env, &["doctor", "--json"], &[]);
        if !extra.contains(&"--tmux-socket") {
            args.extend(["--tmux-socket".into(), self.tmux.sock.display().to_string()]);
        }
        args.extend(extra.iter().map(|s| s.to_string()));
        let mut c = Command::new(&self.bin);
        c.args(&args)
            .current_dir(self.env.dir.path())
            .env_clear()
            .env("HOME", self.env.path("home"))
            .env("XDG_STATE_HOME", self.env.path("state"))
            .env("PATH", &self.env.path_env)
            .env("TMUX_TMPDIR", self.env.path("tmux-tmp"))
            .env("PI_CODING_AGENT_DIR", &self.agent)
            .env("INTERCOM_PANE_BIN", &self.bin);
        for (k, v) in &self.extra {
            c.env(k, v);
        }
        c.output().unwrap()
    }
}

/// The JSON report; every failure and warning in it carries a fix (in every test that reads one).
fn checks(o: &Output) -> Value {
    let r: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    });
    for c in r["checks"].as_array().unwrap() {
        if c["status"] == "fail" || c["status"] == "warn" {
            assert!(
                c["fix"].as_str().is_some_and(|f| !f.trim().is_empty()),
                "a {} without a fix: {c}",
                c["status"]
            );
        }
    }
    r
}

fn check<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no check {name}: {report}"))
}

/// Exit 1, `name` failed with a fix, every other check did not fail.
fn fails_only(o: &Output, name: &str) -> Value {
    let r = checks(o);
    assert_eq!(o.status.code(), Some(1), "{r:#}");
    assert_eq!(r["ok"], false);
    let c = check(&r, name);
    assert_eq!(c["status"], "fail", "{r:#}");
    assert!(c["fix"].as_str().is_some_and(|f| !f.is_empty()), "{c}");
    let failed: Vec<&Value> = r["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] == "fail")
        .map(|c| &c["name"])
        .collect();
    assert_eq!(failed, vec![&json!(name)], "{r:#}");
    c.clone()
}

#[test]
fn a_healthy_setup_exits_0() {
    let s = Setup::new();
    let o = s.doctor(&[]);
    let r = checks(&o);
    assert_eq!(o.status.code(), Some(0), "{r:#}");
    assert_eq!(r["ok"], true);
    assert_eq!(check(&r, "tmux")["status"], "ok");
    assert_eq!(check(&r, "binary")["status"], "ok", "{r:#}");
    assert_eq!(check(&r, "extension")["status"], "ok");
    assert_eq!(check(&r, "roster")["status"], "ok");
    assert_eq!(check(&r, "sessions")["status"], "ok");
    assert_eq!(check(&r, "data root")["status"], "ok");
    assert_eq!(check(&r, "herdr")["status"], "skip");
    // The text form: one line per check.
    let mut args = layout_args(&s.env, &["doctor"], &[]);
    args.retain(|a| a != "--json");
    let text = s.env.run(&args);
    let out = String::from_utf8_lossy(&text.stdout);
    assert!(out.contains("ok    tmux: tmux "), "{out}");
}

#[test]
fn a_missing_extension_is_named() {
    let s = Setup::new();
    std::fs::remove_file(s.agent.join("settings.json")).unwrap();
    let c = fails_only(&s.doctor(&[]), "extension");
    assert!(c["fix"].as_str().unwrap().contains("pi install"), "{c}");
    // Installed the old way (a copied file) counts too.
    std::fs::create_dir_all(s.agent.join("extensions")).unwrap();
    std::fs::copy(
        Path::new(PACKAGE).join("intercom-pane.ts"),
        s.agent.join("extensions/intercom-pane.ts"),
    )
    .unwrap();
    assert_eq!(s.doctor(&[]).status.code(), Some(0));
}

#[test]
fn tmux_absent_from_path_is_named() {
    let mut s = Setup::new();
    // PATH without tmux (the binary is still named for pi through INTERCOM_PANE_BIN).
    s.env.path_env = s.env.path("no-bin").display().to_string();
    let c = fails_only(&s.doctor(&[]), "tmux");
    assert!(c["detail"].as_str().unwrap().contains("not on PATH"), "{c}");
}

#[test]
fn a_roster_session_that_matches_no_pi_session_is_named() {
    let s = Setup::new();
    let p = s.env.path("root/.pi-intercom/config.json");
    let mut cfg: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
    cfg["agents"][1]["sessionId"] = json!("not-a-real-session");
    std::fs::write(&p, cfg.to_string()).unwrap();
    let c = fails_only(&s.doctor(&[]), "sessions");
    let detail = c["detail"].as_str().unwrap();
    assert!(detail.contains("W (not-a-real-session)"), "{c}");
    assert!(c["fix"].as_str().unwrap().contains("--session-id"), "{c}");
    // A roster that does not parse is named as such.
    std::fs::write(&p, "{not json").unwrap();
    fails_only(&s.doctor(&[]), "roster");
}

#[test]
fn a_read_only_data_root_is_named() {
    let s = Setup::new();
    // root writes through mode bits; a sysfs folder refuses even root.
    let ro = if nix::unistd::geteuid().is_root() {
        PathBuf::from("/sys/kernel")
    } else {
        use std::os::unix::fs::PermissionsExt;
        let d = s.env.path("ro");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o555)).unwrap();
        d
    };
    // The system config every command of the layout is given names it as the data root.
    std::fs::write(
        s.env.path("system.json"),
        json!({"dataRoot": ro}).to_string(),
    )
    .unwrap();
    let c = fails_only(&s.doctor(&[]), "data root");
    assert!(
        c["detail"].as_str().unwrap().contains("not writable"),
        "{c}"
    );
}

#[test]
fn a_live_pi_without_the_extension_is_named() {
    let s = Setup::new();
    // The worker's tmux session runs `pi` (a stand-in) that never registered.
    let server = TmuxServer::start("W", s.env.dir.path(), &[]);
    let bin = s.env.path("fake");
    std::fs::create_dir_all(&bin).unwrap();
    let pi = fake_pi(&bin);
    server.new_session("W2", s.env.dir.path(), &[]);
    server.tmux(&["kill-session", "-t", "=W"]);
    server.new_session("W", s.env.dir.path(), &[pi.to_str().unwrap(), "600"]);
    let sock = server.sock.display().to_string();
    let c = fails_only(&s.doctor(&["--tmux-socket", &sock]), "extension loaded");
    assert!(c["detail"].as_str().unwrap().contains("root/W"), "{c}");
    assert_eq!(
        check(&checks(&s.doctor(&["--tmux-socket", &sock])), "tmux server")["status"],
        "ok"
    );
}

#[test]
fn a_fenced_sidebar_launch_is_named() {
    let s = Setup::new();
    let record = s.monitor_record();
    std::fs::write(
        &record,
        json!({"version": 1, "stage": "split_pending"}).to_string(),
    )
    .unwrap();
    let c = fails_only(&s.doctor(&[]), "monitor");
    assert!(
        c["detail"].as_str().unwrap().contains("split_pending"),
        "{c}"
    );
    assert!(c["fix"].as_str().unwrap().contains("--recover"), "{c}");
    // A finished placement is ok only while its pane is there, with the record's marker.
    let server = TmuxServer::start("Coordinator", s.env.dir.path(), &[]);
    let pane = marked_pane(&server, "intercom-pane:test");
    std::fs::write(&record, placed(&server, &pane, "intercom-pane:test")).unwrap();
    let sock = server.sock.display().to_string();
    let r = checks(&s.doctor(&["--tmux-socket", &sock]));
    assert_eq!(check(&r, "monitor")["status"], "ok", "{r:#}");
    // The same pane id without our marker is not our sidebar.
    std::fs::write(&record, placed(&server, &pane, "intercom-pane:other")).unwrap();
    let r = checks(&s.doctor(&["--tmux-socket", &sock]));
    let c = check(&r, "monitor");
    assert_eq!(c["status"], "warn", "{r:#}");
    assert!(
        c["detail"].as_str().unwrap().contains("another pane"),
        "{c}"
    );
}

/// The pane of `server`'s first session, marked as ensure-monitor marks its sidebar.
fn marked_pane(server: &TmuxServer, marker: &str) -> String {
    let pane = server
        .tmux(&["list-panes", "-a", "-F", "#{pane_id}"])
        .trim()
        .to_string();
    server.tmux(&[
        "set-option",
        "-p",
        "-t",
        &pane,
        "@intercom-pane-owner",
        marker,
    ]);
    pane
}

/// A monitor record of a finished placement in `pane` of `server`.
fn placed(server: &TmuxServer, pane: &str, marker: &str) -> String {
    json!({"version": 1, "stage": "submitted", "pane": pane, "multiplexer": "tmux",
        "socket": server.sock, "marker": marker})
    .to_string()
}

/// With the tmux server gone, a tmux roster's agents are not running: the doctor fails and says
/// so, and the sidebar it recorded is named as gone, not "placed".
#[test]
fn a_killed_tmux_server_fails_and_the_sidebar_is_named_gone() {
    let s = Setup::new();
    let root = s.env.path("root");
    let record = s.monitor_record();
    let mut server = TmuxServer::start("Coordinator", s.env.dir.path(), &[]);
    let pane = marked_pane(&server, "intercom-pane:test");
    std::fs::write(&record, placed(&server, &pane, "intercom-pane:test")).unwrap();
    let sock = server.sock.display().to_string();
    let o = s.doctor(&["--tmux-socket", &sock]);
    assert_eq!(o.status.code(), Some(0), "{:#}", checks(&o));
    server.kill();
    let c = fails_only(&s.doctor(&["--tmux-socket", &sock]), "tmux server");
    let detail = c["detail"].as_str().unwrap();
    assert!(
        detail.contains("no tmux server answers") && detail.contains("Coordinator, W"),
        "{c}"
    );
    assert!(c["fix"].as_str().unwrap().contains("new-session"), "{c}");
    let r = checks(&s.doctor(&["--tmux-socket", &sock]));
    let m = check(&r, "monitor");
    assert_eq!(m["status"], "warn", "{r:#}");
    assert!(
        m["detail"].as_str().unwrap().contains("no longer answers")
            && !m["detail"].as_str().unwrap().starts_with("placed"),
        "{m}"
    );
    // The text form says it failed, never that all parts are in place.
    let mut c = Command::new(&s.bin);
    let mut args = layout_args(&s.env, &["doctor"], &["--tmux-socket", &sock]);
    args.retain(|a| a != "--json");
    c.args(&args)
        .current_dir(s.env.dir.path())
        .env("HOME", s.env.path("home"))
        .env("PI_CODING_AGENT_DIR", &s.agent)
        .env("INTERCOM_PANE_BIN", &s.bin);
    let text = String::from_utf8_lossy(&c.output().unwrap().stdout).into_owned();
    assert!(
        text.contains("FAIL  tmux server: no tmux server answers"),
        "{text}"
    );
    assert!(text.contains("check(s) failed"), "{text}");
    assert!(!text.contains("all needed parts are in place"), "{text}");
    // Without a roster, no server is still only a warning (nothing was set up to run).
    std::fs::remove_file(root.join(".pi-intercom/config.json")).unwrap();
    let r = checks(&s.doctor(&["--tmux-socket", &sock]));
    assert_eq!(check(&r, "tmux server")["status"], "warn", "{r:#}");
}

/// A roster session id that differs from the one the pi in the agent's pane runs is one failure
/// that names both ids, not also "the extension is not loaded".
#[test]
fn a_wrong_session_id_is_one_failure_with_the_exact_cause() {
    let s = Setup::new();
    let p = s.env.path("root/.pi-intercom/config.json");
    let mut cfg: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
    let runs = cfg["agents"][1]["sessionId"].as_str().unwrap().to_string();
    let configured = format!("{}-fc8", &runs[..runs.len() - 4]);
    cfg["agents"][1]["sessionId"] = json!(configured);
    std::fs::write(&p, cfg.to_string()).unwrap();
    // The worker's tmux session runs a pi registered (by the extension) in the other session.
    let bin = s.env.path("fake");
    std::fs::create_dir_all(&bin).unwrap();
    let pi = fake_pi(&bin);
    let server = TmuxServer::start("W", s.env.dir.path(), &[pi.to_str().unwrap(), "600"]);
    let line = server.tmux(&["list-panes", "-a", "-F", "#{pane_id} #{pane_pid}"]);
    let mut parts = line.split_whitespace();
    let pane_id = parts.next().unwrap().to_string();
    let pid: i32 = parts.next().unwrap().parse().unwrap();
    let sock = server.sock.display().to_string();
    register_in_pane(&s.env, &runs, pid, &pane_id, &sock);
    let c = fails_only(&s.doctor(&["--tmux-socket", &sock]), "sessions");
    let detail = c["detail"].as_str().unwrap();
    assert!(
        detail.contains(&format!(
            "runs session {runs}, not the configured {configured}"
        )),
        "{c}"
    );
    assert!(c["fix"].as_str().unwrap().contains(&configured), "{c}");
}

#[test]
fn herdr_is_checked_when_configured() {
    let mut s = Setup::new();
    s.extra = vec![(
        "HERDR_SOCKET_PATH".into(),
        s.env.path("no-herdr.sock").display().to_string(),
    )];
    let c = fails_only(&s.doctor(&[]), "herdr");
    assert!(
        c["fix"].as_str().unwrap().contains("HERDR_SOCKET_PATH"),
        "{c}"
    );
    let fake = mux_herdr_fake::FakeHerdr::start(std::process::id());
    s.extra = vec![(
        "HERDR_SOCKET_PATH".into(),
        fake.socket.display().to_string(),
    )];
    let r = checks(&s.doctor(&[]));
    let c = check(&r, "herdr");
    assert_eq!(c["status"], "ok", "{r:#}");
    assert!(c["detail"].as_str().unwrap().contains("Herdr 0.8.2"), "{c}");
    // With Herdr answering, tmux missing is only a warning.
    s.env.path_env = s.env.path("no-bin").display().to_string();
    let o = s.doctor(&[]);
    let r = checks(&o);
    assert_eq!(o.status.code(), Some(0), "{r:#}");
    assert_eq!(check(&r, "tmux")["status"], "warn");
}

#[test]
fn completions_and_man_pages_are_generated() {
    let env = Env::new();
    for shell in ["bash", "zsh", "fish"] {
        let o = env.run(&["completions", shell]);
        assert!(o.status.success(), "{shell}");
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(
            text.contains("close-worker") && text.contains("doctor"),
            "{shell}"
        );
    }
    let o = env.run(&["man"]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains(".TH intercom-pane 1"));
    let dir = env.path("man1");
    std::fs::create_dir_all(&dir).unwrap();
    let o = env.run(&["man", "--out-dir", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let page = std::fs::read_to_string(dir.join("intercom-pane-doctor.1")).unwrap();
    assert!(page.contains("\\-\\-json"), "{page}");
    // The page is `intercom-pane-doctor`; its synopsis is the command as typed.
    assert!(page.contains(".TH intercom-pane-doctor 1"), "{page}");
    let synopsis = page.split(".SH SYNOPSIS").nth(1).unwrap();
    assert!(
        synopsis.starts_with("\n\\fBintercom\\-pane doctor\\fR"),
        "{synopsis}"
    );
    assert!(dir.join("intercom-pane.1").exists());
}
