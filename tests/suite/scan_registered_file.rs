//! A roster worker is read from the session file its live registration names, whatever folders
//! the scan's own environment searches (issue 25 item 3): on Herdr the monitor gets the Herdr
//! server's environment, and any pi may run with its own `PI_CODING_AGENT_DIR`. Two workers in
//! real tmux write their files where the scan never looks — one registered in the roster's
//! seats folder, one registered under the data root before the roster named it — and both read
//! as their files say (waiting stays waiting). A record from outside whose pi runs in another
//! folder is not the worker's, and the worker then reads as having no file.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_support;
use crate::pi_support;
use crate::scan_support;

use std::path::{Path, PathBuf};

use mux_support::{wait_for, TmuxServer};
use scan_support::*;
use serde_json::json;

const W1: &str = "01a2f000-0000-7000-8000-00000000f1e1";
const W2: &str = "01a2f000-0000-7000-8000-00000000f1e2";

/// A session file of `id` in `dir` whose last reply asks for input.
fn waiting_file(dir: &Path, id: &str, cwd: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let file = dir.join(format!("2026-11-29T23-00-00-000Z_{id}.jsonl"));
    let lines = [
        json!({"type":"session","version":3,"id":id,"timestamp":"2026-11-29T23:00:00.000Z","cwd":cwd.display().to_string()}),
        json!({"type":"message","id":"a1","parentId":null,"timestamp":"2026-11-29T23:00:01.000Z","message":{"role":"user","content":"Deploy it."}}),
        json!({"type":"message","id":"a2","parentId":"a1","timestamp":"2026-11-29T23:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"Input needed: staging or production?"}],"provider":"p","model":"m","stopReason":"stop"}}),
    ];
    std::fs::write(
        &file,
        lines.iter().map(|l| format!("{l}\n")).collect::<String>(),
    )
    .unwrap();
    file
}

/// The stand-in's script: register session `id` with `file` from `cwd`, then stay.
fn registers(env: &Env, id: &str, file: &Path, cwd: &Path) -> String {
    format!(
        "cd {c} && {} register --config {} --event session_start --seq 1 --pi-pid $$ --session-id {id} --cwd {c} --session-file {} >/dev/null 2>&1; sleep 600",
        env!("CARGO_BIN_EXE_intercom-pane"),
        env.system_config(),
        file.display(),
        c = cwd.display(),
    )
}

/// Wait until a registration is under the data root.
fn wait_data_root_record(env: &Env, what: &str) {
    let data_seats = env.path("data/seats/pi");
    wait_for(15_000, || {
        std::fs::read_dir(&data_seats)
            .ok()?
            .flatten()
            .any(|d| d.path().join("registration.json").is_file())
            .then_some(())
    })
    .expect(what);
}

fn count_json(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn registered_workers_read_their_own_files_from_any_environment() {
    let env = Env::new().with_system_path();
    let root = env.path("root");
    // pi's own folders: somewhere the scan (`--sessions-dir sessions`, a private HOME) never looks.
    let pis = env.path("pi-agent/sessions/--root--");
    let f1 = waiting_file(&pis, W1, &root);
    let f2 = waiting_file(&pis, W2, &root);
    std::fs::create_dir_all(env.path("sessions")).unwrap();
    // W2 registers before the roster names it: its record goes under the data root.
    write_roster(&root, &[(W1, "W1")]);
    let bin = env.path("pi-bin");
    let argv2 = pi_support::pi_pane_argv(&bin, &registers(&env, W2, &f2, &root));
    let argv1 = pi_support::pi_pane_argv(&bin, &registers(&env, W1, &f1, &root));
    let argv2: Vec<&str> = argv2.iter().map(String::as_str).collect();
    let server = TmuxServer::start("W2", &root, &argv2);
    wait_data_root_record(&env, "W2 registered under the data root");
    write_roster(&root, &[(W1, "W1"), (W2, "W2")]);
    let argv1: Vec<&str> = argv1.iter().map(String::as_str).collect();
    server.new_session("W1", &root, &argv1);
    wait_for(15_000, || {
        (count_json(&root.join(".pi-intercom/seats")) == 1).then_some(())
    })
    .expect("W1 registered in the roster's seats folder");

    let sock = server.sock.display().to_string();
    let idx = scan_json(&env, &["--tmux-socket", &sock]);
    for (name, file) in [("W1", &f1), ("W2", &f2)] {
        let w = record(&idx, name);
        assert_eq!(
            (&w["state"], &w["stateReason"]),
            (&json!("waiting"), &json!("input_needed")),
            "{name}: {w}"
        );
        assert_eq!(w["sessionFile"], file.display().to_string(), "{name}");
        assert_eq!(w["registered"]["alive"], true, "{name}: {w}");
    }
}

#[test]
fn an_outside_record_of_a_pi_in_another_folder_names_no_file_for_the_worker() {
    let env = Env::new().with_system_path();
    let root = env.path("root");
    let elsewhere = env.path("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let pis = env.path("pi-agent/sessions/--elsewhere--");
    let f2 = waiting_file(&pis, W2, &elsewhere);
    std::fs::create_dir_all(env.path("sessions")).unwrap();
    // A pi in another folder registers W2's id before any roster names it.
    write_roster(&root, &[(W1, "W1")]);
    let argv = pi_support::pi_pane_argv(&env.path("pi-bin"), &registers(&env, W2, &f2, &elsewhere));
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let server = TmuxServer::start("other", &elsewhere, &argv);
    wait_data_root_record(&env, "the other pi registered");
    write_roster(&root, &[(W1, "W1"), (W2, "W2")]);
    let idx = scan_json(&env, &["--tmux-socket", &server.sock.display().to_string()]);
    let w = record(&idx, "W2");
    assert!(w["sessionFile"].is_null(), "{w}");
    assert!(w["registered"].is_null(), "{w}");
}
