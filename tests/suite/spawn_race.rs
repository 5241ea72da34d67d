//! `spawn` against everything that can happen at once: two spawns of one name, a name added to
//! the roster by another writer while a spawn is past its checks, a writer rewriting the roster
//! all through a spawn, and a spawn killed (SIGKILL) at each stage. After each: the roster is
//! valid JSON with at most one entry per name, every window has a roster entry and a launch spec
//! that explains it, and the next spawn of the name is not blocked by what was left.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::mux_support;
use crate::spawn_support;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use mux_support::wait_for;
use serde_json::Value;
use spawn_support::{agent, ended, finished, Team};

const PAUSE: &str = "INTERCOM_PANE_TEST_PAUSE_IN_SPAWN";

/// How many roster entries are named `name` (ignoring case); the roster must parse.
fn entries(t: &Team, name: &str) -> usize {
    let v: Value = serde_json::from_str(&t.config()).expect("the roster is valid JSON");
    v["agents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["name"].as_str().unwrap().eq_ignore_ascii_case(name))
        .count()
}

/// Every worker window has a roster entry and a launch spec naming it.
fn no_orphans(t: &Team) {
    let roster = t.roster();
    let specs = t.specs();
    for w in t.windows() {
        let a = agent(&roster, &w).unwrap_or_else(|| panic!("window {w} has no roster entry"));
        assert!(
            specs.iter().any(|s| s["sessionId"] == a["sessionId"]),
            "window {w} has no launch spec"
        );
    }
}

fn wait_file(p: &Path) {
    wait_for(20_000, || p.exists().then_some(())).expect("the spawn reached its pause");
}

#[test]
fn two_spawns_of_one_name_one_wins_the_other_is_refused_at_once() {
    let t = Team::new();
    // One holds the name (paused right after taking its lock); the second is refused.
    let pause = t.env.path("pause-locked");
    let first = t.spawn_child(
        &["Docs"],
        &[(PAUSE, &format!("locked:{}", pause.display()))],
    );
    wait_file(&pause);
    let cfg = t.config();
    let (code, out, _) = t.spawn(&["DOCS"]);
    assert_eq!(code, 4, "{out}");
    assert!(
        out["reason"].as_str().unwrap().contains("another spawn"),
        "{out}"
    );
    assert_eq!(t.config(), cfg, "the refused spawn wrote nothing");
    std::fs::remove_file(&pause).unwrap();
    let (code, out, err) = finished(first);
    assert_eq!(code, 0, "{out} {err}");
    assert_eq!(entries(&t, "docs"), 1);

    // Four at once, no hook: exactly one starts a worker.
    let kids: Vec<_> = (0..4).map(|_| t.spawn_child(&["Race"], &[])).collect();
    let codes: Vec<i32> = kids.into_iter().map(|k| finished(k).0).collect();
    assert_eq!(codes.iter().filter(|c| **c == 0).count(), 1, "{codes:?}");
    assert!(codes.iter().all(|c| *c == 0 || *c == 4), "{codes:?}");
    assert_eq!(entries(&t, "race"), 1);
    let mut w = t.windows();
    w.sort();
    assert_eq!(w, ["Docs", "Race"]);
    assert_eq!(t.launches().len(), 2);
    no_orphans(&t);
    // Two names at once: two workers, each with its own port.
    let kids: Vec<_> = ["One", "Two"]
        .iter()
        .map(|n| t.spawn_child(&[n], &[]))
        .collect();
    for k in kids {
        let (code, out, err) = finished(k);
        assert_eq!(code, 0, "{out} {err}");
    }
    let roster = t.roster();
    let mut ports: Vec<u64> = roster["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["port"].as_u64().unwrap())
        .collect();
    let n = ports.len();
    ports.sort();
    ports.dedup();
    assert_eq!(ports.len(), n, "{roster}");
}

/// Between a spawn's checks and its roster write another writer adds the name (as the Intercom
/// extension would: a temp file renamed over the roster, without our lock): the spawn is
/// refused under the roster's lock, and what it had made is undone.
#[test]
fn a_name_added_meanwhile_refuses_the_spawn_under_the_roster_lock() {
    let t = Team::new();
    let pause = t.env.path("pause-reserved");
    let child = t.spawn_child(
        &["Docs"],
        &[(PAUSE, &format!("reserved:{}", pause.display()))],
    );
    wait_file(&pause);
    assert_eq!(t.specs().len(), 1, "the spec is written before the roster");
    let mut roster = t.roster();
    roster["agents"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({
        "sessionId": "other-docs", "name": "docs", "coordinator": false,
        "description": "Added by hand.", "port": 48999, "projectDirectory": "."}));
    let tmp = t.root.join(".pi-intercom/config.json.5f0c9b2e.tmp");
    std::fs::write(&tmp, serde_json::to_string_pretty(&roster).unwrap()).unwrap();
    std::fs::rename(&tmp, t.root.join(".pi-intercom/config.json")).unwrap();
    std::fs::remove_file(&pause).unwrap();
    let (code, out, err) = finished(child);
    assert_eq!(code, 4, "{out} {err}");
    assert!(
        out["reason"].as_str().unwrap().contains("meanwhile"),
        "{out}"
    );
    assert_eq!(entries(&t, "docs"), 1);
    assert_eq!(
        agent(&t.roster(), "docs").unwrap()["sessionId"],
        "other-docs"
    );
    assert!(t.specs().is_empty(), "the spec is removed again");
    assert!(t.windows().is_empty());
    assert!(t.launches().is_empty());
}

/// A writer that rewrites the whole roster every few milliseconds (read, change its own key,
/// temp file, rename: Intercom's way, no lock) all through a spawn: the new entry lands once
/// and stays, and the writer's changes are never undone.
#[test]
fn a_spawn_racing_a_lockless_roster_writer_lands_once_and_loses_nothing() {
    let t = Team::new();
    let path = t.root.join(".pi-intercom/config.json");
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let stop = stop.clone();
        let path = path.clone();
        std::thread::spawn(move || {
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                n += 1;
                let mut v: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
                v["writerTick"] = n.into();
                let tmp = path.with_extension(format!("json.{n}.tmp"));
                let mut text = serde_json::to_string_pretty(&v).unwrap();
                text.push('\n');
                std::fs::write(&tmp, text).unwrap();
                std::fs::rename(&tmp, &path).unwrap();
                std::thread::sleep(std::time::Duration::from_millis(3));
            }
            n
        })
    };
    let (code, out, err) = t.spawn(&["Docs"]);
    stop.store(true, Ordering::Relaxed);
    let ticks = writer.join().unwrap();
    assert_eq!(code, 0, "{out} {err}");
    let roster = t.roster();
    assert_eq!(
        roster["writerTick"], ticks,
        "the writer's last change is there"
    );
    assert_eq!(entries(&t, "docs"), 1);
    assert_eq!(
        agent(&roster, "Docs").unwrap()["sessionId"],
        out["sessionId"]
    );
    no_orphans(&t);
}

