//! `intercom-pane watch` end to end on a real tmux server: session files written turn by turn,
//! panes running a fake `pi`, the `--on-alert` program's lines and the memory file read back.
//! (The real-pi tier drives real pi workers the same way: tests/real_pi/real_pi_alerts.rs.)
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::alerts_support::{lines, stop, wait_lines, Fleet};
use crate::mux_support::wait_for;

#[test]
fn one_line_per_turn_and_a_clean_stop() {
    let mut f = Fleet::new(&["Builder"]);
    f.workers[0].user("start");
    let out = f.path("alerts.jsonl");
    let mut w = f.watch(&["--settle-secs", "0"], &out);
    let pid = w.id();
    f.passes(pid, 1);
    f.workers[0].ask("staging or production?");
    let l = wait_lines(&out, 1);
    assert_eq!(l[0]["seat"], "Builder");
    assert_eq!(l[0]["state"], "waiting");
    assert_eq!(l[0]["reason"], "input_needed");
    assert_eq!(l[0]["text"], "staging or production?\nDetails follow.");
    assert_eq!(l[0]["host"], "local");
    assert_eq!(l[0]["jump"]["argv"][1], "jump");
    // Still waiting, pass after pass: nothing more.
    f.passes(pid, 3);
    assert_eq!(lines(&out).len(), 1);
    // The status option counts it.
    assert_eq!(
        f.server
            .tmux(&["show-options", "-gv", "@intercom_pane_status"])
            .trim(),
        "⚑1"
    );
    // A second turn that asks again: a second line.
    f.workers[0].ask("and the region?");
    let l = wait_lines(&out, 2);
    assert!(l[1]["text"].as_str().unwrap().starts_with("and the region?"));
    f.passes(pid, 2);
    assert_eq!(lines(&out).len(), 2);
    let st = stop(&mut w);
    assert_eq!(st.code(), Some(0), "SIGTERM ends watch with 0");
    // The count it kept is cleared when it ends: nobody keeps it current any more.
    let v = wait_for(5_000, || {
        let v = f.server.tmux(&["show-options", "-gv", "@intercom_pane_status"]);
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
    let mut f = Fleet::new(&["Builder", "Docs"]);
    f.workers[0].user("start");
    let out = f.path("alerts.jsonl");
    let mut w = f.watch(&["--settle-secs", "0"], &out);
    let pid = w.id();
    f.passes(pid, 1);
    // A control-mode client on Builder's pane is a program, not a person: that alerts.
    let mut control = std::process::Command::new("tmux")
        .env_remove("TMUX")
        .args(["-S", &f.server.sock.display().to_string(), "-C", "attach", "-t"])
        .arg(format!("={}", f.workers[0].name))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_for(10_000, || {
        let c = f.server.tmux(&["list-clients", "-F", "#{client_control_mode}"]);
        (c.trim() == "1").then_some(())
    })
    .expect("a control client");
    f.workers[0].ask("first?");
    wait_lines(&out, 1);
    // A person's client shows Builder's pane: its question alerts nobody.
    let mut outer = f.attach(0);
    f.workers[0].ask("shall I?");
    wait_for(30_000, || (outcome(&f, 0).as_deref() == Some("visible")).then_some(()))
        .unwrap_or_else(|| panic!("not recorded as visible: {}", f.memory()));
    f.passes(pid, 2);
    assert_eq!(lines(&out).len(), 1, "{:?}", lines(&out));
    // The same turn does not alert later when the person looks away; a new one does.
    let docs = format!("={}", f.workers[1].name);
    let person = f
        .server
        .tmux(&["list-clients", "-F", "#{client_control_mode}|#{client_name}"])
        .lines()
        .find(|l| l.starts_with("0|"))
        .unwrap()[2..]
        .to_string();
    f.server.tmux(&["switch-client", "-c", &person, "-t", &docs]);
    f.passes(pid, 2);
    assert_eq!(lines(&out).len(), 1);
    f.workers[0].ask("and now?");
    let l = wait_lines(&out, 2);
    assert_eq!(l[1]["pane"]["paneId"], f.pane(0));
    assert_eq!(stop(&mut w).code(), Some(0));
    outer.kill();
    let _ = control.kill();
    let _ = control.wait();
}

#[test]
fn a_restarted_watcher_and_two_watchers_alert_once_per_turn() {
    let mut f = Fleet::new(&["Builder"]);
    f.workers[0].user("start");
    let out = f.path("alerts.jsonl");
    let mut a = f.watch(&["--settle-secs", "0"], &out);
    f.passes(a.id(), 1);
    f.workers[0].ask("one?");
    wait_lines(&out, 1);
    // Restarted mid-turn (the seat still waiting): the new process says nothing more.
    assert_eq!(stop(&mut a).code(), Some(0));
    let mut b = f.watch(&["--settle-secs", "0"], &out);
    f.passes(b.id(), 3);
    assert_eq!(lines(&out).len(), 1);
    // Two watchers at once: one line per transition between them.
    let mut c = f.watch(&["--settle-secs", "0"], &out);
    f.passes(c.id(), 1);
    f.workers[0].ask("two?");
    wait_lines(&out, 2);
    f.workers[0].user("work");
    f.workers[0].fail("provider said no");
    let l = wait_lines(&out, 3);
    f.passes(b.id(), 3);
    f.passes(c.id(), 3);
    let l2 = lines(&out);
    assert_eq!(l2.len(), 3, "{l2:?}");
    assert_eq!(l[2]["state"], "error");
    assert_eq!(l[2]["text"], "provider said no");
    // Each watcher recorded what it sent or found handled, one alert per turn in the memory.
    let alerted = f.events("alert", None);
    let sent: Vec<_> = alerted.iter().filter(|e| e["outcome"] == "alerted").collect();
    assert_eq!(sent.len(), 3, "{alerted:?}");
    for mut p in [b, c] {
        assert_eq!(stop(&mut p).code(), Some(0));
    }
}

#[test]
fn a_state_that_clears_within_the_settle_delay_alerts_nobody() {
    let mut f = Fleet::new(&["Builder"]);
    f.workers[0].user("start");
    let out = f.path("alerts.jsonl");
    let mut w = f.watch(&["--settle-secs", "8"], &out);
    let pid = w.id();
    f.passes(pid, 1);
    // An error that a new message clears a moment later (as a retry that works would).
    f.workers[0].fail("overloaded");
    f.passes(pid, 1);
    f.workers[0].user("try again");
    f.passes(pid, 4);
    assert!(lines(&out).is_empty(), "{:?}", lines(&out));
    // One that holds alerts, once, after the delay.
    f.workers[0].fail("overloaded for good");
    let l = wait_lines(&out, 1);
    assert_eq!(l[0]["text"], "overloaded for good");
    f.passes(pid, 2);
    assert_eq!(lines(&out).len(), 1);
    assert_eq!(stop(&mut w).code(), Some(0));
}
