//! Zero-setup seats: with no roster, no layout and no extension, every pane of a real tmux
//! server (private socket) whose process tree runs pi is on the board, its session found from
//! the pi process (its environment and cwd) and marked with where; a pi a layout seat already
//! shows is not listed twice (that seat is live in the pi's pane); a bash merely named `pi` is not a seat. The pis are the stand-in
//! of `pi_support` (real transcripts as their session files).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_support;
use crate::pi_support;
use crate::scan_support;

use std::path::Path;

use mux_support::{wait_for, TmuxServer};
use pi_support::fake_pi_program;
use scan_support::*;
use serde_json::Value;

fn put(fixture: &str, dir: &Path) -> String {
    let src = Path::new(FIXTURES).join("pi-sessions").join(fixture);
    let id = header_id(&src);
    std::fs::create_dir_all(dir).unwrap();
    std::fs::copy(
        &src,
        dir.join(format!("2026-11-29T23-13-49-000Z_{id}.jsonl")),
    )
    .unwrap();
    id
}

/// pi's folder name for a cwd.
fn folder(cwd: &Path) -> String {
    let s = cwd.display().to_string();
    format!("--{}--", s.trim_start_matches('/').replace(['/', ':'], "-"))
}

#[test]
fn every_pane_running_pi_is_a_seat_with_no_setup() {
    let env = Env::new().with_system_path();
    let cfg = env.system_config();
    let (node, cli) = fake_pi_program(&env.path("pi-bin"));
    let home = env.path("pi-home");
    let dir = |n: &str| {
        let d = env.path(n);
        std::fs::create_dir_all(&d).unwrap();
        d.canonicalize().unwrap()
    };
    let (w1, w2, w3, w4) = (dir("w1"), dir("w2"), dir("w3"), dir("w4"));
    // 1: pi's default agent folder; 2: PI_CODING_AGENT_DIR; 3: PI_CODING_AGENT_SESSION_DIR;
    // 4: a repo seat's agent folder (the layout seat shows it); 5: bash named pi.
    let waiting = put(
        "waiting.jsonl",
        &home.join(".pi/agent/sessions").join(folder(&w1)),
    );
    let agent_b = env.path("agent-b");
    put("tool.jsonl", &agent_b.join("sessions").join(folder(&w2)));
    let flat = env.path("flat");
    put("error.jsonl", &flat);
    let repo = env.path("repo");
    let seat_dir = repo.join(".pi/state/r1");
    put("idle.jsonl", &seat_dir.join("sessions").join(folder(&w4)));
    let run = |exports: &str| {
        format!(
            "export HOME={} {exports}; exec -a pi {} {} 'sleep 600'",
            home.display(),
            node.display(),
            cli.display()
        )
    };
    let server = TmuxServer::start("one", &w1, &["bash", "-c", &run("")]);
    server.new_session(
        "two",
        &w2,
        &[
            "bash",
            "-c",
            &run(&format!("PI_CODING_AGENT_DIR={}", agent_b.display())),
        ],
    );
    server.new_session(
        "three",
        &w3,
        &[
            "bash",
            "-c",
            &run(&format!("PI_CODING_AGENT_SESSION_DIR={}", flat.display())),
        ],
    );
    server.new_session(
        "four",
        &w4,
        &[
            "bash",
            "-c",
            &run(&format!("PI_CODING_AGENT_DIR={}", seat_dir.display())),
        ],
    );
    server.new_session(
        "five",
        &w1,
        &["bash", "-c", "exec -a pi bash -c 'sleep 600; true'"],
    );
    wait_for(10_000, || {
        let l = server.tmux(&["list-panes", "-a", "-F", "#{pane_current_command}"]);
        (l.lines().filter(|c| c.trim() == "pi").count() == 5).then_some(())
    })
    .unwrap_or_else(|| {
        panic!(
            "{}",
            server.tmux(&[
                "list-panes",
                "-a",
                "-F",
                "#{session_name} #{pane_current_command} #{pane_dead} #{pane_pid}"
            ])
        )
    });
    let sock = server.sock.display().to_string();
    let o = env.run(&[
        "scan",
        "--json",
        "--config",
        &cfg,
        "--repo",
        &repo.display().to_string(),
        "--fleet",
        "none",
        "--tmux-socket",
        &sock,
        "--now",
        NOW,
    ]);
    let idx = stdout_json(&o);
    let recs: Vec<&Value> = idx["records"].as_array().unwrap().iter().collect();
    let pane = |session: &str| {
        recs.iter()
            .find(|r| {
                r["project"] == "panes"
                    && r["agent"]
                        .as_str()
                        .is_some_and(|a| a.starts_with(&format!("{session} %")))
            })
            .copied()
    };
    let brief = |r: &Value| {
        format!(
            "{}/{}/{}",
            r["state"].as_str().unwrap_or("?"),
            r["foundBy"].as_str().unwrap_or("?"),
            r["alive"]
        )
    };
    assert_eq!(
        brief(pane("one").expect("pane one")),
        "waiting/pi-default-agent-dir/true"
    );
    assert_eq!(pane("one").unwrap()["sessionId"], waiting);
    assert_eq!(
        brief(pane("two").expect("pane two")),
        "working/pi-agent-dir-env/true"
    );
    assert_eq!(
        brief(pane("three").expect("pane three")),
        "error/pi-session-dir-env/true"
    );
    assert!(pane("four").is_none(), "shown by its repo seat only");
    assert!(pane("five").is_none(), "a bash named pi is not pi");
    let r1 = record(&idx, "r1");
    // Its liveness comes from the pane its pi really runs in, not a session named `r1`.
    assert_eq!(r1["state"], "idle", "{r1}");
    assert_eq!(r1["tmux"]["session"], "four", "{r1}");
    assert_eq!(r1["foundBy"], Value::Null);
    assert_eq!(recs.len(), 4, "{:#?}", recs);
}
