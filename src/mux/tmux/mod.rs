//! tmux behind the `Multiplexer` trait, through a small argv builder over `std::process::Command`.
//!
//! Why not the `tmux_interface` crate (docs/interop.md §7): it emits `-p` for percentage sizes (broken
//! in tmux 3.4), its feature flags describe the tmux it was compiled for rather than the one
//! installed, it allows one `-e` only, builds the command as one string, does not escape a
//! trailing `;` (which tmux takes as a command separator), and its pane-list parser splits on
//! `'`. Here instead:
//! - the server is ALWAYS addressed with `-S <socket path>`, never the default socket, and `-N`
//!   (3.3+) on every command but the listing, so that none ever starts a server (`list-panes`
//!   cannot: tmux starts a server only for commands made to, such as `new-session`); `-u` so
//!   tmux prints values byte for byte;
//! - every argv element that ends in `;` is escaped as `\;` (`escape_arg`);
//! - data never reaches a format: every value in an argument tmux expands (window names,
//!   folders, titles) goes through `literal` (`#` doubled, or refused when tmux would not keep
//!   it as given), and every pane target is a `PaneId` (`%N`), also in our filters;
//! - sizes are `-l N%`, never `-p`; existence is `list-panes -a -f`, never `display -p`;
//! - panes are listed with ONE `list-panes -a -F`, each field that may hold any byte quoted by
//!   tmux's `#{q:...}` (see `listing`), each value expanded once; ids and numbers tmux makes
//!   itself (`%3`, `1700000000`) cannot hold a separator: they are printed as is, and refused
//!   when they hold anything else;
//! - tmux ≥ 3.2 is required. A listing carries the server's own `#{version}` and is refused
//!   from an older server, so a pass that only lists spawns one tmux and no `tmux -V`; other
//!   commands check `tmux -V` once per process (per program and PATH), as does a listing whose
//!   server printed no version, and a listing that failed (so an old tmux reads `too_old`);
//! - every tmux process runs under the caller's deadline and is killed when it passes.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

use super::spawn::{self, RunError};
use super::{
    CloseOutcome, ErrorCode, Multiplexer, MuxError, MuxKind, NewWindow, PaneIdentity, PaneInfo,
    PaneList, PiText, ServerIdentity, SplitAbove, Typed, Untyped, MARKER_OPTION,
};

mod args;
mod attach;
pub(crate) mod clients;
mod close;
pub(crate) mod control;
mod create;
pub(crate) mod current;
mod focus;
mod listing;
pub(crate) mod literal;
mod presence;
pub(crate) mod typed;
pub use args::escape_arg;
use args::{filter_for, Args};
pub(crate) use args::{parse_version, socket_for_name};
#[cfg(test)]
pub(crate) use create::KEEPER;
pub(crate) use create::{keep_pane_words, kept_argv};
use listing::bad;
pub(crate) use listing::list_format;
pub use listing::{parse_listing, parse_rows};
pub(crate) use literal::PaneId;
pub use literal::{format_literal, is_pane_id};

/// Oldest tmux we drive (argv-form commands, `-e` repeats, `list-panes -f`, `-l N%`).
pub(crate) const MIN_VERSION: (u32, u32) = (3, 2);
/// Cap on one listing's output (128 panes take about 40 KiB).
const LIST_CAP: usize = 16 << 20;
/// Cap on output of commands that print little.
const SMALL_CAP: usize = 1 << 20;
/// Largest marker value.
const MAX_MARKER: usize = 1024;

