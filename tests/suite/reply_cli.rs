//! `intercom-pane reply`: refusals before anything is sent, and real delivery into a registered
//! seat's tmux pane (bracketed paste, then Enter) on a private server.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_support;
use crate::pi_support;
use crate::scan_support;

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
    seat_with(env, "")
}

/// As `seat`, with `extra` flags for its `register` (e.g. `--channel PATH`).
fn seat_with(env: &Env, extra: &str) -> TmuxServer {
    let sys = env.system_config();
    let bin = env!("CARGO_BIN_EXE_intercom-pane");
    let root = env.path("root");
    let out = env.path("typed.txt");
    let script = format!(
        "{bin} register --config {sys} --event session_start --seq 1 --pi-pid $$ --session-id {ID} --cwd {} {extra} >/dev/null; cat > {}; true",
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
    let nul = env.path("nul.txt");
    std::fs::write(&nul, b"hello\0world").unwrap();
    let nul = nul.display().to_string();
    let cases: [(&[&str], i32, &str); 12] = [
        (&["Worker", "   "], 3, "blank"),
        (&["Worker", "\u{200b}\u{200b}\u{feff}"], 3, "blank"),
        (&["Worker", "-f", &nul], 9, "control character (NUL)"),
        (
            &["Worker", "ok\u{1b}[201~/quit"],
            9,
            "control character (ESC) at character 3",
        ),
        (&["Worker", &"x".repeat(2001)], 4, "2001 characters"),
        (&["Nobody", "hi"], 5, "no seat named \"Nobody\"; the board knows: "),
        (&["Idle", "hi"], 6, "no pi has registered this seat: start its pi with the intercom-pane extension installed"),
        (&["Coordinator", "hi"], 6, "no pi has registered this seat"),
        (&["Worker"], 2, "give the text"),
        // This seat has no channel: what pi's editor would run or change is refused.
        (
            &["Worker", "!touch /tmp/never"],
            12,
            "starts with `!`, which pi's editor runs as a shell command",
        ),
        (&["Worker", " \n/quit"], 12, "takes as a command"),
        (&["Worker", "a\tb"], 12, "TAB at character 2"),
    ];
    for (args, code, msg) in cases {
        let o = reply(&env, &sock, args);
        assert_eq!(o.status.code(), Some(code), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(msg), "{args:?}: {err}");
        assert!(o.stdout.is_empty());
    }
    // An unknown name lists the names reply takes.
    let err = String::from_utf8_lossy(&reply(&env, &sock, &["Nobody", "hi"]).stderr).into_owned();
    for name in ["Coordinator", "Worker", "Idle"] {
        assert!(err.contains(name), "{err}");
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    let typed = std::fs::read_to_string(env.path("typed.txt")).unwrap_or_default();
    assert_eq!(typed, "", "nothing reached the pane");
}

/// A pi that runs in the worker's pane but never registered (no extension loaded): the refusal
/// says what to do, install the extension and `/reload` in that pi.
#[test]
fn a_pi_without_the_extension_is_told_how_to_get_it() {
    let env = Env::new().with_system_path();
    roster(&env);
    let bin = env.path("fake");
    std::fs::create_dir_all(&bin).unwrap();
    let pi = mux_support::fake_pi(&bin);
    let server = TmuxServer::start("Idle", &env.path("root"), &[pi.to_str().unwrap(), "600"]);
    wait_for(10_000, || {
        let l = server.tmux(&["list-panes", "-a", "-F", "#{pane_current_command}"]);
        (l.trim() == "pi").then_some(())
    })
    .expect("the pane runs pi");
    let o = reply(&env, &server.sock, &["Idle", "hi"]);
    assert_eq!(o.status.code(), Some(6), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("cannot reply to root/Idle: its pi runs without the intercom-pane extension: install it (pi install <checkout>/linux/pi-extension), then type /reload in that pi"),
        "{err}"
    );
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
        "--json",
    ]);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(0), "{err}");
    let receipt: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(receipt["delivered"], true);
    assert_eq!(receipt["outcome"], "delivered");
    assert_eq!(receipt["transport"], "typed");
    assert_eq!(receipt["exitCode"], 0);
    assert_eq!(receipt["agent"], "root/Worker");
    assert_eq!(receipt["session"], "seat");
    assert_eq!(receipt["socket"], sock.display().to_string());
    assert!(receipt["target"].as_str().unwrap().starts_with('%'));
    let typed = wait_for(5_000, || {
        let t = std::fs::read_to_string(env.path("typed.txt")).ok()?;
        t.ends_with('\n').then_some(t)
    })
    .expect("the text reached the pane");
    // Exactly the text: nothing added.
    assert_eq!(typed, format!("{text}\n"));
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

/// The transport is chosen before sending: an advertised channel that is not there means typed;
/// one that is there but held by another process than the seat's pi is refused (exit 6) — never
/// typed instead, so a reply can never arrive twice.
#[test]
fn the_transport_is_chosen_before_sending_and_never_fallen_back_to() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new().with_system_path();
    roster(&env);
    let chan_dir = env.path("chan");
    std::fs::create_dir_all(&chan_dir).unwrap();
    std::fs::set_permissions(&chan_dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let chan = chan_dir.join("reply.sock");
    let server = seat_with(&env, &format!("--channel {}", chan.display()));
    let sock = server.sock.clone();
    registered(&env);

    // Advertised, but no socket: typed.
    let o = reply(&env, &sock, &["--json", "Worker", "first"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let receipt: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(receipt["transport"], "typed");
    wait_for(5_000, || {
        let t = std::fs::read_to_string(env.path("typed.txt")).ok()?;
        t.contains("first").then_some(())
    })
    .expect("typed");

    // There, but this test process holds it, not the seat's pi: refused, nothing typed.
    let _listener = std::os::unix::net::UnixListener::bind(&chan).unwrap();
    let before = std::fs::read_to_string(env.path("typed.txt")).unwrap();
    let o = reply(&env, &sock, &["Worker", "second"]);
    assert_eq!(o.status.code(), Some(6), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("not the registered pi"), "{err}");
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(
        std::fs::read_to_string(env.path("typed.txt")).unwrap(),
        before
    );
}

/// `reply -` and `handoff --summary -` share one reader: standard input over 64 KiB is refused
/// by both (exit 2) before anything is scanned, sent or written.
#[test]
fn standard_input_over_64_kib_is_refused_by_reply_and_handoff_alike() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let env = Env::new();
    roster(&env);
    let root = env.path("root");
    let cfg = root.join(".pi-intercom/config.json");
    let before = std::fs::read(&cfg).unwrap();
    let root_s = root.display().to_string();
    let runs: [&[&str]; 2] = [
        &["reply", "--root", &root_s, "Worker", "-"],
        &[
            "handoff",
            "--root",
            &root_s,
            "--job",
            "j1",
            "--summary",
            "-",
        ],
    ];
    for args in runs {
        let mut child = Command::new(env!("CARGO_BIN_EXE_intercom-pane"))
            .args(args)
            .current_dir(&root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        // The reader stops one byte past the cap and exits: a closed pipe here is expected.
        let _ = stdin.write_all(&vec![b'a'; 70 * 1024]);
        drop(stdin);
        let o = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("standard input is over 65536 bytes"),
            "{args:?}: {err}"
        );
        assert!(o.stdout.is_empty(), "{args:?}");
    }
    assert_eq!(std::fs::read(&cfg).unwrap(), before, "config untouched");
}
