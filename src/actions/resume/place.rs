//! Where the resumed worker's window opens, and what runs in it.

use super::{Plan, ResumeRequest};
use crate::actions::launch_spec::{self, LaunchSpec};
use crate::evidence::config::{Agent, IntercomConfig};
use crate::evidence::registrations;
use crate::mux::{self, Multiplexer, MuxEnv, NewWindow, PaneInfo, ServerIdentity};
use crate::owned::resume_report::LaunchPreview;
use crate::proc;
use std::path::Path;
use std::time::{Duration, Instant};

const STEP_DEADLINE: Duration = Duration::from_secs(5);

/// No coordinator pane to open the new window beside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NoPlace;

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
pub(crate) fn coordinator_pane(
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

/// The window: named after the worker, running `pi --session <file>` (an argv, never a shell
/// line on tmux). Without a launch spec: in its project folder, with the environment its
/// extension needs. With one (docs/behaviour.md §10): the recorded arguments with their
/// `--session-id <id>` replaced by `--session <file>` (the file just verified; pi refuses both
/// at once), in the recorded folder, with the recorded environment (`INTERCOM_PANE_CONFIG`
/// replaced by this command's `--config` when given, so the new pi registers where it waits).
pub(super) fn window(
    req: &ResumeRequest,
    agent: &Agent,
    session_file: &Path,
    cwd: &Path,
    beside: &PaneInfo,
    spec: Option<&LaunchSpec>,
) -> NewWindow {
    let (args, env) = launch_spec::start_on(spec, session_file, req.system_config.as_deref());
    let mut argv = vec![req.pi_program.clone()];
    argv.extend(args);
    NewWindow {
        beside: beside.id.clone(),
        // A session of its own (tmux): the worker outlives the coordinator's session, which a
        // restart of the coordinator may end.
        own_session: true,
        name: agent.name.clone(),
        cwd: spec.map_or(cwd, |s| s.cwd.as_path()).to_path_buf(),
        argv,
        env: launch_spec::with_this_binary(env),
    }
}

/// A window the multiplexer would not open exactly as configured (its own words why).
#[derive(Debug, Clone)]
pub(crate) struct NotAsConfigured {
    kind: mux::MuxKind,
    detail: String,
}

impl std::fmt::Display for NotAsConfigured {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cannot open the {} {} as configured: {}",
            self.kind.caps().label,
            self.kind.caps().window_word,
            self.detail
        )
    }
}

/// The window's name and folder exactly as the multiplexer will keep them, or why they cannot
/// be (tmux: `mux::tmux::literal`): checked before anything is fenced or launched.
pub(crate) fn check_exact(kind: mux::MuxKind, w: &NewWindow) -> Result<(), NotAsConfigured> {
    let why = |e: mux::MuxError| NotAsConfigured {
        kind,
        detail: e.detail,
    };
    kind.check_window_name(&w.name).map_err(why)?;
    kind.check_start_dir(&w.cwd).map_err(why)
}

/// What `--dry-run` shows of the launch: exactly what would be asked of the multiplexer.
pub(super) fn launch_preview(plan: &Plan) -> LaunchPreview {
    let w = &plan.window;
    LaunchPreview {
        multiplexer: plan.mux.kind(),
        socket: plan.mux.socket_path().display().to_string(),
        beside: w.beside.clone(),
        name: w.name.clone(),
        cwd: w.cwd.display().to_string(),
        env: w.env.iter().map(|(k, v)| format!("{k}={v}")).collect(),
        argv: w.argv.clone(),
    }
}
