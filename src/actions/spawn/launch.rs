//! The window, the wait for the new seat's registration from inside it, and the first task.

use std::path::Path;
use std::time::{Duration, Instant};

use super::reserve::{tab_or_window, Plan};
use super::{Ending, SpawnExit, SpawnRequest};
use crate::actions::launch_spec::{self, LaunchSpec, Stage};
use crate::actions::reply;
use crate::actions::resume::live;
use crate::clock::format_iso;
use crate::mux::{ErrorCode, MuxError, NewWindow, PaneInfo};
use crate::owned::spawn_report::{FirstTask, SpawnReceipt, SpawnReport, SpawnResult, WorktreeMade};
use crate::paths;
use crate::proc;
use crate::text::sanitize;

const STEP_DEADLINE: Duration = Duration::from_secs(5);
const POLL: Duration = Duration::from_millis(250);

/// What every receipt carries.
pub(super) fn receipt(
    req: &SpawnRequest,
    root: &Path,
    plan: &Plan,
    window: &NewWindow,
) -> SpawnReceipt {
    SpawnReceipt {
        worker: req.name.clone(),
        session_id: plan.session_id.clone(),
        port: plan.port,
        project_directory: plan.project_directory.clone(),
        cwd: plan.cwd.to_string_lossy().into_owned(),
        worktree: launch_spec_worktree(plan),
        multiplexer: plan.mux.kind(),
        placement: tab_or_window(plan.mux.kind()),
        beside: plan.beside.id.clone(),
        argv: window.argv.clone(),
        env: window.env.iter().map(|(k, _)| k.clone()).collect(),
        launch_spec: paths::launch_spec(root, &plan.session_id)
            .to_string_lossy()
            .into_owned(),
        picked_up: plan.earlier.as_ref().map(|s| s.stage.as_str()),
        checks: plan.checks.clone(),
    }
}

fn launch_spec_worktree(plan: &Plan) -> Option<WorktreeMade> {
    use super::reserve::Tree;
    let path = |p: &Path| p.to_string_lossy().into_owned();
    match &plan.tree {
        Tree::None => None,
        Tree::Existing(w) => Some(WorktreeMade {
            path: path(&w.path),
            branch: w.branch.clone(),
            created_branch: w.created_branch,
            base: w.base.clone(),
        }),
        Tree::Create(p) => Some(WorktreeMade {
            path: path(&p.path),
            branch: p.branch.clone(),
            created_branch: !p.branch_exists,
            base: p.base.clone(),
        }),
    }
}

/// The new window's request: named after the worker, in its folder, pi as an argv.
pub(super) fn window(req: &SpawnRequest, plan: &Plan) -> NewWindow {
    let mut argv = vec![req.pi_program.clone()];
    argv.extend(plan.args.iter().cloned());
    NewWindow {
        beside: plan.beside.id.clone(),
        own_session: false,
        name: req.name.clone(),
        cwd: plan.cwd.clone(),
        argv,
        env: launch_spec::with_this_binary(plan.env.clone()),
    }
}

/// Record how far it got (the note the next spawn, resume and retire read). A failure to
/// record is said in the report, never hidden.
fn record(root: &Path, spec: &mut LaunchSpec, req: &SpawnRequest, report: &mut SpawnReport) {
    spec.updated_at = format_iso(req.clock.now_ms());
    if let Err(e) = launch_spec::write(root, &req.scan.data_root, spec) {
        report.spec_not_updated = Some(e.to_string());
    }
}

/// Open the window, wait for the registration, hand over the first task.
pub(super) fn launch(req: &SpawnRequest, root: &Path, plan: &Plan, mut spec: LaunchSpec) -> Ending {
    let w = window(req, plan);
    let mut report = Box::new(SpawnReport::launching(receipt(req, root, plan, &w)));
    let pane = match plan.mux.new_window(&w, Instant::now() + STEP_DEADLINE) {
        Ok(p) => p,
        Err(e) => return not_opened(req, root, plan, &mut spec, report, &e),
    };
    spec.stage = Stage::Launched;
    spec.pane = Some(pane.id.clone());
    record(root, &mut spec, req, &mut report);
    report.pane = Some(pane.id.clone());
    // The roster has a worker now: the coordinator's sidebar appears without a restart.
    report.sidebar = Some(super::sidebar::ensure(req, root, plan));
    super::test_pause("launched");
    let Some(pid) = wait_for_registration(req, root, plan, &pane) else {
        return unconfirmed(req, root, &mut spec, report, &pane.id);
    };
    spec.stage = Stage::Registered;
    spec.note = None;
    record(root, &mut spec, req, &mut report);
    report.registered_pid = Some(pid);
    report.result = SpawnResult::Spawned;
    let Some(prompt) = &req.prompt else {
        return Ending {
            exit: SpawnExit::Spawned,
            report,
        };
    };
    let (exit, receipt) = first_task(req, root, prompt);
    report.prompt = Some(receipt);
    if exit != SpawnExit::Spawned {
        report.reason = Some(format!(
            "{} runs and registered, but its first task was not delivered (see prompt): send it with `intercom-pane reply`",
            sanitize(&req.name)
        ));
    }
    Ending { exit, report }
}

