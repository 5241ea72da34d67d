//! The documents name real places: every repository path quoted in backticks (`src/…`,
//! `tests/…`, `linux/…`, `scripts/…`, `docs/…`, `benches/…`, `examples/…`, `fuzz/…`) in the
//! README, `docs/`, the other READMEs and the test files exists, so what they describe cannot
//! drift from the tree unnoticed.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

const ROOTS: [&str; 8] = [
    "src/",
    "tests/",
    "linux/",
    "scripts/",
    "docs/",
    "benches/",
    "examples/",
    "fuzz/",
];

/// A repository path as written: under one of the roots, no placeholder, glob or parent.
fn is_repo_path(q: &str) -> bool {
    ROOTS.iter().any(|r| q.starts_with(r))
        && !q.contains(['*', ' ', '<', '{', '…', '$'])
        && !q.contains("..")
}

/// The repository paths of `text`: quoted in backticks, or a bare word naming a file
/// (`tests/suite/<module>.rs` in running text).
fn quoted_paths(text: &str) -> Vec<String> {
    const FILES: [&str; 7] = [".rs", ".md", ".sh", ".json", ".jsonl", ".ts", ".tmux"];
    let quoted = text
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|q| is_repo_path(q))
        .map(|q| q.trim_end_matches([':', ',', '.']).to_string());
    let bare = text
        .split('`')
        .step_by(2)
        .flat_map(|t| t.split(|c: char| c.is_whitespace() || "()[],;\"'".contains(c)))
        .map(|w| w.trim_end_matches([':', '.']))
        .filter(|w| is_repo_path(w) && FILES.iter().any(|x| w.ends_with(x)))
        .map(str::to_string);
    quoted.chain(bare).collect()
}

/// The quoted paths of `file` that do not exist; how many it quoted. In Rust files only the
/// comments count (a string literal's backticks are data).
fn missing_in(top: &Path, file: &Path) -> (Vec<String>, usize) {
    let mut text = std::fs::read_to_string(file).unwrap();
    if file.extension().is_some_and(|x| x == "rs") {
        text = text
            .lines()
            .filter_map(|l| l.trim_start().strip_prefix("//"))
            .map(|l| format!("{l}\n"))
            .collect();
    }
    let paths = quoted_paths(&text);
    let missing = paths
        .iter()
        .filter(|p| !top.join(p.trim_end_matches('/')).exists())
        .map(|p| format!("{}: {p}", file.strip_prefix(top).unwrap().display()))
        .collect();
    (missing, paths.len())
}

fn files_under(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            files_under(&p, ext, out);
        } else if p.extension().is_some_and(|x| x == ext) {
            out.push(p);
        }
    }
}

#[test]
fn every_path_the_readme_quotes_exists() {
    let top = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (missing, checked) = missing_in(top, &top.join("README.md"));
    // The README is short (the reference is in docs/), but still names a dozen places.
    assert!(
        checked >= 10,
        "only {checked} paths found: the check itself broke"
    );
    assert!(
        missing.is_empty(),
        "README quotes paths that do not exist: {missing:?}"
    );
}

#[test]
fn every_path_the_docs_and_tests_quote_exists() {
    let top = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    files_under(&top.join("docs"), "md", &mut files);
    files_under(&top.join("tests"), "rs", &mut files);
    for f in ["linux/README.md", "fuzz/README.md", "CONTRIBUTING.md"] {
        if top.join(f).exists() {
            files.push(top.join(f));
        }
    }
    let (mut missing, mut checked) = (Vec::new(), 0);
    for f in &files {
        let (m, n) = missing_in(top, f);
        missing.extend(m);
        checked += n;
    }
    assert!(
        checked >= 30,
        "only {checked} paths found in {} files: the check itself broke",
        files.len()
    );
    assert!(
        missing.is_empty(),
        "paths quoted that do not exist: {missing:#?}"
    );
}

/// The README stays the short way in (the reference is `docs/`, which says so).
#[test]
fn the_readme_stays_short_and_docs_say_they_are_the_reference() {
    let top = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(top.join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= 160,
        "README.md has {lines} lines: move reference into docs/"
    );
    for link in ["docs/README.md", "CONTRIBUTING.md", "docs/commands.md"] {
        assert!(readme.contains(link), "README.md does not link {link}");
    }
    let docs = std::fs::read_to_string(top.join("docs/README.md")).unwrap();
    assert!(docs.contains("`docs/` is the reference"), "{docs}");
}
