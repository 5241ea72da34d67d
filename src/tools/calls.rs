//! One call of one tool, after `caller::verify`: each runs the commands' own code.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use crate::actions::close::{self, CloseExit, CloseRequest};
use crate::actions::reply;
use crate::actions::resume::{self, ResumeExit, ResumeRequest};
use crate::actions::spawn::{self, Folder, SpawnExit, SpawnRequest};
use crate::clock::{format_iso, Clock, Ms};
use crate::exit_code::exit_enum;
use crate::scan::{self, ScanOptions};
use crate::snapshot::{Row, RowRole};
use crate::views::board_page::{self, BoardQuery};
use crate::views::timeline as timeline_view;

use super::caller::Coordinator;
use super::wait::{self, WaitRequest};
use super::{
    BoardParams, Call, CloseParams, LogParams, ReplyParams, ResumeParams, ReviewParams,
    SpawnParams, WaitParams, RESUME_WAIT_SECS, SPAWN_WAIT_SECS,
};

/// What a call needs: the verified coordinator, the scan options (rooted at its roster), the
/// clock, the `--config` a resumed pi passes on, and where an early answer goes (the close's
/// acceptance, printed before the job runs on).
pub(crate) struct Ctx<'a> {
    pub coordinator: &'a Coordinator,
    pub opts: &'a ScanOptions,
    pub clock: &'a dyn Clock,
    pub system_config: Option<PathBuf>,
    pub early: &'a dyn Fn(&Value),
}

exit_enum! {
    /// How a call ended (the process exit code).
    ToolExit {
        /// Done: the page, the receipt of a delivered or queued reply, a close that closed, a
        /// resume that registered, a wait that ended (reached or timed out).
        Done = 0,
        /// Ran but did not succeed (a failed or unconfirmed reply, a close not closed, a failed
        /// resume).
        NotDone = 1,
        /// Refused before anything was done (not the coordinator's pi, bad arguments, a refusal of
        /// the command itself).
        Refused = 2,
    }
}

pub(crate) struct Outcome {
    pub exit: ToolExit,
    pub result: Value,
}

/// A refusal: nothing was done, and why. Every tool's refusal carries `refused`; the caller's
/// check also says `coordinator: false` and its code.
#[derive(Serialize)]
pub(crate) struct Refused<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coordinator: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<&'a str>,
    pub refused: String,
}

impl Refused<'_> {
    pub(crate) fn because(why: impl std::fmt::Display) -> Self {
        Refused {
            coordinator: None,
            code: None,
            refused: why.to_string(),
        }
    }
}

/// A typed answer as the JSON value an `Outcome` carries.
pub(crate) fn answer(v: &impl Serialize) -> Value {
    serde_json::to_value(v).unwrap_or_default()
}

fn refused(why: impl std::fmt::Display) -> Outcome {
    Outcome {
        exit: ToolExit::Refused,
        result: answer(&Refused::because(why)),
    }
}

pub(crate) fn run(call: Call, ctx: &Ctx) -> Outcome {
    match call {
        Call::Board(a) => board(a, ctx),
        Call::Reply(a) => reply_to(a, ctx),
        Call::CloseWorker(a) => close_worker(a, ctx),
        Call::ResumeWorker(a) => resume_worker(a, ctx),
        Call::SpawnWorker(a) => spawn_worker(a, ctx),
        Call::Wait(a) => wait_for(a, ctx),
        Call::Review(a) => review(a, ctx),
        Call::Log(a) => log(a, ctx),
    }
}

/// A page of one worker's timeline, newest first (`log NAME`'s entries).
fn log(a: LogParams, ctx: &Ctx) -> Outcome {
    let now = ctx.clock.now_ms();
    let since = match a.since.as_deref() {
        None => None,
        Some(s) => match crate::evidence::sessions::timeline::parse_since(s, now) {
            Some(at) => Some(at),
            None => return refused("since: a duration (45s, 30m, 2h, 1d) or an ISO time"),
        },
    };
    let pass = match scan::run(ctx.opts, ctx.clock, None, None) {
        Ok(p) => p,
        Err(e) => return refused(e),
    };
    let log = match timeline_view::seat_log(&pass, &a.name, since) {
        Ok(l) => l,
        Err(e) => return refused(e),
    };
    let page = timeline_view::page(&log, since, a.offset, a.limit.unwrap_or(20));
    match serde_json::to_value(&page) {
        Ok(v) => Outcome {
            exit: ToolExit::Done,
            result: v,
        },
        Err(e) => refused(e),
    }
}

