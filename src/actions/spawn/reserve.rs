//! Before the window opens: what this spawn is (a new worker, or the pickup of an earlier spawn
//! of the name that never finished), every refusal, then the reservation — launch spec, worktree,
//! roster entry — each step recorded before it is taken, so a spawn killed at any point leaves
//! a note that explains what it left and that the next spawn of the name picks up.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use super::worktree::{self, Planned};
use super::{input, refused, Ending, Folder, SpawnExit, SpawnRequest};
use crate::actions::config_write::{self, WriteError};
use crate::actions::launch_spec::{self, LaunchSpec, Placement, Stage, Worktree};
use crate::actions::resume::{live, place};
use crate::clock::format_iso;
use crate::evidence::config::{self, Agent, IntercomConfig, MAX_AGENTS};
use crate::fsguard;
use crate::mux::{Multiplexer, MuxKind, PaneInfo};
use crate::paths;
use crate::store;
use crate::text::sanitize;

/// Deadline of one git call.
const GIT_DEADLINE: Duration = Duration::from_secs(20);

/// What this spawn does with the name.
pub(super) enum Kind {
    /// A new worker.
    Fresh,
    /// A spawn of this name died before its roster entry was written: its session id and
    /// worktree are taken over.
    Adopt,
    /// The roster names the worker, and its spawn never saw it register (and nothing runs its
    /// session): the window is opened again, with this run's flags.
    Relaunch,
}

/// The worktree step.
pub(super) enum Tree {
    None,
    Create(Planned),
    /// Created by the earlier spawn being picked up.
    Existing(Worktree),
}

/// Everything the launch needs, checked.
pub(super) struct Plan {
    pub kind: Kind,
    pub session_id: String,
    pub port: u16,
    pub project_directory: String,
    pub cwd: PathBuf,
    pub tree: Tree,
    pub description: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub mux: Box<dyn Multiplexer>,
    pub beside: PaneInfo,
    /// The earlier spec picked up (Adopt, Relaunch).
    pub earlier: Option<LaunchSpec>,
    pub checks: Vec<String>,
}

/// Decide and check; nothing is written.
pub(super) fn plan(req: &SpawnRequest, root: &Path) -> Result<Plan, Ending> {
    let cfg = config::load(root).map_err(|e| refused(SpawnExit::Usage, e.to_string()))?;
    if cfg.coordinator().is_none() {
        return Err(refused(
            SpawnExit::Usage,
            "the roster has no coordinator (run `intercom-pane init`)",
        ));
    }
    let description = input::description(req.description.as_deref(), &req.name)
        .map_err(|e| refused(SpawnExit::Usage, e))?;
    let mut checks = vec![format!("name {} is valid", sanitize(&req.name))];
    let (kind, earlier, session_id, port, project_directory, cwd, tree) = match cfg
        .find_by_name(&req.name)
    {
        Some(a) => {
            let spec = unfinished(req, root, a)?;
            checks.push(format!(
                    "{} is in the roster from a spawn that stopped at {}; nothing runs its session: opening it again",
                    sanitize(&a.name),
                    spec.stage.as_str()
                ));
            let tree = same_folder(req, &spec)?;
            let cwd = spec.cwd.clone();
            let id = a.session_id.clone();
            (
                Kind::Relaunch,
                Some(spec),
                id,
                a.port,
                a.project_directory.clone(),
                cwd,
                tree,
            )
        }
        None => {
            if cfg.agents.len() >= MAX_AGENTS {
                return Err(refused(
                    SpawnExit::Full,
                    format!("the roster holds {MAX_AGENTS} agents, the most it may"),
                ));
            }
            let earlier = abandoned(root, &req.scan.data_root, &cfg, &req.name);
            let id = earlier.as_ref().map_or_else(
                || uuid::Uuid::new_v4().to_string(),
                |s| s.session_id.clone(),
            );
            let (dir, cwd, tree) = folder(req, root, earlier.as_ref())?;
            let used: Vec<u16> = cfg.agents.iter().map(|a| a.port).collect();
            let port = super::free_port(&used).ok_or_else(|| {
                refused(SpawnExit::Failed, "no free loopback port for the worker")
            })?;
            let kind = if earlier.is_some() {
                checks.push(
                    "picking up a spawn of this name that stopped before the roster named it"
                        .into(),
                );
                Kind::Adopt
            } else {
                Kind::Fresh
            };
            (kind, earlier, id, port, dir, cwd, tree)
        }
    };
    checks.push(format!("folder {}", cwd.display()));
    let (mux, beside) = place::coordinator_pane(&cfg, root, &req.scan.data_root).map_err(|e| {
        refused(
            SpawnExit::NoPlace,
            format!("no coordinator pane to open beside: {e}"),
        )
    })?;
    checks.push(format!(
        "new {} beside the coordinator's pane {} ({})",
        tab_or_window(mux.kind()),
        beside.id,
        mux.kind().name()
    ));
    exact_in_mux(mux.kind(), &req.name, &cwd, &tree)?;
    let args = input::pi_args(
        &session_id,
        req.model.as_deref(),
        req.thinking.as_deref(),
        &req.extra_args,
    )
    .map_err(|e| refused(SpawnExit::Usage, e))?;
    Ok(Plan {
        kind,
        session_id,
        port,
        project_directory,
        cwd,
        tree,
        description,
        args,
        env: launch_spec::current_env(req.system_config.as_deref()),
        mux,
        beside,
        earlier,
        checks,
    })
}

