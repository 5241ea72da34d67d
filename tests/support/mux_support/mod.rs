//! Test support: real tmux servers on private sockets, killed by the test, and a fake `pi`.
#![allow(dead_code)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use intercom_pane::seam::mux::tmux::escape_arg;
use intercom_pane::seam::proc;

/// A deadline `ms` milliseconds from now.
pub fn soon(ms: u64) -> Instant {
    Instant::now() + Duration::from_millis(ms)
}

/// Poll `f` every 20 ms until it returns `Some`, for at most `ms` milliseconds.
pub fn wait_for<T>(ms: u64, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let end = soon(ms);
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if Instant::now() >= end {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `src` under another name at `dest`. A hard link when possible: a freshly written copy can fail
/// to start with "Text file busy" while a parallel test's fork still holds its write descriptor.
pub fn program_named(src: &str, dest: &Path) -> PathBuf {
    if std::fs::hard_link(src, dest).is_err() {
        std::fs::copy(src, dest).expect("copy program");
        std::fs::set_permissions(dest, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    dest.to_path_buf()
}

/// A `sleep` standing in for some process (a fresh shell, another program): killed and reaped
/// when dropped, also when the test fails first, and never holding the harness's output pipes
/// (a leaked one kept a runner's `$(…)` waiting for its 600 s).
pub struct Sleeper(std::process::Child);

impl Sleeper {
    pub fn start(secs: u32) -> Sleeper {
        Sleeper(
            Command::new("sleep")
                .arg(secs.to_string())
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .expect("spawn sleep"),
        )
    }

    pub fn id(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for Sleeper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `sleep` named `pi` in `dir`: `#{pane_current_command}` shows `pi` for it.
pub fn fake_pi(dir: &Path) -> PathBuf {
    program_named("/bin/sleep", &dir.join("pi"))
}

/// A tmux server on `<tempdir>/sock`, started with `-f /dev/null` and a fixed size, killed on
/// drop (first `kill-server`, then SIGKILL of the recorded server process if still alive).
pub struct TmuxServer {
    pub dir: tempfile::TempDir,
    pub sock: PathBuf,
    pub server: Option<proc::ProcIdentity>,
}

/// A tmux client of the test server `sock`, independent of the runner's shell and locale: `-u`
/// (as the tool's own calls) so what it reads back is UTF-8 even in a C locale (tmux replaces
/// every non-ASCII character with `_` for a client it thinks cannot show it), and for the
/// server it starts a UTF-8 `LANG` (its panes are the test's terminal, a UTF-8 one; a client
/// attached in a pane would otherwise draw `_`) and `/bin/sh` as the shell.
pub fn tmux_cmd(sock: &Path) -> Command {
    let mut c = Command::new("tmux");
    c.env_remove("TMUX")
        .env_remove("TMUX_PANE")
        .env_remove("LC_ALL")
        .env_remove("LC_CTYPE")
        .env("LANG", "C.UTF-8")
        .env("SHELL", "/bin/sh")
        .arg("-u")
        .arg("-S")
        .arg(sock);
    c
}

impl TmuxServer {
    /// Start a server with one session `session` in `cwd` running `argv` (a shell when empty).
    pub fn start(session: &str, cwd: &Path, argv: &[&str]) -> TmuxServer {
        let mut s = TmuxServer::unstarted();
        s.launch(session, cwd, argv);
        s
    }

    /// A socket path in a folder of its own, no server yet.
    fn unstarted() -> TmuxServer {
        let dir = tempfile::Builder::new()
            .prefix("mux-test-")
            .tempdir()
            .unwrap();
        let sock = dir.path().join("sock");
        TmuxServer {
            dir,
            sock,
            server: None,
        }
    }

    /// `start`, the server logging (`tmux -v`) into this server's folder: `jobs_run` then lists
    /// every shell command tmux ran for a format (`#(…)`), even one it killed at once (tmux ends
    /// a command client's format jobs when that client exits, so a marker file alone can miss
    /// one).
    pub fn start_logged(session: &str, cwd: &Path, argv: &[&str]) -> TmuxServer {
        let mut s = TmuxServer::unstarted();
        s.launch_with(session, cwd, argv, true);
        s
    }

    /// Every `job_run` line of the server's log (`start_logged`): the commands tmux ran for
    /// formats, and the folder it ran them in.
    pub fn jobs_run(&self) -> Vec<String> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(self.dir.path()).unwrap().flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            if n.starts_with("tmux-server-") && n.ends_with(".log") {
                let text = String::from_utf8_lossy(&std::fs::read(e.path()).unwrap()).into_owned();
                out.extend(
                    text.lines()
                        .filter(|l| l.contains("job_run: cmd="))
                        .map(str::to_string),
                );
            }
        }
        out
    }

    /// A server already running on `sock` (started by the code under test), killed on drop.
    pub fn adopt(sock: &Path) -> TmuxServer {
        let mut s = TmuxServer::unstarted();
        s.sock = sock.to_path_buf();
        let pid: i32 = s
            .tmux(&["display-message", "-p", "#{pid}"])
            .trim()
            .parse()
            .expect("server pid");
        s.server = proc::identity(pid);
        s
    }

    /// (Re)start the server on the same socket.
    pub fn launch(&mut self, session: &str, cwd: &Path, argv: &[&str]) {
        self.launch_with(session, cwd, argv, false);
    }

    fn launch_with(&mut self, session: &str, cwd: &Path, argv: &[&str], logged: bool) {
        let mut c = tmux_cmd(&self.sock);
        // The server's environment is its panes': a HOME of their own, so a shell reads no
        // start-up file of the machine's user (one doing slow or locking work, such as a
        // `pyenv rehash` in `.bashrc`, would hold up every pane of a test). The shell itself is
        // `/bin/sh` (`tmux_cmd`); a test that needs another HOME exports it in its pane.
        let home = self.dir.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        c.env("HOME", &home);
        if logged {
            // The server logs into the folder it starts in (and so does this client).
            c.arg("-v").current_dir(self.dir.path());
        }
        c.args([
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-x",
            "200",
            "-y",
            "50",
            "-s",
        ])
        .arg(escape_arg(session))
        .arg("-c")
        .arg(escape_arg(cwd.to_str().unwrap()));
        if !argv.is_empty() {
            c.arg("--").args(argv.iter().map(|a| escape_arg(a)));
        }
        let out = c.output().expect("run tmux");
        assert!(
            out.status.success(),
            "tmux new-session failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let pid: i32 = self
            .tmux(&["display-message", "-p", "#{pid}"])
            .trim()
            .parse()
            .expect("server pid");
        self.server = proc::identity(pid);
    }

    /// Run a tmux command on this server (test side only) and return its stdout.
    pub fn tmux(&self, args: &[&str]) -> String {
        let out = tmux_cmd(&self.sock)
            .args(args.iter().map(|a| escape_arg(a)))
            .output()
            .expect("run tmux");
        assert!(
            out.status.success(),
            "tmux {:?} failed: {}",
            args,
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Add a session running `argv` (a shell when empty).
    pub fn new_session(&self, name: &str, cwd: &Path, argv: &[&str]) {
        let cwd = cwd.to_str().unwrap();
        let mut args = vec![
            "new-session",
            "-d",
            "-x",
            "200",
            "-y",
            "50",
            "-s",
            name,
            "-c",
            cwd,
        ];
        if !argv.is_empty() {
            args.push("--");
            args.extend_from_slice(argv);
        }
        self.tmux(&args);
    }

    /// Start the real sidebar in a session `mon` of this server, `height` rows tall, watching
    /// the roster `root` and session folder `sessions` with the system config `sys` (no fleet).
    #[allow(dead_code)]
    pub fn start_monitor(&self, cwd: &Path, sys: &Path, root: &Path, sessions: &Path, height: u16) {
        let bin = env!("CARGO_BIN_EXE_intercom-pane");
        let sock = self.sock.display().to_string();
        let (sys, root, sessions) = (
            sys.display().to_string(),
            root.display().to_string(),
            sessions.display().to_string(),
        );
        let argv = [
            bin,
            "monitor",
            "--config",
            &sys,
            "--root",
            &root,
            "--sessions-dir",
            &sessions,
            "--tmux-socket",
            &sock,
            "--fleet",
            "none",
            "--repo",
            &root,
        ];
        self.new_session("mon", cwd, &argv);
        let height = height.to_string();
        self.tmux(&["resize-window", "-t", "mon", "-x", "120", "-y", &height]);
    }

    /// A real client attached to `session` of this server: an outer private server whose one
    /// pane (`cols` × `rows`) runs `tmux attach`. Keys sent to the outer pane reach the client;
    /// dropping the outer server detaches it.
    pub fn attach_client(&self, session: &str, cols: u16, rows: u16) -> TmuxServer {
        let sock = self.sock.to_str().unwrap().to_string();
        let target = format!("={session}");
        let mut outer = TmuxServer {
            dir: tempfile::Builder::new()
                .prefix("mux-client-")
                .tempdir()
                .unwrap(),
            sock: PathBuf::new(),
            server: None,
        };
        outer.sock = outer.dir.path().join("sock");
        let argv = [
            "env",
            "-u",
            "TMUX",
            "TERM=xterm-256color",
            "tmux",
            "-S",
            &sock,
            "attach",
            "-t",
            &target,
        ];
        outer.launch("client", Path::new("/"), &argv);
        outer.tmux(&["set-option", "-g", "status", "off"]);
        let (c, r) = (cols.to_string(), rows.to_string());
        outer.tmux(&["resize-window", "-t", "client", "-x", &c, "-y", &r]);
        wait_for(10_000, || {
            (!self.person_clients("#{client_name}").is_empty()).then_some(())
        })
        .expect("the client attached");
        outer
    }

    /// The active pane of `session`.
    pub fn client_pane_or_active(&self, session: &str) -> String {
        self.tmux(&[
            "display-message",
            "-p",
            "-t",
            &format!("={session}:"),
            "#{pane_id}",
        ])
        .trim()
        .to_string()
    }

    /// `fmt` of each attached client a person looks through: not the control-mode clients a
    /// live sidebar listens with.
    pub fn person_clients(&self, fmt: &str) -> Vec<String> {
        self.tmux(&[
            "list-clients",
            "-F",
            &format!("#{{client_control_mode}}|{fmt}"),
        ])
        .lines()
        .filter_map(|l| l.strip_prefix("0|").map(str::to_string))
        .collect()
    }

    /// The pane the (first) person's client shows now.
    pub fn client_pane(&self) -> String {
        self.person_clients("#{pane_id}")
            .into_iter()
            .next()
            .unwrap_or_default()
    }

    /// The server's pid.
    pub fn pid(&self) -> i32 {
        self.server.as_ref().map(|s| s.pid).unwrap_or(0)
    }

    /// Kill the server now (used to restart it on the same socket).
    pub fn kill(&mut self) {
        let _ = tmux_cmd(&self.sock)
            .arg("kill-server")
            .stderr(std::process::Stdio::null())
            .output();
        if let Some(id) = self.server.take() {
            wait_for(3000, || (!proc::is_alive(&id)).then_some(()));
            if proc::is_alive(&id) {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(id.pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
        }
    }
}

impl Drop for TmuxServer {
    fn drop(&mut self) {
        if let Some(id) = &self.server {
            // A stopped server would make kill-server hang: wake it first.
            if proc::is_alive(id) {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(id.pid),
                    nix::sys::signal::Signal::SIGCONT,
                );
            }
        }
        self.kill();
    }
}
