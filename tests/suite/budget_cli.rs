//! Budgets (issue 40) end to end on a real tmux server with fake `pi` panes and session files
//! written turn by turn with priced usage: `budget NAME` refuses hostile values with the reason
//! and changes nothing; `status`, `status --json`, `board`, the board files, `explain` and `log`
//! show where a budget stands and every recorded change; a budget without the extension reads
//! as not enforced (never `budget reached`); a `watch` alerts once per soft-limit crossing; the
//! sidebar's `$` raises the selected worker's budget; `spawn --budget-usd` writes one.
//! (The real-pi tier holds prompts with the real extension: tests/real_pi/real_pi_budget.rs.)
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::alerts_support::{lines, lines_of, stop, Fleet};
use serde_json::Value;

fn run(f: &Fleet, args: &[&str]) -> std::process::Output {
    let mut a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    a.extend(f.flags());
    f.command(&a).output().unwrap()
}

fn ok(o: &std::process::Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn config(f: &Fleet) -> Vec<u8> {
    std::fs::read(f.path("root/.pi-intercom/config.json")).unwrap()
}

fn status_budget(f: &Fleet) -> Value {
    let v: Value = serde_json::from_str(&ok(&run(f, &["status", "--json"]))).unwrap();
    v["workers"][0]["budget"].clone()
}

#[test]
fn hostile_values_are_refused_with_the_reason_and_nothing_changes() {
    let f = Fleet::new(&["Builder"]);
    let before = config(&f);
    let cases: [(&[&str], &str); 7] = [
        (&["--usd", "NaN"], "finite"),
        (&["--usd", "inf"], "finite"),
        (&["--usd", "-1"], "must not be negative"),
        (&["--usd", "1e300"], "too large"),
        (&["--tokens", "1.5"], "whole number"),
        (&["--tokens", "-5"], "must not be negative"),
        (&["--raise", "2"], "no cost limit to raise"),
    ];
    for (flags, why) in cases {
        let mut args = vec!["budget", "Builder"];
        args.extend_from_slice(flags);
        let o = run(&f, &args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{flags:?}: {err}");
        assert!(err.contains(why), "{flags:?}: {err}");
        assert_eq!(config(&f), before, "{flags:?} changed the roster");
    }
    assert!(!f.path("root/.pi-intercom/budgets").exists());
    // A hostile name is data: no worker of that name, nothing run.
    let o = run(&f, &["budget", "$(touch pwned)\n#(x)", "--usd", "5"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!f.path("pwned").exists() && !f.path("root/pwned").exists());
    // The coordinator has no budget.
    let o = run(&f, &["budget", "Coordinator", "--usd", "5"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(config(&f), before);

    // A roster written by hand with hostile values is refused with the field and the reason.
    let mut cfg: Value = serde_json::from_slice(&before).unwrap();
    for (budget, why) in [
        (
            serde_json::json!({"costUsd": -3}),
            "agents[1].budget: budget.costUsd must not be negative",
        ),
        (
            serde_json::json!({"costUsd": 1e300}),
            "budget.costUsd is too large",
        ),
        (
            serde_json::json!({"tokens": "many"}),
            "budget.tokens must be a number",
        ),
        (serde_json::json!({"contextPercent": 0}), "from 1 to 100"),
        (
            serde_json::json!({"costUsd": 5, "kill": true}),
            "budget.kill is not a budget field",
        ),
    ] {
        cfg["agents"][1]["budget"] = budget;
        std::fs::write(f.path("root/.pi-intercom/config.json"), cfg.to_string()).unwrap();
        let v: Value = serde_json::from_str(&ok(&run(&f, &["status", "--json"]))).unwrap();
        assert_eq!(v["roster"]["available"], false, "{v}");
        let reason = v["roster"]["reason"].as_str().unwrap_or("");
        assert!(reason.contains(why), "{why}: {reason}");
        // And no budget command acts on it.
        let o = run(&f, &["budget", "Builder", "--usd", "5"]);
        assert_eq!(o.status.code(), Some(2));
    }
}

#[test]
fn every_view_shows_the_budget_and_every_change_is_recorded() {
    let mut f = Fleet::new(&["Builder"]);
    f.workers[0].spend(3.2);
    // What the extension asks before each prompt: nothing to hold without a budget.
    let c: Value = serde_json::from_str(&ok(&run(&f, &["budget", "Builder", "--check"]))).unwrap();
    assert_eq!(
        c,
        serde_json::json!({"level": "unknown", "hold": false, "compact": false, "line": "", "lift": ""})
    );
    let o = ok(&run(&f, &["budget", "Builder", "--usd", "5"]));
    assert!(
        o.contains("Builder: budget changed (cli: off → $5.00)"),
        "{o}"
    );
    assert!(o.contains("Builder: $3.20/5.00 · not enforced"), "{o}");
    let cfg: Value = serde_json::from_slice(&config(&f)).unwrap();
    assert_eq!(
        cfg["agents"][1]["budget"],
        serde_json::json!({"costUsd": 5.0})
    );

    // status, status --json, board --json and the board file say the same.
    let text = ok(&run(&f, &["status"]));
    assert!(text.contains("budget: $3.20/5.00 · not enforced"), "{text}");
    let b = status_budget(&f);
    assert_eq!(b["line"], "$3.20/5.00 · not enforced", "{b}");
    assert_eq!(b["own"]["level"], "under");
    assert_eq!(b["enforced"], false);
    let page: Value = serde_json::from_str(&ok(&run(&f, &["board"]))).unwrap();
    let seat = page["seats"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "Builder")
        .unwrap()
        .clone();
    assert_eq!(
        seat["budget"]["line"], "$3.20/5.00 · not enforced",
        "{seat}"
    );
    let idx: Value = serde_json::from_str(&ok(&run(&f, &["scan", "--json"]))).unwrap();
    let rec = idx["records"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["agent"] == "Builder")
        .unwrap();
    assert_eq!(rec["budget"]["own"]["limit"], 5.0, "{rec}");

    // Soft, raised, then exceeded: without the extension it is said, never held.
    ok(&run(&f, &["budget", "Builder", "--usd", "4"]));
    assert_eq!(status_budget(&f)["line"], "$3.20/4.00 soft · not enforced");
    ok(&run(&f, &["budget", "Builder", "--raise", "2"]));
    assert_eq!(status_budget(&f)["line"], "$3.20/6.00 · not enforced");
    ok(&run(&f, &["budget", "Builder", "--usd", "3"]));
    assert_eq!(
        status_budget(&f)["line"],
        "$3.20/3.00 exceeded (not enforced)"
    );
    let v: Value = serde_json::from_str(&ok(&run(&f, &["status", "--json"]))).unwrap();
    assert_ne!(v["workers"][0]["boardStateReason"], "budget_reached", "{v}");
    let id = f.workers[0].id.clone();
    let c: Value =
        serde_json::from_str(&ok(&run(&f, &["budget", "--session-id", &id, "--check"]))).unwrap();
    assert_eq!(c["hold"], true, "{c}");
    assert_eq!(c["line"], "budget $3.20/3.00", "{c}");
    assert!(
        c["lift"]
            .as_str()
            .unwrap()
            .contains("intercom-pane budget Builder --raise 2"),
        "{c}"
    );

    // explain and log list the changes, who made them, from what to what.
    let ex = ok(&run(&f, &["explain", "Builder"]));
    for want in [
        "budget: $3.20/3.00 exceeded (not enforced) (reached); not enforced",
        "budget change: cli: off → $5.00",
        "budget change: cli: $5.00 → $4.00",
        "budget change: cli: $4.00 → $6.00",
        "budget change: cli: $6.00 → $3.00",
    ] {
        assert!(ex.contains(want), "{want}:\n{ex}");
    }
    let log = ok(&run(&f, &["log", "Builder"]));
    assert_eq!(
        log.lines().filter(|l| l.contains(" budget ")).count(),
        4,
        "{log}"
    );
    let j: Value = serde_json::from_str(&ok(&run(&f, &["budget", "Builder", "--json"]))).unwrap();
    assert_eq!(j["changes"].as_array().unwrap().len(), 4, "{j}");
    assert_eq!(j["verdict"]["hold"], true, "{j}");

    // Off: gone from the roster and the views; the record keeps it.
    let o = ok(&run(&f, &["budget", "Builder", "--off"]));
    assert!(o.contains("Builder: no budget"), "{o}");
    let cfg: Value = serde_json::from_slice(&config(&f)).unwrap();
    assert!(cfg["agents"][1].get("budget").is_none(), "{cfg}");
    assert!(status_budget(&f).is_null());
}

#[test]
fn the_soft_limit_alerts_once_per_crossing() {
    let mut f = Fleet::new(&["Builder", "Marker"]);
    f.workers[0].spend(1.0);
    ok(&run(&f, &["budget", "Builder", "--usd", "5"]));
    let out = f.path("alerts.jsonl");
    let mut w = f.watch(&["--settle-secs", "0"], &out);
    let pid = w.id();
    f.watching(pid);
    // The Marker's questions show that every change before them has been through the alerts.
    f.mark(1, "mark 1", &[pid]);
    assert!(lines_of(&out, "Builder").is_empty(), "{:?}", lines(&out));
    let builder = |n: usize| {
        crate::mux_support::wait_for(60_000, || {
            let l = lines_of(&out, "Builder");
            (l.len() >= n).then_some(l)
        })
        .unwrap_or_else(|| panic!("no {n} alert lines for Builder: {:?}", lines(&out)))
    };
    // $4 of $5: the soft limit (80 %).
    f.workers[0].spend(3.0);
    let l = builder(1);
    assert_eq!(l[0]["seat"], "Builder");
    assert_eq!(l[0]["reason"], "budget_soft");
    assert_eq!(l[0]["sessionId"], f.workers[0].id.as_str());
    assert_eq!(l[0]["text"], "its budget passed the soft limit: $4.00/5.00");
    // Still past it, then past the limit itself (not enforced here): the same crossing.
    f.workers[0].spend(0.5);
    f.mark(1, "mark 2", &[pid]);
    f.workers[0].spend(1.0);
    f.mark(1, "mark 3", &[pid]);
    assert_eq!(lines_of(&out, "Builder").len(), 1, "{:?}", lines(&out));
    // A new limit, under again, then crossed again: one more.
    ok(&run(&f, &["budget", "Builder", "--usd", "20"]));
    f.mark(1, "mark 4", &[pid]);
    assert_eq!(lines_of(&out, "Builder").len(), 1, "{:?}", lines(&out));
    f.workers[0].spend(11.0);
    let l = builder(2);
    assert_eq!(l[1]["turn"], "waiting:budget-soft:own:usd:20", "{l:?}");
    f.mark(1, "mark 5", &[pid]);
    assert_eq!(lines_of(&out, "Builder").len(), 2);
    let st = stop(&mut w);
    assert_eq!(st.code(), Some(0));
}

#[test]
fn spawn_writes_the_budget_into_the_new_entry_and_refuses_hostile_values_first() {
    use crate::spawn_support::{agent, Team};
    let t = Team::new();
    let before = t.config();
    for (flags, why) in [
        (["--budget-usd", "NaN"], "finite"),
        (["--budget-usd", "-2"], "must not be negative"),
        (["--budget-tokens", "1e20"], "too large"),
    ] {
        let mut args = vec!["Spendy"];
        args.extend_from_slice(&flags);
        let (code, _, err) = t.spawn(&args);
        assert_eq!(code, 2, "{flags:?}: {err}");
        assert!(err.contains(why), "{flags:?}: {err}");
        assert_eq!(t.config(), before, "{flags:?} changed the roster");
    }
    let (code, out, err) = t.spawn(&["Spendy", "--budget-usd", "5", "--budget-tokens", "200000"]);
    assert_eq!(code, 0, "{out} {err}");
    let roster = t.roster();
    let a = agent(&roster, "Spendy").unwrap();
    assert_eq!(
        a["budget"],
        serde_json::json!({"costUsd": 5.0, "tokens": 200000}),
        "{a}"
    );
    let o = t.env.run(&crate::scan_support::layout_args(
        &t.env,
        &["budget"],
        &["Spendy", "--json"],
    ));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    assert_eq!(v["changes"][0]["by"], "spawn", "{v}");
    assert!(v["changes"][0]["from"].is_null(), "{v}");
}

#[test]
fn the_sidebars_dollar_key_raises_the_selected_workers_budget_by_half_and_records_it() {
    use crate::mux_support::wait_for;
    let mut f = Fleet::new(&["Builder"]);
    f.workers[0].spend(4.5);
    ok(&run(&f, &["budget", "Builder", "--usd", "5"]));
    f.sidebar(&[]);
    let screen = || f.server.tmux(&["capture-pane", "-p", "-t", "=mon:"]);
    wait_for(30_000, || {
        screen().contains("$4.50/5.00 soft").then_some(())
    })
    .unwrap_or_else(|| panic!("no budget on the row:\n{}", screen()));
    // Select the worker (the first row is the coordinator's when it shows one).
    for _ in 0..5 {
        let s = screen();
        if s.lines()
            .any(|l| l.starts_with('›') && l.contains("Builder"))
        {
            break;
        }
        f.server.tmux(&["send-keys", "-t", "=mon:", "j"]);
        std::thread::sleep(std::time::Duration::from_millis(300));
    }
    f.server.tmux(&["send-keys", "-t", "=mon:", "$"]);
    wait_for(10_000, || {
        screen()
            .contains("Raise worker Builder's budget from $5.00 to $7.50")
            .then_some(())
    })
    .unwrap_or_else(|| panic!("no confirmation:\n{}", screen()));
    f.server.tmux(&["send-keys", "-t", "=mon:", "y"]);
    wait_for(30_000, || {
        let cfg: Value = serde_json::from_slice(&config(&f)).ok()?;
        (cfg["agents"][1]["budget"]["costUsd"] == 7.5).then_some(())
    })
    .unwrap_or_else(|| panic!("not raised:\n{}", screen()));
    // The record follows the roster's write.
    let j = wait_for(10_000, || {
        let j: Value =
            serde_json::from_str(&ok(&run(&f, &["budget", "Builder", "--json"]))).ok()?;
        (j["changes"].as_array()?.len() == 2).then_some(j)
    })
    .expect("the change recorded");
    let last = j["changes"][1].clone();
    assert_eq!(last["by"], "sidebar", "{j}");
    assert_eq!(last["from"]["costUsd"], 5.0);
    assert_eq!(last["to"]["costUsd"], 7.5);
}
