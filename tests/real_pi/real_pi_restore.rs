//! `restore` with a real pi 1.6.0 in real tmux: `init --start` makes the roster and becomes the
//! coordinator's pi; `spawn` starts two workers beside it, one with a model flag; `tmux
//! kill-server` ends them all; `restore` brings each back on its own session file, the worker
//! with its model flag, the coordinator first in a session of its own (its extension places the
//! sidebar again), the workers beside it; a second `restore` starts nothing. The truth about
//! what runs comes from tmux (`#{pane_start_command}`: pi 1.6.0 replaces its visible command
//! line with its title) and from each pi's own registration.
//!
//! Runs only with `INTERCOM_PANE_REAL_PI` (see tests/real_pi/real_pi.rs); otherwise `cargo
//! test` reports it as ignored, with the reason.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_support;
use crate::real_pi_support;
use crate::scan_support;

use std::path::{Path, PathBuf};
use std::process::Command;

use mux_support::{tmux_cmd, wait_for, TmuxServer};
use real_pi_support::{real_pi, start_model, submit_first, wait_ready, SERIAL};
use scan_support::*;
use serde_json::{json, Value};

struct Setup {
    env: Env,
    root: PathBuf,
    agent: PathBuf,
    server: TmuxServer,
    vars: Vec<(String, String)>,
}

impl Setup {
    fn start() -> Setup {
        let bin = real_pi();
        let env = Env::new().with_system_path();
        let agent = env.path("agent");
        std::fs::create_dir_all(&agent).unwrap();
        let port = start_model(5);
        let model = |id: &str| json!({"id": id, "contextWindow": 128000, "maxTokens": 4096});
        std::fs::write(
            agent.join("models.json"),
            json!({"providers": {"fake": {"baseUrl": format!("http://127.0.0.1:{port}/v1"),
                "api": "openai-completions", "apiKey": "fake",
                "models": [model("fake-model"), model("other-model")]}}})
            .to_string(),
        )
        .unwrap();
        std::fs::write(
            agent.join("settings.json"),
            json!({"packages": [Path::new(env!("CARGO_MANIFEST_DIR")).join("linux/pi-extension")],
                "defaultProvider": "fake", "defaultModel": "fake-model"})
            .to_string(),
        )
        .unwrap();
        let tools = env.path("path-bin");
        std::fs::create_dir_all(&tools).unwrap();
        std::os::unix::fs::symlink(
            env!("CARGO_BIN_EXE_intercom-pane"),
            tools.join("intercom-pane"),
        )
        .unwrap();
        let root = env.path("root");
        std::fs::create_dir_all(&root).unwrap();
        let path = format!(
            "{}:{}:/usr/local/bin:/usr/bin:/bin",
            tools.display(),
            bin.display()
        );
        let vars = vec![
            ("PATH".to_string(), path),
            ("PI_OFFLINE".into(), "1".into()),
            ("PI_CODING_AGENT_DIR".into(), agent.display().to_string()),
            ("HOME".into(), env.path("home").display().to_string()),
        ];
        let server = TmuxServer::start("desk", &root, &[]);
        let exports: Vec<String> = vars.iter().map(|(k, v)| format!("{k}={v}")).collect();
        server.tmux(&[
            "send-keys",
            "-t",
            "=desk:",
            &format!(
                "export {}; intercom-pane init --start --config {}",
                exports.join(" "),
                env.system_config()
            ),
            "Enter",
        ]);
        wait_for(90_000, || {
            std::fs::read_dir(root.join(".pi-intercom/seats"))
                .ok()?
                .flatten()
                .any(|e| e.file_name().to_string_lossy().ends_with(".json"))
                .then_some(())
        })
        .unwrap_or_else(|| {
            panic!(
                "the coordinator's pi never registered:\n{}",
                server.tmux(&["capture-pane", "-p", "-t", "=desk:"])
            )
        });
        Setup {
            env,
            root,
            agent,
            server,
            vars,
        }
    }

    /// `intercom-pane CMD` with the layout's flags and the person's environment, outside tmux.
    fn run(&self, cmd: &str, args: &[&str]) -> (i32, Value, String) {
        let sessions = self.agent.join("sessions").display().to_string();
        let root = self.root.display().to_string();
        let o = Command::new(env!("CARGO_BIN_EXE_intercom-pane"))
            .arg(cmd)
            .args(["--config", &self.env.system_config(), "--root", &root])
            .args(["--sessions-dir", &sessions, "--fleet", "none"])
            .args(args)
            .env_clear()
            .envs(self.vars.iter().map(|(k, v)| (k, v)))
            .env("TMUX_TMPDIR", self.env.path("tmux-tmp"))
            .output()
            .unwrap();
        (
            o.status.code().unwrap_or(-1),
            serde_json::from_slice(&o.stdout).unwrap_or(Value::Null),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    }

    fn scan(&self) -> Value {
        let (code, out, err) = self.run("scan", &["--json"]);
        assert_eq!(code, 0, "{err}");
        out
    }
}

fn line<'a>(out: &'a Value, name: &str) -> &'a Value {
    out["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == name)
        .unwrap_or_else(|| panic!("no line for {name}: {out}"))
}

