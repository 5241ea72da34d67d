//! `intercom-pane init`: the roster it writes, the refusal when there is one, and the command it
//! prints, run as printed — inside a tmux pane (pi itself, never a nested tmux) and outside any
//! (a new tmux session, on a private tmux folder); `--start` in a pane starts the coordinator's
//! pi there, and `spawn` then opens a worker beside it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_support;
use crate::scan_support;
use crate::spawn_support;

use std::os::unix::fs::PermissionsExt;
use std::process::Command;

use mux_support::{wait_for, TmuxServer};
use scan_support::*;
use serde_json::Value;
use spawn_support::{lines, stand_in_pi};

#[test]
fn init_writes_one_roster_and_refuses_a_second() {
    let env = Env::new();
    let root = env.path("proj");
    std::fs::create_dir_all(&root).unwrap();
    let o = env.run(&["init", "--root", "proj", "--json"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let made = stdout_json(&o);
    let path = root.join(".pi-intercom/config.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["version"], 1);
    assert_eq!(v["multiplexer"], "tmux");
    let agents = v["agents"].as_array().unwrap();
    assert_eq!(agents.len(), 1);
    assert_eq!(agents[0]["coordinator"], true);
    assert_eq!(agents[0]["name"], "Coordinator");
    assert_eq!(agents[0]["sessionId"], made["sessionId"]);
    assert_eq!(agents[0]["projectDirectory"], ".");
    assert!(
        text.ends_with("}\n") && text.contains("\n  \"agents\": ["),
        "{text}"
    );
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o644, "the roster is shared");
    // A second init changes nothing.
    let o = env.run(&["init", "--root", "proj"]);
    assert_eq!(o.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&o.stderr).contains("has a roster already"));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    // A missing folder and a bad name are refused.
    assert_eq!(env.run(&["init", "--root", "nope"]).status.code(), Some(2));
    std::fs::create_dir_all(env.path("other")).unwrap();
    let o = env.run(&["init", "--root", "other", "--name", "a/b"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!env.path("other/.pi-intercom/config.json").exists());
}

/// A `pi` that records its folder and arguments, one line each, then exits.
fn recorder(env: &Env) -> std::path::PathBuf {
    let p = env.path("rec-pi");
    std::fs::write(
        &p,
        format!(
            "#!/bin/bash\npwd > {0}/ran.cwd\nprintf '%s\\n' \"$@\" > {0}/ran.argv\n",
            env.dir.path().display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

#[test]
fn the_printed_command_runs_pi_in_the_root_and_never_nests_tmux() {
    let env = Env::new().with_system_path();
    // A folder name a shell or tmux would otherwise act on.
    let root = env.path("p #(touch pwned) $(x) 'q'");
    std::fs::create_dir_all(&root).unwrap();
    let pi = recorder(&env).display().to_string();
    let root_s = root.display().to_string();
    // Inside tmux ($TMUX set): pi itself, run in this pane.
    let o = Command::new(env!("CARGO_BIN_EXE_intercom-pane"))
        .args(["init", "--root", &root_s, "--pi", &pi, "--json"])
        .env("TMUX", "/nonexistent/sock,1,0")
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let made = stdout_json(&o);
    let line = made["command"].as_str().unwrap();
    assert!(!line.contains("tmux"), "{line}");
    let ran = Command::new("bash")
        .args(["-c", line])
        .current_dir("/")
        .output()
        .unwrap();
    assert!(ran.status.success(), "{line}");
    assert_eq!(
        std::fs::read_to_string(env.path("ran.cwd"))
            .unwrap()
            .trim_end(),
        root_s
    );
    let argv = std::fs::read_to_string(env.path("ran.argv")).unwrap();
    assert_eq!(
        argv,
        format!("--session-id\n{}\n", made["sessionId"].as_str().unwrap())
    );
    assert!(!root.join("pwned").exists() && !env.path("pwned").exists());

    // Inside Herdr (its variables set): a Herdr roster, pi itself in the pane, no tmux at all.
    let root3 = env.path("herdr-team");
    std::fs::create_dir_all(&root3).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_intercom-pane"))
        .args(["init", "--root", &root3.display().to_string(), "--json"])
        .env_remove("TMUX")
        .env("HERDR_ENV", "1")
        .env("HERDR_PANE_ID", "w1:p1")
        .env("HERDR_SOCKET_PATH", env.path("no-herdr.sock"))
        .output()
        .unwrap();
    let made3 = stdout_json(&o);
    assert_eq!(made3["multiplexer"], "herdr", "{made3}");
    assert!(
        !made3["command"].as_str().unwrap().contains("tmux"),
        "{made3}"
    );

    // Outside any multiplexer: a new tmux session, here on a private tmux folder (the
    // attached client gets a terminal from `script`). The pi program's path ends in `;`, which
    // would end tmux's command unless escaped for tmux.
    let root2 = env.path("plain");
    std::fs::create_dir_all(&root2).unwrap();
    let pi = env.path("rec-pi;").display().to_string();
    std::fs::copy(recorder(&env), &pi).unwrap();
    let o = env.run(&["init", "--root", "plain", "--pi", &pi, "--json"]);
    let made = stdout_json(&o);
    let line = made["command"].as_str().unwrap().to_string();
    assert!(
        line.contains("tmux new-session -s plain-coordinator -- "),
        "{line}"
    );
    let tmpdir = env.path("tmux-tmp");
    let mut client = Command::new("script")
        .args(["-qfec", &line, "/dev/null"])
        .current_dir("/")
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("TERM", "xterm")
        .env("TMUX_TMPDIR", &tmpdir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let uid = nix::unistd::Uid::current().as_raw();
    let sock = tmpdir.join(format!("tmux-{uid}/default"));
    let seen = wait_for(10_000, || {
        let a = std::fs::read_to_string(env.path("ran.argv")).ok()?;
        a.contains(made["sessionId"].as_str().unwrap())
            .then_some(())
    });
    let _ = Command::new("tmux")
        .arg("-S")
        .arg(&sock)
        .arg("kill-server")
        .output();
    let _ = client.kill();
    let _ = client.wait();
    seen.expect("the printed tmux command started pi");
    assert_eq!(
        std::fs::read_to_string(env.path("ran.cwd"))
            .unwrap()
            .trim_end(),
        root2.display().to_string()
    );
}

/// In a tmux pane: `init --start` becomes the coordinator's pi there (it registers from the
/// pane), and `spawn` opens a worker beside it.
#[test]
fn init_start_in_a_pane_runs_the_coordinator_there_and_spawn_opens_beside_it() {
    let env = Env::new().with_system_path();
    let root = env.path("team");
    for d in ["team", "sessions", "rec"] {
        std::fs::create_dir_all(env.path(d)).unwrap();
    }
    let pi = stand_in_pi(&env.path("py-pi"), &env.path("rec"), &env.path("sessions"));
    let server = TmuxServer::start("desk", &root, &[]);
    let bin = env!("CARGO_BIN_EXE_intercom-pane");
    server.tmux(&[
        "send-keys",
        "-t",
        "=desk:",
        &format!(
            "export INTERCOM_PANE_BIN={bin} PATH=/usr/bin:/bin; {bin} init --start --config {} --pi {} > {}/init.out 2>&1",
            env.system_config(),
            pi.display(),
            env.dir.path().display()
        ),
        "Enter",
    ]);
    let launch = wait_for(15_000, || {
        lines(&env.path("rec/launches.jsonl")).into_iter().next()
    })
    .unwrap_or_else(|| {
        panic!(
            "{}",
            std::fs::read_to_string(env.path("init.out")).unwrap_or_default()
        )
    });
    let roster: Value =
        serde_json::from_slice(&std::fs::read(root.join(".pi-intercom/config.json")).unwrap())
            .unwrap();
    let id = roster["agents"][0]["sessionId"].clone();
    assert_eq!(launch["argv"], serde_json::json!(["--session-id", id]));
    assert_eq!(launch["cwd"], root.display().to_string());
    let out = std::fs::read_to_string(env.path("init.out")).unwrap();
    assert!(!out.contains("tmux new-session"), "{out}");
    // The pane's own process is that pi (exec, no nested tmux, no extra shell).
    let pane_pid: i64 = server
        .tmux(&["display-message", "-p", "-t", "=desk:", "#{pane_pid}"])
        .trim()
        .parse()
        .unwrap();
    wait_for(5_000, || {
        (launch["pid"] == pane_pid || is_child(pane_pid, &launch["pid"])).then_some(())
    })
    .expect("pi runs in the pane");
    wait_registered(&root.join(".pi-intercom/seats"));
    let o = env.run(&layout_args_for(
        &env,
        "team",
        &[
            "spawn",
            "W",
            "--json",
            "--wait-secs",
            "20",
            "--pi",
            &pi.display().to_string(),
        ],
    ));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{r} {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let windows = server.tmux(&["list-windows", "-t", "=desk:", "-F", "#{window_name}"]);
    assert_eq!(windows.lines().nth(1), Some("W"), "{windows}");
}

fn is_child(parent: i64, pid: &Value) -> bool {
    let Some(p) = pid.as_i64() else { return false };
    std::fs::read_to_string(format!("/proc/{p}/stat"))
        .ok()
        .and_then(|s| s.rsplit(')').next().map(str::to_string))
        .and_then(|rest| rest.split_whitespace().nth(1).map(str::to_string))
        .is_some_and(|pp| pp == parent.to_string())
}

/// `layout_args` with another root folder.
fn layout_args_for(env: &Env, root: &str, cmd: &[&str]) -> Vec<String> {
    let cfg = env.system_config();
    let (name, rest) = cmd.split_first().unwrap();
    let mut args = vec![
        name.to_string(),
        "--config".into(),
        cfg,
        "--root".into(),
        root.into(),
        "--sessions-dir".into(),
        "sessions".into(),
        "--fleet".into(),
        "none".into(),
    ];
    args.extend(rest.iter().map(|s| s.to_string()));
    args
}

/// A second roster on the same machine never gets a port another roster's agent has, though
/// nothing listens on it (the first roster's pis are not running): `init` remembers the rosters
/// it made (`<dataRoot>/rosters.json`) and avoids their agents' ports. A roster that is gone
/// frees its ports again.
#[test]
fn a_second_roster_gets_its_own_port() {
    let env = Env::new();
    let port = |dir: &str| {
        std::fs::create_dir_all(env.path(dir)).unwrap();
        let o = env.run(&["init", "--root", dir, "--json"]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        stdout_json(&o)["port"].as_u64().unwrap()
    };
    let first = port("proj");
    let second = port("proj2");
    let third = port("proj3");
    assert_ne!(first, second);
    assert!(
        third != first && third != second,
        "{first} {second} {third}"
    );
    // A worker added by hand to proj takes a port; the next roster avoids it too.
    let cfg = env.path("proj/.pi-intercom/config.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&cfg).unwrap()).unwrap();
    let taken = third + 1;
    v["agents"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({"sessionId": "w", "name": "W",
        "coordinator": false, "description": "W.", "port": taken, "projectDirectory": "."}));
    std::fs::write(&cfg, v.to_string()).unwrap();
    let fourth = port("proj4");
    assert!(![first, second, third, taken].contains(&fourth), "{fourth}");
    let list = std::fs::read_to_string(env.path("state/intercom-pane/rosters.json")).unwrap();
    assert!(list.contains("proj4"), "{list}");
}

/// `init --start --detach`, as the README's setup runs it: the coordinator's pi in a new
/// detached tmux session named after the folder (here outside any pane, on the private default
/// server), init returning once it registered; `spawn` then opens a worker beside it and places
/// the sidebar above it; when the coordinator's pi exits, its pane stays under the sidebar and
/// `tmux respawn-pane` starts it again on its session, in place.
#[test]
fn init_start_detach_starts_the_coordinator_in_its_own_session_and_respawn_brings_it_back() {
    let env = Env::new().with_system_path();
    for d in ["proj", "sessions", "rec"] {
        std::fs::create_dir_all(env.path(d)).unwrap();
    }
    let pi = stand_in_pi(&env.path("py-pi"), &env.path("rec"), &env.path("sessions"));
    let bin = std::ffi::OsStr::new(env!("CARGO_BIN_EXE_intercom-pane"));
    let sys = env.system_config();
    let pi_s = pi.display().to_string();
    let o = env.run_with(
        &[
            "init", "--root", "proj", "--start", "--detach", "--config", &sys, "--pi", &pi_s,
        ],
        &[("INTERCOM_PANE_BIN", bin)],
    );
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{out} {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        out.contains("the coordinator's pi runs in tmux session proj-coordinator"),
        "{out}"
    );
    let sock = env.path(&format!(
        "tmux-tmp/tmux-{}/default",
        nix::unistd::getuid().as_raw()
    ));
    let server = TmuxServer::adopt(&sock);
    let tmux = |args: &[&str]| server.tmux(args);
    assert_eq!(
        tmux(&["list-sessions", "-F", "#S"]).trim(),
        "proj-coordinator"
    );
    assert_eq!(
        tmux(&[
            "show-options",
            "-pv",
            "-t",
            "=proj-coordinator:",
            "remain-on-exit"
        ])
        .trim(),
        "on"
    );
    let roster: Value =
        serde_json::from_slice(&std::fs::read(env.path("proj/.pi-intercom/config.json")).unwrap())
            .unwrap();
    let id = roster["agents"][0]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let first = lines(&env.path("rec/launches.jsonl"));
    assert_eq!(first.len(), 1, "{first:?}");
    assert_eq!(first[0]["argv"], serde_json::json!(["--session-id", id]));
    // A worker, beside the coordinator; the sidebar placed above it.
    let o = env.run_with(
        &layout_args_for(
            &env,
            "proj",
            &["spawn", "W", "--json", "--wait-secs", "20", "--pi", &pi_s],
        ),
        &[("INTERCOM_PANE_BIN", bin)],
    );
    let r: Value = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{r} {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        r["sidebar"]
            .as_str()
            .unwrap_or_default()
            .starts_with("placed above the coordinator"),
        "{r}"
    );
    let windows = tmux(&[
        "list-windows",
        "-t",
        "=proj-coordinator:",
        "-F",
        "#{window_name}",
    ]);
    assert_eq!(windows.lines().nth(1), Some("W"), "{windows}");
    let panes = || {
        tmux(&[
            "list-panes",
            "-t",
            "=proj-coordinator:0",
            "-F",
            "#{pane_id} #{pane_dead} #{?#{@intercom-pane-owner},sidebar,pi}",
        ])
    };
    // The coordinator's pi exits: its pane stays, dead, under the sidebar.
    let pid = first[0]["pid"].as_i64().unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let dead = wait_for(10_000, || panes().contains(" 1 pi").then_some(()));
    assert!(dead.is_some(), "{}", panes());
    // A person looking at it: the focus moves off the dead pane and back, and the client
    // switches away and back. tmux before 3.5 crashed here when the dead pane's program had left
    // focus reports on (the stand-in turns them on, as pi does); the kept pane's shell turned
    // them off.
    let pid_before = tmux(&["display-message", "-p", "#{pid}"]);
    let _client = server.attach_client("proj-coordinator", 120, 40);
    tmux(&["new-session", "-d", "-s", "elsewhere"]);
    // The id of the coordinator window's pane that `panes()` tags `tag`.
    let pane_tagged = |tag: &str| {
        panes()
            .lines()
            .find(|l| l.ends_with(&format!(" {tag}")))
            .and_then(|l| l.split(' ').next())
            .unwrap()
            .to_string()
    };
    let sidebar_pane = pane_tagged("sidebar");
    let pi_pane = pane_tagged("pi");
    tmux(&["select-pane", "-t", &pi_pane]);
    tmux(&["select-pane", "-t", &sidebar_pane]);
    tmux(&["select-pane", "-t", &pi_pane]);
    tmux(&["switch-client", "-t", "=elsewhere"]);
    tmux(&["switch-client", "-t", "=proj-coordinator"]);
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(tmux(&["display-message", "-p", "#{pid}"]), pid_before);
    assert!(panes().contains(" 1 pi"), "{}", panes());
    tmux(&["kill-session", "-t", "=elsewhere"]);
    tmux(&["respawn-pane", "-t", "=proj-coordinator:.{bottom}"]);
    let again = wait_for(15_000, || {
        let l: Vec<Value> = lines(&env.path("rec/launches.jsonl"))
            .into_iter()
            .filter(|l| l["sid"] == id.as_str())
            .collect();
        (l.len() == 2).then_some(l)
    })
    .unwrap_or_else(|| panic!("{}", panes()));
    assert_eq!(again[1]["argv"], first[0]["argv"]);
    let after = panes();
    assert!(after.contains(&format!("{pi_pane} 0 pi")), "{after}");
    assert_eq!(after.matches("sidebar").count(), 1, "{after}");
    // --detach starts tmux only.
    std::fs::create_dir_all(env.path("h")).unwrap();
    let o = env.run(&[
        "init",
        "--root",
        "h",
        "--start",
        "--detach",
        "--multiplexer",
        "herdr",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--detach starts a tmux session"));
    assert!(!env.path("h/.pi-intercom/config.json").exists());
}
