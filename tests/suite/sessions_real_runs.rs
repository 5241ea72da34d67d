//! Every session file a real pi 1.6.0 wrote in `tests/fixtures/pi-1.6.0-runs/` is classified by
//! the real `scan` as that folder's README table says (state and reason, at the copy time).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::scan_support;

use intercom_pane::seam::board::reason::StateReason;
use std::path::Path;

use scan_support::*;

struct Case {
    file: String,
    state: String,
    reason: String,
    now: String,
}

fn cases() -> Vec<Case> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pi-1.6.0-runs");
    let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
    readme
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let c: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
            Case {
                file: dir
                    .join(format!("{}.jsonl", c[0].trim_matches('`')))
                    .display()
                    .to_string(),
                state: c[1].into(),
                reason: c[2].into(),
                now: c[3].into(),
            }
        })
        .collect()
}

#[test]
fn real_pi_sessions_classify_by_the_rules() {
    let cases = cases();
    assert!(cases.len() >= 30, "the table lists {} files", cases.len());
    let env = Env::new();
    let cfg = env.system_config();
    let mut wrong = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        // Each file is its own repo seat, read as a live pane running pi would be.
        let repo = env.path(&format!("repo{i}"));
        let sessions = repo.join(".pi/state/seat/sessions");
        std::fs::create_dir_all(&sessions).unwrap();
        std::fs::copy(&c.file, sessions.join("2026-11-30.jsonl")).unwrap();
        let repo = repo.display().to_string();
        let o = env.run(&[
            "scan",
            "--json",
            "--config",
            &cfg,
            "--repo",
            &repo,
            "--fleet",
            "none",
            "--liveness",
            "assume-alive",
            "--now",
            &c.now,
        ]);
        let r = record(&stdout_json(&o), "seat").clone();
        let got = (r["state"].as_str(), r["stateReason"].as_str());
        if got != (Some(c.state.as_str()), Some(c.reason.as_str())) {
            wrong.push(format!(
                "{}: want {}/{}, got {got:?}",
                c.file, c.state, c.reason
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// pi's `/tree` back to an earlier reply without a summary writes nothing: read from the last
/// line the seat is idle, read from the leaf pi moved to (what its registration records) it is
/// waiting, as pi's screen shows.
#[test]
fn a_tree_leaf_pi_moved_to_is_read_as_the_branch() {
    use intercom_pane::seam::board::classify::{classify, Activity};
    use intercom_pane::seam::evidence::sessions::{read_session, read_session_from_leaf};
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/pi-1.6.0-runs/tree_nav_to_waiting_nosummary.jsonl");
    let now = intercom_pane::seam::clock::parse_iso("2026-11-30T02:19:50.159Z").unwrap();
    let last_line = read_session(&file).unwrap();
    assert_eq!(classify(&last_line, now).activity, Activity::Idle);
    let leaf = read_session_from_leaf(&file, "e16e1c40", None)
        .unwrap()
        .unwrap();
    let c = classify(&leaf, now);
    assert_eq!(
        (c.activity, c.reason),
        (Activity::Waiting, StateReason::InputNeeded)
    );
    assert_eq!(
        leaf.newest_entry_id.as_deref(),
        Some("d10b0c42"),
        "the file's own tip"
    );
    assert!(leaf.last_activity < last_line.last_activity);
    assert!(leaf
        .last_assistant_text
        .as_deref()
        .is_some_and(|t| t.starts_with("Input needed:")));
    // A leaf the file does not hold: no branch to read.
    assert_eq!(
        read_session_from_leaf(&file, "00000000", None).unwrap(),
        None
    );
}
