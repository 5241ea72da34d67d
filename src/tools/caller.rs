//! Who may use the coordinator's tools: only the roster's coordinator's own pi, proven the way
//! `register` proves its caller, and then by the roster.
//!
//! 1. `--pi-pid` is an ancestor of this command, really pi, and started this command in its own
//!    process group and session (`register::verify_caller`): a shell in another pane, a worker,
//!    or anything a pi's bash tool runs (a session of its own) is refused.
//! 2. The roster is the one found from the folder that pi really runs in (`/proc`, a trusted
//!    config), never from a flag or an environment variable.
//! 3. The roster's coordinator has a live registration (written by `register` from inside its
//!    pi) of exactly that process: pid, start ticks and boot id, its session not ended.
//!
//! Anything else is refused before any scan, text or action.

use std::path::{Path, PathBuf};

use crate::actions::register::{self, Refusal};
use crate::evidence::config;
use crate::evidence::registrations;
use crate::proc;
use crate::text::sanitize;

/// The verified caller: the roster's coordinator, in this root.
#[derive(Debug, Clone)]
pub(crate) struct Coordinator {
    pub root: PathBuf,
    pub name: String,
}

#[derive(Debug)]
pub(crate) enum CallerError {
    /// Not this command's own pi (register's refusal says why).
    Untrusted(Refusal),
    /// The folder pi runs in cannot be read.
    CwdUnreadable(i32),
    /// No (usable) Intercom roster at or above pi's folder.
    NoRoster(String),
    /// The roster names no coordinator.
    NoCoordinator,
    /// This pi has no live registration at all (yet: its `register` may still be running).
    NotRegistered,
    /// The coordinator has no live registration of this pi.
    NotTheCoordinator(String),
}

impl CallerError {
    /// A fixed code for the extension: only `not_registered` is worth asking again (a moment
    /// later, once this pi's own registration is written).
    pub(crate) fn code(&self) -> &'static str {
        match self {
            CallerError::Untrusted(_) => "untrusted",
            CallerError::CwdUnreadable(_) => "cwd_unreadable",
            CallerError::NoRoster(_) => "no_roster",
            CallerError::NoCoordinator => "no_coordinator",
            CallerError::NotRegistered => "not_registered",
            CallerError::NotTheCoordinator(_) => "not_coordinator",
        }
    }
}

impl std::fmt::Display for CallerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallerError::Untrusted(r) => write!(f, "refused: {r}"),
            CallerError::CwdUnreadable(pid) => {
                write!(f, "refused: the folder pi (pid {pid}) runs in cannot be read")
            }
            CallerError::NoRoster(why) => write!(
                f,
                "refused: no Intercom roster at or above the folder this pi runs in ({why})"
            ),
            CallerError::NoCoordinator => f.write_str("refused: the roster has no coordinator"),
            CallerError::NotRegistered => {
                f.write_str("refused: this pi has no live registration (yet)")
            }
            CallerError::NotTheCoordinator(why) => write!(
                f,
                "refused: this pi is not the roster's coordinator ({why}); the tools are the coordinator's only"
            ),
        }
    }
}

impl std::error::Error for CallerError {}

/// Verify that `pi_pid` is the roster's coordinator's pi and started this command.
pub(crate) fn verify(pi_pid: i32, data_root: &Path) -> Result<Coordinator, CallerError> {
    register::verify_caller(pi_pid).map_err(CallerError::Untrusted)?;
    let cwd = proc::cwd(pi_pid).ok_or(CallerError::CwdUnreadable(pi_pid))?;
    let cfg = match config::discover(&cwd) {
        Ok(Some(c)) => c,
        Ok(None) => return Err(CallerError::NoRoster("none found".into())),
        Err(e) => return Err(CallerError::NoRoster(sanitize(&e.to_string()))),
    };
    let coordinator = cfg.coordinator().ok_or(CallerError::NoCoordinator)?;
    let me = proc::identity(pi_pid)
        .ok_or_else(|| CallerError::NotTheCoordinator("its identity cannot be read".into()))?;
    let regs = registrations::read_all(Some(&cfg.root), data_root);
    if !regs.items.iter().any(|r| r.is_process(&me)) {
        return Err(CallerError::NotRegistered);
    }
    let Some(reg) = regs.by_session_id(&coordinator.session_id) else {
        return Err(CallerError::NotTheCoordinator(
            "the coordinator's session has no registration".into(),
        ));
    };
    if !reg.is_process(&me) {
        return Err(CallerError::NotTheCoordinator(
            "the coordinator's session is registered by another process".into(),
        ));
    }
    if reg.alive() != Some(true) || reg.session_closed() {
        return Err(CallerError::NotTheCoordinator(
            "the coordinator's registration is not live".into(),
        ));
    }
    Ok(Coordinator {
        root: cfg.root.clone(),
        name: coordinator.name.clone(),
    })
}
