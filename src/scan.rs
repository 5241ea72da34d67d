//! One bounded pass over every evidence source into one immutable result (`Scan`).
//!
//! Order: seen marks (refuse when invalid) → Intercom roster, logs, reports → seat discovery
//! (Intercom agents, repo and fleet agents, connectors) → registrations → session files →
//! multiplexer panes (one list per server) → classification and joins. Views only read `Scan`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::board::classify::{self, Classification, Liveness};
use crate::board::intercom::{self, WorkerObservation};
use crate::board::record::{RegisteredView, SeatRecord, TmuxRef};
use crate::clock::{age_seconds, format_iso, Clock, Ms};
use crate::evidence::config::{self, Agent, IntercomConfig};
use crate::evidence::connectors::{self, Binding};
use crate::evidence::observations;
use crate::evidence::registrations::{self, Registration, RegistrationSet};
use crate::evidence::reports;
use crate::evidence::seen::{self, SeenMarks};
use crate::evidence::sessions::{self, SessionSummary};
use crate::fsguard::{self, Kind};
use crate::liveness::{self, LivenessMode};
use crate::mux::MuxKind;
use crate::probe::{Connection, ProbeCache, ProbeTarget};
use crate::snapshot::{
    ActivityView, BoardState, CloseJobView, ConnectionView, HandoffView, ReplyPath, ReportView,
    RosterStatus, Row, RowRole, Snapshot,
};

const MAX_AGENT_DIRS: usize = 256;
const GIT_WALK_LEVELS: usize = 32;

/// Where the Intercom roster comes from.
#[derive(Debug, Clone)]
pub enum RootChoice {
    /// Walk upward from this folder (the default: the current folder).
    Discover(PathBuf),
    /// Exactly this root.
    Exact(PathBuf),
    /// No Intercom roster.
    Skip,
}

#[derive(Debug, Clone)]
pub struct ScanOptions {
    pub data_root: PathBuf,
    pub root: RootChoice,
    /// Checkout whose `.pi/state/<agent>/sessions` are repo seats.
    pub repo: Option<PathBuf>,
    /// `<fleet>/<agent>/.pi/agent/sessions` seats.
    pub fleet: Option<PathBuf>,
    /// pi session folders searched for Intercom agents' session files.
    pub session_dirs: Vec<PathBuf>,
    pub liveness: LivenessMode,
    /// The tmux server seats without an explicit socket live on (default: `$TMUX`, else
    /// `-L default`).
    pub tmux_socket: Option<PathBuf>,
}

/// A refusal that stops the pass (exit 2).
#[derive(Debug)]
pub struct ScanError(pub String);

impl std::fmt::Display for ScanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The immutable result of one pass.
pub struct Scan {
    pub scanned_at: Ms,
    pub data_root: PathBuf,
    pub config: Option<IntercomConfig>,
    /// One per configured worker (coordinator excluded), in configured order.
    pub workers: Vec<WorkerObservation>,
    pub records: Vec<SeatRecord>,
    pub snapshot: Snapshot,
    pub registered: Vec<String>,
    pub registration_stale: Vec<String>,
    pub registration_errors: Vec<String>,
    pub discovery_errors: Vec<String>,
}

/// One seat found by discovery, before any session file is read.
struct SeatSource {
    project: String,
    agent: String,
    role: RowRole,
    session_file: Option<PathBuf>,
    sessions_dir: Option<PathBuf>,
    /// Configured session id (Intercom agents): the file must confirm it.
    session_id: Option<String>,
    /// A file named for this seat's session exists but was refused (a link, a FIFO...).
    session_refused: Option<String>,
    tmux: TmuxRef,
    agent_index: Option<usize>,
    binding: Option<Binding>,
}

