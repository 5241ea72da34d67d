//! Hostile Intercom roots built on real files: links, FIFOs, oversize and huge sparse files,
//! hundreds of logs, bad bytes. Every case must return a clear code in bounded time, never panic,
//! never block and never write.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::intercom_support;
use crate::io_count::bytes_read;

use intercom_support::listing;

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

use intercom_pane::seam::board::intercom::{
    project_worker, worker_status_json, EventIndex, Evidence, ObservedStatus,
};
use intercom_pane::seam::clock::{format_iso, parse_strict, Ms};
use intercom_pane::seam::evidence::config::{self, ConfigError};
use intercom_pane::seam::evidence::observations::{self, read_logs};
use intercom_pane::seam::evidence::reports::{read_reports, report_file_name};
use intercom_pane::seam::evidence::ScanMemory;
use intercom_pane::seam::states::ReportStatus;
use serde_json::{json, Value};
use tempfile::TempDir;

const B1: &str = "01a2f000-0000-7000-8000-0000000000b1";
const B2: &str = "01a2f000-0000-7000-8000-0000000000b2";
const B3: &str = "01a2f000-0000-7000-8000-0000000000b3";

/// Run `f` on a thread and fail the test if it takes longer than `secs` (e.g. blocked on a FIFO).
/// Hang guard, not a product deadline: a read that blocks (a FIFO opened without
/// `O_NONBLOCK`) would never return. Byte budgets are checked as bytes read, not as time.
const HANG_GUARD_SECS: u64 = 30;
/// Room for the reads that are not file contents (the thread's own counter, `/proc` lookups).
const READ_SLACK: u64 = 64 * 1024;

fn within<T: Send + 'static>(secs: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(secs))
        .expect("did not finish in time (blocked?)")
}

fn agent(id: &str, name: &str, coordinator: bool, port: u16) -> Value {
    json!({"sessionId": id, "name": name, "coordinator": coordinator,
           "description": format!("{name} duties"), "port": port, "projectDirectory": "."})
}

fn base_config() -> Value {
    json!({"version": 1, "multiplexer": "tmux", "agents": [
        agent("01a2f000-0000-7000-8000-00000000c0de", "Coordinator", true, 41001),
        agent(B1, "Builder", false, 41002),
        agent(B2, "Reviewer", false, 41003),
        agent(B3, "Docs", false, 41004),
    ]})
}

/// A root with `.pi-intercom/{config.json,logs,reports}`.
fn make_root(cfg: &Value) -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join(".pi-intercom");
    std::fs::create_dir_all(state.join("logs")).unwrap();
    std::fs::create_dir_all(state.join("reports")).unwrap();
    std::fs::write(
        state.join("config.json"),
        serde_json::to_vec_pretty(cfg).unwrap(),
    )
    .unwrap();
    dir
}

fn logs(root: &Path) -> PathBuf {
    root.join(".pi-intercom/logs")
}

fn writer(n: u32) -> String {
    format!("0190aaaa-0000-7000-8000-{n:012x}")
}

fn ts(s: &str) -> Ms {
    parse_strict(s).unwrap()
}

/// One record line (with newline).
fn rec(at: Ms, w: &str, session: &str, event: &str, extra: &str) -> String {
    format!(
        "{{\"version\":1,\"timestamp\":\"{}\",\"writerId\":\"{w}\",\"sessionId\":\"{session}\",\"event\":\"{event}\"{extra}}}\n",
        format_iso(at)
    )
}

fn fifo(path: &Path) {
    nix::unistd::mkfifo(path, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
}

fn code(r: Result<impl std::fmt::Debug, ConfigError>) -> &'static str {
    r.expect_err("should be refused").code()
}

