//! Zero-setup seats: with no roster, no layout and no extension, every pane of a real tmux
//! server (private socket) whose process tree runs pi is on the board, its session folder found
//! from the pi process (its environment and cwd) and marked with where. Its session file only
//! by evidence that names it (here: its command line); a pi whose folder holds files nothing
//! ties to it is unknown with the files as candidates, and two pis sharing a folder are two
//! rows. A pi a layout seat already shows is not listed twice (that seat is live in the pi's
//! pane); a bash merely named `pi` is not a seat. The pis are the stand-in of `pi_support`
//! (real transcripts as their session files).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_support;
use crate::pi_support;
use crate::scan_support;

use std::path::Path;

use mux_support::{wait_for, TmuxServer};
use pi_support::fake_pi_program;
use scan_support::*;
use serde_json::Value;

/// A real transcript as a session file in `dir`, last written an hour ago (before any pi of
/// the test started).
fn put(fixture: &str, dir: &Path) -> String {
    let src = Path::new(FIXTURES).join("pi-sessions").join(fixture);
    let id = header_id(&src);
    std::fs::create_dir_all(dir).unwrap();
    let to = dir.join(format!("2026-11-29T23-13-49-000Z_{id}.jsonl"));
    std::fs::copy(&src, &to).unwrap();
    age(&to, 3600);
    id
}

/// Set a file's modification time `secs` seconds back (0: now).
fn age(file: &Path, secs: u64) {
    let f = std::fs::File::options().append(true).open(file).unwrap();
    f.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(secs))
        .unwrap();
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
    let tool = put("tool.jsonl", &agent_b.join("sessions").join(folder(&w2)));
    let flat = env.path("flat");
    put("error.jsonl", &flat);
    // 7: alone in its folder, its file written after it started (as a pi with no extension).
    let agent_c = env.path("agent-c");
    let w7 = dir("w7");
    let idle7 = put("idle.jsonl", &agent_c.join("sessions").join(folder(&w7)));
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
    // A pi whose command line names its session (as a real pi's does until it sets its title).
    let run_named = |exports: &str, id: &str| format!("{} --session-id {id}", run(exports));
    let server = TmuxServer::start("one", &w1, &["bash", "-c", &run("")]);
    server.new_session(
        "two",
        &w2,
        &[
            "bash",
            "-c",
            &run_named(&format!("PI_CODING_AGENT_DIR={}", agent_b.display()), &tool),
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
        "seven",
        &w7,
        &[
            "bash",
            "-c",
            &run(&format!("PI_CODING_AGENT_DIR={}", agent_c.display())),
        ],
    );
    // A second pi in the same flat folder: its own row, never folded into the first.
    server.new_session(
        "six",
        &w3,
        &[
            "bash",
            "-c",
            &run(&format!("PI_CODING_AGENT_SESSION_DIR={}", flat.display())),
        ],
    );
    server.new_session(
        "five",
        &w1,
        &["bash", "-c", "exec -a pi bash -c 'sleep 600; true'"],
    );
    wait_for(10_000, || {
        let l = server.tmux(&["list-panes", "-a", "-F", "#{pane_current_command}"]);
        (l.lines().filter(|c| c.trim() == "pi").count() == 7).then_some(())
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
    // pi writes its file: seven's is written now, after its pi started.
    let seven_file = agent_c
        .join("sessions")
        .join(folder(&w7))
        .join(format!("2026-11-29T23-13-49-000Z_{idle7}.jsonl"));
    std::thread::sleep(std::time::Duration::from_millis(50));
    age(&seven_file, 0);
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
    // Nothing names the file of a pi whose folder holds one (no registration, no flag, no
    // open file): unknown, with the file as a candidate, never taken to be its.
    let one = pane("one").expect("pane one");
    assert_eq!(brief(one), "unknown/pi-default-agent-dir/true");
    assert_eq!(one["stateReason"], "session_undecided", "{one}");
    assert_eq!(one["sessionTie"], "undecided", "{one}");
    assert_eq!(one["sessionId"], Value::Null, "{one}");
    let cands = one["sessionCandidates"].as_array().unwrap();
    assert_eq!(cands.len(), 1, "{one}");
    assert!(cands[0].as_str().unwrap().contains(&waiting), "{one}");
    // Its command line names its session: read.
    let two = pane("two").expect("pane two");
    assert_eq!(brief(two), "working/pi-session-flag/true");
    assert_eq!(two["sessionTie"], "command-line", "{two}");
    assert_eq!(two["sessionId"], tool.as_str());
    for p in ["three", "six"] {
        let r = pane(p).unwrap_or_else(|| panic!("pane {p}: {recs:#?}"));
        assert_eq!(brief(r), "unknown/pi-session-dir-env/true", "{p}");
        assert_eq!(r["stateReason"], "session_undecided", "{r}");
    }
    assert!(pane("four").is_none(), "shown by its repo seat only");
    assert!(pane("five").is_none(), "a bash named pi is not pi");
    let r1 = record(&idx, "r1");
    // Its liveness comes from the pane its pi really runs in, not a session named `r1`.
    assert_eq!(r1["state"], "idle", "{r1}");
    assert_eq!(r1["tmux"]["session"], "four", "{r1}");
    assert_eq!(r1["foundBy"], Value::Null);
    // Alone in its folder, the one file written since it started (and begun before): its own.
    let seven = pane("seven").expect("pane seven");
    assert_eq!(brief(seven), "idle/pi-agent-dir-env/true");
    assert_eq!(seven["sessionTie"], "only-written", "{seven}");
    assert_eq!(seven["sessionId"], idle7.as_str());
    assert_eq!(recs.len(), 6, "{:#?}", recs);
    // Another pi writing in seven's folder, outside any pane (a terminal, a script): seven is
    // no longer alone there, and the written file is no longer taken to be its.
    let mut other = std::process::Command::new("bash")
        .args([
            "-c",
            &run(&format!("PI_CODING_AGENT_DIR={}", agent_c.display())),
        ])
        .current_dir(&w7)
        .spawn()
        .unwrap();
    let idx = wait_for(10_000, || {
        let idx = stdout_json(&env.run(&[
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
        ]));
        let r = idx["records"].as_array().unwrap().iter().find(|r| {
            r["agent"]
                .as_str()
                .is_some_and(|a| a.starts_with("seven %"))
        })?;
        (r["sessionTie"] == "undecided").then(|| idx.clone())
    });
    let _ = other.kill();
    let _ = other.wait();
    assert!(
        idx.is_some(),
        "seven stayed tied with another pi writing in its folder"
    );
}
