//! The real pi 1.6.0 session files in fixtures/pi-sessions, found by discovery like a seat's
//! session would be, confirmed by their header id, and classified as fixtures/README.md says.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::sessions_common;

use intercom_pane::seam::board::classify::{board_state, classify, Activity};
use intercom_pane::seam::board::reason::StateReason;
use intercom_pane::seam::clock::parse_strict;
use intercom_pane::seam::evidence::sessions::{index_sessions, read_session, SessionSummary};
use intercom_pane::seam::mux::Liveness;
use intercom_pane::seam::states::BoardState;
use std::path::PathBuf;

/// Copy one fixture into a fresh sessions folder as pi names it, index the folder, and read the
/// file the index finds for the header's session id.
fn discover(fixture: &str) -> (tempfile::TempDir, SessionSummary) {
    let src = sessions_common::fixtures_dir()
        .join("pi-sessions")
        .join(fixture);
    let bytes = std::fs::read(&src).unwrap();
    // The session id is taken from the header the way pi writes it, never from the fixture name.
    let first = bytes.split(|&b| b == b'\n').next().unwrap();
    let header: serde_json::Value = serde_json::from_slice(first).unwrap();
    let id = header["id"].as_str().unwrap().to_string();
    let root = tempfile::tempdir().unwrap();
    let cwd_dir = root.path().join("--home-dev-run-work--");
    std::fs::create_dir(&cwd_dir).unwrap();
    std::fs::write(
        cwd_dir.join(format!("2026-11-29T23-13-49-456Z_{id}.jsonl")),
        &bytes,
    )
    .unwrap();
    let idx = index_sessions(&[root.path().to_path_buf()]);
    assert!(!idx.truncated);
    assert!(idx.errors.is_empty(), "{:?}", idx.errors);
    let path: PathBuf = idx.find(&id).expect("indexed by session id").to_path_buf();
    let sum = read_session(&path).unwrap();
    assert_eq!(sum.session_id, id, "header confirms the id");
    (root, sum)
}

fn ms(s: &str) -> i64 {
    parse_strict(s).unwrap()
}

#[test]
fn idle_fixture() {
    let (_d, s) = discover("idle.jsonl");
    let c = classify(&s, ms("2026-11-29T23:20:00.000Z"));
    assert_eq!(
        (c.activity, c.reason),
        (Activity::Idle, StateReason::CompletedReply)
    );
    assert_eq!(s.cwd, "/home/dev/run/work/idle");
    assert_eq!(
        s.task.as_deref(),
        Some("Status board harness check. SCENARIO:idle")
    );
    assert_eq!(s.last_assistant_text.as_deref(), Some("BOARD_REPLY_OK"));
    assert_eq!(s.model.as_deref(), Some("fake-model"));
    assert_eq!(s.provider.as_deref(), Some("fake"));
    assert_eq!(s.last_activity, Some(ms("2026-11-29T23:13:57.681Z")));
    assert_eq!(s.header_timestamp, Some(ms("2026-11-29T23:13:49.426Z")));
    assert_eq!(s.newest_entry_id.as_deref(), Some("b89cf8b1"));
    assert_eq!(s.last_error, None);
    assert_eq!(s.skipped_lines, 0);
    assert!(!s.tail_truncated);
    assert_eq!(board_state(Liveness::Alive, Some(&c)), BoardState::Idle);
    assert_eq!(
        board_state(Liveness::Offline, Some(&c)),
        BoardState::Offline
    );
    assert_eq!(
        board_state(Liveness::Unknown, Some(&c)),
        BoardState::Unknown
    );
}

#[test]
fn waiting_fixture() {
    let (_d, s) = discover("waiting.jsonl");
    let c = classify(&s, ms("2026-11-29T23:20:00.000Z"));
    assert_eq!(
        (c.activity, c.reason),
        (Activity::Waiting, StateReason::InputNeeded)
    );
    assert!(s
        .last_assistant_text
        .as_deref()
        .unwrap()
        .starts_with("Input needed: Choose staging or production"));
    assert_eq!(board_state(Liveness::Alive, Some(&c)), BoardState::Waiting);
}

#[test]
fn error_fixture() {
    let (_d, s) = discover("error.jsonl");
    // Right after the failure and long after: a 400 is not retried (no context_edit).
    for now in ["2026-11-29T23:13:58.900Z", "2026-11-29T23:20:00.000Z"] {
        let c = classify(&s, ms(now));
        assert_eq!(
            (c.activity, c.reason),
            (Activity::Error, StateReason::FinalError)
        );
    }
    assert!(s.last_error.as_deref().unwrap().starts_with("400: {"));
    assert!(s.last_error.as_deref().unwrap().chars().count() <= 500);
    assert_eq!(s.last_assistant_text, None);
    assert_eq!(
        s.task.as_deref(),
        Some("This request will be rejected. SCENARIO:error")
    );
}

#[test]
fn tool_fixture_is_working_until_the_result_arrives() {
    let (_d, s) = discover("tool.jsonl");
    // Two minutes into `sleep 120` nothing new is written; still working.
    let c = classify(&s, ms("2026-11-29T23:16:00.000Z"));
    assert_eq!(
        (c.activity, c.reason),
        (Activity::Working, StateReason::ToolRunning)
    );
    assert_eq!(
        s.last_assistant_text.as_deref(),
        Some("Running a long command.")
    );
    assert_eq!(board_state(Liveness::Alive, Some(&c)), BoardState::Working);

    let (_d2, done) = discover("tool.completed.jsonl");
    assert_eq!(done.session_id, s.session_id);
    let c = classify(&done, ms("2026-11-29T23:20:00.000Z"));
    assert_eq!(
        (c.activity, c.reason),
        (Activity::Idle, StateReason::CompletedReply)
    );
    assert_eq!(done.last_assistant_text.as_deref(), Some("done"));
    assert_eq!(done.last_activity, Some(ms("2026-11-29T23:16:04.538Z")));
}

#[test]
fn every_fixture_reads_cleanly() {
    let dir = sessions_common::fixtures_dir().join("pi-sessions");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().and_then(|x| x.to_str()) != Some("jsonl") {
            continue;
        }
        let s = read_session(&p).unwrap();
        assert_eq!(s.skipped_lines, 0, "{p:?}");
        assert!(s.task.is_some(), "{p:?}");
        assert!(!s.branch.is_empty(), "{p:?}");
        n += 1;
    }
    assert!(n >= 5);
}
