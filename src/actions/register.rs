//! `intercom-pane register`: a pi records its own seat from the inside (docs/behaviour.md §5b).
//!
//! The shipped pi extension runs this at `session_start`, `agent_start`, `agent_settled` and
//! `session_shutdown`. It captures what only the inside can know — the pi process (an ancestor
//! of this command) with its start ticks and boot id, the multiplexer pane that owns it, the
//! session id and file — and writes one machine-local record (mode 0600) through the store.
//! Events carry a sequence number: a late, older event never overwrites a newer one. Run-state
//! events set `runState`; every event that carries the extension's picture of pi
//! (`--pi-state`) sets the `pi` section; each part keeps its own newest sequence number.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::clock::Ms;
use crate::evidence::registrations::{
    self, MuxRecord, PiReport, PiState, Registration, RunEvent, RunRecord,
};
use crate::fsguard;
use crate::mux::{self, MuxEnv, ServerIdentity};
use crate::proc;
use crate::store;

/// Deadline for asking the multiplexers who owns the pi (registration must never hold pi up).
const MUX_DEADLINE: Duration = Duration::from_millis(1500);
/// How long to wait for another `register` of the same seat to finish its write.
const LOCK_WAIT: Duration = Duration::from_millis(1000);
const LOCK_POLL: Duration = Duration::from_millis(20);

/// The event being recorded (one vocabulary with the registrations that read it).
pub(crate) use crate::evidence::registrations::Event;

/// How far a time in `--pi-state` may lie ahead of this command's clock (the same machine's:
/// the extension stamps an event just before it starts this command).
const PI_STATE_SKEW_MS: Ms = 2_000;

/// What the caller (the extension) tells about itself; the rest is found from the inside.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    pub event: Event,
    pub seq: u64,
    /// The pi process; it must be an ancestor of this command.
    pub pi_pid: i32,
    pub session_id: String,
    pub session_file: Option<PathBuf>,
    pub sessions_dir: Option<PathBuf>,
    /// With `SessionTree`: the entry pi's branch now ends at.
    pub leaf_id: Option<String>,
    /// `--cwd`: only compared with pi's real folder (`/proc/<pi>/cwd`), which is what counts.
    pub cwd: Option<PathBuf>,
    /// `--root`: only compared with the Intercom root found from pi's real folder.
    pub root: Option<PathBuf>,
    /// Data root for pi sessions outside any Intercom root.
    pub data_root: PathBuf,
    /// The private reply channel (Unix socket) the extension has open, if any: recorded as given
    /// with each event, so a closed channel is no longer advertised.
    pub channel: Option<PathBuf>,
    /// The extension's current picture of its pi (`--pi-state`), already parsed and capped.
    pub pi_state: Option<PiState>,
    /// pi's own arguments (`--pi-args`, with `session_start`): a launch record for an agent no
    /// command launched.
    pub pi_args: Option<Vec<String>>,
    /// The model pi runs (`--model`, with `session_start`).
    pub model: Option<String>,
}

/// A refusal (exit 2) or a failure to write (exit 1), with the reason.
#[derive(Debug)]
pub(crate) enum RegisterError {
    Refused(Refusal),
    Failed(String),
}

impl std::fmt::Display for RegisterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RegisterError::Refused(r) => r.fmt(f),
            RegisterError::Failed(m) => f.write_str(m),
        }
    }
}

