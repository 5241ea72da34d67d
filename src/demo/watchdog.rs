//! The demo's watchdog: the one process that builds the demo's private tmux server and the one
//! that tears everything down again, however the demo ends (docs/behaviour.md §9).
//!
//! Why a separate process: a demo killed with SIGKILL runs no clean-up of its own, and a signal
//! sent to the demo's whole process group (`timeout -s INT`, Ctrl-C, a closed terminal) also hits
//! the tmux clients it is running at that moment — a `new-session` client killed mid-start leaves
//! a server the demo never learnt about. So the demo starts `intercom-pane demo-watchdog` first:
//! - in a session of its own (`setsid`), so no terminal or process-group signal reaches it;
//! - a child subreaper (`PR_SET_CHILD_SUBREAPER`) that starts the tmux server itself: tmux's
//!   server detaches from its client, and every process that loses its parent below the
//!   watchdog (the server, then its panes' agents and the monitor) is re-parented to it. Its
//!   children are therefore provably the demo's, and a child's pid cannot be reused before the
//!   watchdog reaps it, so ending them by pid never hits anyone else;
//! - its standard input is the read end of a pipe whose only write end the demo holds (close on
//!   exec, so no other child inherits it): end of file there means the demo has ended, by any
//!   means, SIGKILL included. Then it asks the server to exit, ends whatever of its children is
//!   left (SIGTERM, then SIGKILL), removes the demo's folder and says `cleaned` on its output.
//!
//! The demo waits for `ready` (or `error: …`) after the start and for `cleaned` when it ends, so
//! a person sees the demo finish only once nothing is left.

use std::io::{Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::cli::DemoWatchdogArgs;
use crate::mux::session::PrivateServer;

use super::{start_tmux, write_files, DemoLayout, DemoSeat};

/// How long the watchdog may take to build the server (about ten tmux steps, 5 s each at most).
pub(crate) const START_DEADLINE: Duration = Duration::from_secs(60);
/// How long the demo waits for `cleaned` before cleaning up itself.
pub(crate) const FINISH_DEADLINE: Duration = Duration::from_secs(15);
/// How long the watchdog gives its children to end, SIGTERM first, then SIGKILL.
const END_DEADLINE: Duration = Duration::from_secs(5);
const TERM_GRACE: Duration = Duration::from_millis(800);
/// Longest line read from the watchdog.
const LINE_CAP: usize = 4096;

/// What the demo needs to start the server, handed to the watchdog as one JSON argument.
#[derive(serde::Serialize, serde::Deserialize)]
struct Plan {
    coordinator_id: String,
    coordinator_port: u16,
    workers: Vec<DemoSeat>,
    /// The person's terminal size, measured by the demo (the watchdog has no terminal).
    #[serde(default)]
    size: Option<(u16, u16)>,
    /// The demo's tmux prefix key (`super::demo_prefix`).
    #[serde(default)]
    prefix: Option<String>,
}

/// The demo's side: the watchdog process, the write end of its lifeline and its output.
pub(crate) struct Watchdog {
    lifeline: Mutex<Option<OwnedFd>>,
    out: Mutex<(Option<ChildStdout>, Vec<u8>)>,
    child: Mutex<Child>,
}

/// Signals the demo takes on its signal thread; the watchdog and tmux start with them unblocked.
pub(crate) fn quit_signals() -> nix::sys::signal::SigSet {
    use nix::sys::signal::{SigSet, Signal};
    let mut set = SigSet::empty();
    for s in [Signal::SIGHUP, Signal::SIGTERM, Signal::SIGINT] {
        set.add(s);
    }
    set
}

/// Why the demo's watchdog did not start, or did not start the server.
#[derive(Debug)]
pub(crate) enum WatchdogError {
    Plan(serde_json::Error),
    NoBinary(std::io::Error),
    Pipe(nix::Error),
    NotStarted(std::io::Error),
    /// What the watchdog itself said went wrong.
    Said(String),
    EndedEarly,
}

impl std::fmt::Display for WatchdogError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WatchdogError::Plan(e) => write!(f, "{e}"),
            WatchdogError::NoBinary(e) => write!(f, "cannot find this binary: {e}"),
            WatchdogError::Pipe(e) => write!(f, "cannot make a pipe: {}", e.desc()),
            WatchdogError::NotStarted(e) => write!(f, "cannot start the demo's watchdog: {e}"),
            WatchdogError::Said(l) => f.write_str(l),
            WatchdogError::EndedEarly => {
                f.write_str("the demo's watchdog ended without starting the tmux server")
            }
        }
    }
}

