//! `intercom-pane watch` end to end on a real tmux server: session files written turn by turn,
//! panes running a fake `pi`, the `--on-alert` program's lines and the memory file read back.
//! (The real-pi tier drives real pi workers the same way: tests/real_pi/real_pi_alerts.rs.)
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::alerts_support::{lines, lines_of, stop, wait_lines, Fleet};
use crate::mux_support::wait_for;

#[test]
fn one_line_per_turn_and_a_clean_stop() {
    let mut f = Fleet::new(&["Builder", "Marker"]);
    f.workers[0].user("start");
    let out = f.path("alerts.jsonl");
    let mut w = f.watch(&["--settle-secs", "0"], &out);
    let pid = w.id();
    f.watching(pid);
    let asked = std::time::Instant::now();
    f.workers[0].ask("staging or production?");
    let l = wait_lines(&out, 1);
    // The board stream: a change alerts at once, not at a next timed pass (300 ms is the
    // bound on a quiet machine; a loaded one gets slack).
    assert!(
        asked.elapsed() < std::time::Duration::from_secs(3),
        "{:?}",
        asked.elapsed()
    );
    assert_eq!(l[0]["seat"], "Builder");
    assert_eq!(l[0]["state"], "waiting");
    assert_eq!(l[0]["reason"], "input_needed");
    assert_eq!(l[0]["text"], "staging or production?\nDetails follow.");
    assert_eq!(l[0]["host"], "local");
    assert_eq!(l[0]["jump"]["argv"][1], "jump");
    // The status option counts it.
    assert_eq!(
        f.server
            .tmux(&["show-options", "-gv", "@intercom_pane_status"])
            .trim(),
        "⚑1"
    );
    // Still waiting, pass after pass: nothing more.
    f.mark(1, "mark 1", &[pid]);
    assert_eq!(lines_of(&out, "Builder").len(), 1);
    // A second turn that asks again: a second line.
    f.workers[0].ask("and the region?");
    let l = wait_lines(&out, 3);
    assert!(l[2]["text"]
        .as_str()
        .unwrap()
        .starts_with("and the region?"));
    f.mark(1, "mark 2", &[pid]);
    assert_eq!(lines_of(&out, "Builder").len(), 2);
    let st = stop(&mut w);
    assert_eq!(st.code(), Some(0), "SIGTERM ends watch with 0");
    // The count it kept is cleared when it ends: nobody keeps it current any more.
    let v = wait_for(5_000, || {
        let v = f
            .server
            .tmux(&["show-options", "-gv", "@intercom_pane_status"]);
        v.trim().is_empty().then_some(v)
    });
    assert!(v.is_some(), "status option left set");
}

/// The outcome the memory recorded for worker `i`'s newest handled turn.
fn outcome(f: &Fleet, i: usize) -> Option<String> {
    let m = f.memory();
    let turns = m["seats"][&f.workers[i].id]["turns"].as_array()?.clone();
    turns.last()?["outcome"].as_str().map(str::to_string)
}

