//! Starting and arranging a private tmux server: what the demo needs (sessions, a split with the
//! monitor, an option, attach, kill). Kept beside `tmux/` so every tmux argv is built in `mux/`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::mux::spawn;
use crate::mux::tmux::{escape_arg, literal};

/// Deadline for one tmux command that arranges the server.
const STEP_DEADLINE: Duration = Duration::from_secs(5);

/// A tmux server this process started on its own socket, addressed only by that path.
pub struct PrivateServer {
    pub socket: PathBuf,
}

fn command(socket: &Path) -> Command {
    use std::os::unix::process::CommandExt;
    let mut c = Command::new("tmux");
    c.env_remove("TMUX")
        .env_remove("TMUX_PANE")
        .arg("-S")
        .arg(socket);
    // The demo blocks its quit signals to clean up on a waiting thread; tmux (and the shells
    // and agents of its panes) must start with them unblocked.
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        c.pre_exec(|| {
            unblock_signals();
            Ok(())
        });
    }
    c
}

/// Unblock every signal in this thread. Async-signal-safe (one `sigprocmask`): for `pre_exec`
/// hooks of children of a process that blocks its quit signals (the demo).
pub(crate) fn unblock_signals() {
    let empty = nix::sys::signal::SigSet::empty();
    let _ = nix::sys::signal::sigprocmask(
        nix::sys::signal::SigmaskHow::SIG_SETMASK,
        Some(&empty),
        None,
    );
}

/// The prefix key of the tmux server this process runs inside (`$TMUX`), as tmux names it
/// (`C-b`); `None` outside tmux or when that server does not answer in time.
pub(crate) fn person_prefix() -> Option<String> {
    if std::env::var_os("TMUX").is_none_or(|v| v.is_empty()) {
        return None;
    }
    let mut c = Command::new("tmux");
    c.args(["show-options", "-gv", "prefix"]);
    match spawn::run(&mut c, None, Instant::now() + STEP_DEADLINE, 1024) {
        Ok(out) if out.status.success() => {
            let key = String::from_utf8_lossy(&out.stdout).trim().to_string();
            (!key.is_empty()).then_some(key)
        }
        _ => None,
    }
}

/// Why arranging the private server failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionError {
    /// tmux is not on PATH.
    NotInstalled,
    /// tmux ran and refused: its command and its (sanitized) stderr.
    Failed { command: String, stderr: String },
    /// tmux did not finish (deadline, output cap, spawn failure).
    DidNotRun(spawn::RunError),
    /// A name or folder tmux would not keep as given (`tmux::literal`); nothing was run.
    Refused(String),
}

impl std::fmt::Display for SessionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SessionError::NotInstalled => f.write_str("tmux is not installed (not on PATH)"),
            SessionError::Failed { command, stderr } => write!(f, "tmux {command}: {stderr}"),
            SessionError::DidNotRun(e) => write!(f, "tmux did not run: {e:?}"),
            SessionError::Refused(d) => write!(f, "refused: {d}"),
        }
    }
}

impl std::error::Error for SessionError {}

/// For callers that report errors as text (the demo).
impl From<SessionError> for String {
    fn from(e: SessionError) -> String {
        e.to_string()
    }
}

fn run(socket: &Path, args: &[String]) -> Result<String, SessionError> {
    let mut c = command(socket);
    c.args(args);
    match spawn::run(&mut c, None, Instant::now() + STEP_DEADLINE, 64 * 1024) {
        Ok(out) if out.status.success() => Ok(String::from_utf8_lossy(&out.stdout).into_owned()),
        Ok(out) => Err(SessionError::Failed {
            command: crate::text::sanitize(args.first().map(String::as_str).unwrap_or("")),
            stderr: crate::text::sanitize(String::from_utf8_lossy(&out.stderr).trim()),
        }),
        Err(spawn::RunError::NotFound) => Err(SessionError::NotInstalled),
        Err(e) => Err(SessionError::DidNotRun(e)),
    }
}

/// A session name and folder as tmux's `new-session -s` / `-c` must get them (both expanded).
fn name_and_dir(name: &str, cwd: &Path) -> Result<(String, String), SessionError> {
    let refused = |e: crate::mux::MuxError| SessionError::Refused(e.detail);
    Ok((
        escape_arg(&literal::session_name(name).map_err(refused)?),
        escape_arg(&literal::start_dir(cwd).map_err(refused)?),
    ))
}

