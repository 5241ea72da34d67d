//! Boundaries of the design, checked on the source text (design/architecture.md):
//! - only `actions/store.rs` (and its own `store/` folder) writes files (the demo, whose
//!   simulated agent stands in for pi, is exempt);
//! - only `mux/` spawns tmux, a shell (`bash`, `sh`: agent-send.sh types into panes) or talks
//!   to Herdr; only `hosts/ssh.rs` runs `ssh`;
//! - `ui/` and `views/` read no files and touch no multiplexer, process or probe; `ui/` does not
//!   use `actions/` (mutations come through `ui::ports`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The file's text before its unit tests.
fn production_text(p: &Path) -> String {
    let text = std::fs::read_to_string(p).unwrap();
    match text.find("#[cfg(test)]") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

fn rel(p: &Path) -> String {
    p.strip_prefix(env!("CARGO_MANIFEST_DIR"))
        .unwrap()
        .display()
        .to_string()
}

fn all() -> Vec<(String, String)> {
    let mut files = Vec::new();
    sources(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    assert!(files.len() > 20, "source tree not found");
    files.iter().map(|p| (rel(p), production_text(p))).collect()
}

fn offenders(forbidden: &[&str], allowed: impl Fn(&str) -> bool) -> Vec<String> {
    let mut bad = Vec::new();
    for (path, text) in all() {
        if allowed(&path) {
            continue;
        }
        for f in forbidden {
            if text.contains(f) {
                bad.push(format!("{path}: {f}"));
            }
        }
    }
    bad
}

#[test]
fn only_the_store_writes_files() {
    let bad = offenders(
        &[
            "File::create",
            "fs::write(",
            ".write(true)",
            ".append(true)",
            "create_new(",
            "fs::remove_file",
            "fs::rename",
            "fs::create_dir",
            "DirBuilder",
        ],
        |p| {
            p == "src/actions/store.rs"
                || p.starts_with("src/actions/store/")
                || p.starts_with("src/demo/")
        },
    );
    assert!(
        bad.is_empty(),
        "file writes outside actions/store.rs: {bad:#?}"
    );
}

#[test]
fn only_mux_spawns_tmux_or_talks_to_herdr() {
    let bad = offenders(&["Command::new(\"tmux\")", "UnixStream"], |p| {
        p.starts_with("src/mux/")
    });
    assert!(bad.is_empty(), "tmux/Herdr outside mux/: {bad:#?}");
}

#[test]
fn only_mux_spawns_a_shell() {
    let bad = offenders(
        &[
            "Command::new(\"bash\")",
            "Command::new(\"sh\")",
            "Command::new(\"/bin/sh\")",
            "Command::new(\"/bin/bash\")",
            "Command::new(\"/usr/bin/env\")",
        ],
        |p| p.starts_with("src/mux/"),
    );
    assert!(bad.is_empty(), "a shell spawned outside mux/: {bad:#?}");
}

#[test]
fn only_the_transport_runs_ssh() {
    // Every connection to another host goes through `hosts::ssh` (its options, the channel
    // budget, the one quoting rule, stderr kept off the screen).
    let bad = offenders(
        &["Command::new(\"ssh\")", "Command::new(\"/usr/bin/ssh\")"],
        |p| p == "src/hosts/ssh.rs",
    );
    assert!(bad.is_empty(), "ssh run outside hosts/ssh.rs: {bad:#?}");
}

#[test]
fn ui_does_not_use_actions() {
    // The sidebar asks for mutations through `ui::ports`; the real ones are wired in `cmd/`.
    let bad = offenders(&["crate::actions"], |p| !p.starts_with("src/ui/"));
    assert!(bad.is_empty(), "ui/ uses actions/: {bad:#?}");
}

#[test]
fn views_and_ui_read_nothing_themselves() {
    let bad = offenders(
        &[
            "std::fs",
            "crate::mux",
            "crate::proc",
            "crate::probe",
            "crate::fsguard",
            "crate::liveness",
            "std::process::Command",
        ],
        |p| !(p.starts_with("src/ui/") || p.starts_with("src/views/")),
    );
    assert!(bad.is_empty(), "I/O in a view: {bad:#?}");
}
