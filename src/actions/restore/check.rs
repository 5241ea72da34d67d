//! One agent, before anything is started: `resume-worker`'s checks (nothing runs its session,
//! its saved file is its own, its launch record usable, its folder a folder), and whether its
//! last turn was cut off.

use std::path::{Path, PathBuf};

use super::RestoreRequest;
use crate::actions::launch_spec::{self, LaunchSpec};
use crate::actions::resume::{fence, live};
use crate::board::record::SeatKey;
use crate::evidence::config::{Agent, IntercomConfig};
use crate::evidence::registrations::Registration;
use crate::evidence::sessions::{self, EntryKind, Role, SessionSummary};
use crate::fsguard;
use crate::owned::restore_report::{AgentRestore, RestoreOutcome};
use crate::owned::retire_record::RetireRecord;
use crate::paths;
use crate::scan::{self, Scan};
use crate::states::CloseState;

/// Retire records looked at.
const MAX_RETIRED: usize = 4096;
/// Largest retire record read.
const RETIRED_CAP: u64 = 1 << 20;

/// An agent that may be started, and how.
pub(super) struct Plan {
    pub agent: Agent,
    pub session_file: PathBuf,
    pub cwd: PathBuf,
    pub spec: Option<LaunchSpec>,
    pub cut_off: bool,
    /// Program and arguments.
    pub argv: Vec<String>,
    /// What the launch passes (and records), without `INTERCOM_PANE_BIN`.
    pub env: Vec<(String, String)>,
}

type Refusal = Box<AgentRestore>;

fn line(agent: &Agent, outcome: RestoreOutcome, reason: impl Into<String>) -> Refusal {
    let mut l = AgentRestore::new(&agent.name, &agent.session_id, agent.coordinator);
    l.outcome = outcome;
    l.reason = Some(reason.into());
    Box::new(l)
}

/// The agent's plan, or its line when it is not started.
pub(super) fn agent(
    req: &RestoreRequest,
    root: &Path,
    pass: &Scan,
    agent: &Agent,
) -> Result<Plan, Refusal> {
    use RestoreOutcome::*;
    if let Some(j) = &agent.close_job {
        if j.state == CloseState::Closed && !req.include_closed {
            return Err(line(
                agent,
                Closed,
                format!(
                    "closed by close job {} (--include-closed starts it too)",
                    j.job_id
                ),
            ));
        }
        if j.state.is_pending() || j.state.is_fenced() {
            return Err(line(
                agent,
                Cannot,
                format!(
                    "close job {} is {}: settle it first",
                    j.job_id,
                    j.state.as_str()
                ),
            ));
        }
    }
    if let Some((w, reg)) = live::live_registration(root, &req.scan.data_root, &agent.session_id) {
        if !req.dry_run {
            super::start::record_running(
                root,
                &req.scan.data_root,
                agent,
                &reg,
                req.clock.now_ms(),
            );
        }
        return Err(line(agent, AlreadyRunning, w.detail));
    }
    let key = SeatKey::new(&scan::base_name(root), &agent.name);
    let record = pass.records.iter().find(|r| r.key() == key);
    if record.is_some_and(|r| r.alive == Some(true)) {
        return Err(line(
            agent,
            AlreadyRunning,
            "the board shows a pane running it",
        ));
    }
    if fence::fence_stage(root, &agent.session_id).is_some() {
        return Err(line(
            agent,
            Cannot,
            "a resume-worker launch of it has not registered yet: look at that pane, then resume-worker --recover",
        ));
    }
    let found = record.and_then(|r| r.session_file.clone());
    let (session_file, summary) = own_session(agent, found.as_deref())?;
    // `.` (the root itself) is not kept as a component: the folder as a person writes it.
    let folder: PathBuf = root.join(&agent.project_directory).components().collect();
    let regs = crate::evidence::registrations::read_all(Some(root), &req.scan.data_root);
    match live::process_naming(&agent.session_id, &session_file, &folder, &regs) {
        Ok(Some(w)) => {
            return Err(line(
                agent,
                AlreadyRunning,
                format!("{}: {}", w.kind, w.detail),
            ))
        }
        Ok(None) => {}
        Err(e) => {
            return Err(line(
                agent,
                Cannot,
                format!("cannot tell whether a process runs the session: {e}"),
            ))
        }
    }
    match live::health_answers(agent.port, &agent.session_id) {
        Ok(Some(w)) => return Err(line(agent, AlreadyRunning, w.detail)),
        Ok(None) => {}
        Err(e) => return Err(line(agent, Cannot, e.to_string())),
    }
    let spec = match launch_spec::read(root, &req.scan.data_root, &agent.session_id) {
        Ok(s) => Some(s),
        Err(launch_spec::SpecError::Missing) => None,
        Err(e) => {
            return Err(line(
                agent,
                Cannot,
                format!(
                    "{e} ({}): fix or remove it to restore without it",
                    paths::launch_spec(root, &agent.session_id).display()
                ),
            ))
        }
    };
    let cwd = spec.as_ref().map_or(folder, |s| s.cwd.clone());
    if !matches!(fsguard::kind(&cwd), Ok(fsguard::Kind::Dir)) {
        return Err(line(
            agent,
            Cannot,
            format!("its folder {} is gone (or not a folder)", cwd.display()),
        ));
    }
    let program = spec
        .as_ref()
        .and_then(|s| s.program.clone())
        .unwrap_or_else(|| req.pi_program.clone());
    let (args, env) =
        launch_spec::start_on(spec.as_ref(), &session_file, req.system_config.as_deref());
    let mut argv = vec![program];
    argv.extend(args);
    Ok(Plan {
        agent: agent.clone(),
        session_file,
        cwd,
        spec,
        cut_off: cut_off(&summary),
        argv,
        env,
    })
}

