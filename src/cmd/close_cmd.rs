//! `intercom-pane close-worker NAME` and `intercom-pane handoff --job ID`.

use std::io::Read;

use crate::actions::close::{self, CloseRequest};
use crate::actions::handoff::{self, HandoffRequest};
use crate::cli::{CloseWorkerArgs, HandoffArgs};
use crate::clock::{Clock, SystemClock};
use crate::cmd::{options, refuse};
use crate::evidence::config;
use crate::fsguard;
use crate::mux::MuxEnv;

/// Bytes read for a summary from a file or standard input (then capped at 4000 characters).
const INPUT_CAP: u64 = 64 * 1024;

pub fn run_close(args: &CloseWorkerArgs) -> i32 {
    let r = match options::resolve(&args.src) {
        Ok(r) => r,
        Err(e) => return refuse(e),
    };
    let req = CloseRequest {
        name: args.name.clone(),
        deadline_secs: args.deadline_secs,
        dry_run: args.dry_run,
        recover: args.recover,
        progress: !args.json,
        scan: &r.opts,
        clock: r.clock.as_ref(),
    };
    let end = close::close_worker(&req);
    crate::log::event(
        crate::log::event::CLOSE_WORKER_DONE,
        serde_json::json!({"worker": args.name, "exit": end.code, "report": end.report}),
    );
    let text = serde_json::to_string_pretty(&end.report).unwrap_or_default();
    match end.report.get("refused").and_then(|r| r.as_str()) {
        // With --json every outcome, refusals included, is the one JSON report on stdout.
        Some(why) if !args.json => eprintln!("intercom-pane: close-worker: {why}"),
        _ => crate::cmd::out(format_args!("{text}")),
    }
    end.code
}

fn summary(args: &HandoffArgs) -> Result<String, String> {
    let bytes = match (&args.file, args.summary.as_deref()) {
        (Some(p), _) => fsguard::read_capped(p, INPUT_CAP)
            .map_err(|e| format!("-f {}: cannot read ({})", p.display(), e.code()))?,
        (None, Some("-")) => {
            let mut b = Vec::new();
            std::io::stdin()
                .take(INPUT_CAP + 1)
                .read_to_end(&mut b)
                .map_err(|e| format!("cannot read standard input: {e}"))?;
            b
        }
        (None, Some(s)) => return Ok(s.to_string()),
        (None, None) => return Err("give --summary TEXT, --summary - or -f FILE".into()),
    };
    String::from_utf8(bytes).map_err(|_| "the summary is not UTF-8".into())
}

pub fn run_handoff(args: &HandoffArgs) -> i32 {
    let text = match summary(args) {
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
            0
        }
        Err(e) => refuse(e),
    }
}
