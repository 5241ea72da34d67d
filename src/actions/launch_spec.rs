//! A worker's launch spec: how `spawn` started its pi — the arguments after the program, the
//! folder, the names and values of an allowlist of environment variables, where its window went
//! — so `resume-worker` starts it again the same way (docs/behaviour.md §10, docs/interop.md §4).
//!
//! Why a private file under `<root>/.pi-intercom/workers/` and not the roster: `config.json` is
//! shared and kept in source control, and public fields never receive machine-local data (PATH,
//! agent folders, sockets). Why there and not under the data root: it belongs to this roster's
//! worker (same root, same lifetime; `retire` keeps it with the rest), and a `--config` naming
//! another data root must not make resume forget how the worker was started. The file is ours,
//! mode 0600, read only when it is a regular file owned by this user and not writable by others
//! (it says what runs), at most 64 KiB, typed (serde, unknown keys refused).
//!
//! A copy of every spec is kept in the data root too (`<dataRoot>/launches/<hash>.json`, written
//! with it), and a pi the person started by hand gets one there from its registration
//! (`from_registration`). Why: the data root is this user's alone and outside the project, so
//! a spec edited in the project no longer agrees with its copy and is refused (`read`), and a
//! coordinator started the README's way, which no command launched, can still be restored with
//! its folder, environment and flags. A record only the data root holds is used as it is.
//!
//! The same file is spawn's note while it works: `stage` says how far the last spawn got, so a
//! spawn that died or whose pi never registered is explained, and the next `spawn` of that name
//! picks it up instead of being blocked by it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::fsguard;
use crate::mux::{valid_env_name, MuxKind};
use crate::paths;
use crate::store;

/// Largest launch spec read.
const SPEC_CAP: u64 = 64 * 1024;
/// Most arguments recorded (model, thinking, the person's extra arguments).
pub(crate) const MAX_ARGS: usize = 64;
/// Longest single argument.
pub(crate) const MAX_ARG_BYTES: usize = 4096;

/// The environment a launched pi gets from the command that launches it (and that a spec
/// records): where pi and node are (PATH), which agent and session folders pi uses, whether it
/// stays offline (`PI_OFFLINE`: no helper-tool downloads), and the system config its extension
/// passes on as `--config`. Nothing else is recorded: no keys or tokens. `INTERCOM_PANE_BIN` is
/// always the binary doing the launch, never a recorded one.
pub(crate) const PASSED_ENV: [&str; 5] = [
    "PATH",
    "PI_CODING_AGENT_DIR",
    "PI_CODING_AGENT_SESSION_DIR",
    "PI_OFFLINE",
    "INTERCOM_PANE_CONFIG",
];

/// How far a spawn got (each stage is written before the step it names is taken).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Stage {
    /// Checked, nothing else yet (a worktree may be being created, the roster entry added).
    Reserved,
    /// The roster names the worker; its window is being opened.
    Launching,
    /// The window opened (`pane`); the pi has not registered from it yet.
    Launched,
    /// The pi registered from its window: the spawn is done.
    Registered,
}

impl Stage {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Stage::Reserved => "reserved",
            Stage::Launching => "launching",
            Stage::Launched => "launched",
            Stage::Registered => "registered",
        }
    }
}

/// The git worktree a spawn created for the worker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Worktree {
    pub path: PathBuf,
    pub branch: String,
    /// The branch was created by this spawn (else it existed and was only checked out).
    pub created_branch: bool,
    /// The commit the worktree started from.
    pub base: String,
}

/// Where the window went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Placement {
    pub multiplexer: MuxKind,
    /// `window` (tmux) or `tab` (Herdr), beside the coordinator's pane, without focus.
    pub kind: String,
    pub socket: PathBuf,
}

