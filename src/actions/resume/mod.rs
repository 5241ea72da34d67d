//! `intercom-pane resume-worker NAME --confirm-closed`: bring a closed worker back in a new pane
//! on its saved session, with its name and responsibility, and never twice (the seed's
//! "Connectivity and retained sessions": explicit, user-confirmed, a live matching endpoint
//! rejects it, in-flight and uncertain launches are fenced, everything re-checked before launch).
//!
//! Order: every precondition → lock → every precondition again on a fresh config and scan →
//! fence record (`launch_pending`) → one launch → fence `launched` → bounded wait for the new
//! seat's registration from inside the new pane → fence lifted. A launch is not readiness: no
//! registration in time is `launched_unconfirmed`, and the fence stays until the seat registers.

pub(crate) mod fence;
pub(crate) mod live;
pub(crate) mod place;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::actions::launch_spec::{self, LaunchSpec};
use crate::board::record::SeatKey;
use crate::board::record::SeatRecord;
use crate::clock::{format_iso, Clock, Ms};
use crate::evidence::config::{self, Agent};
use crate::evidence::sessions;
use crate::exit_code::exit_enum;
use crate::fsguard;
use crate::mux::{Multiplexer, NewWindow, PaneInfo};
use crate::owned::resume_fence::FenceStage;
use crate::owned::resume_report::{HandoffSeen, Launch, ResumeReport, ResumeResult, SpecSeen};
use crate::paths::{jobs_dir, resume_fence as fence_path, resume_lock as lock_path};
use crate::proc;
use crate::scan::{self, ScanOptions};
use crate::store;
use crate::text::sanitize;
use fence::{check_fence, write_fence};

pub(crate) use live::{Witness, WitnessKind};

/// Longest wait for the new seat's registration.
pub(crate) const MAX_WAIT_SECS: u64 = 120;
const POLL: Duration = Duration::from_millis(250);
const STEP_DEADLINE: Duration = Duration::from_secs(5);

exit_enum! {
    /// The exit code of a run, one per way it can end.
    ResumeExit {
        /// Resumed (the new seat registered), a dry run that passed, or a fence re-checked.
        Resumed = 0,
        /// The launch failed.
        Failed = 1,
        /// Usage: no root, bad config, unknown name, the coordinator, a bad flag value.
        Usage = 2,
        /// `--confirm-closed` was not given.
        NotConfirmed = 3,
        /// Something still runs the worker's session (registration, process or health endpoint).
        StillLive = 4,
        /// A pending or uncertain close job, or another resume in flight or unconfirmed.
        Fenced = 5,
        /// The saved session file is missing or its header names another session.
        NoSession = 6,
        /// No coordinator pane to open the new window beside.
        NoPlace = 7,
        /// Launched, but the new seat did not register before the wait ended.
        LaunchedUnconfirmed = 8,
        /// `--expect-seat`: the worker is not the seat the board showed (another session).
        SeatChanged = 14,
    }
}

pub(crate) struct ResumeRequest<'a> {
    pub name: String,
    pub confirm_closed: bool,
    pub dry_run: bool,
    pub recover: bool,
    pub wait_secs: u64,
    /// The pi program to run (a name looked up on PATH, or a path).
    pub pi_program: String,
    /// The system config the new pi's extension passes on as `--config`.
    pub system_config: Option<PathBuf>,
    pub scan: &'a ScanOptions,
    pub clock: &'a dyn Clock,
    /// Progress lines while waiting (stage, elapsed, deadline).
    pub progress: &'a dyn Fn(&str),
    /// The seat a board showed (`--expect-seat`): its session must be the worker's.
    pub expect: Option<crate::hosts::expect::SeatExpect>,
    /// Who asked (the worker's timeline says).
    pub by: crate::evidence::sessions::timeline::Actor,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Ending {
    pub exit: ResumeExit,
    /// Boxed: an `Ending` is the error of every check.
    pub report: Box<ResumeReport>,
}

