//! `--help` as a person reads it: each command's own options first, the shared "where to look"
//! flags after them under a heading of their own, then examples and exit codes. Every exit code
//! listed is one the command's exit enum has, and none of the enum's is missing. The whole text
//! of each page is a snapshot, so a change to it shows in review.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;
use std::process::Command;

use intercom_pane::seam::actions::close::CloseExit;
use intercom_pane::seam::actions::init::InitExit;
use intercom_pane::seam::actions::monitor_run::EnsureExit;
use intercom_pane::seam::actions::reply::ReplyExit;
use intercom_pane::seam::actions::restore::RestoreExit;
use intercom_pane::seam::actions::resume::ResumeExit;
use intercom_pane::seam::actions::retire::RetireExit;
use intercom_pane::seam::actions::spawn::SpawnExit;
use intercom_pane::seam::cli::SHARED_HEADING;
use intercom_pane::seam::cmd::exit::*;
use intercom_pane::seam::tools::ToolExit;

/// Every command a person may type, and the codes its exit enum holds.
fn commands() -> Vec<(&'static str, Vec<i32>)> {
    vec![
        ("demo", vec![0, 1, 2]),
        ("doctor", DoctorExit::ALL.iter().map(|e| e.code()).collect()),
        (
            "monitor",
            MonitorExit::ALL.iter().map(|e| e.code()).collect(),
        ),
        ("status", StatusExit::ALL.iter().map(|e| e.code()).collect()),
        (
            "explain",
            ExplainExit::ALL.iter().map(|e| e.code()).collect(),
        ),
        ("log", LogExit::ALL.iter().map(|e| e.code()).collect()),
        ("seen", vec![0, 2, 20, 21]),
        ("hello", vec![0]),
        ("reply", ReplyExit::ALL.iter().map(|e| e.code()).collect()),
        (
            "close-worker",
            CloseExit::ALL.iter().map(|e| e.code()).collect(),
        ),
        (
            "resume-worker",
            ResumeExit::ALL.iter().map(|e| e.code()).collect(),
        ),
        (
            "restore",
            RestoreExit::ALL.iter().map(|e| e.code()).collect(),
        ),
        ("init", InitExit::ALL.iter().map(|e| e.code()).collect()),
        ("spawn", SpawnExit::ALL.iter().map(|e| e.code()).collect()),
        ("retire", RetireExit::ALL.iter().map(|e| e.code()).collect()),
        ("budget", BudgetExit::ALL.iter().map(|e| e.code()).collect()),
        ("review", ReviewExit::ALL.iter().map(|e| e.code()).collect()),
        ("land", LandExit::ALL.iter().map(|e| e.code()).collect()),
        ("scan", ScanExit::ALL.iter().map(|e| e.code()).collect()),
        ("board", BoardExit::ALL.iter().map(|e| e.code()).collect()),
        ("wait", WaitExit::ALL.iter().map(|e| e.code()).collect()),
        ("watch", WatchExit::ALL.iter().map(|e| e.code()).collect()),
        ("jump", JumpExit::ALL.iter().map(|e| e.code()).collect()),
        (
            "register",
            RegisterExit::ALL.iter().map(|e| e.code()).collect(),
        ),
        (
            "ensure-monitor",
            EnsureExit::ALL.iter().map(|e| e.code()).collect(),
        ),
        (
            "handoff",
            HandoffExit::ALL.iter().map(|e| e.code()).collect(),
        ),
        ("tool", ToolExit::ALL.iter().map(|e| e.code()).collect()),
        (
            "completions",
            DocsExit::ALL.iter().map(|e| e.code()).collect(),
        ),
        ("man", DocsExit::ALL.iter().map(|e| e.code()).collect()),
    ]
}

fn help(args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_intercom-pane"))
        .args(args)
        .env_remove("COLUMNS")
        .output()
        .unwrap();
    assert!(o.status.success(), "{args:?}: {o:?}");
    String::from_utf8(o.stdout).unwrap()
}

/// The codes listed under "Exit codes:" (a `128+N` line names signals, not a code).
fn listed_codes(page: &str) -> BTreeSet<i32> {
    let (_, codes) = page.split_once("\nExit codes:\n").expect("no exit codes");
    codes
        .lines()
        .filter_map(|l| l.split_whitespace().next()?.parse().ok())
        .collect()
}

#[test]
fn every_command_lists_its_own_options_first_then_examples_and_its_exit_codes() {
    let top = help(&["--help"]);
    for (cmd, codes) in commands() {
        assert!(
            top.contains(&format!("\n  {cmd} ")),
            "{cmd} not listed:\n{top}"
        );
        let page = help(&[cmd, "--help"]);
        insta::assert_snapshot!(format!("help_{cmd}"), page);
        let own = page.find("\nOptions:\n").expect("no Options");
        if let Some(shared) = page.find(SHARED_HEADING) {
            assert!(own < shared, "{cmd}: shared flags before its own:\n{page}");
            // Nothing of the command's own after the shared heading but the examples.
            let after = &page[shared..page.find("\nExamples").unwrap_or(page.len())];
            for own_flag in ["--json ", "--dry-run", "--print "] {
                assert!(
                    !after.contains(own_flag),
                    "{cmd}: {own_flag} among the shared"
                );
            }
        }
        assert!(
            page.contains("\nExamples") || page.contains("\nRun by"),
            "{cmd}: no example:\n{page}"
        );
        let want: BTreeSet<i32> = codes.into_iter().collect();
        assert_eq!(listed_codes(&page), want, "{cmd}: exit codes:\n{page}");
    }
    assert!(top.contains("intercom-pane demo"), "{top}");
    insta::assert_snapshot!("help_top", top);
}

/// `-h` is the same page: nothing shows only with the long flag.
#[test]
fn dash_h_and_help_show_the_same_page() {
    for cmd in ["reply", "close-worker", "monitor", "status"] {
        assert_eq!(help(&[cmd, "-h"]), help(&[cmd, "--help"]), "{cmd}");
    }
}