fn board(a: BoardParams, ctx: &Ctx) -> Outcome {
    let pass = match scan::run(ctx.opts, ctx.clock, None, None) {
        Ok(p) => p,
        Err(e) => return refused(e),
    };
    let q = BoardQuery {
        attention: a.attention,
        name: a.name,
        host: a.host,
        offset: a.offset,
        limit: a.limit.unwrap_or(10),
    };
    // The resume stage of configured workers, for the page's seats only (bounded by the page).
    let root = &ctx.coordinator.root;
    let resume_of = |r: &Row| {
        (r.role == RowRole::Worker)
            .then(|| resume::fence::fence_stage(root, &r.id))
            .flatten()
    };
    match board_page::page(&pass.snapshot, &q, &resume_of) {
        Ok(page) => Outcome {
            exit: ToolExit::Done,
            result: page,
        },
        Err(e) => refused(e),
    }
}

/// Whether `who` names the coordinator's own seat (it never replies to itself).
fn is_coordinator(ctx: &Ctx, who: &str) -> bool {
    let c = ctx.coordinator;
    let key = format!("{}/{}", scan::base_name(&c.root), c.name);
    who.to_lowercase() == c.name.to_lowercase() || who.to_lowercase() == key.to_lowercase()
}

fn reply_to(a: ReplyParams, ctx: &Ctx) -> Outcome {
    if is_coordinator(ctx, &a.name) {
        return refused("the coordinator does not reply to itself");
    }
    if let Err(r) = reply::check_text(&a.text) {
        return refused_reply(r);
    }
    let pass = match scan::run(ctx.opts, ctx.clock, None, None) {
        Ok(p) => p,
        Err(e) => return refused(e),
    };
    match reply::send(
        &pass,
        &a.name,
        &a.text,
        ctx.clock.now_ms(),
        crate::evidence::sessions::timeline::Sender::CoordinatorTool,
    ) {
        Ok(receipt) => Outcome {
            exit: if receipt.delivered {
                ToolExit::Done
            } else {
                ToolExit::NotDone
            },
            result: answer(&receipt),
        },
        Err(r) => refused_reply(r),
    }
}

/// A reply refused before anything was sent.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ReplyRefused {
    outcome: &'static str,
    refused: String,
    exit_code: i32,
}

fn refused_reply(r: reply::Refusal) -> Outcome {
    let v = ReplyRefused {
        outcome: "refused",
        refused: r.to_string(),
        exit_code: r.exit().code(),
    };
    Outcome {
        exit: ToolExit::Refused,
        result: answer(&v),
    }
}

/// The close's first answer: the job is recorded and runs on.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CloseAccepted<'a> {
    accepted: bool,
    job_id: &'a str,
    worker: &'a str,
    deadline_at: String,
    detached: bool,
    note: &'static str,
}

/// The close's last answer, with its report; a refusal also says `accepted: false` and why.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CloseDone<'a> {
    done: bool,
    worker: &'a str,
    exit_code: i32,
    closed: bool,
    report: &'a crate::owned::close_report::CloseReport,
    #[serde(skip_serializing_if = "Option::is_none")]
    accepted: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    refused: Option<&'a str>,
}

