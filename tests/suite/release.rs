//! The release: `--version` says the version `Cargo.toml` has, and `CHANGELOG.md` is in Keep a
//! Changelog form (https://keepachangelog.com/en/1.1.0/): `## [Unreleased]` first, a dated
//! `## [<version>] - YYYY-MM-DD` section for that version, only the standard subsections, and
//! one line per entry.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::process::Command;

const VERSION: &str = env!("CARGO_PKG_VERSION");

#[test]
fn version_prints_the_cargo_version() {
    let o = Command::new(env!("CARGO_BIN_EXE_intercom-pane"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        format!("intercom-pane {VERSION}\n")
    );
}

#[test]
fn the_changelog_is_in_keep_a_changelog_form_with_one_line_per_entry() {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("CHANGELOG.md"))
        .unwrap();
    let versions: Vec<&str> = text.lines().filter(|l| l.starts_with("## ")).collect();
    assert_eq!(
        versions.first().copied(),
        Some("## [Unreleased]"),
        "the first section must be `## [Unreleased]`: {versions:?}"
    );
    let release = versions
        .iter()
        .find(|l| l.starts_with(&format!("## [{VERSION}] - ")))
        .unwrap_or_else(|| panic!("no `## [{VERSION}] - YYYY-MM-DD` section: {versions:?}"));
    let date = release.rsplit(' ').next().unwrap();
    assert!(
        date.len() == 10 && date.chars().filter(|c| *c == '-').count() == 2,
        "{release}"
    );
    for l in text.lines().filter(|l| l.starts_with("### ")) {
        assert!(
            matches!(
                l,
                "### Added"
                    | "### Changed"
                    | "### Deprecated"
                    | "### Removed"
                    | "### Fixed"
                    | "### Security"
            ),
            "not a Keep a Changelog subsection: {l}"
        );
    }
    // One line per entry: no entry goes on over an indented line.
    let lines: Vec<&str> = text.lines().collect();
    for w in lines.windows(2) {
        assert!(
            !(w[0].starts_with("- ") && w[1].starts_with("  ")),
            "a CHANGELOG entry over several lines; make it one line:\n{}\n{}",
            w[0],
            w[1]
        );
    }
}