/// The target `=name:` (exactly that session's current window; targets are not expanded, but
/// a `:` or `.` in the name would split it).
fn session_target(name: &str, window: bool) -> Result<String, SessionError> {
    literal::session_name(name).map_err(|e| SessionError::Refused(e.detail))?;
    Ok(escape_arg(&format!(
        "={name}{}",
        if window { ":" } else { "" }
    )))
}

fn with_argv(mut args: Vec<String>, argv: &[String]) -> Vec<String> {
    if !argv.is_empty() {
        args.push("--".into());
        args.extend(argv.iter().map(|a| escape_arg(a)));
    }
    args
}

impl PrivateServer {
    /// Start a new server on `socket` (no config file) with a first session `name` running
    /// `argv` (a shell when empty).
    pub fn start(
        socket: &Path,
        name: &str,
        cwd: &Path,
        size: (u16, u16),
        argv: &[String],
    ) -> Result<PrivateServer, SessionError> {
        let (name, cwd) = name_and_dir(name, cwd)?;
        let args = vec![
            "-f".into(),
            "/dev/null".into(),
            "new-session".into(),
            "-d".into(),
            "-x".into(),
            size.0.to_string(),
            "-y".into(),
            size.1.to_string(),
            "-s".into(),
            name,
            "-c".into(),
            cwd,
        ];
        run(socket, &with_argv(args, argv))?;
        Ok(PrivateServer {
            socket: socket.to_path_buf(),
        })
    }

    /// Add a detached session `name` running `argv`.
    pub fn new_session(&self, name: &str, cwd: &Path, argv: &[String]) -> Result<(), SessionError> {
        let (name, cwd) = name_and_dir(name, cwd)?;
        let args = vec![
            "new-session".into(),
            "-d".into(),
            "-s".into(),
            name,
            "-c".into(),
            cwd,
        ];
        run(&self.socket, &with_argv(args, argv)).map(|_| ())
    }

    /// Split the first pane of `session` and run `argv` above it, `percent` of its height,
    /// without taking focus.
    pub fn split_above(
        &self,
        session: &str,
        percent: u8,
        argv: &[String],
    ) -> Result<(), SessionError> {
        let args = vec![
            "split-window".into(),
            "-b".into(),
            "-v".into(),
            "-d".into(),
            "-l".into(),
            format!("{}%", percent.clamp(10, 90)),
            "-t".into(),
            session_target(session, true)?,
        ];
        run(&self.socket, &with_argv(args, argv)).map(|_| ())
    }

    /// Set an option of the window of `session` (e.g. `remain-on-exit on`, so an exited agent
    /// leaves a dead pane behind instead of closing the session). tmux expands the option's
    /// name (ours, fixed) and stores the value as given (no `-F`).
    pub fn set_window_option(
        &self,
        session: &str,
        name: &str,
        value: &str,
    ) -> Result<(), SessionError> {
        let args = vec![
            "set-option".into(),
            "-w".into(),
            "-t".into(),
            session_target(session, true)?,
            escape_arg(name),
            escape_arg(value),
        ];
        run(&self.socket, &args).map(|_| ())
    }

    /// Set a server-wide session option (`set-option -g`), e.g. the demo's status line: the
    /// value is stored as given, and an option tmux reads as a format (`status-right`) expands
    /// it when drawn, so only fixed text of ours is set here.
    pub fn set_global_option(&self, name: &str, value: &str) -> Result<(), SessionError> {
        let args = vec![
            "set-option".into(),
            "-g".into(),
            escape_arg(name),
            escape_arg(value),
        ];
        run(&self.socket, &args).map(|_| ())
    }

    /// Attach this terminal to `session` (interactive; returns when the user detaches).
    pub fn attach(&self, session: &str) -> std::io::Result<std::process::ExitStatus> {
        let target = session_target(session, false)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e.to_string()))?;
        command(&self.socket)
            .arg("attach-session")
            .arg("-t")
            .arg(target)
            .status()
    }

    /// Kill this server (only this one: it is addressed by its own socket).
    pub fn kill(&self) {
        let _ = run(&self.socket, &["kill-server".to_string()]);
    }
}
