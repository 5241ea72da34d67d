//! Session files where pi really writes them: a pi started with `PI_CODING_AGENT_DIR` set to a
//! repo seat (`<repo>/.pi/state/<agent>`), a fleet seat (`<fleet>/<agent>/.pi/agent`) or left at
//! its default (`~/.pi/agent`) writes into `sessions/--<cwd>--/`, not flat. Every real pi 1.6.0
//! transcript in the fixtures, placed that way, reads exactly as the same file placed flat.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::scan_support;

use std::path::{Path, PathBuf};

use scan_support::*;
use serde_json::Value;

/// Every real transcript with the time to read it at: the 1.6.0 runs at their README times, the
/// shared pi-sessions at the suite's `NOW`.
fn transcripts() -> Vec<(PathBuf, String)> {
    let runs = Path::new(FIXTURES).join("pi-1.6.0-runs");
    let readme = std::fs::read_to_string(runs.join("README.md")).unwrap();
    let mut out: Vec<(PathBuf, String)> = readme
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let c: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
            (
                runs.join(format!("{}.jsonl", c[0].trim_matches('`'))),
                c[3].to_string(),
            )
        })
        .collect();
    for n in ["idle", "waiting", "error", "tool", "tool.completed"] {
        out.push((
            Path::new(FIXTURES).join(format!("pi-sessions/{n}.jsonl")),
            NOW.to_string(),
        ));
    }
    out
}

fn put(file: &Path, dir: &Path, name: &str) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::copy(file, dir.join(name)).unwrap();
}

/// The fields a layout must not change.
fn fields(r: &Value) -> Value {
    serde_json::json!([
        r["state"],
        r["stateReason"],
        r["lastActivity"],
        r["model"],
        r["provider"],
        r["task"],
        r["lastAssistantText"],
        r["lastError"],
        r["sessionId"],
        r["cwd"],
        r["workspace"],
    ])
}

#[test]
fn real_transcripts_in_per_cwd_folders_read_as_they_do_flat() {
    let cases = transcripts();
    assert!(cases.len() >= 35, "{} transcripts", cases.len());
    let mut wrong = Vec::new();
    for (i, (file, now)) in cases.iter().enumerate() {
        let env = Env::new();
        let cfg = env.system_config();
        let id = header_id(file);
        let name = format!("2026-11-30T10-00-00-000Z_{id}.jsonl");
        let cwd = "--home-dev-work--";
        let repo = env.path("repo");
        put(file, &repo.join(".pi/state/flat/sessions"), &name);
        put(
            file,
            &repo.join(".pi/state/nested/sessions").join(cwd),
            &name,
        );
        // An older session of the same seat in another cwd folder: the newest wins.
        put(
            &Path::new(FIXTURES).join("pi-sessions/idle.jsonl"),
            &repo.join(".pi/state/nested/sessions/--home-dev-old--"),
            "2026-11-01T10-00-00-000Z_0190aaaa-0000-7000-8000-000000000001.jsonl",
        );
        let fleet = env.path("fleet");
        put(
            file,
            &fleet.join("nested/.pi/agent/sessions").join(cwd),
            &name,
        );
        // pi's default agent folder, joined to a configured worker by its session id.
        put(file, &env.path("home/.pi/agent/sessions").join(cwd), &name);
        write_roster(&env.path("root"), &[(&id, "W")]);
        let o = env.run(&[
            "scan",
            "--json",
            "--config",
            &cfg,
            "--root",
            "root",
            "--repo",
            &repo.display().to_string(),
            "--fleet",
            &fleet.display().to_string(),
            "--liveness",
            "assume-alive",
            "--now",
            now,
        ]);
        let idx = stdout_json(&o);
        let flat = fields(record(&idx, "flat"));
        assert_ne!(flat[0], "unknown", "{}: {flat}", file.display());
        let by = |project: &str, agent: &str| {
            idx["records"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["project"] == project && r["agent"] == agent)
                .unwrap_or_else(|| panic!("no {project}/{agent}"))
                .clone()
        };
        let repo_nested = by("repo", "nested");
        for (layout, r) in [
            ("repo", &repo_nested),
            ("fleet", &by("fleet", "nested")),
            ("default", &by("root", "W")),
        ] {
            if fields(r) != flat {
                wrong.push(format!(
                    "{i} {} ({layout}): flat {flat}, per-cwd {}",
                    file.display(),
                    fields(r)
                ));
            }
        }
        assert!(
            repo_nested["sessionFile"]
                .as_str()
                .is_some_and(|f| f.ends_with(&format!("{cwd}/{name}"))),
            "{repo_nested}"
        );
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