/// One worker's launch spec.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct LaunchSpec {
    /// Always 1.
    pub version: u32,
    pub session_id: String,
    pub name: String,
    /// pi's arguments after the program: `--session-id <id>`, the model and thinking flags, the
    /// person's extra arguments.
    pub args: Vec<String>,
    pub cwd: PathBuf,
    /// (name, value) of the `PASSED_ENV` variables set when it was launched.
    pub env: Vec<(String, String)>,
    pub placement: Option<Placement>,
    pub worktree: Option<Worktree>,
    pub stage: Stage,
    /// The pane (tmux `%N`, Herdr pane id) of the last launch.
    pub pane: Option<String>,
    pub created_at: String,
    pub updated_at: String,
    /// What the last spawn or resume said about it (a launch that never registered, …).
    pub note: Option<String>,
    /// The pi program it was started with (`--pi`: a name on PATH or a path), so `restore`
    /// starts the same one; absent in specs written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
    /// The model the pi said it ran when the record was made from its registration (for people:
    /// a restart passes only `args`, and pi takes the session's model back from its file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// Why a spec could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SpecError {
    /// There is none (the worker was not started by `spawn`).
    Missing,
    /// It exists and cannot be used (why).
    Unusable(String),
}

impl std::fmt::Display for SpecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SpecError::Missing => f.write_str("no launch spec"),
            SpecError::Unusable(why) => write!(f, "launch spec unusable: {why}"),
        }
    }
}

impl std::error::Error for SpecError {}

/// Why what a launch spec says could not be launched.
#[derive(Debug, Clone, PartialEq, Eq)]
enum NotLaunchable {
    Version(u32),
    OtherSession,
    BadSessionId,
    RelativeFolder,
    Args,
    BindsAnother,
    Program,
    Env,
}

impl std::fmt::Display for NotLaunchable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            NotLaunchable::Version(v) => return write!(f, "version {v} (want 1)"),
            NotLaunchable::OtherSession => "it names another session",
            NotLaunchable::BadSessionId => "its session id is not one pi takes",
            NotLaunchable::RelativeFolder => "its folder is not absolute",
            NotLaunchable::Args => "its arguments are too many, too long or hold NUL",
            NotLaunchable::BindsAnother => "its arguments name another session (or a session flag)",
            NotLaunchable::Program => "its program is not one to run",
            NotLaunchable::Env => "its environment names a variable outside the allowlist",
        })
    }
}

impl LaunchSpec {
    /// Whether what the file says could be launched: the shape `spawn` writes.
    fn check(&self, session_id: &str) -> Result<(), NotLaunchable> {
        if self.version != 1 {
            return Err(NotLaunchable::Version(self.version));
        }
        if self.session_id != session_id {
            return Err(NotLaunchable::OtherSession);
        }
        if !valid_session_id(&self.session_id) {
            return Err(NotLaunchable::BadSessionId);
        }
        if !self.cwd.is_absolute() {
            return Err(NotLaunchable::RelativeFolder);
        }
        if self.args.len() > MAX_ARGS
            || self
                .args
                .iter()
                .any(|a| a.len() > MAX_ARG_BYTES || a.contains('\0'))
        {
            return Err(NotLaunchable::Args);
        }
        if !binds_only_its_session(&self.args, &self.session_id) {
            return Err(NotLaunchable::BindsAnother);
        }
        if self
            .program
            .as_deref()
            .is_some_and(|p| p.is_empty() || p.starts_with('-') || p.contains(['\0', '\n']))
        {
            return Err(NotLaunchable::Program);
        }
        let bad_env = self.env.iter().any(|(k, v)| {
            !valid_env_name(k) || !PASSED_ENV.contains(&k.as_str()) || v.contains('\0')
        });
        if bad_env {
            return Err(NotLaunchable::Env);
        }
        Ok(())
    }
}

/// The arguments bind pi to `session_id` and to nothing else: `--session-id <id>` (or
/// `--session-id=<id>`) at most once, naming it, and no other flag that picks or leaves a session
/// (`--session <file>`, `--fork`, `--continue`, …: an edited spec must not move the worker to
/// another session's file).
fn binds_only_its_session(args: &[String], session_id: &str) -> bool {
    let mut seen = 0;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        // The rule spawn applies to the person's arguments: a flag is what precedes any `=`.
        let (flag, value) = match a.split_once('=') {
            Some((f, v)) => (f, Some(v)),
            None => (a.as_str(), None),
        };
        if flag == "--session-id" {
            let v = value.or_else(|| it.next().map(String::as_str));
            seen += 1;
            if v != Some(session_id) || seen > 1 {
                return false;
            }
        } else if crate::actions::spawn::SESSION_FLAGS.contains(&flag) {
            return false;
        }
    }
    true
}

