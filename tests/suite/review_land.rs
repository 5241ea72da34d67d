//! `review` and `land` on real git checkouts made by `spawn --worktree` (a real tmux server, the
//! pi stand-in): what a worker changed (committed, uncommitted, untracked, binary, hostile
//! names), a base that moved, the merge check, overlap between live workers; `land` merging
//! only settled workers into a clean main checkout, refusing a conflict or a dirty checkout
//! with nothing changed, never losing a commit and never leaving a merge half done.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

use crate::scan_support::{git, layout_args};
use crate::spawn_support::{checkout, end_worker, Team};
use serde_json::Value;

/// Run `cmd ARGS…` with the team's flags: (exit, stdout, stderr).
fn run(t: &Team, cmd: &str, args: &[&str]) -> (i32, String, String) {
    let o = t.env.run(&layout_args(&t.env, &[cmd], args));
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn json(t: &Team, cmd: &str, args: &[&str]) -> (i32, Value) {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let (code, out, err) = run(t, cmd, &all);
    let v = serde_json::from_str(&out).unwrap_or_else(|_| panic!("{cmd} {args:?}: {out} {err}"));
    (code, v)
}

/// A git identity for the merge commits `land` makes (the team's HOME is a fresh folder).
fn identity(t: &Team) {
    let home = t.env.path("home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        home.join(".gitconfig"),
        "[user]\n\tname = lead\n\temail = lead@example.org\n",
    )
    .unwrap();
}

fn spawn(t: &Team, name: &str, branch: Option<&str>) -> (Value, std::path::PathBuf) {
    let flag = branch.map_or("--worktree".to_string(), |b| format!("--worktree={b}"));
    let (code, out, err) = t.spawn(&[name, &flag]);
    assert_eq!(code, 0, "{out} {err}");
    (
        out["sessionId"].clone(),
        t.root.join(".pi-intercom/worktrees").join(name),
    )
}

fn commit(dir: &Path, file: &str, body: &[u8], msg: &str) {
    std::fs::write(dir.join(file), body).unwrap();
    git(dir, &["add", "--", file]);
    git(dir, &["commit", "-qm", msg]);
}

fn file<'a>(r: &'a Value, path: &str, place: &str) -> &'a Value {
    r["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == path && f["where"] == place)
        .unwrap_or_else(|| panic!("no {place} {path:?} in {r}"))
}

/// Every ref's tip.
fn tips(dir: &Path) -> Vec<String> {
    git(dir, &["for-each-ref", "--format=%(objectname)"])
        .lines()
        .map(str::to_string)
        .collect()
}

/// Each of `before` is an ancestor of some tip now, and no merge is in progress.
fn nothing_lost(dir: &Path, before: &[String]) {
    let now = tips(dir);
    for b in before {
        let kept = now.iter().any(|n| {
            std::process::Command::new("git")
                .args(["-C"])
                .arg(dir)
                .args(["merge-base", "--is-ancestor", b, n])
                .status()
                .unwrap()
                .success()
        });
        assert!(kept, "{b} is no longer reachable");
    }
    let merge_head = git(dir, &["rev-parse", "--git-path", "MERGE_HEAD"]);
    assert!(
        !dir.join(merge_head.trim()).exists(),
        "a merge was left half done"
    );
}

