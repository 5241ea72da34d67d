//! close-worker's config writes next to a writer that takes no lock (as the Intercom extension
//! rewrites config): every stage the tool reports is on disk, every change of the other writer
//! survives; and writers killed mid-write leave no temp file behind after the next run.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::close_support;
use crate::pi_support;
use crate::scan_support;

use std::os::unix::fs::PermissionsExt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use close_support::*;
use scan_support::*;
use serde_json::{json, Value};

/// One lockless rewrite, the way Intercom writes: read, change, temp file, rename.
///
/// A file that lacks this writer's own previous change (`prev`) can only be a replacement of
/// ours shown for the instant of a compare-and-swap that is being undone: every file we keep is
/// made from the current one. Intercom reading it then would drop that change — the documented
/// gap (docs/interop.md §1), which a loaded machine widens by preempting us between the swap and
/// the swap-back. This writer counts such a read in `windows` and waits for the swap-back; a
/// file that never gets the change back is a write of ours that overwrote it, and fails.
/// Returns whether it wrote.
fn rewrite(path: &std::path::Path, i: usize, prev: Option<usize>, windows: &AtomicUsize) -> bool {
    let read = || {
        let bytes = std::fs::read(path).ok()?;
        serde_json::from_slice::<Value>(&bytes).ok()
    };
    let has_previous = |v: &Value| prev.is_none_or(|p| v["log"][format!("w{p}")] == json!(true));
    let Some(mut v) = read() else {
        return false;
    };
    if !has_previous(&v) {
        windows.fetch_add(1, Ordering::SeqCst);
        v = crate::mux_support::wait_for(5_000, || read().filter(has_previous))
            .unwrap_or_else(|| panic!("w{prev:?} was overwritten, not swapped back"));
    }
    if !v["log"].is_object() {
        v["log"] = json!({});
    }
    v["log"][format!("w{i}")] = json!(true);
    let tmp = path.with_extension(format!("json.{}.tmp", uuid::Uuid::new_v4()));
    let mut text = serde_json::to_string_pretty(&v).unwrap();
    text.push('\n');
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
    true
}

/// The other writer pauses 3 ms between rewrites, as a writer that is busy but not stuck does: a
/// rewrite that loses races to it keeps trying (for up to 3 s) and gets through, so every run
/// must end `closed` and `recorded: true` even on a loaded machine (where a count of 20 tries ran
/// out now and then), and what it reports must be on disk.
#[test]
fn a_lockless_writer_loses_nothing_and_every_reported_stage_is_on_disk() {
    const REWRITES: usize = 1000;
    let env = Env::new().with_system_path();
    let file = setup(&env, None);
    let cfg_path = env.path("root/.pi-intercom/config.json");
    let done = AtomicBool::new(false);
    let count = AtomicUsize::new(0);
    let windows = AtomicUsize::new(0);
    let reports: Vec<Value> = std::thread::scope(|sc| {
        sc.spawn(|| {
            let mut prev = None;
            for i in 0..REWRITES {
                if rewrite(&cfg_path, i, prev, &windows) {
                    prev = Some(i);
                }
                count.fetch_add(1, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(3));
            }
            done.store(true, Ordering::SeqCst);
        });
        let mut reports = Vec::new();
        // Repeated closes while the writer runs: a fresh worker pane each time.
        while !done.load(Ordering::SeqCst) || reports.is_empty() {
            let server = worker(&env, &file, true);
            server.new_session("bystander", &env.path("root"), &[]);
            let (code, report, err) = close(&env, &server, &["Worker", "--deadline-secs", "30"]);
            let handoff = std::fs::read_to_string(env.path("handoff.out")).unwrap_or_default();
            assert_eq!(code, 0, "{report} {err} (the handoff said: {handoff:?})");
            assert_eq!(report["state"], "closed", "{report}");
            assert_eq!(report["recorded"], true, "{report}");
            assert_eq!(panes(&server), 1);
            // Each run's reported stage is on disk right after it, with its own handoff.
            let w = &config(&env)["agents"][1];
            assert_eq!(w["closeJob"]["jobId"], report["jobId"], "{w}");
            assert_eq!(w["closeJob"]["state"], "closed", "{w}");
            assert_eq!(w["handoff"]["jobId"], report["jobId"], "{w}");
            reports.push(report);
        }
        reports
    });
    assert_eq!(count.load(Ordering::SeqCst), REWRITES);
    let c = config(&env);
    // The last reported stage is the one on disk, with its own handoff.
    let last = reports.last().unwrap();
    let w = &c["agents"][1];
    assert_eq!(w["closeJob"]["jobId"], last["jobId"]);
    assert_eq!(w["closeJob"]["state"], "closed");
    assert_eq!(w["handoff"]["jobId"], last["jobId"]);
    // Every change of the other writer survived.
    let log = c["log"].as_object().unwrap();
    let missing: Vec<usize> = (0..REWRITES)
        .filter(|i| !log.contains_key(&format!("w{i}")))
        .collect();
    assert!(missing.is_empty(), "lost rewrites: {missing:?}");
    eprintln!(
        "{} closes during {REWRITES} lockless rewrites: nothing lost ({} reads inside a swap being undone)",
        reports.len(),
        windows.load(Ordering::SeqCst)
    );
}

