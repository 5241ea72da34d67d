//! The coordinator's tools (`intercom-pane tool …`) answer only the roster's coordinator's own
//! pi: the coordinator's pi (the `pi_support` stand-in, registered from inside) gets the tool
//! list and its calls run; a worker's pi, a call from outside naming the coordinator's pid, the
//! coordinator's pid named from a command of another session (what pi's bash tool runs), and a
//! pi in another folder are all refused before anything runs, and the roster stays
//! byte-identical. Arguments are checked again; `intercom_board` and `intercom_wait` answer with
//! the board's seats.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::pi_support::FakePi;
use crate::scan_support::*;

use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_intercom-pane");
const COORD: &str = "0c0c0000-0000-7000-8000-00000000c001";
const WORKER: &str = "0c0c0000-0000-7000-8000-00000000a001";

fn roster(env: &Env) -> std::path::PathBuf {
    let root = env.path("root");
    std::fs::create_dir_all(root.join(".pi-intercom")).unwrap();
    let cfg = json!({"version": 1, "agents": [
        {"sessionId": COORD, "name": "Coordinator", "coordinator": true, "description": "C.", "port": 1, "projectDirectory": "."},
        {"sessionId": WORKER, "name": "Builder", "coordinator": false, "description": "B.", "port": 2, "projectDirectory": "."}]});
    std::fs::write(root.join(".pi-intercom/config.json"), cfg.to_string()).unwrap();
    root
}

