//! Resolve the shared flags (`--config`, `--root`, `--repo`, `--fleet`, ...) into scan options.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::cli::{LivenessArg, SourceArgs};
use crate::clock::{parse_iso, Clock, FixedClock, SystemClock};
use crate::fsguard::{self, Kind};
use crate::liveness::LivenessMode;
use crate::scan::{RootChoice, ScanOptions};
use crate::store;
use crate::text::sanitize;

const MAX_SYSTEM_CONFIG: u64 = 256 * 1024;

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// `$XDG_STATE_HOME/intercom-pane`, else `~/.local/state/intercom-pane`.
pub(crate) fn default_data_root() -> Option<PathBuf> {
    if let Some(x) = std::env::var_os("XDG_STATE_HOME").filter(|x| !x.is_empty()) {
        let p = PathBuf::from(x);
        if p.is_absolute() {
            return Some(p.join("intercom-pane"));
        }
    }
    home().map(|h| h.join(".local").join("state").join("intercom-pane"))
}

/// What `--config` names.
pub(crate) struct SystemConfig {
    pub data_root: PathBuf,
    pub session_dirs: Vec<PathBuf>,
    pub intercom_root: Option<PathBuf>,
}

/// Why the shared flags cannot be used: a refusal (exit 2) that names the flag and quotes the
/// value, sanitized.
#[derive(Debug)]
pub enum OptionsError {
    /// `--config` cannot be read (an `FsError` code).
    ConfigUnreadable {
        path: PathBuf,
        code: &'static str,
    },
    ConfigNotJson {
        path: PathBuf,
        error: serde_json::Error,
    },
    NoDataRoot {
        path: PathBuf,
    },
    DataRootRelative {
        path: PathBuf,
        data_root: PathBuf,
    },
    /// `sessionDirs` (the key) has an entry that is not an absolute path.
    ListEntryRelative(&'static str),
    /// `sessionDirs` (the key) is not a list of at most 32 paths.
    ListTooLong(&'static str),
    DataRootLink(PathBuf),
    DataRootNotFolder(PathBuf),
    DataRootUnusable {
        path: PathBuf,
        code: &'static str,
    },
    NoHome,
    DataRootNotCreated(store::StoreError),
    NoCurrentFolder(std::io::Error),
    BadNow(String),
    /// The pass itself was refused.
    Scan(crate::scan::ScanError),
}

impl std::fmt::Display for OptionsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use OptionsError as E;
        let p = |p: &PathBuf| sanitize(&p.display().to_string());
        match self {
            E::ConfigUnreadable { path, code } => {
                write!(f, "--config {}: cannot read ({code})", p(path))
            }
            E::ConfigNotJson { path, error } => {
                write!(f, "--config {}: not valid JSON ({error})", p(path))
            }
            E::NoDataRoot { path } => write!(f, "--config {}: no \"dataRoot\" string", p(path)),
            E::DataRootRelative { path, data_root } => write!(
                f,
                "--config {}: dataRoot {:?} is not an absolute path",
                p(path),
                p(data_root)
            ),
            E::ListEntryRelative(key) => {
                write!(f, "--config: {key} entries must be absolute paths")
            }
            E::ListTooLong(key) => write!(f, "--config: {key} must be a list of at most 32 paths"),
            E::DataRootLink(d) => write!(f, "dataRoot {} is a link; give the real folder", p(d)),
            E::DataRootNotFolder(d) => write!(f, "dataRoot {} is not a folder", p(d)),
            E::DataRootUnusable { path, code } => {
                write!(f, "dataRoot {} is missing or unusable ({code})", p(path))
            }
            E::NoHome => f.write_str("no --config and neither XDG_STATE_HOME nor HOME is set"),
            E::DataRootNotCreated(e) => e.fmt(f),
            E::NoCurrentFolder(e) => write!(f, "cannot read the current folder: {e}"),
            E::BadNow(t) => write!(f, "--now {:?} is not an ISO 8601 time", sanitize(t)),
            E::Scan(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for OptionsError {}

fn read_system_config(path: &Path) -> Result<SystemConfig, OptionsError> {
    let bytes = fsguard::read_capped(path, MAX_SYSTEM_CONFIG).map_err(|e| {
        OptionsError::ConfigUnreadable {
            path: path.to_path_buf(),
            code: e.code(),
        }
    })?;
    let v: Value = serde_json::from_slice(&bytes).map_err(|error| OptionsError::ConfigNotJson {
        path: path.to_path_buf(),
        error,
    })?;
    let data_root = v
        .get("dataRoot")
        .and_then(Value::as_str)
        .map(PathBuf::from)
        .ok_or_else(|| OptionsError::NoDataRoot {
            path: path.to_path_buf(),
        })?;
    if !data_root.is_absolute() {
        return Err(OptionsError::DataRootRelative {
            path: path.to_path_buf(),
            data_root,
        });
    }
    let list = |key: &'static str| -> Result<Vec<PathBuf>, OptionsError> {
        match v.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(a)) if a.len() <= 32 => a
                .iter()
                .map(|x| {
                    x.as_str()
                        .map(PathBuf::from)
                        .filter(|p| p.is_absolute())
                        .ok_or(OptionsError::ListEntryRelative(key))
                })
                .collect(),
            Some(_) => Err(OptionsError::ListTooLong(key)),
        }
    };
    Ok(SystemConfig {
        data_root,
        session_dirs: list("sessionDirs")?,
        intercom_root: v
            .get("intercomRoot")
            .and_then(Value::as_str)
            .map(PathBuf::from),
    })
}

/// The data root (and what a `--config` adds), checked: a given `--config` is strict; without
/// one, the XDG state folder is created on first use.
pub(crate) fn data_root(config: Option<&Path>) -> Result<SystemConfig, OptionsError> {
    match config {
        Some(path) => {
            let c = read_system_config(path)?;
            match fsguard::kind(&c.data_root) {
                Ok(Kind::Dir) => Ok(c),
                Ok(Kind::Link) => Err(OptionsError::DataRootLink(c.data_root)),
                Ok(_) => Err(OptionsError::DataRootNotFolder(c.data_root)),
                Err(e) => Err(OptionsError::DataRootUnusable {
                    path: c.data_root,
                    code: e.code(),
                }),
            }
        }
        None => {
            let d = default_data_root().ok_or(OptionsError::NoHome)?;
            store::create_dir_all_private(&d).map_err(OptionsError::DataRootNotCreated)?;
            Ok(SystemConfig {
                data_root: d,
                session_dirs: Vec::new(),
                intercom_root: None,
            })
        }
    }
}

/// Everything a scanning command needs.
pub struct Resolved {
    pub opts: ScanOptions,
    pub clock: Box<dyn Clock>,
}

pub fn resolve(src: &SourceArgs) -> Result<Resolved, OptionsError> {
    let cwd = std::env::current_dir().map_err(OptionsError::NoCurrentFolder)?;
    let mut session_dirs = crate::evidence::sessions::default_session_dirs();
    let roots = data_root(src.config.as_deref())?;
    session_dirs.extend(roots.session_dirs);
    let (data_root, cfg_root) = (roots.data_root, roots.intercom_root);
    session_dirs.extend(src.sessions_dirs.iter().cloned());
    let root = match (&src.root, cfg_root) {
        (Some(r), _) => RootChoice::Exact(absolute(&cwd, r)),
        (None, Some(r)) => RootChoice::Exact(absolute(&cwd, &r)),
        (None, None) => RootChoice::Discover(cwd.clone()),
    };
    let fleet = match src.fleet.as_deref() {
        Some("none") => None,
        Some(p) => Some(absolute(&cwd, Path::new(p))),
        None => home().map(|h| h.join(".mosaic").join("fleet").join("agents")),
    };
    let clock: Box<dyn Clock> = match &src.now {
        Some(t) => Box::new(FixedClock(
            parse_iso(t).ok_or_else(|| OptionsError::BadNow(t.clone()))?,
        )),
        None => Box::new(SystemClock),
    };
    Ok(Resolved {
        opts: ScanOptions {
            data_root,
            root,
            repo: Some(src.repo.as_ref().map(|r| absolute(&cwd, r)).unwrap_or(cwd)),
            fleet,
            session_dirs,
            liveness: match src.liveness {
                LivenessArg::Tmux => LivenessMode::Tmux,
                LivenessArg::AssumeAlive => LivenessMode::AssumeAlive,
            },
            tmux_socket: src.tmux_socket.clone(),
            usage_reads: crate::evidence::sessions::usage::ONE_SHOT_BUDGET,
            kept_panes: None,
        },
        clock,
    })
}

/// Resolve the flags and run one pass (no probes): what `scan` and `status` both start with.
pub(crate) fn resolve_and_scan(
    src: &SourceArgs,
) -> Result<(Resolved, crate::scan::Scan), OptionsError> {
    let r = resolve(src)?;
    let pass =
        crate::scan::run(&r.opts, r.clock.as_ref(), None, None).map_err(OptionsError::Scan)?;
    Ok((r, pass))
}

fn absolute(cwd: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    }
}
