//! `intercom-pane restore [--dry-run] [--only NAME…] [--include-closed] [--continue] [--json]`.

use crate::actions::restore::{self, RestoreExit, RestoreRequest};
use crate::cli::RestoreArgs;
use crate::cmd::options;
use crate::owned::restore_report::RestoreReport;
use crate::text::sanitize;

pub(crate) fn run(args: &RestoreArgs) -> RestoreExit {
    if !args.src.hosts.is_empty() {
        eprintln!(
            "intercom-pane: restore: --host is not supported: restore starts pis on the machine it runs on (run it there)"
        );
        return RestoreExit::Usage;
    }
    let r = match options::resolve(&args.src) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("intercom-pane: restore: {e}");
            return RestoreExit::Usage;
        }
    };
    let absolute = |c: &std::path::PathBuf| {
        std::env::current_dir()
            .map(|d| d.join(c))
            .unwrap_or_else(|_| c.clone())
    };
    let progress = crate::cmd::progress("restore", args.json);
    let req = RestoreRequest {
        dry_run: args.dry_run,
        only: args.only.clone(),
        include_closed: args.include_closed,
        continue_cut_off: args.continue_cut_off,
        wait_secs: args.wait_secs,
        pi_program: args.pi.clone(),
        system_config: args.src.config.as_ref().map(absolute),
        tmux_socket: args.src.tmux_socket.as_ref().map(absolute),
        scan: &r.opts,
        clock: r.clock.as_ref(),
        progress: &|l: &str| progress.line(l),
        by: crate::evidence::sessions::timeline::Actor::Cli,
    };
    let end = restore::restore(&req);
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

fn print_human(v: &RestoreReport) {
    if let Some(why) = &v.reason {
        if v.agents.is_empty() {
            eprintln!("intercom-pane: restore: {}", sanitize(why));
            return;
        }
        crate::cmd::out(format_args!("note: {}", sanitize(why)));
    }
    for a in &v.agents {
        let role = if a.coordinator { " (coordinator)" } else { "" };
        let cut = if a.cut_off { ", cut off mid-turn" } else { "" };
        crate::cmd::out(format_args!(
            "{}: {}{role}{cut}",
            a.outcome.as_str(),
            sanitize(&a.name)
        ));
        for (k, x) in [
            ("reason", &a.reason),
            ("sessionFile", &a.session_file),
            ("cwd", &a.cwd),
            ("pane", &a.pane),
        ] {
            if let Some(x) = x {
                crate::cmd::out(format_args!("  {k}: {}", sanitize(x)));
            }
        }
        if let Some(argv) = &a.argv {
            let shown = serde_json::to_string(argv).unwrap_or_default();
            crate::cmd::out(format_args!("  launch: {}", sanitize(&shown)));
        }
        if let Some(c) = &a.continued {
            let said = if c.delivered {
                "delivered"
            } else {
                "not delivered"
            };
            crate::cmd::out(format_args!(
                "  continue: {said}{}",
                c.reason
                    .as_deref()
                    .map(|r| format!(" ({})", sanitize(r)))
                    .unwrap_or_default()
            ));
        }
    }
    if v.dry_run {
        crate::cmd::out(format_args!("dry run: nothing was started"));
    } else if v.started_nothing {
        crate::cmd::out(format_args!("nothing was started"));
    }
}