/// A session id pi's `--session-id` takes: letters, digits, `.`, `_`, `-`, starting and ending
/// with a letter or digit (pi 1.6.0's rule), at most 256 characters.
pub(crate) fn valid_session_id(id: &str) -> bool {
    let b = id.as_bytes();
    (1..=256).contains(&b.len())
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-'))
        && b.first().is_some_and(u8::is_ascii_alphanumeric)
        && b.last().is_some_and(u8::is_ascii_alphanumeric)
}

/// The launch spec of the agent with `session_id`: the project's and the data root's copy, which
/// must agree on what runs (program, arguments, folder, environment) when both exist — a spec
/// edited in one place only is refused —, else whichever exists.
pub(crate) fn read(
    root: &Path,
    data_root: &Path,
    session_id: &str,
) -> Result<LaunchSpec, SpecError> {
    // Each copy checked on its own first: its own fault is the clearer word.
    let checked = |r: Result<LaunchSpec, SpecError>| {
        let s = r?;
        s.check(session_id)
            .map_err(|why| SpecError::Unusable(why.to_string()))?;
        Ok(s)
    };
    let own = checked(load(&paths::launch_spec(root, session_id)));
    let copy = checked(load(&paths::launch_record(data_root, session_id)));
    let spec = match (own, copy) {
        (Err(SpecError::Missing), Err(SpecError::Missing)) => return Err(SpecError::Missing),
        (Err(e @ SpecError::Unusable(_)), _) | (_, Err(e @ SpecError::Unusable(_))) => {
            return Err(e)
        }
        (Ok(s), Err(SpecError::Missing)) | (Err(SpecError::Missing), Ok(s)) => s,
        (Ok(s), Ok(c)) => {
            if !s.runs_as(&c) {
                return Err(SpecError::Unusable(format!(
                    "it does not agree with its copy in the data root ({}): one of them was edited",
                    paths::launch_record(data_root, session_id).display()
                )));
            }
            s
        }
    };
    Ok(spec)
}

/// The project's spec alone, for a reader that only wants its folder and worktree (`review`):
/// nothing is started from it.
pub(crate) fn read_project(root: &Path, session_id: &str) -> Result<LaunchSpec, SpecError> {
    let spec = load(&paths::launch_spec(root, session_id))?;
    spec.check(session_id)
        .map_err(|why| SpecError::Unusable(why.to_string()))?;
    Ok(spec)
}

/// The spec in `path`: a regular file of this user that others cannot write, ≤ 64 KiB, typed.
fn load(path: &Path) -> Result<LaunchSpec, SpecError> {
    let unusable = |why: String| SpecError::Unusable(why);
    let f = match fsguard::open_regular(path, Some(SPEC_CAP)) {
        Ok(f) => f,
        Err(fsguard::FsError::NotFound) => return Err(SpecError::Missing),
        Err(e) => return Err(unusable(e.code().into())),
    };
    if f.uid != nix::unistd::Uid::current().as_raw() || f.mode & 0o022 != 0 {
        return Err(unusable(
            "not owned by this user, or writable by others".into(),
        ));
    }
    let bytes =
        fsguard::read_at(&f.file, 0, SPEC_CAP as usize).map_err(|e| unusable(e.code().into()))?;
    serde_json::from_slice(&bytes).map_err(|e| unusable(format!("not a launch spec ({e})")))
}