/// Run one pass. `probes`: connection checks gathered by the caller (the sidebar's background
/// batches, or `status --probe` for its page); without it every connection is `not_checked`.
pub fn run(
    opts: &ScanOptions,
    clock: &dyn Clock,
    probes: Option<&ProbeCache>,
) -> Result<Scan, ScanError> {
    let now = clock.now_ms();
    let mut errors: Vec<String> = Vec::new();
    let mut truncated = false;
    let mut discovery_errors = Vec::new();

    let seen_path = opts.data_root.join("board").join("seen.json");
    let marks = seen::read_seen(&seen_path).map_err(ScanError)?;

    // Intercom roster, logs, reports.
    let (config, roster) = load_roster(&opts.root);
    let mut workers = Vec::new();
    if let Some(cfg) = &config {
        let logs = observations::read_logs(&cfg.root);
        truncated |= logs.truncated;
        errors.extend(logs.errors.iter().map(|e| e.to_string()));
        let ids: Vec<&str> = cfg.workers().map(|a| a.session_id.as_str()).collect();
        let reps = reports::read_reports(&cfg.root, &ids);
        errors.extend(reps.errors.iter().map(|e| e.to_string()));
        for a in cfg.workers() {
            workers.push(intercom::project_worker(a, &logs.events, &reps, now));
        }
    } else if let RosterStatus::Unavailable { code, .. } = &roster {
        if code != "no_root" {
            errors.push(code.clone());
        }
    }

    // Seat discovery.
    let mut seats = Vec::new();
    if let Some(cfg) = &config {
        let index = sessions::index_sessions(&opts.session_dirs);
        truncated |= index.truncated;
        // A missing default pi folder only means no sessions there; a missing folder that was
        // named explicitly is worth saying.
        let defaults = sessions::default_session_dirs();
        errors.extend(
            index
                .errors
                .iter()
                .filter(|e| !(e.code == "not_found" && defaults.contains(&e.path)))
                .map(|e| format!("sessions_{}", e.code)),
        );
        let project = base_name(&cfg.root);
        for (i, a) in cfg.agents.iter().enumerate() {
            seats.push(SeatSource {
                project: project.clone(),
                agent: a.name.clone(),
                role: if a.coordinator {
                    RowRole::Coordinator
                } else {
                    RowRole::Worker
                },
                session_file: index.find(&a.session_id).map(Path::to_path_buf),
                session_refused: index
                    .errors
                    .iter()
                    .find(|e| {
                        e.path
                            .file_name()
                            .and_then(|n| n.to_str())
                            .and_then(sessions::session_id_from_name)
                            == Some(a.session_id.as_str())
                    })
                    .map(|e| format!("session_{}", e.code)),
                sessions_dir: None,
                session_id: Some(a.session_id.clone()),
                tmux: TmuxRef::default(),
                agent_index: Some(i),
                binding: None,
            });
        }
    }
    if let Some(repo) = &opts.repo {
        discover_agent_dirs(
            &repo.join(".pi").join("state"),
            &base_name(repo),
            None,
            |agent_dir| agent_dir.join("sessions"),
            &mut seats,
            &mut discovery_errors,
        );
    }
    if let Some(fleet) = &opts.fleet {
        discover_agent_dirs(
            fleet,
            "fleet",
            Some("mosaic-fleet"),
            |agent_dir| agent_dir.join(".pi").join("agent").join("sessions"),
            &mut seats,
            &mut discovery_errors,
        );
    }
    let bindings = connectors::read_bindings(&opts.data_root);
    discovery_errors.extend(bindings.errors.iter().cloned());
    for b in bindings.items {
        let sessions_dir = opts.fleet.as_ref().map(|f| {
            f.join(&b.seat)
                .join(".pi/agent/sessions")
                .join(format!("discord-{}", b.name))
        });
        seats.push(SeatSource {
            project: "fleet".into(),
            agent: format!("{} (discord: {})", b.seat, b.name),
            role: RowRole::Connector,
            session_file: sessions_dir
                .as_deref()
                .and_then(|d| sessions::newest_session_in(d).ok().flatten()),
            sessions_dir,
            session_id: None,
            session_refused: None,
            tmux: TmuxRef::default(),
            agent_index: None,
            binding: Some(b),
        });
    }

    let regs = registrations::read_all(config.as_ref().map(|c| c.root.as_path()), &opts.data_root);
    truncated |= regs.truncated;

    // Multiplexer panes: one list per server, whatever the number of seats.
    let panes = liveness::PaneCache::collect(
        opts.liveness,
        &seat_servers(&seats, &regs),
        opts.tmux_socket.as_deref(),
    );

    let mut records = Vec::with_capacity(seats.len());
    let mut rows = Vec::with_capacity(seats.len());
    let mut registered = Vec::new();
    let mut registration_stale = Vec::new();
    for seat in &seats {
        let agent_cfg = seat
            .agent_index
            .and_then(|i| config.as_ref().map(|c| &c.agents[i]));
        let session = read_seat_session(seat, &mut errors);
        let summary = session.summary();
        let reg = match_registration(seat, &regs, summary);
        let reg_alive = reg.and_then(registration_alive);
        let live = liveness::seat_liveness(&panes, seat_hint(seat, reg).as_ref(), opts.liveness);
        let obs = agent_cfg
            .filter(|a| !a.coordinator)
            .and_then(|a| workers.iter().find(|w| w.session_id == a.session_id));
        let connection = agent_cfg.map(|a| match probes {
            Some(p) => p.get(&a.session_id, a.port, now),
            None => Connection::not_checked(&a.session_id),
        });
        let record = build_record(
            seat,
            &session,
            reg,
            reg_alive,
            &live,
            &marks,
            obs,
            connection.as_ref(),
            now,
        );
        if reg.is_some() {
            let key = record.key();
            match reg_alive {
                Some(false) => registration_stale.push(key),
                _ => registered.push(key),
            }
        }
        if seat.role != RowRole::Coordinator {
            rows.push(build_row(
                seat,
                &record,
                agent_cfg,
                obs,
                connection.as_ref(),
            ));
        }
        records.push(record);
    }

    // Disconnected workers sort last; configured order is kept inside both groups.
    crate::probe::sort_disconnected_last(&mut rows, |r| r.connection.state);
    let snapshot = Snapshot {
        scanned_at: now,
        roster,
        rows,
        truncated,
        errors,
    };
    Ok(Scan {
        scanned_at: now,
        data_root: opts.data_root.clone(),
        config,
        workers,
        records,
        snapshot,
        registered,
        registration_stale,
        registration_errors: regs.errors.clone(),
        discovery_errors,
    })
}