/// Why a registration is refused. Values quoted in the message are sanitized and clipped there.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// `--session-id` is blank, too long or holds control characters.
    SessionId(String),
    /// `--event session_tree` without `--leaf-id`.
    LeafIdMissing,
    /// `--leaf-id` is not a pi entry id.
    LeafId(String),
    /// `--leaf-id` with another event.
    LeafIdWithoutTree,
    /// One of pi's other events without `--pi-state`.
    PiStateMissing(&'static str),
    /// A time in `--pi-state` before pi started or after now.
    PiStateTime,
    /// `--cwd` is relative.
    CwdRelative(PathBuf),
    /// `--cwd` is not the folder pi runs in.
    CwdNotPis { given: PathBuf, real: PathBuf },
    /// pi's folder cannot be read from `/proc`.
    CwdUnreadable(i32),
    /// `--root` is not the Intercom root found from pi's folder.
    RootNotPis {
        given: PathBuf,
        found: Option<PathBuf>,
    },
    /// The pid is not an ancestor of this command.
    NotAncestor(i32),
    /// The pid is not a pi this command can trust.
    Untrusted { pid: i32, why: Untrusted },
    /// The pid is gone or its identity cannot be read.
    PiGone(i32),
    /// `--session-file` is not named for `--session-id`.
    SessionFileMisnamed,
    /// `--session-file`'s header names another session.
    SessionFileOtherSession,
    /// `--session-file` cannot be read to check it (the reader's fixed code).
    SessionFileUnverified(&'static str),
    /// Another live pi holds a record of the session (any place a reader looks).
    HeldByOther {
        session: String,
        pid: i32,
        at: PathBuf,
    },
}

/// Why the named pid is not a pi this command can trust.
#[derive(Debug)]
pub(crate) enum Untrusted {
    NotPi(proc::NotPi),
    StateUnreadable,
    OtherGroup,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let quote = |v: &str| crate::text::clip(&crate::text::sanitize(v), 80);
        match self {
            Refusal::SessionId(id) => {
                write!(f, "--session-id {:?} is not a pi session id", quote(id))
            }
            Refusal::LeafIdMissing => f.write_str("--event session_tree needs --leaf-id"),
            Refusal::LeafId(l) => write!(f, "--leaf-id {:?} is not a pi entry id", quote(l)),
            Refusal::LeafIdWithoutTree => {
                f.write_str("--leaf-id goes with --event session_tree only")
            }
            Refusal::PiStateMissing(event) => write!(f, "--event {event} needs --pi-state"),
            Refusal::PiStateTime => {
                f.write_str("--pi-state holds a time before pi started or after now")
            }
            Refusal::CwdRelative(cwd) => write!(
                f,
                "--cwd {:?} is not an absolute path",
                cwd.display().to_string()
            ),
            Refusal::CwdNotPis { given, real } => write!(
                f,
                "--cwd {:?} is not the folder pi runs in ({:?})",
                quote(&given.to_string_lossy()),
                quote(&real.to_string_lossy())
            ),
            Refusal::CwdUnreadable(pid) => {
                write!(f, "the folder pi (pid {pid}) runs in cannot be read")
            }
            Refusal::RootNotPis { given, found } => write!(
                f,
                "--root {:?} is not the Intercom root of the folder pi runs in ({})",
                quote(&given.to_string_lossy()),
                match found {
                    Some(r) => format!("{:?}", quote(&r.to_string_lossy())),
                    None => "none".into(),
                }
            ),
            Refusal::NotAncestor(pid) => write!(
                f,
                "pid {pid} is not an ancestor of this command: it runs only inside the pi it names"
            ),
            Refusal::Untrusted { pid, why } => {
                write!(f, "pid {pid} is not a pi this command can trust: ")?;
                match why {
                    Untrusted::NotPi(e) => e.fmt(f),
                    Untrusted::StateUnreadable => f.write_str("its process state cannot be read"),
                    Untrusted::OtherGroup => f.write_str(
                        "this command was not started by that pi (another process group or session)",
                    ),
                }
            }
            Refusal::PiGone(pid) => write!(f, "pid {pid} is gone or unreadable"),
            Refusal::SessionFileMisnamed => {
                f.write_str("--session-file is not named for --session-id")
            }
            Refusal::SessionFileOtherSession => {
                f.write_str("--session-file's header names another session")
            }
            Refusal::SessionFileUnverified(code) => {
                write!(f, "--session-file cannot be verified ({code})")
            }
            Refusal::HeldByOther { session, pid, at } => write!(
                f,
                "session {} is registered by another live pi (pid {pid}, {}); its record is kept",
                quote(session),
                quote(&at.to_string_lossy())
            ),
        }
    }
}

/// Where this pi is, from the truth (`/proc`), never from a flag: its real folder, the
/// Intercom root found from there when that root's roster names the session, and every root
/// above the folder (a reader there could take a record of the session).
#[derive(Debug, Clone)]
pub(crate) struct Place {
    pub cwd: PathBuf,
    pub intercom_root: Option<PathBuf>,
    pub roots: Vec<PathBuf>,
}

