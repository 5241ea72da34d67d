//! One live registration per session, decided by the truth (issue 20 item 2). Two registered
//! workers W1 and W2 in real tmux; W2's "bash tool" (a `setsid` child of W2's pi, as pi starts
//! tool commands) starts an impostor in another folder that passes the pi check — `node ./pi`
//! (a file named `pi` run by a runtime named `node`) or a runtime whose whole command line is
//! `pi` (what `process.title = "pi"` gives) — and registers W1's session id. The impostor's
//! record lands outside the roster (the data root); the roster's own record of W1 wins for every
//! reader: the reply reaches W1, W1 stays reachable after the impostor exits, and close-worker
//! W1 closes W1's pane and never W2's (the reported bug closed W2's pane).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::close_support;
use crate::mux_support;
use crate::pi_support;
use crate::scan_support;

use std::path::{Path, PathBuf};

use mux_support::{wait_for, TmuxServer};
use scan_support::*;
use serde_json::{json, Value};

const W1: &str = "01a2f000-0000-7000-8000-0000000051a1";
const W2: &str = "01a2f000-0000-7000-8000-0000000051a2";

/// How the impostor passes the pi check.
#[derive(Clone, Copy)]
enum Impostor {
    /// `node ./pi`: a runtime named `node` running a file named `pi`.
    NodeDotPi,
    /// A runtime whose command line is exactly `pi` (`process.title = "pi"`).
    Titled,
}

/// A session file of `id` whose header says pi runs in `cwd`.
fn session_file(env: &Env, id: &str, cwd: &Path) -> PathBuf {
    let dir = env.path("sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("2026-11-29T23-00-00-000Z_{id}.jsonl"));
    let lines = [
        json!({"type":"session","version":3,"id":id,"timestamp":"2026-11-29T23:00:00.000Z","cwd":cwd.display().to_string()}),
        json!({"type":"message","id":"a1","parentId":null,"timestamp":"2026-11-29T23:00:01.000Z","message":{"role":"user","content":"Work."}}),
        json!({"type":"message","id":"a2","parentId":"a1","timestamp":"2026-11-29T23:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"Done."}],"provider":"p","model":"m","stopReason":"stop"}}),
    ];
    std::fs::write(
        &file,
        lines.iter().map(|l| format!("{l}\n")).collect::<String>(),
    )
    .unwrap();
    file
}

/// The impostor's program in folder `elsewhere`: it registers W1's session from there (its
/// `register` exit code and output in `elsewhere/rc`, `elsewhere/out`), then stays.
fn impostor_line(env: &Env, how: Impostor, elsewhere: &Path) -> String {
    std::fs::create_dir_all(elsewhere).unwrap();
    let (node, _) = pi_support::fake_pi_program(&env.path("pi-bin"));
    let script = format!(
        "{} register --config {} --event session_start --seq 1 --pi-pid $$ --session-id {W1} >{e}/out 2>{e}/err; echo $? >{e}/rc; exec sleep 600\n",
        env!("CARGO_BIN_EXE_intercom-pane"),
        env.system_config(),
        e = elsewhere.display()
    );
    std::fs::write(elsewhere.join("pi"), &script).unwrap();
    let start = match how {
        Impostor::NodeDotPi => {
            format!("cd {} && exec {} ./pi", elsewhere.display(), node.display())
        }
        Impostor::Titled => format!(
            "cd {} && exec -a pi {} < ./pi",
            elsewhere.display(),
            node.display()
        ),
    };
    // What pi's bash tool does: a child of W2's pi in a session of its own, in whatever folder
    // it likes.
    format!("setsid bash -c {} & ", mux_support_quote(&start))
}

fn mux_support_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// W1 and W2, each a registered pi stand-in in its own tmux session (`W1`, `W2`) in the root.
/// W1 (when `w1_registers`) registers, then runs `w1_then`; W2 registers, starts `w2_tool`
/// (the impostor: a command line ending in `& `), then copies what is typed into its pane to `typed-W2.txt`.
fn team(env: &Env, w1_registers: bool, w1_then: &str, w2_tool: &str) -> TmuxServer {
    let root = env.path("root");
    write_roster(&root, &[(W1, "W1"), (W2, "W2")]);
    let f1 = session_file(env, W1, &root);
    let f2 = session_file(env, W2, &root);
    let bin = env!("CARGO_BIN_EXE_intercom-pane");
    let sys = env.system_config();
    let reg = |id: &str, f: &Path| {
        format!(
            "{bin} register --config {sys} --event session_start --seq 1 --pi-pid $$ --session-id {id} --cwd {} --session-file {} >/dev/null; ",
            root.display(),
            f.display()
        )
    };
    let w1 = format!(
        "{}{w1_then}",
        if w1_registers {
            reg(W1, &f1)
        } else {
            String::new()
        }
    );
    let w2 = format!(
        "{}{w2_tool}cat >> {}; true",
        reg(W2, &f2),
        env.path("typed-W2.txt").display()
    );
    // Both argvs before either pi starts: making one (re)writes the stand-in's entry script,
    // which a running stand-in may still be reading.
    let argv1 = pi_support::pi_pane_argv(&env.path("pi-bin"), &w1);
    let argv2 = pi_support::pi_pane_argv(&env.path("pi-bin"), &w2);
    let argv1: Vec<&str> = argv1.iter().map(String::as_str).collect();
    let argv2: Vec<&str> = argv2.iter().map(String::as_str).collect();
    let server = TmuxServer::start("W1", &root, &argv1);
    server.new_session("W2", &root, &argv2);
    let want = if w1_registers { 2 } else { 1 };
    wait_for(15_000, || {
        (records(&root.join(".pi-intercom/seats")).len() == want).then_some(())
    })
    .expect("the workers registered");
    server
}

fn records(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "json"))
                .collect()
        })
        .unwrap_or_default()
}