fn refused(exit: ResumeExit, msg: impl Into<String>) -> Ending {
    Ending {
        exit,
        report: Box::new(ResumeReport::refused(msg.into())),
    }
}

/// Everything a launch needs, established by `preflight`.
struct Plan {
    agent: Agent,
    session_file: PathBuf,
    cwd: PathBuf,
    mux: Box<dyn Multiplexer>,
    beside: PaneInfo,
    window: NewWindow,
    checks: Vec<String>,
    /// The launch spec the window follows (its file), when `spawn` recorded one.
    spec: Option<(PathBuf, LaunchSpec)>,
}

pub(crate) fn resume_worker(req: &ResumeRequest) -> Ending {
    if !(1..=MAX_WAIT_SECS).contains(&req.wait_secs) {
        return refused(
            ResumeExit::Usage,
            format!("--wait-secs must be 1..{MAX_WAIT_SECS}"),
        );
    }
    let root = match &req.scan.root {
        scan::RootChoice::Exact(r) => Some(r.clone()),
        scan::RootChoice::Discover(start) => config::discover_root(start).ok().flatten(),
        scan::RootChoice::Skip => None,
    };
    let Some(root) = root else {
        return refused(
            ResumeExit::Usage,
            format!(
                "nothing to resume: {}",
                crate::actions::no_roster_at(&req.scan.root)
            ),
        );
    };
    let first = match preflight(req, &root, None) {
        Ok(p) => p,
        Err(e) => return e,
    };
    if req.recover {
        // Reaching here means nothing runs the session and no fence stands (preflight lifted a
        // fence whose seat registered, and refuses a standing one unless --recover).
        let cleared = store::remove_file(&fence_path(&root, &first.agent.session_id)).is_ok();
        return Ending {
            exit: ResumeExit::Resumed,
            report: Box::new(ResumeReport {
                fence_cleared: Some(cleared),
                checks: Some(first.checks),
                note: Some("nothing runs the session; nothing was launched".into()),
                ..ResumeReport::new(ResumeResult::Recovered)
            }),
        };
    }
    if req.dry_run {
        return Ending {
            exit: ResumeExit::Resumed,
            report: Box::new(ResumeReport {
                worker: Some(first.agent.name.clone()),
                argv: Some(Launch::Preview(place::launch_preview(&first))),
                checks: Some(first.checks),
                note: Some("nothing was launched".into()),
                ..ResumeReport::new(ResumeResult::DryRun)
            }),
        };
    }
    let session_id = first.agent.session_id.clone();
    drop(first);
    if let Err(e) = store::ensure_dir(&root, &jobs_dir(&root)) {
        return refused(ResumeExit::Failed, format!("cannot prepare the fence: {e}"));
    }
    test_pause();
    let _lock = match store::Lock::acquire(&lock_path(&root, &session_id)) {
        Ok(l) => l,
        Err(e) if e.code == store::code::StoreCode::Locked => {
            return refused(
                ResumeExit::Fenced,
                "another resume-worker of this worker is running",
            )
        }
        Err(e) => return refused(ResumeExit::Failed, e.to_string()),
    };
    // Config, identity and lifecycle re-checked immediately before the launch, under the lock.
    let plan = match preflight(req, &root, Some(&session_id)) {
        Ok(p) => p,
        Err(e) => return e,
    };
    let started = req.clock.now_ms();
    let end = launch(req, &root, plan);
    crate::actions::worker_events::resumed(&req.scan.data_root, started, req.by, &end.report);
    end
}

/// Test-only, never set in real use: `INTERCOM_PANE_TEST_PAUSE_BEFORE_RECHECK=<file>` makes a
/// resume that passed its first checks create `<file>` and wait (at most 10 s) until it is
/// removed, so a test can change the config between the first check and the re-check under the
/// lock without sleeping and hoping.
pub(crate) const TEST_PAUSE_ENV: &str = "INTERCOM_PANE_TEST_PAUSE_BEFORE_RECHECK";

fn test_pause() {
    if let Some(path) = std::env::var_os(TEST_PAUSE_ENV) {
        crate::actions::pause_for_test(Path::new(&path));
    }
}