/// Write (replace) the spec, mode 0600, in the project and its copy in the data root.
pub(crate) fn write(
    root: &Path,
    data_root: &Path,
    spec: &LaunchSpec,
) -> Result<(), store::StoreError> {
    let dir = paths::workers_dir(root);
    store::ensure_dir(root, &dir)?;
    let bytes = serde_json::to_vec_pretty(spec).map_err(|e| store::StoreError {
        code: store::code::StoreCode::EncodeFailed,
        path: dir.clone(),
        detail: e.to_string(),
    })?;
    write_copy(data_root, &spec.session_id, &bytes)?;
    store::write_atomic(&paths::launch_spec(root, &spec.session_id), &bytes)
}

/// Remove the spec and its copy (a spawn undone, a worker retired: its archive keeps it).
pub(crate) fn remove(root: &Path, data_root: &Path, session_id: &str) {
    let _ = store::remove_file(&paths::launch_spec(root, session_id));
    let _ = store::remove_file(&paths::launch_record(data_root, session_id));
}

/// The data root's copy alone.
fn write_copy(data_root: &Path, session_id: &str, bytes: &[u8]) -> Result<(), store::StoreError> {
    let path = paths::launch_record(data_root, session_id);
    if let Some(dir) = path.parent() {
        store::ensure_dir(data_root, dir)?;
    }
    store::write_atomic(&path, bytes)
}

impl LaunchSpec {
    /// Whether `other` starts the same pi the same way.
    fn runs_as(&self, other: &LaunchSpec) -> bool {
        self.session_id == other.session_id
            && self.args == other.args
            && self.cwd == other.cwd
            && self.env == other.env
            && self.program == other.program
    }
}

/// What a pi started by hand tells of its start when it registers (`register` at
/// `session_start`): its arguments as pi got them (the extension passes `process.argv`: pi
/// hides them from `/proc` once it names its process), the folder and environment `/proc` shows,
/// and the model it runs.
pub(crate) struct Registered<'a> {
    pub session_id: &'a str,
    pub name: &'a str,
    pub pi_args: &'a [String],
    pub cwd: &'a Path,
    pub env: Vec<(String, String)>,
    pub model: Option<&'a str>,
    pub pane: Option<&'a str>,
    pub placement: Option<Placement>,
    pub at: String,
}

/// pi flags a registration's record keeps, with whether each takes a value: those that say how
/// pi runs. Everything else is left out — a session flag would move it to another session, a
/// message or `@file` would be sent again, and an unknown flag's value cannot be told from a
/// message.
const KEPT_FLAGS: [(&str, bool); 12] = [
    ("--model", true),
    ("--provider", true),
    ("--thinking", true),
    ("--models", true),
    ("--extension", true),
    ("-e", true),
    ("--tools", true),
    ("--skill", true),
    ("--no-tools", false),
    ("--no-extensions", false),
    ("--no-skills", false),
    ("--verbose", false),
];

/// The arguments of `pi_args` a restart repeats (`KEPT_FLAGS`), after `--session-id <id>`.
pub(crate) fn kept_args(pi_args: &[String], session_id: &str) -> Vec<String> {
    let mut out = vec!["--session-id".to_string(), session_id.to_string()];
    let mut it = pi_args.iter().take(MAX_ARGS * 4);
    while let Some(a) = it.next() {
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v)),
            _ => (a.as_str(), None),
        };
        let Some((_, takes)) = KEPT_FLAGS.iter().find(|(f, _)| *f == flag) else {
            continue;
        };
        let value = if *takes && inline.is_none() {
            match it.next() {
                Some(v) => Some(v.as_str()),
                None => break,
            }
        } else {
            None
        };
        let ok = |s: &str| s.len() <= MAX_ARG_BYTES && !s.contains('\0');
        if !ok(a) || value.is_some_and(|v| !ok(v)) || out.len() + 2 > MAX_ARGS {
            continue;
        }
        out.push(a.clone());
        out.extend(value.map(str::to_string));
    }
    out
}