#[test]
fn quiet_while_the_person_looks_at_the_pane() {
    let mut f = Fleet::new(&["Builder", "Docs", "Marker"]);
    f.workers[0].user("start");
    let out = f.path("alerts.jsonl");
    let mut w = f.watch(&["--settle-secs", "0"], &out);
    let pid = w.id();
    f.watching(pid);
    // A control-mode client on Builder's pane is a program, not a person: that alerts.
    let mut control = std::process::Command::new("tmux")
        .env_remove("TMUX")
        .args([
            "-S",
            &f.server.sock.display().to_string(),
            "-C",
            "attach",
            "-t",
        ])
        .arg(format!("={}", f.workers[0].name))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_for(10_000, || {
        let c = f
            .server
            .tmux(&["list-clients", "-F", "#{client_control_mode}"]);
        (c.trim() == "1").then_some(())
    })
    .expect("a control client");
    f.workers[0].ask("first?");
    wait_lines(&out, 1);
    // A person's client shows Builder's pane: its question alerts nobody.
    let mut outer = f.attach(0);
    f.workers[0].ask("shall I?");
    wait_for(30_000, || {
        (outcome(&f, 0).as_deref() == Some("visible")).then_some(())
    })
    .unwrap_or_else(|| panic!("not recorded as visible: {}", f.memory()));
    f.mark(2, "mark 1", &[pid]);
    assert_eq!(lines_of(&out, "Builder").len(), 1, "{:?}", lines(&out));
    // The same turn does not alert later when the person looks away; a new one does.
    let docs = format!("={}", f.workers[1].name);
    let person = f
        .server
        .tmux(&[
            "list-clients",
            "-F",
            "#{client_control_mode}|#{client_name}",
        ])
        .lines()
        .find(|l| l.starts_with("0|"))
        .unwrap()[2..]
        .to_string();
    f.server
        .tmux(&["switch-client", "-c", &person, "-t", &docs]);
    f.mark(2, "mark 2", &[pid]);
    assert_eq!(lines_of(&out, "Builder").len(), 1);
    f.workers[0].ask("and now?");
    let l = wait_for(60_000, || {
        let l = lines_of(&out, "Builder");
        (l.len() >= 2).then_some(l)
    })
    .unwrap_or_else(|| panic!("no second line: {:?}", lines(&out)));
    assert_eq!(l[1]["pane"]["paneId"], f.pane(0));
    // The command the line names takes the person's client there.
    let argv: Vec<String> = l[1]["jump"]["argv"]
        .as_array()
        .unwrap()
        .iter()
        .skip(1)
        .map(|a| a.as_str().unwrap().to_string())
        .collect();
    let o = f.command(&argv).output().unwrap();
    assert!(
        o.status.success(),
        "{argv:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(f.server.client_pane(), f.pane(0));
    assert_eq!(stop(&mut w).code(), Some(0));
    outer.kill();
    let _ = control.kill();
    let _ = control.wait();
}

#[test]
fn a_restarted_watcher_and_two_watchers_alert_once_per_turn() {
    let mut f = Fleet::new(&["Builder", "Marker"]);
    f.workers[0].user("start");
    let out = f.path("alerts.jsonl");
    let mut a = f.watch(&["--settle-secs", "0"], &out);
    f.watching(a.id());
    f.workers[0].ask("one?");
    wait_lines(&out, 1);
    // Restarted mid-turn (the seat still waiting): the new process says nothing more.
    assert_eq!(stop(&mut a).code(), Some(0));
    let b = f.watch(&["--settle-secs", "0"], &out);
    f.watching(b.id());
    f.mark(1, "mark 1", &[b.id()]);
    assert_eq!(lines_of(&out, "Builder").len(), 1);
    // Two watchers at once: one line per transition between them.
    let c = f.watch(&["--settle-secs", "0"], &out);
    f.watching(c.id());
    f.workers[0].ask("two?");
    wait_lines(&out, 3);
    f.workers[0].user("work");
    f.workers[0].fail("provider said no");
    wait_lines(&out, 4);
    f.mark(1, "mark 2", &[b.id(), c.id()]);
    let l = lines_of(&out, "Builder");
    assert_eq!(l.len(), 3, "{:?}", lines(&out));
    assert_eq!(l[2]["state"], "error");
    assert_eq!(l[2]["text"], "provider said no");
    // Each watcher recorded what it sent or found handled, one alert per turn in the memory.
    let alerted = f.events("alert", None);
    let sent: Vec<_> = alerted
        .iter()
        .filter(|e| e["outcome"] == "alerted" && e["seat"] == "Builder")
        .collect();
    assert_eq!(sent.len(), 3, "{alerted:?}");
    for mut p in [b, c] {
        assert_eq!(stop(&mut p).code(), Some(0));
    }
}

#[test]
fn a_state_that_clears_within_the_settle_delay_alerts_nobody() {
    let mut f = Fleet::new(&["Builder", "Marker"]);
    f.workers[0].user("start");
    let out = f.path("alerts.jsonl");
    let mut w = f.watch(&["--settle-secs", "8"], &out);
    let pid = w.id();
    f.watching(pid);
    // An error that a new message clears a moment later (as a retry that works would): the
    // mark asked after it settles after it, so a settled error would have alerted by then.
    f.workers[0].fail("overloaded");
    wait_for(10_000, || (scan_state(&f, 0) == "error").then_some(()))
        .expect("the board never showed the error");
    f.workers[0].user("try again");
    f.mark(1, "mark 1", &[pid]);
    assert!(lines_of(&out, "Builder").is_empty(), "{:?}", lines(&out));
    // One that holds alerts, once, after the delay, and within 300 ms of it (a loaded
    // machine's slack on top).
    let failed = std::time::Instant::now();
    f.workers[0].fail("overloaded for good");
    let l = wait_for(60_000, || {
        let l = lines_of(&out, "Builder");
        (!l.is_empty()).then_some(l)
    })
    .unwrap_or_else(|| panic!("no alert: {:?}", lines(&out)));
    let took = failed.elapsed();
    assert!(took >= std::time::Duration::from_secs(8), "{took:?}");
    assert!(took < std::time::Duration::from_secs(11), "{took:?}");
    assert_eq!(l[0]["text"], "overloaded for good");
    f.mark(1, "mark 2", &[pid]);
    assert_eq!(lines_of(&out, "Builder").len(), 1);
    assert_eq!(stop(&mut w).code(), Some(0));
}

/// Worker `i`'s state, as `scan --json` says it.
fn scan_state(f: &Fleet, i: usize) -> String {
    let mut args = vec!["scan".to_string(), "--json".into()];
    args.extend(f.flags());
    let o = f.command(&args).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v["records"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["agent"] == f.workers[i].name.as_str())
        .map(|r| r["state"].as_str().unwrap_or_default().to_string())
        .unwrap_or_default()
}

/// The board's attention count, as `scan --json` says it (waiting or error, not marked seen).
fn board_attention(f: &Fleet) -> usize {
    let mut args = vec!["scan".to_string(), "--json".into()];
    args.extend(f.flags());
    let o = f.command(&args).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| (r["state"] == "waiting" || r["state"] == "error") && r["seen"] != true)
        .count()
}

