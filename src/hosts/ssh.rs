//! The transport: OpenSSH's own `ssh` client, the only program this crate runs to reach
//! another host (docs/interop.md §13).
//!
//! Every call gets the same options: `BatchMode=yes` (never a password or passphrase prompt in
//! the background), `StrictHostKeyChecking=yes` (an unknown or changed host key is refused,
//! never accepted: the person manages `known_hosts`), a connect timeout, keep-alives that end a
//! connection whose peer stopped answering within about 6 s, and one multiplexed connection per
//! host (`ControlMaster=auto`, `ControlPersist`, the control sockets in a private 0700 folder).
//! What ssh prints on stderr is captured (capped) and classified: it reaches the host's status
//! line and the log, never the screen. The remote command is one string built by
//! `hosts::quote` (each word quoted, always); no forwarding of any kind is asked for.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use super::stream_lines::Lines;
pub(crate) use super::stream_lines::StreamEnd;
use super::{quote, Host, HostName};
use crate::mux::spawn::{self, RunError};

/// Give up on a TCP connect (and ssh's own handshake) after this long.
pub(crate) const CONNECT_TIMEOUT_SECS: u32 = 5;
/// Keep-alive every 2 s; 3 unanswered end the connection (a dead peer is noticed in ~6 s).
const ALIVE_INTERVAL_SECS: u32 = 2;
const ALIVE_COUNT: u32 = 3;
/// The shared connection outlives its last channel by this long.
const PERSIST_SECS: u32 = 60;
/// At most this many channels per host from one process (sshd's `MaxSessions` defaults to
/// 10: a sidebar and a few commands stay well below it).
pub(crate) const MAX_CHANNELS: usize = 4;
/// Most of ssh's stderr kept for a status line.
const STDERR_KEEP: usize = 2048;
/// The host's own `timeout` ends a remote command with TERM at its limit and with KILL this
/// many seconds later: bounded there even when this machine can no longer reach it.
const REMOTE_KILL_AFTER: u64 = 1;
/// Longest life of a stream there (`status --watch`); the board starts a new one when it ends.
pub(crate) const STREAM_LIFETIME_SECS: u64 = 3600;
/// The exit codes of `timeout` when it ended its command (TERM; KILL).
const TIMED_OUT: [i32; 2] = [124, 137];
/// The environment variable that marks every process of one remote command (its token), so
/// that exactly those can be ended there (`end_remote`).
const CALL_VAR: &str = "INTERCOM_PANE_CALL";

/// What bounds one remote command on its host: its time limit (the host's `timeout`) and the
/// token in its environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Limit {
    secs: u64,
    token: String,
}

impl Limit {
    pub(crate) fn new(secs: u64) -> Limit {
        let t = uuid::Uuid::new_v4().simple().to_string();
        Limit {
            secs: secs.max(1),
            token: t.get(..20).unwrap_or(&t).to_string(),
        }
    }

    /// A limit that ends the command there (KILL included) before `deadline` here.
    fn before(deadline: Instant) -> Limit {
        let left = deadline.saturating_duration_since(Instant::now()).as_secs();
        Limit::new(left.saturating_sub(REMOTE_KILL_AFTER + 1))
    }

    /// The remote command line: the token in its environment, the host's `timeout`, then the
    /// words (each quoted). The token is hex: it needs no quoting.
    fn line(&self, words: &[String]) -> Result<String, quote::NulInWord> {
        let mut all = vec![
            "timeout".to_string(),
            "-k".into(),
            REMOTE_KILL_AFTER.to_string(),
            self.secs.to_string(),
        ];
        all.extend(words.iter().cloned());
        Ok(format!(
            "{CALL_VAR}={} {}",
            self.token,
            quote::command(&all)?
        ))
    }

    /// A shell line for the host that ends every process still carrying this command's token
    /// (its `timeout`, its program and what that started), and nothing else.
    fn end_line(&self) -> String {
        format!(
            "for f in $(grep -ls '{CALL_VAR}={tok}' /proc/[0-9]*/environ); do p=${{f#/proc/}}; \
             kill -KILL \"${{p%/environ}}\" 2>/dev/null; done; exit 0",
            tok = self.token
        )
    }
}

