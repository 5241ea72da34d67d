//! `intercom-pane resume-worker NAME --confirm-closed [--dry-run] [--recover] [--json]`.

use crate::actions::resume::{self, ResumeExit, ResumeRequest};
use crate::cli::ResumeWorkerArgs;
use crate::cmd::options;
use crate::owned::resume_report::{ResumeReport, ResumeResult};
use crate::text::sanitize;

pub(crate) fn run(args: &ResumeWorkerArgs) -> ResumeExit {
    let r = match options::resolve(&args.src) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("intercom-pane: resume-worker: {e}");
            return ResumeExit::Usage;
        }
    };
    let expect = match crate::hosts::expect::SeatExpect::flag(args.expect_seat.as_deref()) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("intercom-pane: resume-worker: {e}");
            return ResumeExit::Usage;
        }
    };
    let system_config = args.src.config.as_ref().map(|c| {
        std::env::current_dir()
            .map(|d| d.join(c))
            .unwrap_or_else(|_| c.clone())
    });
    let progress = crate::cmd::progress("resume-worker", args.json);
    let req = ResumeRequest {
        name: args.name.clone(),
        confirm_closed: args.confirm_closed,
        dry_run: args.dry_run,
        recover: args.recover,
        wait_secs: args.wait_secs,
        pi_program: args.pi.clone(),
        system_config,
        scan: &r.opts,
        clock: r.clock.as_ref(),
        progress: &|l: &str| progress.line(l),
        expect,
        by: crate::evidence::sessions::timeline::Actor::Cli,
    };
    let end = resume::resume_worker(&req);
    progress.finish();
    if args.json {
        crate::cmd::out(format_args!(
            "{}",
            serde_json::to_string_pretty(&end.report).unwrap_or_default()
        ));
    } else {
        print_human(&end.report);
    }
    end.exit
}

fn print_human(v: &ResumeReport) {
    let result = v.result.as_str();
    if v.result == ResumeResult::Refused {
        eprintln!(
            "intercom-pane: resume-worker: {}",
            sanitize(v.reason.as_deref().unwrap_or(""))
        );
        return;
    }
    crate::cmd::out(format_args!(
        "{result}: {}",
        sanitize(v.worker.as_deref().unwrap_or(""))
    ));
    for c in v.checks.iter().flatten() {
        crate::cmd::out(format_args!("  ok  {}", sanitize(c)));
    }
    for (k, x) in [
        ("sessionFile", &v.session_file),
        ("beside", &v.beside),
        ("pane", &v.pane),
        ("reason", &v.reason),
        ("note", &v.note),
    ] {
        if let Some(x) = x {
            crate::cmd::out(format_args!("  {k}: {}", sanitize(x)));
        }
    }
    if let Some(argv) = &v.argv {
        let shown = serde_json::to_string(argv).unwrap_or_default();
        crate::cmd::out(format_args!("  launch: {}", sanitize(&shown)));
    }
    match &v.launch_spec {
        Some(Some(spec)) => crate::cmd::out(format_args!(
            "  launch spec: {} (spawned {})",
            sanitize(&spec.path),
            sanitize(&spec.created_at)
        )),
        _ if v.argv.is_some() => crate::cmd::out(format_args!(
            "  launch spec: none recorded (not started by spawn): pi --session <file> in its projectDirectory"
        )),
        _ => {}
    }
    if let Some(Some(h)) = &v.handoff {
        crate::cmd::out(format_args!(
            "  last handoff ({} s old): {}",
            h.age_seconds,
            sanitize(&h.summary)
        ));
    }
}
