//! The sidebar's memory (`ScanMemory`, kept across its passes) changes no result: a pass that
//! reuses what earlier passes read equals a one-shot pass, before and after every kind of
//! evidence changed. Real files (the pi fixtures, an observation log, reports), in-process.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::scan_support;

use std::io::Write;
use std::time::Duration;

use intercom_pane::seam::clock::{parse_iso, FixedClock};
use intercom_pane::seam::evidence::reports::report_file_name;
use intercom_pane::seam::evidence::ScanMemory;
use intercom_pane::seam::scan::{self, ScanOptions};
use scan_support::*;
use serde_json::{json, Value};

const WRITER: &str = "0190aaaa-0000-7000-8000-000000000001";

/// Everything a view shows of a pass.
fn pass(opts: &ScanOptions, memory: Option<&ScanMemory>) -> Value {
    let clock = FixedClock(parse_iso(NOW).unwrap());
    let s = scan::run(opts, &clock, None, memory).unwrap();
    json!({
        "records": serde_json::to_value(&s.records).unwrap(),
        "workers": serde_json::to_value(&s.workers).unwrap(),
        "rows": format!("{:?}", s.snapshot),
    })
}

fn report(id: &str, summary: &str) -> String {
    json!({"version": 1, "sessionId": id, "status": "blocked", "summary": summary,
           "updatedAt": "2026-11-29T23:00:00.000Z"})
    .to_string()
}

fn log_line(id: &str, second: u32, busy: bool) -> String {
    format!(
        "{{\"version\":1,\"timestamp\":\"2026-11-29T23:10:{second:02}.000Z\",\"writerId\":\"{WRITER}\",\"sessionId\":\"{id}\",\"event\":\"host.activity\",\"busy\":{busy}}}\n"
    )
}

#[test]
fn a_pass_with_the_sidebars_memory_equals_a_one_shot_pass_through_every_change() {
    let env = Env::new();
    let ids = pi_root(&env, &["idle", "waiting", "error", "tool"]);
    let root = env.path("root");
    let reports = root.join(".pi-intercom/reports");
    let logs = root.join(".pi-intercom/logs");
    std::fs::create_dir_all(&reports).unwrap();
    std::fs::create_dir_all(&logs).unwrap();
    for (_, id) in &ids {
        std::fs::write(reports.join(report_file_name(id)), report(id, "first")).unwrap();
    }
    let log = logs.join(format!("writer-{WRITER}.jsonl"));
    std::fs::write(&log, log_line(&ids[0].1, 1, true)).unwrap();
    let opts = scan_options(&env, root.clone());
    let memory = ScanMemory::new();
    // Files written in the last 2 s are always read again: let them settle, so the memory is
    // used.
    std::thread::sleep(Duration::from_millis(2100));
    let fresh = pass(&opts, None);
    assert_eq!(pass(&opts, Some(&memory)), fresh);
    assert_eq!(pass(&opts, Some(&memory)), fresh, "from the memory");

    // Every kind of evidence changes: a session appended to, the log grown, a report rewritten
    // in place with the same length, the config replaced.
    let session = std::fs::read_dir(env.path("sessions/--work--"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().contains(&ids[0].1))
        .unwrap();
    let last: Value = serde_json::from_str(
        std::fs::read_to_string(&session)
            .unwrap()
            .lines()
            .last()
            .unwrap(),
    )
    .unwrap();
    let reply = json!({"type": "message", "id": "zz000001", "parentId": last["id"],
        "timestamp": "2026-11-29T23:15:00.000Z", "message": {"role": "assistant",
        "content": [{"type": "text", "text": "Done, going on"}], "provider": "p", "model": "m",
        "stopReason": "stop"}});
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&session)
        .unwrap();
    writeln!(f, "{reply}").unwrap();
    drop(f);
    let mut f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    f.write_all(log_line(&ids[1].1, 2, false).as_bytes())
        .unwrap();
    drop(f);
    let id = &ids[2].1;
    std::fs::write(reports.join(report_file_name(id)), report(id, "again")).unwrap();
    let cfg = root.join(".pi-intercom/config.json");
    let text = std::fs::read_to_string(&cfg)
        .unwrap()
        .replace("Fixture tool", "Fixture TOOL");
    std::fs::write(root.join("cfg.tmp"), text).unwrap();
    std::fs::rename(root.join("cfg.tmp"), &cfg).unwrap();

    let changed = pass(&opts, None);
    let shown = changed.to_string();
    for (what, text) in [
        ("report", "again"),
        ("config", "Fixture TOOL"),
        ("session", "Done, going on"),
    ] {
        assert!(shown.contains(text), "the {what} change shows");
    }
    assert_ne!(changed["workers"], fresh["workers"], "the log change shows");
    assert_eq!(pass(&opts, Some(&memory)), changed);
    std::thread::sleep(Duration::from_millis(2100));
    assert_eq!(pass(&opts, Some(&memory)), changed);
    assert_eq!(pass(&opts, Some(&memory)), changed, "from the memory");
}
