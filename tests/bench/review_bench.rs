//! Benchmark (ignored by default): `review NAME --json` on a 10,000-file repository whose worker
//! changed 500 files in its worktree (300 committed, 200 not), the whole command: one scan of a
//! one-worker roster, then git (rev-parse, log, numstat twice, ls-files, merge check). Target:
//! under 300 ms (issue 37). Prints the median of 7 runs.
//! Run: cargo test --release --test bench review_bench -- --ignored --nocapture
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::{Duration, Instant};

use crate::scan_support::{git, layout_args, Env};

const FILES: usize = 10_000;
const CHANGED: usize = 500;
const COMMITTED: usize = 300;
const ROUNDS: usize = 7;

#[test]
#[ignore = "benchmark: cargo test --release --test bench review_bench -- --ignored --nocapture"]
fn review_of_500_changed_files_among_10000() {
    let env = Env::new().with_system_path();
    let root = env.path("root");
    std::fs::create_dir_all(&root).unwrap();
    let o = env.run(&["init", "--root", "root", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    git(&root, &["init", "-q", "-b", "main"]);
    for i in 0..FILES {
        let d = root.join(format!("d{}", i / 100));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join(format!("f{i}.txt")), format!("line {i}\n")).unwrap();
    }
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "base"]);
    git(&root, &["worktree", "add", "-q", "-b", "w", "wt"]);
    let wt = root.join("wt");
    for i in 0..CHANGED {
        let f = wt.join(format!("d{}/f{i}.txt", i / 100));
        std::fs::write(&f, format!("line {i}\nchanged\n")).unwrap();
    }
    let committed: Vec<String> = (0..COMMITTED)
        .map(|i| format!("d{}/f{i}.txt", i / 100))
        .collect();
    let mut add = vec!["add", "--"];
    add.extend(committed.iter().map(String::as_str));
    git(&wt, &add);
    git(&wt, &["commit", "-qm", "work"]);
    // The worker in the roster, working in the worktree.
    let cfg_path = root.join(".pi-intercom/config.json");
    let mut cfg: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&cfg_path).unwrap()).unwrap();
    cfg["agents"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({
        "sessionId": "0190aaaa-0000-7000-8000-0000000000aa", "name": "W", "description": "w",
        "port": 47123, "projectDirectory": "wt", "coordinator": false}));
    std::fs::write(&cfg_path, serde_json::to_vec_pretty(&cfg).unwrap()).unwrap();

    let args = layout_args(&env, &["review"], &["W", "--json"]);
    let mut times: Vec<Duration> = Vec::new();
    for _ in 0..ROUNDS {
        let t0 = Instant::now();
        let o = env.run(&args);
        times.push(t0.elapsed());
        assert_eq!(o.status.code(), Some(0), "{o:?}");
        let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(r["totals"]["files"], CHANGED as u64, "{}", r["totals"]);
        assert_eq!(r["totals"]["committed"], COMMITTED as u64);
    }
    times.sort();
    let median = times[ROUNDS / 2];
    println!(
        "review, {FILES} files, {CHANGED} changed: median {} ms (min {} ms, max {} ms)",
        median.as_millis(),
        times[0].as_millis(),
        times[ROUNDS - 1].as_millis()
    );
    assert!(median < Duration::from_millis(300), "median {median:?}");
}