#[test]
fn linked_state_folder_is_refused_everywhere() {
    let elsewhere = make_root(&base_config());
    let root = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(
        elsewhere.path().join(".pi-intercom"),
        root.path().join(".pi-intercom"),
    )
    .unwrap();
    std::fs::create_dir_all(root.path().join("sub/dir")).unwrap();
    let before = listing(root.path());

    assert_eq!(code(config::load(root.path())), "config_link_refused");
    let e = config::discover_root(&root.path().join("sub/dir")).unwrap_err();
    assert_eq!(e.code(), "config_link_refused");
    assert!(e.message.contains(".pi-intercom"), "{}", e.message);
    let l = read_logs(root.path());
    assert_eq!(l.errors, ["logs_unavailable"]);
    assert!(l.events.is_empty());
    assert_eq!(
        read_reports(root.path(), &[B1], None).errors,
        ["reports_unavailable"]
    );
    assert_eq!(listing(root.path()), before);
}

#[test]
fn linked_config_or_logs_folder_is_refused() {
    let root = make_root(&base_config());
    let state = root.path().join(".pi-intercom");
    std::fs::rename(state.join("config.json"), root.path().join("real.json")).unwrap();
    std::os::unix::fs::symlink(root.path().join("real.json"), state.join("config.json")).unwrap();
    std::fs::remove_dir(state.join("logs")).unwrap();
    std::fs::create_dir(root.path().join("reallogs")).unwrap();
    std::fs::write(
        root.path()
            .join("reallogs")
            .join(format!("writer-{}.jsonl", writer(1))),
        rec(1_000, &writer(1), B1, "runtime.ready", ",\"busy\":false"),
    )
    .unwrap();
    std::os::unix::fs::symlink(root.path().join("reallogs"), state.join("logs")).unwrap();
    let before = listing(root.path());

    assert_eq!(code(config::load(root.path())), "config_link_refused");
    assert_eq!(
        code(config::discover_root(root.path())),
        "config_link_refused"
    );
    let l = read_logs(root.path());
    assert_eq!(l.errors, ["logs_unavailable"]);
    assert!(l.events.is_empty());
    assert_eq!(listing(root.path()), before);
}

#[test]
fn fifos_never_block() {
    let root = make_root(&base_config());
    let state = root.path().join(".pi-intercom");
    // A FIFO named like a log, next to a real log.
    fifo(&logs(root.path()).join(format!("writer-{}.jsonl", writer(9))));
    std::fs::write(
        logs(root.path()).join(format!("writer-{}.jsonl", writer(1))),
        rec(1_000, &writer(1), B1, "runtime.ready", ",\"busy\":false"),
    )
    .unwrap();
    // A FIFO where a report should be.
    fifo(&state.join("reports").join(report_file_name(B1)));
    let before = listing(root.path());

    let r = root.path().to_path_buf();
    let (l, reps) = within(HANG_GUARD_SECS, move || {
        (read_logs(&r), read_reports(&r, &[B1, B2, B3], None))
    });
    assert_eq!(l.errors, ["log_read_failed"]);
    assert_eq!(l.events.len(), 1);
    assert_eq!(reps.errors, ["report_read_failed"]);
    assert!(reps.reports.is_empty());

    assert_eq!(listing(root.path()), before);

    // And a FIFO as config.json.
    std::fs::remove_file(state.join("config.json")).unwrap();
    fifo(&state.join("config.json"));
    let before = listing(root.path());
    let r = root.path().to_path_buf();
    let (load, disc) = within(HANG_GUARD_SECS, move || {
        (
            config::load(&r),
            config::discover_root(&r.join(".pi-intercom")),
        )
    });
    assert_eq!(code(load), "config_fifo_refused");
    assert_eq!(code(disc), "config_fifo_refused");
    assert_eq!(listing(root.path()), before);
}

#[test]
fn oversize_config_is_refused() {
    let mut cfg = base_config();
    cfg["padding"] = json!("x".repeat(2 << 20));
    let root = make_root(&cfg);
    let before = listing(root.path());
    let r = root.path().to_path_buf();
    let ((e, disc), read) = within(HANG_GUARD_SECS, move || {
        bytes_read(|| (config::load(&r).unwrap_err(), config::discover_root(&r)))
    });
    assert_eq!(e.code(), "config_oversize");
    assert!(e.message.contains("1048576"), "{}", e.message);
    assert_eq!(code(disc), "config_oversize");
    // The 2 MiB file is refused from its size: at most the cap is read, twice.
    assert!(
        read <= 2 * (config::MAX_CONFIG_BYTES + 1) + READ_SLACK,
        "read {read} bytes"
    );
    assert_eq!(listing(root.path()), before);
}

