//! Only the caller's own files and processes are trusted (issue 20 item 3). Another user is
//! simulated as root does it: files chowned or chmodded to a spare uid (a system user created
//! once, `ipspare`), processes run as that uid (`setpriv`). Registrations, the state folders,
//! an ancestor roster and the log of another uid, or writable by others, are refused with a
//! message naming why; a tmux server whose socket is another uid's and a registered pi of
//! another uid are never typed into; `doctor` flags a group-writable `.pi-intercom/`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_support;
use crate::pi_support;
use crate::scan_support;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

use mux_support::{wait_for, TmuxServer};
use scan_support::*;
use serde_json::{json, Value};

const ID: &str = "01a2f000-0000-7000-8000-0000000075e1";
const SPARE: &str = "ipspare";

/// The spare user's uid (created once; the suite runs as root, as CI does).
fn spare() -> u32 {
    static UID: OnceLock<u32> = OnceLock::new();
    *UID.get_or_init(|| {
        assert!(
            nix::unistd::geteuid().is_root(),
            "the other-user tests run as root (they chown files to a spare uid)"
        );
        let id = || {
            Command::new("id")
                .args(["-u", SPARE])
                .output()
                .ok()
                .filter(|o| o.status.success())
                .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        };
        if let Some(u) = id() {
            return u;
        }
        let _ = Command::new("useradd")
            .args(["-r", "-M", "-s", "/usr/sbin/nologin", SPARE])
            .status();
        id().expect("a spare user for the other-uid tests")
    })
}

fn chown(p: &Path, uid: u32) {
    nix::unistd::chown(p, Some(nix::unistd::Uid::from_raw(uid)), None).unwrap();
}

