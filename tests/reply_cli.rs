//! `intercom-pane reply`: refusals before anything is sent, and real delivery into a registered
//! seat's tmux pane (bracketed paste, then Enter) on a private server.

mod mux_support;
mod pi_support;
mod scan_support;

use std::path::Path;

use mux_support::{wait_for, TmuxServer};
use scan_support::*;
use serde_json::Value;

const ID: &str = "01a2f000-0000-7000-8000-00000000bb01";

fn roster(env: &Env) {
    std::fs::create_dir_all(env.path("sessions")).unwrap();
    write_roster(&env.path("root"), &[(ID, "Worker"), ("other", "Idle")]);
}

fn reply(env: &Env, sock: &Path, extra: &[&str]) -> std::process::Output {
    let sock = sock.display().to_string();
    let mut args = vec!["--tmux-socket", &sock];
    args.extend_from_slice(extra);
    env.run(&layout_args(env, &["reply"], &args))
}

/// A registered seat: a pane whose process is named `pi`, that registers itself and then
/// copies everything typed into it to `typed.txt`.
fn seat(env: &Env) -> TmuxServer {
    let sys = env.system_config();
    let bin = env!("CARGO_BIN_EXE_intercom-pane");
    let root = env.path("root");
    let out = env.path("typed.txt");
    let script = format!(
        "{bin} register --config {sys} --event session_start --seq 1 --pi-pid $$ --session-id {ID} --cwd {} >/dev/null; cat > {}; true",
        root.display(),
        out.display()
    );
    let argv = pi_support::pi_pane_argv(&env.path("pi-bin"), &script);
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    TmuxServer::start("seat", &root, &argv)
}

/// Wait until the seat's registration record is in place.
fn registered(env: &Env) {
    wait_registered(&env.path("root/.pi-intercom/seats"));
}

#[test]
fn refusals_come_before_anything_is_sent() {
    let env = Env::new().with_system_path();
    roster(&env);
    let server = seat(&env);
    let sock = server.sock.clone();
    registered(&env);
    let cases: [(&[&str], i32, &str); 6] = [
        (&["Worker", "   "], 3, "blank"),
        (&["Worker", &"x".repeat(2001)], 4, "2001 characters"),
        (&["Nobody", "hi"], 5, "no seat named"),
        (&["Idle", "hi"], 6, "reply needs a registered seat"),
        (&["Coordinator", "hi"], 6, "reply needs a registered seat"),
        (&["Worker"], 2, "give the text"),
    ];
    for (args, code, msg) in cases {
        let o = reply(&env, &sock, args);
        assert_eq!(o.status.code(), Some(code), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(msg), "{args:?}: {err}");
        assert!(o.stdout.is_empty());
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    let typed = std::fs::read_to_string(env.path("typed.txt")).unwrap_or_default();
    assert_eq!(typed, "", "nothing reached the pane");
}

#[test]
fn delivers_to_the_registered_pane_only_and_reports_it() {
    let env = Env::new().with_system_path();
    roster(&env);
    let server = seat(&env);
    let sock = server.sock.clone();
    registered(&env);
    // The board offers the reply path on that row.
    let idx = scan_json(&env, &["--tmux-socket", &sock.display().to_string()]);
    assert_eq!(record(&idx, "Worker")["registered"]["alive"], true);

    let sys = env.system_config();
    let text = "Use staging; it's fine;";
    let o = env.run(&[
        "reply",
        "--config",
        &sys,
        "--root",
        "root",
        "--sessions-dir",
        "sessions",
        "--fleet",
        "none",
        "--tmux-socket",
        &sock.display().to_string(),
        "worker",
        text,
    ]);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(0), "{err}");
    let receipt: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(receipt["delivered"], true);
    assert_eq!(receipt["exitCode"], 0);
    assert_eq!(receipt["agent"], "root/Worker");
    assert_eq!(receipt["session"], "seat");
    assert_eq!(receipt["socket"], sock.display().to_string());
    assert!(receipt["target"].as_str().unwrap().starts_with('%'));
    let typed = wait_for(5_000, || {
        let t = std::fs::read_to_string(env.path("typed.txt")).ok()?;
        t.contains("agent-send").then_some(t)
    })
    .expect("the text reached the pane");
    assert_eq!(
        typed,
        format!("{text}\n{}\n", intercom_pane::actions::reply::TRAILER)
    );
}

#[test]
fn a_stale_registration_is_refused() {
    let env = Env::new().with_system_path();
    roster(&env);
    let mut server = seat(&env);
    let sock = server.sock.clone();
    registered(&env);
    server.kill();
    let o = reply(&env, &sock, &["Worker", "hello"]);
    assert_eq!(o.status.code(), Some(6));
    assert!(String::from_utf8_lossy(&o.stderr).contains("stale"));
}