/// Record in the data root how a pi started by hand runs, from its registration — unless a
/// command that launched it recorded it (a spec in the project, or a copy not made from a
/// registration): that record says more and stays. Best effort; nothing is written when the
/// record would not read back as usable.
pub(crate) fn from_registration(root: Option<&Path>, data_root: &Path, r: &Registered) {
    let path = paths::launch_record(data_root, r.session_id);
    if root.is_some_and(|root| paths::launch_spec(root, r.session_id).exists()) {
        return;
    }
    match load(&path) {
        Ok(s) if s.note.as_deref() != Some(FROM_REGISTRATION) => return,
        Err(SpecError::Unusable(_)) => return,
        _ => {}
    }
    let spec = LaunchSpec {
        version: 1,
        session_id: r.session_id.to_string(),
        name: r.name.to_string(),
        args: kept_args(r.pi_args, r.session_id),
        cwd: r.cwd.to_path_buf(),
        env: r.env.clone(),
        placement: r.placement.clone(),
        worktree: None,
        stage: Stage::Registered,
        pane: r.pane.map(str::to_string),
        created_at: r.at.clone(),
        updated_at: r.at.clone(),
        note: Some(FROM_REGISTRATION.into()),
        program: None,
        model: r.model.map(|m| m.chars().take(200).collect()),
    };
    if spec.check(r.session_id).is_err() {
        return;
    }
    if let Ok(bytes) = serde_json::to_vec_pretty(&spec) {
        let _ = write_copy(data_root, r.session_id, &bytes);
    }
}

/// The note of a record made from a registration (a later registration may replace it).
pub(crate) const FROM_REGISTRATION: &str = "recorded from its registration (started by hand)";

/// Every spec in the folder (at most `MAX_AGENTS * 4` looked at): for a spawn looking for an
/// earlier, unfinished reservation of a name whose roster entry was never written.
pub(crate) fn all(root: &Path, data_root: &Path) -> Vec<LaunchSpec> {
    let dir = paths::workers_dir(root);
    let Ok(list) = fsguard::list_dir(&dir, crate::evidence::config::MAX_AGENTS * 4) else {
        return Vec::new();
    };
    list.entries
        .iter()
        .filter(|e| e.kind == fsguard::Kind::File)
        .filter_map(|e| e.name_str().and_then(|n| n.strip_suffix(".json")))
        .filter_map(|stem| {
            let spec = load(&dir.join(format!("{stem}.json"))).ok()?;
            // Only a usable file named for its own session id counts.
            let own = paths::short_id(&spec.session_id) == stem;
            own.then(|| read(root, data_root, &spec.session_id).ok())
                .flatten()
        })
        .collect()
}

/// The environment to record and pass: the allowlisted variables this process has, and
/// `INTERCOM_PANE_CONFIG` when this command was given `--config` (the same data root the
/// command reads; never inherited, so the new pi registers where this command looks).
pub(crate) fn current_env(system_config: Option<&Path>) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = PASSED_ENV
        .iter()
        .filter(|k| **k != "INTERCOM_PANE_CONFIG")
        .filter_map(|k| std::env::var(k).ok().map(|v| (k.to_string(), v)))
        .collect();
    if let Some(c) = system_config {
        env.push((
            "INTERCOM_PANE_CONFIG".into(),
            c.to_string_lossy().into_owned(),
        ));
    }
    env
}

/// pi's arguments for a resume: `args` with `--session-id <id>` (or `--session-id=<id>`)
/// replaced by `--session <file>`, in its place; every other argument as recorded.
pub(crate) fn with_session_file(args: &[String], file: &Path) -> Vec<String> {
    let file = file.to_string_lossy().into_owned();
    let mut out = Vec::with_capacity(args.len() + 2);
    let mut replaced = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--session-id" {
            it.next();
        } else if !a.starts_with("--session-id=") {
            out.push(a.clone());
            continue;
        }
        if !replaced {
            out.push("--session".into());
            out.push(file.clone());
            replaced = true;
        }
    }
    if !replaced {
        out.splice(0..0, ["--session".to_string(), file]);
    }
    out
}