/// Resolve a socket hint to a socket path. `None` is the default server: `default_socket` when
/// given (e.g. `--tmux-socket`), else the first field of `$TMUX`, else `-L default`.
pub(crate) fn resolve_socket(hint: Option<&str>, default_socket: Option<&Path>) -> Option<PathBuf> {
    let tmpdir = std::env::var("TMUX_TMPDIR").ok();
    match hint {
        Some(s) if s.contains('/') => Some(PathBuf::from(s)),
        Some(name) => socket_for_name(name, tmpdir.as_deref()),
        None => default_socket.map(Path::to_path_buf).or_else(|| {
            std::env::var("TMUX")
                .ok()
                .and_then(|t| Tmux::from_tmux_env(&t))
                .map(|t| t.socket)
                .or_else(|| socket_for_name("default", tmpdir.as_deref()))
        }),
    }
}

/// `$TMUX_PANE` when this process runs in a pane of the tmux server at `socket`.
pub(crate) fn own_pane_on(socket: &Path) -> Option<String> {
    let ours = std::env::var("TMUX")
        .ok()
        .and_then(|t| Tmux::from_tmux_env(&t))?;
    let same = ours.socket == socket
        || matches!((std::fs::canonicalize(&ours.socket), std::fs::canonicalize(socket)),
            (Ok(a), Ok(b)) if a == b);
    let pane = std::env::var("TMUX_PANE").ok()?;
    (same && is_pane_id(&pane)).then_some(pane)
}

/// (program, PATH) → the version `tmux -V` printed.
type VersionCache = Mutex<HashMap<(OsString, Option<OsString>), (u32, u32)>>;

fn versions() -> &'static VersionCache {
    static V: OnceLock<VersionCache> = OnceLock::new();
    V.get_or_init(|| Mutex::new(HashMap::new()))
}

/// One tmux server, addressed by its socket path.
#[derive(Debug, Clone)]
pub struct Tmux {
    socket: PathBuf,
    program: OsString,
    path_env: Option<OsString>,
}

impl Tmux {
    /// The server listening on `socket` (as `tmux -S socket`).
    pub fn at_socket(socket: &Path) -> Tmux {
        Tmux {
            socket: socket.to_path_buf(),
            program: OsString::from("tmux"),
            path_env: None,
        }
    }

    /// The server named by a `$TMUX` value (`<socket path>,<server pid>,<session index>`).
    pub fn from_tmux_env(value: &str) -> Option<Tmux> {
        // Split from the right: the socket path itself may contain commas.
        let mut parts = value.rsplitn(3, ',');
        let _session = parts.next()?;
        let _pid = parts.next()?;
        let path = parts.next()?;
        if !path.starts_with('/') {
            return None;
        }
        Some(Tmux::at_socket(Path::new(path)))
    }

    /// The server `tmux -L name` would use, addressed by its resolved socket path.
    pub fn named(name: &str, tmux_tmpdir: Option<&str>) -> Option<Tmux> {
        socket_for_name(name, tmux_tmpdir).map(|p| Tmux::at_socket(&p))
    }

    /// Use another tmux program (a path, or a name looked up on PATH).
    pub fn with_program(mut self, program: impl Into<OsString>) -> Tmux {
        self.program = program.into();
        self
    }

    /// A client for the server at `socket` when it is a tmux server (`kind`): for what only
    /// tmux has (a window that attaches to another host, status alerts).
    pub fn of(kind: MuxKind, socket: &Path) -> Option<Tmux> {
        (kind == MuxKind::Tmux).then(|| Tmux::at_socket(socket))
    }

    /// Type `text` into the pane as one bracketed paste, then a separate Enter, through the
    /// same tool as `deliver` (`tmux::typed`) with its checks, but no pi to check: for a pane
    /// that runs no registered pi. As a `MuxError`.
    pub fn send_text(&self, pane_id: &str, text: &str, deadline: Instant) -> Result<(), MuxError> {
        let pane = PaneId::parse(pane_id)?;
        let socket = self
            .socket
            .to_str()
            .ok_or_else(|| MuxError::new(ErrorCode::BadRequest, "socket path not UTF-8"))?;
        typed::send_text(socket, self.path_env.clone(), &pane, text, deadline)
    }

