//! Typing text into a tmux pane, the one way it is done: `scripts/agent-send.sh` (embedded, so an
//! installed binary needs no file) makes every check right before it types — the text rules, the
//! pane still runs the named pi, no mode, nothing in pi's editor — then one bracketed paste and a
//! separate Enter (docs/behaviour.md §6). `Multiplexer::deliver` on tmux (`reply`'s typed
//! transport, `deliver` here) and `Tmux::send_text` both run it through `agent_send`; nothing
//! else spawns it, or any shell, outside `mux/`.

use std::ffi::OsString;
use std::process::{Command, ExitStatus};
use std::time::{Duration, Instant};

use super::super::pi_channel::Outcome;
use super::super::spawn::{self, RunError};
use super::super::{ErrorCode, MuxError, PiText, Typed, Untyped};
use super::literal::PaneId;

/// The delivery tool, shipped in `scripts/` and embedded.
pub(crate) const AGENT_SEND: &str = include_str!("../../../scripts/agent-send.sh");
/// Set to a path to run another agent-send script instead of the embedded one.
pub(crate) const AGENT_SEND_ENV: &str = "INTERCOM_PANE_AGENT_SEND";
/// Longest the delivery tool may take (its tmux calls have 5 s each; its waits are about 3 s).
pub(crate) const TOOL_DEADLINE: Duration = Duration::from_secs(15);
/// Cap on the tool's output we keep.
const OUTPUT_CAP: usize = 16 * 1024;
/// Environment a delivery must never inherit: the request is the only source of the target.
const STRIPPED_ENV: [&str; 4] = ["MOSAIC_TMUX_SOCKET", "TMUX", "TMUX_PANE", "TMUX_TMPDIR"];

/// One text for one pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TypedRequest<'a> {
    /// The pane (never a session name: only a pane id names exactly one pane).
    pub target: &'a PaneId,
    /// A socket path (contains a `/`) or a `-L` name; `None`: tmux's default server.
    pub socket: Option<&'a str>,
    /// Who sends (`host:intercom-pane`), shown in the tool's answer.
    pub sender: &'a str,
    /// The pi that must still run in the pane: pid and, when known, its start ticks.
    pub pi: Option<(i32, Option<u64>)>,
    pub text: &'a str,
    /// PATH for the tool (and the tmux it runs); `None`: inherited.
    pub path_env: Option<OsString>,
}

/// The tool's exit codes (see the script's header).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TypedExit {
    /// 0: typed and submitted.
    Delivered,
    /// 2: bad arguments.
    Usage,
    /// 3: no such pane or session.
    NoTarget,
    /// 4: a tmux step failed.
    TmuxFailed,
    /// 5: the text is refused; nothing was typed.
    TextRefused,
    /// 6: the pane is not ready (a mode, a draft or a dialog); nothing was typed.
    NotReady,
    /// 7: the pane does not run that pi; nothing was typed.
    NotThatPi,
    /// 8: typed, but pi's editor still shows text afterwards.
    NotConfirmed,
    /// Any other status, or a signal.
    Other,
}

/// What the tool answered.
#[derive(Debug)]
pub(crate) struct TypedAnswer {
    pub status: ExitStatus,
    /// Trimmed, lossily decoded.
    pub stdout: String,
    pub stderr: String,
}

impl TypedAnswer {
    /// The exit status as the tool's contract names it.
    pub(crate) fn exit(&self) -> TypedExit {
        match self.status.code() {
            Some(0) => TypedExit::Delivered,
            Some(2) => TypedExit::Usage,
            Some(3) => TypedExit::NoTarget,
            Some(4) => TypedExit::TmuxFailed,
            Some(5) => TypedExit::TextRefused,
            Some(6) => TypedExit::NotReady,
            Some(7) => TypedExit::NotThatPi,
            Some(8) => TypedExit::NotConfirmed,
            _ => TypedExit::Other,
        }
    }

    /// The tool's own words for a refusal, without its `agent-send: refused: ` prefix.
    pub(crate) fn reason(&self) -> String {
        let line = self
            .stderr
            .lines()
            .last()
            .unwrap_or("the delivery tool refused");
        let line = line.strip_prefix("agent-send: ").unwrap_or(line);
        line.strip_prefix("refused: ").unwrap_or(line).to_string()
    }
}

/// The server the tool talks to for a registration's socket hint (`-L` as it resolves it: a
/// path, or a name under the default socket folder, since the tool runs without
/// `TMUX_TMPDIR`; none: the default server).
pub(crate) fn tool_socket(socket: Option<&str>) -> Result<std::path::PathBuf, MuxError> {
    Ok(match socket {
        Some(s) if s.contains('/') => std::path::PathBuf::from(s),
        Some(name) => super::args::socket_for_name(name, None)
            .ok_or_else(|| MuxError::new(ErrorCode::BadRequest, "bad socket name"))?,
        None => super::args::socket_for_name("default", None)
            .ok_or_else(|| MuxError::new(ErrorCode::BadRequest, "no default socket"))?,
    })
}

/// The server the tool would talk to (`tool_socket`) is ours, socket and process.
fn server_ours(socket: Option<&str>, deadline: Instant) -> Result<(), MuxError> {
    let path = tool_socket(socket)?;
    crate::mux::server_is_ours(&path, None)?;
    use crate::mux::Multiplexer;
    let pid = match super::Tmux::at_socket(&path).server_identity(deadline)? {
        crate::mux::ServerIdentity::Tmux { server_pid, .. } => Some(server_pid),
        _ => None,
    };
    crate::mux::server_is_ours(&path, pid)
}