/// The status option's count (`⚑2 ✗1` → 3).
/// The count the status option shows (0 while no watcher has set it yet: `-q`).
fn status_count(f: &Fleet) -> usize {
    f.server
        .tmux(&["show-options", "-gqv", "@intercom_pane_status"])
        .split_whitespace()
        .map(|p| p.trim_start_matches(['⚑', '✗']).parse::<usize>().unwrap())
        .sum()
}

#[test]
fn the_status_summary_follows_the_board_without_a_process_per_refresh() {
    let mut f = Fleet::logged(&["Builder", "Docs", "Release"]);
    // The status line shows the option and is redrawn every second for an attached client.
    f.server.tmux(&["set-option", "-g", "status-interval", "1"]);
    f.server.tmux(&[
        "set-option",
        "-g",
        "status-right",
        "#{@intercom_pane_status}",
    ]);
    let mut outer = f.attach(0);
    let out = f.path("alerts.jsonl");
    let mut w = f.watch(&["--settle-secs", "0", "--alert-when-visible"], &out);
    let pid = w.id();
    f.watching(pid);
    let children = || {
        let o = std::process::Command::new("ps")
            .args(["-o", "pid=", "--ppid", &f.server.pid().to_string()])
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout).lines().count()
    };
    let panes = children();
    for step in 0..3 {
        match step {
            0 => {
                f.workers[0].ask("a?");
                f.workers[1].ask("b?");
            }
            1 => {
                f.workers[2].fail("boom");
            }
            _ => {
                f.workers[0].user("answered");
            }
        }
        // Soon after the change the option says what the board says (how soon is the bench's
        // figure; 10 s leaves room for a loaded CI machine, where 3 s was once too little).
        let want = board_attention(&f);
        wait_for(10_000, || (status_count(&f) == want).then_some(()))
            .unwrap_or_else(|| panic!("step {step}: status {} != board {want}", status_count(&f)));
    }
    assert_eq!(status_count(&f), 2);
    let value = f
        .server
        .tmux(&["show-options", "-gv", "@intercom_pane_status"]);
    assert_eq!(value.trim(), "⚑1 ✗1");
    // Several redraws later: the server started no process for its status line (no format job,
    // no child beyond the panes), and the watcher set the option only when it changed.
    let sets = f.events("alert_status_set", Some(pid)).len();
    let until = std::time::Instant::now() + std::time::Duration::from_secs(4);
    while std::time::Instant::now() < until {
        assert_eq!(children(), panes);
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    assert!(
        f.server.jobs_run().is_empty(),
        "format jobs: {:?}",
        f.server.jobs_run()
    );
    assert_eq!(f.events("alert_status_set", Some(pid)).len(), sets);
    assert!(sets <= 5, "{sets} sets for 4 values");
    assert_eq!(stop(&mut w).code(), Some(0));
    outer.kill();
}