/// The window's name and folder exactly as the multiplexer will keep them (tmux:
/// `mux::tmux::literal`, the one rule for data in expanded arguments), or the refusal, before
/// anything is written. A worktree's folder does not exist yet: it is checked for UTF-8 here,
/// and the multiplexer gets it once git made it.
fn exact_in_mux(kind: MuxKind, name: &str, cwd: &Path, tree: &Tree) -> Result<(), Ending> {
    if !kind.caps().exact_names {
        return Ok(());
    }
    let label = kind.caps().label;
    let why = |e: crate::mux::MuxError| format!("{label} would not keep it exactly: {}", e.detail);
    kind.check_window_name(name)
        .map_err(|e| refused(SpawnExit::BadName, why(e)))?;
    let dir = match tree {
        Tree::Create(_) => cwd
            .to_str()
            .map(|_| ())
            .ok_or_else(|| "the folder is not UTF-8".into()),
        _ => kind.check_start_dir(cwd).map_err(why),
    };
    dir.map_err(|why: String| refused(SpawnExit::BadFolder, format!("{}: {why}", cwd.display())))
}

pub(super) fn tab_or_window(k: MuxKind) -> &'static str {
    k.caps().window_word
}

/// The roster already names `a`: only an unfinished spawn of it, with nothing running its
/// session, may be opened again; anything else is a name taken.
fn unfinished(req: &SpawnRequest, root: &Path, a: &Agent) -> Result<LaunchSpec, Ending> {
    let taken = |why: String| refused(SpawnExit::Taken, why);
    let name = sanitize(&a.name);
    if a.coordinator {
        return Err(taken(format!("{name} is the coordinator's name")));
    }
    let spec = match launch_spec::read(root, &req.scan.data_root, &a.session_id) {
        Ok(s) if s.stage != Stage::Registered => s,
        Ok(_) => {
            return Err(taken(format!(
            "{name} is already in the roster (spawned and registered): resume-worker or retire it"
        )))
        }
        Err(launch_spec::SpecError::Missing) => {
            return Err(taken(format!("{name} is already in the roster")))
        }
        Err(e) => return Err(taken(format!("{name} is already in the roster ({e})"))),
    };
    let earlier = format!(
        "{name}'s earlier spawn (stopped at {}{})",
        spec.stage.as_str(),
        spec.pane
            .as_deref()
            .map(|p| format!(", pane {p}"))
            .unwrap_or_default()
    );
    if let Some((w, _)) = live::live_registration(root, &req.scan.data_root, &a.session_id) {
        return Err(taken(format!(
            "{earlier} registered meanwhile: {}",
            w.detail
        )));
    }
    // A pi is a witness by its command line, its PI_SESSION_ID, or by running unregistered in
    // the worker's folder (pi 1.6.0 hides its flags); no saved file is named (none need exist).
    let spec_file = paths::launch_spec(root, &a.session_id);
    let regs = crate::evidence::registrations::read_all(Some(root), &req.scan.data_root);
    match live::process_naming(&a.session_id, &spec_file, &spec.cwd, &regs) {
        Ok(None) => {}
        Ok(Some(w)) => {
            return Err(taken(format!(
                "{earlier} still runs: {} (it never registered: is the pi extension installed?); end it, or retire {name}",
                w.detail
            )))
        }
        Err(e) => return Err(taken(format!("cannot tell whether {earlier} still runs: {e}"))),
    }
    match live::health_answers(a.port, &a.session_id) {
        Ok(None) => Ok(spec),
        Ok(Some(w)) => Err(taken(format!("{earlier} still runs: {}", w.detail))),
        Err(e) => Err(refused(SpawnExit::Failed, e.to_string())),
    }
}