impl Scan {
    /// The probe targets of this pass: configured workers in saved order.
    pub fn probe_targets(&self) -> Vec<ProbeTarget> {
        self.config
            .iter()
            .flat_map(|c| c.workers())
            .map(|a| ProbeTarget {
                session_id: a.session_id.clone(),
                port: a.port,
            })
            .collect()
    }

    /// Show the connection checks in `probes` (taken after this pass read its evidence) on the
    /// worker rows and records, then sort disconnected workers last again.
    pub fn apply_connections(&mut self, probes: &ProbeCache, now: Ms) {
        let Some(cfg) = &self.config else { return };
        let connection = |sid: &str| {
            cfg.find_by_session(sid)
                .filter(|a| !a.coordinator)
                .map(|a| probes.get(&a.session_id, a.port, now))
        };
        for row in &mut self.snapshot.rows {
            if let Some(c) = connection(&row.id) {
                row.connection = ConnectionView::from_connection(&c);
            }
        }
        for rec in &mut self.records {
            let (Some(sid), Some(obj)) = (rec.session_id.as_deref(), rec.intercom.as_mut()) else {
                continue;
            };
            if let Some(c) = connection(sid) {
                obj["connection"] = c.to_json();
            }
        }
        crate::probe::sort_disconnected_last(&mut self.snapshot.rows, |r| r.connection.state);
    }
}