#[test]
fn review_shows_what_a_worker_changed_where_and_who_else_touched_it() {
    let t = Team::new();
    checkout(&t);
    let marker = t.env.path("pwned");
    // A ref name has no `.` after a `/`: the branch's command names a relative file.
    let hostile_branch = "w$(touch${IFS}pwned)".to_string();
    let (_, a) = spawn(&t, "A", None);
    let (_, b) = spawn(&t, "B", Some(&hostile_branch));
    let spawned_at = git(&t.root, &["rev-parse", "HEAD"]).trim().to_string();

    // A: two commits (a text file; a binary file with a hostile name), an uncommitted change,
    // an untracked file.
    let hostile = "-n\n$(touch pwned)\x1b[31m.txt".to_string();
    commit(
        &a,
        "a.txt",
        b"one\ntwo\nthree\n",
        "add a $(touch x) \x1b[2J",
    );
    std::fs::write(a.join(&hostile), b"bin\0ary").unwrap();
    git(&a, &["add", "-A"]);
    git(&a, &["commit", "-qm", "binary"]);
    std::fs::write(a.join("README"), "project\nmore\n").unwrap();
    std::fs::write(a.join("new.txt"), "x\ny").unwrap();
    // B: a commit to README too (the overlap).
    commit(&b, "README", b"project by B\n", "b");
    // The main checkout moves on.
    commit(&t.root, "m.txt", b"m\n", "main moves");

    let (code, r) = json(&t, "review", &["A"]);
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["branch"], "A");
    assert_eq!(r["worktree"], true);
    assert_eq!(r["base"], spawned_at.as_str());
    assert_eq!(r["baseSource"], "spawn");
    assert_eq!(r["target"], "main");
    assert_eq!(r["baseMovedBy"], 1);
    assert_eq!(r["commitsTotal"], 2);
    assert_eq!(r["commits"][0]["subject"], "binary");
    assert_eq!(r["commits"][1]["subject"], "add a $(touch x) \x1b[2J");
    let f = file(&r, "a.txt", "committed");
    assert_eq!(
        (f["added"].as_u64(), f["removed"].as_u64()),
        (Some(3), Some(0))
    );
    let f = file(&r, &hostile, "committed");
    assert_eq!(f["binary"], true, "{f}");
    assert!(f["added"].is_null());
    let f = file(&r, "README", "uncommitted");
    assert_eq!(f["added"], 1);
    let f = file(&r, "new.txt", "untracked");
    assert_eq!(f["added"], 2);
    assert_eq!(r["totals"]["files"], 4);
    assert_eq!(r["totals"]["committed"], 2);
    assert_eq!(r["merge"]["state"], "clean", "{r}");
    assert_eq!(r["overlaps"][0]["workers"], serde_json::json!(["A", "B"]));
    assert_eq!(r["overlaps"][0]["files"], serde_json::json!(["README"]));

    // B's review: its hostile branch, and a conflict with main? No: B changed README, main did
    // not. The overlap is seen from B too.
    let (code, rb) = json(&t, "review", &["B"]);
    assert_eq!(code, 0, "{rb}");
    assert_eq!(rb["branch"], hostile_branch.as_str());
    assert_eq!(rb["overlaps"][0]["files"], serde_json::json!(["README"]));

    // Human output: one line per item, nothing raw on screen.
    let (code, out, err) = run(&t, "review", &["A"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("OVERLAP: A and B both changed README"),
        "{out}"
    );
    assert!(out.contains("main moved on by 1 commit"), "{out}");
    assert!(out.contains("binary"), "{out}");
    assert!(!out.contains('\x1b'), "{out:?}");
    assert!(out.lines().any(|l| l.contains("-n $(touch")), "{out}");
    // --patch into a pipe: the diff as git gives it.
    let (code, out, _) = run(&t, "review", &["A", "--patch"]);
    assert_eq!(code, 0);
    assert!(out.contains("+three\n"), "{out}");
    assert!(out.contains("+more\n"), "{out}");

    // Huge: an untracked file over the count's cap is listed with its lines unknown; a diff
    // over `--patch`'s cap is said, not printed, and the rest still shows.
    std::fs::write(a.join("huge.txt"), "x\n".repeat(3 << 20)).unwrap();
    commit(
        &a,
        "huge-committed.txt",
        "y\n".repeat(5 << 20).as_bytes(),
        "huge",
    );
    let (code, r) = json(&t, "review", &["A"]);
    assert_eq!(code, 0, "{r}");
    let f = file(&r, "huge.txt", "untracked");
    assert!(f["added"].is_null() && f["binary"] == false, "{f}");
    assert_eq!(
        file(&r, "huge-committed.txt", "committed")["added"],
        5 << 20
    );
    let (code, out, _) = run(&t, "review", &["A", "--patch"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("(the diff is larger than 8388608 bytes: not shown)"),
        "{}",
        &out[..out.len().min(2000)]
    );
    assert!(out.contains("+more\n"), "the uncommitted part still shows");

    // The worktree deleted under the tool: said, not guessed.
    std::fs::rename(&b, t.env.path("moved-away")).unwrap();
    let (code, rb) = json(&t, "review", &["B"]);
    assert_eq!(code, 0);
    assert!(rb["checkout"].is_null());
    assert!(rb["note"].as_str().unwrap().contains("is gone"), "{rb}");
    // No such worker.
    let (code, _, err) = run(&t, "review", &["Nobody"]);
    assert_eq!(code, 5, "{err}");
    for d in [
        &marker,
        &t.root.join("pwned"),
        &a.join("pwned"),
        &t.env.path("pwned"),
    ] {
        assert!(!d.exists(), "a hostile name ran: {}", d.display());
    }
}

#[test]
fn land_merges_settled_workers_one_at_a_time_and_stops_at_a_conflict() {
    let t = Team::new();
    checkout(&t);
    identity(&t);
    let (sa, a) = spawn(&t, "A", None);
    let (sb, b) = spawn(&t, "B", None);
    let (sc, c) = spawn(&t, "C", None);
    // C moves to a branch whose name starts with `-` (git's porcelain would refuse to make it).
    git(&c, &["update-ref", "refs/heads/-c", "HEAD"]);
    git(&c, &["symbolic-ref", "HEAD", "refs/heads/-c"]);
    commit(&a, "a.txt", b"a\n", "a");
    commit(&b, "README", b"B's readme\n", "b");
    commit(&c, "c.txt", b"c\n", "c");
    // Main moves on the same line B changed: B conflicts.
    commit(&t.root, "README", b"main's readme\n", "main readme");
    let main_before = git(&t.root, &["rev-parse", "HEAD"]).trim().to_string();

    // Still running: the board does not show it settled-or-closed... A live stand-in is idle;
    // end them all so that landing is about git only.
    for s in [&sa, &sb, &sc] {
        end_worker(&t, s);
    }
    let before = tips(&t.root);

    // A dirty main checkout: refused, nothing changed.
    std::fs::write(t.root.join("README"), "edited by hand\n").unwrap();
    let (code, r) = json(&t, "land", &["A"]);
    assert_eq!(code, 3, "{r}");
    assert_eq!(r["steps"][0]["outcome"], "refused");
    assert!(
        r["steps"][0]["detail"].as_str().unwrap().contains("README"),
        "{r}"
    );
    assert_eq!(git(&t.root, &["rev-parse", "HEAD"]).trim(), main_before);
    git(&t.root, &["checkout", "--", "README"]);

    // Dry run: says what would happen, changes nothing.
    let (code, r) = json(&t, "land", &["--dry-run", "A", "B"]);
    assert_eq!(code, 3, "{r}");
    assert_eq!(r["steps"][0]["outcome"], "would-merge", "{r}");
    assert_eq!(r["steps"][1]["outcome"], "refused");
    assert_eq!(git(&t.root, &["rev-parse", "HEAD"]).trim(), main_before);

    // The queue: A lands, B conflicts (named, nothing changed), C is not tried.
    let (code, r) = json(&t, "land", &["A", "B", "C"]);
    assert_eq!(code, 3, "{r}");
    assert_eq!(r["steps"][0]["outcome"], "merged", "{r}");
    assert_eq!(r["steps"][1]["outcome"], "refused");
    assert_eq!(r["steps"][1]["conflicts"], serde_json::json!(["README"]));
    assert_eq!(r["steps"][2]["outcome"], "not-tried");
    let after_a = git(&t.root, &["rev-parse", "HEAD"]).trim().to_string();
    assert_eq!(r["steps"][0]["after"], after_a.as_str());
    assert!(t.root.join("a.txt").exists());
    assert!(!t.root.join("c.txt").exists());
    assert_eq!(
        git(&t.root, &["show", "-s", "--format=%P", "HEAD"]).trim(),
        format!("{main_before} {}", git(&a, &["rev-parse", "HEAD"]).trim())
    );
    nothing_lost(&t.root, &before);
    // Only the roster differs in the main checkout: no merge left behind.
    let status = git(&t.root, &["status", "--porcelain"]);
    assert!(
        status
            .lines()
            .all(|l| l.ends_with(".pi-intercom/config.json")),
        "{status}"
    );

    // C (branch `-c`), alone: lands; landing it again is "already landed".
    let (code, out, err) = run(&t, "land", &["C"]);
    assert_eq!(code, 0, "{out} {err}");
    assert!(
        out.contains("C: landed (merge commit) · -c → main"),
        "{out}"
    );
    assert!(t.root.join("c.txt").exists());
    let (code, r) = json(&t, "land", &["C"]);
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["steps"][0]["outcome"], "up-to-date");
    nothing_lost(&t.root, &before);
}