/// A relaunch stays where the worker is: a `--dir` or `--worktree` naming elsewhere is refused.
fn same_folder(req: &SpawnRequest, spec: &LaunchSpec) -> Result<Tree, Ending> {
    let elsewhere = |what: String| {
        refused(
            SpawnExit::BadFolder,
            format!(
                "{what}; the unfinished spawn of {} is opened again in {} (retire it to start over)",
                sanitize(&spec.name),
                spec.cwd.display()
            ),
        )
    };
    if !matches!(fsguard::kind(&spec.cwd), Ok(fsguard::Kind::Dir)) {
        return Err(elsewhere(format!(
            "its folder {} is gone",
            spec.cwd.display()
        )));
    }
    match (&req.folder, &spec.worktree) {
        (Folder::Root, w) => Ok(w.clone().map_or(Tree::None, Tree::Existing)),
        (Folder::Dir(d), None) if paths::absolute(d) == spec.cwd => Ok(Tree::None),
        (Folder::Dir(d), _) => Err(elsewhere(format!("--dir {} differs", d.display()))),
        (Folder::Worktree(b), Some(w)) if b.as_ref().is_none_or(|b| *b == w.branch) => {
            Ok(Tree::Existing(w.clone()))
        }
        (Folder::Worktree(_), _) => Err(elsewhere("--worktree differs".into())),
    }
}

/// A spec of this name whose session the roster does not name: a spawn that died before its
/// roster entry was written (the name lock says none runs now).
fn abandoned(
    root: &Path,
    data_root: &Path,
    cfg: &IntercomConfig,
    name: &str,
) -> Option<LaunchSpec> {
    let want = name.to_lowercase();
    launch_spec::all(root, data_root)
        .into_iter()
        .filter(|s| s.stage == Stage::Reserved)
        .find(|s| s.name.to_lowercase() == want && cfg.find_by_session(&s.session_id).is_none())
}

/// The worker's folder: (`projectDirectory`, absolute folder, worktree step).
fn folder(
    req: &SpawnRequest,
    root: &Path,
    earlier: Option<&LaunchSpec>,
) -> Result<(String, PathBuf, Tree), Ending> {
    let bad = |why: String| refused(SpawnExit::BadFolder, why);
    let left = earlier
        .and_then(|s| s.worktree.as_ref())
        .filter(|w| fsguard::kind(&w.path).is_ok());
    if let (Some(w), false) = (left, matches!(req.folder, Folder::Worktree(_))) {
        return Err(bad(format!(
            "a spawn of {} that stopped early left the worktree {} (branch {}): spawn with --worktree to use it, or remove it first",
            sanitize(&req.name),
            w.path.display(),
            sanitize(&w.branch)
        )));
    }
    match &req.folder {
        Folder::Root => Ok((".".into(), root.to_path_buf(), Tree::None)),
        Folder::Dir(d) => {
            let d = paths::absolute(d);
            let shown = d.display().to_string();
            match fsguard::kind(&d) {
                Ok(fsguard::Kind::Dir) => {}
                Ok(_) => return Err(bad(format!("--dir {shown} is not a folder (or is a link)"))),
                Err(e) => return Err(bad(format!("--dir {shown} does not exist ({})", e.code()))),
            }
            if nix::unistd::access(
                &d,
                nix::unistd::AccessFlags::W_OK | nix::unistd::AccessFlags::X_OK,
            )
            .is_err()
            {
                return Err(bad(format!("--dir {shown}: you cannot write there")));
            }
            let (Ok(real_root), Ok(real)) =
                (std::fs::canonicalize(root), std::fs::canonicalize(&d))
            else {
                return Err(bad(format!("--dir {shown} cannot be resolved")));
            };
            let rel = real.strip_prefix(&real_root).map_err(|_| {
                bad(format!(
                    "--dir {shown} is outside the root {} (projectDirectory is root-relative)",
                    root.display()
                ))
            })?;
            let rel = rel
                .to_str()
                .ok_or_else(|| bad(format!("--dir {shown} is not UTF-8")))?;
            let dir = if rel.is_empty() { "." } else { rel };
            if dir.chars().any(char::is_control) {
                return Err(bad(format!("--dir {shown} holds a control character")));
            }
            Ok((dir.to_string(), root.join(rel), Tree::None))
        }
        Folder::Worktree(branch) => {
            let parent = paths::worktrees_dir(root);
            let path = parent.join(&req.name);
            let dir = format!("{}/worktrees/{}", paths::STATE_DIR, req.name);
            if let Some(w) = earlier.and_then(|s| s.worktree.as_ref()) {
                let same_branch = branch.as_ref().is_none_or(|b| *b == w.branch);
                if same_branch
                    && w.path == path
                    && worktree::is_checkout_of(w, Instant::now() + GIT_DEADLINE)
                {
                    return Ok((dir, path, Tree::Existing(w.clone())));
                }
            }
            let branch = branch.clone().unwrap_or_else(|| req.name.clone());
            let planned = worktree::plan(root, &path, &branch, Instant::now() + GIT_DEADLINE)
                .map_err(|e| bad(e.to_string()))?;
            Ok((dir, path, Tree::Create(planned)))
        }
    }
}

