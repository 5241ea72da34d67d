//! `spawn --worktree`, `retire` and `resume-worker` with a launch spec, on a real git checkout
//! and a real tmux server: the worktree is made on its branch without touching the main
//! checkout's files, refused where it must be; a running worker is not retired; a retired one
//! leaves its entry in `.pi-intercom/retired/` and its worktree only when it holds no work; a
//! resumed one starts with the flags, folder and environment it was spawned with.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::spawn_support;

use crate::scan_support::git;
use serde_json::{json, Value};
use spawn_support::{agent, checkout, end_worker, Team};

fn retire(t: &Team, args: &[&str]) -> (i32, Value) {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let o = t.env.run(&scan_support_args(t, "retire", &all));
    (
        o.status.code().unwrap_or(-1),
        serde_json::from_slice(&o.stdout).unwrap_or(Value::Null),
    )
}

fn scan_support_args(t: &Team, cmd: &str, extra: &[&str]) -> Vec<String> {
    crate::scan_support::layout_args(&t.env, &[cmd], extra)
}

#[test]
fn a_worktree_worker_is_made_on_its_branch_and_retired_only_without_work() {
    let t = Team::new();
    checkout(&t);
    let (code, out, err) = t.spawn(&["Feat", "--worktree"]);
    assert_eq!(code, 0, "{out} {err}");
    let wt = t.root.join(".pi-intercom/worktrees/Feat");
    assert_eq!(
        git(&wt, &["rev-parse", "--abbrev-ref", "HEAD"]).trim(),
        "Feat"
    );
    assert_eq!(out["worktree"]["branch"], "Feat");
    assert_eq!(out["worktree"]["createdBranch"], true);
    let feat = agent(&t.roster(), "Feat").unwrap().clone();
    assert_eq!(feat["projectDirectory"], ".pi-intercom/worktrees/Feat");
    assert_eq!(t.launches()[0]["cwd"], wt.display().to_string());
    // The main checkout: only the roster changed (the worktree is ignored, nothing else moved).
    assert_eq!(
        git(&t.root, &["status", "--porcelain"]),
        " M .pi-intercom/config.json\n"
    );
    assert_eq!(
        git(&t.root, &["rev-parse", "--abbrev-ref", "HEAD"]).trim(),
        "main"
    );

    // Refused: a branch checked out elsewhere, a folder that exists, a bad branch name.
    std::fs::create_dir_all(t.root.join(".pi-intercom/worktrees/Taken")).unwrap();
    let cfg = t.config();
    for (args, why) in [
        (vec!["Other", "--worktree", "main"], "checked out"),
        (vec!["Other", "--worktree", "Feat"], "checked out"),
        (vec!["Taken", "--worktree"], "exists"),
        (vec!["Bad name", "--worktree"], "not a valid git branch"),
    ] {
        let (code, out, _) = t.spawn(&args);
        assert_eq!(code, 5, "{args:?}: {out}");
        assert!(
            out["reason"].as_str().unwrap().contains(why),
            "{args:?}: {out}"
        );
        assert_eq!(t.config(), cfg, "{args:?}");
    }
    assert_eq!(t.windows(), ["Feat"]);

    // Running: not retired, and told how to close it first (the text a person reads, too).
    let (code, out) = retire(&t, &["Feat"]);
    assert_eq!(code, 4, "{out}");
    assert!(
        out["reason"]
            .as_str()
            .unwrap()
            .ends_with("close it first (intercom-pane close-worker Feat)"),
        "{out}"
    );
    let o = t.env.run(&scan_support_args(&t, "retire", &["Feat"]));
    let said = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(4), "{said}");
    assert!(
        said.starts_with("intercom-pane: retire: Feat still runs: ")
            && said
                .trim_end()
                .ends_with("; close it first (intercom-pane close-worker Feat)"),
        "{said}"
    );
    assert_eq!(t.config(), cfg);

    // Closed, with an uncommitted file: retired, the worktree kept and why.
    end_worker(&t, &feat["sessionId"]);
    std::fs::write(wt.join("notes.txt"), "half done\n").unwrap();
    let (code, out) = retire(&t, &["Feat", "--remove-worktree"]);
    assert_eq!(code, 3, "{out}");
    assert_eq!(out["worktree"]["action"], "kept", "{out}");
    assert!(
        out["worktree"]["detail"]
            .as_str()
            .unwrap()
            .contains("notes.txt"),
        "{out}"
    );
    assert!(wt.join("notes.txt").exists());
    assert!(agent(&t.roster(), "Feat").is_none());
    let archived: Value =
        serde_json::from_slice(&std::fs::read(out["archive"].as_str().unwrap()).unwrap()).unwrap();
    assert_eq!(archived["entry"], feat, "the entry is kept as it was");
    let text = archived["entryText"].as_str().unwrap();
    assert!(cfg.contains(text), "its exact text: {text}");
    assert_eq!(archived["launchSpec"]["worktree"]["branch"], "Feat");
    // The roster is back to what it was before the spawn.
    let mut before: Value = serde_json::from_str(&cfg).unwrap();
    before["agents"]
        .as_array_mut()
        .unwrap()
        .retain(|a| a["name"] != "Feat");
    assert_eq!(t.roster(), before);

    // A clean one goes; a committed one with work no other branch has stays.
    for (name, commit) in [("Clean", false), ("Work", true)] {
        let (code, out, err) = t.spawn(&[name, "--worktree"]);
        assert_eq!(code, 0, "{out} {err}");
        let dir = t.root.join(".pi-intercom/worktrees").join(name);
        if commit {
            std::fs::write(dir.join("f.txt"), "x\n").unwrap();
            git(&dir, &["add", "f.txt"]);
            git(&dir, &["commit", "-qm", "work"]);
        }
        end_worker(&t, &out["sessionId"]);
        let (code, r) = retire(&t, &[name, "--remove-worktree"]);
        if commit {
            assert_eq!(code, 3, "{r}");
            assert!(
                r["worktree"]["detail"]
                    .as_str()
                    .unwrap()
                    .contains("1 commit"),
                "{r}"
            );
            assert!(dir.exists());
        } else {
            assert_eq!(code, 0, "{r}");
            assert_eq!(r["worktree"]["action"], "removed", "{r}");
            assert!(!dir.exists());
            assert_eq!(git(&t.root, &["branch", "--list", name]).trim(), name);
        }
    }
}