#[test]
#[cfg_attr(
    not(real_pi),
    ignore = "real-pi tier: INTERCOM_PANE_REAL_PI names no folder with pi and node 22 (.ci/run installs them)"
)]
fn real_pis_come_back_after_kill_server_on_their_sessions_with_their_flags() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let s = Setup::start();
    // The coordinator talks once, so pi has written its session file.
    wait_ready(&s.server, "=desk:");
    submit_first(&s.server, "=desk:", "hello coordinator");
    let coord_file = wait_for(60_000, || {
        let f = record(&s.scan(), "Coordinator")["sessionFile"]
            .as_str()?
            .to_string();
        Path::new(&f).is_file().then_some(f)
    })
    .expect("the coordinator's session file");
    let (code, writer, err) = s.run(
        "spawn",
        &[
            "Writer",
            "--model",
            "fake/other-model",
            "--prompt",
            "remember pelican",
            "--wait-secs",
            "90",
            "--json",
        ],
    );
    assert_eq!(code, 0, "{writer} {err}");
    let (code, plain, err) = s.run("spawn", &["Plain", "--wait-secs", "90", "--json"]);
    assert_eq!(code, 0, "{plain} {err}");
    // Both workers' session files exist once each pi has written (Writer answered its task;
    // Plain is asked once).
    wait_ready(&s.server, plain["pane"].as_str().unwrap());
    submit_first(&s.server, plain["pane"].as_str().unwrap(), "hello plain");
    let files: Vec<String> = ["Writer", "Plain"]
        .iter()
        .map(|n| {
            wait_for(60_000, || {
                let f = record(&s.scan(), n)["sessionFile"].as_str()?.to_string();
                Path::new(&f).is_file().then_some(f)
            })
            .unwrap_or_else(|| panic!("{n}'s session file"))
        })
        .collect();

    s.server.tmux(&["kill-server"]);
    wait_for(30_000, || {
        let o = tmux_cmd(&s.server.sock)
            .arg("list-sessions")
            .output()
            .unwrap();
        (!o.status.success()).then_some(())
    })
    .expect("the server stayed");
    // Every pi ended with it (none registered and alive).
    wait_for(30_000, || {
        let scan = s.scan();
        ["Coordinator", "Writer", "Plain"]
            .iter()
            .all(|n| record(&scan, n)["registered"]["alive"] != true)
            .then_some(())
    })
    .expect("a pi outlived its server");

    let (code, out, err) = s.run("restore", &["--wait-secs", "90", "--json"]);
    assert_eq!(code, 0, "{out} {err}");
    for n in ["Coordinator", "Writer", "Plain"] {
        assert_eq!(line(&out, n)["outcome"], "restored", "{n}: {out}");
    }
    let start = |name: &str| {
        let pane = line(&out, name)["pane"].as_str().unwrap().to_string();
        s.server
            .tmux(&[
                "display-message",
                "-p",
                "-t",
                &pane,
                "#{pane_start_command}",
            ])
            .trim_end()
            .to_string()
    };
    assert!(start("Coordinator").contains(&format!("--session {coord_file}")));
    let w = start("Writer");
    assert!(w.contains(&format!("--session {}", files[0])), "{w}");
    assert!(w.contains("--model fake/other-model"), "{w}");
    let p = start("Plain");
    assert!(p.contains(&format!("--session {}", files[1])), "{p}");
    assert!(!p.contains("--model"), "{p}");
    // Each pi registered again on the same session file.
    let scan = s.scan();
    for (n, f) in [
        ("Coordinator", &coord_file),
        ("Writer", &files[0]),
        ("Plain", &files[1]),
    ] {
        let r = record(&scan, n);
        assert_eq!(r["registered"]["alive"], true, "{r}");
        assert_eq!(r["sessionFile"], f.as_str(), "{r}");
    }
    // The coordinator's extension placed the sidebar above it again.
    wait_for(60_000, || {
        let titles = s
            .server
            .tmux(&["list-panes", "-t", "=Coordinator:", "-F", "#{pane_title}"]);
        titles.contains("Intercom monitor").then_some(())
    })
    .expect("the sidebar was not placed again");

    // A second restore starts nothing.
    let (code, again, err) = s.run("restore", &["--json"]);
    assert_eq!(code, 0, "{again} {err}");
    assert_eq!(again["startedNothing"], true, "{again}");
    for n in ["Coordinator", "Writer", "Plain"] {
        assert_eq!(
            line(&again, n)["outcome"],
            "already_running",
            "{n}: {again}"
        );
    }
}