#[test]
fn too_many_agents_is_refused() {
    let mut list = vec![agent("coord", "Coordinator", true, 41000)];
    for i in 0..299 {
        list.push(agent(
            &format!("w{i}"),
            &format!("Worker {i}"),
            false,
            42000 + i,
        ));
    }
    let root = make_root(&json!({"version": 1, "agents": list}));
    let e = config::load(root.path()).unwrap_err();
    assert_eq!(e.code(), "config_too_many_agents");
    assert!(e.message.contains("300"), "{}", e.message);
    // 256 is still fine.
    list.truncate(256);
    let root = make_root(&json!({"version": 1, "agents": list}));
    assert_eq!(config::load(root.path()).unwrap().agents.len(), 256);
}

#[test]
fn names_differing_only_in_case_are_refused() {
    let mut cfg = base_config();
    cfg["agents"][2]["name"] = json!("builder");
    let root = make_root(&cfg);
    let before = listing(root.path());
    let e = config::load(root.path()).unwrap_err();
    assert_eq!(e.code(), "config_invalid");
    assert!(e.message.contains("agents[2].name"), "{}", e.message);
    assert!(e.message.contains("\"builder\""), "{}", e.message);
    assert_eq!(listing(root.path()), before);
}

#[test]
fn control_characters_and_bad_bytes_in_config() {
    let mut cfg = base_config();
    cfg["agents"][1]["name"] = json!("Evil\u{1b}]0;pwned\u{7}\u{202e}");
    let root = make_root(&cfg);
    let e = config::load(root.path()).unwrap_err();
    assert_eq!(e.code(), "config_invalid");
    assert!(e.message.contains("agents[1].name"), "{}", e.message);
    assert!(
        !e.message.chars().any(|c| c.is_control() || c == '\u{202e}'),
        "{:?}",
        e.message
    );

    // Invalid UTF-8 inside a JSON string.
    let mut bytes = serde_json::to_vec(&base_config()).unwrap();
    let at = bytes.windows(7).position(|w| w == b"Builder").unwrap();
    bytes[at + 1] = 0xff;
    std::fs::write(root.path().join(".pi-intercom/config.json"), &bytes).unwrap();
    assert_eq!(code(config::load(root.path())), "config_not_json");
}

#[test]
fn discovery_climbs_only_over_absence() {
    let root = make_root(&base_config());
    // A nested folder with `.pi-intercom` but no config (a worker's own logs) is climbed over.
    let deep = root.path().join("services/api/src");
    std::fs::create_dir_all(deep.join(".pi-intercom/logs")).unwrap();
    assert_eq!(
        config::discover_root(&deep).unwrap().as_deref(),
        Some(root.path())
    );
    // A `.pi-intercom` that is a plain file is an error, not a reason to climb.
    let odd = root.path().join("odd");
    std::fs::create_dir_all(&odd).unwrap();
    std::fs::write(odd.join(".pi-intercom"), b"").unwrap();
    assert_eq!(code(config::discover_root(&odd)), "config_not_directory");
    // An invalid config below stops the walk too.
    let bad = root.path().join("bad");
    std::fs::create_dir_all(bad.join(".pi-intercom")).unwrap();
    std::fs::write(bad.join(".pi-intercom/config.json"), b"{\"version\":2}").unwrap();
    assert_eq!(code(config::discover_root(&bad)), "config_invalid");
    // Nothing anywhere above a fresh temp dir (when the machine has none either).
    let empty = tempfile::tempdir().unwrap();
    if !empty
        .path()
        .ancestors()
        .any(|a| a.join(".pi-intercom").exists())
    {
        assert_eq!(config::discover_root(empty.path()).unwrap(), None);
    }
}

