//! SIGKILL loops for the writers `close_writes.rs` does not kill: `handoff` (run by the worker's
//! own pi, so the loop runs inside the worker's pane) and the Seen write (`board/seen.json`).
//! After the next writer no temp file of ours is left, no file is ever torn, no key is lost, and
//! a handoff keeps the config's mode, its owner and a huge integer it does not own.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::close_support;
use crate::mux_support;
use crate::pi_support;
use crate::scan_support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use close_support::*;
use mux_support::{wait_for, TmuxServer};
use scan_support::*;
use serde_json::{json, Value};

const BIG: &str = "123456789012345678901234567890";

fn temps(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect()
}

/// The handoffs are started by the worker's pi in its pane (`handoff` accepts no one else) and
/// each is killed after 0–110 ms (one takes about 90 ms): before, during and after its config write. Between kills the
/// loop reopens the job (`sed -i`, a lockless writer like Intercom) so every handoff gets as far
/// as writing. Meanwhile the test reads the config every millisecond: it must always be whole.
#[test]
fn killed_handoffs_leave_no_temp_files_torn_config_or_lost_keys() {
    const KILLS: usize = 100;
    let env = Env::new().with_system_path();
    let file = setup(&env, None);
    let cfg_path = env.path("root/.pi-intercom/config.json");
    let bin = env!("CARGO_BIN_EXE_intercom-pane");
    let sys = env.system_config();
    let root = env.path("root").display().to_string();
    let (go, loop_sh, out, rc) = (
        env.path("go"),
        env.path("loop.sh"),
        env.path("loop.out"),
        env.path("loop.rc"),
    );
    let script = format!(
        "{bin} register --config {sys} --event session_start --seq 1 --pi-pid $$ --session-id {ID} \
         --cwd {root} --session-file {file} >/dev/null; \
         while [ ! -e {go} ]; do sleep 0.05; done; bash {loop_sh} >{out} 2>&1; echo $? >{rc}; sleep 600",
        file = file.display(),
        go = go.display(),
        loop_sh = loop_sh.display(),
        out = out.display(),
        rc = rc.display(),
    );
    let argv = pi_support::pi_pane_argv(&env.path("pi-bin"), &script);
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let server = TmuxServer::start("work", &env.path("root"), &argv);
    wait_registered(&env.path("root/.pi-intercom/seats"));
    // A close job whose record names this pi: a close that times out (the pi does not answer).
    let (code, report, err) = close(&env, &server, &["Worker", "--deadline-secs", "1", "--json"]);
    assert_eq!(code, 1, "{report} {err}");
    let job = report["jobId"].as_str().unwrap().to_string();
    // Reopen it, and give the config a huge integer, a key the tool does not own and mode 0644.
    let mut v = config(&env);
    v["big"] = json!(0);
    v["agents"][1]["closeJob"]["state"] = json!("awaiting_handoff");
    v["agents"][1]["x-note"] = json!({"keep": 1});
    let text = serde_json::to_string_pretty(&v)
        .unwrap()
        .replace("\"big\": 0", &format!("\"big\": {BIG}"));
    std::fs::write(&cfg_path, format!("{text}\n")).unwrap();
    std::fs::set_permissions(&cfg_path, std::fs::Permissions::from_mode(0o644)).unwrap();
    // And, when the test may, another owner (a checkout shared with a person's account).
    let root_user = nix::unistd::geteuid().is_root();
    if root_user {
        std::os::unix::fs::chown(&cfg_path, Some(4321), Some(4321)).unwrap();
    }
    let cfg = cfg_path.display();
    let dir = env.path("root/.pi-intercom").display().to_string();
    let reopen = format!("sed -i 's/\"awaiting_settlement\"/\"awaiting_handoff\"/' {cfg}");
    std::fs::write(
        &loop_sh,
        format!(
            "ok=0; killed=0; mid=0; other=0; for i in $(seq 1 {KILLS}); do {reopen}; \
             {bin} handoff --job {job} --summary \"handoff $i\" --root {root} >/dev/null 2>&1 & p=$!; \
             sleep $(printf 0.%03d $(( (i * 37) % 111 ))); kill -9 $p 2>/dev/null; wait $p 2>/dev/null; \
             case $? in 0) ok=$((ok+1));; 137) killed=$((killed+1));; *) other=$((other+1));; esac; \
             ls {dir} | grep -q '[.]tmp$' && mid=$((mid+1)); done; \
             echo \"$ok completed, $killed killed ($mid left a temp file), $other refused; $(ls {dir} | grep -c '[.]tmp$') temp files before the next run;\" >{left}; {reopen}; \
             t=$EPOCHREALTIME; {bin} handoff --job {job} --summary final --root {root}; r=$?; \
             echo \"the next handoff took $(( (${{EPOCHREALTIME/./}} - ${{t/./}}) / 1000 )) ms\" >>{left}; exit $r\n",
            left = env.path("left").display(),
        ),
    )
    .unwrap();
    let finished = AtomicBool::new(false);
    let reads = AtomicUsize::new(0);
    let started = Instant::now();
    std::thread::scope(|sc| {
        sc.spawn(|| {
            while !finished.load(Ordering::SeqCst) {
                let text = std::fs::read_to_string(&cfg_path).unwrap();
                let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("torn: {e}"));
                assert_eq!(v["agents"].as_array().map(Vec::len), Some(2), "{text}");
                assert!(text.contains(&format!("\"big\": {BIG}")), "{text}");
                assert_eq!(v["agents"][1]["x-note"], json!({"keep": 1}), "{text}");
                reads.fetch_add(1, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(1));
            }
        });
        std::fs::write(&go, "").unwrap();
        let done = wait_for(120_000, || {
            std::fs::read_to_string(&rc)
                .ok()
                .filter(|t| t.ends_with('\n'))
        });
        finished.store(true, Ordering::SeqCst);
        let log = std::fs::read_to_string(&out).unwrap_or_default();
        assert_eq!(done.as_deref(), Some("0\n"), "the final handoff: {log}");
    });
    let left = std::fs::read_to_string(env.path("left")).unwrap_or_default();
    eprintln!(
        "{KILLS} handoffs in {:.1} s: {}; {} whole reads",
        started.elapsed().as_secs_f64(),
        left.trim().replace('\n', " "),
        reads.load(Ordering::SeqCst)
    );
    let text = std::fs::read_to_string(&cfg_path).unwrap();
    assert!(text.contains(&format!("\"big\": {BIG}")), "{text}");
    let mode = std::fs::metadata(&cfg_path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o644);
    if root_user {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(&cfg_path).unwrap();
        assert_eq!((m.uid(), m.gid()), (4321, 4321), "the owner is kept");
    }
    let c: Value = serde_json::from_str(&text).unwrap();
    let w = &c["agents"][1];
    assert_eq!(w["handoff"]["summary"], "final", "{text}");
    assert_eq!(w["handoff"]["jobId"], job.as_str());
    assert_eq!(w["closeJob"]["state"], "awaiting_settlement");
    assert_eq!(w["x-note"], json!({"keep": 1}));
    assert_eq!(c["agents"][0]["name"], "Coordinator");
    let left = temps(&env.path("root/.pi-intercom"));
    assert!(left.is_empty(), "left behind: {:?}", described(&env, &left));
}