/// pi's arguments and environment for a start on `session_file`: with a spec, its arguments
/// with `--session-id <id>` replaced by `--session <file>` (`with_session_file`) and its
/// environment (`INTERCOM_PANE_CONFIG` replaced by `system_config` when given, so the new pi
/// registers where the command waits); without one, `--session <file>` and this process's
/// allowlisted environment (`current_env`).
pub(crate) fn start_on(
    spec: Option<&LaunchSpec>,
    session_file: &Path,
    system_config: Option<&Path>,
) -> (Vec<String>, Vec<(String, String)>) {
    let Some(s) = spec else {
        let args = vec![
            "--session".to_string(),
            session_file.to_string_lossy().into_owned(),
        ];
        return (args, current_env(system_config));
    };
    let mut env = s.env.clone();
    if let Some(c) = system_config {
        env.retain(|(k, _)| k != "INTERCOM_PANE_CONFIG");
        env.push((
            "INTERCOM_PANE_CONFIG".into(),
            c.to_string_lossy().into_owned(),
        ));
    }
    (with_session_file(&s.args, session_file), env)
}

/// One start by `resume-worker` or `restore`, as its launch record keeps it.
pub(crate) struct Start<'a> {
    pub session_id: &'a str,
    pub name: &'a str,
    /// Program and arguments as launched (`--session <file>` in place of `--session-id`).
    pub argv: &'a [String],
    pub cwd: &'a Path,
    /// The environment passed (`INTERCOM_PANE_BIN` is not kept: every launch sets its own).
    pub env: &'a [(String, String)],
    pub multiplexer: MuxKind,
    pub socket: &'a Path,
    pub pane: &'a str,
    pub registered: bool,
    pub at: String,
}

/// Record a start: the spec it followed (`earlier`) with its new pane, server and stage; or,
/// for an agent that had none, one that says what it was started with (its session by id, so a
/// later resume or restore checks the file again). Returns the spec's path.
pub(crate) fn record_start(
    root: &Path,
    data_root: &Path,
    earlier: Option<&LaunchSpec>,
    s: &Start,
) -> Result<PathBuf, store::StoreError> {
    let mut spec = earlier.cloned().unwrap_or_else(|| {
        let mut args = vec!["--session-id".to_string(), s.session_id.to_string()];
        // The arguments after `--session <file>` (none for a plain `pi --session <file>`).
        let mut it = s.argv.iter().skip(1);
        while let Some(a) = it.next() {
            if a == "--session" {
                it.next();
            } else {
                args.push(a.clone());
            }
        }
        LaunchSpec {
            version: 1,
            session_id: s.session_id.to_string(),
            name: s.name.to_string(),
            args,
            cwd: s.cwd.to_path_buf(),
            env: s
                .env
                .iter()
                .filter(|(k, _)| PASSED_ENV.contains(&k.as_str()))
                .cloned()
                .collect(),
            placement: None,
            worktree: None,
            stage: Stage::Launched,
            pane: None,
            created_at: s.at.clone(),
            updated_at: s.at.clone(),
            note: None,
            program: s.argv.first().cloned(),
            model: None,
        }
    });
    spec.placement = Some(Placement {
        multiplexer: s.multiplexer,
        kind: s.multiplexer.caps().window_word.into(),
        socket: s.socket.to_path_buf(),
    });
    spec.stage = if s.registered {
        Stage::Registered
    } else {
        Stage::Launched
    };
    spec.pane = Some(s.pane.to_string());
    spec.updated_at = s.at.clone();
    spec.note = (!s.registered).then(|| {
        format!(
            "started in {} at {}; no registration from it yet",
            s.pane, s.at
        )
    });
    write(root, data_root, &spec)?;
    Ok(paths::launch_spec(root, s.session_id))
}