/// Every precondition, each refused with its own exit code; nothing is written. `expected`: the
/// session id the first check found (the re-check refuses a worker whose session changed).
fn preflight(req: &ResumeRequest, root: &Path, expected: Option<&str>) -> Result<Plan, Ending> {
    let cfg = config::load(root).map_err(|e| refused(ResumeExit::Usage, e.to_string()))?;
    let agent = worker_of(req, &cfg, expected)?;
    let mut checks = vec![format!("worker {} is configured", sanitize(&agent.name))];
    if let Some(j) = &agent.close_job {
        if j.state.is_pending() || j.state.is_fenced() {
            return Err(refused(
                ResumeExit::Fenced,
                format!("close job {} is {}", j.job_id, j.state.as_str()),
            ));
        }
    }
    checks.push("no pending or uncertain close job".into());
    check_fence(req, root, &agent.session_id)?;
    checks.push("no resume in flight".into());
    let session_file = closed_with_saved_session(req, root, &agent, &mut checks)?;
    let (spec, cwd) = folder_of(root, &req.scan.data_root, &agent, &mut checks)?;
    let (mux, beside) = place::coordinator_pane(&cfg, root, &req.scan.data_root)
        .map_err(|e| refused(ResumeExit::NoPlace, e.to_string()))?;
    checks.push(format!(
        "new {} on the server of the coordinator's pane {} ({})",
        mux.kind().caps().resume_place,
        beside.id,
        mux.kind().name()
    ));
    let window = place::window(req, &agent, &session_file, &cwd, &beside, spec.as_ref());
    place::check_exact(mux.kind(), &window)
        .map_err(|e| refused(ResumeExit::Usage, e.to_string()))?;
    Ok(Plan {
        agent,
        session_file,
        cwd,
        mux,
        beside,
        window,
        checks,
        spec: spec.map(|s| (crate::paths::launch_spec(root, &s.session_id), s)),
    })
}

/// The worker named, when it may be resumed by this request: the session the first check found,
/// not the coordinator, the seat the board showed, and confirmed closed.
fn worker_of(
    req: &ResumeRequest,
    cfg: &config::IntercomConfig,
    expected: Option<&str>,
) -> Result<Agent, Ending> {
    let agent = cfg.find_by_name(&req.name).cloned().ok_or_else(|| {
        refused(
            ResumeExit::Usage,
            format!("no agent named {:?} in config", sanitize(&req.name)),
        )
    })?;
    if expected.is_some_and(|id| id != agent.session_id) {
        return Err(refused(
            ResumeExit::Fenced,
            "the worker's session changed meanwhile",
        ));
    }
    if agent.coordinator {
        return Err(refused(
            ResumeExit::Usage,
            "the coordinator is not resumed by resume-worker",
        ));
    }
    // Compare-and-act: only the session the board showed (a closed seat has no pi to compare).
    if let Some(e) = &req.expect {
        let found = crate::hosts::expect::SeatFound {
            session_id: Some(agent.session_id.clone()),
            pi: None,
            pane: None,
        };
        e.check(&found)
            .map_err(|why| refused(ResumeExit::SeatChanged, why.to_string()))?;
    }
    if !req.confirm_closed {
        return Err(refused(
            ResumeExit::NotConfirmed,
            format!(
                "confirm that {} is closed: run again with --confirm-closed",
                sanitize(&agent.name)
            ),
        ));
    }
    Ok(agent)
}