impl Watchdog {
    /// Start the watchdog for the demo at `layout` (its folder already set up).
    pub(crate) fn start(
        layout: &DemoLayout,
        workers: &[DemoSeat],
        keep: bool,
        prefix: &str,
    ) -> Result<Watchdog, WatchdogError> {
        use std::os::unix::process::CommandExt;
        let plan = Plan {
            coordinator_id: layout.coordinator_id.clone(),
            coordinator_port: layout.coordinator_port,
            workers: workers.to_vec(),
            size: Some(super::server_size()),
            prefix: Some(prefix.to_string()),
        };
        let plan = serde_json::to_string(&plan).map_err(WatchdogError::Plan)?;
        let exe = std::env::current_exe().map_err(WatchdogError::NoBinary)?;
        let (read, write) =
            nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(WatchdogError::Pipe)?;
        let mut cmd = Command::new(exe);
        cmd.arg("demo-watchdog")
            .arg("--base")
            .arg(&layout.base)
            .arg("--plan")
            .arg(plan);
        if keep {
            cmd.arg("--keep");
        }
        cmd.stdin(Stdio::from(read))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .env_remove("TMUX")
            .env_remove("TMUX_PANE");
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                nix::unistd::setsid().map_err(std::io::Error::from)?;
                crate::mux::session::unblock_signals();
                Ok(())
            });
        }
        let mut child = cmd.spawn().map_err(WatchdogError::NotStarted)?;
        let out = child.stdout.take();
        Ok(Watchdog {
            lifeline: Mutex::new(Some(write)),
            out: Mutex::new((out, Vec::new())),
            child: Mutex::new(child),
        })
    }

    /// Wait for the watchdog to say the server is up (`Ok`) or why not.
    pub(crate) fn wait_ready(&self) -> Result<(), WatchdogError> {
        match self.read_line(Instant::now() + START_DEADLINE) {
            Some(l) if l == "ready" => Ok(()),
            Some(l) => Err(WatchdogError::Said(
                l.strip_prefix("error: ").unwrap_or(&l).to_string(),
            )),
            None => Err(WatchdogError::EndedEarly),
        }
    }

    /// Tell the watchdog the demo ends and wait (bounded) until it says everything is gone.
    /// `true` when it confirmed; safe to call more than once and from any thread.
    pub(crate) fn finish(&self) -> bool {
        drop(lock(&self.lifeline).take());
        let deadline = Instant::now() + FINISH_DEADLINE;
        let mut confirmed = false;
        while let Some(line) = self.read_line(deadline) {
            if line == "cleaned" {
                confirmed = true;
                break;
            }
        }
        let mut child = lock(&self.child);
        while Instant::now() < deadline {
            match child.try_wait() {
                Ok(None) => std::thread::sleep(Duration::from_millis(10)),
                _ => break,
            }
        }
        confirmed
    }

    /// One line of the watchdog's output, or `None` at its end or the deadline.
    fn read_line(&self, deadline: Instant) -> Option<String> {
        let mut guard = lock(&self.out);
        let (pipe, buf) = &mut *guard;
        loop {
            if let Some(nl) = buf.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = buf.drain(..=nl).collect();
                return Some(String::from_utf8_lossy(&line[..nl]).trim().to_string());
            }
            let p = pipe.as_mut()?;
            if buf.len() > LINE_CAP || !wait_readable(p.as_raw_fd(), deadline) {
                return None;
            }
            let mut chunk = [0u8; 512];
            match p.read(&mut chunk) {
                Ok(0) | Err(_) => {
                    *pipe = None;
                    return None;
                }
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Wait until `fd` is readable (data or end of file) or the deadline passes.
fn wait_readable(fd: i32, deadline: Instant) -> bool {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = i32::try_from(left.as_millis().max(1)).unwrap_or(i32::MAX);
        // SAFETY: one valid pollfd for the duration of the call.
        let r = unsafe { libc::poll(&mut p, 1, ms) };
        if r > 0 {
            return true;
        }
        if r < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return false;
        }
    }
}

