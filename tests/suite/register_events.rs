//! pi's events through `register` (issue 25): only the seat's own pi can record them, an older
//! picture never replaces a newer one, and a forged, replayed or malformed event is refused or
//! ignored with the record byte-identical. The pi is the stand-in of `pi_support`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::pi_support;
use crate::scan_support;

use std::path::PathBuf;
use std::process::Command;

use pi_support::FakePi;
use scan_support::*;
use serde_json::Value;

const ID: &str = "01a2f000-0000-7000-8000-00000000e001";

fn dialog(title: &str) -> String {
    serde_json::json!({"dialog": {"kind": "confirm", "title": title, "since": now_iso()}})
        .to_string()
}

fn event(pi_pid: &str, root: &str, name: &str, seq: &str, state: &str) -> Vec<String> {
    [
        "--event",
        name,
        "--seq",
        seq,
        "--pi-pid",
        pi_pid,
        "--session-id",
        ID,
        "--cwd",
        root,
        "--pi-state",
        state,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn only_the_seats_own_pi_records_events_and_an_older_one_changes_nothing() {
    let env = Env::new().with_system_path();
    let root = env.path("root");
    write_roster(&root, &[(ID, "Worker")]);
    let root_s = root.display().to_string();
    let mut pi = FakePi::start(&env);
    let me = pi.pid().to_string();
    let o = pi.register(
        &env,
        &strs(&event(&me, &root_s, "session_start", "100", "{}")),
    );
    assert!(o.status.success(), "{o:?}");
    let path = PathBuf::from(String::from_utf8(o.stdout).unwrap().trim());
    let o = pi.register(
        &env,
        &strs(&event(
            &me,
            &root_s,
            "ui_prompt_start",
            "200",
            &dialog("Allow bash?"),
        )),
    );
    assert!(o.status.success(), "{o:?}");
    let rec: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(rec["pi"]["dialog"]["title"], "Allow bash?", "{rec}");
    assert_eq!(rec["pi"]["event"], "ui_prompt_start", "{rec}");
    assert_eq!(rec["pi"]["seq"], 200, "{rec}");
    assert_eq!(
        rec["runState"]["event"], "session_start",
        "a pi event leaves the run state as it was: {rec}"
    );
    let before = std::fs::read(&path).unwrap();
    let unchanged = |what: &str| {
        assert_eq!(
            std::fs::read(&path).unwrap(),
            before,
            "{what} changed the record"
        )
    };

    // Replayed: an older picture (the dialog closed, seq 150) is taken and not written.
    let o = pi.register(
        &env,
        &strs(&event(&me, &root_s, "ui_prompt_end", "150", "{}")),
    );
    assert!(o.status.success(), "{o:?}");
    unchanged("a replayed older event");

    // Forged by a process that is not pi's child: refused.
    let sys = env.system_config();
    let forged = Command::new(env!("CARGO_BIN_EXE_intercom-pane"))
        .arg("register")
        .args(["--config", &sys])
        .args(event(&me, &root_s, "ui_prompt_end", "999", "{}"))
        .env("HOME", env.path("home"))
        .output()
        .unwrap();
    assert_eq!(forged.status.code(), Some(2), "{forged:?}");
    assert!(
        String::from_utf8_lossy(&forged.stderr).contains("not an ancestor"),
        "{forged:?}"
    );
    unchanged("an event from outside pi");

    // Forged by a command pi's bash tool would run (a session of its own): refused.
    let mut args = vec![
        env!("CARGO_BIN_EXE_intercom-pane"),
        "register",
        "--config",
        &sys,
    ];
    let tail = event(&me, &root_s, "ui_prompt_end", "1000", "{}");
    args.extend(strs(&tail));
    let o = pi.run("setsid", &args);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("not started by that pi"),
        "{o:?}"
    );
    unchanged("an event from pi's tool");

    // Another pi claiming this seat's session (another pane's): refused.
    let mut other = FakePi::start(&env);
    let them = other.pid().to_string();
    let o = other.register(
        &env,
        &strs(&event(&them, &root_s, "ui_prompt_end", "5000", "{}")),
    );
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("registered by another live pi"),
        "{o:?}"
    );
    unchanged("another pi's event");

    // The seat's own pi, with a malformed or impossible picture: refused.
    let too_long = "x".repeat(9000);
    for (state, why) in [
        (
            r#"{"dialog":{"kind":"poke","since":"2026-01-01T00:00:00Z"}}"#.to_string(),
            "not the extension's JSON",
        ),
        (too_long, "longer than"),
        (
            r#"{"tool":{"name":"rm -rf /","since":"2026-01-01T00:00:00Z","running":1}}"#.into(),
            "tool.name",
        ),
        (
            r#"{"dialog":{"kind":"confirm","since":"2099-01-01T00:00:00Z"}}"#.into(),
            "after now",
        ),
    ] {
        let o = pi.register(
            &env,
            &strs(&event(&me, &root_s, "ui_prompt_end", "7000", &state)),
        );
        assert_eq!(o.status.code(), Some(2), "{o:?}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(why),
            "{why}: {o:?}"
        );
        unchanged(why);
    }
    // A pi event without its picture: refused.
    let mut bare = event(&me, &root_s, "ui_prompt_end", "7001", "{}");
    bare.truncate(bare.len() - 2);
    let o = pi.register(&env, &strs(&bare));
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    unchanged("an event without its picture");

    // The seat's own newer event is recorded.
    let o = pi.register(
        &env,
        &strs(&event(&me, &root_s, "ui_prompt_end", "300", "{}")),
    );
    assert!(o.status.success(), "{o:?}");
    let rec: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert!(rec["pi"]["dialog"].is_null(), "{rec}");
    assert_eq!(rec["pi"]["seq"], 300, "{rec}");
}