/// Most folders above pi's folder looked at for Intercom roots.
const MAX_ROOT_LEVELS: usize = 64;

/// `Place` of `req`'s pi; `--cwd` and `--root`, when given, must agree with it.
pub(crate) fn place(req: &Request) -> Result<Place, Refusal> {
    let cwd = proc::cwd(req.pi_pid).ok_or(Refusal::CwdUnreadable(req.pi_pid))?;
    if let Some(given) = &req.cwd {
        if !given.is_absolute() {
            return Err(Refusal::CwdRelative(given.clone()));
        }
        if !registrations::same_path(given, &cwd) {
            return Err(Refusal::CwdNotPis {
                given: given.clone(),
                real: cwd,
            });
        }
    }
    // The Intercom root counts only when its config names this session: a pi that merely runs
    // inside a coordinator's folder is not one of its agents.
    let found = crate::evidence::config::discover(&cwd).ok().flatten();
    if let Some(given) = &req.root {
        if !found
            .as_ref()
            .is_some_and(|c| registrations::same_path(given, &c.root))
        {
            return Err(Refusal::RootNotPis {
                given: given.clone(),
                found: found.map(|c| c.root),
            });
        }
    }
    let intercom_root = found
        .filter(|c| c.find_by_session(&req.session_id).is_some())
        .map(|c| c.root);
    let roots = cwd
        .ancestors()
        .take(MAX_ROOT_LEVELS)
        .filter(|d| fsguard::kind(&crate::paths::state_dir(d)) == Ok(fsguard::Kind::Dir))
        .map(Path::to_path_buf)
        .collect();
    Ok(Place {
        cwd,
        intercom_root,
        roots,
    })
}

/// Where this session's registration lives: an existing record of it stays where it is (so a
/// session added to the roster mid-run keeps one record, not two); a new one goes under the
/// Intercom root when that root configures the session, else under the data root.
pub(crate) fn registration_path(req: &Request, at: &Place) -> (PathBuf, PathBuf) {
    let in_data = (
        req.data_root.clone(),
        registrations::data_record(&req.data_root, &req.session_id),
    );
    let Some(root) = &at.intercom_root else {
        return in_data;
    };
    let in_root = (
        root.clone(),
        registrations::root_record(root, &req.session_id),
    );
    let exists = |p: &Path| fsguard::kind(p).is_ok();
    if !exists(&in_root.1) && exists(&in_data.1) {
        in_data
    } else {
        in_root
    }
}

fn validate(req: &Request) -> Result<(), RegisterError> {
    let id = &req.session_id;
    if id.trim().is_empty() || id.len() > 256 || id.chars().any(char::is_control) {
        return Err(RegisterError::Refused(Refusal::SessionId(id.clone())));
    }
    let leaf_ok = |l: &str| {
        !l.is_empty() && l.len() <= 64 && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
    };
    const TREE: Event = Event::Run(RunEvent::SessionTree);
    match (&req.leaf_id, req.event) {
        (Some(l), TREE) if leaf_ok(l) => {}
        (None, TREE) => return Err(RegisterError::Refused(Refusal::LeafIdMissing)),
        (Some(l), TREE) => return Err(RegisterError::Refused(Refusal::LeafId(l.clone()))),
        (Some(_), _) => return Err(RegisterError::Refused(Refusal::LeafIdWithoutTree)),
        (None, _) => {}
    }
    if let (Event::Pi(e), None) = (req.event, &req.pi_state) {
        return Err(RegisterError::Refused(Refusal::PiStateMissing(e.name())));
    }
    verify_caller(req.pi_pid).map_err(RegisterError::Refused)?;
    verify_session_file(req)
}

/// The one rule for "this command was run by that pi itself" (`register`, and the
/// coordinator's tools, `tools::caller`): `pi` is an ancestor of this process, really pi, and
/// started this command in its own process group and session (see `verify_pi`).
pub(crate) fn verify_caller(pi: i32) -> Result<(), Refusal> {
    let me = std::process::id() as i32;
    if pi <= 1 || !proc::is_ancestor(pi, me) {
        return Err(Refusal::NotAncestor(pi));
    }
    verify_pi(pi, me)
}

