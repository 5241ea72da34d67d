//! `intercom-pane reply` to a Herdr seat (no channel: Herdr's `agent.prompt`), against the
//! protocol-faithful fake Herdr, which like Herdr 0.8.2 takes a prompt only for a pane with a
//! detected agent: the whole text up to 2000 characters travels, nothing added; a longer text
//! or a hostile one is refused before `agent.prompt` is called, with the same codes as on tmux.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_herdr_fake;
use crate::scan_support;

use mux_herdr_fake::FakeHerdr;
use scan_support::*;
use serde_json::{json, Value};

fn herdr_seat(env: &Env) -> FakeHerdr {
    let ids = pi_root(env, &["idle"]);
    let me = std::process::id();
    let herdr = FakeHerdr::start(me);
    let ticks = intercom_pane::seam::proc::identity(me as i32)
        .unwrap()
        .start_ticks;
    let seat = env.path("data/seats/herdr/idle");
    std::fs::create_dir_all(&seat).unwrap();
    std::fs::write(
        seat.join("registration.json"),
        json!({"version": 1, "sessionId": ids[0].1, "pid": me, "startTicks": ticks,
            "startedAt": "2026-11-29T23:13:00.000Z",
            "mux": {"kind": "herdr", "socket": herdr.socket.display().to_string(), "paneId": "w1:p1"}})
        .to_string(),
    )
    .unwrap();
    herdr.with(|s| s.panes[0].foreground = vec![(me, "pi".into(), vec!["pi".into()])]);
    herdr
}