/// `env` with `INTERCOM_PANE_BIN` set to this binary, as every launch passes it.
pub(crate) fn with_this_binary(mut env: Vec<(String, String)>) -> Vec<(String, String)> {
    env.retain(|(k, _)| k != "INTERCOM_PANE_BIN");
    if let Ok(exe) = std::env::current_exe() {
        env.push((
            "INTERCOM_PANE_BIN".into(),
            exe.to_string_lossy().into_owned(),
        ));
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn spec() -> LaunchSpec {
        LaunchSpec {
            version: 1,
            session_id: "s1".into(),
            name: "W".into(),
            args: vec![
                "--session-id".into(),
                "s1".into(),
                "--model".into(),
                "m".into(),
            ],
            cwd: PathBuf::from("/tmp"),
            env: vec![("PATH".into(), "/bin".into())],
            placement: None,
            worktree: None,
            stage: Stage::Launched,
            pane: Some("%3".into()),
            created_at: "2026-11-29T23:00:00.000Z".into(),
            updated_at: "2026-11-29T23:00:00.000Z".into(),
            note: None,
            program: Some("pi".into()),
            model: None,
        }
    }

    #[test]
    fn a_resume_opens_the_verified_file_with_every_other_argument_kept() {
        let f = Path::new("/s/x_s1.jsonl");
        let a = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            with_session_file(&a(&["--session-id", "s1", "--model", "m"]), f),
            a(&["--session", "/s/x_s1.jsonl", "--model", "m"])
        );
        assert_eq!(
            with_session_file(&a(&["--thinking", "low", "--session-id=s1"]), f),
            a(&["--thinking", "low", "--session", "/s/x_s1.jsonl"])
        );
        assert_eq!(
            with_session_file(&a(&["--model", "m"]), f),
            a(&["--session", "/s/x_s1.jsonl", "--model", "m"])
        );
    }

    #[test]
    fn a_spec_round_trips_and_a_changed_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = &dir.path().join("root");
        let data = &dir.path().join("data");
        std::fs::create_dir_all(root.join(".pi-intercom")).unwrap();
        std::fs::create_dir_all(data).unwrap();
        let read = |root: &Path, id: &str| super::read(root, data, id);
        let write = |root: &Path, s: &LaunchSpec| super::write(root, data, s);
        assert_eq!(read(root, "s1"), Err(SpecError::Missing));
        write(root, &spec()).unwrap();
        assert_eq!(read(root, "s1").unwrap(), spec());
        assert_eq!(all(root, data), vec![spec()]);
        use std::os::unix::fs::PermissionsExt;
        let p = paths::launch_spec(root, "s1");
        assert_eq!(
            std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o600
        );
        // Another session's spec under this name, an env name outside the list, a writable
        // file: each unusable.
        let mut other = spec();
        other.session_id = "s2".into();
        std::fs::write(&p, serde_json::to_vec(&other).unwrap()).unwrap();
        assert!(matches!(read(root, "s1"), Err(SpecError::Unusable(_))));
        std::fs::remove_file(paths::launch_record(data, "s1")).unwrap();
        assert!(matches!(read(root, "s1"), Err(SpecError::Unusable(_))));
        let mut env = spec();
        env.env.push(("LD_PRELOAD".into(), "/x.so".into()));
        write(root, &env).unwrap();
        assert!(matches!(read(root, "s1"), Err(SpecError::Unusable(_))));
        // An edited spec that moves the worker to another session's file, or adds a session flag.
        for args in [
            vec!["--session-id", "s1", "--session", "/s/x_s2.jsonl"],
            vec!["--session-id", "s2"],
            vec!["--session-id=s1", "--session-id", "s1"],
            vec!["--session-id", "s1", "--fork=s2"],
            vec!["--session-id", "s1", "-c"],
        ] {
            let mut moved = spec();
            moved.args = args.iter().map(|a| a.to_string()).collect();
            super::write(root, data, &moved).unwrap();
            assert!(
                matches!(read(root, "s1"), Err(SpecError::Unusable(_))),
                "{args:?}"
            );
        }
        let mut prog = spec();
        prog.program = Some("--help".into());
        write(root, &prog).unwrap();
        assert!(matches!(read(root, "s1"), Err(SpecError::Unusable(_))));
        write(root, &spec()).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o666)).unwrap();
        assert!(matches!(read(root, "s1"), Err(SpecError::Unusable(_))));
    }
}

#[cfg(test)]
mod copy_tests {
    use super::*;

    fn spec() -> LaunchSpec {
        LaunchSpec {
            stage: Stage::Registered,
            ..super::tests::spec()
        }
    }