#[test]
fn a_spawned_worker_is_resumed_with_its_recorded_flags_folder_and_environment() {
    let t = Team::new();
    std::fs::create_dir_all(t.root.join("docs")).unwrap();
    let (code, out, err) = t.spawn(&[
        "Docs",
        "--dir",
        "root/docs",
        "--model",
        "fake/m",
        "--thinking",
        "high",
        "--",
        "--verbose",
    ]);
    assert_eq!(code, 0, "{out} {err}");
    let id = out["sessionId"].clone();
    end_worker(&t, &id);
    // Resumed from a shell outside the root, with none of the spawn's flags.
    let pi = t.pi.display().to_string();
    let o = t.env.run(&scan_support_args(
        &t,
        "resume-worker",
        &[
            "--pi",
            &pi,
            "--json",
            "--wait-secs",
            "20",
            "Docs",
            "--confirm-closed",
        ],
    ));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{r} {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(r["result"], "resumed");
    assert!(
        r["launchSpec"]["path"]
            .as_str()
            .unwrap()
            .contains("/.pi-intercom/workers/"),
        "{r}"
    );
    let l = t.launches();
    let (first, again) = (&l[0], &l[1]);
    let file = r["sessionFile"].as_str().unwrap();
    assert_eq!(
        again["argv"],
        json!([
            "--session",
            file,
            "--model",
            "fake/m",
            "--thinking",
            "high",
            "--verbose"
        ])
    );
    assert_eq!(again["cwd"], first["cwd"]);
    assert_eq!(again["cwd"], t.root.join("docs").display().to_string());
    assert_eq!(again["env"]["PATH"], first["env"]["PATH"]);
    assert_eq!(
        again["env"]["INTERCOM_PANE_CONFIG"],
        first["env"]["INTERCOM_PANE_CONFIG"]
    );
    // The human receipt names the spec too.
    end_worker(&t, &id);
    let o = t.env.run(&scan_support_args(
        &t,
        "resume-worker",
        &["--pi", &pi, "--wait-secs", "20", "Docs", "--confirm-closed"],
    ));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("launch spec: ") && text.contains("/.pi-intercom/workers/"),
        "{text}"
    );
}

#[test]
fn retire_refuses_the_coordinator_an_unknown_name_and_an_open_close_job() {
    let t = Team::new();
    let (code, out, err) = t.spawn(&["Docs"]);
    assert_eq!(code, 0, "{out} {err}");
    end_worker(&t, &out["sessionId"]);
    let (code, r) = retire(&t, &["Coordinator"]);
    assert_eq!(code, 2, "{r}");
    let (code, r) = retire(&t, &["Nobody"]);
    assert_eq!(code, 2, "{r}");
    // A close job still open (as close-worker leaves it while it runs).
    let mut roster = t.roster();
    roster["agents"][1]["closeJob"] = json!({"jobId": "j1", "state": "awaiting_handoff",
        "createdAt": "2026-11-29T23:00:00.000Z", "updatedAt": "2026-11-29T23:00:00.000Z",
        "deadlineAt": "2026-11-29T23:02:00.000Z"});
    std::fs::write(
        t.root.join(".pi-intercom/config.json"),
        serde_json::to_string_pretty(&roster).unwrap(),
    )
    .unwrap();
    let cfg = t.config();
    let (code, r) = retire(&t, &["docs"]);
    assert_eq!(code, 5, "{r}");
    assert!(
        r["reason"].as_str().unwrap().contains("awaiting_handoff"),
        "{r}"
    );
    assert_eq!(t.config(), cfg);
    assert!(!t.root.join(".pi-intercom/retired").exists());
}