/// The pi named must really be pi (its executable and command line, `proc::pi_verdict`; or
/// intercom-pane's own simulated pi, `demo-agent`), and this command must have been started by
/// that pi itself: in its process group and session. The shipped extension's spawn is; a shell
/// in another pane, a job of the same terminal, or anything pi's bash tool or `!` runs (pi
/// starts those detached, in a session of their own) is not.
fn verify_pi(pi: i32, me: i32) -> Result<(), Refusal> {
    let refuse = |why: Untrusted| Refusal::Untrusted { pid: pi, why };
    if !is_demo_agent(pi) {
        proc::is_pi(pi).map_err(|e| refuse(Untrusted::NotPi(e)))?;
    }
    let (Some(p), Some(m)) = (proc::read_stat(pi), proc::read_stat(me)) else {
        return Err(refuse(Untrusted::StateUnreadable));
    };
    if (p.pgrp, p.session) != (m.pgrp, m.session) {
        return Err(refuse(Untrusted::OtherGroup));
    }
    Ok(())
}

/// intercom-pane's simulated pi (`intercom-pane demo-agent`, the same binary as this command).
fn is_demo_agent(pid: i32) -> bool {
    let same_exe = match (proc::exe(pid), std::env::current_exe()) {
        (Some(a), Ok(b)) => a == b,
        _ => false,
    };
    same_exe
        && proc::cmdline(pid).is_some_and(|a| a.get(1).map(String::as_str) == Some("demo-agent"))
}

/// The session must be the one pi names: a `--session-file` is pi's own name for it
/// (`<time>_<sessionId>.jsonl`), and once pi has written it (pi writes nothing before the first
/// prompt), its header names the same session.
fn verify_session_file(req: &Request) -> Result<(), RegisterError> {
    let Some(file) = &req.session_file else {
        return Ok(());
    };
    let suffix = format!("_{}.jsonl", req.session_id);
    let named = file
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with(&suffix));
    if !named {
        return Err(RegisterError::Refused(Refusal::SessionFileMisnamed));
    }
    match crate::evidence::sessions::read_session(file) {
        Ok(s) if s.session_id == req.session_id => Ok(()),
        Ok(_) => Err(RegisterError::Refused(Refusal::SessionFileOtherSession)),
        // Not written yet (or being created): nothing contradicts the claim.
        Err(
            crate::evidence::sessions::SessionError::Fs(fsguard::FsError::NotFound)
            | crate::evidence::sessions::SessionError::Empty,
        ) => Ok(()),
        Err(e) => Err(RegisterError::Refused(Refusal::SessionFileUnverified(
            e.code(),
        ))),
    }
}

/// The pane that holds pi now, as the record's `mux`. At `session_start`, and on Herdr at every
/// event: a Herdr pane moved to another workspace gets a new id, one moved to another tab keeps
/// its id in another tab, so the recorded pane is asked first (three requests while pi stays
/// put) and else the server is listed. A tmux pane keeps its id wherever it moves, so later
/// events keep what `session_start` found (no tmux client started per event); the board and
/// every action follow pi by its process anyway. `None`: look up nothing new.
fn current_mux(
    env: &MuxEnv,
    pid: i32,
    recorded: Option<&MuxRecord>,
    event: Event,
) -> Option<MuxRecord> {
    let deadline = Instant::now() + MUX_DEADLINE;
    if let Some(m) = recorded.filter(|_| event != Event::Run(RunEvent::SessionStart)) {
        // A pane that keeps its id wherever it moves (tmux) is not looked up again.
        let kind = m.kind.filter(|k| !k.caps().stable_pane_ids)?;
        if let Some(socket) = m.socket.as_deref() {
            let server = mux::open(kind, Path::new(socket));
            if let Ok(Some(o)) =
                mux::follow_pane(server.as_ref(), m.pane_id.as_deref(), pid, deadline)
            {
                return Some(owner_record(o));
            }
        }
    }
    mux::owning_multiplexer(pid, env, deadline).map(owner_record)
}

