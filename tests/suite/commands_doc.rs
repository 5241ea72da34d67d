//! `docs/commands.md` against the clap definitions: its generated part is what
//! `intercom-pane commands-md` renders now, and, read independently from each command's
//! `--help`, every visible command has a section there, every flag of it is listed (in the
//! section or under "Where to look"), and no flag is listed that the command lacks. Each failure
//! names the command that regenerates the page.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

const REGENERATE: &str = "regenerate it: cargo run -q -- commands-md --write docs/commands.md";

fn run(args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_intercom-pane"))
        .args(args)
        .env_remove("COLUMNS")
        .output()
        .unwrap();
    assert!(o.status.success(), "{args:?}: {o:?}");
    String::from_utf8(o.stdout).unwrap()
}

fn page() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/commands.md")).unwrap()
}

/// The commands `--help` lists (hidden ones are not listed).
fn commands() -> Vec<String> {
    let top = run(&["--help"]);
    let list = top
        .split_once("\nCommands:\n")
        .expect("no Commands")
        .1
        .split("\n\n")
        .next()
        .unwrap();
    list.lines()
        .filter_map(|l| l.strip_prefix("  ")?.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

/// The `--long` flags an option line spells: a help page's lines that start with `-` (up to the
/// two spaces before the help text), or a table row's first cell.
fn flags(text: &str, table: bool) -> BTreeSet<String> {
    text.lines()
        .filter_map(|l| {
            if table {
                l.strip_prefix("| `")?.split('`').next()
            } else {
                let l = l.trim_start();
                l.starts_with('-')
                    .then(|| l.split("  ").next().unwrap_or(l))
            }
        })
        .flat_map(|spelling| {
            spelling
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .filter(|w| w.starts_with("--") && w.len() > 2)
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .filter(|f| f != "--help" && f != "--version")
        .collect()
}

/// The text of one command's section: from its heading to the next one.
fn section<'a>(page: &'a str, heading: &str) -> &'a str {
    let start = page
        .find(&format!("\n### {heading}\n"))
        .unwrap_or_else(|| panic!("docs/commands.md has no section {heading}; {REGENERATE}"));
    let rest = &page[start + 1..];
    let end = rest[4..].find("\n### ").map_or(rest.len(), |e| e + 4);
    &rest[..end]
}

#[test]
fn the_generated_part_is_what_the_clap_definitions_render() {
    let page = page();
    let generated = run(&["commands-md"]);
    let first = generated.lines().next().unwrap();
    let start = page
        .find(first)
        .unwrap_or_else(|| panic!("docs/commands.md lost its generated part; {REGENERATE}"));
    assert!(
        page[start..].starts_with(&generated),
        "docs/commands.md is out of date with src/cli.rs / src/cli_help.rs; {REGENERATE}"
    );
}

#[test]
fn every_command_and_flag_is_listed_and_no_other() {
    let page = page();
    // The groups of flags several commands share ("Where to look", "Alerts"): sections whose
    // heading is not a command.
    let shared: BTreeSet<String> = page
        .split("\n### ")
        .skip(1)
        .filter(|s| !s.starts_with('`'))
        .flat_map(|s| flags(s.split("\n## ").next().unwrap_or(s), true))
        .collect();
    assert!(
        shared.contains("--root") && shared.contains("--settle-secs"),
        "{shared:?}"
    );
    let cmds = commands();
    assert!(cmds.len() > 20, "{cmds:?}");
    for cmd in &cmds {
        let help = run(&[cmd, "--help"]);
        let want = flags(&help, false);
        let listed = flags(section(&page, &format!("`{cmd}`")), true);
        for f in &want {
            assert!(
                listed.contains(f) || shared.contains(f),
                "{cmd} {f} is missing from docs/commands.md; {REGENERATE}"
            );
        }
        for f in &listed {
            assert!(
                want.contains(f),
                "docs/commands.md lists {cmd} {f}, which the command does not have; {REGENERATE}"
            );
        }
    }
    // The shared flags are ones some command has.
    let all: BTreeSet<String> = cmds
        .iter()
        .flat_map(|c| flags(&run(&[c, "--help"]), false))
        .collect();
    for f in &shared {
        assert!(
            all.contains(f),
            "docs/commands.md lists {f}, which no command has; {REGENERATE}"
        );
    }
}