/// `handoff`, `close-worker` and the config rewrite killed with SIGKILL at random moments: the
/// next run leaves no temp file of ours, the config is whole and valid, no key is lost, and a
/// handoff keeps the file's mode and a huge integer.
#[test]
fn killed_writers_leave_no_temp_files_torn_files_or_lost_keys() {
    let env = Env::new().with_system_path();
    let file = setup(&env, None);
    let cfg_path = env.path("root/.pi-intercom/config.json");
    // A huge integer and mode 0644, as a person's checkout has them.
    let mut v = config(&env);
    v["big"] = json!(0);
    let text = serde_json::to_string_pretty(&v)
        .unwrap()
        .replace("\"big\": 0", "\"big\": 123456789012345678901234567890");
    std::fs::write(&cfg_path, format!("{text}\n")).unwrap();
    std::fs::set_permissions(&cfg_path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let server = worker(&env, &file, false);
    let sock = server.sock.display().to_string();
    let bin = env!("CARGO_BIN_EXE_intercom-pane");
    let mut kills = 0;
    for round in 0..40u64 {
        // A close run killed after a varying delay (mid config write, mid job record, ...).
        let mut child = std::process::Command::new(bin)
            .args(layout_args(
                &env,
                &["close-worker"],
                &[
                    "--tmux-socket",
                    &sock,
                    "Worker",
                    "--deadline-secs",
                    "3",
                    "--json",
                ],
            ))
            .current_dir(env.dir.path())
            .env("HOME", env.path("home"))
            .env("TMUX_TMPDIR", env.path("tmux-tmp"))
            .env_remove("TMUX")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(20 + (round * 7) % 150));
        let _ = child.kill();
        let _ = child.wait();
        kills += 1;
        // The killed run's job (if it got that far) is a dead run's: the next run marks it.
        let c = config(&env);
        assert_eq!(c["agents"].as_array().unwrap().len(), 2, "no torn file");
        let _ = close(&env, &server, &["Worker", "--recover", "--json"]);
    }
    // One more writer (a close that starts, then times out): it sweeps what the killed ones left.
    let _ = close(&env, &server, &["Worker", "--recover", "--json"]);
    let (code, report, _) = close(&env, &server, &["Worker", "--deadline-secs", "1", "--json"]);
    assert_eq!(
        (code, report["state"].as_str()),
        (1, Some("timed_out")),
        "{report}"
    );
    let o = env.run(&layout_args(
        &env,
        &["close-worker"],
        &["--tmux-socket", &sock, "Worker", "--dry-run"],
    ));
    assert!(o.status.code().is_some());
    let text = std::fs::read_to_string(&cfg_path).unwrap();
    assert!(
        text.contains("\"big\": 123456789012345678901234567890"),
        "{text}"
    );
    let mode = std::fs::metadata(&cfg_path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o644);
    let c: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(c["agents"][1]["name"], "Worker");
    for dir in ["root/.pi-intercom", "root/.pi-intercom/jobs"] {
        let Ok(rd) = std::fs::read_dir(env.path(dir)) else {
            continue;
        };
        let temps: Vec<String> = rd
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp"))
            .collect();
        assert!(temps.is_empty(), "{dir}: {temps:?} after {kills} kills");
    }
    let ignore = std::fs::read_to_string(env.path("root/.pi-intercom/.gitignore")).unwrap();
    for l in ["/seats/", "/jobs/", "/monitor-*.json", "*.tmp", "*.lock"] {
        assert!(ignore.lines().any(|x| x == l), "{ignore}");
    }
}

/// `register` killed with SIGKILL at random moments, hundreds of times: after the next run its
/// folder holds no temp file and the registration is whole. The registers are started by the pi
/// stand-in (`register` accepts only its own pi), in batches that each finish well inside the
/// stand-in's 10 s bound.
#[test]
fn killed_registers_leave_no_temp_files_after_the_next_run() {
    const BATCHES: u64 = 5;
    const PER_BATCH: u64 = 200;
    let env = Env::new().with_system_path();
    setup(&env, None);
    let mut pi = pi_support::FakePi::start(&env);
    let sys = env.system_config();
    let root = env.path("root").display().to_string();
    let bin = env!("CARGO_BIN_EXE_intercom-pane");
    let pid = pi.pid().to_string();
    // Each register is killed after 0–5 ms: before, during and after its write.
    let script = format!(
        "for i in $(seq \"$1\" \"$2\"); do {bin} register --config {sys} --event agent_start --seq \"$i\" \
         --pi-pid {pid} --session-id {ID} --cwd {root} >/dev/null 2>&1 & p=$!; \
         sleep 0.00$((i % 6)); kill -9 $p 2>/dev/null; wait $p 2>/dev/null; done; true"
    );
    for b in 0..BATCHES {
        let (from, to) = (b * PER_BATCH + 1, (b + 1) * PER_BATCH);
        let o = pi.run(
            "/bin/bash",
            &["-c", &script, "loop", &from.to_string(), &to.to_string()],
        );
        assert!(o.status.success(), "{o:?}");
    }
    let kills = BATCHES * PER_BATCH;
    let left = walk(&env.path("root/.pi-intercom/seats"))
        .iter()
        .filter(|p| p.to_string_lossy().ends_with(".tmp"))
        .count();
    eprintln!("{kills} killed registers left {left} temp files before the next run");
    let seq = (kills + 1).to_string();
    let o = pi.register(
        &env,
        &[
            "--event",
            "agent_start",
            "--seq",
            &seq,
            "--pi-pid",
            &pid,
            "--session-id",
            ID,
            "--cwd",
            &root,
        ],
    );
    assert!(o.status.success(), "{o:?}");
    let seats = env.path("root/.pi-intercom/seats");
    let mut regs = 0;
    for e in walk(&seats) {
        let name = e.file_name().unwrap().to_string_lossy().into_owned();
        assert!(!name.ends_with(".tmp"), "left behind: {}", e.display());
        if name.ends_with(".json") {
            let v: Value = serde_json::from_slice(&std::fs::read(&e).unwrap()).unwrap();
            assert_eq!(v["sessionId"], ID);
            regs += 1;
        }
    }
    assert_eq!(regs, 1);
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}
