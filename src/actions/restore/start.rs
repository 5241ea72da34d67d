//! Starting what the checks let through: the coordinator in a session of its own on its
//! server, the workers in windows beside its pane (as `spawn` places them), one bounded wait for
//! every registration, the launch records, and `--continue`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::check::{self, Plan};
use super::{RestoreRequest, POLL};
use crate::actions::launch_spec::{self, LaunchSpec, Placement, Stage, PASSED_ENV};
use crate::actions::reply;
use crate::actions::resume::{live, place};
use crate::clock::{format_iso, Ms};
use crate::evidence::config::{Agent, IntercomConfig};
use crate::evidence::registrations::Registration;
use crate::mux::{self, Multiplexer, MuxKind, NewWindow, PaneInfo};
use crate::owned::restore_report::{AgentRestore, ContinueSent, RestoreOutcome, RestoreReport};
use crate::proc;
use crate::text::sanitize;

const STEP_DEADLINE: Duration = Duration::from_secs(5);
/// What `--continue` sends.
const CONTINUE_TEXT: &str = "continue";

/// One started agent, waiting for its registration.
struct Started {
    line: AgentRestore,
    plan: Plan,
    pane: PaneInfo,
    window: NewWindow,
    mux: MuxKind,
    socket: PathBuf,
}

fn base_line(root: &Path, plan: &Plan, window: &NewWindow) -> AgentRestore {
    let a = &plan.agent;
    let mut l = AgentRestore::new(&a.name, &a.session_id, a.coordinator);
    l.cut_off = plan.cut_off;
    l.session_file = Some(plan.session_file.display().to_string());
    l.cwd = Some(plan.cwd.display().to_string());
    l.argv = Some(window.argv.clone());
    l.env = Some(window.env.iter().map(|(k, _)| k.clone()).collect());
    l.launch_spec = plan.spec.as_ref().map(|s| {
        crate::paths::launch_spec(root, &s.session_id)
            .display()
            .to_string()
    });
    l
}

fn window_of(plan: &Plan, beside: &str, own_session: bool) -> NewWindow {
    NewWindow {
        beside: beside.to_string(),
        own_session,
        name: plan.agent.name.clone(),
        cwd: plan.cwd.clone(),
        argv: plan.argv.clone(),
        env: launch_spec::with_this_binary(plan.env.clone()),
    }
}

fn fail(mut l: AgentRestore, outcome: RestoreOutcome, why: String) -> AgentRestore {
    l.outcome = outcome;
    l.reason = Some(why);
    l
}