#[test]
fn land_fast_forwards_rebases_when_asked_and_refuses_a_worker_with_uncommitted_work() {
    let t = Team::new();
    checkout(&t);
    identity(&t);
    let (sa, a) = spawn(&t, "A", None);
    commit(&a, "a.txt", b"a\n", "a");
    std::fs::write(a.join("a.txt"), "changed\n").unwrap();
    end_worker(&t, &sa);
    let (code, r) = json(&t, "land", &["A"]);
    assert_eq!(code, 3, "{r}");
    assert!(
        r["steps"][0]["detail"]
            .as_str()
            .unwrap()
            .contains("uncommitted changes: a.txt"),
        "{r}"
    );
    git(&a, &["checkout", "--", "a.txt"]);
    std::fs::write(a.join("scratch.log"), "not for landing\n").unwrap();
    let tip = git(&a, &["rev-parse", "HEAD"]).trim().to_string();
    let (code, r) = json(&t, "land", &["A"]);
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["steps"][0]["outcome"], "fast-forward");
    assert!(
        r["steps"][0]["detail"]
            .as_str()
            .unwrap()
            .contains("1 untracked file(s) in its checkout were not landed: scratch.log"),
        "{r}"
    );
    assert_eq!(git(&t.root, &["rev-parse", "HEAD"]).trim(), tip);
    // --rebase: B's commit replayed onto main (which moved), main fast-forwarded, B untouched.
    let (sb, b) = spawn(&t, "B", None);
    commit(&b, "b.txt", b"b\n", "b's work");
    commit(&t.root, "m.txt", b"m\n", "main moves");
    end_worker(&t, &sb);
    let b_tip = git(&b, &["rev-parse", "HEAD"]).trim().to_string();
    let main_tip = git(&t.root, &["rev-parse", "HEAD"]).trim().to_string();
    let (code, r) = json(&t, "land", &["B", "--rebase", "--dry-run"]);
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["steps"][0]["outcome"], "would-rebase", "{r}");
    assert_eq!(git(&t.root, &["rev-parse", "HEAD"]).trim(), main_tip);
    let (code, r) = json(&t, "land", &["B", "--rebase"]);
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["steps"][0]["outcome"], "rebased", "{r}");
    assert_eq!(
        git(&t.root, &["log", "--format=%s|%P", "-2"]),
        format!("b's work|{main_tip}\nmain moves|{tip}\n")
    );
    assert!(t.root.join("b.txt").exists());
    assert_eq!(
        git(&b, &["rev-parse", "HEAD"]).trim(),
        b_tip,
        "B's branch is untouched"
    );
    nothing_lost(&t.root, &[tip.clone(), main_tip, b_tip]);

    // Into a branch the main checkout does not have checked out: refused.
    git(&t.root, &["branch", "release"]);
    let (code, r) = json(&t, "land", &["A", "--into", "release"]);
    assert_eq!(code, 3, "{r}");
    assert!(r["steps"][0]["detail"]
        .as_str()
        .unwrap()
        .contains("checked out"));
    for bad in ["a..b", "-x y", "x\ny"] {
        let into = format!("--into={bad}");
        let (code, r) = json(&t, "land", &["A", &into]);
        assert_eq!(code, 3, "{bad:?}: {r}");
        assert!(
            r["steps"][0]["detail"]
                .as_str()
                .unwrap()
                .contains("not a branch name"),
            "{bad:?}: {r}"
        );
    }
    let (code, r) = json(&t, "review", &["A", "--into", "a..b"]);
    assert_eq!(code, 0, "{r}");
    assert!(r["target"].is_null(), "{r}");
    assert!(
        r["note"].as_str().unwrap().contains("not a branch name"),
        "{r}"
    );
}