/// Longest control folder: ssh binds `<folder>/<%C: 40 hex>.<16 random>` first, and a socket
/// path has at most 107 bytes.
const MAX_CONTROL_DIR: usize = 107 - 1 - 40 - 17;

/// Where the control sockets are, and why the usual folder was not used (when it was not).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Control {
    pub dir: PathBuf,
    /// The usual folder and why it was refused, when this is the fallback.
    pub fallback_for: Option<String>,
}

/// No control folder can be used: every candidate and why (nothing is sent to any host).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControlRefused(pub String);

impl std::fmt::Display for ControlRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "no private ssh control folder: {}", self.0)
    }
}

impl std::error::Error for ControlRefused {}

/// `<base>/ssh`, created 0700, when it and `base` are the caller's own and nobody else may
/// write them (another local user may have made `base` first), and short enough for a socket.
fn private_ssh_dir(base: &Path) -> Result<PathBuf, ControlRefused> {
    let dir = base.join("ssh");
    let shown = |d: &Path| crate::text::sanitize(&d.display().to_string());
    if dir.as_os_str().len() > MAX_CONTROL_DIR {
        return Err(ControlRefused(format!(
            "{} is too long for a socket path (at most {MAX_CONTROL_DIR} bytes)",
            shown(&dir)
        )));
    }
    // Each folder is judged before anything is made inside it.
    for d in [base, &dir] {
        crate::store::create_dir_all_private(d)
            .map_err(|e| ControlRefused(format!("{}: {e}", shown(d))))?;
        crate::fsguard::trusted_dir(d).map_err(|e| {
            ControlRefused(format!(
                "{} {}",
                shown(d),
                crate::fsguard::trust_reason(e, crate::fsguard::owner_of(d))
            ))
        })?;
    }
    Ok(dir)
}

/// The private folder of the control sockets: `$XDG_RUNTIME_DIR/intercom-pane/ssh`, else
/// `/tmp/intercom-pane-<uid>/ssh`; when that one is refused (another user made it first, its
/// mode lets others write), `<data root>/ssh` (`$XDG_STATE_HOME/intercom-pane`, else
/// `~/.local/state/intercom-pane`), which the log (`host_control`) and the doctor name.
pub(crate) fn control() -> Result<Control, ControlRefused> {
    let usual = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .map(|p| p.join("intercom-pane"))
        .unwrap_or_else(|| {
            PathBuf::from(format!("/tmp/intercom-pane-{}", crate::fsguard::my_uid()))
        });
    let first = match private_ssh_dir(&usual) {
        Ok(dir) => {
            return Ok(Control {
                dir,
                fallback_for: None,
            })
        }
        Err(why) => why.0,
    };
    let Some(root) = crate::cmd::options::default_data_root() else {
        return Err(ControlRefused(format!(
            "{first}; and no data root (set HOME or XDG_STATE_HOME)"
        )));
    };
    match private_ssh_dir(&root) {
        Ok(dir) => {
            static SAID: std::sync::Once = std::sync::Once::new();
            SAID.call_once(|| {
                crate::log::write(&crate::log::HostControl {
                    dir: dir.display().to_string(),
                    refused: &first,
                })
            });
            Ok(Control {
                dir,
                fallback_for: Some(first),
            })
        }
        Err(second) => Err(ControlRefused(format!("{first}; and {}", second.0))),
    }
}

/// `control`'s folder.
pub fn control_dir() -> Result<PathBuf, ControlRefused> {
    control().map(|c| c.dir)
}

/// How ssh is asked for a terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tty {
    /// `-T`: commands and streams.
    No,
    /// `-t`: an attached tmux client (jump).
    Yes,
}