    /// Run tmux with this PATH (also used to look the program up).
    pub fn with_path_env(mut self, path: impl Into<OsString>) -> Tmux {
        self.path_env = Some(path.into());
        self
    }

    fn base_command(&self) -> Command {
        let mut c = Command::new(&self.program);
        if let Some(p) = &self.path_env {
            c.env("PATH", p);
        }
        // Our own pane's variables must never steer target resolution.
        c.env_remove("TMUX").env_remove("TMUX_PANE");
        c
    }

    /// The installed version, checked once per process for this program and PATH.
    pub fn version(&self, deadline: Instant) -> Result<(u32, u32), MuxError> {
        let key = (self.program.clone(), self.path_env.clone());
        let cached = versions().lock().ok().and_then(|m| m.get(&key).copied());
        let v = match cached {
            Some(v) => v,
            None => {
                let out = spawn::run(self.base_command().arg("-V"), None, deadline, 4096)
                    .map_err(run_error)?;
                let text = String::from_utf8_lossy(&out.stdout);
                let v = parse_version(&text).ok_or_else(|| {
                    MuxError::new(ErrorCode::TooOld, format!("unrecognised version: {text}"))
                })?;
                if let Ok(mut m) = versions().lock() {
                    m.insert(key, v);
                }
                v
            }
        };
        args::supported(v)?;
        Ok(v)
    }

    fn run(
        &self,
        args: Args,
        stdin: Option<&[u8]>,
        deadline: Instant,
        cap: usize,
    ) -> Result<spawn::Output, MuxError> {
        self.server_may_listen()?;
        let version = self.version(deadline)?;
        // None of our commands starts a server; `-N` makes sure of it where we verified that
        // the flag exists (3.3a; it may be newer than 3.2).
        self.exec(args, stdin, deadline, cap, version >= (3, 3))
    }

    /// Run one tmux client as is (the caller has checked what it needs).
    fn exec(
        &self,
        args: Args,
        stdin: Option<&[u8]>,
        deadline: Instant,
        cap: usize,
        no_start: bool,
    ) -> Result<spawn::Output, MuxError> {
        let mut c = self.base_command();
        if no_start {
            c.arg("-N");
        }
        c.arg("-u").arg("-S").arg(&self.socket).args(&args.0);
        let out = spawn::run(&mut c, stdin, deadline, cap).map_err(run_error)?;
        if out.status.success() {
            Ok(out)
        } else {
            Err(status_error(&out.stderr))
        }
    }

    /// Run a command that creates a pane and prints only its id (`-P -F '#{pane_id}'`); the
    /// pane is then looked up like any other, through the one listing format.
    fn run_new_pane(&self, args: Args, deadline: Instant) -> Result<PaneInfo, MuxError> {
        let out = self.run(args, None, deadline, SMALL_CAP)?;
        self.printed_pane(&out, deadline)
    }

    /// `run_new_pane` for the one command that may start a server: `new-session` on a socket no
    /// server listens on (`restore` after the server died).
    fn run_new_pane_starting(&self, args: Args, deadline: Instant) -> Result<PaneInfo, MuxError> {
        self.version(deadline)?;
        let out = self.exec(args, None, deadline, SMALL_CAP, false)?;
        self.printed_pane(&out, deadline)
    }

    fn printed_pane(&self, out: &spawn::Output, deadline: Instant) -> Result<PaneInfo, MuxError> {
        let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if !is_pane_id(&id) {
            return Err(bad("the new pane's id was not printed"));
        }
        self.find_pane(&id, deadline)?
            .ok_or_else(|| bad("the new pane is not listed"))
    }

    /// One `list-panes -a` (optionally filtered by a format condition), parsed and validated.
    /// No `tmux -V` first: the listing carries the server's version (see the module notes).
    fn list(&self, filter: Option<&str>, deadline: Instant) -> Result<PaneList, MuxError> {
        self.server_may_listen()?;
        let mut args = Args::new("list-panes").arg("-a");
        if let Some(f) = filter {
            args = args.arg("-f").arg(f);
        }
        args = args.arg("-F").arg(&list_format());
        let out = self
            .exec(args, None, deadline, LIST_CAP, false)
            .map_err(|e| self.too_old_or(e, deadline))?;
        parse_listing(&out.stdout, || self.version(deadline).map(|_| ()))
            .map_err(|e| self.too_old_or(e, deadline))
    }

