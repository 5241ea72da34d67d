//! Boundaries of the design, checked on the source text (docs/architecture.md):
//! - only `store/` writes files (the demo, whose simulated agent stands in for pi, is exempt);
//! - the ground floor (`GROUND_FLOOR`: the store, the log, bounded reads, paths, text, clock,
//!   process identity, state words, signals) names nothing of the crate above it: no `actions/`,
//!   no `cmd/`, … (infrastructure sits below its users); within it the log writes through the
//!   store, so the store never names the log;
//! - only `mux/` spawns tmux, a shell (`bash`, `sh`: agent-send.sh types into panes) or talks
//!   to Herdr; only `hosts/ssh.rs` runs `ssh`; only `signals` handles the quit signals; only `git/mod.rs` runs `git`;
//! - only `mux/` branches on which multiplexer (`MuxKind::Tmux`, `MuxKind::Herdr`): the rest asks
//!   `MuxKind`'s `Caps` and methods or the `Multiplexer` trait;
//! - only `probe/` builds a tokio runtime or blocks on one (`probe::Blocking`, the one blocking
//!   facade for probes);
//! - `ui/` and `views/` read no files and touch no multiplexer, process or probe; `ui/` does not
//!   use `actions/` (mutations come through `ui::ports`), nor do `alerts/`;
//! - `evidence/` (facts) names neither `board/` (the rules) nor `snapshot` (the view model), and
//!   `board/` does not name `snapshot`;
//! - the library exposes only `main_entry` and the test seam (`src/seam.rs`), and the seam
//!   re-exports items on their own paths, never a whole module, so the dead-code lint sees
//!   everything else.
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
        |p| p.starts_with("src/store/") || p.starts_with("src/demo/"),
    );
    assert!(bad.is_empty(), "file writes outside store/: {bad:#?}");
}

/// The ground floor: infrastructure every layer may use, which itself uses only the ground
/// floor. A folder ends with `/`.
const GROUND_FLOOR: &[&str] = &[
    "src/store/",
    "src/log.rs",
    "src/fsguard.rs",
    "src/paths.rs",
    "src/text.rs",
    "src/clock.rs",
    "src/proc/",
    "src/states.rs",
    "src/signals.rs",
];

fn on_ground_floor(p: &str) -> bool {
    GROUND_FLOOR.iter().any(|f| {
        if f.ends_with('/') {
            p.starts_with(f)
        } else {
            p == *f
        }
    })
}

/// The crate's top-level module a ground-floor path names, as `src/<name>.rs` or `src/<name>/`.
fn floor_of(module: &str) -> bool {
    on_ground_floor(&format!("src/{module}.rs")) || on_ground_floor(&format!("src/{module}/"))
}