fn owner_record(owner: mux::Owner) -> MuxRecord {
    let (server_pid, server_start) = match &owner.server {
        ServerIdentity::Tmux {
            server_pid,
            start_time,
            ..
        } => (Some(i64::from(*server_pid)), Some(*start_time)),
        _ => (None, None),
    };
    MuxRecord {
        kind: Some(owner.kind),
        socket: Some(owner.socket_path.display().to_string()),
        server_pid,
        server_start,
        session: owner.pane.session_name,
        session_id: Some(owner.pane.session_id),
        window_id: Some(owner.pane.window_id),
        pane_id: Some(owner.pane.id),
        terminal_id: owner.pane.terminal_id,
    }
}

fn lock_path(path: &Path) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(".lock");
    PathBuf::from(p)
}

fn acquire(path: &Path) -> Result<store::Lock, RegisterError> {
    let until = Instant::now() + LOCK_WAIT;
    loop {
        match store::Lock::acquire(path) {
            Ok(l) => return Ok(l),
            Err(e) if e.code == store::code::StoreCode::Locked && Instant::now() < until => {
                std::thread::sleep(LOCK_POLL)
            }
            Err(e) => return Err(RegisterError::Failed(e.to_string())),
        }
    }
}

/// Record `req`. Returns the path written, or `None` when a newer event was already recorded.
pub(crate) fn register(
    req: &Request,
    env: &MuxEnv,
    now: Ms,
) -> Result<Option<PathBuf>, RegisterError> {
    validate(req)?;
    let at = place(req).map_err(RegisterError::Refused)?;
    let id =
        proc::identity(req.pi_pid).ok_or(RegisterError::Refused(Refusal::PiGone(req.pi_pid)))?;
    let (base, path) = registration_path(req, &at);
    let dir = path.parent().unwrap_or(&base).to_path_buf();
    store::ensure_dir(&base, &dir).map_err(|e| RegisterError::Failed(e.to_string()))?;
    let _lock = acquire(&lock_path(&path))?;
    held_elsewhere(req, &at, &id)?;

    // The previous record of the same process incarnation, if any: its newer parts win.
    let previous = read_previous(&path).filter(|p| p.is_process(&id));
    let Some((run_state, pi)) = newest_parts(req, previous.as_ref(), now) else {
        return Ok(None);
    };
    let started = crate::proc::started_at_ms(id.start_ticks);
    if let Some(st) = &req.pi_state {
        let late = started.unwrap_or(Ms::MIN).saturating_sub(PI_STATE_SKEW_MS);
        if st
            .times()
            .iter()
            .any(|t| *t < late || *t > now + PI_STATE_SKEW_MS)
        {
            return Err(RegisterError::Refused(Refusal::PiStateTime));
        }
    }
    let mut rec = Registration::new(path.clone());
    rec.seat = Some(crate::actions::short_id(&req.session_id));
    rec.harness = Some("pi".into());
    rec.session_id = Some(req.session_id.clone());
    rec.session_file = req.session_file.as_ref().map(|p| p.display().to_string());
    rec.sessions_dir = req.sessions_dir.as_ref().map(|p| p.display().to_string());
    rec.cwd = Some(at.cwd.display().to_string());
    rec.pid = Some(id.pid);
    rec.start_ticks = Some(id.start_ticks);
    rec.boot_id = Some(id.boot_id.clone());
    rec.started_at = Some(started.unwrap_or(now));
    // Where pi is now (on Herdr followed at every event: `current_mux`); a lookup that finds no
    // pane keeps what the last event of this process recorded.
    let recorded = previous.as_ref().and_then(|p| p.mux.as_ref());
    rec.mux = current_mux(env, id.pid, recorded, req.event).or_else(|| recorded.cloned());
    rec.channel = req.channel.as_ref().map(|p| p.display().to_string());
    rec.run_state = run_state;
    rec.pi = pi;
    let rec = rec
        .validate()
        .map_err(|e| RegisterError::Failed(format!("the record is invalid ({e:?})")))?;
    let bytes = rec
        .to_bytes()
        .map_err(|e| RegisterError::Failed(e.to_string()))?;
    store::write_atomic(&path, &bytes).map_err(|e| RegisterError::Failed(e.to_string()))?;
    if req.event == Event::Run(RunEvent::SessionStart) {
        record_launch(req, &at, &rec, now);
    }
    Ok(Some(path))
}