/// The spec this spawn writes first (stage `reserved`, or `launching` for a relaunch).
pub(super) fn first_spec(req: &SpawnRequest, plan: &Plan, now: &str) -> LaunchSpec {
    let worktree = match &plan.tree {
        Tree::None => None,
        Tree::Existing(w) => Some(w.clone()),
        Tree::Create(p) => Some(Worktree {
            path: p.path.clone(),
            branch: p.branch.clone(),
            created_branch: !p.branch_exists,
            base: p.base.clone(),
        }),
    };
    LaunchSpec {
        version: 1,
        session_id: plan.session_id.clone(),
        name: req.name.clone(),
        args: plan.args.clone(),
        cwd: plan.cwd.clone(),
        env: plan.env.clone(),
        placement: Some(Placement {
            multiplexer: plan.mux.kind(),
            kind: tab_or_window(plan.mux.kind()).into(),
            socket: plan.mux.socket_path().to_path_buf(),
        }),
        worktree,
        stage: match plan.kind {
            Kind::Relaunch => Stage::Launching,
            _ => Stage::Reserved,
        },
        pane: None,
        created_at: plan
            .earlier
            .as_ref()
            .map_or_else(|| now.to_string(), |s| s.created_at.clone()),
        updated_at: now.to_string(),
        note: None,
        program: Some(req.pi_program.clone()),
        model: None,
    }
}

/// Spec, worktree, roster entry — in that order; a refusal at the roster undoes the worktree
/// this run created and the spec. Returns the spec as written (stage `launching`).
pub(super) fn reserve(
    req: &SpawnRequest,
    root: &Path,
    plan: &mut Plan,
) -> Result<LaunchSpec, Ending> {
    let now = format_iso(req.clock.now_ms());
    let mut spec = first_spec(req, plan, &now);
    let failed = |why: String| refused(SpawnExit::Failed, why);
    launch_spec::write(root, &req.scan.data_root, &spec)
        .map_err(|e| failed(format!("cannot record the launch spec: {e}")))?;
    super::test_pause("reserved");
    if matches!(plan.kind, Kind::Relaunch) {
        return Ok(spec);
    }
    let created_now = make_worktree(root, &req.scan.data_root, plan)?;
    if let Err(e) = add_entry(req, root, plan) {
        return Err(undo_reservation(
            root,
            &req.scan.data_root,
            plan,
            created_now.as_ref(),
            e,
        ));
    }
    plan.checks.push(format!(
        "roster entry added (port {}, projectDirectory {})",
        plan.port,
        sanitize(&plan.project_directory)
    ));
    spec.stage = Stage::Launching;
    spec.updated_at = format_iso(req.clock.now_ms());
    launch_spec::write(root, &req.scan.data_root, &spec).map_err(|e| {
        failed(format!(
            "{} is in the roster, but its launch spec could not be updated: {e}",
            sanitize(&req.name)
        ))
    })?;
    super::test_pause("launching");
    Ok(spec)
}

