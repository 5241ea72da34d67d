//! Resolve the shared flags (`--config`, `--root`, `--repo`, `--fleet`, ...) into scan options.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::actions::store;
use crate::cli::{LivenessArg, SourceArgs};
use crate::clock::{parse_iso, Clock, FixedClock, SystemClock};
use crate::fsguard::{self, Kind};
use crate::liveness::LivenessMode;
use crate::scan::{RootChoice, ScanOptions};

const MAX_SYSTEM_CONFIG: u64 = 256 * 1024;

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// `$XDG_STATE_HOME/intercom-pane`, else `~/.local/state/intercom-pane`.
pub fn default_data_root() -> Option<PathBuf> {
    if let Some(x) = std::env::var_os("XDG_STATE_HOME").filter(|x| !x.is_empty()) {
        let p = PathBuf::from(x);
        if p.is_absolute() {
            return Some(p.join("intercom-pane"));
        }
    }
    home().map(|h| h.join(".local").join("state").join("intercom-pane"))
}

/// What `--config` names.
pub struct SystemConfig {
    pub data_root: PathBuf,
    pub session_dirs: Vec<PathBuf>,
    pub intercom_root: Option<PathBuf>,
}

fn read_system_config(path: &Path) -> Result<SystemConfig, String> {
    let bytes = fsguard::read_capped(path, MAX_SYSTEM_CONFIG)
        .map_err(|e| format!("--config {}: cannot read ({})", path.display(), e.code()))?;
    let v: Value = serde_json::from_slice(&bytes)
        .map_err(|e| format!("--config {}: not valid JSON ({e})", path.display()))?;
    let data_root = v
        .get("dataRoot")
        .and_then(Value::as_str)
        .map(PathBuf::from)
        .ok_or_else(|| format!("--config {}: no \"dataRoot\" string", path.display()))?;
    if !data_root.is_absolute() {
        return Err(format!(
            "--config {}: dataRoot {:?} is not an absolute path",
            path.display(),
            data_root.display().to_string()
        ));
    }
    let list = |key: &str| -> Result<Vec<PathBuf>, String> {
        match v.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(a)) if a.len() <= 32 => a
                .iter()
                .map(|x| {
                    x.as_str()
                        .map(PathBuf::from)
                        .filter(|p| p.is_absolute())
                        .ok_or_else(|| format!("--config: {key} entries must be absolute paths"))
                })
                .collect(),
            Some(_) => Err(format!(
                "--config: {key} must be a list of at most 32 paths"
            )),
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
pub fn data_root(config: Option<&Path>) -> Result<SystemConfig, String> {
    match config {
        Some(path) => {
            let c = read_system_config(path)?;
            match fsguard::kind(&c.data_root) {
                Ok(Kind::Dir) => Ok(c),
                Ok(Kind::Link) => Err(format!(
                    "dataRoot {} is a link; give the real folder",
                    c.data_root.display()
                )),
                Ok(_) => Err(format!(
                    "dataRoot {} is not a folder",
                    c.data_root.display()
                )),
                Err(e) => Err(format!(
                    "dataRoot {} is missing or unusable ({})",
                    c.data_root.display(),
                    e.code()
                )),
            }
        }
        None => {
            let d = default_data_root()
                .ok_or("no --config and neither XDG_STATE_HOME nor HOME is set")?;
            store::create_dir_all_private(&d).map_err(|e| e.to_string())?;
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

pub fn resolve(src: &SourceArgs) -> Result<Resolved, String> {
    let cwd =
        std::env::current_dir().map_err(|e| format!("cannot read the current folder: {e}"))?;
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
            parse_iso(t).ok_or_else(|| format!("--now {t:?} is not an ISO 8601 time"))?,
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
        },
        clock,
    })
}

/// Resolve the flags and run one pass (no probes): what `scan` and `status` both start with.
pub fn resolve_and_scan(src: &SourceArgs) -> Result<(Resolved, crate::scan::Scan), String> {
    let r = resolve(src)?;
    let pass = crate::scan::run(&r.opts, r.clock.as_ref(), None).map_err(|e| e.to_string())?;
    Ok((r, pass))
}

fn absolute(cwd: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    }
}