fn load_roster(choice: &RootChoice) -> (Option<IntercomConfig>, RosterStatus) {
    let root = match choice {
        RootChoice::Skip => {
            return (
                None,
                RosterStatus::Unavailable {
                    code: "no_root".into(),
                    reason: "no Intercom root was given (--no-root)".into(),
                },
            )
        }
        RootChoice::Exact(p) => p.clone(),
        RootChoice::Discover(start) => match config::discover_root(start) {
            Ok(Some(r)) => r,
            Ok(None) => {
                return (
                    None,
                    RosterStatus::Unavailable {
                        code: "no_root".into(),
                        reason: format!(
                            "no .pi-intercom/config.json in {} or any folder above it",
                            start.display()
                        ),
                    },
                )
            }
            Err(e) => {
                return (
                    None,
                    RosterStatus::Unavailable {
                        code: e.code().to_string(),
                        reason: e.to_string(),
                    },
                )
            }
        },
    };
    match config::load(&root) {
        Ok(cfg) => {
            let status = RosterStatus::Available {
                root: root.display().to_string(),
            };
            (Some(cfg), status)
        }
        Err(e) => (
            None,
            RosterStatus::Unavailable {
                code: e.code().to_string(),
                reason: e.to_string(),
            },
        ),
    }
}

fn base_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "/".into())
}

fn discover_agent_dirs(
    parent: &Path,
    project: &str,
    socket_name: Option<&str>,
    sessions_of: impl Fn(&Path) -> PathBuf,
    seats: &mut Vec<SeatSource>,
    errors: &mut Vec<String>,
) {
    let list = match fsguard::list_dir(parent, MAX_AGENT_DIRS) {
        Ok(l) => l,
        Err(fsguard::FsError::NotFound) => return,
        Err(e) => {
            errors.push(format!("{}: {}", parent.display(), e.code()));
            return;
        }
    };
    if list.truncated {
        errors.push(format!("{}: too_many_agents", parent.display()));
    }
    let mut entries: Vec<_> = list
        .entries
        .into_iter()
        .filter(|e| e.kind == Kind::Dir)
        .collect();
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    for e in entries {
        let Some(agent) = e.name_str().map(str::to_string) else {
            continue;
        };
        let dir = sessions_of(&parent.join(&agent));
        let file = match sessions::newest_session_in(&dir) {
            Ok(f) => f,
            Err(fsguard::FsError::NotFound) => continue,
            Err(err) => {
                errors.push(format!("{}/{}: sessions_{}", project, agent, err.code()));
                None
            }
        };
        seats.push(SeatSource {
            project: project.to_string(),
            tmux: TmuxRef {
                socket: socket_name.map(str::to_string),
                session: Some(agent.clone()),
            },
            agent,
            role: RowRole::Seat,
            session_file: file,
            sessions_dir: Some(dir),
            session_id: None,
            session_refused: None,
            agent_index: None,
            binding: None,
        });
    }
}

/// A seat's session file: read, absent, or present but unusable (then the state is unknown).
enum SessionRead {
    Read(Box<SessionSummary>),
    NoFile,
    Unusable(String),
}

impl SessionRead {
    fn summary(&self) -> Option<&SessionSummary> {
        match self {
            SessionRead::Read(s) => Some(s),
            _ => None,
        }
    }
}

fn read_seat_session(seat: &SeatSource, errors: &mut Vec<String>) -> SessionRead {
    let Some(path) = seat.session_file.as_ref() else {
        return match &seat.session_refused {
            Some(code) => SessionRead::Unusable(code.clone()),
            None => SessionRead::NoFile,
        };
    };
    let code = match sessions::read_session(path) {
        Ok(s) => match &seat.session_id {
            Some(want) if &s.session_id != want => "session_id_mismatch".to_string(),
            _ => return SessionRead::Read(Box::new(s)),
        },
        Err(e) => format!("session_{}", e.code()),
    };
    errors.push(format!("{}/{}: {code}", seat.project, seat.agent));
    SessionRead::Unusable(code)
}

fn match_registration<'a>(
    seat: &SeatSource,
    regs: &'a RegistrationSet,
    summary: Option<&SessionSummary>,
) -> Option<&'a Registration> {
    if seat.role == RowRole::Connector {
        return None;
    }
    if let Some(id) = seat
        .session_id
        .as_deref()
        .or(summary.map(|s| s.session_id.as_str()))
    {
        if let Some(r) = regs.by_session_id(id) {
            return Some(r);
        }
    }
    seat.sessions_dir
        .as_deref()
        .and_then(|d| regs.by_sessions_dir(d))
}