/// The close: answers with the job id once the job is recorded (`ctx.early`), then runs the job
/// to its end, detached from pi's process group and session, so neither pi's tool timeout, a
/// signal to pi's group, nor pi exiting stops it half-way. The ending is the last line.
fn close_worker(a: CloseParams, ctx: &Ctx) -> Outcome {
    // A new session of its own (this command is never a group leader: pi spawned it in pi's
    // group). Failure only means the job stays in pi's group; it still runs.
    let detached = nix::unistd::setsid().is_ok();
    let worker = crate::text::sanitize(&a.name);
    let accepted = |job: &str, deadline_at: Ms| {
        (ctx.early)(&answer(&CloseAccepted {
            accepted: true,
            job_id: job,
            worker: &worker,
            deadline_at: format_iso(deadline_at),
            detached,
            note: "the close runs in the background; its outcome arrives as a message and on the board (closeJob)",
        }));
    };
    let req = CloseRequest {
        name: a.name.clone(),
        deadline_secs: a.deadline_seconds.unwrap_or(close::MAX_DEADLINE_SECS),
        dry_run: false,
        recover: false,
        progress: false,
        on_stage: None,
        on_job: Some(&accepted),
        expect: None,
        scan: ctx.opts,
        clock: ctx.clock,
        by: crate::evidence::sessions::timeline::Actor::CoordinatorTool,
    };
    let end = close::close_worker(&req);
    crate::log::write(&crate::log::CloseWorkerDone {
        worker: &a.name,
        exit: end.exit.code(),
        report: &end.report,
        from: None,
        by: Some("intercom_close_worker"),
    });
    let exit = match end.exit {
        CloseExit::Closed => ToolExit::Done,
        CloseExit::NotClosed => ToolExit::NotDone,
        CloseExit::Refused
        | CloseExit::Fenced
        | CloseExit::NoReplyPath
        | CloseExit::SeatChanged => ToolExit::Refused,
    };
    let refused = end.report.refused();
    let result = answer(&CloseDone {
        done: true,
        worker: &worker,
        exit_code: end.exit.code(),
        closed: end.exit == CloseExit::Closed,
        report: &end.report,
        accepted: refused.map(|_| false),
        refused,
    });
    Outcome { exit, result }
}

fn resume_worker(a: ResumeParams, ctx: &Ctx) -> Outcome {
    let quiet = |_: &str| {};
    let req = ResumeRequest {
        name: a.name,
        confirm_closed: a.confirm_closed,
        dry_run: false,
        recover: false,
        wait_secs: RESUME_WAIT_SECS,
        pi_program: "pi".into(),
        system_config: ctx.system_config.clone(),
        scan: ctx.opts,
        clock: ctx.clock,
        progress: &quiet,
        expect: None,
        by: crate::evidence::sessions::timeline::Actor::CoordinatorTool,
    };
    let end = resume::resume_worker(&req);
    let exit = match end.exit {
        ResumeExit::Resumed => ToolExit::Done,
        ResumeExit::Failed | ResumeExit::LaunchedUnconfirmed => ToolExit::NotDone,
        _ => ToolExit::Refused,
    };
    let refused = end.report.result == crate::owned::resume_report::ResumeResult::Refused;
    Outcome {
        exit,
        result: answer(&WithExit {
            report: &end.report,
            exit_code: end.exit.code(),
            refused: refused.then_some(end.report.reason.as_deref()),
        }),
    }
}

fn spawn_worker(a: SpawnParams, ctx: &Ctx) -> Outcome {
    let quiet = |_: &str| {};
    let folder = match (a.dir, a.worktree) {
        // A folder under the coordinator's root, whatever folder this command runs in.
        (Some(d), _) => Folder::Dir(ctx.coordinator.root.join(d)),
        (None, true) => Folder::Worktree(a.branch),
        (None, false) => Folder::Root,
    };
    let req = SpawnRequest {
        name: a.name,
        folder,
        description: a.description,
        prompt: a.prompt,
        model: a.model,
        thinking: a.thinking,
        extra_args: Vec::new(),
        budget: None,
        wait_secs: SPAWN_WAIT_SECS,
        pi_program: "pi".into(),
        system_config: ctx.system_config.clone(),
        scan: ctx.opts,
        clock: ctx.clock,
        progress: &quiet,
        by: crate::evidence::sessions::timeline::Actor::CoordinatorTool,
    };
    let end = spawn::spawn(&req);
    let exit = match end.exit {
        SpawnExit::Spawned => ToolExit::Done,
        SpawnExit::Failed | SpawnExit::LaunchedUnconfirmed | SpawnExit::PromptNotDelivered => {
            ToolExit::NotDone
        }
        _ => ToolExit::Refused,
    };
    let refused = end.report.result == crate::owned::spawn_report::SpawnResult::Refused;
    Outcome {
        exit,
        result: answer(&WithExit {
            report: &end.report,
            exit_code: end.exit.code(),
            refused: refused.then_some(end.report.reason.as_deref()),
        }),
    }
}