/// The options every ssh call gets (before the destination).
fn options(host: &Host, control: &Path) -> Vec<OsString> {
    let mut a: Vec<OsString> = Vec::with_capacity(40);
    if let Some(cfg) = &host.ssh_config {
        a.push("-F".into());
        a.push(cfg.clone().into());
    }
    let opts = [
        "BatchMode=yes".to_string(),
        "StrictHostKeyChecking=yes".into(),
        format!("ConnectTimeout={CONNECT_TIMEOUT_SECS}"),
        format!("ServerAliveInterval={ALIVE_INTERVAL_SECS}"),
        format!("ServerAliveCountMax={ALIVE_COUNT}"),
        "ControlMaster=auto".into(),
        format!("ControlPersist={PERSIST_SECS}"),
        "LogLevel=ERROR".into(),
        "ForwardAgent=no".into(),
        "ForwardX11=no".into(),
        "ClearAllForwardings=yes".into(),
        "PermitLocalCommand=no".into(),
    ];
    for o in opts {
        a.push("-o".into());
        a.push(o.into());
    }
    // `%C` (a hash of this host, the remote host, port and user) keeps the path short.
    let mut cp = OsString::from("ControlPath=");
    cp.push(control.join("%C"));
    a.push("-o".into());
    a.push(cp);
    a
}

/// The full argv of `ssh` running `words` on `host` (quoted here, each word), under `limit`
/// there when given (every command but an attached terminal's, which ends with its pty).
pub(crate) fn argv(
    host: &Host,
    control: &Path,
    words: &[String],
    tty: Tty,
    limit: Option<&Limit>,
) -> Result<Vec<OsString>, quote::NulInWord> {
    let mut a = options(host, control);
    a.push(if tty == Tty::Yes { "-t" } else { "-T" }.into());
    a.push("--".into());
    a.push(host.dest.clone().into());
    a.push(
        match limit {
            Some(l) => l.line(words)?,
            None => quote::command(words)?,
        }
        .into(),
    );
    Ok(a)
}

/// The words of a remote command: the host's program, then `words`.
pub(crate) fn remote_words(host: &Host, words: &[&str]) -> Vec<String> {
    std::iter::once(host.bin.clone())
        .chain(words.iter().map(|w| w.to_string()))
        .collect()
}

/// What ssh's stderr and exit say about the host (ssh exits 255 on its own errors).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Problem {
    /// No key of that host is in `known_hosts`: refused (the person adds it).
    HostKeyUnknown,
    /// The host's key differs from the one in `known_hosts`: refused.
    HostKeyChanged,
    /// The host refused every key (or no key could be used without a prompt).
    AuthFailed,
    /// Connect refused or timed out, no route, the connection dropped or stopped answering.
    NotAnswering(String),
    /// Something else ssh said.
    Other(String),
}

impl Problem {
    /// Classify ssh's own failure from what it printed.
    pub(crate) fn classify(stderr: &str) -> Problem {
        let s = stderr;
        let detail = || crate::text::one_line(s, 200);
        if s.contains("REMOTE HOST IDENTIFICATION HAS CHANGED")
            || s.contains("Host key for") && s.contains("has changed")
        {
            Problem::HostKeyChanged
        } else if s.contains("host key is known for") || s.contains("Host key verification failed")
        {
            Problem::HostKeyUnknown
        } else if s.contains("Permission denied") || s.contains("Too many authentication failures")
        {
            Problem::AuthFailed
        } else if [
            "Connection refused",
            "Connection timed out",
            "timed out",
            "No route to host",
            "Network is unreachable",
            "Connection reset",
            "Connection closed",
            "not responding",
            "Broken pipe",
            "Could not resolve hostname",
            "kex_exchange_identification",
            "closed by remote host",
        ]
        .iter()
        .any(|m| s.contains(m))
        {
            Problem::NotAnswering(detail())
        } else {
            Problem::Other(detail())
        }
    }

    /// A short phrase for the host's status.
    pub(crate) fn describe(&self) -> String {
        match self {
            Problem::HostKeyUnknown => {
                "host key unknown (refused: add it to known_hosts after checking it)".into()
            }
            Problem::HostKeyChanged => {
                "host key changed (refused: check the host, then fix known_hosts)".into()
            }
            Problem::AuthFailed => "authentication failed (BatchMode: no prompts)".into(),
            Problem::NotAnswering(d) | Problem::Other(d) => d.clone(),
        }
    }
}