/// Nothing runs the worker's session (no live registration, no pane on the board, no process,
/// no health endpoint), and its saved session is there; that session file.
fn closed_with_saved_session(
    req: &ResumeRequest,
    root: &Path,
    agent: &Agent,
    checks: &mut Vec<String>,
) -> Result<PathBuf, Ending> {
    let pass = scan::run(req.scan, req.clock, None, None)
        .map_err(|e| refused(ResumeExit::Usage, e.to_string()))?;
    let key = SeatKey::new(&scan::base_name(root), &agent.name);
    let record = pass.records.iter().find(|r| r.key() == key);
    if let Some((mut w, reg)) =
        live::live_registration(root, &req.scan.data_root, &agent.session_id)
    {
        if let Some(m) = &reg.mux {
            w.detail.push_str(&where_registered(m));
        }
        return Err(still(w));
    }
    if record.is_some_and(|r| r.alive == Some(true)) {
        let pane = pass
            .snapshot
            .rows
            .iter()
            .find(|r| r.seen_key == key.as_str())
            .and_then(|r| r.pane.as_ref())
            .map(|p| format!(" ({} pane {})", p.kind.name(), sanitize(&p.pane_id)))
            .unwrap_or_default();
        return Err(still(Witness {
            kind: WitnessKind::Pane,
            detail: format!("the board shows a pane running this worker{pane}"),
        }));
    }
    let session_file = saved_session(agent, record)?;
    checks.push(format!(
        "saved session {} (header matches)",
        session_file.display()
    ));
    no_process_or_endpoint(agent, &session_file, root, &req.scan.data_root)?;
    checks.push("no live registration, pane, process or health endpoint".into());
    Ok(session_file)
}

/// The worker's launch spec (when `spawn` recorded one) and the folder it runs in, which must
/// be a folder.
fn folder_of(
    root: &Path,
    data_root: &Path,
    agent: &Agent,
    checks: &mut Vec<String>,
) -> Result<(Option<LaunchSpec>, PathBuf), Ending> {
    let spec = launch_spec_of(root, data_root, agent)?;
    if let Some(s) = &spec {
        checks.push(format!(
            "launch spec {} (spawned {}): its arguments, folder and environment",
            crate::paths::launch_spec(root, &agent.session_id).display(),
            s.created_at
        ));
    }
    let cwd = spec
        .as_ref()
        .map_or_else(|| root.join(&agent.project_directory), |s| s.cwd.clone());
    if !matches!(fsguard::kind(&cwd), Ok(fsguard::Kind::Dir)) {
        return Err(refused(
            ResumeExit::Usage,
            format!("projectDirectory {} is not a folder", cwd.display()),
        ));
    }
    Ok((spec, cwd))
}

/// The worker's launch spec when `spawn` recorded one; a spec that exists and cannot be used
/// is refused, never silently replaced by today's launch.
fn launch_spec_of(
    root: &Path,
    data_root: &Path,
    agent: &Agent,
) -> Result<Option<LaunchSpec>, Ending> {
    match launch_spec::read(root, data_root, &agent.session_id) {
        Ok(s) => Ok(Some(s)),
        Err(launch_spec::SpecError::Missing) => Ok(None),
        Err(e) => Err(refused(
            ResumeExit::Usage,
            format!(
                "{e} ({}): fix or remove it to resume without it",
                crate::paths::launch_spec(root, &agent.session_id).display()
            ),
        )),
    }
}

/// A witness that the session still runs, as the refusal that reports it.
fn still(w: Witness) -> Ending {
    let next = match w.kind {
        WitnessKind::Registration | WitnessKind::Pane => {
            "it still runs, so there is nothing to resume: go to it with the sidebar's ⏎, or close it first (close-worker) to start it again"
        }
        _ => "it may still run, so nothing is resumed: end that process first if it is a leftover",
    };
    refused(
        ResumeExit::StillLive,
        format!("{}: {}; {next}", w.kind, w.detail),
    )
}

/// Where a registered pi runs, from its registration: ` in tmux pane %5 (session Docs, window
/// @2)`.
fn where_registered(m: &crate::evidence::registrations::MuxRecord) -> String {
    let Some(pane) = &m.pane_id else {
        return String::new();
    };
    let kind = m.kind.map(|k| k.name()).unwrap_or("its multiplexer's");
    let (session_word, window_word) = m.kind.map_or(("session", "window"), |k| {
        (k.caps().session_word, k.caps().window_word)
    });
    let mut parts = Vec::new();
    if let Some(s) = &m.session {
        parts.push(format!("{session_word} {}", sanitize(s)));
    }
    if let Some(w) = &m.window_id {
        parts.push(format!("{window_word} {}", sanitize(w)));
    }
    let place = if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join(", "))
    };
    format!(" in {kind} pane {}{place}", sanitize(pane))
}