#[test]
fn six_hundred_log_files_are_bounded() {
    let root = make_root(&base_config());
    let dir = logs(root.path());
    for i in 0..600u32 {
        std::fs::write(
            dir.join(format!("writer-{}.jsonl", writer(i))),
            rec(
                1_000 + i as Ms,
                &writer(i),
                B1,
                "runtime.ready",
                ",\"busy\":false",
            ),
        )
        .unwrap();
    }
    let before = listing(root.path());
    let r = root.path().to_path_buf();
    let (l, read) = within(HANG_GUARD_SECS, move || bytes_read(|| read_logs(&r)));
    assert!(
        read <= observations::MAX_TAIL_TOTAL + READ_SLACK,
        "read {read} bytes"
    );
    assert!(l.truncated);
    assert!(l.errors.is_empty(), "{:?}", l.errors);
    // Only 32 files are opened, each holding one record.
    assert_eq!(l.events.len(), observations::MAX_FILES);
    assert_eq!(listing(root.path()), before);
}

#[test]
fn byte_budget_prefers_the_newest_files_and_keeps_500_events() {
    let root = make_root(&base_config());
    let dir = logs(root.path());
    let base = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
    for i in 0..24u32 {
        let w = writer(i);
        let mut body = String::new();
        let mut n = 0;
        while body.len() < 200 * 1024 {
            // Newer files hold newer records.
            let at = 1_000_000 * (i as Ms + 1) + n;
            body.push_str(&rec(
                at,
                &w,
                B1,
                "host.activity",
                ",\"busy\":true,\"phase\":\"tool\",\"detail\":\"reading_files\"",
            ));
            n += 1;
        }
        let p = dir.join(format!("writer-{w}.jsonl"));
        std::fs::write(&p, body).unwrap();
        let f = std::fs::File::options().write(true).open(&p).unwrap();
        f.set_modified(base + Duration::from_secs(i as u64))
            .unwrap();
    }
    let r = root.path().to_path_buf();
    let started = Instant::now();
    // Worst case for one pass: at most 2 MiB read and parsed.
    let (l, read) = within(HANG_GUARD_SECS, move || bytes_read(|| read_logs(&r)));
    eprintln!(
        "read_logs worst case: {:?}, {read} bytes",
        started.elapsed()
    );
    assert!(
        read <= observations::MAX_TAIL_TOTAL + READ_SLACK,
        "read {read} bytes"
    );
    assert!(l.truncated);
    assert_eq!(l.events.len(), observations::MAX_EVENTS);
    assert!(l
        .events
        .windows(2)
        .all(|w| w[0].timestamp <= w[1].timestamp));
    // 2 MiB / 128 KiB: only the 16 newest files (8..24) may contribute.
    let oldest_allowed = writer(8);
    assert!(l.events.iter().all(|e| e.writer_id >= oldest_allowed));
    // And the 500 kept are the newest: all from the newest file.
    assert!(l.events.iter().all(|e| e.writer_id == writer(23)));
}