/// Why the tool gave no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TypedError {
    /// The server belongs to another user (socket or process): nothing was typed.
    NotOurs(String),
    /// It never started (no bash, no script, spawn failed): nothing was typed.
    NotStarted(String),
    /// It started but did not finish (deadline, output cap): it may have typed.
    Unfinished(String),
}

/// Run the delivery tool once for `req` before `deadline` (never retried: a second run could
/// type twice).
pub(crate) fn agent_send(
    req: &TypedRequest<'_>,
    deadline: Instant,
) -> Result<TypedAnswer, TypedError> {
    // Never type into another user's server: its socket and its process must be ours.
    server_ours(req.socket, deadline).map_err(|e| TypedError::NotOurs(e.to_string()))?;
    let mut cmd = match std::env::var_os(AGENT_SEND_ENV) {
        Some(path) => Command::new(path),
        None => {
            let mut c = Command::new("bash");
            c.arg("-c").arg(AGENT_SEND).arg("agent-send.sh");
            c
        }
    };
    cmd.arg("-s")
        .arg(req.target.as_str())
        .arg("-S")
        .arg(req.sender);
    if let Some(s) = req.socket {
        cmd.arg("-L").arg(s);
    }
    match req.pi {
        Some((pid, Some(ticks))) => cmd.arg("-p").arg(format!("{pid}:{ticks}")),
        Some((pid, None)) => cmd.arg("-p").arg(pid.to_string()),
        None => &mut cmd,
    };
    cmd.arg("-m").arg(req.text);
    for v in STRIPPED_ENV {
        cmd.env_remove(v);
    }
    if let Some(p) = &req.path_env {
        cmd.env("PATH", p);
    }
    match spawn::run(&mut cmd, None, deadline, OUTPUT_CAP) {
        Ok(out) => Ok(TypedAnswer {
            status: out.status,
            stdout: String::from_utf8_lossy(&out.stdout).trim().to_string(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        }),
        Err(RunError::NotFound) => Err(TypedError::NotStarted(
            "bash or the agent-send script is missing".into(),
        )),
        Err(RunError::Spawn(e)) => Err(TypedError::NotStarted(e)),
        Err(e) => Err(TypedError::Unfinished(format!(
            "agent-send did not finish: {e:?}"
        ))),
    }
}

/// `Multiplexer::deliver` on tmux: the tool once, its answer as the receipt's fields; a refusal
/// before anything was typed as `Untyped`.
pub(super) fn deliver(
    socket: &str,
    path_env: Option<OsString>,
    req: &PiText<'_>,
    deadline: Instant,
) -> Result<Typed, Untyped> {
    // Only a pane id names exactly one pane: a registration naming a session is no typed path.
    let pane = PaneId::parse(req.pane).map_err(|_| {
        Untyped::NoPath("the registration names no tmux pane id (%N) to type into".into())
    })?;
    let tool = TypedRequest {
        target: &pane,
        socket: Some(socket),
        sender: req.sender,
        // The pane must still run this very pi (pid and start ticks, checked by the script).
        pi: req.pi,
        text: req.text,
        path_env,
    };
    let typed = |outcome, stderr| Typed {
        outcome,
        pane: req.pane.to_string(),
        exit_code: None,
        signal: None,
        stdout: String::new(),
        stderr,
    };
    let answer = match agent_send(&tool, deadline) {
        Ok(a) => a,
        Err(TypedError::NotStarted(e)) => return Err(Untyped::ToolNotStarted(e)),
        Err(TypedError::NotOurs(e)) => return Err(Untyped::NoPath(e)),
        // It started but did not finish: it may have typed. Report that, never retry.
        Err(TypedError::Unfinished(e)) => return Ok(typed(Outcome::Unconfirmed, e)),
    };
    use std::os::unix::process::ExitStatusExt;
    let outcome = match answer.exit() {
        TypedExit::Delivered => Outcome::Delivered,
        TypedExit::NotReady => return Err(Untyped::Busy(answer.reason())),
        TypedExit::NotThatPi => return Err(Untyped::NoPath(answer.reason())),
        // Typed, but pi's editor still shows text: it may not have been submitted.
        TypedExit::NotConfirmed => Outcome::Unconfirmed,
        _ => Outcome::Failed,
    };
    Ok(Typed {
        exit_code: answer.status.code(),
        signal: answer.status.signal(),
        stdout: answer.stdout,
        stderr: answer.stderr,
        ..typed(outcome, String::new())
    })
}

/// `Tmux::send_text`: the same tool, with no pi to check, as a `MuxError`.
pub(super) fn send_text(
    socket: &str,
    path_env: Option<OsString>,
    pane_id: &PaneId,
    text: &str,
    deadline: Instant,
) -> Result<(), MuxError> {
    let req = TypedRequest {
        target: pane_id,
        socket: Some(socket),
        sender: "intercom-pane",
        pi: None,
        text,
        path_env,
    };
    let answer = match agent_send(&req, deadline) {
        Ok(a) => a,
        Err(TypedError::NotStarted(d)) => return Err(MuxError::new(ErrorCode::NotInstalled, d)),
        Err(TypedError::NotOurs(d)) => return Err(MuxError::new(ErrorCode::NotOurs, d)),
        Err(TypedError::Unfinished(d)) => return Err(MuxError::new(ErrorCode::Timeout, d)),
    };
    let code = match answer.exit() {
        TypedExit::Delivered => return Ok(()),
        TypedExit::NoTarget => ErrorCode::PaneNotFound,
        TypedExit::Usage | TypedExit::TextRefused => ErrorCode::BadRequest,
        TypedExit::TmuxFailed
        | TypedExit::NotReady
        | TypedExit::NotThatPi
        | TypedExit::NotConfirmed
        | TypedExit::Other => ErrorCode::Failed,
    };
    Err(MuxError::new(code, answer.reason()))
}