/// The worker's saved session file, as the board found it, whose header names its session.
fn saved_session(agent: &Agent, record: Option<&SeatRecord>) -> Result<PathBuf, Ending> {
    let no_session = |why: String| refused(ResumeExit::NoSession, why);
    let file = record
        .and_then(|r| r.session_file.clone())
        .map(|f| absolute(Path::new(&f)))
        .ok_or_else(|| {
            no_session(format!(
                "no saved session file for {} in the session folders",
                agent.session_id
            ))
        })?;
    match sessions::read_session(&file) {
        Ok(s) if s.session_id == agent.session_id => Ok(file),
        Ok(_) => Err(no_session(format!(
            "{}: its header names another session",
            file.display()
        ))),
        Err(e) => Err(no_session(format!("{}: {}", file.display(), e.code()))),
    }
}

/// No process on this machine names the session, and its health endpoint does not answer as
/// it; `/proc` that cannot be read completely is not "clear".
fn no_process_or_endpoint(
    agent: &Agent,
    session_file: &Path,
    root: &Path,
    data_root: &Path,
) -> Result<(), Ending> {
    let regs = crate::evidence::registrations::read_all(Some(root), data_root);
    let folder = root.join(&agent.project_directory);
    match live::process_naming(&agent.session_id, session_file, &folder, &regs) {
        Ok(Some(w)) => return Err(still(w)),
        Ok(None) => {}
        Err(e) => {
            return Err(refused(
                ResumeExit::StillLive,
                format!("cannot tell whether a process runs the session: {e}"),
            ))
        }
    }
    match live::health_answers(agent.port, &agent.session_id) {
        Ok(Some(w)) => Err(still(w)),
        Ok(None) => Ok(()),
        Err(e) => Err(refused(ResumeExit::Failed, e.to_string())),
    }
}

/// pi is started in the worker's own folder: a session path found relative to ours must not
/// change meaning there.
fn absolute(p: &Path) -> PathBuf {
    if p.is_absolute() {
        return p.to_path_buf();
    }
    std::env::current_dir()
        .map(|d| d.join(p))
        .unwrap_or_else(|_| p.to_path_buf())
}

fn launch(req: &ResumeRequest, root: &Path, plan: Plan) -> Ending {
    use FenceStage::*;
    let now = req.clock.now_ms();
    if !write_fence(root, &plan, (None, LaunchPending), None, now) {
        return refused(
            ResumeExit::Failed,
            "cannot record the fence: nothing launched",
        );
    }
    let base = receipt(req, &plan, now);
    let pane = match plan
        .mux
        .new_window(&plan.window, Instant::now() + STEP_DEADLINE)
    {
        Ok(p) => p,
        Err(e) => {
            // A timeout or an unreadable answer may have launched anyway: the fence stays.
            let uncertain = matches!(
                e.code,
                crate::mux::ErrorCode::Timeout | crate::mux::ErrorCode::BadReply
            );
            if !uncertain {
                let _ = store::remove_file(&fence_path(root, &plan.agent.session_id));
            }
            let mut report = base;
            report.result = ResumeResult::Failed;
            report.reason = Some(format!("launch failed: {e}"));
            report.fence_kept = Some(uncertain);
            return Ending {
                exit: ResumeExit::Failed,
                report: Box::new(report),
            };
        }
    };
    let _ = write_fence(
        root,
        &plan,
        (Some(LaunchPending), Launched),
        Some(&pane.id),
        now,
    );
    let mut report = base;
    report.pane = Some(pane.id.clone());
    let started = Instant::now();
    let wait = Duration::from_secs(req.wait_secs);
    let mut last_note = Instant::now() - Duration::from_secs(10);
    loop {
        if let Some((_, r)) =
            live::live_registration(root, &req.scan.data_root, &plan.agent.session_id)
        {
            let in_pane = match (pane.pid, r.pid) {
                (Some(pp), Some(rp)) => pp == rp || proc::is_ancestor(pp, rp),
                _ => false,
            };
            if in_pane {
                let _ = store::remove_file(&fence_path(root, &plan.agent.session_id));
                record_start(
                    root,
                    &req.scan.data_root,
                    &plan,
                    &pane.id,
                    true,
                    req.clock.now_ms(),
                );
                report.result = ResumeResult::Resumed;
                report.registered_pid = r.pid;
                return Ending {
                    exit: ResumeExit::Resumed,
                    report: Box::new(report),
                };
            }
        }
        if started.elapsed() >= wait {
            break;
        }
        if last_note.elapsed() >= Duration::from_secs(1) {
            (req.progress)(&format!(
                "waiting for {} to register in {} ({:.0} s of {} s)",
                sanitize(&plan.agent.name),
                pane.id,
                started.elapsed().as_secs_f64(),
                req.wait_secs
            ));
            last_note = Instant::now();
        }
        std::thread::sleep(POLL);
    }
    record_start(
        root,
        &req.scan.data_root,
        &plan,
        &pane.id,
        false,
        req.clock.now_ms(),
    );
    report.result = ResumeResult::LaunchedUnconfirmed;
    report.reason = Some(format!(
        "no registration from pane {} within {} s: a launch is not readiness; the fence stays until the seat registers",
        pane.id, req.wait_secs
    ));
    Ending {
        exit: ResumeExit::LaunchedUnconfirmed,
        report: Box::new(report),
    }
}

