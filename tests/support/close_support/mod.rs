//! Shared setup for the close-worker tests: a roster with one worker, its session file, and the
//! worker itself — a copy of bash named `pi` in a real tmux pane that registers from the inside
//! and (when asked) runs `handoff` and completes a reply.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use crate::mux_support::{self, TmuxServer};
use crate::pi_support;
use crate::scan_support::*;
use serde_json::{json, Value};

pub const ID: &str = "01a2f000-0000-7000-8000-00000000dd01";

pub fn setup(env: &Env, close_job: Option<Value>) -> PathBuf {
    let root = env.path("root");
    std::fs::create_dir_all(root.join(".pi-intercom")).unwrap();
    let mut worker = json!({"sessionId": ID, "name": "Worker", "coordinator": false,
        "description": "W.", "port": 2, "projectDirectory": "."});
    if let Some(j) = close_job {
        worker["closeJob"] = j;
    }
    std::fs::write(
        root.join(".pi-intercom/config.json"),
        json!({"version": 1, "agents": [
            {"sessionId": "coord", "name": "Coordinator", "coordinator": true, "description": "C.", "port": 1, "projectDirectory": "."},
            worker]})
        .to_string(),
    )
    .unwrap();
    settled_session(env, ID, &root)
}

/// The registration records in `dir` and their contents.
fn registrations(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "json"))
                .filter_map(|p| std::fs::read(&p).ok().map(|b| (p, b)))
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// A copy of `src` named `dest`, made once (a running copy cannot be replaced).
fn named(src: &str, dest: &Path) -> PathBuf {
    if dest.exists() {
        return dest.to_path_buf();
    }
    mux_support::program_named(src, dest)
}

/// Where the simulated pi runs in its pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// The pi is the pane's own process.
    Own,
    /// The pi runs under the pane's shell, which `exec`s an impostor (`impostor 600`, a copy of
    /// `sleep`) in the same pane, under the same pane pid, as soon as the pi exits.
    Shell,
}

/// The worker's pane: the pi stand-in that registers, then (when `cooperate`) reads the
/// close request typed into it, runs `handoff` for the named job and completes a reply.
pub fn worker(env: &Env, file: &Path, cooperate: bool) -> TmuxServer {
    worker_in(env, file, cooperate, Layout::Own)
}

/// The public summary a cooperating worker saves.
pub const HANDOFF_SUMMARY: &str = "Docs merged; release notes left.";

/// What the worker's pi stand-in runs: register from the inside, then (when `cooperate`) read
/// the close request typed into its pane, run `handoff` for the named job, complete a reply.
pub fn worker_script(env: &Env, file: &Path, cooperate: bool) -> String {
    let bin = env!("CARGO_BIN_EXE_intercom-pane");
    let sys = env.system_config();
    let root = env.path("root").display().to_string();
    let fs = file.display().to_string();
    let mut script = format!(
        "{bin} register --config {sys} --event session_start --seq 1 --pi-pid $$ --session-id {ID} --cwd {root} --session-file {fs} >/dev/null; "
    );
    if cooperate {
        script.push_str(&cooperate_script(env, ID, file));
    } else {
        script.push_str("sleep 600; true");
    }
    script
}

/// A registered worker's part of a close, for session `id` written in `file`: read the close
/// request typed into its pane, run `handoff` for the named job, complete a reply, stay.
pub fn cooperate_script(env: &Env, id: &str, file: &Path) -> String {
    let bin = env!("CARGO_BIN_EXE_intercom-pane");
    let root = env.path("root").display().to_string();
    let file = file.display().to_string();
    format!(
        "IFS= read -r line; job=$(printf '%s' \"$line\" | sed -n 's/.*(job \\([A-Za-z0-9-]*\\)).*/\\1/p'); \
         {bin} handoff --job \"$job\" --summary '{HANDOFF_SUMMARY}' --session-id {id} --session-file {file} --root {root} > {out} 2>&1; \
         sleep 0.3; ts=$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ); \
         printf '%s\\n' \"{{\\\"type\\\":\\\"message\\\",\\\"id\\\":\\\"a3\\\",\\\"parentId\\\":\\\"a2\\\",\\\"timestamp\\\":\\\"$ts\\\",\\\"message\\\":{{\\\"role\\\":\\\"assistant\\\",\\\"content\\\":[{{\\\"type\\\":\\\"text\\\",\\\"text\\\":\\\"Handoff saved.\\\"}}],\\\"stopReason\\\":\\\"stop\\\"}}}}\" >> {file}; sleep 600; true",
        out = env.path("handoff.out").display()
    )
}