/// How one remote call ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Call {
    /// The remote program ran and exited with this code (its stdout, capped).
    Exited {
        code: i32,
        stdout: Vec<u8>,
        stderr: String,
    },
    /// ssh itself failed (exit 255) or was ended by a signal: the remote program may or may not
    /// have run.
    Ssh(Problem),
    /// The deadline passed and ssh was killed: the outcome on the host is unknown.
    Timeout { stderr: String },
    /// The answer was larger than the cap: ssh was killed.
    Oversize,
    /// `ssh` could not be started, the control folder or a word was refused, or the host's
    /// channels were all busy until the deadline: nothing was sent.
    NotStarted(String),
}

impl Call {
    /// What went wrong, in words (for a call that did not exit 0).
    pub(crate) fn describe(&self) -> String {
        match self {
            Call::Exited { code, stderr, .. } => format!(
                "its program failed (exit {code}): {}",
                crate::text::one_line(stderr, 200)
            ),
            Call::Ssh(p) => p.describe(),
            Call::Timeout { .. } => "no answer before the deadline".into(),
            Call::Oversize => "its answer was larger than the cap".into(),
            Call::NotStarted(why) => why.clone(),
        }
    }
}

/// The per-host channel budget of this process.
static CHANNELS: Mutex<Vec<(HostName, usize)>> = Mutex::new(Vec::new());
static CHANNEL_FREED: Condvar = Condvar::new();

/// One channel of a host, returned when dropped.
pub(crate) struct ChannelSlot(HostName);

impl ChannelSlot {
    /// Wait (until `deadline`) for one of the host's `MAX_CHANNELS`.
    pub(crate) fn take(host: &HostName, deadline: Instant) -> Option<ChannelSlot> {
        let mut g = CHANNELS.lock().ok()?;
        loop {
            let used = g.iter().find(|(h, _)| h == host).map_or(0, |(_, n)| *n);
            if used < MAX_CHANNELS {
                match g.iter_mut().find(|(h, _)| h == host) {
                    Some((_, n)) => *n += 1,
                    None => g.push((host.clone(), 1)),
                }
                return Some(ChannelSlot(host.clone()));
            }
            let left = deadline.checked_duration_since(Instant::now())?;
            g = CHANNEL_FREED.wait_timeout(g, left).ok()?.0;
        }
    }
}

impl Drop for ChannelSlot {
    fn drop(&mut self) {
        if let Ok(mut g) = CHANNELS.lock() {
            if let Some((_, n)) = g.iter_mut().find(|(h, _)| *h == self.0) {
                *n = n.saturating_sub(1);
            }
        }
        CHANNEL_FREED.notify_all();
    }
}

/// Why ssh was not started for a call or a stream.
#[derive(Debug)]
pub(crate) enum NotStarted {
    Control(ControlRefused),
    Word(quote::NulInWord),
    Busy(String),
    Spawn(std::io::Error),
    Thread(std::io::Error),
}

impl std::fmt::Display for NotStarted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotStarted::Control(e) => write!(f, "{e}"),
            NotStarted::Word(e) => write!(f, "{e}"),
            NotStarted::Busy(host) => {
                write!(f, "all {MAX_CHANNELS} channels to host {host} are busy")
            }
            NotStarted::Spawn(e) => write!(f, "ssh could not start: {e}"),
            NotStarted::Thread(e) => write!(f, "a thread to read ssh could not start: {e}"),
        }
    }
}

fn ssh_command(host: &Host, words: &[String], limit: &Limit) -> Result<Command, NotStarted> {
    let control = control_dir().map_err(NotStarted::Control)?;
    let argv = argv(host, &control, words, Tty::No, Some(limit)).map_err(NotStarted::Word)?;
    used(host);
    let mut cmd = Command::new("ssh");
    cmd.args(argv);
    Ok(cmd)
}

/// The hosts this process reached (their shared connections are stopped when it ends).
static USED: Mutex<Vec<Host>> = Mutex::new(Vec::new());