#[test]
fn an_on_alert_program_that_hangs_fails_or_floods_holds_nothing_up() {
    let mut f = Fleet::new(&["Builder"]);
    std::fs::create_dir_all(f.path("home/.config/intercom-pane")).unwrap();
    std::fs::write(
        f.path("home/.config/intercom-pane/alerts.json"),
        r#"{"onAlertTimeoutSecs": 3, "onAlertConcurrency": 2}"#,
    )
    .unwrap();
    // Each run records its line, then: the first hangs, the second fails, the third floods.
    let prog = f.path("bin/misbehave");
    let out = f.path("alerts.jsonl");
    std::fs::write(
        &prog,
        "#!/bin/sh\ncat >> \"$1\"\nn=$(wc -l < \"$1\")\ncase $n in 1) exec sleep 600;; \
         2) echo nope >&2; exit 3;; 3) exec yes;; esac\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&prog, std::fs::Permissions::from_mode(0o755)).unwrap();
    f.workers[0].user("start");
    let (p, o) = (prog.display().to_string(), out.display().to_string());
    let mut w = f.watch_with(&["--settle-secs", "0"], &[&p, &o]);
    let pid = w.id();
    f.watching(pid);
    // Each question alerts promptly all along, the first program hanging: a slow channel
    // never holds up the passes (a loaded machine's slack, not a speed check).
    for (i, q) in ["one?", "two?", "three?"].iter().enumerate() {
        let asked = std::time::Instant::now();
        f.workers[0].ask(q);
        wait_lines(&out, i + 1);
        assert!(
            asked.elapsed() < std::time::Duration::from_secs(5),
            "{q}: {:?}",
            asked.elapsed()
        );
    }
    let failed = wait_for(20_000, || {
        let e = f.events("alert_channel_failed", Some(pid));
        (e.len() >= 3).then_some(e)
    })
    .unwrap_or_else(|| panic!("{:?}", f.events("alert_channel_failed", None)));
    let details: Vec<&str> = failed.iter().filter_map(|e| e["detail"].as_str()).collect();
    assert!(
        details.iter().any(|d| d.contains("deadline")),
        "{details:?}"
    );
    assert!(details
        .iter()
        .any(|d| d.contains("exit Some(3)") && d.contains("nope")));
    assert!(details.iter().any(|d| d.contains("stdout")), "{details:?}");
    assert_eq!(stop(&mut w).code(), Some(0));
}

#[test]
fn hostile_names_and_texts_stay_data() {
    use crate::hostile_support::Markers;
    let m = Markers::new();
    let name = format!("W\"{}x#S", m.job_abs("name"));
    let mut f = Fleet::logged(&[&name]);
    m.arm(&f.server);
    let mut outer = f.attach(0);
    let docs = "=base";
    let person = f
        .server
        .tmux(&["list-clients", "-F", "#{client_name}"])
        .trim()
        .to_string();
    f.server.tmux(&["switch-client", "-c", &person, "-t", docs]);
    f.workers[0].user("start");
    let out = f.path("alerts.jsonl");
    let mut w = f.watch(&["--settle-secs", "0", "--display-message", "--bell"], &out);
    f.watching(w.id());
    let question = format!(
        "{} \u{1b}]0;title\u{7}\u{202e}\"quoted\" %d %H {} #[fg=red]",
        m.job("q"),
        m.job("q2")
    );
    f.workers[0].ask(&question);
    let l = wait_lines(&out, 1);
    assert_eq!(l[0]["seat"], name.as_str());
    let text = l[0]["text"].as_str().unwrap();
    assert!(
        text.starts_with(&format!("{} \"quoted\" %d %H", m.job("q"))),
        "{text}"
    );
    assert!(!text.contains('\u{1b}') && !text.contains('\u{202e}'));
    // The message on the person's client shows the texts as they are.
    let shown = wait_for(30_000, || {
        let s = outer.tmux(&["capture-pane", "-p", "-t", "=outer:"]);
        s.contains("is waiting for you").then_some(s)
    })
    .unwrap_or_else(|| {
        panic!(
            "no message on the client:\n{}\nfailures: {:?}",
            outer.tmux(&["capture-pane", "-p", "-t", "=outer:"]).trim(),
            f.events("alert_channel_failed", None)
        )
    });
    assert!(shown.contains("x#S is waiting for you: #(touch"), "{shown}");
    assert!(shown.contains("%d %H"), "{shown}");
    m.assert_none_ran(&f.server);
    assert_eq!(stop(&mut w).code(), Some(0));
    outer.kill();
}

const PLUGIN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/linux/tmux/intercom-pane.tmux");

#[test]
fn the_plugin_shows_the_summary_and_its_key_jumps_to_the_seat_that_alerted_last() {
    let mut f = Fleet::logged(&["Builder", "Docs"]);
    let s = &f.server;
    s.tmux(&["set-option", "-g", "status-right", "right#S"]);
    s.tmux(&[
        "set-option",
        "-g",
        "@intercom-pane-bin",
        env!("CARGO_BIN_EXE_intercom-pane"),
    ]);
    let sys = f.path("system.json").display().to_string();
    s.tmux(&["set-option", "-g", "@intercom-pane-config", &sys]);
    let state = f.path("state").display().to_string();
    s.tmux(&["set-environment", "-g", "XDG_STATE_HOME", &state]);
    for _ in 0..2 {
        s.tmux(&["run-shell", PLUGIN]);
    }
    // The summary in front of status-right, once however often the plugin loads.
    assert_eq!(
        s.tmux(&["show-options", "-gv", "status-right"]).trim(),
        "#{?#{@intercom_pane_status},#{@intercom_pane_status} ,}right#S"
    );
    assert_eq!(
        s.tmux(&["show-options", "-gv", "@intercom-pane-jump-key"])
            .trim(),
        "J"
    );
    assert!(s
        .tmux(&["list-keys", "-T", "prefix", "J"])
        .contains("jump-last.sh"));
    // The person's client shows `base`; Builder asks; the alert names the key.
    let mut outer = f.attach(0);
    let person = f
        .server
        .tmux(&["list-clients", "-F", "#{client_name}"])
        .trim()
        .to_string();
    f.server
        .tmux(&["switch-client", "-c", &person, "-t", "=base"]);
    f.workers[0].user("start");
    let out = f.path("alerts.jsonl");
    let mut w = f.watch(&["--settle-secs", "0"], &out);
    f.watching(w.id());
    f.workers[0].ask("ready?");
    let l = wait_lines(&out, 1);
    assert_eq!(l[0]["jump"]["keys"], "J");
    assert_eq!(
        f.server
            .tmux(&["display-message", "-p", "#{@intercom_pane_status}"])
            .trim(),
        "⚑1"
    );
    // prefix J in the person's client: it now shows Builder's pane.
    let builder = f.pane(0);
    assert_ne!(f.server.client_pane(), builder);
    outer.tmux(&["send-keys", "-t", "=outer:", "C-b", "J"]);
    wait_for(15_000, || (f.server.client_pane() == builder).then_some(()))
        .unwrap_or_else(|| panic!("the client shows {}", f.server.client_pane()));
    assert_eq!(stop(&mut w).code(), Some(0));
    outer.kill();
}

#[test]
fn under_herdr_the_focused_pane_is_where_the_person_looks() {
    use crate::mux_herdr_fake::FakeHerdr;
    use intercom_pane::seam::alerts::channels::visible;
    use intercom_pane::seam::alerts::memory::PaneRef;
    use intercom_pane::seam::mux::MuxKind;
    let fake = FakeHerdr::start(std::process::id());
    let pane = |id: &str| PaneRef {
        kind: MuxKind::Herdr,
        socket: Some(fake.socket.display().to_string()),
        pane_id: id.into(),
        pi: None,
    };
    let focused = fake.with(|s| s.focused.clone());
    assert_eq!(visible(&pane(&focused), None), Some(true));
    assert_eq!(visible(&pane("w1:p9"), None), Some(false));
    // A server that cannot be asked says nothing: the alert then goes out.
    let gone = PaneRef {
        socket: Some(fake.dir.path().join("none.sock").display().to_string()),
        ..pane(&focused)
    };
    assert_eq!(visible(&gone, None), None);
}

#[test]
fn bad_settings_stop_watch_before_it_starts() {
    use std::os::unix::fs::PermissionsExt;
    let f = Fleet::new(&["Builder"]);
    let dir = f.path("home/.config/intercom-pane");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("alerts.json");
    let run = |extra: &[&str]| {
        let mut args = vec!["watch".to_string()];
        args.extend(f.flags());
        args.extend(extra.iter().map(|s| s.to_string()));
        f.command(&args).output().unwrap()
    };
    for (text, says) in [
        (r#"{"settle": 2}"#, "unknown field `settle`"),
        (r#"{"settleSecs": 9999}"#, "settleSecs must be 0 to 600"),
        (r#"{"onAlert": []}"#, "onAlert needs a program"),
    ] {
        std::fs::write(&file, text).unwrap();
        let o = run(&[]);
        assert_eq!(o.status.code(), Some(2), "{text}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(says), "{text}: {err}");
    }
    // A settings file others can change names no program to run.
    std::fs::write(&file, r#"{"onAlert": ["/bin/true"]}"#).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).unwrap();
    let o = run(&[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("alert settings"));
    std::fs::remove_file(&file).unwrap();
    // A named file must exist; `--on-alert` needs its program.
    assert_eq!(
        run(&["--alert-config", "/nonexistent/a.json"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(run(&["--on-alert"]).status.code(), Some(2));
    // A tmux option of the plugin with a value it does not take.
    f.server
        .tmux(&["set-option", "-g", "@intercom-pane-alert-bell", "loud"]);
    let o = run(&[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("@intercom-pane-alert-bell"));
}