    fn dirs() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        let data = dir.path().join("data");
        std::fs::create_dir_all(root.join(".pi-intercom")).unwrap();
        std::fs::create_dir_all(&data).unwrap();
        (dir, root, data)
    }

    #[test]
    fn a_spec_edited_in_one_place_only_is_refused_and_a_copy_alone_is_used() {
        let (_d, root, data) = dirs();
        write(&root, &data, &spec()).unwrap();
        let copy = paths::launch_record(&data, "s1");
        assert!(copy.is_file());
        // The project's spec edited to run another program, or another model: refused.
        let p = paths::launch_spec(&root, "s1");
        for edit in [
            |s: &mut LaunchSpec| s.program = Some("/tmp/evil".into()),
            |s: &mut LaunchSpec| s.args[3] = "other".into(),
            |s: &mut LaunchSpec| s.cwd = PathBuf::from("/"),
        ] {
            let mut edited = spec();
            edit(&mut edited);
            std::fs::write(&p, serde_json::to_vec(&edited).unwrap()).unwrap();
            let got = read(&root, &data, "s1");
            assert!(
                matches!(&got, Err(SpecError::Unusable(w)) if w.contains("data root")),
                "{got:?}"
            );
        }
        // A pane or a note that changed is no disagreement about what runs.
        let mut moved = spec();
        moved.pane = Some("%9".into());
        std::fs::write(&p, serde_json::to_vec(&moved).unwrap()).unwrap();
        assert_eq!(read(&root, &data, "s1").unwrap(), moved);
        // The project's folder lost: the copy alone is used.
        std::fs::remove_file(&p).unwrap();
        assert_eq!(read(&root, &data, "s1").unwrap(), spec());
        remove(&root, &data, "s1");
        assert_eq!(read(&root, &data, "s1"), Err(SpecError::Missing));
    }

    fn registered<'a>(args: &'a [String]) -> Registered<'a> {
        Registered {
            session_id: "s1",
            name: "Coordinator",
            pi_args: args,
            cwd: Path::new("/tmp"),
            env: vec![("PATH".into(), "/bin".into())],
            model: Some("anthropic/claude"),
            pane: Some("%1"),
            placement: None,
            at: "2026-11-29T23:00:00.000Z".into(),
        }
    }

    #[test]
    fn a_registration_records_a_hand_started_pi_but_never_over_a_commands_record() {
        let (_d, root, data) = dirs();
        let a = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        // A message, an @file, session flags and unknown flags are not kept.
        let args = a(&[
            "--model",
            "fake/m",
            "--thinking=high",
            "-c",
            "--session",
            "/x/other.jsonl",
            "fix the bug",
            "@notes.md",
            "--weird",
            "-e",
            "./ext.ts",
            "--no-tools",
        ]);
        from_registration(Some(&root), &data, &registered(&args));
        let got = read(&root, &data, "s1").unwrap();
        assert_eq!(
            got.args,
            a(&[
                "--session-id",
                "s1",
                "--model",
                "fake/m",
                "--thinking=high",
                "-e",
                "./ext.ts",
                "--no-tools"
            ])
        );
        assert_eq!(got.model.as_deref(), Some("anthropic/claude"));
        assert_eq!(got.note.as_deref(), Some(FROM_REGISTRATION));
        assert!(!paths::launch_spec(&root, "s1").exists());
        // A later start of the same pi by hand replaces it.
        from_registration(Some(&root), &data, &registered(&a(&["--model", "two"])));
        assert_eq!(read(&root, &data, "s1").unwrap().args[3], "two");
        // A spec a command wrote is never replaced.
        write(&root, &data, &spec()).unwrap();
        from_registration(Some(&root), &data, &registered(&a(&["--model", "three"])));
        assert_eq!(read(&root, &data, "s1").unwrap(), spec());
        std::fs::remove_file(paths::launch_spec(&root, "s1")).unwrap();
        from_registration(Some(&root), &data, &registered(&a(&["--model", "three"])));
        assert_eq!(read(&root, &data, "s1").unwrap(), spec());
    }
}