    /// A listing that failed for a reason tmux gave: a tmux too old to drive (which may not
    /// know the flags or formats asked for) reads as `too_old`, whatever it printed.
    fn too_old_or(&self, e: MuxError, deadline: Instant) -> MuxError {
        match e.code {
            ErrorCode::BadReply | ErrorCode::Failed => match self.version(deadline) {
                Err(old) if old.code == ErrorCode::TooOld => old,
                _ => e,
            },
            _ => e,
        }
    }
}

/// `tmux new-session ARGS…` (ARGS hold `-d`) on the person's own server (the one `$TMUX` names
/// inside tmux, else the default), run in `cwd` and waited for: `init --start --detach`. The
/// words were escaped by the caller (`escape_arg`), so a `;` of theirs ends no command.
pub(crate) fn new_session_detached(
    args: &[String],
    cwd: &Path,
    deadline: Instant,
) -> Result<(), MuxError> {
    let mut c = Command::new("tmux");
    c.arg("new-session").args(args).current_dir(cwd);
    let out = spawn::run(&mut c, None, deadline, SMALL_CAP).map_err(run_error)?;
    if out.status.success() {
        Ok(())
    } else {
        Err(status_error(&out.stderr))
    }
}

/// Replace this process with a tmux client that starts a session on the person's own default
/// server (`tmux new-session ARGS…`, attached, as they would type it): `init --start` outside
/// any multiplexer, the one place a session is started there. Never called inside a pane (no
/// nesting). Returns only when tmux could not be started.
pub(crate) fn exec_new_session(args: &[String]) -> std::io::Error {
    use std::os::unix::process::CommandExt;
    Command::new("tmux").arg("new-session").args(args).exec()
}

fn run_error(e: RunError) -> MuxError {
    match e {
        RunError::NotFound => MuxError::new(ErrorCode::NotInstalled, "tmux not found"),
        RunError::Timeout => MuxError::new(ErrorCode::Timeout, "tmux did not answer in time"),
        RunError::Oversize => MuxError::new(ErrorCode::BadReply, "tmux output over cap"),
        RunError::Spawn(d) => MuxError::new(ErrorCode::Failed, d),
    }
}

fn status_error(stderr: &[u8]) -> MuxError {
    let msg = String::from_utf8_lossy(stderr);
    let code = if msg.contains("no server running") || msg.contains("error connecting to") {
        ErrorCode::NoServer
    } else if msg.contains("can't find pane")
        || msg.contains("can't find window")
        || msg.contains("can't find session")
    {
        ErrorCode::PaneNotFound
    } else {
        ErrorCode::Failed
    };
    MuxError::new(code, msg.trim())
}

impl Multiplexer for Tmux {
    fn kind(&self) -> MuxKind {
        MuxKind::Tmux
    }

    fn socket_path(&self) -> &Path {
        &self.socket
    }

    fn server_identity(&self, deadline: Instant) -> Result<ServerIdentity, MuxError> {
        let fmt = ["pid", "start_time", "socket_path"]
            .iter()
            .map(|f| format!("#{{{f}}}"))
            .collect::<Vec<_>>()
            .join("\u{1f}");
        let out = self.run(
            Args::new("display-message").arg("-p").arg(&fmt),
            None,
            deadline,
            SMALL_CAP,
        )?;
        let text = String::from_utf8_lossy(&out.stdout);
        let line = text.strip_suffix('\n').unwrap_or(&text);
        let mut parts = line.splitn(3, '\u{1f}');
        let server_pid = parts
            .next()
            .and_then(|p| p.parse().ok())
            .filter(|&p: &i32| p > 0);
        let start_time = parts
            .next()
            .and_then(|p| p.parse().ok())
            .filter(|&t: &i64| t > 0);
        let socket_path = parts.next().filter(|s| !s.is_empty());
        match (server_pid, start_time, socket_path) {
            (Some(server_pid), Some(start_time), Some(sp)) => Ok(ServerIdentity::Tmux {
                socket_path: sp.to_string(),
                server_pid,
                start_time,
            }),
            _ => Err(bad("server identity")),
        }
    }