/// A roster agent's pi that registers its start with its arguments gets a launch record in the
/// data root (`launch_spec::from_registration`: never over one a command wrote), so `restore`
/// can start a coordinator or worker the person started by hand. Best effort.
fn record_launch(req: &Request, at: &Place, rec: &Registration, now: Ms) {
    let (Some(root), Some(args)) = (&at.intercom_root, &req.pi_args) else {
        return;
    };
    let Some(pid) = rec.pid else { return };
    let name = crate::evidence::config::load(root)
        .ok()
        .and_then(|c| c.find_by_session(&req.session_id).map(|a| a.name.clone()))
        .unwrap_or_else(|| crate::actions::short_id(&req.session_id));
    let mut env: Vec<(String, String)> =
        proc::environ(pid, &crate::actions::launch_spec::PASSED_ENV)
            .map(|m| m.into_iter().collect())
            .unwrap_or_default();
    env.sort();
    let placement = rec.mux.as_ref().and_then(|m| {
        Some(crate::actions::launch_spec::Placement {
            multiplexer: m.kind?,
            kind: m.kind?.caps().window_word.into(),
            socket: PathBuf::from(m.socket.as_deref()?),
        })
    });
    crate::actions::launch_spec::from_registration(
        Some(root),
        &req.data_root,
        &crate::actions::launch_spec::Registered {
            session_id: &req.session_id,
            name: &name,
            pi_args: args,
            cwd: &at.cwd,
            env,
            model: req.model.as_deref(),
            pane: rec.mux.as_ref().and_then(|m| m.pane_id.as_deref()),
            placement,
            at: crate::clock::format_iso(now),
        },
    );
}

/// The record's run state and `pi` section after `req`: each part is replaced only by a newer
/// sequence number than the one recorded by the same process. `None` when `req` is older than
/// both (nothing to write).
fn newest_parts(
    req: &Request,
    previous: Option<&Registration>,
    now: Ms,
) -> Option<(Option<RunRecord>, Option<PiReport>)> {
    let old_run = previous.and_then(|p| p.run_state.clone());
    let old_pi = previous.and_then(|p| p.pi.clone());
    let run = match req.event {
        Event::Run(e) if old_run.as_ref().is_none_or(|r| r.seq < req.seq) => Some(RunRecord {
            state: e.run_state(),
            seq: req.seq,
            at: now,
            event: Some(e),
            leaf_id: req.leaf_id.clone(),
        }),
        _ => None,
    };
    let pi = match &req.pi_state {
        Some(st) if old_pi.as_ref().is_none_or(|p| p.seq < req.seq) => Some(PiReport {
            seq: req.seq,
            at: now,
            event: Some(req.event),
            state: st.clone(),
        }),
        _ => None,
    };
    if run.is_none() && pi.is_none() {
        return None;
    }
    Some((run.or(old_run), pi.or(old_pi)))
}

fn read_previous(path: &Path) -> Option<Registration> {
    registrations::read_path(path)
}

/// One live registration per session: any record of it, wherever a reader could take it (every
/// Intercom root above pi's folder, every layout under the data root), that another live
/// process holds refuses this one. A record whose pi recorded the end of the session
/// (`/new`, `/resume`, quit) holds nothing.
fn held_elsewhere(req: &Request, at: &Place, id: &proc::ProcIdentity) -> Result<(), RegisterError> {
    let records = registrations::records_of_session(&at.roots, &req.data_root, &req.session_id);
    match records
        .iter()
        .find(|r| !r.is_process(id) && !r.session_closed() && r.alive() == Some(true))
    {
        Some(r) => Err(RegisterError::Refused(Refusal::HeldByOther {
            session: req.session_id.clone(),
            pid: r.pid.unwrap_or(0),
            at: r.path.clone(),
        })),
        None => Ok(()),
    }
}