/// `Some(true)` live, `Some(false)` stale (pid gone or another process), `None` no pid recorded.
fn registration_alive(r: &Registration) -> Option<bool> {
    let pid = r.pid?;
    let Some(id) = crate::proc::identity(pid) else {
        return Some(false);
    };
    if let Some(t) = r.start_ticks {
        if id.start_ticks != t {
            return Some(false);
        }
    }
    if let Some(b) = &r.boot_id {
        if &id.boot_id != b {
            return Some(false);
        }
    }
    Some(crate::proc::is_alive(&id))
}

fn seat_hint(seat: &SeatSource, reg: Option<&Registration>) -> Option<liveness::SeatHint> {
    if let Some(b) = &seat.binding {
        return Some(liveness::SeatHint::Process(
            b.owner.clone().map(|o| (o.pid, o.start_tick, o.boot_id)),
        ));
    }
    if let Some(m) = reg.and_then(|r| r.mux.as_ref()) {
        return Some(liveness::SeatHint::Pane {
            kind: mux_kind(&m.kind)?,
            socket: m.socket.clone(),
            pane_id: m.pane_id.clone(),
            session: m.session.clone(),
        });
    }
    if matches!(seat.role, RowRole::Worker | RowRole::Coordinator) {
        return Some(liveness::SeatHint::Conventional {
            session: seat.agent.clone(),
        });
    }
    seat.tmux
        .session
        .as_ref()
        .map(|s| liveness::SeatHint::Pane {
            kind: MuxKind::Tmux,
            socket: seat.tmux.socket.clone(),
            pane_id: None,
            session: Some(s.clone()),
        })
}

fn mux_kind(name: &str) -> Option<MuxKind> {
    match name {
        "tmux" => Some(MuxKind::Tmux),
        "herdr" => Some(MuxKind::Herdr),
        _ => None,
    }
}

/// Every server some seat lives on (the default tmux server always), each listed once.
fn seat_servers(seats: &[SeatSource], regs: &RegistrationSet) -> Vec<liveness::ServerKey> {
    let mut out: Vec<liveness::ServerKey> = vec![(MuxKind::Tmux, None)];
    let mut add = |k: liveness::ServerKey| {
        if !out.contains(&k) {
            out.push(k);
        }
    };
    for s in seats {
        add((MuxKind::Tmux, s.tmux.socket.clone()));
    }
    for r in &regs.items {
        if let Some(m) = &r.mux {
            if let Some(kind) = mux_kind(&m.kind) {
                add((kind, m.socket.clone()));
            }
        }
    }
    out
}

/// Basename of the nearest git checkout (a `.git` folder or worktree file) at or above `dir`.
fn git_project(dir: &Path) -> Option<String> {
    let mut cur = Some(dir);
    for _ in 0..GIT_WALK_LEVELS {
        let d = cur?;
        if matches!(
            fsguard::kind(&d.join(".git")),
            Ok(Kind::Dir) | Ok(Kind::File)
        ) {
            return Some(base_name(d));
        }
        cur = d.parent();
    }
    None
}

