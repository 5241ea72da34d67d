//! The whole life of spawned workers with a real pi 1.6.0 in real tmux: `init --start` makes the
//! roster and becomes the coordinator's pi in its pane; `spawn` starts two workers beside it —
//! one in a git worktree, one with a model flag and a first task — each in its own window, in
//! its roster session; `close-worker` then `resume-worker` brings the second back with the same
//! model flag and folder; `retire` removes the first and keeps its worktree because it holds an
//! uncommitted file. Two more in worktrees commit through their bash tool; `review` shows their
//! work and the file both changed, `land` lands one and refuses the other's conflict. The truth
//! about what runs comes from tmux (`#{pane_start_command}`,
//! `#{pane_current_path}`: pi 1.6.0 replaces its visible command line with its title) and from
//! each pi's own registration and session file.
//!
//! Runs only with `INTERCOM_PANE_REAL_PI` (see tests/real_pi/real_pi.rs); otherwise `cargo
//! test` reports it as ignored, with the reason.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_support;
use crate::real_pi_support;
use crate::scan_support;

use std::path::{Path, PathBuf};
use std::process::Command;

use mux_support::{wait_for, TmuxServer};
use real_pi_support::{real_pi, start_model, SERIAL};
use scan_support::*;
use serde_json::{json, Value};

/// A git checkout with a roster whose coordinator (`init --start`) is a real pi in tmux (also
/// used by `real_pi_restore`).
pub(crate) struct Setup {
    pub env: Env,
    pub root: PathBuf,
    pub agent: PathBuf,
    pub server: TmuxServer,
    /// The environment the spawning commands run with (what a person's shell would have).
    pub vars: Vec<(String, String)>,
}