/// The impostor's `register` exit code, output and error.
fn impostor_result(elsewhere: &Path) -> (i32, String, String) {
    let code = wait_for(15_000, || {
        let t = std::fs::read_to_string(elsewhere.join("rc")).ok()?;
        t.ends_with('\n').then(|| t.trim().parse::<i32>().unwrap())
    })
    .expect("the impostor ran register");
    let read = |n: &str| std::fs::read_to_string(elsewhere.join(n)).unwrap_or_default();
    (code, read("out"), read("err"))
}

fn w1(env: &Env, server: &TmuxServer) -> Value {
    let sock = server.sock.display().to_string();
    record(&scan_json(env, &["--tmux-socket", &sock]), "W1").clone()
}

fn reply(env: &Env, server: &TmuxServer, text: &str) -> (i32, String) {
    let sock = server.sock.display().to_string();
    let o = env.run(&layout_args(
        env,
        &["reply"],
        &["--tmux-socket", &sock, "W1", text],
    ));
    (
        o.status.code().unwrap_or(-1),
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
    )
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

/// The impostor's registration is written outside the roster, and it steers nothing: every
/// reader takes the roster's own record of W1.
fn the_roster_own_record_wins(how: Impostor) {
    let env = Env::new().with_system_path();
    let elsewhere = env.path("elsewhere");
    let typed1 = env.path("typed-W1.txt");
    let w1_then = format!("cat >> {}; true", typed1.display());
    let server = team(&env, true, &w1_then, &impostor_line(&env, how, &elsewhere));
    let (code, out, err) = impostor_result(&elsewhere);
    assert_eq!(code, 0, "{err}");
    let imp_record = PathBuf::from(out.trim());
    assert!(
        imp_record.starts_with(env.path("data/seats/pi")),
        "outside the roster: {}",
        imp_record.display()
    );
    let imp: Value = serde_json::from_slice(&std::fs::read(&imp_record).unwrap()).unwrap();
    assert_eq!(
        imp["mux"]["session"], "W2",
        "the impostor runs in W2's pane"
    );
    assert_eq!(
        imp["cwd"],
        elsewhere.display().to_string(),
        "its real folder"
    );

    let w = w1(&env, &server);
    assert_eq!(w["registered"]["alive"], true, "{w}");
    assert_eq!(w["registered"]["tmuxSession"], "W1", "{w}");
    let (code, out) = reply(&env, &server, "first answer token=SECRET");
    assert_eq!(code, 0, "{out}");
    wait_for(10_000, || {
        read(&typed1).contains("token=SECRET").then_some(())
    })
    .expect("the reply reached W1");
    assert!(
        !read(&env.path("typed-W2.txt")).contains("SECRET"),
        "nothing reached W2's pane"
    );

    // The impostor exits: W1 is still registered, alive and reachable.
    let pid = imp["pid"].as_i64().unwrap() as i32;
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    wait_for(10_000, || {
        (!Path::new(&format!("/proc/{pid}/stat")).exists()
            || std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|s| s.contains(") Z ")))
        .then_some(())
    })
    .expect("the impostor ended");
    let w = w1(&env, &server);
    assert_eq!(w["registered"]["alive"], true, "{w}");
    assert_ne!(w["state"], "offline", "{w}");
    let (code, out) = reply(&env, &server, "second answer");
    assert_eq!(code, 0, "{out}");
    wait_for(10_000, || {
        read(&typed1).contains("second answer").then_some(())
    })
    .expect("W1 is still reachable");
}