/// Start every plan (or, with `--dry-run`, say what would be started); every agent's line.
pub(super) fn start_all(
    req: &RestoreRequest,
    root: &Path,
    cfg: &IntercomConfig,
    plans: Vec<Plan>,
    report: &mut RestoreReport,
) -> Vec<AgentRestore> {
    let mut lines = Vec::new();
    let mut started: Vec<Started> = Vec::new();
    let (coordinator, workers): (Vec<Plan>, Vec<Plan>) =
        plans.into_iter().partition(|p| p.agent.coordinator);
    // Where the workers go: beside the coordinator's new pane, else its running one.
    let mut beside: Option<(Box<dyn Multiplexer>, PaneInfo)> = None;
    // The kind of server the coordinator goes on (the workers' names are checked for it too
    // when its pane is not there yet, on a dry run).
    let mut coord_kind = None;
    for plan in coordinator {
        let w = window_of(&plan, "", true);
        let l = base_line(root, &plan, &w);
        let (kind, socket) = match coordinator_server(req, root, &plan) {
            Ok(s) => s,
            Err(e) => {
                lines.push(fail(l, RestoreOutcome::Cannot, e.to_string()));
                continue;
            }
        };
        coord_kind = Some(kind);
        report.server = Some(socket.display().to_string());
        if let Err(why) = place::check_exact(kind, &w) {
            lines.push(fail(l, RestoreOutcome::Cannot, why.to_string()));
            continue;
        }
        if req.dry_run {
            lines.push(fail(
                l,
                RestoreOutcome::WouldRestore,
                "nothing was started".into(),
            ));
            continue;
        }
        match mux::open_first_session(kind, &socket, &w, Instant::now() + STEP_DEADLINE) {
            Ok(pane) => {
                beside = Some((mux::open(kind, &socket), pane.clone()));
                report.started_nothing = false;
                started.push(Started {
                    line: l,
                    plan,
                    pane,
                    window: w,
                    mux: kind,
                    socket,
                });
            }
            Err(e) => {
                let why = format!("the session was not opened: {e}");
                lines.push(fail(l, RestoreOutcome::Failed, why))
            }
        }
    }
    if !workers.is_empty() && beside.is_none() {
        match place::coordinator_pane(cfg, root, &req.scan.data_root) {
            Ok(found) => beside = Some(found),
            // A dry run whose coordinator would be started first has its pane then.
            Err(_) if req.dry_run && coord_kind.is_some() => {}
            Err(e) if req.dry_run => report.reason = Some(format!("no coordinator pane yet: {e}")),
            Err(e) => {
                for plan in workers {
                    let w = window_of(&plan, "", false);
                    let why = format!("no coordinator pane to open beside: {e}");
                    lines.push(fail(
                        base_line(root, &plan, &w),
                        RestoreOutcome::Cannot,
                        why,
                    ));
                }
                return finish(req, root, started, lines);
            }
        }
    }
    // Each worker's window after the one before (tmux opens a window right after the one it is
    // given), so the windows keep the roster's order.
    let mut after: Option<String> = None;
    for plan in workers {
        let beside_id = after
            .clone()
            .or_else(|| beside.as_ref().map(|(_, p)| p.id.clone()))
            .unwrap_or_default();
        let w = window_of(&plan, &beside_id, false);
        let l = base_line(root, &plan, &w);
        let kind = beside
            .as_ref()
            .map(|(m, _)| m.kind())
            .or(coord_kind)
            .unwrap_or(MuxKind::SOCKET_FLAG);
        if let Err(why) = place::check_exact(kind, &w) {
            lines.push(fail(l, RestoreOutcome::Cannot, why.to_string()));
            continue;
        }
        let Some((m, _)) = beside.as_ref().filter(|_| !req.dry_run) else {
            lines.push(fail(
                l,
                RestoreOutcome::WouldRestore,
                "nothing was started".into(),
            ));
            continue;
        };
        match m.new_window(&w, Instant::now() + STEP_DEADLINE) {
            Ok(pane) => {
                report.started_nothing = false;
                after = Some(pane.id.clone());
                started.push(Started {
                    line: l,
                    plan,
                    pane,
                    window: w,
                    mux: m.kind(),
                    socket: m.socket_path().to_path_buf(),
                });
            }
            Err(e) => lines.push(fail(
                l,
                RestoreOutcome::Failed,
                format!("the {} was not opened: {e}", m.kind().caps().window_word),
            )),
        }
    }
    finish(req, root, started, lines)
}

/// Why the coordinator has no server to be started on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NoServer {
    /// It last ran on a multiplexer that opens no session from outside (Herdr): its label.
    Unsupported(&'static str),
    /// Nothing names a server for it.
    Unknown,
}

impl std::fmt::Display for NoServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoServer::Unsupported(label) => write!(
                f,
                "it ran in {label}, where restore cannot open a place for it: start it there (the README's \"Later\" block), then run restore again for the workers"
            ),
            NoServer::Unknown => f.write_str(
                "no tmux server known for it (never registered in one): give --tmux-socket",
            ),
        }
    }
}

impl std::error::Error for NoServer {}