impl Setup {
    pub(crate) fn start() -> Setup {
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
        git(&root, &["init", "-q", "-b", "main"]);
        std::fs::write(root.join("README"), "project\n").unwrap();
        git(&root, &["add", "-A"]);
        git(&root, &["commit", "-qm", "start"]);
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

    /// `intercom-pane CMD --config … --root … --sessions-dir … --fleet none ARGS…` with the
    /// person's environment, outside tmux; (exit, JSON report, stderr).
    pub(crate) fn run(&self, cmd: &str, args: &[&str]) -> (i32, Value, String) {
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

    fn roster(&self) -> Value {
        serde_json::from_slice(&std::fs::read(self.root.join(".pi-intercom/config.json")).unwrap())
            .unwrap()
    }

    /// tmux's own record of what a pane started and where it is now.
    fn pane(&self, pane: &str, what: &str) -> String {
        self.server
            .tmux(&["display-message", "-p", "-t", pane, what])
            .trim_end()
            .to_string()
    }

    /// The live registration the scan shows for `name`.
    pub(crate) fn registered(&self, name: &str) -> Value {
        let sock = self.server.sock.display().to_string();
        let sessions = self.agent.join("sessions").display().to_string();
        let o = self.env.run(&[
            "scan",
            "--json",
            "--config",
            &self.env.system_config(),
            "--root",
            &self.root.display().to_string(),
            "--sessions-dir",
            &sessions,
            "--fleet",
            "none",
            "--tmux-socket",
            &sock,
        ]);
        record(&stdout_json(&o), name).clone()
    }
}

fn session_text(file: &str) -> String {
    std::fs::read_to_string(file).unwrap_or_default()
}

#[test]
#[cfg_attr(
    not(real_pi),
    ignore = "real-pi tier: INTERCOM_PANE_REAL_PI names no folder with pi and node 22 (.ci/run installs them)"
)]
fn real_pis_are_spawned_resumed_with_their_flags_and_retired() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let s = Setup::start();
    let coordinator = s.roster()["agents"][0]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();

    // Two workers: one in its own worktree, one with a model flag and a first task.
    let (code, tree, err) = s.run(
        "spawn",
        &["Tree", "--worktree", "--wait-secs", "90", "--json"],
    );
    assert_eq!(code, 0, "{tree} {err}");
    let task = "remember the word pelican";
    let (code, writer, err) = s.run(
        "spawn",
        &[
            "Writer",
            "--model",
            "fake/other-model",
            "--prompt",
            task,
            "--wait-secs",
            "90",
            "--json",
        ],
    );
    assert_eq!(code, 0, "{writer} {err}");
    assert_eq!(writer["prompt"]["transport"], "channel", "{writer}");

    // Each in its own window of the coordinator's session, started as the argv spawn built, in
    // its roster session (its own registration says so, from inside that pi).
    let windows = s
        .server
        .tmux(&["list-windows", "-t", "=desk:", "-F", "#{window_name}"]);
    let mut names: Vec<&str> = windows.lines().skip(1).collect();
    names.sort();
    assert_eq!(names, ["Tree", "Writer"], "{windows}");
    let roster = s.roster();
    for (w, name) in [(&tree, "Tree"), (&writer, "Writer")] {
        let id = w["sessionId"].as_str().unwrap();
        let entry = roster["agents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["name"] == name)
            .unwrap();
        assert_eq!(entry["sessionId"], id);
        let pane = w["pane"].as_str().unwrap();
        let started = s.pane(pane, "#{pane_start_command}");
        assert!(started.contains(&format!("--session-id {id}")), "{started}");
        let reg = s.registered(name);
        assert_eq!(reg["registered"]["alive"], true, "{reg}");
        assert_eq!(reg["sessionId"], id, "{reg}");
        assert_ne!(id, coordinator);
    }
    assert!(s
        .pane(writer["pane"].as_str().unwrap(), "#{pane_start_command}")
        .contains("--model fake/other-model"));
    // The worktree, on its branch, is Tree's folder; the main checkout did not move.
    let wt = s.root.join(".pi-intercom/worktrees/Tree");
    assert_eq!(
        git(&wt, &["rev-parse", "--abbrev-ref", "HEAD"]).trim(),
        "Tree"
    );
    assert_eq!(
        s.pane(tree["pane"].as_str().unwrap(), "#{pane_current_path}"),
        wt.display().to_string()
    );
    assert_eq!(
        git(&s.root, &["rev-parse", "--abbrev-ref", "HEAD"]).trim(),
        "main"
    );
    // The first task is in Writer's session file exactly once, and pi answered it.
    let file = wait_for(60_000, || {
        let r = s.registered("Writer");
        let f = r["sessionFile"].as_str()?.to_string();
        let t = session_text(&f);
        (t.contains(task) && t.contains("Done. Want anything else?")).then_some(f)
    })
    .unwrap_or_else(|| {
        panic!(
            "Writer never answered its first task: {}",
            s.registered("Writer")
        )
    });
    let users = session_text(&file)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["message"]["role"] == "user" && v.to_string().contains(task))
        .count();
    assert_eq!(users, 1, "{}", session_text(&file));

    // close-worker, then resume-worker: the same model flag, the same folder.
    let (code, closed, err) = s.run(
        "close-worker",
        &["Writer", "--deadline-secs", "90", "--json"],
    );
    assert_eq!(code, 0, "{closed} {err}");
    let (code, resumed, err) = s.run(
        "resume-worker",
        &["Writer", "--confirm-closed", "--wait-secs", "90", "--json"],
    );
    assert_eq!(code, 0, "{resumed} {err}");
    assert!(resumed["launchSpec"].is_object(), "{resumed}");
    let pane = resumed["pane"].as_str().unwrap();
    let started = s.pane(pane, "#{pane_start_command}");
    assert!(started.contains("--model fake/other-model"), "{started}");
    assert!(started.contains(&format!("--session {file}")), "{started}");
    assert_eq!(
        s.pane(pane, "#{pane_current_path}"),
        s.root.display().to_string()
    );
    let reg = s.registered("Writer");
    assert_eq!(reg["registered"]["alive"], true, "{reg}");
    assert_eq!(reg["sessionFile"], file.as_str(), "the same session");

    // retire: refused while Tree runs; once its pi is gone, removed, its worktree kept because
    // it holds an uncommitted file.
    let (code, r, _) = s.run("retire", &["Tree", "--json"]);
    assert_eq!(code, 4, "{r}");
    let tree_pane = tree["pane"].as_str().unwrap();
    let pid: i32 = s.pane(tree_pane, "#{pane_pid}").parse().unwrap();
    s.server.tmux(&["kill-pane", "-t", tree_pane]);
    wait_for(15_000, || {
        (!Path::new(&format!("/proc/{pid}")).exists()).then_some(())
    })
    .expect("Tree's pi ended");
    std::fs::write(wt.join("draft.md"), "not committed\n").unwrap();
    let (code, r, err) = s.run("retire", &["Tree", "--remove-worktree", "--json"]);
    assert_eq!(code, 3, "{r} {err}");
    assert_eq!(r["worktree"]["action"], "kept", "{r}");
    assert!(wt.join("draft.md").exists());
    let names: Vec<Value> = s.roster()["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].clone())
        .collect();
    assert!(!names.contains(&json!("Tree")), "{names:?}");
    assert!(names.contains(&json!("Writer")));
    s.server.tmux(&["send-keys", "-t", pane, "C-c"]);
    s.server.tmux(&["send-keys", "-t", pane, "C-d"]);
}

