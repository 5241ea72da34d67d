//! The test commands the README, the docs and CI give still name tests that exist: every
//! `cargo test --test NAME [MODULE]` a test binary (`tests/<name>/main.rs`) and its module filter a
//! module of it, so a command cannot silently run nothing after tests move.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::readme_support;

use std::path::Path;

#[test]
fn every_test_command_names_a_binary_and_module_that_exist() {
    let top = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut missing = Vec::new();
    let mut checked = 0;
    let mut docs: Vec<String> = [
        "README.md",
        ".ci/run",
        "linux/README.md",
        "fuzz/README.md",
        "CONTRIBUTING.md",
    ]
    .map(String::from)
    .to_vec();
    // Every page of the reference.
    for e in std::fs::read_dir(top.join("docs")).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.ends_with(".md") {
            docs.push(format!("docs/{name}"));
        }
    }
    assert!(docs.len() >= 8, "{docs:?}");
    for doc in docs.iter().filter(|d| top.join(d).exists()) {
        let text = std::fs::read_to_string(top.join(doc)).unwrap();
        for (flag, dir) in [("--test ", "tests"), ("--bench ", "benches")] {
            for after in text.split(flag).skip(1) {
                let mut words = after
                    .split(|c: char| c.is_whitespace() || c == '`')
                    .filter(|w| !w.is_empty());
                let Some(word) = words.next() else { continue };
                // The name ends at the first character a target name cannot hold (`)`, `,`).
                let name = word
                    .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .next()
                    .unwrap_or("");
                // A placeholder (`NAME`, `MODULE`) names nothing to check.
                let placeholder = |w: &str| w.chars().all(|c| c.is_ascii_uppercase() || c == '_');
                if placeholder(name) {
                    continue;
                }
                checked += 1;
                let target = if dir == "tests" {
                    top.join(dir).join(name).join("main.rs")
                } else {
                    top.join(dir).join(format!("{name}.rs"))
                };
                if !target.exists() {
                    missing.push(format!("{doc}: {flag}{name}"));
                    continue;
                }
                let is_name = |w: &&str| w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                // A module filter follows the name only when the command goes on after it.
                if let Some(module) = words
                    .next()
                    .filter(is_name)
                    .filter(|m| !placeholder(m))
                    .filter(|_| word == name)
                {
                    if !top
                        .join(dir)
                        .join(name)
                        .join(format!("{module}.rs"))
                        .exists()
                    {
                        missing.push(format!("{doc}: {flag}{name} {module}"));
                    }
                }
            }
        }
    }
    assert!(
        checked >= 6,
        "only {checked} commands found: the check itself broke"
    );
    assert!(
        missing.is_empty(),
        "commands name missing tests: {missing:?}"
    );
}

/// CI runs the real-pi tier alongside the rest and skips its modules in the main run by name:
/// every test module of `tests/real_pi/` is skipped there, so none runs twice or in both at once.
#[test]
fn ci_skips_every_real_pi_module_in_the_main_run() {
    let top = Path::new(env!("CARGO_MANIFEST_DIR"));
    let ci = std::fs::read_to_string(top.join(".ci/run")).unwrap();
    let main = std::fs::read_to_string(top.join("tests/real_pi/main.rs")).unwrap();
    let mut modules = Vec::new();
    let mut after_path = false;
    for l in main.lines() {
        if let Some(m) = l.strip_prefix("mod ").and_then(|m| m.strip_suffix(';')) {
            // Helpers come in by `#[path]`; the tier's own modules do not.
            if !after_path {
                modules.push(m.to_string());
            }
        }
        after_path = l.starts_with("#[path");
    }
    assert!(modules.len() >= 3, "{modules:?}: the check itself broke");
    let unskipped: Vec<_> = modules
        .iter()
        .filter(|m| !ci.contains(&format!("--skip {m}::")))
        .collect();
    assert!(unskipped.is_empty(), ".ci/run runs {unskipped:?} twice");
}

/// The README's completions and man step, word for word, on a fresh account: an empty HOME, the
/// binary where `cargo install` puts it, `~/.local/bin` not on PATH. Every file lands where the
/// shells look, and `man intercom-pane-doctor` finds its page.
#[test]
#[cfg_attr(
    not(has_man),
    ignore = "man-db's man and manpath are not on PATH (.ci/run installs man-db)"
)]
fn the_completions_and_man_step_works_on_a_fresh_account() {
    let block = readme_support::sh_block("intercom-pane completions bash");
    let fresh = readme_support::FreshHome::new();
    let home = fresh.home();
    let o = std::process::Command::new("bash")
        .args(["-euo", "pipefail", "-c", &block])
        .current_dir(&home)
        .env_clear()
        .env("HOME", &home)
        .env("PATH", fresh.path_env(&[]))
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .env("MANWIDTH", "80")
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{block}\n---\n{out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    for (file, holds) in [
        (
            ".local/share/bash-completion/completions/intercom-pane",
            "close-worker",
        ),
        (".zfunc/_intercom-pane", "#compdef intercom-pane"),
        (
            ".config/fish/completions/intercom-pane.fish",
            "complete -c intercom-pane",
        ),
    ] {
        let text = std::fs::read_to_string(home.join(file)).unwrap_or_default();
        assert!(text.contains(holds), "{file}: {text:.200}");
    }
    // The page itself, as man shows it.
    assert!(out.contains("intercom-pane-doctor"), "{out}");
    assert!(out.contains("--json"), "{out}");
}

/// The README's setup builds the roster with `init` and `spawn`: a person types no JSON and no
/// session id, and the session the last lines go to is the one `init --start --detach` makes
/// for `~/proj` (`<folder>-coordinator`), in the setup and in "Later" alike. (The real-pi tier
/// runs both blocks word for word: `tests/real_pi/real_pi_readme.rs`.)
#[test]
fn the_readme_setup_uses_init_and_spawn_and_the_session_init_makes() {
    let setup = readme_support::sh_block("intercom-pane init --start --detach");
    let later = readme_support::sh_block("tmux respawn-pane");
    for block in [&setup, &later] {
        for typed in [
            "{\"",
            "<<",
            "sessionId",
            "uuid",
            "--session-id",
            "config.json",
        ] {
            assert!(
                !block.contains(typed),
                "the README has {typed:?} to type:\n{block}"
            );
        }
    }
    assert!(setup.contains("mkdir -p ~/proj && cd ~/proj"), "{setup}");
    assert_eq!(setup.matches("intercom-pane spawn ").count(), 2, "{setup}");
    // init names the session after the folder: proj → proj-coordinator.
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_intercom-pane"))
        .args(["init", "--help"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&o.stdout).contains("--detach"));
    for block in [&setup, &later] {
        assert!(
            block.contains(
                "tmux switch-client -t proj-coordinator; else tmux attach -t proj-coordinator"
            ),
            "{block}"
        );
    }
    assert!(later.contains("tmux respawn-pane -t '=proj-coordinator:{start}.{bottom}'"));
}