#[test]
fn megabyte_lines_and_huge_sparse_files() {
    let root = make_root(&base_config());
    let dir = logs(root.path());
    let w = writer(1);
    let good = |at: Ms| rec(at, &w, B1, "runtime.ready", ",\"busy\":false");
    let big_line = rec(
        2_000,
        &w,
        B1,
        "host.activity",
        &format!(",\"peerName\":\"{}\"", "x".repeat(1 << 20)),
    );
    std::fs::write(
        dir.join(format!("writer-{w}.jsonl.1")),
        format!("{}{}{}", good(1_000), big_line, good(3_000)),
    )
    .unwrap();
    // A file that is nothing but one 1 MiB line.
    let w2 = writer(2);
    std::fs::write(dir.join(format!("writer-{w2}.jsonl")), &big_line).unwrap();
    // A 4 GiB sparse file whose tail holds one record.
    let w3 = writer(3);
    let p = dir.join(format!("writer-{w3}.jsonl.2"));
    // The newline before the record ends the 4 GiB run of NULs (itself an over-long line).
    let tail = format!(
        "\n{}",
        rec(4_000, &w3, B2, "runtime.ready", ",\"busy\":false")
    );
    let f = std::fs::File::create(&p).unwrap();
    let len: u64 = 4 << 30;
    f.set_len(len).unwrap();
    std::os::unix::fs::FileExt::write_at(&f, tail.as_bytes(), len - tail.len() as u64).unwrap();
    drop(f);

    let before = listing(root.path());
    let r = root.path().to_path_buf();
    let (l, read) = within(HANG_GUARD_SECS, move || bytes_read(|| read_logs(&r)));
    // Not the 4 GiB file, nor the whole megabyte lines: the tail budget.
    assert!(
        read <= observations::MAX_TAIL_TOTAL + READ_SLACK,
        "read {read} bytes"
    );
    let stamps: Vec<Ms> = l.events.iter().map(|e| e.timestamp).collect();
    assert_eq!(stamps, [3_000, 4_000]);
    assert!(l.truncated);
    assert_eq!(listing(root.path()), before);
}

#[test]
fn bad_bytes_in_log_lines_are_skipped() {
    let root = make_root(&base_config());
    let w = writer(1);
    let mut body = Vec::new();
    body.extend_from_slice(rec(1_000, &w, B1, "runtime.ready", ",\"busy\":false").as_bytes());
    let mut bad = rec(2_000, &w, B1, "runtime.ready", ",\"busy\":true").into_bytes();
    bad[30] = 0xff;
    body.extend_from_slice(&bad);
    body.extend_from_slice(
        rec(
            3_000,
            &w,
            "evil\\u001b[2J",
            "runtime.ready",
            ",\"busy\":true",
        )
        .as_bytes(),
    );
    body.extend_from_slice(b"\x00\x01\x02\n{}\n[]\nnull\n");
    std::fs::write(logs(root.path()).join(format!("writer-{w}.jsonl")), body).unwrap();
    let before = listing(root.path());
    let l = read_logs(root.path());
    assert_eq!(l.events.len(), 1);
    assert_eq!(l.events[0].timestamp, 1_000);
    assert_eq!(listing(root.path()), before);
}

#[test]
fn future_and_equal_timestamp_disagreement() {
    let root = make_root(&base_config());
    let now = ts("2026-11-29T10:00:13.000Z");
    let dir = logs(root.path());
    // Builder: newest record an hour ahead of our clock.
    let w1 = writer(1);
    std::fs::write(
        dir.join(format!("writer-{w1}.jsonl")),
        format!(
            "{}{}",
            rec(
                now - 5_000,
                &w1,
                B1,
                "host.activity",
                ",\"busy\":true,\"phase\":\"tool\",\"detail\":\"editing_files\""
            ),
            rec(
                now + 3_600_000,
                &w1,
                B1,
                "host.activity",
                ",\"busy\":false,\"phase\":\"idle\",\"detail\":\"settled\""
            )
        ),
    )
    .unwrap();
    // Reviewer: two writers, same instant, idle vs working.
    let (w2, w3) = (writer(2), writer(3));
    let at = now - 2_000;
    std::fs::write(
        dir.join(format!("writer-{w2}.jsonl")),
        rec(at, &w2, B2, "runtime.ready", ",\"busy\":false"),
    )
    .unwrap();
    std::fs::write(
        dir.join(format!("writer-{w3}.jsonl.closed")),
        rec(
            at,
            &w3,
            B2,
            "host.activity",
            ",\"busy\":true,\"phase\":\"tool\",\"detail\":\"running_command\"",
        ),
    )
    .unwrap();
    let before = listing(root.path());
    let cfg = config::load(root.path()).unwrap();
    let l = read_logs(root.path());
    assert_eq!(l.closed_writers, std::slice::from_ref(&w3));
    let reports = read_reports(root.path(), &[B1, B2, B3], None);
    let obs: Vec<_> = cfg
        .workers()
        .map(|a| project_worker(a, &EventIndex::new(&l.events), &reports, now))
        .collect();
    assert_eq!(obs[0].evidence, Evidence::ClockUncertain);
    assert_eq!(obs[0].observed_status, ObservedStatus::Unknown);
    assert_eq!(obs[0].last_activity, "clock uncertain");
    assert_eq!(obs[1].evidence, Evidence::Conflicting);
    assert_eq!(obs[1].observed_status, ObservedStatus::Unknown);
    assert_eq!(obs[1].last_activity, "conflicting records");
    assert_eq!(obs[2].evidence, Evidence::Missing);
    assert_eq!(obs[2].last_activity, "no observation");
    let j = worker_status_json(&obs[0], Value::Null);
    assert_eq!(j["observationAgeSeconds"], Value::Null);
    assert_eq!(j["evidence"], "clock_uncertain");
    assert_eq!(j["stale"], false);
    assert_eq!(listing(root.path()), before);
}