/// Two real pis spawned in worktrees commit through their bash tool (the scripted model calls
/// it); `review` shows each one's commit and files and the file both changed (overlap), and
/// `land A B` lands A and refuses B, whose change to that file conflicts, changing nothing.
#[test]
#[cfg_attr(
    not(real_pi),
    ignore = "real-pi tier: INTERCOM_PANE_REAL_PI names no folder with pi and node 22 (.ci/run installs them)"
)]
fn real_pis_commit_in_their_worktrees_are_reviewed_and_landed() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let s = Setup::start();
    let work = |name: &str| {
        let cmd = format!(
            "echo {name} > {name}.txt && echo 'line by {name}' >> README && git add -A && \
             git -c user.name={name} -c user.email={name}@example.org commit -qm 'work of {name}'"
        );
        format!("TOOLCALL bash {}", json!({ "command": cmd }))
    };
    for name in ["A", "B"] {
        let (code, out, err) = s.run(
            "spawn",
            &[
                name,
                "--worktree",
                "--prompt",
                &work(name),
                "--wait-secs",
                "90",
                "--json",
            ],
        );
        assert_eq!(code, 0, "{out} {err}");
    }
    // Each committed in its own worktree, and its turn ended.
    let review = |name: &str| s.run("review", &[name, "--json"]);
    for name in ["A", "B"] {
        wait_for(90_000, || {
            let (_, r, _) = review(name);
            (r["commitsTotal"] == 1 && r["state"] == "idle").then_some(())
        })
        .unwrap_or_else(|| panic!("{name} never committed and settled: {}", review(name).1));
    }
    let (code, r, err) = review("A");
    assert_eq!(code, 0, "{err}");
    assert_eq!(r["commits"][0]["subject"], "work of A", "{r}");
    let files: Vec<(String, String)> = r["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["where"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(files.contains(&("A.txt".into(), "committed".into())), "{r}");
    assert!(
        files.contains(&("README".into(), "committed".into())),
        "{r}"
    );
    assert_eq!(r["merge"]["state"], "fast-forward", "{r}");
    assert_eq!(r["overlaps"][0]["workers"], json!(["A", "B"]), "{r}");
    assert_eq!(r["overlaps"][0]["files"], json!(["README"]), "{r}");

    // The sidebar's Changes column on the real repository: both rows show their lines and files,
    // and both are flagged, since both changed README.
    let sessions = s.agent.join("sessions").display().to_string();
    let root = s.root.display().to_string();
    let sys = s.env.system_config();
    let mut argv: Vec<String> = vec!["env".into()];
    argv.extend(s.vars.iter().map(|(k, v)| format!("{k}={v}")));
    argv.push(format!("TMUX_TMPDIR={}", s.env.path("tmux-tmp").display()));
    argv.push("TERM=xterm-256color".into());
    argv.push(env!("CARGO_BIN_EXE_intercom-pane").into());
    for a in [
        "monitor",
        "--no-probe",
        "--config",
        &sys,
        "--root",
        &root,
        "--sessions-dir",
        &sessions,
        "--fleet",
        "none",
    ] {
        argv.push(a.to_string());
    }
    let mut args: Vec<&str> = vec!["new-window", "-d", "-t", "=desk:", "-n", "changes", "--"];
    args.extend(argv.iter().map(String::as_str));
    s.server.tmux(&args);
    s.server.tmux(&[
        "resize-window",
        "-t",
        "=desk:changes",
        "-x",
        "140",
        "-y",
        "40",
    ]);
    let screen = || {
        s.server
            .tmux(&["capture-pane", "-p", "-t", "=desk:changes"])
    };
    let row = |text: &str, name: &str| {
        text.lines()
            .find(|l| l.contains(&format!(" {name} ")) && l.contains('+'))
            .map(str::to_string)
    };
    let shown = wait_for(40_000, || {
        let text = screen();
        (text.contains("Changes") && row(&text, "A").is_some() && row(&text, "B").is_some())
            .then_some(text)
    })
    .unwrap_or_else(|| panic!("no Changes column:\n{}", screen()));
    for name in ["A", "B"] {
        let r = row(&shown, name).unwrap();
        assert!(r.contains("⚠ +2 −0 · 2 files"), "{r}\n{shown}");
    }
    s.server.tmux(&["send-keys", "-t", "=desk:changes", "q"]);

    // land A B: A fast-forwards main; B's README line now conflicts: refused, nothing changed.
    let (code, l, err) = s.run("land", &["A", "B", "--json"]);
    assert_eq!(code, 3, "{l} {err}");
    assert_eq!(l["steps"][0]["outcome"], "fast-forward", "{l}");
    assert_eq!(l["steps"][1]["outcome"], "refused", "{l}");
    assert_eq!(l["steps"][1]["conflicts"], json!(["README"]), "{l}");
    let main_tip = git(&s.root, &["rev-parse", "HEAD"]).trim().to_string();
    let a_tip = git(
        &s.root.join(".pi-intercom/worktrees/A"),
        &["rev-parse", "HEAD"],
    );
    assert_eq!(main_tip, a_tip.trim());
    assert!(s.root.join("A.txt").exists() && !s.root.join("B.txt").exists());
    let merge_head = git(&s.root, &["rev-parse", "--git-path", "MERGE_HEAD"]);
    assert!(
        !s.root.join(merge_head.trim()).exists(),
        "no merge left half done"
    );
}