/// SIGKILL at each stage; then the state left is valid and explained, and the next spawn of the
/// name finishes the job (after the person ended a pi that never registered).
#[test]
fn a_spawn_killed_at_any_stage_leaves_a_valid_roster_and_a_note_and_the_next_spawn_finishes() {
    let t = Team::new();
    for (i, stage) in ["reserved", "launching", "launched"]
        .into_iter()
        .enumerate()
    {
        let name = format!("K{i}");
        // At `launched` the window's pi runs but never registers (no extension).
        let no_register = t.env.path("rec/no-register");
        if stage == "launched" {
            std::fs::write(&no_register, "").unwrap();
        }
        let pause = t.env.path(&format!("pause-{stage}"));
        let mut child = t.spawn_child(
            &[&name],
            &[(PAUSE, &format!("{stage}:{}", pause.display()))],
        );
        wait_file(&pause);
        child.kill().unwrap();
        child.wait().unwrap();
        std::fs::remove_file(&pause).unwrap();
        let spec = t.specs().into_iter().find(|s| s["name"] == name.as_str());
        let spec = spec.unwrap_or_else(|| panic!("{stage}: no note left"));
        assert_eq!(spec["stage"], stage, "{stage}: {spec}");
        assert!(entries(&t, &name) <= 1, "{stage}");
        assert_eq!(
            entries(&t, &name),
            usize::from(stage != "reserved"),
            "{stage}"
        );
        no_orphans(&t);
        if stage == "launched" {
            // Its pi still runs, unregistered: the next spawn says so and starts nothing.
            let w = wait_for(10_000, || {
                t.launches()
                    .into_iter()
                    .find(|l| l["argv"][1] == spec["sessionId"])
            })
            .expect("the killed spawn's pi started");
            let (code, out, _) = t.spawn(&[&name]);
            assert_eq!(code, 4, "{out}");
            assert!(
                out["reason"].as_str().unwrap().contains("still runs"),
                "{out}"
            );
            std::fs::remove_file(&no_register).unwrap();
            unsafe { libc::kill(w["pid"].as_i64().unwrap() as i32, libc::SIGKILL) };
            let pid = w["pid"].as_i64().unwrap() as i32;
            wait_for(20_000, || ended(pid).then_some(())).expect("the stand-in ended");
        }
        let (code, out, err) = t.spawn(&[&name]);
        assert_eq!(code, 0, "{stage}: {out} {err}");
        assert_eq!(
            out["sessionId"], spec["sessionId"],
            "{stage}: the same session"
        );
        assert_eq!(out["pickedUp"], stage, "{stage}: {out}");
        assert_eq!(entries(&t, &name), 1, "{stage}");
        no_orphans(&t);
    }
}