fn chmod(p: &Path, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// A registration of `ID` in the roster's seats folder (what `register` writes), naming `pid`.
fn plant_record(root: &Path, pid: i32) -> std::path::PathBuf {
    let seats = root.join(".pi-intercom/seats");
    std::fs::create_dir_all(&seats).unwrap();
    chmod(&seats, 0o700);
    let st = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let ticks: u64 = st
        .rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .nth(19)
        .unwrap()
        .parse()
        .unwrap();
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap();
    let p = seats.join(format!("{}.json", intercom_pane::seam::paths::short_id(ID)));
    std::fs::write(
        &p,
        json!({"version": 1, "seat": "x", "harness": "pi", "sessionId": ID, "pid": pid,
            "startTicks": ticks, "bootId": boot.trim(), "cwd": root.display().to_string(),
            "startedAt": "2026-11-29T10:00:00.000Z",
            "runState": {"state": "idle", "seq": 1, "at": "2026-11-29T10:00:00.000Z"}})
        .to_string(),
    )
    .unwrap();
    chmod(&p, 0o600);
    p
}

#[test]
fn registrations_and_state_folders_of_another_user_are_refused() {
    let env = Env::new();
    let root = env.path("root");
    write_roster(&root, &[(ID, "W")]);
    let me = std::process::id() as i32;
    let rec = plant_record(&root, me);
    let errors = |idx: &Value| idx["registrationErrors"].to_string();
    // Ours: read.
    let idx = scan_json(&env, &[]);
    assert!(record(&idx, "W")["registered"].is_object(), "{idx}");
    // Another uid's record: refused, and the seat has no registration.
    chown(&rec, spare());
    let idx = scan_json(&env, &[]);
    assert!(errors(&idx).contains("registration_not_owned"), "{idx}");
    assert_eq!(record(&idx, "W")["registered"], Value::Null);
    // Ours but writable by others: refused.
    chown(&rec, 0);
    chmod(&rec, 0o666);
    let idx = scan_json(&env, &[]);
    assert!(
        errors(&idx).contains("registration_writable_by_others"),
        "{idx}"
    );
    chmod(&rec, 0o600);
    // The seats folder itself of another uid: nothing in it is read, and `register` refuses
    // to write there, saying why.
    let seats = root.join(".pi-intercom/seats");
    chown(&seats, spare());
    let idx = scan_json(&env, &[]);
    assert!(
        errors(&idx).contains("seats: registration_not_owned"),
        "{idx}"
    );
    let mut pi = pi_support::FakePi::start(&env);
    let pid = pi.pid().to_string();
    let root_s = root.display().to_string();
    let o = pi.register(
        &env,
        &[
            "--event",
            "session_start",
            "--pi-pid",
            &pid,
            "--session-id",
            ID,
            "--cwd",
            &root_s,
        ],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("not by you"), "{err}");
    // A jobs folder of another uid: the store (every close job and resume fence goes through
    // it) refuses to use it, saying why.
    chown(&seats, 0);
    let jobs = root.join(".pi-intercom/jobs");
    std::fs::create_dir_all(&jobs).unwrap();
    chown(&jobs, spare());
    let e = intercom_pane::seam::store::ensure_dir(&root, &jobs).unwrap_err();
    assert_eq!(e.code.as_str(), "not_owned", "{e}");
    assert!(e.to_string().contains("not by you"), "{e}");
    chown(&jobs, 0);
    chmod(&jobs, 0o777);
    let e = intercom_pane::seam::store::ensure_dir(&root, &jobs).unwrap_err();
    assert_eq!(e.code.as_str(), "writable_by_others", "{e}");
}

#[test]
fn an_ancestor_roster_of_another_user_is_refused() {
    let env = Env::new();
    let root = env.path("root");
    write_roster(&root, &[(ID, "W")]);
    let sub = root.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    let cfg = root.join(".pi-intercom/config.json");
    let scan_from_sub = || {
        let o = Command::new(env!("CARGO_BIN_EXE_intercom-pane"))
            .args(["scan", "--json", "--config", &env.system_config()])
            .current_dir(&sub)
            .env_clear()
            .env("HOME", env.path("home"))
            .env("PATH", &env.path_env)
            .env("TMUX_TMPDIR", env.path("tmux-tmp"))
            .output()
            .unwrap();
        stdout_json(&o)["roster"].clone()
    };
    assert_eq!(scan_from_sub()["available"], true);
    chown(&cfg, spare());
    let r = scan_from_sub();
    assert_eq!(r["code"], "config_not_owned", "{r}");
    assert!(r["reason"].as_str().unwrap().contains("not by you"), "{r}");
    // Named explicitly with --root, it is the person's choice.
    let idx = scan_json(&env, &[]);
    assert_eq!(idx["roster"]["available"], true, "{idx}");
    chown(&cfg, 0);
    chmod(&cfg, 0o664);
    let r = scan_from_sub();
    assert_eq!(r["code"], "config_writable_by_others", "{r}");
}

#[test]
fn a_log_of_another_user_is_never_appended_and_doctor_says_so() {
    let env = Env::new();
    let root = env.path("root");
    write_roster(&root, &[(ID, "W")]);
    let log = env.path("log.jsonl");
    std::fs::write(&log, "theirs\n").unwrap();
    chown(&log, spare());
    let run = |args: &[String]| {
        Command::new(env!("CARGO_BIN_EXE_intercom-pane"))
            .args(args)
            .current_dir(env.dir.path())
            .env_clear()
            .env("HOME", env.path("home"))
            .env("PATH", &env.path_env)
            .env("TMUX_TMPDIR", env.path("tmux-tmp"))
            .env("INTERCOM_PANE_LOG", &log)
            .output()
            .unwrap()
    };
    let o = run(&scan_args(&env, "--json", &[]));
    assert!(o.status.success());
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "theirs\n");
    // Ours: appended.
    chown(&log, 0);
    chmod(&log, 0o600);
    run(&scan_args(&env, "--json", &[]));
    assert!(std::fs::read_to_string(&log).unwrap().contains("scan_pass"));
    // doctor flags another user's log and a group-writable `.pi-intercom/`.
    chown(&log, spare());
    chmod(&root.join(".pi-intercom"), 0o775);
    let o = run(&layout_args(&env, &["doctor", "--json"], &[]));
    assert_eq!(o.status.code(), Some(1));
    let report = String::from_utf8_lossy(&o.stdout).into_owned();
    let checks: Value = serde_json::from_str(&report).unwrap();
    let status = |name: &str| {
        checks["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("no {name} check: {report}"))["status"]
            .clone()
    };
    assert_eq!(status(".pi-intercom"), "fail", "{report}");
    assert_eq!(status("log"), "fail", "{report}");
}

/// A registered seat in a real tmux pane, which copies what is typed into it to `typed.txt`.
fn seat(env: &Env) -> TmuxServer {
    let root = env.path("root");
    write_roster(&root, &[(ID, "W")]);
    let script = format!(
        "{} register --config {} --event session_start --seq 1 --pi-pid $$ --session-id {ID} --cwd {} >/dev/null; cat > {}; true",
        env!("CARGO_BIN_EXE_intercom-pane"),
        env.system_config(),
        root.display(),
        env.path("typed.txt").display()
    );
    let argv = pi_support::pi_pane_argv(&env.path("pi-bin"), &script);
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let server = TmuxServer::start("seat", &root, &argv);
    wait_registered(&root.join(".pi-intercom/seats"));
    server
}

fn reply(env: &Env, server: &TmuxServer) -> (i32, String) {
    let sock = server.sock.display().to_string();
    let o = env.run(&layout_args(
        env,
        &["reply"],
        &[
            "--tmux-socket",
            &sock,
            "W",
            "the deploy password is hunter2",
        ],
    ));
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn a_server_or_pi_of_another_user_is_never_typed_into() {
    let env = Env::new().with_system_path();
    let server = seat(&env);
    let typed = env.path("typed.txt");
    // The server's socket belongs to another uid: refused before anything is typed.
    chown(&server.sock, spare());
    let (code, err) = reply(&env, &server);
    assert_eq!(code, 6, "{err}");
    assert!(err.contains("belongs to uid"), "{err}");
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(!std::fs::read_to_string(&typed)
        .unwrap_or_default()
        .contains("hunter2"));
    chown(&server.sock, 0);
    let (code, err) = reply(&env, &server);
    assert_eq!(code, 0, "{err}");
    wait_for(10_000, || {
        std::fs::read_to_string(&typed)
            .unwrap_or_default()
            .contains("hunter2")
            .then_some(())
    })
    .expect("typed once the server is ours");

    // A registered process of another uid: its registration is not live, nothing is typed.
    let mut theirs = Command::new("setpriv")
        .args([
            &format!("--reuid={}", spare()),
            &format!("--regid={}", spare()),
            "--clear-groups",
            "sleep",
            "60",
        ])
        .spawn()
        .unwrap();
    // setpriv changes its uid before it runs sleep: until then the process is still ours.
    let theirs_uid = || intercom_pane::seam::proc::uids(theirs.id() as i32);
    wait_for(10_000, || {
        (theirs_uid() == Some((spare(), spare()))).then_some(())
    })
    .unwrap_or_else(|| panic!("the other user's process runs as {:?}", theirs_uid()));
    let env2 = Env::new();
    let rec = plant_record(&env2.path("root"), theirs.id() as i32);
    write_roster(&env2.path("root"), &[(ID, "W")]);
    assert!(rec.exists());
    let w = record(&scan_json(&env2, &[]), "W").clone();
    assert_eq!(w["registered"]["alive"], false, "{w}");
    let o = env2.run(&layout_args(&env2, &["reply"], &["W", "hi"]));
    assert_eq!(o.status.code(), Some(6));
    // The server check itself: a server process of another uid is refused even on our socket.
    use intercom_pane::seam::mux::{server_is_ours, ErrorCode};
    let theirs_pid = theirs.id() as i32;
    assert_eq!(
        server_is_ours(&server.sock, Some(theirs_pid))
            .unwrap_err()
            .code,
        ErrorCode::NotOurs
    );
    assert!(server_is_ours(&server.sock, Some(server.pid())).is_ok());
    let _ = theirs.kill();
    let _ = theirs.wait();
}
