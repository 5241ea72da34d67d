//! `intercom-pane ensure-monitor`: exit 0 placed, kept or skipped (said on stdout); otherwise the
//! codes of `actions::monitor_pane::EnsureError`.

use crate::actions::monitor_pane::{self, EnsureExit, EnsureRequest, Outcome};
use crate::cli::EnsureMonitorArgs;
use crate::clock::{Clock, SystemClock};
use crate::cmd::exit::Refusable;
use crate::cmd::refuse;
use crate::evidence::config;
use crate::mux::MuxEnv;

impl Refusable for EnsureExit {
    const REFUSED: Self = EnsureExit::Refused;
}

pub fn run(args: &EnsureMonitorArgs) -> EnsureExit {
    let root = match &args.root {
        Some(r) => r.clone(),
        None => {
            let cwd = match std::env::current_dir() {
                Ok(c) => c,
                Err(e) => return refuse(format!("cannot read the current folder: {e}")),
            };
            match config::discover_root(&cwd) {
                Ok(Some(r)) => r,
                Ok(None) => {
                    return refuse(format!(
                        "no .pi-intercom/config.json in {} or above: no roster, no monitor",
                        cwd.display()
                    ))
                }
                Err(e) => return refuse(e),
            }
        }
    };
    let cfg = match config::load(&root) {
        Ok(c) => c,
        Err(e) => return refuse(e),
    };
    let exe = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "intercom-pane".into());
    let mut argv = vec![
        exe,
        "monitor".to_string(),
        "--root".to_string(),
        cfg.root.display().to_string(),
    ];
    if let Some(c) = &args.config {
        argv.push("--config".into());
        argv.push(c.display().to_string());
    }
    let req = EnsureRequest {
        config: &cfg,
        session_id: args.session_id.clone(),
        caller_pid: args.caller_pid.unwrap_or(std::process::id() as i32),
        monitor_argv: argv,
        recover: args.recover,
        now: SystemClock.now_ms(),
    };
    let (outcome, detail, code) = match monitor_pane::ensure(&req, &MuxEnv::from_process()) {
        Ok(Outcome::Skipped(why)) => {
            crate::cmd::out(format_args!("skipped: {why}"));
            ("skipped", why, EnsureExit::Done)
        }
        Ok(Outcome::Preserved { pane }) => {
            crate::cmd::out(format_args!("kept: the monitor already runs in {pane}"));
            ("kept", pane, EnsureExit::Done)
        }
        Ok(Outcome::Created { pane }) => {
            crate::cmd::out(format_args!("created: monitor in {pane}"));
            ("created", pane, EnsureExit::Done)
        }
        Ok(Outcome::CreatedFocusMoved { pane, detail }) => {
            crate::cmd::out(format_args!("created: monitor in {pane}"));
            eprintln!("intercom-pane: ensure-monitor: Herdr moved your focus and it could not be put back: {detail}");
            (
                "created_focus_moved",
                format!("{pane}: {detail}"),
                EnsureExit::Done,
            )
        }
        Ok(Outcome::Relaunched { pane }) => {
            crate::cmd::out(format_args!("relaunched: the monitor runs again in {pane} (its pane survived a Herdr server restart)"));
            ("relaunched", pane, EnsureExit::Done)
        }
        Err(e) => {
            eprintln!("intercom-pane: ensure-monitor: {e}");
            ("failed", e.to_string(), e.exit())
        }
    };
    crate::log::event(
        crate::log::event::ENSURE_MONITOR_DONE,
        serde_json::json!({"outcome": outcome, "detail": detail, "exit": code.code()}),
    );
    code
}