fn reply(env: &Env, text: &str) -> (i32, Value, String) {
    let o = env.run(&layout_args(env, &["reply"], &["--json", "W-idle", text]));
    (
        o.status.code().unwrap_or(-1),
        serde_json::from_slice(&o.stdout).unwrap_or(Value::Null),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn prompts(herdr: &FakeHerdr) -> usize {
    herdr.with(|s| {
        s.requests
            .iter()
            .filter(|r| r["method"] == "agent.prompt")
            .count()
    })
}

#[test]
fn the_whole_text_up_to_the_limit_travels_and_longer_or_hostile_texts_never_leave() {
    let env = Env::new();
    let herdr = herdr_seat(&env);

    let text: String = "é".repeat(1999);
    let (code, receipt, err) = reply(&env, &text);
    assert_eq!(code, 0, "{receipt} {err}");
    assert_eq!(receipt["transport"], "herdr");
    assert_eq!(receipt["outcome"], "delivered");
    assert_eq!(
        herdr.with(|s| s.prompts.clone()),
        vec![("w1:p1".to_string(), text.clone())]
    );

    let sent = prompts(&herdr);
    let (code, _, err) = reply(&env, &"x".repeat(2001));
    assert_eq!(code, 4, "{err}");
    assert!(err.contains("2001 characters"), "{err}");
    let (code, _, err) = reply(&env, "fine\u{1b}[201~\r/quit");
    assert_eq!(code, 9, "{err}");
    // agent.prompt types into pi's editor: a first `!` or `/` would be a command there.
    for text in ["!touch /tmp/never", "  /quit", "tab\there"] {
        let (code, _, err) = reply(&env, text);
        assert_eq!(code, 12, "{text:?}: {err}");
        assert!(err.contains("pi's editor"), "{err}");
    }
    assert_eq!(prompts(&herdr), sent, "agent.prompt was never called");

    // An agent at a dialog: Herdr refuses the prompt, nothing is typed, the refusal says so
    // (exit 10, not ready).
    herdr.with(|s| s.blocked.insert("w1:p1".into()));
    let (code, receipt, err) = reply(&env, "at a dialog");
    assert_eq!(code, 10, "{receipt} {err}");
    assert!(err.contains("dialog"), "{err}");
    herdr.with(|s| s.blocked.clear());

    // A draft in pi's editor (as pi 1.6.0 draws it, read through `pane.read`): refused, nothing
    // typed; an empty editor takes the text (seen empty again afterwards: the fake's screen
    // stays empty, as pi's does once it submitted).
    let rule = "\u{2500}".repeat(94);
    let screen = |inside: &str| {
        format!("hello\n{rule}\n{inside}\n{rule}\n/tmp\n0.0%/128k (auto)  fake-model\n")
    };
    herdr.with(|s| s.screens.insert("w1:p1".into(), screen("my draft")));
    let sent = prompts(&herdr);
    let (code, receipt, err) = reply(&env, "beside a draft");
    assert_eq!(code, 10, "{receipt} {err}");
    assert!(err.contains("draft"), "{err}");
    assert_eq!(prompts(&herdr), sent, "agent.prompt was never called");
    herdr.with(|s| s.screens.insert("w1:p1".into(), screen("")));
    let (code, receipt, err) = reply(&env, "with an empty editor");
    assert_eq!(code, 0, "{receipt} {err}");
    assert!(
        receipt["stdout"]
            .as_str()
            .unwrap()
            .contains("editor was empty before and took the text"),
        "{receipt}"
    );
}

/// Real-Herdr tier: a private headless `herdr server`; a pane runs `exec -a pi cat` on a raw,
/// no-echo tty (Herdr detects agent `pi`; no bracketed paste, so Herdr sends the text and CR,
/// captures 069–071). The reply arrives byte for byte; a hostile text never leaves.
#[test]
#[cfg_attr(not(real_herdr), ignore = "real-Herdr tier: no `herdr` on PATH")]
fn real_herdr_reply_arrives_byte_for_byte_and_hostile_text_never_leaves() {
    use std::time::{Duration, Instant};
    let h = mux_herdr_fake::real::RealHerdr::start();
    let env = Env::new();
    let ids = pi_root(&env, &["idle"]);
    let pane = h.background_pane("/tmp", "seat");
    h.shell_pid(&pane);
    let got = env.path("typed.bin");
    let line = format!(
        "stty raw -echo; exec -a pi cat > {}",
        intercom_pane::seam::text::shell_quote(&got.display().to_string())
    );
    h.cli(&["pane", "run", &pane, &line]);
    let end = Instant::now() + Duration::from_secs(20);
    let pid = loop {
        let info = h
            .client()
            .process_info(&pane, Instant::now() + Duration::from_secs(3))
            .unwrap()
            .unwrap();
        let pi = info.foreground().cloned().filter(|f| {
            f.argv
                .as_deref()
                .and_then(|a| a.first())
                .map(String::as_str)
                == Some("pi")
        });
        if let Some(f) = pi.filter(|_| h.cli(&["agent", "get", &pane]).status.success()) {
            break f.pid;
        }
        assert!(
            Instant::now() < end,
            "Herdr never detected the pi: {info:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    let ticks = intercom_pane::seam::proc::identity(pid as i32)
        .unwrap()
        .start_ticks;
    let seat = env.path("data/seats/herdr/idle");
    std::fs::create_dir_all(&seat).unwrap();
    std::fs::write(
        seat.join("registration.json"),
        json!({"version": 1, "sessionId": ids[0].1, "pid": pid, "startTicks": ticks,
            "startedAt": "2026-11-29T23:13:00.000Z",
            "mux": {"kind": "herdr", "socket": h.socket.display().to_string(), "paneId": pane}})
        .to_string(),
    )
    .unwrap();

    let text = "Use staging; 'quotes' \"too\" é\nsecond line";
    let (code, receipt, err) = reply(&env, text);
    assert_eq!(code, 0, "{receipt} {err}");
    assert_eq!(receipt["transport"], "herdr");
    assert_eq!(receipt["outcome"], "delivered");
    let want = format!("{text}\r").into_bytes();
    let end = Instant::now() + Duration::from_secs(10);
    while std::fs::read(&got).unwrap_or_default() != want {
        assert!(
            Instant::now() < end,
            "{:?}",
            String::from_utf8_lossy(&std::fs::read(&got).unwrap_or_default())
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let (code, _, err) = reply(&env, "fine\u{1b}[201~\r/quit");
    assert_eq!(code, 9, "{err}");
    // What pi's editor would run as a command never reaches the pane either.
    let (code, _, err) = reply(&env, "  !touch /tmp/never-typed");
    assert_eq!(code, 12, "{err}");
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(std::fs::read(&got).unwrap(), want, "nothing more arrived");
}
