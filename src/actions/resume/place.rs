//! Where the resumed worker's window opens, and what runs in it.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{Plan, ResumeRequest};
use crate::evidence::config::{Agent, IntercomConfig};
use crate::evidence::registrations;
use crate::mux::{self, Multiplexer, MuxEnv, NewWindow, PaneInfo, ServerIdentity};
use crate::proc;

const STEP_DEADLINE: Duration = Duration::from_secs(5);

/// Variables the new pi needs from this command's environment: where pi and node are (PATH),
/// which agent and session folders pi uses, and whether it stays offline (`PI_OFFLINE`: no
/// helper-tool downloads); the binary and config its extension calls are added below.
const PASSED_ENV: [&str; 4] = [
    "PATH",
    "PI_CODING_AGENT_DIR",
    "PI_CODING_AGENT_SESSION_DIR",
    "PI_OFFLINE",
];

/// No coordinator pane to open the new window beside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoPlace;

impl std::fmt::Display for NoPlace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(
            "the coordinator has no live registration with a pane, and this command runs in no tmux or Herdr pane",
        )
    }
}

impl std::error::Error for NoPlace {}

/// The coordinator's pane: from its live registration (server incarnation and pane checked, the
/// registered pi still in that pane), else the pane this command runs in.
pub(super) fn coordinator_pane(
    cfg: &IntercomConfig,
    root: &Path,
    data_root: &Path,
) -> Result<(Box<dyn Multiplexer>, PaneInfo), NoPlace> {
    let deadline = Instant::now() + STEP_DEADLINE;
    if let Some(c) = cfg.coordinator() {
        let set = registrations::read_all(Some(root), data_root);
        let folder = root.join(&c.project_directory);
        if let Some(reg) = set
            .of_seat(&c.session_id, None, Some(&folder))
            .filter(|r| r.matches_seat(None, Some(&folder)).is_ok())
        {
            let alive = reg.identity().is_some() && reg.alive() == Some(true);
            if let (true, Some(m)) = (alive, &reg.mux) {
                if let Some(found) = registered_pane(m, reg.pid, deadline) {
                    return Ok(found);
                }
            }
        }
    }
    let me = std::process::id() as i32;
    let owner = mux::owning_multiplexer(me, &MuxEnv::from_process(), deadline).ok_or(NoPlace)?;
    Ok((mux::open(owner.kind, &owner.socket_path), owner.pane))
}

fn registered_pane(
    m: &registrations::MuxRecord,
    pid: Option<i32>,
    deadline: Instant,
) -> Option<(Box<dyn Multiplexer>, PaneInfo)> {
    let kind = m.kind?;
    let client = mux::open(kind, Path::new(m.socket.as_deref()?));
    if let ServerIdentity::Tmux {
        server_pid,
        start_time,
        ..
    } = client.server_identity(deadline).ok()?
    {
        // A restarted tmux reuses pane ids: the recorded incarnation must still be the server.
        if m.server_pid != Some(i64::from(server_pid)) || m.server_start != Some(start_time) {
            return None;
        }
        // A window is opened only on a server of ours.
        mux::server_is_ours(client.socket_path(), Some(server_pid)).ok()?;
    }
    let pane = client.find_pane(m.pane_id.as_deref()?, deadline).ok()??;
    let (pp, rp) = (pane.pid?, pid?);
    (pp == rp || proc::is_ancestor(pp, rp)).then_some((client, pane))
}

/// The window: named after the worker, in its project folder, running `pi --session <file>`
/// (an argv, never a shell line on tmux), with the environment its extension needs.
pub(super) fn window(
    req: &ResumeRequest,
    agent: &Agent,
    session_file: &Path,
    cwd: &Path,
    beside: &PaneInfo,
) -> NewWindow {
    let mut env: Vec<(String, String)> = PASSED_ENV
        .iter()
        .filter_map(|k| std::env::var(k).ok().map(|v| (k.to_string(), v)))
        .collect();
    if let Ok(exe) = std::env::current_exe() {
        env.push((
            "INTERCOM_PANE_BIN".into(),
            exe.to_string_lossy().into_owned(),
        ));
    }
    if let Some(c) = &req.system_config {
        env.push((
            "INTERCOM_PANE_CONFIG".into(),
            c.to_string_lossy().into_owned(),
        ));
    }
    NewWindow {
        beside: beside.id.clone(),
        name: agent.name.clone(),
        cwd: cwd.to_path_buf(),
        argv: vec![
            req.pi_program.clone(),
            "--session".into(),
            session_file.to_string_lossy().into_owned(),
        ],
        env,
    }
}

/// On tmux, the window's name and folder exactly as tmux will keep them, or why they cannot be
/// (`mux::tmux::literal`): checked before anything is fenced or launched.
pub(super) fn check_exact(kind: mux::MuxKind, w: &NewWindow) -> Result<(), String> {
    if kind == mux::MuxKind::Tmux {
        let tmux =
            |e: mux::MuxError| format!("cannot open the tmux window as configured: {}", e.detail);
        mux::tmux::literal::window_name(&w.name).map_err(tmux)?;
        mux::tmux::literal::start_dir(&w.cwd).map_err(tmux)?;
    }
    Ok(())
}

/// What `--dry-run` shows of the launch: exactly what would be asked of the multiplexer.
pub(super) fn launch_preview(plan: &Plan) -> Value {
    let w = &plan.window;
    json!({"multiplexer": plan.mux.kind().name(), "socket": plan.mux.socket_path(),
        "beside": w.beside, "name": w.name, "cwd": w.cwd,
        "env": w.env.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>(),
        "argv": w.argv})
}