pub fn worker_in(env: &Env, file: &Path, cooperate: bool, layout: Layout) -> TmuxServer {
    let script = worker_script(env, file, cooperate);
    // The pi stand-in (`pi_support`): what `register` accepts as a pi, running `script`.
    let (node, cli) = pi_support::fake_pi_program(&env.path("pi-bin"));
    let impostor = named("/bin/sleep", &env.path("impostor"));
    let own = pi_support::pi_pane_argv(&env.path("pi-bin"), &script);
    let shell = format!(
        "(exec -a pi {} {} \"$1\"); exec {} 600",
        node.display(),
        cli.display(),
        impostor.display()
    );
    let argv: Vec<String> = match layout {
        Layout::Own => own,
        Layout::Shell => vec![
            "/bin/bash".into(),
            "-c".into(),
            shell,
            "shell".into(),
            script.clone(),
        ],
    };
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let seats = env.path("root/.pi-intercom/seats");
    let before = registrations(&seats);
    let server = TmuxServer::start("work", &env.path("root"), &argv);
    wait_registered(&seats);
    // A pi started again for the same session rewrites its registration: wait for the new one.
    mux_support::wait_for(10_000, || (registrations(&seats) != before).then_some(()))
        .expect("the worker registered");
    server
}

/// close-worker with `--json`: (exit, the JSON report, stderr followed by the refusal if any).
pub fn close(env: &Env, server: &TmuxServer, extra: &[&str]) -> (i32, Value, String) {
    let mut extra = extra.to_vec();
    if !extra.contains(&"--json") {
        extra.push("--json");
    }
    let (code, out, err) = close_text(env, server, &extra);
    let report: Value = serde_json::from_str(&out).unwrap_or(Value::Null);
    let refused = report["refused"].as_str().unwrap_or_default().to_string();
    (code, report, err + &refused)
}

/// close-worker started in the background on `server` with `extra` (stdout and stderr piped),
/// for a test that acts while it waits.
pub fn spawn_close(env: &Env, server: &TmuxServer, extra: &[&str]) -> std::process::Child {
    let sock = server.sock.display().to_string();
    let mut args = vec!["--tmux-socket", &sock];
    args.extend_from_slice(extra);
    std::process::Command::new(env!("CARGO_BIN_EXE_intercom-pane"))
        .args(layout_args(env, &["close-worker"], &args))
        .current_dir(env.dir.path())
        .env("HOME", env.path("home"))
        .env("TMUX_TMPDIR", env.path("tmux-tmp"))
        .env_remove("TMUX")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// close-worker as a person runs it (no `--json`): (exit, stdout, stderr).
pub fn close_text(env: &Env, server: &TmuxServer, extra: &[&str]) -> (i32, String, String) {
    let sock = server.sock.display().to_string();
    let mut args = vec!["--tmux-socket", &sock];
    args.extend_from_slice(extra);
    let o = env.run(&layout_args(env, &["close-worker"], &args));
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

pub fn config(env: &Env) -> Value {
    serde_json::from_slice(&std::fs::read(env.path("root/.pi-intercom/config.json")).unwrap())
        .unwrap()
}

pub fn panes(server: &TmuxServer) -> usize {
    std::process::Command::new("tmux")
        .arg("-S")
        .arg(&server.sock)
        .args(["list-panes", "-a"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).lines().count())
        .unwrap_or(0)
}