/// The server the coordinator is started on: `--tmux-socket`, else the one it was last
/// registered on, else the one its launch record names, else the one this command runs in.
fn coordinator_server(
    req: &RestoreRequest,
    root: &Path,
    plan: &Plan,
) -> Result<(MuxKind, PathBuf), NoServer> {
    let usable = |kind: MuxKind, socket: PathBuf| {
        if kind.caps().starts_sessions {
            Ok((kind, socket))
        } else {
            Err(NoServer::Unsupported(kind.caps().label))
        }
    };
    if let Some(s) = &req.tmux_socket {
        return Ok((MuxKind::SOCKET_FLAG, s.clone()));
    }
    let last = check::last_registration(root, &req.scan.data_root, &plan.agent.session_id);
    if let Some(m) = last.as_ref().and_then(|r| r.mux.as_ref()) {
        if let (Some(kind), Some(socket)) = (m.kind, m.socket.as_deref()) {
            return usable(kind, PathBuf::from(socket));
        }
    }
    if let Some(p) = plan.spec.as_ref().and_then(|s| s.placement.as_ref()) {
        return usable(p.multiplexer, p.socket.clone());
    }
    let me = std::process::id() as i32;
    let deadline = Instant::now() + STEP_DEADLINE;
    match mux::owning_multiplexer(me, &mux::MuxEnv::from_process(), deadline) {
        Some(owner) => usable(owner.kind, owner.socket_path),
        None => Err(NoServer::Unknown),
    }
}

/// Wait for the registrations, record the launches, send `--continue`; every line.
fn finish(
    req: &RestoreRequest,
    root: &Path,
    started: Vec<Started>,
    mut lines: Vec<AgentRestore>,
) -> Vec<AgentRestore> {
    let mut pending: Vec<(Started, Option<i32>)> = started.into_iter().map(|s| (s, None)).collect();
    let begun = Instant::now();
    let wait = Duration::from_secs(req.wait_secs);
    let mut last_note = begun - Duration::from_secs(10);
    loop {
        for (s, pid) in pending.iter_mut().filter(|(_, p)| p.is_none()) {
            *pid = registered_in(req, root, &s.plan.agent.session_id, &s.pane);
        }
        let waiting = pending.iter().filter(|(_, p)| p.is_none()).count();
        if waiting == 0 || begun.elapsed() >= wait {
            break;
        }
        if last_note.elapsed() >= Duration::from_secs(1) {
            (req.progress)(&format!(
                "waiting for {waiting} agent(s) to register ({:.0} s of {} s)",
                begun.elapsed().as_secs_f64(),
                req.wait_secs
            ));
            last_note = Instant::now();
        }
        std::thread::sleep(POLL);
    }
    let now = req.clock.now_ms();
    for (mut s, pid) in pending {
        s.line.pane = Some(s.pane.id.clone());
        s.line.registered_pid = pid;
        if pid.is_some() {
            s.line.outcome = RestoreOutcome::Restored;
            if s.plan.cut_off {
                s.line.reason = Some(if req.continue_cut_off {
                    "cut off mid-turn: sent \"continue\" (see continued)".into()
                } else {
                    "cut off mid-turn: started, not prompted (--continue sends \"continue\")".into()
                });
            }
        } else {
            s.line.outcome = RestoreOutcome::LaunchedUnconfirmed;
            s.line.reason = Some(format!(
                "no registration from pane {} within {} s: a launch is not readiness",
                s.pane.id, req.wait_secs
            ));
        }
        let spec_path = record_started(root, &req.scan.data_root, &s, pid.is_some(), now);
        s.line.launch_spec = spec_path;
        if req.continue_cut_off && s.plan.cut_off && pid.is_some() {
            s.line.continued = Some(send_continue(req, root, &s.plan.agent));
        }
        lines.push(s.line);
    }
    lines
}

/// The pid of a live registration of the session from inside `pane`.
fn registered_in(
    req: &RestoreRequest,
    root: &Path,
    session_id: &str,
    pane: &PaneInfo,
) -> Option<i32> {
    let (_, r) = live::live_registration(root, &req.scan.data_root, session_id)?;
    match (pane.pid, r.pid) {
        (Some(pp), Some(rp)) if pp == rp || proc::is_ancestor(pp, rp) => Some(rp),
        _ => None,
    }
}