/// A stand-in pi in `root`, registered as `id`.
fn seat(env: &Env, root: &std::path::Path, id: &str) -> FakePi {
    let mut pi = FakePi::start(env);
    let pid = pi.pid().to_string();
    let root = root.display().to_string();
    let o = pi.register(
        env,
        &[
            "--event",
            "session_start",
            "--seq",
            "1",
            "--pi-pid",
            &pid,
            "--session-id",
            id,
            "--cwd",
            &root,
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    pi
}

/// `intercom-pane tool TOOL --pi-pid PID --args ARGS` run by `pi`: (exit, the one JSON line).
fn tool(env: &Env, pi: &mut FakePi, name: &str, pid: i32, args: &Value) -> (i32, Value) {
    let sys = env.system_config();
    let pid = pid.to_string();
    let args = args.to_string();
    let o = pi.run(
        BIN,
        &[
            "tool",
            name,
            "--pi-pid",
            &pid,
            "--config",
            &sys,
            "--liveness",
            "assume-alive",
            "--fleet",
            "none",
            "--args",
            &args,
        ],
    );
    answer(&o)
}

fn answer(o: &std::process::Output) -> (i32, Value) {
    let text = String::from_utf8_lossy(&o.stdout);
    let last = text.lines().last().unwrap_or("");
    (
        o.status.code().unwrap_or(-1),
        serde_json::from_str(last).unwrap_or(Value::Null),
    )
}

#[test]
fn only_the_coordinators_own_pi_reaches_the_tools() {
    let env = Env::new().with_system_path();
    let root = roster(&env);
    let config = root.join(".pi-intercom/config.json");
    let mut coord = seat(&env, &root, COORD);
    let mut worker = seat(&env, &root, WORKER);
    let (cpid, wpid) = (coord.pid(), worker.pid());
    let before = std::fs::read(&config).unwrap();

    // The coordinator's pi: the tool list, with schemas and bounds.
    let (code, check) = tool(&env, &mut coord, "check", cpid, &json!({}));
    assert_eq!(code, 0, "{check}");
    assert_eq!(check["coordinator"], true);
    assert_eq!(check["name"], "Coordinator");
    let names: Vec<&str> = check["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "intercom_board",
            "intercom_reply",
            "intercom_close_worker",
            "intercom_resume_worker",
            "intercom_spawn_worker",
            "intercom_wait",
            "intercom_review",
            "intercom_log"
        ]
    );

    // A worker's pi, even naming itself: not the coordinator.
    let (code, v) = tool(&env, &mut worker, "check", wpid, &json!({}));
    assert_eq!(code, 2, "{v}");
    assert_eq!(v["coordinator"], false);
    assert!(
        v["refused"]
            .as_str()
            .unwrap()
            .contains("not the roster's coordinator"),
        "{v}"
    );
    assert_eq!(v["code"], "not_coordinator");
    // A pi not registered (yet): a code the extension asks again on.
    let mut fresh = FakePi::start(&env);
    fresh.cd(&root.display().to_string());
    let fpid = fresh.pid();
    let (code, v) = tool(&env, &mut fresh, "check", fpid, &json!({}));
    assert_eq!(
        (code, v["code"].as_str()),
        (2, Some("not_registered")),
        "{v}"
    );
    // A worker's pi naming the coordinator's pid: not its ancestor.
    let close = json!({"name": "Builder"});
    let (code, v) = tool(&env, &mut worker, "intercom_close_worker", cpid, &close);
    assert_eq!(code, 2, "{v}");
    assert!(
        v["refused"].as_str().unwrap().contains("not an ancestor"),
        "{v}"
    );
    // From outside any pi (this test process), naming the coordinator's pid.
    let sys = env.system_config();
    let forged = env.run(&[
        "tool",
        "intercom_reply",
        "--pi-pid",
        &coord.pid().to_string(),
        "--config",
        &sys,
        "--args",
        r#"{"name":"Builder","text":"forged"}"#,
    ]);
    let (code, v) = answer(&forged);
    assert_eq!(code, 2, "{v}");
    assert!(
        v["refused"].as_str().unwrap().contains("not an ancestor"),
        "{v}"
    );
    // The same forged call, with the opt-in log on: it is there, refused.
    let log = env.path("intercom-pane.log");
    let o = std::process::Command::new(BIN)
        .args(["tool", "intercom_reply", "--pi-pid", &cpid.to_string()])
        .args([
            "--config",
            &sys,
            "--args",
            r#"{"name":"Builder","text":"x"}"#,
        ])
        .env("INTERCOM_PANE_LOG", &log)
        .env("HOME", env.path("home"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let text = std::fs::read_to_string(&log).unwrap();
    let line: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(line["event"], "tool_call", "{line}");
    assert_eq!(line["tool"], "intercom_reply");
    assert_eq!(line["exit"], 2);
    assert!(
        line["refused"]
            .as_str()
            .unwrap()
            .contains("not an ancestor"),
        "{line}"
    );
    // The coordinator's pid from a command of another session (what pi's bash tool starts).
    let pid = coord.pid().to_string();
    let o = coord.run(
        "setsid",
        &[
            "-w",
            BIN,
            "tool",
            "intercom_close_worker",
            "--pi-pid",
            &pid,
            "--config",
            &sys,
            "--args",
            &close.to_string(),
        ],
    );
    let (code, v) = answer(&o);
    assert_eq!(code, 2, "{v}");
    assert!(
        v["refused"]
            .as_str()
            .unwrap()
            .contains("not started by that pi"),
        "{v}"
    );
    // Nothing any of them asked for happened.
    assert_eq!(std::fs::read(&config).unwrap(), before);

    // The coordinator's pi moved to another folder: the roster is read from where it runs now.
    let elsewhere = env.path("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    coord.cd(&elsewhere.display().to_string());
    let (code, v) = tool(&env, &mut coord, "check", cpid, &json!({}));
    assert_eq!(code, 2, "{v}");
    assert!(
        v["refused"]
            .as_str()
            .unwrap()
            .contains("no Intercom roster"),
        "{v}"
    );
    coord.cd(&root.display().to_string());

    // Unknown tools and bad arguments: refused (exit 2, saying why) before anything runs.
    let cases = [
        ("intercom_rm_rf", json!({}), "no tool named"),
        ("intercom_board", json!({"limit": 50}), "limit"),
        ("intercom_board", json!({"extra": true}), "unknown field"),
        (
            "intercom_reply",
            json!({"name": "Coordinator", "text": "hi"}),
            "itself",
        ),
        (
            "intercom_reply",
            json!({"name": "Builder", "text": "a\u{1b}[2Jb"}),
            "control",
        ),
        (
            "intercom_wait",
            json!({"name": "Builder", "states": ["asleep"], "timeoutSeconds": 1}),
            "states",
        ),
        (
            "intercom_spawn_worker",
            json!({"name": "New", "dir": "x", "worktree": true}),
            "one or the other",
        ),
        (
            "intercom_spawn_worker",
            json!({"name": "builder"}),
            "already in the roster",
        ),
        ("intercom_spawn_worker", json!({"name": "a/b"}), "separator"),
        (
            "intercom_log",
            json!({"name": "Builder", "limit": 51}),
            "limit",
        ),
        (
            "intercom_log",
            json!({"name": "Builder", "since": "soon"}),
            "since",
        ),
        (
            "intercom_log",
            json!({"name": "Builder"}),
            "no session file yet",
        ),
        ("intercom_log", json!({"name": "Nobody"}), "no seat named"),
        (
            "intercom_resume_worker",
            json!({"name": "Builder", "confirmClosed": false}),
            "confirm",
        ),
    ];
    for (name, args, why) in cases {
        let (code, v) = tool(&env, &mut coord, name, cpid, &args);
        assert_eq!(code, 2, "{name} {args}: {v}");
        assert!(
            v["refused"].as_str().unwrap().contains(why),
            "{name} {args}: {v}"
        );
    }
    assert_eq!(std::fs::read(&config).unwrap(), before);

    // intercom_review: a worker outside git is answered with a note (no guess), read-only.
    let (code, v) = tool(
        &env,
        &mut coord,
        "intercom_review",
        cpid,
        &json!({"name": "Builder"}),
    );
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["worker"], "Builder");
    assert!(v["checkout"].is_null(), "{v}");
    assert!(
        v["note"]
            .as_str()
            .unwrap()
            .contains("not in a git checkout"),
        "{v}"
    );
    let (code, v) = tool(
        &env,
        &mut coord,
        "intercom_review",
        cpid,
        &json!({"name": "Nobody"}),
    );
    assert_eq!(code, 2, "{v}");
    assert!(
        v["refused"].as_str().unwrap().contains("no worker named"),
        "{v}"
    );
    assert_eq!(std::fs::read(&config).unwrap(), before);

    // The calls themselves: the board's page, and a bounded wait.
    let (code, page) = tool(&env, &mut coord, "intercom_board", cpid, &json!({}));
    assert_eq!(code, 0, "{page}");
    let seats = page["seats"].as_array().unwrap();
    assert_eq!(
        seats.len(),
        1,
        "the coordinator is no seat of its own board"
    );
    assert_eq!(seats[0]["name"], "Builder");
    assert_eq!(seats[0]["host"], "local");
    let state = seats[0]["state"].as_str().unwrap().to_string();
    let (code, v) = tool(
        &env,
        &mut coord,
        "intercom_wait",
        cpid,
        &json!({"name": "Builder", "states": [state], "timeoutSeconds": 5}),
    );
    assert_eq!((code, &v["reached"]), (0, &json!(true)), "{v}");
    assert_eq!(v["passes"], 1);
    let other = if state == "error" { "waiting" } else { "error" };
    let started = std::time::Instant::now();
    let (code, v) = tool(
        &env,
        &mut coord,
        "intercom_wait",
        cpid,
        &json!({"name": "Builder", "states": [other], "timeoutSeconds": 2}),
    );
    assert_eq!((code, &v["reached"]), (0, &json!(false)), "{v}");
    assert_eq!(v["seat"]["name"], "Builder");
    let took = started.elapsed();
    assert!(
        took >= std::time::Duration::from_secs(2) && took < std::time::Duration::from_secs(20),
        "{took:?}"
    );
    let (code, v) = tool(
        &env,
        &mut coord,
        "intercom_wait",
        cpid,
        &json!({"name": "Nobody", "states": ["idle"], "timeoutSeconds": 2}),
    );
    assert_eq!(code, 2, "{v}");
}

/// `intercom_log`: the worker's timeline from its session file, newest first, in pages that
/// follow `nextOffset`; transcript text sanitized.
#[test]
fn intercom_log_pages_a_workers_timeline_newest_first() {
    let env = Env::new().with_system_path();
    let root = roster(&env);
    let dir = env.path("home/.pi/agent/sessions/--root--");
    std::fs::create_dir_all(&dir).unwrap();
    let t = |s: u32| format!("2026-12-01T10:00:{s:02}.000Z");
    let mut lines = vec![
        json!({"type":"session","version":3,"id":WORKER,"timestamp":t(0),"cwd":root.display().to_string()}),
    ];
    for i in 0..5u32 {
        let s = 1 + i * 10;
        lines.push(json!({"type":"message","id":format!("u{i}"),"timestamp":t(s),"message":{"role":"user","content":format!("task {i}")}}));
        lines.push(json!({"type":"message","id":format!("a{i}"),"timestamp":t(s + 1),"message":{"role":"assistant",
            "content":[{"type":"toolCall","id":format!("c{i}"),"name":"bash","arguments":{"command":format!("make \u{1b}[2J{i}")}}],
            "model":"m","usage":{"input":1,"output":1,"cost":{"total":0.001}},"stopReason":"toolUse"}}));
        lines.push(json!({"type":"message","id":format!("r{i}"),"timestamp":t(s + 2),"message":{"role":"toolResult","toolCallId":format!("c{i}"),"toolName":"bash","content":[],"isError":i == 3}}));
        lines.push(json!({"type":"message","id":format!("b{i}"),"timestamp":t(s + 3),"message":{"role":"assistant","content":[{"type":"text","text":"done"}],"model":"m","stopReason":"stop"}}));
    }
    std::fs::write(
        dir.join(format!("2026-12-01T10-00-00-000Z_{WORKER}.jsonl")),
        lines.iter().map(|l| format!("{l}\n")).collect::<String>(),
    )
    .unwrap();
    let mut coord = seat(&env, &root, COORD);
    let cpid = coord.pid();
    let (code, p1) = tool(
        &env,
        &mut coord,
        "intercom_log",
        cpid,
        &json!({"name": "Builder", "limit": 4}),
    );
    assert_eq!(code, 0, "{p1}");
    assert_eq!(
        (&p1["order"], &p1["totalInWindow"], &p1["nextOffset"]),
        (&json!("newestFirst"), &json!(10), &json!(4)),
        "{p1}"
    );
    let kinds: Vec<&str> = p1["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["tool", "turn", "tool", "turn"], "{p1}");
    assert_eq!(p1["entries"][0]["args"], "make 4");
    assert_eq!(p1["entries"][2]["outcome"], "error");
    assert_eq!(p1["entries"][1]["prompt"], "task 4");
    let (code, p3) = tool(
        &env,
        &mut coord,
        "intercom_log",
        cpid,
        &json!({"name": "Builder", "limit": 4, "offset": 8}),
    );
    assert_eq!(code, 0, "{p3}");
    assert_eq!(
        (p3["entries"].as_array().unwrap().len(), &p3["nextOffset"]),
        (2, &Value::Null)
    );
    assert_eq!(p3["entries"][1]["prompt"], "task 0");
    let (code, w) = tool(
        &env,
        &mut coord,
        "intercom_log",
        cpid,
        &json!({"name": "Builder", "since": "2026-12-01T10:00:40Z"}),
    );
    assert_eq!((code, &w["totalInWindow"]), (0, &json!(2)), "{w}");
}