#[allow(clippy::too_many_arguments)]
fn build_record(
    seat: &SeatSource,
    session: &SessionRead,
    reg: Option<&Registration>,
    reg_alive: Option<bool>,
    live: &liveness::SeatLiveness,
    marks: &SeenMarks,
    obs: Option<&WorkerObservation>,
    connection: Option<&Connection>,
    now: Ms,
) -> SeatRecord {
    let s = session.summary();
    // A registration is trusted only while its process is verifiably the one that wrote it.
    let live_reg = reg.filter(|_| reg_alive != Some(false));
    let classification: Option<Classification> = s.map(|s| classify::classify(s, now));
    let mut state = classify::board_state(live.liveness, classification.as_ref());
    let mut reason = match &classification {
        Some(c) => c.reason.to_string(),
        None => "no_session_file".to_string(),
    };
    let mut source = match session {
        SessionRead::NoFile => "no session file",
        _ => "session file",
    }
    .to_string();
    // A session file that exists but cannot be used says nothing: unknown, never idle.
    if let SessionRead::Unusable(code) = session {
        if state != BoardState::Offline && state != BoardState::Unknown {
            state = BoardState::Unknown;
            reason = code.clone();
        }
    }
    // A turn that started before pi wrote anything is only visible in the registration.
    if live.liveness == Liveness::Alive {
        if let Some(rs) = live_reg.and_then(|r| r.run_state.as_ref()) {
            let newer = s.and_then(|s| s.last_activity).is_none_or(|a| rs.at > a);
            if rs.state == "working" && newer && state != BoardState::Working {
                state = BoardState::Working;
                reason = "turn_started".into();
                source = "registration run state".into();
            }
        }
    }
    if live.liveness != Liveness::Alive {
        reason = live.reason.clone();
        source = live.source.clone();
    }
    let last_activity = s.and_then(|s| s.last_activity).map(format_iso);
    let key = format!("{}/{}", seat.project, seat.agent);
    let seen = seen::is_seen(marks, &key, last_activity.as_deref());

    let (task, task_source, task_set_by) = if seat.role == RowRole::Connector {
        (
            Some("Discord connector".to_string()),
            Some("connector"),
            None,
        )
    } else if let Some(t) = live_reg.and_then(|r| r.task.clone()) {
        let by = live_reg
            .and_then(|r| r.task_set_by.clone())
            .unwrap_or_else(|| "unknown".into());
        (Some(t), Some("registration"), Some(by))
    } else if let Some(t) = s.and_then(|s| s.task.clone()) {
        (Some(t), Some("first-user-message"), None)
    } else {
        (None, None, None)
    };
    let (workspace, workspace_source) = if let Some(w) = live_reg.and_then(|r| r.workspace.clone())
    {
        (Some(w), Some("registration"))
    } else if let Some((w, kind)) = live.pane_cwd.clone() {
        (Some(w), Some(kind.workspace_source()))
    } else if let Some(c) = s.map(|s| s.cwd.clone()) {
        (Some(c), Some("session-cwd"))
    } else {
        (None, None)
    };
    let (active_project, active_project_source) =
        if let Some(p) = live_reg.and_then(|r| r.project.clone()) {
            (Some(p), Some("registration"))
        } else {
            match workspace.as_deref().and_then(|w| git_project(Path::new(w))) {
                Some(p) => (Some(p), Some("workspace-git-root")),
                None => (None, None),
            }
        };
    let relaunched_at = match (live_reg, s.and_then(|s| s.last_activity)) {
        (Some(r), Some(last)) if reg_alive == Some(true) && live.liveness == Liveness::Alive => {
            r.started_at.filter(|st| *st > last).map(format_iso)
        }
        _ => None,
    };
    let registered = reg.map(|r| RegisteredView {
        started_at: r.started_at.map(format_iso),
        harness: r.harness.clone(),
        pid: r.pid,
        tmux_session: r.mux.as_ref().and_then(|m| m.session.clone()),
        alive: reg_alive,
        run_state: r.run_state.as_ref().map(|rs| rs.state.clone()),
        path: r.path.display().to_string(),
    });
    let tmux = match reg
        .and_then(|r| r.mux.as_ref())
        .filter(|m| m.kind == "tmux")
    {
        Some(m) => TmuxRef {
            socket: m.socket.clone(),
            session: m.session.clone(),
        },
        None => seat.tmux.clone(),
    };
    let connector = seat.binding.as_ref().map(|b| {
        serde_json::json!({
            "binding": b.name,
            "alive": live.liveness == Liveness::Alive,
            "ownerState": live.reason,
            "braked": serde_json::Value::Null,
        })
    });
    SeatRecord {
        agent: seat.agent.clone(),
        project: seat.project.clone(),
        state,
        state_reason: reason,
        state_source: source,
        waiting_on_you: state == BoardState::Waiting && !seen,
        seen,
        alive: match live.liveness {
            Liveness::Alive => Some(true),
            Liveness::Offline => Some(false),
            Liveness::Unknown => None,
        },
        tmux,
        session_file: s.map(|s| s.path.display().to_string()),
        session_id: s
            .map(|s| s.session_id.clone())
            .or_else(|| seat.session_id.clone()),
        cwd: s.map(|s| s.cwd.clone()),
        task,
        task_source,
        task_set_by,
        workspace,
        workspace_source,
        active_project,
        active_project_source,
        registered,
        relaunched_at,
        age_seconds: s.and_then(|s| s.last_activity).map(|a| age_seconds(now, a)),
        last_activity,
        model: s.and_then(|s| s.model.clone()),
        provider: s.and_then(|s| s.provider.clone()),
        last_assistant_text: s.and_then(|s| s.last_assistant_text.clone()),
        last_error: s.and_then(|s| s.last_error.clone()),
        skipped_lines: s.map(|s| s.skipped_lines).unwrap_or(0),
        scanned_at: format_iso(now),
        intercom: obs.map(|o| {
            let c = connection
                .cloned()
                .unwrap_or_else(|| Connection::not_checked(&o.session_id));
            intercom::worker_status_json(o, c.to_json())
        }),
        connector,
    }
}