/// `intercom-pane demo-watchdog`: start the server, wait for the demo to end, clean up.
pub(crate) fn serve(args: &DemoWatchdogArgs) -> i32 {
    use nix::sys::signal::{signal, SigHandler, Signal};
    // Signals meant for a terminal or a process group are not meant for us.
    for s in [Signal::SIGINT, Signal::SIGHUP, Signal::SIGQUIT] {
        // SAFETY: installing SIG_IGN runs no handler code.
        let _ = unsafe { signal(s, SigHandler::SigIgn) };
    }
    let _ = nix::sys::prctl::set_child_subreaper(true);
    let base = args.base.clone();
    let started = serde_json::from_str::<Plan>(&args.plan)
        .map_err(|e| format!("bad plan: {e}"))
        .and_then(|plan| {
            let layout = DemoLayout::at(&base, plan.coordinator_id.clone(), plan.coordinator_port);
            write_files(&layout, &plan.workers)
                .map_err(|e| format!("cannot set up {}: {e}", base.display()))?;
            let size = plan.size.unwrap_or(super::DEFAULT_SIZE);
            // Only a prefix of ours reaches tmux (the plan is data, however it came).
            let prefix = match plan.prefix.as_deref() {
                Some("C-a") => "C-a",
                _ => "C-b",
            };
            start_tmux(&layout, &plan.workers, size, prefix).map_err(|e| e.to_string())
        });
    let mut out = std::io::stdout();
    let _ = match &started {
        Ok(_) => writeln!(out, "ready"),
        Err(e) => writeln!(out, "error: {}", crate::text::sanitize(e)),
    };
    let _ = out.flush();
    if started.is_ok() {
        wait_for_end_of_demo();
    }
    clean_up(&base.join("tmux.sock"), &base, args.keep);
    let _ = writeln!(out, "cleaned");
    let _ = out.flush();
    0
}

/// Block until the demo's end of the pipe on standard input is closed (the kernel closes it
/// when the demo ends, however it ends), reaping adopted orphans meanwhile.
fn wait_for_end_of_demo() {
    let mut stdin = std::io::stdin();
    let mut buf = [0u8; 64];
    loop {
        if wait_readable(0, Instant::now() + Duration::from_secs(1)) {
            match stdin.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
        reap();
    }
}

/// Reap every child that has ended (adopted ones included).
fn reap() {
    use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
    for _ in 0..4096 {
        match waitpid(None, Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::StillAlive) | Err(_) => return,
            Ok(_) => {}
        }
    }
}

/// The server asked to exit, every child of ours ended, the folder removed (unless kept).
fn clean_up(socket: &Path, base: &Path, keep: bool) {
    PrivateServer {
        socket: socket.to_path_buf(),
    }
    .kill();
    end_children();
    if !keep {
        remove_folder(base);
    }
}

/// End every child of this process: SIGTERM for a moment, then SIGKILL, reaping as they go.
/// Children of ended children are re-parented to us (we are their subreaper) and ended in turn.
fn end_children() {
    use nix::sys::signal::{kill, Signal};
    let me = std::process::id() as i32;
    let started = Instant::now();
    while started.elapsed() < END_DEADLINE {
        reap();
        let kids = crate::proc::children_of(me).unwrap_or_else(|| {
            let map = crate::proc::parent_map();
            let mut k: Vec<i32> = map
                .iter()
                .filter(|(_, p)| **p == me)
                .map(|(c, _)| *c)
                .collect();
            k.sort_unstable();
            k
        });
        if kids.is_empty() {
            return;
        }
        let sig = if started.elapsed() < TERM_GRACE {
            Signal::SIGTERM
        } else {
            Signal::SIGKILL
        };
        for k in kids {
            let _ = kill(nix::unistd::Pid::from_raw(k), sig);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Remove the demo's folder; an agent that was still writing may have added a file: retried.
pub(crate) fn remove_folder(base: &Path) {
    for _ in 0..5 {
        match std::fs::remove_dir_all(base) {
            Ok(()) => return,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
            Err(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    }
}