fn used(host: &Host) {
    if let Ok(mut g) = USED.lock() {
        if !g.iter().any(|h| h == host) {
            g.push(host.clone());
        }
    }
}

/// Stop the shared connection of every host this process reached (`ssh -O stop`): it takes no
/// new channel and ends once the channels still open (another command's) are done — so a
/// board or command that ends leaves no connection of its own behind, and never cuts one that
/// another command is using. Bounded: 3 s per host.
pub(crate) fn end_masters() {
    end_streams();
    let hosts = USED
        .lock()
        .map(|mut g| std::mem::take(&mut *g))
        .unwrap_or_default();
    stop_masters(&hosts);
}

/// `end_masters` for these hosts only (a board that ends, in a process that goes on).
pub(crate) fn stop_masters(hosts: &[Host]) {
    for host in hosts {
        let _ = housekeeping(host, &["-O", "stop"], None, "stop", Duration::from_secs(3));
    }
    // Forgotten only once stopped: a process that ends meanwhile (its board's thread cut
    // short) still stops them in `end_masters` (a second stop of one is harmless).
    if let Ok(mut g) = USED.lock() {
        g.retain(|h| !hosts.contains(h));
    }
}

/// One short ssh call of this crate's own (`-O stop`, ending a stream's processes): `flags`
/// before the destination, `line` run there when given; logged as `host_call` with `what`.
/// Whether it ran there and ended well (exit 0).
fn housekeeping(
    host: &Host,
    flags: &[&str],
    line: Option<String>,
    what: &str,
    within: Duration,
) -> bool {
    let Ok(control) = control_dir() else {
        return false;
    };
    let mut a = options(host, &control);
    a.extend(flags.iter().map(OsString::from));
    a.extend(["--".into(), host.dest.clone().into()]);
    a.extend(line.map(OsString::from));
    let mut cmd = Command::new("ssh");
    cmd.args(a);
    let r = spawn::run(&mut cmd, None, Instant::now() + within, 4096);
    crate::log::write(&crate::log::HostCall {
        host: host.name.as_str(),
        what: Some(what),
        exit: r.as_ref().ok().and_then(|o| o.status.code()),
        ssh: None,
        stderr: None,
    });
    r.is_ok_and(|o| o.status.success())
}

/// End every process on `host` that still carries `limit`'s token (a stream this machine gave
/// up on: its program there may hang and never notice). Bounded by a 4 s deadline. Whether it
/// ran there (when not, the host was out of reach: ask again once it answers).
pub(crate) fn end_remote(host: &Host, limit: &Limit) -> bool {
    let Some(_slot) = ChannelSlot::take(&host.name, Instant::now() + Duration::from_secs(1)) else {
        return false;
    };
    let line = Some(limit.end_line());
    housekeeping(host, &["-T"], line, "end_remote", Duration::from_secs(4))
}

/// How ssh's own messages begin or what they hold (OpenSSH's client and its connection
/// sharing), as opposed to what the program there wrote on its stderr.
const SSH_OWN_START: [&str; 12] = [
    "mux_",
    "muxclient",
    "Control socket",
    "ControlSocket ",
    "ssh: ",
    "ssh_",
    "client_loop:",
    "Warning: Permanently added",
    "Shared connection to ",
    "Connection to ",
    "Timeout, server ",
    "kex_exchange_identification",
];
const SSH_OWN_HOLD: [&str; 4] = [
    "disabling multiplexing",
    "master hello exchange failed",
    ": open failed: ",
    "Host key verification failed",
];

/// Split what came on ssh's stderr into ssh's own lines and the remote program's.
fn split_stderr(text: &str) -> (String, String) {
    let (mut own, mut theirs) = (String::new(), String::new());
    for line in text.split_inclusive('\n') {
        let l = line.trim_start_matches('\r');
        let is_ssh = SSH_OWN_START.iter().any(|m| l.starts_with(m))
            || SSH_OWN_HOLD.iter().any(|m| l.contains(m));
        if is_ssh {
            own.push_str(line);
        } else {
            theirs.push_str(line);
        }
    }
    (own, theirs)
}