fn build_row(
    seat: &SeatSource,
    rec: &SeatRecord,
    agent: Option<&Agent>,
    obs: Option<&WorkerObservation>,
    connection: Option<&Connection>,
) -> Row {
    let reply = ReplyPath::Unavailable {
        reason: if seat.role == RowRole::Connector {
            "connector rows cannot be replied to".into()
        } else {
            "reply needs a registered seat".into()
        },
    };
    Row {
        id: rec.session_id.clone().unwrap_or_else(|| rec.key()),
        seen_key: rec.key(),
        name: seat.agent.clone(),
        project: seat.project.clone(),
        role: seat.role,
        responsibility: agent.map(|a| a.description.clone()),
        state: rec.state,
        state_reason: rec.state_reason.clone(),
        state_source: rec.state_source.clone(),
        connection: connection
            .map(ConnectionView::from_connection)
            .unwrap_or_else(ConnectionView::not_checked),
        activity: obs.map(activity_view),
        report: obs.and_then(report_view),
        handoff: obs.and_then(handoff_view),
        close_job: obs.and_then(close_job_view),
        task: rec.task.clone(),
        task_source: rec.task_source.map(str::to_string),
        workspace: rec.workspace.clone(),
        model: rec.model.clone(),
        provider: rec.provider.clone(),
        last_error: rec.last_error.clone(),
        last_assistant_text: rec.last_assistant_text.clone(),
        last_activity: rec
            .last_activity
            .as_deref()
            .and_then(crate::clock::parse_iso),
        relaunched_at: rec
            .relaunched_at
            .as_deref()
            .and_then(crate::clock::parse_iso),
        waiting_on_you: rec.waiting_on_you,
        seen: rec.seen,
        alive: rec.alive,
        reply,
    }
}

fn activity_view(o: &WorkerObservation) -> ActivityView {
    ActivityView {
        status: o.observed_status.as_str().to_string(),
        label: o.last_activity.to_string(),
        observed_at: o.observed_at,
        stale: o.stale,
        evidence: o.evidence.as_str().to_string(),
    }
}

fn report_view(o: &WorkerObservation) -> Option<ReportView> {
    o.report.as_ref().map(|r| ReportView {
        status: r.status.as_str().to_string(),
        summary: r.summary.clone(),
        updated_at: r.updated_at,
    })
}

fn handoff_view(o: &WorkerObservation) -> Option<HandoffView> {
    o.handoff.as_ref().map(|h| HandoffView {
        job_id: h.job_id.clone(),
        summary: h.summary.clone(),
        updated_at: h.updated_at,
    })
}

fn close_job_view(o: &WorkerObservation) -> Option<CloseJobView> {
    o.close_job.as_ref().map(|c| CloseJobView {
        job_id: c.job_id.clone(),
        state: c.state.as_str().to_string(),
        reason: c.reason.map(|r| r.as_str().to_string()),
        updated_at: c.updated_at,
    })
}

/// Counts per state, in the fixed state order.
pub fn counts(records: &[SeatRecord]) -> BTreeMap<&'static str, usize> {
    let mut m: BTreeMap<&'static str, usize> =
        BoardState::ALL.iter().map(|s| (s.as_str(), 0)).collect();
    for r in records {
        *m.entry(r.state.as_str()).or_default() += 1;
    }
    m
}