/// The launch record after a start (`launch_spec::record_start`): its path, or why it was not
/// written.
fn record_started(
    root: &Path,
    data_root: &Path,
    s: &Started,
    registered: bool,
    now: Ms,
) -> Option<String> {
    let start = launch_spec::Start {
        session_id: &s.plan.agent.session_id,
        name: &s.plan.agent.name,
        argv: &s.window.argv,
        cwd: &s.plan.cwd,
        env: &s.plan.env,
        multiplexer: s.mux,
        socket: &s.socket,
        pane: &s.pane.id,
        registered,
        at: format_iso(now),
    };
    Some(
        match launch_spec::record_start(root, data_root, s.plan.spec.as_ref(), &start) {
            Ok(p) => p.display().to_string(),
            Err(e) => format!("not written: {e}"),
        },
    )
}

/// A pi the person started by hand (no launch record yet), seen running: record what can be
/// known of its start from its live registration (its folder, its allowlisted environment, its
/// server), so a later restore starts it the same way. pi 1.6.0 hides its own flags: its model
/// and thinking are not known here (pi takes them back from the session file).
pub(super) fn record_running(
    root: &Path,
    data_root: &Path,
    agent: &Agent,
    reg: &Registration,
    now: Ms,
) {
    if !matches!(
        launch_spec::read(root, data_root, &agent.session_id),
        Err(launch_spec::SpecError::Missing)
    ) {
        return;
    }
    let Some(pid) = reg.pid else { return };
    let Some(cwd) = proc::cwd(pid).or_else(|| reg.cwd.as_ref().map(PathBuf::from)) else {
        return;
    };
    let env = proc::environ(pid, &PASSED_ENV)
        .map(|m| {
            let mut v: Vec<(String, String)> = m.into_iter().collect();
            v.sort();
            v
        })
        .unwrap_or_default();
    let at = format_iso(now);
    let placement = reg.mux.as_ref().and_then(|m| {
        Some(Placement {
            multiplexer: m.kind?,
            kind: m.kind?.caps().window_word.into(),
            socket: PathBuf::from(m.socket.as_deref()?),
        })
    });
    let spec = LaunchSpec {
        version: 1,
        session_id: agent.session_id.clone(),
        name: agent.name.clone(),
        args: vec!["--session-id".into(), agent.session_id.clone()],
        cwd,
        env,
        placement,
        worktree: None,
        stage: Stage::Registered,
        pane: reg.mux.as_ref().and_then(|m| m.pane_id.clone()),
        created_at: at.clone(),
        updated_at: at,
        note: Some("recorded by restore from its live registration".into()),
        program: None,
        model: None,
    };
    // Only a spec that reads back as usable is kept (a folder with a NUL, say, is not).
    if launch_spec::write(root, data_root, &spec).is_ok()
        && launch_spec::read(root, data_root, &agent.session_id).is_err()
    {
        launch_spec::remove(root, data_root, &agent.session_id);
    }
}

/// "continue" through the reply path: one fresh scan, one send, never retried.
fn send_continue(req: &RestoreRequest, root: &Path, agent: &Agent) -> ContinueSent {
    let not = |reason: String| ContinueSent {
        delivered: false,
        reason: Some(reason),
    };
    match reply::send_after_scan(
        req.scan,
        root,
        req.clock,
        &agent.name,
        CONTINUE_TEXT,
        crate::evidence::sessions::timeline::Sender::Restore,
    ) {
        Err(e) => not(e.to_string()),
        Ok(Err(refusal)) => not(refusal.to_string()),
        Ok(Ok(r)) => ContinueSent {
            delivered: r.delivered,
            reason: (!r.delivered).then(|| sanitize(&r.stderr)),
        },
    }
}