    fn list_panes(&self, deadline: Instant) -> Result<PaneList, MuxError> {
        self.list(None, deadline)
    }

    fn find_pane(&self, pane_id: &str, deadline: Instant) -> Result<Option<PaneInfo>, MuxError> {
        let pane = PaneId::parse(pane_id)?;
        let list = self.list(Some(&filter_for(&pane)), deadline)?;
        Ok(list.panes.into_iter().find(|p| p.id == pane_id))
    }

    fn split_above(&self, req: &SplitAbove, deadline: Instant) -> Result<PaneInfo, MuxError> {
        self.split_pane_above(req, deadline)
    }

    fn new_window(&self, req: &NewWindow, deadline: Instant) -> Result<PaneInfo, MuxError> {
        self.open_window(req, deadline)
    }

    fn set_marker(&self, pane_id: &str, value: &str, deadline: Instant) -> Result<(), MuxError> {
        let pane = PaneId::parse(pane_id)?;
        if value.is_empty() || value.len() > MAX_MARKER || value.contains(char::is_control) {
            return Err(MuxError::new(ErrorCode::BadRequest, "invalid marker value"));
        }
        // Without `-F` a `set-option` value is stored as given: no format rule applies.
        let args = Args::new("set-option")
            .arg("-p")
            .arg("-t")
            .arg(pane.as_str())
            .arg("--")
            .arg(MARKER_OPTION)
            .arg(value);
        self.run(args, None, deadline, SMALL_CAP).map(|_| ())
    }

    fn read_marker(&self, pane_id: &str, deadline: Instant) -> Result<Option<String>, MuxError> {
        match self.find_pane(pane_id, deadline)? {
            Some(p) => Ok(p.marker),
            None => Err(MuxError::new(ErrorCode::PaneNotFound, pane_id)),
        }
    }

    fn rename(&self, pane_id: &str, name: &str, deadline: Instant) -> Result<(), MuxError> {
        let pane = PaneId::parse(pane_id)?;
        // `select-pane -T` expands formats (`literal`). With -T it only sets the title and
        // returns, so focus does not move.
        let args = Args::new("select-pane")
            .arg("-t")
            .arg(pane.as_str())
            .arg("-T")
            .arg(&literal::pane_title(name)?);
        self.run(args, None, deadline, SMALL_CAP).map(|_| ())
    }

    fn swap(&self, source: &str, target: &str, deadline: Instant) -> Result<bool, MuxError> {
        let (source, target) = (PaneId::parse(source)?, PaneId::parse(target)?);
        if source == target {
            return Ok(false);
        }
        // Without -d, tmux makes the -t pane active; with -d it keeps the active *position*.
        // So: whichever of the two is active goes last as -t; when neither is, -d changes
        // nothing. Decided and done in one server pass.
        let args = Args::new("if-shell")
            .arg("-F")
            .arg("-t")
            .arg(target.as_str())
            .arg("#{pane_active}")
            .arg(&format!("swap-pane -s {source} -t {target}"))
            .arg(&format!(
                "if-shell -F -t {source} '#{{pane_active}}' 'swap-pane -s {target} -t {source}' \
                 'swap-pane -d -s {source} -t {target}'"
            ));
        self.run(args, None, deadline, SMALL_CAP).map(|_| true)
    }

