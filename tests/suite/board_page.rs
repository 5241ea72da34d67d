//! `intercom-pane board` (the coordinator's `intercom_board`): a roster at the limit (255
//! workers), each with a 2000-character report (3-byte characters) and every third one waiting with a long question
//! full of escape sequences and bidi controls. Every page, printed whole, stays within 40 KiB;
//! following `nextOffset` from 0 visits every seat exactly once, in order; no page carries a raw
//! control character; the filters select what they say.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::scan_support::*;

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

const WORKERS: usize = 255;
const TS: &str = "2026-11-29T23:10:00.000Z";

fn sid(i: usize) -> String {
    format!("0b0a0000-0000-7000-8000-{:012x}", i + 1)
}

/// The question worker `i` asks (every third one), hostile and long.
fn question(i: usize) -> String {
    format!(
        "Pick \u{1b}[2J\u{202e}one\u{9b}31m for {i}: {}",
        "staging or production? 本番か検証か ".repeat(60)
    )
}

fn scale_root(env: &Env) {
    let root = env.path("root");
    let ic = root.join(".pi-intercom");
    std::fs::create_dir_all(ic.join("reports")).unwrap();
    let sessions = env.path("sessions").join("--work--");
    std::fs::create_dir_all(&sessions).unwrap();
    let mut agents = vec![
        json!({"sessionId": "coord", "name": "Coordinator", "coordinator": true,
        "description": "C.", "port": 40000, "projectDirectory": "."}),
    ];
    for i in 0..WORKERS {
        let id = sid(i);
        agents.push(
            json!({"sessionId": id, "name": format!("W{i:03}"), "coordinator": false,
            "description": format!("worker {i}"), "port": 41000 + i, "projectDirectory": "."}),
        );
        let reply = if i % 3 == 0 {
            format!("Input needed: {}", question(i))
        } else {
            "done".to_string()
        };
        let lines = [
            json!({"type": "session", "version": 3, "id": id, "timestamp": TS, "cwd": "/work"}),
            json!({"type": "message", "id": "a0000001", "parentId": null, "timestamp": TS,
                "message": {"role": "user", "content": [{"type": "text", "text": format!("task {i}")}], "timestamp": 0}}),
            json!({"type": "message", "id": "a0000002", "parentId": "a0000001", "timestamp": TS,
                "message": {"role": "assistant", "content": [{"type": "text", "text": reply}],
                "provider": "fake", "model": "m", "stopReason": "stop", "timestamp": 0}}),
        ];
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(
            sessions.join(format!("2026-11-29T23-00-00-000Z_{id}.jsonl")),
            text,
        )
        .unwrap();
        let hash = format!("{:x}", Sha256::digest(id.as_bytes()));
        let report = json!({"version": 1, "sessionId": id, "status": "blocked",
            "summary": format!("{i} blocked: {}", "報".repeat(1980)), "updatedAt": TS});
        std::fs::write(
            ic.join("reports").join(format!("{hash}.json")),
            report.to_string(),
        )
        .unwrap();
    }
    let cfg = json!({"version": 1, "multiplexer": "tmux", "agents": agents});
    std::fs::write(ic.join("config.json"), cfg.to_string()).unwrap();
}

fn board(env: &Env, extra: &[&str]) -> (i32, String) {
    let mut args = vec!["--now", NOW, "--liveness", "assume-alive"];
    args.extend_from_slice(extra);
    let o = env.run(&layout_args(env, &["board"], &args));
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8(o.stdout).unwrap() + &String::from_utf8_lossy(&o.stderr),
    )
}

fn no_raw_controls(text: &str) {
    let bad: Vec<char> = text
        .chars()
        .filter(|c| {
            (c.is_control() && *c != '\n')
                || ('\u{202a}'..='\u{202e}').contains(c)
                || ('\u{2066}'..='\u{2069}').contains(c)
        })
        .collect();
    assert!(bad.is_empty(), "raw controls {bad:?}");
    assert!(
        !text.contains("\\u001b") && !text.contains("\\u009b"),
        "escaped controls kept"
    );
}

#[test]
fn a_page_of_255_workers_stays_within_40_kib_and_next_offset_reaches_the_end() {
    let env = Env::new();
    scale_root(&env);
    let mut offset = json!(0);
    let mut seen = Vec::new();
    let mut pages = 0;
    let mut largest = 0;
    while let Some(at) = offset.as_u64() {
        let (code, text) = board(&env, &["--limit", "20", "--offset", &at.to_string()]);
        assert_eq!(code, 0, "{text}");
        let text = text.trim_end();
        largest = largest.max(text.len());
        assert!(
            text.len() <= 40 * 1024,
            "page at {at}: {} bytes",
            text.len()
        );
        no_raw_controls(text);
        let page: Value = serde_json::from_str(text).unwrap();
        assert_eq!(page["offset"], at);
        assert_eq!(page["totalInSnapshot"], WORKERS);
        let seats = page["seats"].as_array().unwrap();
        assert!(!seats.is_empty() && seats.len() <= 20);
        for s in seats {
            let i: usize = s["name"].as_str().unwrap()[1..].parse().unwrap();
            if i % 3 == 0 {
                assert_eq!(s["state"], "waiting", "{s}");
                assert_eq!(s["reason"], "input_needed");
                let q = s["question"].as_str().unwrap();
                assert!(q.starts_with("Pick one for"), "{q}");
                assert!(q.chars().count() <= 1000, "clipped");
                assert!(q.contains(&format!("for {i}: staging")), "{q}");
                assert_eq!(s["needsYou"], true);
            } else {
                assert_eq!(s["state"], "idle", "{s}");
                assert_eq!(s["question"], Value::Null);
            }
            assert_eq!(s["report"]["status"], "blocked");
            seen.push(i);
        }
        pages += 1;
        assert!(pages <= WORKERS, "nextOffset never ends");
        offset = page["nextOffset"].clone();
    }
    assert_eq!(
        seen,
        (0..WORKERS).collect::<Vec<_>>(),
        "every seat once, in order"
    );
    // The cap, not the limit, ended some pages: the long texts make 20 seats too large.
    assert!(pages > WORKERS.div_ceil(20), "{pages} pages");
    eprintln!("{pages} pages, the largest {largest} bytes");

    // Filters: attention (the waiting third), a name, a host.
    let (code, text) = board(&env, &["--attention", "--limit", "20"]);
    assert_eq!(code, 0, "{text}");
    let page: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(page["totalInSnapshot"], WORKERS.div_ceil(3));
    assert_eq!(page["needYou"], WORKERS.div_ceil(3));
    assert!(page["seats"]
        .as_array()
        .unwrap()
        .iter()
        .all(|s| s["state"] == "waiting"));
    let (code, text) = board(&env, &["--name", "w004"]);
    assert_eq!(code, 0, "{text}");
    let page: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(page["seats"][0]["name"], "W004");
    assert_eq!(page["totalInSnapshot"], 1);
    let (code, text) = board(&env, &["--host", "local", "--limit", "1"]);
    assert_eq!(code, 0, "{text}");
    let (code, text) = board(&env, &["--host", "gpu\u{1b}[2J"]);
    assert_eq!(code, 2, "{text}");
    assert!(
        text.contains("no host named \"gpu\" (hosts: local)"),
        "{text}"
    );
    let (code, text) = board(&env, &["--name", "Nobody"]);
    assert_eq!(code, 2, "{text}");
    let (code, _) = board(&env, &["--limit", "21"]);
    assert_eq!(code, 2);
}