fn stderr_text(b: &[u8]) -> String {
    let s = String::from_utf8_lossy(b);
    s.chars().take(STDERR_KEEP).collect()
}

/// Run `words` on `host` once: stdin fed from `input`, at most `cap` bytes of answer, killed at
/// `deadline` here and ended by its own time limit there just before it.
pub(crate) fn call(
    host: &Host,
    words: &[String],
    input: Option<&[u8]>,
    deadline: Instant,
    cap: usize,
) -> Call {
    let Some(_slot) = ChannelSlot::take(&host.name, deadline) else {
        return Call::NotStarted(format!(
            "all {MAX_CHANNELS} channels to host {} stayed busy",
            host.name
        ));
    };
    let limit = Limit::before(deadline);
    let mut cmd = match ssh_command(host, words, &limit) {
        Ok(c) => c,
        Err(e) => return Call::NotStarted(e.to_string()),
    };
    let out = match spawn::run(&mut cmd, input, deadline, cap) {
        Ok(o) => o,
        Err(RunError::Timeout) => {
            return Call::Timeout {
                stderr: String::new(),
            }
        }
        Err(RunError::Oversize) => return Call::Oversize,
        Err(RunError::NotFound) => return Call::NotStarted("ssh is not installed".into()),
        Err(RunError::Spawn(e)) => return Call::NotStarted(format!("ssh could not start: {e}")),
    };
    let stderr = stderr_text(&out.stderr);
    // Exit 255 is ssh's own failure: all it printed is its own. Otherwise ssh's lines (a stale
    // shared connection, a warning) go to the log only, never on with the program's.
    let (ssh_said, program_said) = match out.status.code() {
        Some(255) | None => (stderr.clone(), String::new()),
        Some(_) => split_stderr(&stderr),
    };
    crate::log::write(&crate::log::HostCall {
        host: host.name.as_str(),
        what: None,
        exit: out.status.code(),
        ssh: Some(crate::text::one_line(&ssh_said, 300)),
        stderr: Some(crate::text::one_line(&program_said, 300)),
    });
    let stderr = program_said;
    match out.status.code() {
        Some(255) | None => Call::Ssh(Problem::classify(&ssh_said)),
        // The host's `timeout` ended it: its time limit passed there.
        Some(code) if TIMED_OUT.contains(&code) => Call::Timeout { stderr },
        Some(code) => Call::Exited {
            code,
            stdout: out.stdout,
            stderr,
        },
    }
}

/// A long-running remote command whose stdout is read line by line.
pub(crate) struct Stream {
    /// Shared with `LIVE`, so that a process that ends can end it too (`Child::kill` never
    /// signals a child already reaped: never another process that took its pid).
    child: std::sync::Arc<Mutex<Child>>,
    host: Host,
    limit: Limit,
    _slot: ChannelSlot,
    lines: Lines<ChildStdout>,
    stderr: std::sync::Arc<Mutex<String>>,
}

/// Ends a stream's ssh here (nothing once the stream is gone): its reader sees the end at
/// once, so it can wait on its lines alone rather than look at a stop flag on a timer.
pub(crate) struct Ender(std::sync::Weak<Mutex<Child>>);