/// The sidebar reads every worker's report each pass: an unchanged report is not read again,
/// and any change (rewritten in place, replaced, turned into a link) is seen on the next pass.
#[test]
fn an_unchanged_report_is_not_read_again_and_every_change_is_seen() {
    let root = make_root(&base_config());
    let path = root
        .path()
        .join(".pi-intercom/reports")
        .join(report_file_name(B1));
    let rep = |summary: &str| {
        json!({"version": 1, "sessionId": B1, "status": "blocked", "summary": summary,
               "updatedAt": "2026-11-29T10:00:00.000Z"})
        .to_string()
    };
    let big = |c: char| c.to_string().repeat(1900);
    std::fs::write(&path, rep(&big('a'))).unwrap();
    // The sidebar's memory, kept across its passes.
    let memory = ScanMemory::new();
    let read_reports = |r: &Path, ids: &[&str]| read_reports(r, ids, Some(&memory.reports));
    let summary = |r: &Path| read_reports(r, &[B1]).reports[B1].summary.clone();
    // Just written: read every time (it could change again within the clock's granularity).
    let (s, n) = bytes_read(|| summary(root.path()));
    assert_eq!(s, big('a'));
    assert!(n >= 1900, "{n}");
    // Settled: the next pass reads it once more, the one after does not read it at all.
    std::thread::sleep(Duration::from_millis(2100));
    assert_eq!(summary(root.path()), big('a'));
    let (s, n) = bytes_read(|| summary(root.path()));
    assert_eq!(s, big('a'));
    assert!(n < 1900, "an unchanged report was read again ({n} bytes)");
    // Rewritten in place, same length: seen.
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .and_then(|mut f| std::io::Write::write_all(&mut f, rep(&big('b')).as_bytes()))
        .unwrap();
    assert_eq!(summary(root.path()), big('b'));
    // Replaced by another file: seen.
    let tmp = root.path().join("r.tmp");
    std::fs::write(&tmp, rep(&big('c'))).unwrap();
    std::fs::rename(&tmp, &path).unwrap();
    assert_eq!(summary(root.path()), big('c'));
    // Turned into a link to a valid report: refused, never the remembered one.
    std::thread::sleep(Duration::from_millis(2100));
    assert_eq!(summary(root.path()), big('c'));
    std::fs::rename(&path, &tmp).unwrap();
    std::os::unix::fs::symlink(&tmp, &path).unwrap();
    let set = read_reports(root.path(), &[B1]);
    assert!(set.reports.is_empty());
    assert_eq!(set.errors, ["report_read_failed"]);
}

