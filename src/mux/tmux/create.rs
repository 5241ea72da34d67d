//! New panes: the sidebar's split above a pane, and a worker's new window. Their names and folders
//! are data (a roster's `name` and `projectDirectory`, a coordinator's root): tmux expands both
//! arguments, so they go through `literal`.

use std::time::Instant;

use super::args::{with_env_and_argv, Args};
use super::literal::{self, PaneId};
use super::Tmux;
use crate::mux::{ErrorCode, Multiplexer, MuxError, NewWindow, PaneInfo, SplitAbove};

fn check_argv(argv: &[String]) -> Result<(), MuxError> {
    if argv.is_empty() || argv.iter().any(|a| a.contains('\0')) {
        return Err(MuxError::new(ErrorCode::BadRequest, "invalid argv"));
    }
    Ok(())
}

impl Tmux {
    pub(super) fn split_pane_above(
        &self,
        req: &SplitAbove,
        deadline: Instant,
    ) -> Result<PaneInfo, MuxError> {
        let target = PaneId::parse(&req.target)?;
        if !(1..=99).contains(&req.percent) {
            return Err(MuxError::new(
                ErrorCode::BadRequest,
                "percent out of 1..=99",
            ));
        }
        check_argv(&req.argv)?;
        let mut args = Args::new("split-window")
            .arg("-b")
            .arg("-v")
            .arg("-d")
            .arg("-l")
            .arg(&format!("{}%", req.percent))
            .arg("-t")
            .arg(target.as_str())
            .arg("-P")
            .arg("-F")
            .arg("#{pane_id}");
        if let Some(cwd) = &req.cwd {
            args = args.arg("-c").arg(&literal::start_dir(cwd)?);
        }
        args = with_env_and_argv(args, &req.env, &req.argv)?;
        self.run_new_pane(args, deadline)
    }

    pub(super) fn open_window(
        &self,
        req: &NewWindow,
        deadline: Instant,
    ) -> Result<PaneInfo, MuxError> {
        let beside = PaneId::parse(&req.beside)?;
        check_argv(&req.argv)?;
        let name = literal::window_name(&req.name)?;
        let cwd = literal::start_dir(&req.cwd)?;
        let beside = self.find_pane(beside.as_str(), deadline)?.ok_or_else(|| {
            MuxError::new(ErrorCode::PaneNotFound, "the pane to open beside is gone")
        })?;
        if req.own_session {
            return self.open_session(req, &name, &cwd, deadline);
        }
        // `-a -t <window>`: the next free index after that pane's window, in its session; `-d`:
        // the person's current window stays current. The window id is one tmux printed and the
        // listing checked (`@N`).
        let args = Args::new("new-window")
            .arg("-a")
            .arg("-d")
            .arg("-t")
            .arg(&beside.window_id)
            .arg("-n")
            .arg(&name)
            .arg("-c")
            .arg(&cwd)
            .arg("-P")
            .arg("-F")
            .arg("#{pane_id}");
        let args = with_env_and_argv(args, &req.env, &req.argv)?;
        self.run_new_pane(args, deadline)
    }

    /// A detached session of its own named like `req.name` (`beside` unused), on this server or,
    /// when no server answers on the socket, on the one tmux starts for it: `restore` after the
    /// server died has nothing to open beside.
    pub(crate) fn open_first_session(
        &self,
        req: &NewWindow,
        deadline: Instant,
    ) -> Result<PaneInfo, MuxError> {
        check_argv(&req.argv)?;
        let window = literal::window_name(&req.name)?;
        let cwd = literal::start_dir(&req.cwd)?;
        // A server that answers gets the session; else (no socket, or a stale one left by a
        // server that died) this `new-session` starts one.
        if self.server_identity(deadline).is_ok() {
            return self.open_session(req, &window, &cwd, deadline);
        }
        let name = literal::session_name(&literal::session_name_like(&req.name))?;
        let args = session_args(&name, &window, &cwd);
        let args = with_env_and_argv(args, &req.env, &req.argv)?;
        self.run_new_pane_starting(args, deadline)
    }

    /// `new-session -d` on this server (the one `beside` is on), named like the window; a taken
    /// name gets `-2` … `-9` (tmux refuses a duplicate: nothing is created then).
    fn open_session(
        &self,
        req: &NewWindow,
        window: &str,
        cwd: &str,
        deadline: Instant,
    ) -> Result<PaneInfo, MuxError> {
        let base = literal::session_name_like(&req.name);
        let mut last = None;
        for n in 1..=9 {
            let name = if n == 1 {
                base.clone()
            } else {
                format!("{base}-{n}")
            };
            let args = session_args(&literal::session_name(&name)?, window, cwd);
            let args = with_env_and_argv(args, &req.env, &req.argv)?;
            match self.run_new_pane(args, deadline) {
                Err(e) if e.detail.contains("duplicate session") => last = Some(e),
                other => return other,
            }
        }
        Err(last.unwrap_or_else(|| MuxError::new(ErrorCode::Failed, "no free session name")))
    }
}

/// `new-session -d -s <session> -n <window> -c <cwd> -P -F #{pane_id}` (every value already
/// made literal).
fn session_args(session: &str, window: &str, cwd: &str) -> Args {
    Args::new("new-session")
        .arg("-d")
        .arg("-s")
        .arg(session)
        .arg("-n")
        .arg(window)
        .arg("-c")
        .arg(cwd)
        .arg("-P")
        .arg("-F")
        .arg("#{pane_id}")
}