#[test]
fn the_ground_floor_uses_only_the_ground_floor() {
    // Above all no `crate::actions`: the store once lived there and the log called up into it.
    let mut bad = Vec::new();
    for (path, text) in all() {
        if !on_ground_floor(&path) {
            continue;
        }
        for (i, _) in text.match_indices("crate::") {
            let rest = &text[i + "crate::".len()..];
            let module: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            // `crate::{a, b}` would hide its names from this check: name each path whole.
            // Within the floor the log writes through the store, so the store never names the
            // log (it tells it through `store::on_ignore_problem`).
            let up = path.starts_with("src/store/") && module == "log";
            if module.is_empty() || !floor_of(&module) || up {
                bad.push(format!(
                    "{path}: crate::{}",
                    rest.chars().take(24).collect::<String>()
                ));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "the ground floor reaches above itself: {bad:#?}"
    );
}

#[test]
fn only_mux_spawns_tmux_or_talks_to_herdr() {
    let bad = offenders(&["Command::new(\"tmux\")", "UnixStream"], |p| {
        p.starts_with("src/mux/")
    });
    assert!(bad.is_empty(), "tmux/Herdr outside mux/: {bad:#?}");
}

/// Multiplexer differences live behind `mux/` (docs/architecture.md, "Adding a multiplexer").
/// Two files name one by purpose: `doctor`'s Herdr checks report on Herdr seats, and the demo's
/// simulated panes are on its private tmux server.
#[test]
fn only_mux_branches_on_the_multiplexer() {
    let bad = offenders(&["MuxKind::Tmux", "MuxKind::Herdr"], |p| {
        p.starts_with("src/mux/") || p == "src/doctor/checks.rs" || p == "src/ui/demo.rs"
    });
    assert!(bad.is_empty(), "a multiplexer named outside mux/: {bad:#?}");
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

/// How many `Result<…, String>` a line spells: the last top-level argument of each `Result<`
/// is `String` (the rule `.ci/house-figures.py` counts by).
fn result_strings(line: &str) -> usize {
    let mut n = 0;
    let mut from = 0;
    while let Some(i) = line[from..].find("Result<") {
        let start = from + i + "Result<".len();
        let (mut depth, mut args, mut cur) = (1, Vec::new(), String::new());
        for ch in line[start..].chars() {
            match ch {
                '<' | '(' | '[' => depth += 1,
                '>' | ')' | ']' => depth -= 1,
                _ => {}
            }
            if depth == 0 {
                break;
            }
            if depth == 1 && ch == ',' {
                args.push(std::mem::take(&mut cur));
            } else {
                cur.push(ch);
            }
        }
        args.push(cur);
        if args.len() >= 2 && args.last().is_some_and(|a| a.trim() == "String") {
            n += 1;
        }
        from = start;
    }
    n
}

#[test]
fn errors_are_typed_not_strings() {
    // Each failure a caller may tell apart is an enum of its own (docs/architecture.md):
    // at most 5 `Result<_, String>` in production code.
    let mut found = Vec::new();
    for (path, text) in all() {
        for (i, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for _ in 0..result_strings(code) {
                found.push(format!("{path}:{}", i + 1));
            }
        }
    }
    assert!(
        found.len() <= 5,
        "Result<_, String> in production code: {found:#?}"
    );
    assert_eq!(
        result_strings("fn f() -> Result<Vec<(u8, u8)>, String> {"),
        1
    );
    assert_eq!(result_strings("Result<(), MuxError>"), 0);
}

#[test]
fn one_handler_for_the_quit_signals() {
    // SIGTERM, SIGHUP and SIGINT have one handler (`signals`); a `--watch` engine's waker asks
    // it to write to its eventfd too. (The demo's watchdog only ignores signals.)
    let bad = offenders(&["SigHandler::Handler("], |p| p == "src/signals.rs");
    assert!(bad.is_empty(), "a second signal handler: {bad:#?}");
}

#[test]
fn only_the_git_runner_runs_git() {
    // Every git call goes through `git::run_any` (a deadline, an output cap, git's redirecting
    // variables removed, no pager, no optional locks).
    let bad = offenders(&["Command::new(\"git\")"], |p| p == "src/git/mod.rs");
    assert!(bad.is_empty(), "git run outside src/git/mod.rs: {bad:#?}");
}

#[test]
fn only_probe_builds_a_runtime() {
    // Blocking code runs probes through `probe::Blocking`: one runtime kind, one place.
    let bad = offenders(&["tokio::runtime", "block_on("], |p| {
        p.starts_with("src/probe/")
    });
    assert!(bad.is_empty(), "a tokio runtime outside probe/: {bad:#?}");
}

/// Facts below the rules below the view model: `evidence/` names neither `board/` nor
/// `snapshot`, and `board/` does not name `snapshot` (the pass in `scan/` joins them).
#[test]
fn evidence_board_and_snapshot_go_one_way() {
    let mut bad = offenders(&["crate::board", "crate::snapshot"], |p| {
        !p.starts_with("src/evidence/")
    });
    bad.extend(offenders(&["crate::snapshot"], |p| {
        !p.starts_with("src/board/")
    }));
    assert!(bad.is_empty(), "a layer names one above it: {bad:#?}");
}

/// The alert memory's file is read and written in `alerts/memory_file.rs`: alerts use no action.
#[test]
fn alerts_do_not_use_actions() {
    let bad = offenders(&["crate::actions"], |p| !p.starts_with("src/alerts/"));
    assert!(bad.is_empty(), "alerts/ uses actions/: {bad:#?}");
}

#[test]
fn ui_does_not_use_actions() {
    // The sidebar asks for mutations through `ui::ports`; the real ones are wired in `cmd/`.
    let bad = offenders(&["crate::actions"], |p| !p.starts_with("src/ui/"));
    assert!(bad.is_empty(), "ui/ uses actions/: {bad:#?}");
}

#[test]
fn the_sidebar_state_names_none_of_its_views() {
    // `App` is the model: the files that draw it and add its behaviour name it, never the
    // other way round (the app learns the details viewport from the frame it drew).
    let views = [
        "crate::ui::render",
        "crate::ui::details",
        "crate::ui::list",
        "crate::ui::preview",
        "crate::ui::reply_box",
        "crate::ui::cockpit",
        "crate::ui::spawn_flow",
    ];
    let bad = offenders(&views, |p| p != "src/ui/app.rs" && p != "src/ui/state.rs");
    assert!(bad.is_empty(), "the sidebar's state names a view: {bad:#?}");
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

#[test]
fn the_library_exposes_only_the_entry_and_the_seam() {
    let top = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = std::fs::read_to_string(top.join("src/lib.rs")).unwrap();
    let public: Vec<&str> = lib
        .lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with("pub ") || l.starts_with("pub("))
        .collect();
    assert_eq!(
        public,
        ["pub mod seam;", "pub fn main_entry() -> i32 {"],
        "src/lib.rs exposes more than main_entry and the seam"
    );
    assert!(
        lib.lines().filter(|l| l.starts_with("mod ")).count() > 20,
        "the crate's modules are not declared in src/lib.rs"
    );
}

#[test]
fn the_seam_re_exports_items_on_their_own_paths() {
    let top = Path::new(env!("CARGO_MANIFEST_DIR"));
    let seam = std::fs::read_to_string(top.join("src/seam.rs")).unwrap();
    // The `pub mod` nesting at each line, and every `pub use` statement joined onto one line.
    let mut nest: Vec<String> = Vec::new();
    let mut uses: Vec<(Vec<String>, String)> = Vec::new();
    let mut open: Option<String> = None;
    for line in seam.lines().map(str::trim) {
        if line.starts_with("//") || line.is_empty() {
            continue;
        }
        if let Some(u) = open.as_mut() {
            u.push_str(line);
            if line.ends_with(';') {
                uses.push((nest.clone(), open.take().unwrap()));
            }
        } else if let Some(name) = line
            .strip_prefix("pub mod ")
            .and_then(|l| l.strip_suffix(" {"))
        {
            nest.push(name.to_string());
        } else if line == "}" {
            nest.pop().expect("a `}` closes no module");
        } else if line.starts_with("pub use ") {
            if line.ends_with(';') {
                uses.push((nest.clone(), line.to_string()));
            } else {
                open = Some(line.to_string());
            }
        } else {
            panic!("src/seam.rs holds only `pub mod` mirrors and `pub use`: {line:?}");
        }
    }
    assert!(
        nest.is_empty() && open.is_none(),
        "src/seam.rs is cut short"
    );
    assert!(uses.len() > 50, "no re-exports found in src/seam.rs");
    for (nest, u) in uses {
        let body = u
            .strip_prefix("pub use crate::")
            .and_then(|b| b.strip_suffix(';'))
            .unwrap_or_else(|| panic!("not a re-export from the crate: {u}"));
        let (path, names) = match body.split_once("::{") {
            Some((path, list)) => (path, list.trim_end_matches('}').split(',').collect()),
            None => body
                .rsplit_once("::")
                .map_or(("", vec![body]), |(p, n)| (p, vec![n])),
        };
        assert_eq!(
            path,
            nest.join("::"),
            "{u}: the seam re-exports an item at the path it lives at"
        );
        for name in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
            assert!(
                name != "*" && name != "self" && !is_visible_module(top, path, name),
                "{u}: the seam re-exports a whole module ({name}); name the items a test uses"
            );
        }
    }
}

/// Whether `crate::<path>::<name>` is a module the seam can see: one of the crate's top-level
/// modules, or one its parent declares `pub` (a private `mod parse;` beside a re-exported
/// `fn parse` is not).
fn is_visible_module(top: &Path, path: &str, name: &str) -> bool {
    let parent = if path.is_empty() {
        vec![top.join("src/lib.rs")]
    } else {
        let dir = top.join("src").join(path.replace("::", "/"));
        vec![dir.with_extension("rs"), dir.join("mod.rs")]
    };
    let declared = |l: &str| {
        let l = l.trim();
        (l.starts_with("pub") || path.is_empty())
            && [format!("mod {name};"), format!("mod {name} {{")]
                .iter()
                .any(|d| l.ends_with(d.as_str()))
    };
    parent
        .iter()
        .any(|f| std::fs::read_to_string(f).is_ok_and(|text| text.lines().any(declared)))
}

/// Every ignored test says why (`#[ignore = "…"]` or `cfg_attr(…, ignore = "…")`): `cargo test`
/// then prints the reason beside `ignored`, as the README promises.
#[test]
fn every_ignored_test_says_why() {
    let mut files = Vec::new();
    for dir in ["tests", "src", "benches"] {
        sources(&Path::new(env!("CARGO_MANIFEST_DIR")).join(dir), &mut files);
    }
    let bare = ["#[ignore]", ", ignore)]"];
    let bad: Vec<String> = files
        .iter()
        .filter(|p| !p.ends_with("architecture.rs"))
        .flat_map(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            bare.iter()
                .filter(|b| text.contains(*b))
                .map(|b| format!("{}: {b}", rel(p)))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        bad.is_empty(),
        "an ignored test without its reason: {bad:#?}"
    );
}
