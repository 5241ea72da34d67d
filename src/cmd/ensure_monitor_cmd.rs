//! `intercom-pane ensure-monitor`: exit 0 placed, kept or skipped (said on stdout); otherwise the
//! codes of `actions::monitor_run::EnsureError`.
//!
//! The placement never depends on the caller's patience: the command starts a copy of itself
//! (`--in-background`) in a process group of its own, which does all the work under the lock,
//! and waits for it at most `WAIT` (under the pi extension's 3 s). When it ends in time, its
//! output and exit code are this command's; else this command says so and exits 0, and the
//! placement goes on (on Herdr a placement makes about 30 requests, some answered on a 100 ms
//! tick: 0.4–1.7 s measured). Killing this command (the extension's timeout) stops nothing.

use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::actions::monitor_pane::{self, EnsureRequest};
use crate::actions::monitor_run::{EnsureExit, Outcome};
use crate::cli::EnsureMonitorArgs;
use crate::clock::{Clock, SystemClock};
use crate::cmd::refuse;
use crate::evidence::config;
use crate::mux::MuxEnv;

/// How long the command waits for its placement before leaving it to finish alone.
const WAIT: Duration = Duration::from_millis(2000);
/// Cap on the placement's output relayed (a few lines in practice).
const OUTPUT_CAP: usize = 64 * 1024;

pub(crate) fn run(args: &EnsureMonitorArgs) -> EnsureExit {
    if args.in_background {
        return place(args);
    }
    detach(args)
}

/// Start the placement in its own process group and wait for it (at most `WAIT`).
fn detach(args: &EnsureMonitorArgs) -> EnsureExit {
    let Ok(exe) = std::env::current_exe() else {
        return place(args);
    };
    // The placement finds the coordinator's pane from the caller's process: this command's
    // parent (pi, or the shell it was typed into), which outlives this command.
    let caller = args
        .caller_pid
        .unwrap_or_else(|| i32::try_from(std::os::unix::process::parent_id()).unwrap_or(0));
    let mut cmd = Command::new(exe);
    cmd.arg("ensure-monitor").arg("--in-background");
    if let Some(r) = &args.root {
        cmd.arg("--root").arg(r);
    }
    if let Some(c) = &args.config {
        cmd.arg("--config").arg(c);
    }
    if let Some(id) = &args.session_id {
        cmd.arg("--session-id").arg(id);
    }
    if caller > 0 {
        cmd.arg("--caller-pid").arg(caller.to_string());
    }
    if args.recover {
        cmd.arg("--recover");
    }
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let Ok(mut child) = cmd.spawn() else {
        return place(args);
    };
    let out = drain(child.stdout.take());
    let err = drain(child.stderr.take());
    let end = Instant::now() + WAIT;
    // Bounded by WAIT: one look every 20 ms.
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                relay(&out, &err);
                // An unknown code is a failure.
                return status
                    .code()
                    .and_then(EnsureExit::from_code)
                    .unwrap_or(EnsureExit::Failed);
            }
            Ok(None) if Instant::now() < end => std::thread::sleep(Duration::from_millis(20)),
            _ => break,
        }
    }
    crate::cmd::out(format_args!(
        "placing: the monitor is being placed in the background (pid {}); its ownership record and the log (INTERCOM_PANE_LOG) say how it ends",
        child.id()
    ));
    EnsureExit::Done
}

/// What a reader thread collected of a pipe, and the thread (finished at the pipe's end).
type Drained = (Arc<Mutex<Vec<u8>>>, Option<std::thread::JoinHandle<()>>);

/// A reader thread collecting a pipe (at most `OUTPUT_CAP` bytes).
fn drain<R: Read + Send + 'static>(pipe: Option<R>) -> Drained {
    let buf = Arc::new(Mutex::new(Vec::new()));
    let mut reader = None;
    if let Some(mut p) = pipe {
        let b = buf.clone();
        reader = Some(std::thread::spawn(move || {
            let mut chunk = [0u8; 4096];
            // Bounded by the pipe's end and the cap.
            while let Ok(n) = p.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                if let Ok(mut v) = b.lock() {
                    if v.len() < OUTPUT_CAP {
                        v.extend_from_slice(chunk.get(..n).unwrap_or(&[]));
                    }
                }
            }
        }));
    }
    (buf, reader)
}

/// Hand the placement's output on, once both readers reached their pipe's end (at most 500 ms
/// more: a process the placement started could hold a pipe open). Not "once the output stopped
/// growing": on a loaded machine a reader may not have run at all yet, and the output was lost.
fn relay(out: &Drained, err: &Drained) {
    let end = Instant::now() + Duration::from_millis(500);
    let done = |d: &Drained| d.1.as_ref().is_none_or(|t| t.is_finished());
    // Bounded by `end`: the readers finish when the placement's pipes close.
    while Instant::now() < end && !(done(out) && done(err)) {
        std::thread::sleep(Duration::from_millis(5));
    }
    let (out, err) = (&out.0, &err.0);
    if let Ok(v) = out.lock() {
        crate::cmd::out_bytes(&v);
    }
    if let Ok(v) = err.lock() {
        let _ = std::io::stderr().write_all(&v);
    }
}

/// The placement itself (this process holds the lock and does every step).
fn place(args: &EnsureMonitorArgs) -> EnsureExit {
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
    let argv = monitor_pane::monitor_argv(&cfg.root, args.config.as_deref());
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
            err_line(format_args!("intercom-pane: ensure-monitor: Herdr moved your focus and it could not be put back: {detail}"));
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
            err_line(format_args!("intercom-pane: ensure-monitor: {e}"));
            ("failed", e.to_string(), e.exit())
        }
    };
    crate::log::write(&crate::log::EnsureMonitorDone {
        outcome,
        detail: &detail,
        exit: code.code(),
    });
    code
}

/// A line on stderr that never panics: the caller may have stopped reading.
fn err_line(line: std::fmt::Arguments) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}