#[test]
fn retire_keeps_a_worktree_with_work_unless_discard_and_close_names_uncommitted_files() {
    let t = Team::new();
    checkout(&t);
    let (sa, a) = spawn(&t, "A", None);
    let (sb, b) = spawn(&t, "B", None);
    for d in [&a, &b] {
        commit(d, "w.txt", b"work\n", "the work");
        std::fs::write(d.join("notes.txt"), "half done\n").unwrap();
    }
    // close-worker's receipt (a dry run here) names the uncommitted files.
    let (code, out, err) = run(&t, "close-worker", &["A", "--dry-run"]);
    assert_eq!(code, 0, "{out} {err}");
    assert!(
        out.contains("has 1 uncommitted file(s): notes.txt"),
        "{out}"
    );
    end_worker(&t, &sa);
    end_worker(&t, &sb);

    let (code, r) = json(&t, "retire", &["A", "--remove-worktree"]);
    assert_eq!(code, 3, "{r}");
    let detail = r["worktree"]["detail"].as_str().unwrap();
    assert!(
        detail.contains("1 uncommitted file(s): notes.txt"),
        "{detail}"
    );
    assert!(detail.contains("1 commit(s) not in main"), "{detail}");
    assert!(detail.contains("the work"), "{detail}");
    assert!(detail.contains("--discard"), "{detail}");
    assert!(a.join("notes.txt").exists());

    let tip = git(&b, &["rev-parse", "HEAD"]).trim().to_string();
    let (code, r) = json(&t, "retire", &["B", "--remove-worktree", "--discard"]);
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["worktree"]["action"], "removed", "{r}");
    let detail = r["worktree"]["detail"].as_str().unwrap();
    assert!(
        detail.contains("discarded (--discard): 1 uncommitted file(s): notes.txt"),
        "{detail}"
    );
    assert!(detail.contains("they stay on branch B"), "{detail}");
    assert!(!b.exists());
    // The branch and its commit stay.
    assert_eq!(git(&t.root, &["rev-parse", "refs/heads/B"]).trim(), tip);
    // --discard alone is refused by the flags.
    let (code, _, err) = run(&t, "retire", &["A", "--discard"]);
    assert_eq!(code, 2, "{err}");
}