    fn deliver(&self, req: &PiText<'_>, deadline: Instant) -> Result<Typed, Untyped> {
        let socket = self.socket.to_str().ok_or_else(|| {
            Untyped::NoPath(MuxError::new(ErrorCode::BadRequest, "bad socket name").to_string())
        })?;
        typed::deliver(socket, self.path_env.clone(), req, deadline)
    }

    fn close_if_matches(
        &self,
        expected: &PaneIdentity,
        deadline: Instant,
    ) -> Result<CloseOutcome, MuxError> {
        self.compare_and_close(expected, deadline)
    }

    fn jump_to(&self, target: &str, from: Option<&str>, deadline: Instant) -> Result<(), MuxError> {
        self.jump(target, from, deadline)
    }

    fn grow_to(&self, pane_id: &str, lines: u16, deadline: Instant) -> Result<bool, MuxError> {
        Tmux::grow_to(self, pane_id, lines, deadline)
    }

    fn looked_at(&self, pane_id: &str, deadline: Instant) -> Result<bool, MuxError> {
        Ok(self.watched_panes(deadline)?.iter().any(|p| p == pane_id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tmux_env_and_names() {
        let t = Tmux::from_tmux_env("/tmp/a,b/sock,123,0").unwrap();
        assert_eq!(t.socket, Path::new("/tmp/a,b/sock"));
        assert!(Tmux::from_tmux_env("relative,1,0").is_none());
        assert!(Tmux::from_tmux_env("/x").is_none());
        let uid = nix::unistd::getuid().as_raw();
        assert_eq!(
            socket_for_name("work", None).unwrap(),
            PathBuf::from(format!("/tmp/tmux-{uid}/work"))
        );
        assert_eq!(
            socket_for_name("w", Some("/run/t")).unwrap(),
            PathBuf::from(format!("/run/t/tmux-{uid}/w"))
        );
        assert!(socket_for_name("../x", None).is_none());
    }

    /// A stand-in `tmux` that logs every call's arguments to `calls`, answers `-V` with
    /// `tmux <dir/version>` (3.3a when absent) and prints the listings in `outs` on its successive
    /// other calls (the last one again after that), exiting with `dir/rc` (0 when absent).
    fn scripted_tmux(dir: &Path, outs: &[Vec<u8>]) -> Tmux {
        for (i, o) in outs.iter().enumerate() {
            std::fs::write(dir.join(format!("out{}", i + 1)), o).unwrap();
        }
        std::fs::write(dir.join("outlast"), outs.last().unwrap()).unwrap();
        let d = dir.display();
        let script = format!(
            "#!/bin/sh\necho \"$*\" >> {d}/calls\n\
             case \"$*\" in -V) echo \"tmux $(cat {d}/version 2>/dev/null || echo 3.3a)\"; exit 0;; esac\n\
             n=$(cat {d}/count 2>/dev/null || echo 0); n=$((n+1)); echo $n > {d}/count\n\
             cat {d}/out$n 2>/dev/null || cat {d}/outlast\n\
             exit $(cat {d}/rc 2>/dev/null || echo 0)\n"
        );
        let prog = dir.join("tmux");
        std::fs::write(&prog, script).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&prog, std::fs::Permissions::from_mode(0o755)).unwrap();
        // A socket file (nobody listens: the script answers).
        drop(std::os::unix::net::UnixListener::bind(dir.join("sock")).unwrap());
        Tmux::at_socket(&dir.join("sock")).with_program(&prog)
    }

    fn calls(dir: &Path) -> Vec<String> {
        std::fs::read_to_string(dir.join("calls"))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    fn soon() -> Instant {
        Instant::now() + std::time::Duration::from_secs(5)
    }

    #[test]
    fn no_socket_file_is_no_server_without_a_spawn() {
        let dir = tempfile::tempdir().unwrap();
        let good = listing::tests::sample_running("%1", b"sleep", b"/w", b"s");
        let t = scripted_tmux(dir.path(), &[good]);
        std::fs::remove_file(dir.path().join("sock")).unwrap();
        let e = t.list_panes(soon()).unwrap_err();
        assert_eq!(e.code, ErrorCode::NoServer);
        assert!(calls(dir.path()).is_empty(), "tmux was run");
        let gone = t.with_program(dir.path().join("absent"));
        let e = gone.list_panes(soon()).unwrap_err();
        assert_eq!(e.code, ErrorCode::NotInstalled);
    }

    #[test]
    fn a_listing_that_says_its_version_is_the_only_tmux_run() {
        let dir = tempfile::tempdir().unwrap();
        let good = listing::tests::sample_running("%1", b"sleep", b"/w", b"s");
        let t = scripted_tmux(dir.path(), &[good]);
        for _ in 0..3 {
            let list = t.list_panes(soon()).unwrap();
            assert_eq!(list.panes[0].current_command.as_deref(), Some("sleep"));
        }
        let calls = calls(dir.path());
        assert_eq!(calls.len(), 3, "{calls:?}");
        for c in &calls {
            // `list-panes` never starts a server: no `-N`, so no version of the client needed.
            assert!(c.starts_with("-u -S ") && c.contains(" list-panes -a -F #{q:version}|"));
        }
        // A command that changes something still checks the client once (and passes `-N`).
        t.set_marker("%1", "m", soon()).unwrap();
        t.set_marker("%1", "m", soon()).unwrap();
        let calls = super::tests::calls(dir.path());
        assert_eq!(calls[3], "-V");
        assert!(calls[4].starts_with("-N -u -S ") && calls[5].starts_with("-N -u -S "));
        assert_eq!(calls.len(), 6, "{calls:?}");
    }

    #[test]
    fn a_server_too_old_or_silent_about_its_version_is_checked_as_before() {
        // The server says 3.1: refused from the listing alone.
        let dir = tempfile::tempdir().unwrap();
        let old = listing::tests::sample_of(b"3.1c", "%1", b"pi", b"/w", b"s");
        let t = scripted_tmux(dir.path(), &[old]);
        assert_eq!(t.list_panes(soon()).unwrap_err().code, ErrorCode::TooOld);
        assert_eq!(calls(dir.path()).len(), 1);

        // No version printed (older than `#{version}`): `tmux -V` decides, once per process.
        let dir = tempfile::tempdir().unwrap();
        let silent = listing::tests::sample_of(b"", "%1", b"pi", b"/w", b"s");
        let t = scripted_tmux(dir.path(), &[silent]);
        t.list_panes(soon()).unwrap();
        t.list_panes(soon()).unwrap();
        let v = calls(dir.path()).iter().filter(|c| *c == "-V").count();
        assert_eq!((calls(dir.path()).len(), v), (3, 1));
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("version"), "3.0").unwrap();
        let silent = listing::tests::sample_of(b"", "%1", b"pi", b"/w", b"s");
        let t = scripted_tmux(dir.path(), &[silent]);
        assert_eq!(t.list_panes(soon()).unwrap_err().code, ErrorCode::TooOld);

        // A listing refused by a tmux that does not know what was asked: too old, not failed.
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("version"), "3.1").unwrap();
        std::fs::write(dir.path().join("rc"), "1").unwrap();
        let t = scripted_tmux(dir.path(), &[b"unknown flag -f".to_vec()]);
        let e = t.find_pane("%1", soon()).unwrap_err();
        assert_eq!(e.code, ErrorCode::TooOld);
        // The same refusal from a tmux new enough is what tmux said.
        std::fs::write(dir.path().join("version"), "3.3a").unwrap();
        // Another PATH: another cache key, so `-V` is asked again.
        let t = t.with_path_env("/usr/bin:/bin:/usr/bin/.");
        let e = t.find_pane("%1", soon()).unwrap_err();
        assert_eq!(e.code, ErrorCode::Failed);
    }
}