/// The launch record of this start (`launch_spec::record_start`): the spec followed, with its
/// new pane; or, for a worker that had none, what it was started with, so `restore` starts it
/// the same way. Best effort: the resume happened either way.
fn record_start(root: &Path, data_root: &Path, plan: &Plan, pane: &str, registered: bool, now: Ms) {
    let env: Vec<(String, String)> = plan
        .window
        .env
        .iter()
        .filter(|(k, _)| k != "INTERCOM_PANE_BIN")
        .cloned()
        .collect();
    let start = launch_spec::Start {
        session_id: &plan.agent.session_id,
        name: &plan.agent.name,
        argv: &plan.window.argv,
        cwd: &plan.window.cwd,
        env: &env,
        multiplexer: plan.mux.kind(),
        socket: plan.mux.socket_path(),
        pane,
        registered,
        at: format_iso(now),
    };
    let _ = launch_spec::record_start(root, data_root, plan.spec.as_ref().map(|(_, s)| s), &start);
}

/// What every receipt carries: who, where, how, and the worker's last handoff (its result is
/// set by the ending).
fn receipt(req: &ResumeRequest, plan: &Plan, now: Ms) -> ResumeReport {
    let handoff = plan.agent.handoff.as_ref().map(|h| HandoffSeen {
        job_id: h.job_id.clone(),
        summary: h.summary.clone(),
        updated_at: format_iso(h.updated_at),
        age_seconds: (now - h.updated_at).max(0) / 1000,
    });
    let spec = plan.spec.as_ref().map(|(path, s)| SpecSeen {
        path: path.display().to_string(),
        created_at: s.created_at.clone(),
        args: s.args.clone(),
        cwd: s.cwd.display().to_string(),
        env: s.env.iter().map(|(k, _)| k.clone()).collect(),
    });
    ResumeReport {
        worker: Some(plan.agent.name.clone()),
        session_id: Some(plan.agent.session_id.clone()),
        session_file: Some(plan.session_file.display().to_string()),
        cwd: Some(plan.cwd.display().to_string()),
        multiplexer: Some(plan.mux.kind()),
        beside: Some(plan.beside.id.clone()),
        argv: Some(Launch::Argv(plan.window.argv.clone())),
        checks: Some(plan.checks.clone()),
        handoff: Some(handoff),
        wait_secs: Some(req.wait_secs),
        launch_spec: Some(spec),
        ..ResumeReport::new(ResumeResult::Failed)
    }
}