impl Ender {
    pub(crate) fn end_here(&self) {
        if let Some(child) = self.0.upgrade() {
            if let Ok(mut c) = child.lock() {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
    }
}

impl Stream {
    /// Start `words` on `host`, one line at most `line_cap` bytes.
    pub(crate) fn start(
        host: &Host,
        words: &[String],
        line_cap: usize,
    ) -> Result<Stream, NotStarted> {
        let slot = ChannelSlot::take(&host.name, Instant::now() + Duration::from_secs(2))
            .ok_or_else(|| NotStarted::Busy(host.name.to_string()))?;
        let limit = Limit::new(STREAM_LIFETIME_SECS);
        let mut cmd = ssh_command(host, words, &limit)?;
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().map_err(NotStarted::Spawn)?;
        // Read where they are handled (`next_line`): no thread of their own.
        let Some(out) = child.stdout.take() else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(NotStarted::Spawn(std::io::Error::other(
                "ssh has no stdout",
            )));
        };
        let err = child.stderr.take();
        let stderr = std::sync::Arc::new(Mutex::new(String::new()));
        if let Some(mut err) = err {
            let keep = stderr.clone();
            std::thread::Builder::new()
                .name("ip-host-stderr".into())
                .spawn(move || {
                    use std::io::Read;
                    let mut buf = [0u8; 1024];
                    // Ends when ssh (and anything holding its stderr) closes it.
                    while let Ok(n) = err.read(&mut buf) {
                        if n == 0 {
                            break;
                        }
                        if let Ok(mut k) = keep.lock() {
                            if k.len() < STDERR_KEEP {
                                k.push_str(&String::from_utf8_lossy(buf.get(..n).unwrap_or(&[])));
                            }
                        }
                    }
                })
                .map_err(NotStarted::Thread)?;
        }
        let child = std::sync::Arc::new(Mutex::new(child));
        if let Ok(mut live) = LIVE.lock() {
            live.retain(|(_, _, c)| c.strong_count() > 0);
            live.push((
                host.clone(),
                limit.clone(),
                std::sync::Arc::downgrade(&child),
            ));
        }
        Ok(Stream {
            child,
            host: host.clone(),
            limit,
            _slot: slot,
            lines: Lines::new(out, line_cap),
            stderr,
        })
    }

    /// The next line (without its newline), the end of the stream, or `None` when no line came
    /// within `within`. Another thread's `Ender` ends the wait at once (the pipe closes).
    pub(crate) fn next_line(&mut self, within: Duration) -> Option<Result<String, StreamEnd>> {
        self.lines.next(within)
    }

    /// What ssh printed on stderr so far (capped).
    pub(crate) fn stderr(&self) -> String {
        self.stderr.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// ssh's exit code once it has exited (`None` while it runs; 255 for its own failures).
    pub(crate) fn exited(&mut self) -> Option<Option<i32>> {
        let mut c = self.child.lock().ok()?;
        c.try_wait().ok().flatten().map(|s| s.code())
    }

    fn kill_here(&self) {
        self.ender().end_here();
    }

    /// What ends this stream's ssh here from another thread (its lines then end at once).
    pub(crate) fn ender(&self) -> Ender {
        Ender(std::sync::Arc::downgrade(&self.child))
    }

    /// Whether the host's `timeout` ended it at its lifetime (a stream to start again).
    pub(crate) fn lived_out(&mut self) -> bool {
        matches!(self.exited(), Some(Some(c)) if TIMED_OUT.contains(&c))
    }

    /// Give up on this stream: ssh ended here, then every process of it still there (a program
    /// that hangs never notices its channel closed), so a retry never runs beside it.
    /// The limit back when its processes could not be ended there (the host out of reach).
    pub(crate) fn end(self) -> Option<Limit> {
        self.kill_here();
        (!end_remote(&self.host, &self.limit)).then(|| self.limit.clone())
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        self.kill_here();
    }
}

/// The streams this process runs (each host's, its limit, its ssh here).
type Live = Vec<(Host, Limit, std::sync::Weak<Mutex<Child>>)>;
static LIVE: Mutex<Live> = Mutex::new(Vec::new());

/// End every stream this process still runs, here and on its host: a process that ends may
/// not wait for the threads that own them.
fn end_streams() {
    let live = LIVE
        .lock()
        .map(|mut g| std::mem::take(&mut *g))
        .unwrap_or_default();
    // One thread each: a host out of reach costs its own deadline, not the others'.
    let ends: Vec<_> = live
        .into_iter()
        .filter_map(|(host, limit, child)| {
            let child = child.upgrade()?;
            if let Ok(mut c) = child.lock() {
                let _ = c.kill();
                let _ = c.wait();
            }
            std::thread::Builder::new()
                .name("ip-host-end".into())
                .spawn(move || {
                    let _ = end_remote(&host, &limit);
                })
                .ok()
        })
        .collect();
    for e in ends {
        let _ = e.join();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_argv_carries_every_safety_option_and_one_quoted_command() {
        let h = Host::ad_hoc(HostName::parse("b").unwrap(), "u@b.example".into());
        let words = remote_words(&h, &["reply", "x; touch /tmp/p", "$(id)"]);
        let limit = Limit::new(7);
        let a = argv(&h, Path::new("/tmp/ctl"), &words, Tty::No, Some(&limit)).unwrap();
        let a: Vec<String> = a.iter().map(|s| s.to_string_lossy().into_owned()).collect();
        for o in [
            "BatchMode=yes",
            "StrictHostKeyChecking=yes",
            "ControlMaster=auto",
            "ControlPath=/tmp/ctl/%C",
            "ServerAliveInterval=2",
            "ClearAllForwardings=yes",
        ] {
            assert!(a.iter().any(|x| x == o), "{o} missing from {a:?}");
        }
        let n = a.len();
        assert_eq!(a[n - 3..n - 1], ["--".to_string(), "u@b.example".into()]);
        assert_eq!(
            a[n - 1],
            format!(
                "INTERCOM_PANE_CALL={} 'timeout' '-k' '1' '7' 'intercom-pane' 'reply' \
                 'x; touch /tmp/p' '$(id)'",
                limit.token
            )
        );
        assert!(limit.token.chars().all(|c| c.is_ascii_hexdigit()));
        let tty = argv(&h, Path::new("/tmp/ctl"), &words, Tty::Yes, None).unwrap();
        assert_eq!(
            tty.last().unwrap().to_string_lossy(),
            "'intercom-pane' 'reply' 'x; touch /tmp/p' '$(id)'"
        );
        assert!(a.contains(&"-T".to_string()));
    }

    #[test]
    fn ssh_messages_are_classified() {
        let changed = "@@@@@@@@@@@\n@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @\n\
                       Host key verification failed.\n";
        assert_eq!(Problem::classify(changed), Problem::HostKeyChanged);
        let unknown = "No ED25519 host key is known for [10.0.0.2]:2222 and you have requested \
                       strict checking.\r\nHost key verification failed.\r\n";
        assert_eq!(Problem::classify(unknown), Problem::HostKeyUnknown);
        assert_eq!(
            Problem::classify("root@10.0.0.2: Permission denied (publickey).\r\n"),
            Problem::AuthFailed
        );
        assert!(matches!(
            Problem::classify("ssh: connect to host 10.0.0.2 port 2222: Connection refused\r\n"),
            Problem::NotAnswering(_)
        ));
        assert!(matches!(
            Problem::classify("Timeout, server 10.0.0.2 not responding.\r\n"),
            Problem::NotAnswering(_)
        ));
        assert!(matches!(Problem::classify("weird"), Problem::Other(_)));
    }

    #[test]
    fn ssh_own_lines_are_told_from_the_programs() {
        let text = "ControlSocket /tmp/x/ab already exists, disabling multiplexing\r\n\
                    intercom-pane: reply: no seat named \"Zed\"\n\
                    mux_client_request_session: read from master failed: Broken pipe\n\
                    Shared connection to 10.0.0.2 closed.\r\n\
                    the program's last words\n";
        let (own, theirs) = split_stderr(text);
        assert_eq!(
            theirs,
            "intercom-pane: reply: no seat named \"Zed\"\nthe program's last words\n"
        );
        assert_eq!(own.lines().count(), 3, "{own}");
        assert!(own.contains("disabling multiplexing") && own.contains("mux_client"));
    }

    #[test]
    fn channels_per_host_are_bounded() {
        let h = HostName::parse("chan-test").unwrap();
        let soon = || Instant::now() + Duration::from_millis(50);
        let slots: Vec<ChannelSlot> = (0..MAX_CHANNELS)
            .map(|_| ChannelSlot::take(&h, soon()).unwrap())
            .collect();
        assert!(ChannelSlot::take(&h, soon()).is_none());
        let other = HostName::parse("chan-other").unwrap();
        assert!(ChannelSlot::take(&other, soon()).is_some());
        drop(slots);
        assert!(ChannelSlot::take(&h, soon()).is_some());
    }
}