/// A command's report with its exit code; a refusal also says why under `refused` (its
/// `reason`), as every tool's refusal does.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WithExit<'a, R> {
    #[serde(flatten)]
    report: &'a R,
    exit_code: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    refused: Option<Option<&'a str>>,
}

fn wait_for(a: WaitParams, ctx: &Ctx) -> Outcome {
    let req = WaitRequest {
        name: a.name,
        states: a
            .states
            .iter()
            .filter_map(|s| wait::state_named(s))
            .collect(),
        timeout: Duration::from_secs(a.timeout_seconds),
        opts: ctx.opts,
        clock: ctx.clock,
    };
    match wait::wait(&req) {
        Ok(v) => Outcome {
            exit: ToolExit::Done,
            result: serde_json::to_value(v).unwrap_or_default(),
        },
        Err(e) => refused(e),
    }
}

/// Files and commits a tool answer lists (it must stay well under 64 KiB).
const REVIEW_FILES: usize = 100;
const REVIEW_COMMITS: usize = 30;
/// The answer's size the lists are cut to (a tool line is at most 64 KiB).
const REVIEW_MAX_BYTES: usize = 40 * 1024;

fn review(a: ReviewParams, ctx: &Ctx) -> Outcome {
    let pass = match scan::run(ctx.opts, ctx.clock, None, None) {
        Ok(p) => p,
        Err(e) => return refused(e),
    };
    let Some(cfg) = pass.config.as_ref() else {
        return refused("no Intercom roster");
    };
    let Some(agent) = cfg.find_by_name(&a.name) else {
        return refused(format!(
            "no worker named {:?}",
            crate::text::sanitize(&a.name)
        ));
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let (mut rev, _) =
        crate::review::worker::review_with_overlaps(&pass, cfg, agent, a.into.as_deref(), deadline);
    rev.files_truncated |= rev.files.len() > REVIEW_FILES;
    rev.files.truncate(REVIEW_FILES);
    rev.commits.truncate(REVIEW_COMMITS);
    rev.merge.conflicts.truncate(REVIEW_FILES);
    rev.overlaps.truncate(20);
    for o in &mut rev.overlaps {
        o.files.truncate(50);
    }
    // Long names could still make the answer too long for one tool line: halve the lists until
    // it fits (the totals still count everything; `filesTruncated` says so).
    let size = |r: &crate::review::Review| serde_json::to_vec(r).map_or(usize::MAX, |v| v.len());
    for _ in 0..16 {
        if size(&rev) <= REVIEW_MAX_BYTES {
            break;
        }
        rev.files_truncated = true;
        rev.files.truncate(rev.files.len() / 2);
        rev.merge.conflicts.truncate(rev.merge.conflicts.len() / 2);
        rev.commits.truncate(rev.commits.len() / 2);
        for o in &mut rev.overlaps {
            o.files.truncate(o.files.len() / 2);
        }
    }
    Outcome {
        exit: ToolExit::Done,
        result: serde_json::to_value(&rev).unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::owned::close_report::CloseReport;
    use crate::owned::spawn_report::SpawnReport;

    #[test]
    fn a_refused_report_has_its_exit_code_then_its_reason_under_refused() {
        let r = SpawnReport::refused("no".into());
        let v = answer(&WithExit {
            report: &r,
            exit_code: 2,
            refused: Some(r.reason.as_deref()),
        });
        assert_eq!(
            v.to_string(),
            r#"{"result":"refused","reason":"no","exitCode":2,"refused":"no"}"#
        );
    }

    #[test]
    fn a_refused_close_says_accepted_false_and_why_after_its_report() {
        let report = CloseReport::Refused {
            refused: "busy".into(),
        };
        let refused = report.refused();
        let v = answer(&CloseDone {
            done: true,
            worker: "W",
            exit_code: 2,
            closed: false,
            report: &report,
            accepted: refused.map(|_| false),
            refused,
        });
        assert_eq!(
            v.to_string(),
            r#"{"done":true,"worker":"W","exitCode":2,"closed":false,"report":{"refused":"busy"},"accepted":false,"refused":"busy"}"#
        );
    }
}
