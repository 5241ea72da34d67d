//! Alerts go out once per channel, whichever boards run (docs/behaviour.md §3b): a watcher's
//! `--on-alert` runs even when a sidebar (which has no program of its own) alerted first; two
//! watchers with the same program run it once; two different programs each run; and the
//! tmux status count stays while any board runs. Real tmux on a private socket, a real
//! sidebar in a pane of it, real `watch` processes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::alerts_support::{lines, stop, wait_lines, Fleet};
use crate::mux_support::wait_for;

/// The outcome and channels the memory recorded for worker `i`'s newest handled turn.
fn newest_turn(f: &Fleet, i: usize) -> Option<serde_json::Value> {
    let m = f.memory();
    m["seats"][&f.workers[i].id]["turns"]
        .as_array()?
        .last()
        .cloned()
}

/// How many `--on-alert` programs' channels a claim list names (`watch`'s output is one more).
fn programs(channels: &serde_json::Value) -> usize {
    channels
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c.as_str().unwrap().starts_with("on_alert:"))
        .count()
}

/// Wait until the sidebar has seen worker `i` (its memory knows the seat).
fn sidebar_knows(f: &Fleet, i: usize) {
    wait_for(30_000, || {
        f.memory()["seats"]
            .get(&f.workers[i].id)
            .is_some()
            .then_some(())
    })
    .unwrap_or_else(|| {
        panic!(
            "the sidebar never recorded its seat: {}\n{}",
            f.memory(),
            f.server.tmux(&["capture-pane", "-p", "-t", "=mon:"])
        )
    });
}

#[test]
fn a_watchers_program_runs_once_per_alert_while_a_sidebar_runs() {
    let mut f = Fleet::new(&["Builder"]);
    f.workers[0].user("start");
    f.sidebar(&["--settle-secs", "0", "--no-desktop"]);
    let sidebar = f.sidebar_pid();
    sidebar_knows(&f, 0);
    // The sidebar alerts first, alone: it has no program, so it sends on no channel.
    f.workers[0].ask("staging or production?");
    let turn = wait_for(30_000, || {
        newest_turn(&f, 0).filter(|t| t["outcome"] == "alerted")
    })
    .unwrap_or_else(|| panic!("the sidebar did not alert: {}", f.memory()));
    assert!(turn.get("channels").is_none(), "{turn}");
    // A watcher started now still runs its program for that alert, once.
    let out = f.path("alerts.jsonl");
    let mut w = f.watch(&["--settle-secs", "0"], &out);
    let l = wait_lines(&out, 1);
    assert_eq!(l[0]["seat"], "Builder");
    assert_eq!(l[0]["text"], "staging or production?\nDetails follow.");
    f.passes(w.id(), 3);
    assert_eq!(lines(&out).len(), 1, "{:?}", lines(&out));
    let sent = f.events("alert", Some(w.id()));
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0]["outcome"], "already_handled");
    assert_eq!(programs(&sent[0]["channels"]), 1, "{}", sent[0]);
    // Both running from before the next question: the program runs once for it too, whoever
    // decided first.
    f.workers[0].user("go");
    f.passes(w.id(), 1);
    f.workers[0].ask("and the region?");
    let l = wait_lines(&out, 2);
    assert!(l[1]["text"]
        .as_str()
        .unwrap()
        .starts_with("and the region?"));
    f.passes(w.id(), 3);
    assert_eq!(lines(&out).len(), 2, "{:?}", lines(&out));
    assert!(
        !f.events("alert", Some(sidebar)).is_empty(),
        "the sidebar ran its alerts"
    );
    assert_eq!(stop(&mut w).code(), Some(0));
    f.server.tmux(&["kill-session", "-t", "=mon"]);
}

#[test]
fn the_same_program_runs_once_and_different_programs_each_once() {
    let mut f = Fleet::new(&["Builder", "Docs"]);
    f.workers[0].user("start");
    f.workers[1].user("start");
    f.sidebar(&["--settle-secs", "0", "--no-desktop"]);
    sidebar_knows(&f, 0);
    let (one, two) = (f.path("one.jsonl"), f.path("two.jsonl"));
    // Two watchers with the same program (same argv: one channel), one with another.
    let mut ws = vec![
        f.watch(&["--settle-secs", "0"], &one),
        f.watch(&["--settle-secs", "0"], &one),
        f.watch(&["--settle-secs", "0"], &two),
    ];
    for w in &ws {
        f.passes(w.id(), 1);
    }
    f.workers[0].ask("first?");
    f.workers[1].fail("provider said no");
    for out in [&one, &two] {
        wait_lines(out, 2);
    }
    for w in &ws {
        f.passes(w.id(), 3);
    }
    for out in [&one, &two] {
        let l = lines(out);
        assert_eq!(l.len(), 2, "{}: {l:?}", out.display());
        let mut seats: Vec<&str> = l.iter().map(|v| v["seat"].as_str().unwrap()).collect();
        seats.sort();
        assert_eq!(seats, ["Builder", "Docs"]);
    }
    // Each alerted turn names the two programs' channels, once each.
    for i in 0..2 {
        let t = newest_turn(&f, i).unwrap();
        assert_eq!(t["outcome"], "alerted", "{t}");
        assert_eq!(programs(&t["channels"]), 2, "{t}");
    }
    for w in &mut ws {
        assert_eq!(stop(w).code(), Some(0));
    }
    f.server.tmux(&["kill-session", "-t", "=mon"]);
}

fn status(f: &Fleet) -> String {
    f.server
        .tmux(&["show-options", "-gv", "@intercom_pane_status"])
        .trim()
        .to_string()
}

#[test]
fn the_status_count_stays_while_any_board_runs() {
    let mut f = Fleet::new(&["Builder"]);
    f.workers[0].user("start");
    let out = f.path("alerts.jsonl");
    let mut a = f.watch(&["--settle-secs", "0"], &out);
    let mut b = f.watch(&["--settle-secs", "0"], &out);
    f.passes(a.id(), 1);
    f.passes(b.id(), 1);
    f.workers[0].ask("ready?");
    wait_lines(&out, 1);
    wait_for(10_000, || (status(&f) == "⚑1").then_some(()))
        .unwrap_or_else(|| panic!("status {:?}", status(&f)));
    // One of the two quits: the other still keeps the count, so it stays.
    assert_eq!(stop(&mut a).code(), Some(0));
    f.passes(b.id(), 2);
    assert_eq!(status(&f), "⚑1");
    // A sidebar joins, then the watcher quits: the sidebar keeps it.
    f.sidebar(&["--settle-secs", "0", "--no-desktop"]);
    let sidebar = f.sidebar_pid();
    wait_for(30_000, || {
        (!f.events("alert_status_set", Some(sidebar)).is_empty()
            || f.path("data/alerts/boards")
                .join(format!("{sidebar}.lock"))
                .exists())
        .then_some(())
    })
    .expect("the sidebar keeps the count");
    assert_eq!(stop(&mut b).code(), Some(0));
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert_eq!(status(&f), "⚑1");
    // The last board leaves: nobody keeps the count current, so it is cleared.
    f.server.tmux(&["send-keys", "-t", "=mon:", "q"]);
    wait_for(15_000, || status(&f).is_empty().then_some(()))
        .unwrap_or_else(|| panic!("status left set: {:?}", status(&f)));
}
