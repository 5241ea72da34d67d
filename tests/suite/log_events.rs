//! `log NAME --json` shows this tool's own events for a worker among its transcript: a worker
//! spawned, closed (with its handoff) and resumed on a real tmux server on a private socket,
//! through the commands a person runs, as the pi stand-in of `tests/support/spawn_support`
//! (it saves its handoff from inside itself when close-worker asks). The events come back in
//! time order, each with who asked, and the close says where the handoff went.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_support::wait_for;
use crate::scan_support::layout_args;
use crate::spawn_support::{self, Team};

use serde_json::Value;

/// `(kind, event, by, sender)` of each entry, in order.
fn shape(log: &Value) -> Vec<(String, String, String, String)> {
    let s = |v: &Value| v.as_str().unwrap_or("").to_string();
    log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (s(&e["kind"]), s(&e["event"]), s(&e["by"]), s(&e["sender"])))
        .collect()
}

#[test]
fn spawn_close_and_resume_appear_in_the_workers_log_in_order_with_who_asked() {
    let t = Team::new();
    let pi = t.pi.display().to_string();
    let (code, out, err) = t.spawn(&["Docs", "--model", "fake/m", "--prompt", "Write the docs."]);
    assert_eq!(code, 0, "{out} {err}");
    let sid = out["sessionId"].as_str().unwrap().to_string();

    let (code, closed, err) = t.run("close-worker", &["Docs", "--json", "--deadline-secs", "30"]);
    assert_eq!(
        code,
        0,
        "{closed} {err} {:?}",
        spawn_support::lines(&t.env.path("rec/handoffs.jsonl"))
    );
    assert_eq!(closed["state"], "closed");
    let job = closed["jobId"].as_str().unwrap().to_string();
    let pid = t.launches()[0]["pid"].as_i64().unwrap() as i32;
    wait_for(20_000, || spawn_support::ended(pid).then_some(())).expect("the worker ended");

    let args = [
        "--pi",
        &pi,
        "--json",
        "--wait-secs",
        "20",
        "Docs",
        "--confirm-closed",
    ];
    let (code, resumed, err) = t.run("resume-worker", &args);
    assert_eq!(code, 0, "{resumed} {err}");
    assert_eq!(resumed["result"], "resumed");

    let (code, log, err) = t.run("log", &["Docs", "--json"]);
    assert_eq!(code, 0, "{log} {err}");
    let got = shape(&log);
    let want: Vec<(&str, &str, &str, &str)> = vec![
        ("event", "spawn", "cli", ""),
        ("turn", "", "", "spawn"),
        ("turn", "", "", "closeWorker"),
        ("event", "handoff", "", ""),
        ("event", "close", "cli", ""),
        ("event", "resume", "cli", ""),
    ];
    let want: Vec<(String, String, String, String)> = want
        .into_iter()
        .map(|(a, b, c, d)| (a.into(), b.into(), c.into(), d.into()))
        .collect();
    assert_eq!(got, want, "{log:#}");
    // Times never go backward, and each event says what it did.
    let entries = log["entries"].as_array().unwrap();
    let times: Vec<&str> = entries.iter().map(|e| e["at"].as_str().unwrap()).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
    let detail = |ev: &str| {
        entries.iter().find(|e| e["event"] == ev).unwrap()["detail"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let spawn = detail("spawn");
    assert!(spawn.starts_with("spawned: pi in %"), "{spawn}");
    assert!(spawn.contains("model fake/m"), "{spawn}");
    let close = detail("close");
    let roster = t.root.join(".pi-intercom/config.json");
    assert!(
        close.starts_with(&format!(
            "closed: job {job}; handoff saved to the roster entry \"Docs\" in {}: {}",
            roster.display(),
            spawn_support::HANDOFF
        )),
        "{close}"
    );
    let resume = detail("resume");
    assert!(resume.starts_with("resumed: pi in %"), "{resume}");
    assert!(resume.contains(&sid), "{resume}");
    // The roster's own close job is not listed twice.
    assert_eq!(entries.iter().filter(|e| e["event"] == "close").count(), 1);

    // The words a person reads say the same, with who asked.
    let o = t.env.run(&layout_args(&t.env, &["log"], &["Docs"]));
    let text = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = text.lines().collect();
    let at = |w: &str| {
        lines
            .iter()
            .position(|l| l.contains(w))
            .unwrap_or_else(|| panic!("{w}: {text}"))
    };
    assert!(
        at("spawn    spawned") < at("close    closed")
            && at("close    closed") < at("resume   resumed"),
        "{text}"
    );
    assert!(
        lines[at("resume   resumed")].ends_with("· by the command line"),
        "{text}"
    );

    // The record on disk: one line per action, in the data root, under the session's id.
    let rec = std::fs::read_to_string(t.env.path(&format!("data/events/{sid}.jsonl"))).unwrap();
    assert_eq!(rec.lines().count(), 3, "{rec}");
}
