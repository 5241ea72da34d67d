//! `--help` as a person reads it: each command's own options first, the shared "where to look"
//! flags after them under a heading of their own, then examples and exit codes. Every exit code
//! listed is one the command's exit enum has, and none of the enum's is missing. The whole text
//! of each page is a snapshot, so a change to it shows in review.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;
use std::process::Command;

use intercom_pane::actions::close::CloseExit;
use intercom_pane::actions::init::InitExit;
use intercom_pane::actions::monitor_pane::EnsureExit;
use intercom_pane::actions::reply::ReplyExit;
use intercom_pane::actions::resume::ResumeExit;
use intercom_pane::actions::retire::RetireExit;
use intercom_pane::actions::spawn::SpawnExit;
use intercom_pane::cli::SHARED_HEADING;
use intercom_pane::cmd::exit::*;
use intercom_pane::tools::ToolExit;

/// Every command a person may type, and the codes its exit enum holds.
fn commands() -> Vec<(&'static str, Vec<i32>)> {
    vec![
        ("demo", vec![0, 1, 2]),
        (
            "doctor",
            vec![
                DoctorExit::AllInPlace.code(),
                DoctorExit::CheckFailed.code(),
            ],
        ),
        (
            "monitor",
            [MonitorExit::Quit, MonitorExit::Failed, MonitorExit::Refused]
                .map(MonitorExit::code)
                .to_vec(),
        ),
        (
            "status",
            [StatusExit::Printed, StatusExit::Refused]
                .map(StatusExit::code)
                .to_vec(),
        ),
        (
            "reply",
            [
                ReplyExit::Sent,
                ReplyExit::Failed,
                ReplyExit::Usage,
                ReplyExit::Blank,
                ReplyExit::TooLong,
                ReplyExit::UnknownSeat,
                ReplyExit::NoPath,
                ReplyExit::Connector,
                ReplyExit::ToolNotStarted,
                ReplyExit::Control,
                ReplyExit::NotReady,
                ReplyExit::Unconfirmed,
                ReplyExit::NotTypeable,
            ]
            .map(ReplyExit::code)
            .to_vec(),
        ),
        (
            "close-worker",
            [
                CloseExit::Closed,
                CloseExit::NotClosed,
                CloseExit::Refused,
                CloseExit::Fenced,
                CloseExit::NoReplyPath,
            ]
            .map(CloseExit::code)
            .to_vec(),
        ),
        (
            "resume-worker",
            [
                ResumeExit::Resumed,
                ResumeExit::Failed,
                ResumeExit::Usage,
                ResumeExit::NotConfirmed,
                ResumeExit::StillLive,
                ResumeExit::Fenced,
                ResumeExit::NoSession,
                ResumeExit::NoPlace,
                ResumeExit::LaunchedUnconfirmed,
            ]
            .map(ResumeExit::code)
            .to_vec(),
        ),
        (
            "init",
            [
                InitExit::Created,
                InitExit::Failed,
                InitExit::Usage,
                InitExit::Exists,
            ]
            .map(InitExit::code)
            .to_vec(),
        ),
        (
            "spawn",
            [
                SpawnExit::Spawned,
                SpawnExit::Failed,
                SpawnExit::Usage,
                SpawnExit::BadName,
                SpawnExit::Taken,
                SpawnExit::BadFolder,
                SpawnExit::Full,
                SpawnExit::NoPlace,
                SpawnExit::LaunchedUnconfirmed,
                SpawnExit::PromptNotDelivered,
            ]
            .map(SpawnExit::code)
            .to_vec(),
        ),
        (
            "retire",
            [
                RetireExit::Retired,
                RetireExit::Failed,
                RetireExit::Usage,
                RetireExit::WorktreeKept,
                RetireExit::StillRuns,
                RetireExit::JobOpen,
            ]
            .map(RetireExit::code)
            .to_vec(),
        ),
        (
            "scan",
            [ScanExit::Written, ScanExit::Refused]
                .map(ScanExit::code)
                .to_vec(),
        ),
        (
            "board",
            [BoardExit::Printed, BoardExit::Refused]
                .map(BoardExit::code)
                .to_vec(),
        ),
        (
            "wait",
            [WaitExit::Reached, WaitExit::TimedOut, WaitExit::Refused]
                .map(WaitExit::code)
                .to_vec(),
        ),
        (
            "watch",
            [WatchExit::Stopped, WatchExit::Failed, WatchExit::Refused]
                .map(WatchExit::code)
                .to_vec(),
        ),
        (
            "jump",
            [
                JumpExit::Moved,
                JumpExit::Failed,
                JumpExit::Refused,
                JumpExit::NoTarget,
                JumpExit::Changed,
            ]
            .map(JumpExit::code)
            .to_vec(),
        ),
        (
            "register",
            [
                RegisterExit::Written,
                RegisterExit::NotWritten,
                RegisterExit::Refused,
            ]
            .map(RegisterExit::code)
            .to_vec(),
        ),
        (
            "ensure-monitor",
            [
                EnsureExit::Done,
                EnsureExit::Failed,
                EnsureExit::Refused,
                EnsureExit::NotInPane,
                EnsureExit::Locked,
                EnsureExit::Fenced,
            ]
            .map(EnsureExit::code)
            .to_vec(),
        ),
        (
            "handoff",
            [HandoffExit::Saved, HandoffExit::Refused]
                .map(HandoffExit::code)
                .to_vec(),
        ),
        (
            "tool",
            [ToolExit::Done, ToolExit::NotDone, ToolExit::Refused]
                .map(ToolExit::code)
                .to_vec(),
        ),
        (
            "completions",
            [DocsExit::Written, DocsExit::Failed, DocsExit::Refused]
                .map(DocsExit::code)
                .to_vec(),
        ),
        (
            "man",
            [DocsExit::Written, DocsExit::Failed, DocsExit::Refused]
                .map(DocsExit::code)
                .to_vec(),
        ),
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