#[test]
fn hostile_reports() {
    let root = make_root(&base_config());
    let reports = root.path().join(".pi-intercom/reports");
    let rep = |id: &str, status: &str, summary: &str| {
        json!({"version": 1, "sessionId": id, "status": status, "summary": summary,
               "updatedAt": "2026-11-29T10:00:00.000Z"})
        .to_string()
    };
    // A valid report for a session that is not configured.
    std::fs::write(
        reports.join(report_file_name("ghost")),
        rep("ghost", "blocked", "not ours"),
    )
    .unwrap();
    // B1's file speaks for B2: ignored.
    std::fs::write(
        reports.join(report_file_name(B1)),
        rep(B2, "blocked", "impostor"),
    )
    .unwrap();
    // B2: escape sequences and bidi in the summary are carried raw, sanitized in the JSON view.
    let nasty = "Need \u{1b}]0;owned\u{7}input\u{202e} \u{1b}[2Jnow\u{9b}31m";
    std::fs::write(
        reports.join(report_file_name(B2)),
        rep(B2, "needs_decision", nasty),
    )
    .unwrap();
    // B3: invalid UTF-8.
    let mut bytes = rep(B3, "blocked", "abc").into_bytes();
    let at = bytes.windows(3).position(|w| w == b"abc").unwrap();
    bytes[at] = 0xc3;
    std::fs::write(reports.join(report_file_name(B3)), bytes).unwrap();
    let before = listing(root.path());

    let set = read_reports(root.path(), &[B1, B2, B3], None);
    assert_eq!(set.reports.len(), 1);
    assert!(!set.reports.contains_key("ghost"));
    assert!(!set.reports.contains_key(B1));
    assert_eq!(set.reports[B2].summary, nasty);
    assert_eq!(set.reports[B2].status, ReportStatus::NeedsDecision);
    assert_eq!(set.errors, ["report_invalid"]);
    assert_eq!(listing(root.path()), before);

    let cfg = config::load(root.path()).unwrap();
    let now = ts("2026-11-29T10:00:30.000Z");
    let reviewer = cfg.find_by_name("REVIEWER").unwrap();
    let obs = project_worker(reviewer, &EventIndex::new(&[]), &set, now);
    let j = worker_status_json(&obs, Value::Null);
    let summary = j["report"]["summary"].as_str().unwrap();
    assert_eq!(summary, "Need input now");
    assert_eq!(j["report"]["status"], "needs_decision");
    assert_eq!(j["report"]["ageSeconds"], 30);

    // Oversize and linked report files are refused, not followed.
    std::fs::write(
        reports.join(report_file_name(B3)),
        rep(B3, "blocked", &"y".repeat(9000)),
    )
    .unwrap();
    std::fs::remove_file(reports.join(report_file_name(B1))).unwrap();
    std::os::unix::fs::symlink(
        reports.join(report_file_name(B2)),
        reports.join(report_file_name(B1)),
    )
    .unwrap();
    let set = read_reports(root.path(), &[B1, B2, B3], None);
    assert_eq!(set.reports.len(), 1);
    assert_eq!(set.errors, ["report_read_failed"]);
}

#[test]
fn forty_fifos_cannot_hide_a_real_log() {
    let root = make_root(&base_config());
    let dir = logs(root.path());
    std::fs::write(
        dir.join(format!("writer-{}.jsonl", writer(1))),
        rec(1_000, &writer(1), B1, "runtime.ready", ",\"busy\":false"),
    )
    .unwrap();
    // Created after the real log, so they are all newer by mtime.
    std::thread::sleep(Duration::from_millis(20));
    for i in 100..140 {
        fifo(&dir.join(format!("writer-{}.jsonl", writer(i))));
    }
    let before = listing(root.path());
    let r = root.path().to_path_buf();
    let l = within(HANG_GUARD_SECS, move || read_logs(&r));
    assert_eq!(l.events.len(), 1);
    assert_eq!(l.errors, ["log_read_failed"]);
    assert_eq!(listing(root.path()), before);
}

#[test]
fn discovery_from_a_file_or_missing_path() {
    let root = make_root(&base_config());
    let file = root.path().join("notes.txt");
    std::fs::write(&file, b"x").unwrap();
    assert_eq!(
        config::discover_root(&file).unwrap().as_deref(),
        Some(root.path())
    );
    assert_eq!(
        config::discover_root(&root.path().join("not/yet/made"))
            .unwrap()
            .as_deref(),
        Some(root.path())
    );
}
