//! `intercom-pane resume-worker NAME --confirm-closed [--dry-run] [--recover] [--json]`.

use crate::actions::resume::{self, ResumeExit, ResumeRequest};
use crate::cli::ResumeWorkerArgs;
use crate::cmd::options;
use crate::text::sanitize;

pub fn run(args: &ResumeWorkerArgs) -> ResumeExit {
    let r = match options::resolve(&args.src) {
        Ok(r) => r,
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

fn print_human(v: &serde_json::Value) {
    let s = |k: &str| sanitize(v[k].as_str().unwrap_or(""));
    let result = s("result");
    if result == "refused" {
        eprintln!("intercom-pane: resume-worker: {}", s("reason"));
        return;
    }
    crate::cmd::out(format_args!("{result}: {}", s("worker")));
    if let Some(checks) = v["checks"].as_array() {
        for c in checks {
            crate::cmd::out(format_args!("  ok  {}", sanitize(c.as_str().unwrap_or(""))));
        }
    }
    for k in ["sessionFile", "beside", "pane", "reason", "note"] {
        if let Some(x) = v[k].as_str() {
            crate::cmd::out(format_args!("  {k}: {}", sanitize(x)));
        }
    }
    if let Some(argv) = v.get("argv") {
        crate::cmd::out(format_args!("  launch: {}", sanitize(&argv.to_string())));
    }
    match v.get("launchSpec").filter(|s| !s.is_null()) {
        Some(spec) => crate::cmd::out(format_args!(
            "  launch spec: {} (spawned {})",
            sanitize(spec["path"].as_str().unwrap_or("")),
            sanitize(spec["createdAt"].as_str().unwrap_or(""))
        )),
        None if v.get("argv").is_some() => crate::cmd::out(format_args!(
            "  launch spec: none recorded (not started by spawn): pi --session <file> in its projectDirectory"
        )),
        None => {}
    }
    if let Some(h) = v.get("handoff").filter(|h| !h.is_null()) {
        crate::cmd::out(format_args!(
            "  last handoff ({} s old): {}",
            h["ageSeconds"],
            sanitize(h["summary"].as_str().unwrap_or(""))
        ));
    }
}