/// The window was not opened (or perhaps was): noted on the spec, and the worker stays in the
/// roster.
fn not_opened(
    req: &SpawnRequest,
    root: &Path,
    plan: &Plan,
    spec: &mut LaunchSpec,
    mut report: Box<SpawnReport>,
    e: &MuxError,
) -> Ending {
    // A timeout or an unreadable answer may have opened it anyway: said, and the next spawn of
    // the name checks that nothing runs the session before it opens another.
    let maybe = matches!(e.code, ErrorCode::Timeout | ErrorCode::BadReply);
    spec.note = Some(format!(
        "the {} was {}: {e}",
        tab_or_window(plan.mux.kind()),
        if maybe {
            "perhaps not opened"
        } else {
            "not opened"
        }
    ));
    record(root, spec, req, &mut report);
    report.result = SpawnResult::Failed;
    report.reason = Some(format!(
        "{}; {} stays in the roster: spawn it again to retry, or retire it",
        spec.note.as_deref().unwrap_or_default(),
        sanitize(&req.name)
    ));
    Ending {
        exit: SpawnExit::Failed,
        report,
    }
}

/// Wait (at most `--wait-secs`) for a live registration of the session from inside `pane`; its
/// pid.
fn wait_for_registration(
    req: &SpawnRequest,
    root: &Path,
    plan: &Plan,
    pane: &PaneInfo,
) -> Option<i32> {
    let started = Instant::now();
    let wait = Duration::from_secs(req.wait_secs);
    let mut last_note = started - Duration::from_secs(10);
    loop {
        if let Some((_, r)) = live::live_registration(root, &req.scan.data_root, &plan.session_id) {
            let in_pane = match (pane.pid, r.pid) {
                (Some(pp), Some(rp)) => pp == rp || proc::is_ancestor(pp, rp),
                _ => false,
            };
            if in_pane {
                return r.pid;
            }
        }
        if started.elapsed() >= wait {
            return None;
        }
        if last_note.elapsed() >= Duration::from_secs(1) {
            (req.progress)(&format!(
                "waiting for {} to register in {} ({:.0} s of {} s)",
                sanitize(&req.name),
                pane.id,
                started.elapsed().as_secs_f64(),
                req.wait_secs
            ));
            last_note = Instant::now();
        }
        std::thread::sleep(POLL);
    }
}

/// Launched, and no registration from the pane in time: noted on the spec (a launch is not
/// readiness).
fn unconfirmed(
    req: &SpawnRequest,
    root: &Path,
    spec: &mut LaunchSpec,
    mut report: Box<SpawnReport>,
    pane: &str,
) -> Ending {
    spec.note = Some(format!(
        "launched in {} at {}; no registration from it within {} s (is the pi extension installed, pi on PATH?)",
        pane,
        format_iso(req.clock.now_ms()),
        req.wait_secs
    ));
    record(root, spec, req, &mut report);
    report.result = SpawnResult::LaunchedUnconfirmed;
    report.reason = Some(format!(
        "no registration from {} within {} s: a launch is not readiness. {} stays in the roster with a note; once its pi runs there it registers, else end it and spawn again",
        pane,
        req.wait_secs,
        sanitize(&req.name)
    ));
    Ending {
        exit: SpawnExit::LaunchedUnconfirmed,
        report,
    }
}

/// The first task through the reply path (the extension's channel when the seat advertises
/// one): one fresh scan, one send, never retried.
fn first_task(req: &SpawnRequest, root: &Path, prompt: &str) -> (SpawnExit, FirstTask) {
    match reply::send_after_scan(
        req.scan,
        root,
        req.clock,
        &req.name,
        prompt,
        crate::evidence::sessions::timeline::Sender::Spawn,
    ) {
        Err(e) => (
            SpawnExit::PromptNotDelivered,
            FirstTask::not_sent(e.to_string()),
        ),
        Ok(Ok(r)) => {
            let exit = if r.delivered {
                SpawnExit::Spawned
            } else {
                SpawnExit::PromptNotDelivered
            };
            (exit, FirstTask::Sent(r))
        }
        Ok(Err(refusal)) => (
            SpawnExit::PromptNotDelivered,
            FirstTask::not_sent(refusal.to_string()),
        ),
    }
}