#[test]
fn a_node_named_pi_elsewhere_never_shadows_a_live_worker() {
    the_roster_own_record_wins(Impostor::NodeDotPi);
}

#[test]
fn a_process_titled_pi_elsewhere_never_shadows_a_live_worker() {
    the_roster_own_record_wins(Impostor::Titled);
}

/// The reported bug: close-worker W1, with the impostor's record of W1 naming W2's pane,
/// "closed" W2's pane. Now W1's pane (and only it) is closed after W1's own handoff.
#[test]
fn close_worker_w1_closes_only_w1s_pane() {
    let env = Env::new().with_system_path();
    let elsewhere = env.path("elsewhere");
    let root = env.path("root");
    let f1 = env.path(&format!("sessions/2026-11-29T23-00-00-000Z_{W1}.jsonl"));
    // W1 cooperates as close_support's worker does: it reads the request, saves its handoff
    // and completes a reply in its own session file.
    let cooperate = close_support::cooperate_script(&env, W1, &f1);
    let server = team(
        &env,
        true,
        &cooperate,
        &impostor_line(&env, Impostor::Titled, &elsewhere),
    );
    assert_eq!(impostor_result(&elsewhere).0, 0);
    let panes = |s: &TmuxServer| s.tmux(&["list-panes", "-a", "-F", "#{session_name} #{pane_id}"]);
    let before = panes(&server);
    let w1_pane = before
        .lines()
        .find_map(|l| l.strip_prefix("W1 "))
        .unwrap()
        .to_string();
    let sock = server.sock.display().to_string();
    let o = env.run(&layout_args(
        &env,
        &["close-worker"],
        &[
            "--tmux-socket",
            &sock,
            "--json",
            "--deadline-secs",
            "60",
            "W1",
        ],
    ));
    let out: Value = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{out} {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(out["closed"]["pane"], w1_pane, "{out}");
    let after = panes(&server);
    assert!(
        after.lines().any(|l| l.starts_with("W2 ")),
        "W2's pane is still there: {after}"
    );
    assert!(!after.lines().any(|l| l.starts_with("W1 ")), "{after}");
    let cfg: Value =
        serde_json::from_slice(&std::fs::read(root.join(".pi-intercom/config.json")).unwrap())
            .unwrap();
    let w1cfg = cfg["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "W1")
        .unwrap();
    assert_eq!(w1cfg["handoff"]["summary"], close_support::HANDOFF_SUMMARY);
}

/// W1 runs without a registration: the impostor's outside record (another folder) is not W1's.
/// The board shows no registration for W1, and reply and close-worker refuse.
#[test]
fn an_outside_record_from_another_folder_is_not_the_workers() {
    let env = Env::new().with_system_path();
    let elsewhere = env.path("elsewhere");
    let server = team(
        &env,
        false,
        "sleep 600",
        &impostor_line(&env, Impostor::NodeDotPi, &elsewhere),
    );
    assert_eq!(impostor_result(&elsewhere).0, 0);
    let w = w1(&env, &server);
    assert_eq!(w["registered"], Value::Null, "{w}");
    let (code, out) = reply(&env, &server, "hello");
    assert_eq!(code, 6, "{out}");
    assert!(
        !read(&env.path("typed-W2.txt")).contains("hello"),
        "nothing typed into W2's pane"
    );
    let sock = server.sock.display().to_string();
    let o = env.run(&layout_args(
        &env,
        &["close-worker"],
        &["--tmux-socket", &sock, "W1"],
    ));
    let why = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_ne!(o.status.code(), Some(0), "{why}");
    let left = server.tmux(&["list-panes", "-a", "-F", "#{session_name}"]);
    assert_eq!(left.lines().count(), 2, "no pane closed: {left} ({why})");
}
