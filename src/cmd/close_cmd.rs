//! `intercom-pane close-worker NAME` and `intercom-pane handoff --job ID`.

use crate::actions::close::{self, CloseExit, CloseRequest};
use crate::actions::handoff::{self, HandoffRequest};
use crate::cli::{CloseWorkerArgs, HandoffArgs};
use crate::clock::{Clock, SystemClock};
use crate::cmd::exit::HandoffExit;
use crate::cmd::text_input::{self, HANDOFF_SUMMARY};
use crate::cmd::{options, refuse};
use crate::evidence::config;
use crate::hosts::expect::SeatExpect;
use crate::mux::MuxEnv;

pub(crate) fn run_close(args: &CloseWorkerArgs) -> CloseExit {
    let r = match options::resolve(&args.src) {
        Ok(r) => r,
        Err(e) => return refuse(e),
    };
    let expect = match SeatExpect::flag(args.expect_seat.as_deref()) {
        Ok(e) => e,
        Err(e) => return refuse(e),
    };
    let req = CloseRequest {
        name: args.name.clone(),
        deadline_secs: args.deadline_secs,
        dry_run: args.dry_run,
        recover: args.recover,
        progress: !args.json,
        on_stage: None,
        on_job: None,
        scan: &r.opts,
        clock: r.clock.as_ref(),
        expect,
        by: crate::evidence::sessions::timeline::Actor::Cli,
    };
    // Ctrl-C (or a hangup) while it waits ends the job `interrupted`, recorded, nothing closed.
    let _stop = crate::signals::StopGuard::install();
    let end = close::close_worker(&req);
    crate::log::write(&crate::log::CloseWorkerDone {
        worker: &args.name,
        exit: end.exit.code(),
        report: &end.report,
        from: None,
        by: None,
    });
    match end.report.refused() {
        // With --json every outcome, refusals included, is the one JSON report on stdout.
        _ if args.json => crate::cmd::out(format_args!(
            "{}",
            serde_json::to_string_pretty(&end.report).unwrap_or_default()
        )),
        Some(why) => eprintln!("intercom-pane: close-worker: {why}"),
        None => {
            let mut text = crate::cmd::close_receipt::receipt(
                &serde_json::to_value(&*end.report).unwrap_or_default(),
                &args.name,
            );
            // What a person must not forget once the worker is gone: work not yet committed.
            if let Some(note) = crate::cmd::review_cmd::uncommitted_note(&r.opts, &args.name) {
                text.push_str(&note);
            }
            crate::cmd::out_bytes(text.as_bytes());
        }
    }
    end.exit
}

pub(crate) fn run_handoff(args: &HandoffArgs) -> HandoffExit {
    let text = match text_input::read_text(
        HANDOFF_SUMMARY,
        args.summary.as_deref(),
        args.file.as_deref(),
        std::io::stdin(),
    ) {
        Ok(t) => t,
        Err(e) => return refuse(e),
    };
    // Only compared with the job's session, never trusted.
    let claimed_session = args.session_id.clone().or_else(|| {
        std::env::var("PI_SESSION_ID")
            .ok()
            .filter(|s| !s.is_empty())
    });
    let root = match &args.root {
        Some(r) => r.clone(),
        None => match std::env::current_dir()
            .ok()
            .and_then(|c| config::discover_root(&c).ok().flatten())
        {
            Some(r) => r,
            None => return refuse("no Intercom root at or above the current folder (give --root)"),
        },
    };
    let req = HandoffRequest {
        root,
        job_id: args.job.clone(),
        summary: text,
        claimed_session,
        from_pid: std::process::id() as i32,
        now: SystemClock.now_ms(),
    };
    match handoff::handoff(&req, &MuxEnv::from_process()) {
        Ok(path) => {
            crate::cmd::out(format_args!(
                "handoff saved for job {} (identity recorded in {})",
                args.job,
                path.display()
            ));
            HandoffExit::Saved
        }
        Err(e) => refuse(e),
    }
}