/// Create the worktree the plan asks for (the spec is removed again if that fails); the repo
/// and the worktree this run created, if it did.
fn make_worktree(
    root: &Path,
    data_root: &Path,
    plan: &mut Plan,
) -> Result<Option<(PathBuf, Worktree)>, Ending> {
    let Tree::Create(p) = &plan.tree else {
        return Ok(None);
    };
    let made = store::ensure_dir(root, &paths::worktrees_dir(root))
        .map_err(worktree::WorktreeError::Folder)
        .and_then(|()| worktree::create(p, Instant::now() + GIT_DEADLINE));
    match made {
        Ok(w) => {
            plan.checks.push(format!(
                "worktree {} on branch {} ({})",
                w.path.display(),
                sanitize(&w.branch),
                if w.created_branch {
                    "new branch"
                } else {
                    "existing branch"
                }
            ));
            Ok(Some((p.repo.clone(), w)))
        }
        Err(e) => {
            launch_spec::remove(root, data_root, &plan.session_id);
            Err(refused(SpawnExit::BadFolder, e))
        }
    }
}

/// Append the worker's entry under the roster's lock, re-checking there that the name, the
/// session and the roster's room are still free (and moving to another port if this one was
/// taken meanwhile: `plan.port` is the one written).
fn add_entry(
    req: &SpawnRequest,
    root: &Path,
    plan: &mut Plan,
) -> Result<(), WriteError<RosterRefusal>> {
    let entry = entry(req, plan);
    let port = std::cell::Cell::new(plan.port);
    let name = req.name.clone();
    let id = plan.session_id.clone();
    let added = config_write::append_agent(root, &|cfg: &IntercomConfig| {
        if cfg.find_by_name(&name).is_some() || cfg.find_by_session(&id).is_some() {
            return Err(RosterRefusal(
                SpawnExit::Taken,
                format!("{} was added to the roster meanwhile", sanitize(&name)),
            ));
        }
        if cfg.agents.len() >= MAX_AGENTS {
            return Err(RosterRefusal(
                SpawnExit::Full,
                format!("the roster holds {MAX_AGENTS} agents, the most it may"),
            ));
        }
        // Another spawn (of another name) may have taken the port since it was chosen.
        let used: Vec<u16> = cfg.agents.iter().map(|a| a.port).collect();
        let mut e = entry.clone();
        if used.contains(&port.get()) {
            let other = super::free_port(&used).ok_or_else(|| {
                RosterRefusal(
                    SpawnExit::Failed,
                    "no free loopback port for the worker".into(),
                )
            })?;
            port.set(other);
            e.insert("port".into(), Value::from(other));
        }
        Ok(e)
    });
    plan.port = port.get();
    added.map(|_| ())
}

/// The roster refused the entry (or could not be written): undo the worktree this run created
/// and the spec, and say what was undone.
fn undo_reservation(
    root: &Path,
    data_root: &Path,
    plan: &Plan,
    created_now: Option<&(PathBuf, Worktree)>,
    e: WriteError<RosterRefusal>,
) -> Ending {
    let undone = match created_now {
        Some((repo, w)) => match worktree::undo(repo, w, Instant::now() + GIT_DEADLINE) {
            Ok(()) => "; the worktree it created is removed again".to_string(),
            Err(u) => format!("; the worktree it created is kept: {u}"),
        },
        None => String::new(),
    };
    launch_spec::remove(root, data_root, &plan.session_id);
    match e {
        WriteError::Refused(RosterRefusal(exit, why)) => refused(exit, format!("{why}{undone}")),
        other => refused(
            SpawnExit::Failed,
            format!("the roster was not changed: {other}{undone}"),
        ),
    }
}

/// The roster refused the entry under its lock (the exit and why).
#[derive(Debug)]
struct RosterRefusal(SpawnExit, String);

impl std::fmt::Display for RosterRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.1)
    }
}

/// The roster entry, members in the order Intercom writes them.
fn entry(req: &SpawnRequest, plan: &Plan) -> Map<String, Value> {
    let agent = config::NewAgent {
        session_id: &plan.session_id,
        name: &req.name,
        coordinator: false,
        description: &plan.description,
        port: plan.port,
        project_directory: &plan.project_directory,
        budget: req.budget.as_ref().map(|b| b.to_json()),
    };
    match serde_json::to_value(agent) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    }
}
