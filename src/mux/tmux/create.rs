//! New panes: the sidebar's split above a pane, and a worker's new window. Their names and folders
//! are data (a roster's `name` and `projectDirectory`, a coordinator's root): tmux expands both
//! arguments, so they go through `literal`.

use std::time::Instant;

use super::args::{with_env_and_argv, Args};
use super::literal::{self, PaneId};
use super::Tmux;
use crate::mux::{ErrorCode, Multiplexer, MuxError, NewWindow, PaneInfo, SplitAbove};

/// The program a kept (`remain-on-exit`) coordinator pane runs (`init --start --detach`,
/// `restore`): `/bin/sh -c KEEPER NAME [env K=V…] pi …`. tmux before 3.5 crashes, every
/// session with it, when focus moves onto or off a dead pane whose program had turned focus
/// reports on (`window_pane_update_focus` writes to a pane that has no more input; tmux GitHub
/// issue 3776, fixed in 3.5) — and pi turns them on, and a pi ended by a signal cannot turn
/// them off. So the shell turns them off after pi ends, before
/// the pane dies. `set -m` gives pi its own process group in the foreground, as a shell at a
/// prompt would (the window is still named `pi`, Ctrl-C reaches pi alone); pi's Ctrl-Z stops its
/// group, and with no shell prompt to return to it is continued at once (at most 1,000 times).
pub(crate) const KEEPER: &str = r#"set -m
"$@"; s=$?
n=0
while [ "$n" -lt 1000 ]; do
  case $s in 147|148|149|150) ;; *) break ;; esac
  n=$((n+1))
  fg >/dev/null 2>&1; s=$?
done
printf '\033[?1004l'
exit "$s"
"#;

/// `argv` run under `KEEPER` (`/bin/sh -c KEEPER intercom-pane-coordinator argv…`).
pub(crate) fn kept_argv(argv: &[String]) -> Vec<String> {
    ["/bin/sh", "-c", KEEPER, "intercom-pane-coordinator"]
        .into_iter()
        .map(String::from)
        .chain(argv.iter().cloned())
        .collect()
}

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
            return self.open_session(req, &name, &cwd, false, deadline);
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
    /// server died has nothing to open beside. Its pane is kept as `init --start --detach` keeps
    /// the coordinator's: `argv` under `KEEPER`, `remain-on-exit` set in the same command.
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
            return self.open_session(req, &window, &cwd, true, deadline);
        }
        let raw = literal::session_name_like(&req.name);
        let args = session_args(&literal::session_name(&raw)?, &window, &cwd);
        let args = with_env_and_argv(args, &req.env, &kept_argv(&req.argv))?;
        self.run_new_pane_starting(kept_pane(args, &raw), deadline)
    }

    /// `new-session -d` on this server (the one `beside` is on), named like the window; a taken
    /// name gets `-2` … `-9` (tmux refuses a duplicate: nothing is created then). `keep`: the
    /// pane kept when its program ends (`open_first_session`).
    fn open_session(
        &self,
        req: &NewWindow,
        window: &str,
        cwd: &str,
        keep: bool,
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
            let args = if keep {
                kept_pane(
                    with_env_and_argv(args, &req.env, &kept_argv(&req.argv))?,
                    &name,
                )
            } else {
                with_env_and_argv(args, &req.env, &req.argv)?
            };
            match self.run_new_pane(args, deadline) {
                Err(e) if e.detail.contains("duplicate session") => last = Some(e),
                other => return other,
            }
        }
        Err(last.unwrap_or_else(|| MuxError::new(ErrorCode::Failed, "no free session name")))
    }
}

/// `; set-option -p -t =<session>: remain-on-exit on`, to follow the `new-session` of
/// `session` in the same tmux command, so a program that ends at once still leaves its pane
/// (and a refused `new-session` sets nothing: tmux skips the rest). `session` as given (a
/// target is not expanded), checked by `literal::session_name` first; a lone `;` ends the
/// command before it, every word of which is escaped.
pub(crate) fn keep_pane_words(session: &str) -> Vec<String> {
    let target = super::escape_arg(&format!("={session}:"));
    [
        ";",
        "set-option",
        "-p",
        "-t",
        &target,
        "remain-on-exit",
        "on",
    ]
    .map(String::from)
    .into()
}

fn kept_pane(mut args: Args, session: &str) -> Args {
    args.0.extend(keep_pane_words(session));
    args
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