/// The agent's saved session file, as the board found it: a regular file of this user (not a
/// link) whose header names the agent's session. Its summary.
fn own_session(agent: &Agent, found: Option<&str>) -> Result<(PathBuf, SessionSummary), Refusal> {
    let cannot = |why: String| line(agent, RestoreOutcome::Cannot, why);
    let file = found
        .map(|f| paths::absolute(Path::new(f)))
        .ok_or_else(|| {
            cannot(format!(
                "no saved session file for {} in the session folders",
                agent.session_id
            ))
        })?;
    let shown = file.display();
    let f =
        fsguard::open_regular(&file, None).map_err(|e| cannot(format!("{shown}: {}", e.code())))?;
    if f.uid != fsguard::my_uid() {
        return Err(cannot(format!("{shown}: not owned by this user")));
    }
    match sessions::read_session(&file) {
        Ok(s) if s.session_id == agent.session_id => Ok((file, s)),
        Ok(_) => Err(cannot(format!("{shown}: its header names another session"))),
        Err(e) => Err(cannot(format!("{shown}: {}", e.code()))),
    }
}

/// The last turn never ended: the newest conversational entry is the person's message or a
/// tool's result (the model never answered), or a tool call whose result never came.
pub(super) fn cut_off(s: &SessionSummary) -> bool {
    if s.running_tool.is_some() {
        return true;
    }
    let newest = s.branch.iter().find(|e| {
        e.kind == EntryKind::Message
            && matches!(
                e.role,
                Some(Role::User | Role::Assistant | Role::ToolResult)
            )
    });
    matches!(
        newest.and_then(|e| e.role),
        Some(Role::User | Role::ToolResult)
    )
}

/// Workers `retire` removed from the roster (their records in `.pi-intercom/retired/`), newest
/// record per session, when no roster entry has that session again.
pub(super) fn retired(root: &Path, cfg: &IntercomConfig) -> Vec<RetireRecord> {
    let dir = paths::retired_dir(root);
    let Ok(list) = fsguard::list_dir(&dir, MAX_RETIRED) else {
        return Vec::new();
    };
    let mut out: Vec<RetireRecord> = Vec::new();
    for e in list
        .entries
        .iter()
        .filter(|e| e.kind == fsguard::Kind::File)
    {
        let Some(name) = e.name_str().filter(|n| n.ends_with(".json")) else {
            continue;
        };
        let Ok(bytes) = fsguard::read_capped(&dir.join(name), RETIRED_CAP) else {
            continue;
        };
        let Ok(r) = crate::owned::decode::<RetireRecord>(&bytes) else {
            continue;
        };
        if cfg.agents.iter().any(|a| a.session_id == r.session_id) {
            continue;
        }
        match out.iter_mut().find(|o| o.session_id == r.session_id) {
            Some(o) if o.retired_at < r.retired_at => *o = r,
            Some(_) => {}
            None => out.push(r),
        }
    }
    out
}

/// The newest registration of the session (live or not): where it last ran.
pub(super) fn last_registration(
    root: &Path,
    data_root: &Path,
    session_id: &str,
) -> Option<Registration> {
    crate::evidence::registrations::read_all(Some(root), data_root)
        .items
        .into_iter()
        .filter(|r| r.session_id.as_deref() == Some(session_id))
        .max_by_key(|r| r.started_at)
}
