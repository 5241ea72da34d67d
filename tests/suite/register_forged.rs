//! `register` trusts only pi itself: a renamed bash, a copy of bash named `pi`, another pane's
//! pi claiming this seat's session, and a command pi's bash tool would start (a session of its
//! own) are all refused, and the seat's live registration stays byte-identical. Real tmux on a
//! private socket; the pi is the stand-in of `pi_support`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_support;
use crate::pi_support;
use crate::scan_support;

use std::path::{Path, PathBuf};

use mux_support::{program_named, wait_for, TmuxServer};
use pi_support::{pi_pane_command, FakePi};
use scan_support::*;

const ID: &str = "01a2f000-0000-7000-8000-00000000af01";

/// A `register` of `id` by the process `$$`, its exit code written to `out`, its stderr to
/// `out.err`.
fn forged_line(env: &Env, id: &str, prefix: &str, out: &Path) -> String {
    format!(
        "{prefix}{} register --config {} --event agent_start --seq 99 --pi-pid $$ --session-id {id} --cwd {} 2>{o}.err >/dev/null; echo $? >{o}",
        env!("CARGO_BIN_EXE_intercom-pane"),
        env.system_config(),
        env.path("root").display(),
        o = out.display()
    )
}

/// Wait for a forger's exit code; with its stderr.
fn outcome(out: &Path) -> (i32, String) {
    let code = wait_for(15_000, || {
        let t = std::fs::read_to_string(out).ok()?;
        t.ends_with('\n').then(|| t.trim().parse::<i32>().unwrap())
    })
    .unwrap_or_else(|| panic!("{} never ran", out.display()));
    let mut err = PathBuf::from(out).into_os_string();
    err.push(".err");
    (code, std::fs::read_to_string(err).unwrap_or_default())
}

#[test]
fn forged_registrations_are_refused_and_the_live_record_is_unchanged() {
    let env = Env::new().with_system_path();
    let root = env.path("root");
    write_roster(&root, &[(ID, "Worker")]);
    std::fs::create_dir_all(env.path("sessions")).unwrap();
    // The seat's own pi registers itself in its pane.
    let own = env.path("own.rc");
    let server = TmuxServer::start(
        "seat",
        &root,
        &[
            "bash",
            "-c",
            &pi_pane_command(&env.path("pi-a"), &forged_line(&env, ID, "", &own)),
        ],
    );
    assert_eq!(outcome(&own).0, 0, "the seat's own pi registers");
    let seats = root.join(".pi-intercom/seats");
    let record = std::fs::read_dir(&seats)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "json"))
        .unwrap();
    let before = std::fs::read(&record).unwrap();

    let bin = env.path("forgers");
    std::fs::create_dir_all(&bin).unwrap();
    let bash_named_pi = program_named("/bin/bash", &bin.join("pi"));
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "renamed-bash",
            format!(
                "exec -a pi bash -c '{}; sleep 600'",
                forged_line(&env, ID, "", &env.path("renamed-bash.rc"))
            ),
            "not a JavaScript runtime",
        ),
        (
            "bash-named-pi",
            format!(
                "exec -a pi {} -c '{}; sleep 600'",
                bash_named_pi.display(),
                forged_line(&env, ID, "", &env.path("bash-named-pi.rc"))
            ),
            "not a JavaScript runtime",
        ),
        (
            "other-pi",
            pi_pane_command(
                &env.path("pi-b"),
                &forged_line(&env, ID, "", &env.path("other-pi.rc")),
            ),
            "registered by another live pi",
        ),
        (
            // What pi's bash tool runs is started in a session of its own.
            "tool-child",
            pi_pane_command(
                &env.path("pi-c"),
                &forged_line(
                    &env,
                    "01a2f000-0000-7000-8000-00000000af02",
                    "setsid ",
                    &env.path("tool-child.rc"),
                ),
            ),
            "not started by that pi",
        ),
    ];
    for (name, cmd, why) in &cases {
        server.new_session(name, &root, &["bash", "-c", cmd]);
        let (code, err) = outcome(&env.path(&format!("{name}.rc")));
        assert_eq!(code, 2, "{name}: {err}");
        assert!(err.contains(why), "{name}: {err}");
        assert_eq!(
            std::fs::read(&record).unwrap(),
            before,
            "{name} changed the live record"
        );
    }
    let left: Vec<_> = std::fs::read_dir(&seats)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    assert_eq!(left.len(), 1, "no other record: {left:?}");
    assert!(
        !env.path("data/seats").exists(),
        "nothing written under the data root"
    );
    // The board still shows the seat in its own pane.
    let idx = scan_json(&env, &["--tmux-socket", &server.sock.display().to_string()]);
    let w = record_of(&idx);
    assert_eq!(w["registered"]["alive"], true, "{w}");
    assert_eq!(w["registered"]["tmuxSession"], "seat", "{w}");
}

fn record_of(idx: &serde_json::Value) -> serde_json::Value {
    record(idx, "Worker").clone()
}

#[test]
fn ids_and_files_cannot_lead_a_write_elsewhere() {
    let env = Env::new();
    let mut pi = FakePi::start(&env);
    let me = pi.pid().to_string();
    let o = pi.register(
        &env,
        &[
            "--event",
            "session_start",
            "--pi-pid",
            &me,
            "--session-id",
            "../../../../escaped",
            "--cwd",
            "/",
        ],
    );
    assert!(o.status.success(), "{o:?}");
    let path = PathBuf::from(String::from_utf8(o.stdout).unwrap().trim());
    assert_eq!(
        path.parent().unwrap().parent().unwrap(),
        env.path("data/seats/pi")
    );
    assert!(!env.path("escaped").exists() && !env.dir.path().join("../escaped").exists());

    // A session file named for another session, or whose header names another: refused.
    let sessions = env.path("s");
    std::fs::create_dir_all(&sessions).unwrap();
    let other = sessions.join("2026-11-30T00-00-00-000Z_mine.jsonl");
    std::fs::write(
        &other,
        "{\"type\":\"session\",\"version\":3,\"id\":\"theirs\",\"timestamp\":\"2026-11-30T00:00:00.000Z\",\"cwd\":\"/\"}\n",
    )
    .unwrap();
    for (file, why) in [
        (sessions.join("x_theirs.jsonl"), "not named for"),
        (other.clone(), "header names another session"),
    ] {
        let f = file.display().to_string();
        let o = pi.register(
            &env,
            &[
                "--event",
                "session_start",
                "--pi-pid",
                &me,
                "--session-id",
                "mine",
                "--session-file",
                &f,
                "--cwd",
                "/",
            ],
        );
        assert_eq!(o.status.code(), Some(2), "{o:?}");
        assert!(String::from_utf8_lossy(&o.stderr).contains(why), "{o:?}");
    }
}
