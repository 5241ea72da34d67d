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
