//! Every session file a real pi 1.6.0 wrote in `tests/fixtures/pi-1.6.0-runs/` is classified by
//! the real `scan` as that folder's README table says (state and reason, at the copy time).

mod scan_support;

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
