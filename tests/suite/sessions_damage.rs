//! Damage never makes a seat look calm: a real pi transcript whose newest lines cannot be read
//! (a zero-filled tail as a crash leaves, a last line cut mid-way, garbage after valid lines)
//! reads `unknown` with the reason, never `idle`; damage older than the newest entries does not
//! hide them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::scan_support;

use std::io::Write;
use std::path::Path;

use scan_support::*;

fn seat_state(env: &Env, bytes: &[u8]) -> (String, String) {
    let sessions = env.path("repo/.pi/state/seat/sessions/--home-dev-work--");
    std::fs::create_dir_all(&sessions).unwrap();
    std::fs::write(sessions.join("2026-11-29T23-13-49-000Z_x.jsonl"), bytes).unwrap();
    let o = env.run(&[
        "scan",
        "--json",
        "--config",
        &env.system_config(),
        "--repo",
        &env.path("repo").display().to_string(),
        "--fleet",
        "none",
        "--liveness",
        "assume-alive",
        "--now",
        NOW,
    ]);
    let r = record(&stdout_json(&o), "seat").clone();
    (
        r["state"].as_str().unwrap().into(),
        r["stateReason"].as_str().unwrap().into(),
    )
}

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(Path::new(FIXTURES).join("pi-sessions").join(name)).unwrap()
}

#[test]
fn damaged_newest_lines_read_unknown_never_idle() {
    for name in ["waiting.jsonl", "idle.jsonl", "tool.jsonl", "error.jsonl"] {
        let env = Env::new();
        let good = fixture(name);
        let (state, _) = seat_state(&env, &good);
        assert_ne!(state, "unknown", "{name} reads fine whole");

        // A zero-filled tail (64 KiB of NULs after the last line, no newline).
        let mut zeros = good.clone();
        zeros.extend(std::iter::repeat_n(0u8, 64 * 1024));
        assert_eq!(
            seat_state(&env, &zeros),
            ("unknown".into(), "session_tail_hole".into()),
            "{name} + zeros"
        );
        // Zeros ending in a newline (a block of NULs, then pi appended once more).
        let mut zeros_nl = zeros.clone();
        zeros_nl.push(b'\n');
        assert_eq!(
            seat_state(&env, &zeros_nl),
            ("unknown".into(), "session_tail_hole".into()),
            "{name} + zeros + newline"
        );
        // The last line cut mid-way.
        let body = &good[..good.len() - 1];
        let last_start = body.iter().rposition(|&b| b == b'\n').unwrap() + 1;
        let cut = &good[..last_start + (good.len() - last_start) / 2];
        assert_eq!(
            seat_state(&env, cut),
            ("unknown".into(), "session_tail_cut".into()),
            "{name} cut"
        );
        // Garbage lines after the valid ones.
        let mut garbage = good.clone();
        garbage.write_all(b"\x1b[2J not json at all\n").unwrap();
        assert_eq!(
            seat_state(&env, &garbage),
            ("unknown".into(), "session_tail_malformed".into()),
            "{name} + garbage"
        );
        // Garbage with valid entries after it: the newest entries decide, as before.
        let mut older = good[..last_start].to_vec();
        older.extend_from_slice(b"{not json\n");
        older.extend_from_slice(&good[last_start..]);
        assert_eq!(seat_state(&env, &older).0, state, "{name}: old damage");
    }
}
