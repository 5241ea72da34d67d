//! The typed transport: `scripts/agent-send.sh` types the text into the seat's tmux pane. The
//! script makes every check right before it types (the pane still runs the registered pi, no
//! mode, no draft in pi's editor) and answers with an exit code, mapped here: a refusal sends
//! nothing (`Refusal`), anything after the paste is a receipt.

use std::process::Command;
use std::time::{Duration, Instant};

use super::{Outcome, Receipt, Refusal, Transport};
use crate::clock::Ms;
use crate::evidence::registrations::{Registration, RunState};
use crate::mux::spawn;
use crate::scan::ReplyTarget;

/// The delivery tool, shipped in `scripts/` and embedded so an installed binary needs no file.
pub const AGENT_SEND: &str = include_str!("../../../scripts/agent-send.sh");
/// Set to a path to run another agent-send script instead of the embedded one.
pub const AGENT_SEND_ENV: &str = "INTERCOM_PANE_AGENT_SEND";
/// Deadline for the delivery tool (its tmux calls have 5 s each; its waits are about 3 s).
const TOOL_DEADLINE: Duration = Duration::from_secs(15);
/// Cap on the tool's output we keep.
const OUTPUT_CAP: usize = 16 * 1024;
/// Environment a delivery must never inherit: the registration is the only source of the target.
const STRIPPED_ENV: [&str; 4] = ["MOSAIC_TMUX_SOCKET", "TMUX", "TMUX_PANE", "TMUX_TMPDIR"];

fn host() -> String {
    crate::fsguard::read_capped(std::path::Path::new("/proc/sys/kernel/hostname"), 256)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty() && h.chars().all(|c| c.is_ascii_graphic()))
        .unwrap_or_else(|| "localhost".into())
}

pub(super) fn send(
    key: &str,
    t: &ReplyTarget,
    reg: &Registration,
    body: &str,
    now: Ms,
) -> Result<Receipt, Refusal> {
    let mut cmd = match std::env::var_os(AGENT_SEND_ENV) {
        Some(path) => Command::new(path),
        None => {
            let mut c = Command::new("bash");
            c.arg("-c").arg(AGENT_SEND).arg("agent-send.sh");
            c
        }
    };
    cmd.arg("-s")
        .arg(&t.target)
        .arg("-S")
        .arg(format!("{}:intercom-pane", host()));
    if let Some(s) = &t.socket {
        cmd.arg("-L").arg(s);
    }
    // The pane must still run this very pi (pid and start ticks, checked by the script).
    if let Some(pid) = reg.pid {
        match reg.start_ticks {
            Some(ticks) => cmd.arg("-p").arg(format!("{pid}:{ticks}")),
            None => cmd.arg("-p").arg(pid.to_string()),
        };
    }
    cmd.arg("-m").arg(body);
    for v in STRIPPED_ENV {
        cmd.env_remove(v);
    }
    let out = match spawn::run(&mut cmd, None, Instant::now() + TOOL_DEADLINE, OUTPUT_CAP) {
        Ok(o) => o,
        Err(spawn::RunError::NotFound) => {
            return Err(Refusal::ToolNotStarted(
                "bash or the agent-send script is missing".into(),
            ))
        }
        Err(spawn::RunError::Spawn(e)) => return Err(Refusal::ToolNotStarted(e)),
        Err(e) => {
            // It started but did not finish: it may have typed. Report that, never retry.
            let mut r = Receipt::new(key, t, Transport::Typed, Outcome::Unconfirmed, now);
            r.stderr = format!("agent-send did not finish: {e:?}");
            return Ok(r);
        }
    };
    use std::os::unix::process::ExitStatusExt;
    let stdout = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
    let outcome = match out.status.code() {
        Some(0)
            if reg
                .run_state
                .as_ref()
                .is_some_and(|r| r.state == RunState::Working) =>
        {
            // pi takes a message submitted during a turn as a follow-up: queued, not started.
            Outcome::Queued
        }
        Some(0) => Outcome::Delivered,
        Some(6) => return Err(Refusal::NotReady(key.into(), script_reason(&stderr))),
        Some(7) => return Err(Refusal::NoPath(key.into(), script_reason(&stderr))),
        // Typed, but pi's editor still shows text: it may not have been submitted.
        Some(8) => Outcome::Unconfirmed,
        _ => Outcome::Failed,
    };
    let mut r = Receipt::new(key, t, Transport::Typed, outcome, now);
    r.exit_code = out.status.code();
    r.signal = out.status.signal();
    r.stdout = stdout;
    r.stderr = stderr;
    Ok(r)
}

/// The script's own words, without its `agent-send: refused: ` prefix.
fn script_reason(stderr: &str) -> String {
    let line = stderr.lines().last().unwrap_or("the delivery tool refused");
    let line = line.strip_prefix("agent-send: ").unwrap_or(line);
    line.strip_prefix("refused: ").unwrap_or(line).to_string()
}