/// Each temp file left behind with its inode and owner, and what it holds.
fn described(env: &Env, left: &[String]) -> Vec<String> {
    use std::os::unix::fs::MetadataExt;
    left.iter()
        .map(|n| {
            let p = env.path("root/.pi-intercom").join(n);
            let m = std::fs::metadata(&p).unwrap();
            let text = std::fs::read_to_string(&p).unwrap_or_default();
            let summary = serde_json::from_str::<Value>(&text)
                .map(|v| v["agents"][1]["handoff"]["summary"].to_string())
                .unwrap_or_else(|_| "not JSON".into());
            format!("{n}: inode {}, uid {}, handoff {summary}", m.ino(), m.uid())
        })
        .collect()
}

/// Set by `killed_seen_writes_leave_no_temp_files_or_torn_file` for the copies of this test
/// binary it starts and kills: each copy runs `seen_writer_child`, which rewrites seen.json.
const CHILD_ROOT: &str = "INTERCOM_PANE_TEST_SEEN_CHILD_ROOT";
const AT: &str = "2026-11-29T10:00:00.000Z";

/// Not a test on its own: a writer for the kill loop below (does nothing unless started by it).
#[test]
fn seen_writer_child() {
    let Some(root) = std::env::var_os(CHILD_ROOT) else {
        return;
    };
    let root = PathBuf::from(root);
    for i in 0..100_000u32 {
        let _ = intercom_pane::seam::actions::seen::set_seen(
            &root,
            &format!("k/{}", i % 40),
            AT,
            i % 3 != 0,
        );
    }
}

/// Writers of `board/seen.json` killed after 1–12 ms, while each rewrites the file as fast as it
/// can: the file is whole at every read, the next write leaves no temp file, and a mark no killed
/// writer touched survives.
#[test]
fn killed_seen_writes_leave_no_temp_files_or_torn_file() {
    const KILLS: u64 = 300;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    intercom_pane::seam::actions::seen::set_seen(root, "keep/me", AT, true).unwrap();
    let seen = root.join("board/seen.json");
    let me = std::env::current_exe().unwrap();
    let finished = AtomicBool::new(false);
    let started = Instant::now();
    let mut left_max = 0;
    std::thread::scope(|sc| {
        sc.spawn(|| {
            while !finished.load(Ordering::SeqCst) {
                let bytes = std::fs::read(&seen).unwrap();
                let v: Value = serde_json::from_slice(&bytes)
                    .unwrap_or_else(|e| panic!("torn: {e}: {}", String::from_utf8_lossy(&bytes)));
                assert_eq!(v["keep/me"], AT);
                std::thread::sleep(Duration::from_millis(1));
            }
        });
        for round in 0..KILLS {
            let mut child = std::process::Command::new(&me)
                .args([
                    "--exact",
                    "close_kills::seen_writer_child",
                    "--test-threads=1",
                    "--quiet",
                ])
                .env(CHILD_ROOT, root)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            std::thread::sleep(Duration::from_micros(1000 + (round * 3701) % 11_000));
            let _ = child.kill();
            let _ = child.wait();
            left_max = left_max.max(temps(&root.join("board")).len());
        }
        finished.store(true, Ordering::SeqCst);
    });
    let left_before = temps(&root.join("board")).len();
    intercom_pane::seam::actions::seen::set_seen(root, "k/next", AT, true).unwrap();
    eprintln!(
        "{KILLS} killed Seen writers in {:.1} s left {left_before} temp files before the next write (at most {left_max} at once)",
        started.elapsed().as_secs_f64()
    );
    let left = temps(&root.join("board"));
    assert!(left.is_empty(), "left behind: {left:?}");
    let v: Value = serde_json::from_slice(&std::fs::read(&seen).unwrap()).unwrap();
    assert_eq!(v["keep/me"], AT);
    assert_eq!(v["k/next"], AT);
}
