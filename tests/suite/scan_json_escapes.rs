//! JSON output never carries raw C1 or bidirectional controls: `scan --json`, the board files
//! and `status --json` write each as `\uXXXX`, and the values still read back the same.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::scan_support;

use scan_support::*;
use serde_json::json;

const HOSTILE: &[char] = &[
    '\u{85}', '\u{9b}', '\u{9f}', '\u{80}', '\u{202a}', '\u{202e}', '\u{2066}', '\u{2069}',
    '\u{200e}', '\u{200f}', '\u{061c}',
];

fn assert_clean(what: &str, text: &str) {
    let raw: Vec<char> = text.chars().filter(|c| HOSTILE.contains(c)).collect();
    assert!(raw.is_empty(), "{what} carries raw {raw:?}");
}

#[test]
fn c1_and_bidi_controls_are_escaped_in_every_json_output() {
    let env = Env::new();
    let cfg = env.system_config();
    let evil: String = HOSTILE.iter().collect();
    // A repo seat whose folder name and task carry every one of them.
    let agent = format!("seat{evil}x");
    let sessions = env.path("repo/.pi/state").join(&agent).join("sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let t = "2026-11-29T23:00:00.000Z";
    let lines = [
        json!({"type":"session","version":3,"id":"s-1","timestamp":t,"cwd":format!("/w/{evil}")}),
        json!({"type":"message","id":"u1","parentId":null,"timestamp":t,
            "message":{"role":"user","content":format!("do {evil} this")}}),
        json!({"type":"message","id":"a1","parentId":"u1","timestamp":t,"message":{"role":"assistant",
            "content":[{"type":"text","text":format!("Input needed: {evil}?")}],
            "provider":"p","model":format!("m{evil}"),"stopReason":"stop"}}),
    ];
    std::fs::write(
        sessions.join("2026-11-29T23-00-00-000Z_s-1.jsonl"),
        lines.iter().map(|l| format!("{l}\n")).collect::<String>(),
    )
    .unwrap();
    // A configured worker whose report summary carries the bidi ones (a roster name may not:
    // it refuses control characters and characters that show nothing, src/names.rs).
    let bidi: String = HOSTILE.iter().filter(|c| !c.is_control()).collect();
    write_roster(&env.path("root"), &[("w-1", "W")]);
    let reports = env.path("root/.pi-intercom/reports");
    std::fs::create_dir_all(&reports).unwrap();
    let hash = {
        use sha2::Digest;
        hex(&sha2::Sha256::digest(b"w-1"))
    };
    std::fs::write(
        reports.join(format!("{hash}.json")),
        json!({"version": 1, "sessionId": "w-1", "status": "blocked",
            "summary": format!("R{bidi}"), "updatedAt": "2026-11-29T23:00:00.000Z"})
        .to_string(),
    )
    .unwrap();
    let repo = env.path("repo").display().to_string();
    let base = [
        "--config",
        cfg.as_str(),
        "--root",
        "root",
        "--repo",
        repo.as_str(),
        "--fleet",
        "none",
        "--liveness",
        "assume-alive",
        "--now",
        NOW,
    ];
    let mut scan = vec!["scan", "--json"];
    scan.extend_from_slice(&base);
    let o = env.run(&scan);
    let text = String::from_utf8(o.stdout.clone()).unwrap();
    assert_clean("scan --json", &text);
    assert!(
        text.contains("\\u009b") && text.contains("\\u202e"),
        "{text}"
    );
    let idx = stdout_json(&o);
    // The folder's name, its characters that show nothing written out (src/names.rs).
    let shown = intercom_pane::seam::names::visible(&agent);
    assert!(shown.contains("<U+202E>"), "{shown}");
    let r = record(&idx, &shown);
    assert_eq!(r["state"], "waiting");
    assert_eq!(r["agent"].as_str().unwrap(), shown);
    // The board files.
    let board = env.path("data/board");
    let mut files = vec![board.join("index.json")];
    for d in std::fs::read_dir(board.join("sessions")).unwrap().flatten() {
        for f in std::fs::read_dir(d.path()).unwrap().flatten() {
            files.push(f.path());
        }
    }
    assert!(files.len() >= 3, "{files:?}");
    for f in &files {
        assert_clean(
            &f.display().to_string(),
            &std::fs::read_to_string(f).unwrap(),
        );
    }
    // status --json.
    let o = env.run(&[
        "status", "--json", "--config", &cfg, "--root", "root", "--fleet", "none",
    ]);
    let text = String::from_utf8(o.stdout.clone()).unwrap();
    assert_clean("status --json", &text);
    let page = stdout_json(&o);
    assert_eq!(page["workers"][0]["name"], "W");
    assert!(
        page["workers"][0]["report"]["summary"]
            .as_str()
            .is_some_and(|s| s.starts_with('R')),
        "{page}"
    );
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