/// The sidebar's Changes column, in the real monitor in a tmux window: each worker's lines and
/// files since its base, its uncommitted files, and the overlap mark on both rows that changed a
/// same file; a worker outside git shows nothing there.
#[test]
fn the_sidebar_shows_each_workers_changes_and_flags_overlap_on_both_rows() {
    let t = Team::new();
    checkout(&t);
    let (_, a) = spawn(&t, "Alpha", None);
    let (_, b) = spawn(&t, "Beta", None);
    let (_, c) = spawn(&t, "Gamma", None);
    commit(&a, "a.txt", b"one\ntwo\nthree\n", "a");
    std::fs::write(a.join("README"), "project\nmore\n").unwrap();
    commit(&b, "README", b"project by B\n", "b");
    commit(&c, "c.txt", b"c\n", "c");
    let mut argv: Vec<String> = vec![
        "env".into(),
        format!("HOME={}", t.env.path("home").display()),
        format!("TMUX_TMPDIR={}", t.env.path("tmux-tmp").display()),
        "PATH=/usr/local/bin:/usr/bin:/bin".into(),
        "TERM=xterm-256color".into(),
        env!("CARGO_BIN_EXE_intercom-pane").into(),
    ];
    argv.extend(layout_args(&t.env, &["monitor"], &["--no-probe"]));
    let cwd = t.env.dir.path().display().to_string();
    let mut args: Vec<&str> = vec!["new-window", "-d", "-n", "mon", "-c", &cwd, "--"];
    args.extend(argv.iter().map(String::as_str));
    t.server.tmux(&args);
    t.server
        .tmux(&["resize-window", "-t", "=coord:mon", "-x", "120", "-y", "45"]);
    let screen = || t.server.tmux(&["capture-pane", "-p", "-t", "=coord:mon"]);
    let row = |s: &str, name: &str| {
        s.lines()
            .find(|l| l.contains(name) && l.contains('+'))
            .map(str::to_string)
    };
    let s = crate::mux_support::wait_for(30_000, || {
        let s = screen();
        (s.contains("Changes") && row(&s, "Alpha").is_some() && row(&s, "Gamma").is_some())
            .then_some(s)
    })
    .unwrap_or_else(|| panic!("no Changes column:\n{}", screen()));
    let header = s.lines().find(|l| l.contains("Worker")).unwrap_or("");
    assert!(header.contains("Changes"), "{s:?}");
    let alpha = row(&s, "Alpha").unwrap();
    assert!(alpha.contains("⚠ +4 −0 · 2f · 1u"), "{alpha}\n{s}");
    let beta = row(&s, "Beta").unwrap();
    assert!(beta.contains("⚠ +1 −1 · 1 files"), "{beta}\n{s}");
    let gamma = row(&s, "Gamma").unwrap();
    assert!(gamma.contains("+1 −0 · 1 files"), "{gamma}\n{s}");
    assert!(!gamma.contains('⚠'), "{gamma}\n{s}");

    // A file made by hand while Alpha's pi is idle: nothing on the board moves, so the column
    // reads it when `v` opens (no timer reads it again).
    std::fs::write(a.join("b.txt"), "by hand\n").unwrap();
    // `v` on the selected row (Alpha, the first): its files and its diff, coloured by line.
    t.server.tmux(&["send-keys", "-t", "=coord:mon", "v"]);
    let s = crate::mux_support::wait_for(20_000, || {
        let s = screen();
        (s.contains("Review: Alpha") && s.contains("+three")).then_some(s)
    })
    .unwrap_or_else(|| panic!("no review view:\n{}", screen()));
    assert!(
        s.lines()
            .any(|l| l.contains("committed") && l.contains("a.txt")),
        "{s}"
    );
    assert!(
        s.lines()
            .any(|l| l.contains("uncommitted") && l.contains("README")),
        "{s}"
    );
    t.server.tmux(&["send-keys", "-t", "=coord:mon", "v"]);
    crate::mux_support::wait_for(5_000, || {
        (!screen().contains("Review: Alpha")).then_some(())
    })
    .unwrap_or_else(|| panic!("v did not close the view:\n{}", screen()));
    let s = crate::mux_support::wait_for(20_000, || {
        let s = screen();
        row(&s, "Alpha")
            .is_some_and(|r| r.contains("3f · 2u"))
            .then_some(s)
    })
    .unwrap_or_else(|| panic!("the column did not read Alpha again:\n{}", screen()));
    assert!(
        row(&s, "Beta").unwrap().contains("⚠ +1 −1 · 1 files"),
        "{s}"
    );
    t.server.tmux(&["send-keys", "-t", "=coord:mon", "q"]);
}

/// A worker the board shows working (a task just handed to it) is not landed: refused, nothing
/// changed, the queue stopped there.
#[test]
fn land_refuses_a_worker_that_is_working() {
    let t = Team::new();
    checkout(&t);
    let (_, a) = spawn(&t, "A", None);
    commit(&a, "a.txt", b"a\n", "a");
    let (code, out, err) = run(&t, "reply", &["A", "start on the next task"]);
    assert_eq!(code, 0, "{out} {err}");
    let main_before = git(&t.root, &["rev-parse", "HEAD"]).trim().to_string();
    let (code, r) = json(&t, "land", &["A"]);
    assert_eq!(code, 3, "{r}");
    assert_eq!(r["steps"][0]["outcome"], "refused");
    assert!(
        r["steps"][0]["detail"]
            .as_str()
            .unwrap()
            .contains("working"),
        "{r}"
    );
    assert_eq!(git(&t.root, &["rev-parse", "HEAD"]).trim(), main_before);
}
