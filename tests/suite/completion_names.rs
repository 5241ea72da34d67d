//! Shell completion completes worker names from the roster (`intercom-pane names`), in real bash:
//! only for the commands that take one, matched to what was typed, and a hostile name is only
//! ever a value (quoted on the command line, never run).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::scan_support::*;

use std::path::Path;
use std::process::Command;

/// What bash completes for `intercom-pane WORDS…` (the last word the one being completed), run
/// in `cwd` with the binary on PATH.
fn complete(env: &Env, cwd: &Path, words: &[&str]) -> Vec<String> {
    let script = env.path("completion.bash");
    let o = env.run(&["completions", "bash"]);
    assert!(o.status.success());
    std::fs::write(&script, &o.stdout).unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_intercom-pane"))
        .parent()
        .unwrap();
    let words: Vec<String> = words
        .iter()
        .map(|w| format!("'{}'", w.replace('\'', "'\\''")))
        .collect();
    let line = format!(
        "source {}; COMP_WORDS=(intercom-pane {}); COMP_CWORD={}; \
         _intercom_pane_with_names intercom-pane; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script.display(),
        words.join(" "),
        words.len()
    );
    let o = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &line])
        .current_dir(cwd)
        .env_clear()
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .env("HOME", env.path("home"))
        .env("XDG_STATE_HOME", env.path("state"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn bash_completes_the_rosters_names_and_runs_none_of_them() {
    let env = Env::new();
    let root = env.path("proj");
    write_roster(
        &root,
        &[
            ("a", "Builder"),
            ("b", "Reviewer"),
            ("c", "odd $(touch pwned) name"),
        ],
    );
    let sub = root.join("src");
    std::fs::create_dir_all(&sub).unwrap();
    // From a folder inside the roster: names matching what was typed.
    assert_eq!(complete(&env, &sub, &["reply", "B"]), ["Builder"]);
    let all = complete(&env, &sub, &["close-worker", ""]);
    assert!(
        all.contains(&"Builder".to_string()) && all.contains(&"Coordinator".to_string()),
        "{all:?}"
    );
    // The hostile name is offered quoted, as one word, and nothing ran.
    assert!(
        all.contains(&"odd\\ \\$\\(touch\\ pwned\\)\\ name".to_string()),
        "{all:?}"
    );
    assert!(!sub.join("pwned").exists() && !env.path("pwned").exists());
    // land takes several names.
    assert_eq!(
        complete(&env, &sub, &["land", "Builder", "R"]),
        ["Reviewer"]
    );
    // spawn's NAME is a new one, and a flag is a flag: no roster names there.
    assert!(!complete(&env, &sub, &["spawn", "B"]).contains(&"Builder".to_string()));
    assert!(!complete(&env, &sub, &["reply", "-"]).contains(&"Builder".to_string()));
    // Outside any roster: nothing from a roster.
    let outside = env.path("elsewhere");
    std::fs::create_dir_all(&outside).unwrap();
    assert!(complete(&env, &outside, &["reply", "B"]).is_empty());
}
