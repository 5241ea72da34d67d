//! One listener per multiplexer server the board lists, so a window, pane or session that comes
//! or goes makes the engine list that server's panes again at once: a listening tmux control-mode
//! client (`mux::tmux::control`), or Herdr's event subscription (`mux::herdr::events`). A server
//! without a listener (it never attached, or it ended) is listed on a slow timer instead
//! (`SLOW_LIST`), and its listener is started again with a growing pause.

use std::collections::BTreeSet;
use std::os::fd::RawFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::mux::events::{Notice, PaneEvents};
use crate::mux::MuxKind;

use super::pts::{PtsWatch, PtyNews};

/// How often a server without a listening client is listed again.
pub(crate) const SLOW_LIST: Duration = Duration::from_secs(5);
/// First pause before a client is started again; it doubles up to `MAX_BACKOFF`.
const FIRST_BACKOFF: Duration = Duration::from_secs(1);
const MAX_BACKOFF: Duration = Duration::from_secs(60);
/// A client that listened this long starts the next pause from `FIRST_BACKOFF` again.
const STEADY: Duration = Duration::from_secs(60);
/// Deadline for starting one client (its `tmux -V`, the first time).
const START_DEADLINE: Duration = Duration::from_secs(2);
/// Most servers watched at once (as many as a pass lists).
const MAX_SERVERS: usize = 16;

/// A server the board lists, and (tmux) a session on it to attach to (`$N`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerWatch {
    pub kind: MuxKind,
    pub socket: PathBuf,
    pub session: Option<String>,
    /// The tmux server's process (its panes are its children).
    pub server_pid: Option<i32>,
}

/// How often a tmux server without a control client has its child processes compared, unless
/// the pty folder is watched for it (`pts`).
pub(crate) const CHILDREN_EVERY: Duration = Duration::from_millis(400);
/// With the pty folder watched: a compare this often all the same, in case an event was lost
/// (every pane change seen here makes or removes a pty: open, close, `respawn-pane`; the
/// engine's full pass compares too).
const CHILDREN_BACKSTOP: Duration = Duration::from_secs(30);
/// After a pty came or went: compares for `BURST`, the first `BURST_FIRST` after the one at
/// once, each gap then as long as the time since the pty event (25, 50, 100 … 800 ms: seven
/// compares). tmux makes a pane's pty just before it starts the pane's process, so the compare
/// at once can be too early; a machine whose ptys churn (builds, other terminals) costs seven
/// reads of one small file per pty, not ten.
const BURST_FIRST: Duration = Duration::from_millis(25);
const BURST: Duration = Duration::from_secs(1);
/// The fd index `fds` gives the pty watch (server indexes are below `MAX_SERVERS`).
const PTS_INDEX: usize = usize::MAX;

struct Server {
    kind: MuxKind,
    socket: PathBuf,
    session: Option<String>,
    server_pid: Option<i32>,
    /// Its child processes when last compared (tmux without a control client).
    children: Option<Vec<i32>>,
    children_file: ChildrenFile,
    /// The server pid the pty watch was checked for, and whether it covers that server.
    pts_checked: Option<(i32, bool)>,
    /// When a pty came or went last: compares often for `BURST` after it.
    burst_from: Option<Instant>,
    /// The ptys whose master it held at the last look (`None`: not known), so another
    /// program's pty starts no compares.
    masters: Option<BTreeSet<u32>>,
    checked_at: Instant,
    /// This tmux is too old for a control client (`mux::events::CONTROL_FROM`).
    no_control: bool,
    client: Option<PaneEvents>,
    started: Option<Instant>,
    retry_at: Instant,
    backoff: Duration,
    /// When this server was last marked for a slow listing.
    listed_at: Instant,
    /// Starting a client failed with this code (for `doctor` and the log).
    last_error: Option<String>,
}

/// Most bytes of a children list read (about 9,000 pids).
const CHILDREN_CAP: usize = 64 * 1024;

/// The children of a single-threaded process (the tmux server): its main thread's `children`
/// file, kept open, so each compare is one `pread` from its start (no path lookup, open or close
/// a wake; the kernel makes the list afresh for a read from offset 0).
#[derive(Default)]
struct ChildrenFile {
    open: Option<(i32, std::fs::File)>,
}

impl ChildrenFile {
    fn read(&mut self, pid: i32) -> Option<Vec<i32>> {
        use std::os::unix::fs::FileExt;
        if self.open.as_ref().map(|(p, _)| *p) != Some(pid) {
            let path = format!("/proc/{pid}/task/{pid}/children");
            self.open = std::fs::File::open(path).ok().map(|f| (pid, f));
        }
        let (_, file) = self.open.as_ref()?;
        let mut bytes = Vec::new();
        let mut chunk = [0u8; 4096];
        // Bounded by CHILDREN_CAP; a short read is the end (the kernel fills what it can).
        while bytes.len() < CHILDREN_CAP {
            match file.read_at(&mut chunk, bytes.len() as u64) {
                Ok(n) => {
                    bytes.extend_from_slice(&chunk[..n]);
                    if n < chunk.len() {
                        break;
                    }
                }
                Err(_) => {
                    // The process is gone (or its file unreadable): open afresh next time.
                    self.open = None;
                    return None;
                }
            }
        }
        let kids: Vec<i32> = String::from_utf8_lossy(&bytes)
            .split_ascii_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect();
        // A reaped process's file reads empty, not an error, and its pid may come back for
        // another process: an empty list (a tmux server with no pane has ended) opens the path
        // afresh next time.
        if kids.is_empty() {
            self.open = None;
        }
        Some(kids)
    }
}

impl Server {
    fn listening(&self) -> bool {
        self.client
            .as_ref()
            .is_some_and(|c| c.ready() && !c.ended())
    }

    /// A tmux too old for a control client, whose child processes are compared instead.
    fn watched_by_children(&self) -> bool {
        self.no_control && self.server_pid.is_some()
    }

    /// The pty watch tells when its panes come or go.
    fn pty_watched(&self) -> bool {
        self.watched_by_children()
            && matches!(self.pts_checked, Some((pid, true)) if Some(pid) == self.server_pid)
    }

    /// How long after the last compare the next is due.
    fn compare_every(&self, now: Instant) -> Duration {
        if !self.pty_watched() {
            CHILDREN_EVERY
        } else if let Some(from) = self.burst_from.filter(|&t| now < t + BURST) {
            self.checked_at
                .saturating_duration_since(from)
                .max(BURST_FIRST)
        } else {
            CHILDREN_BACKSTOP
        }
    }

    /// Whether a pty that came or went may be one of its panes': a removed one whose master it
    /// held, a made one whose master it holds now; yes when that cannot be told. Another
    /// program's pty then costs the watch's one wake and one look at the server's fds (about
    /// 0.3 ms with 64 panes), not `BURST`'s seven wakes.
    fn may_own(&mut self, news: &PtyNews) -> bool {
        let before = self.masters.take();
        if news.unknown || super::switched_off("pty-owner") {
            return true;
        }
        let gone_ours = news
            .gone
            .iter()
            .any(|n| before.as_ref().is_none_or(|m| m.contains(n)));
        if news.made.is_empty() {
            // Only removals: what it holds now is what it held less those.
            self.masters = before.map(|mut m| {
                m.retain(|n| !news.gone.contains(n));
                m
            });
            return gone_ours;
        }
        // A made pty's node comes before its master's fd: `masters` says nothing while the
        // server is not asleep.
        self.masters = self.server_pid.and_then(crate::proc::ptys::masters);
        let made_ours = match &self.masters {
            Some(m) => news.made.iter().any(|n| m.contains(n)),
            None => true,
        };
        gone_ours || made_ours
    }

    /// Compare the server's children with the last look: true when they changed (the first
    /// look only takes note).
    fn compare(&mut self, now: Instant) -> bool {
        self.checked_at = now;
        let mut kids = self.server_pid.and_then(|p| self.children_file.read(p));
        if let Some(k) = kids.as_mut() {
            k.sort_unstable();
        }
        if kids == self.children {
            return false;
        }
        let changed = self.children.is_some();
        self.children = kids;
        changed
    }
}

/// What the engine can tell about one server's client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerHealth {
    pub socket: PathBuf,
    /// Changes on it wake the engine (a listener, or its child processes watched).
    pub listening: bool,
    /// How: `control-mode`, `herdr-events`, `pty-events` (tmux before 3.7: its children
    /// compared when a pty comes or goes), `child-processes` (the same, every 400 ms: the pty
    /// folder is not watched for it), or `listing` (every 5 s: no listener now).
    pub by: &'static str,
    pub last_error: Option<String>,
}

/// The servers watched now.
#[derive(Default)]
pub struct Panes {
    servers: Vec<Server>,
    /// The pty folder's watch, opened when a server first needs it (`None` after a failed try
    /// too: `pts_tried`).
    pts: Option<PtsWatch>,
    pts_tried: bool,
}

impl Panes {
    pub fn new() -> Panes {
        Panes::default()
    }

    /// Watch exactly `wanted` (the first `MAX_SERVERS`): start clients for new servers at once,
    /// end those no longer listed.
    pub fn sync(&mut self, wanted: &[ServerWatch], now: Instant) {
        let wanted = &wanted[..wanted.len().min(MAX_SERVERS)];
        self.servers
            .retain(|s| wanted.iter().any(|w| w.socket == s.socket));
        for w in wanted {
            match self.servers.iter_mut().find(|s| s.socket == w.socket) {
                Some(s) => {
                    s.session = w.session.clone().or(s.session.take());
                    if w.server_pid.is_some() && w.server_pid != s.server_pid {
                        s.server_pid = w.server_pid;
                        s.children = None;
                        s.masters = None;
                    }
                }
                None => self.servers.push(Server {
                    kind: w.kind,
                    socket: w.socket.clone(),
                    server_pid: w.server_pid,
                    children: None,
                    children_file: ChildrenFile::default(),
                    pts_checked: None,
                    burst_from: None,
                    masters: None,
                    checked_at: now,
                    no_control: false,
                    session: w.session.clone(),
                    client: None,
                    started: None,
                    retry_at: now,
                    backoff: FIRST_BACKOFF,
                    listed_at: now,
                    last_error: None,
                }),
            }
        }
        self.start_due(now);
        self.check_pts();
        // The first look at a server's children at once, as the pass just listed its panes:
        // taken at the first pty event instead, it only took note, and a pane opened then
        // waited for the timer's pass.
        for s in &mut self.servers {
            if s.watched_by_children() && s.children.is_none() {
                s.compare(now);
                if s.pty_watched() {
                    s.masters = s.server_pid.and_then(crate::proc::ptys::masters);
                }
            }
        }
    }

    /// Open the pty watch once a server needs it, and note for each such server whether the
    /// watch covers it (again when its pid changed).
    fn check_pts(&mut self) {
        if !self.servers.iter().any(Server::watched_by_children) {
            return;
        }
        if !self.pts_tried {
            self.pts_tried = true;
            self.pts = PtsWatch::open();
        }
        for s in &mut self.servers {
            let Some(pid) = s.server_pid.filter(|_| s.watched_by_children()) else {
                continue;
            };
            if s.pts_checked.map(|(p, _)| p) != Some(pid) {
                let covered = self.pts.as_ref().is_some_and(|w| w.covers(pid));
                s.pts_checked = Some((pid, covered));
            }
        }
    }

    /// Start the clients whose pause is over.
    fn start_due(&mut self, now: Instant) {
        for s in &mut self.servers {
            if s.client.is_some() || s.retry_at > now {
                continue;
            }
            if !s.no_control {
                // tmux: `tmux -V` once per process (cached by program and PATH).
                s.no_control = !PaneEvents::supported(s.kind, &s.socket, now + START_DEADLINE);
            }
            if s.no_control {
                continue;
            }
            let deadline = now + START_DEADLINE;
            let Some(started) =
                PaneEvents::start(s.kind, &s.socket, s.session.as_deref(), deadline)
            else {
                continue;
            };
            match started {
                Ok(c) => {
                    s.client = Some(c);
                    s.started = Some(now);
                    s.last_error = None;
                }
                Err(e) => {
                    s.last_error = Some(e.code.code().to_string());
                    s.retry_at = now + s.backoff;
                    s.backoff = (s.backoff * 2).min(MAX_BACKOFF);
                }
            }
        }
    }

    /// The fds to poll, each with its server's index (the pty watch's own index when a server
    /// relies on it).
    pub fn fds(&self) -> Vec<(RawFd, usize)> {
        let mut fds: Vec<(RawFd, usize)> = self
            .servers
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.client.as_ref().map(|c| (c.raw_fd(), i)))
            .collect();
        if let Some(w) = &self.pts {
            if self.servers.iter().any(Server::pty_watched) {
                fds.push((w.raw_fd(), PTS_INDEX));
            }
        }
        fds
    }

    /// A pty came or went: every server the watch covers that may own it compares its children
    /// now, and often for a moment after. True when one changed (its socket is in `stale`).
    fn on_pty(&mut self, now: Instant, stale: &mut BTreeSet<PathBuf>) -> bool {
        let Some(news) = self.pts.as_ref().map(PtsWatch::drain) else {
            return false;
        };
        if !news.any() {
            return false;
        }
        let mut changed = false;
        for s in self.servers.iter_mut().filter(|s| s.pty_watched()) {
            if !s.may_own(&news) {
                continue;
            }
            s.burst_from = Some(now);
            if s.compare(now) {
                stale.insert(s.socket.clone());
                changed = true;
            }
        }
        changed
    }

    /// Read server `i`'s client; the servers to list again go into `stale`. True when anything
    /// changed for the engine (panes to list, or the client ended).
    pub fn read(&mut self, i: usize, now: Instant, stale: &mut BTreeSet<PathBuf>) -> bool {
        if i == PTS_INDEX {
            return self.on_pty(now, stale);
        }
        let Some(s) = self.servers.get_mut(i) else {
            return false;
        };
        let Some(c) = s.client.as_mut() else {
            return false;
        };
        let mut notices = Vec::new();
        c.read_notices(&mut notices);
        let mut changed = false;
        for n in notices {
            match n {
                // Attached: what happened before it listened is not known.
                Notice::Ready | Notice::Panes => {
                    stale.insert(s.socket.clone());
                    changed = true;
                }
                Notice::Exit => {
                    stale.insert(s.socket.clone());
                    changed = true;
                }
            }
        }
        if s.client.as_ref().is_some_and(PaneEvents::ended) {
            s.client = None;
            let steady = s.started.is_some_and(|t| now.duration_since(t) >= STEADY);
            if steady {
                s.backoff = FIRST_BACKOFF;
            }
            s.retry_at = now + s.backoff;
            s.backoff = (s.backoff * 2).min(MAX_BACKOFF);
            s.listed_at = now;
        }
        changed
    }

    /// The next time something is due: a client to start again, or a slow listing.
    pub fn next_due(&self) -> Option<Instant> {
        self.servers
            .iter()
            .flat_map(|s| {
                if s.watched_by_children() {
                    return [Some(s.checked_at + s.compare_every(Instant::now())), None];
                }
                let startable = !s.kind.caps().events_per_session || s.session.is_some();
                let retry = (s.client.is_none() && startable).then_some(s.retry_at);
                let slow = (!s.listening()).then_some(s.listed_at + SLOW_LIST);
                [retry, slow]
            })
            .flatten()
            .min()
    }

    /// Do what is due at `now`: start clients again, and mark servers without a listening
    /// client for a listing. True when a server was marked.
    pub fn on_timer(&mut self, now: Instant, stale: &mut BTreeSet<PathBuf>) -> bool {
        self.start_due(now);
        self.check_pts();
        let mut marked = false;
        for s in &mut self.servers {
            if s.watched_by_children() {
                if s.checked_at + s.compare_every(now) <= now && s.compare(now) {
                    stale.insert(s.socket.clone());
                    marked = true;
                }
                continue;
            }
            if !s.listening() && s.listed_at + SLOW_LIST <= now {
                s.listed_at = now;
                stale.insert(s.socket.clone());
                marked = true;
            }
        }
        marked
    }

    /// Whether `socket`'s panes are known to be unchanged since its last listing unless its
    /// client said otherwise (a listening client).
    pub fn listening(&self, socket: &Path) -> bool {
        self.servers
            .iter()
            .any(|s| s.socket == socket && (s.listening() || s.watched_by_children()))
    }

    /// Every server watched.
    pub fn sockets(&self) -> Vec<PathBuf> {
        self.servers.iter().map(|s| s.socket.clone()).collect()
    }

    pub fn health(&self) -> Vec<ServerHealth> {
        self.servers
            .iter()
            .map(|s| ServerHealth {
                socket: s.socket.clone(),
                listening: s.listening() || s.watched_by_children(),
                by: match (&s.client, s.watched_by_children()) {
                    (_, true) if s.pty_watched() => "pty-events",
                    (_, true) => "child-processes",
                    (Some(c), _) => c.shown_as(s.listening()).unwrap_or("listing"),
                    _ => "listing",
                },
                last_error: s.last_error.clone(),
            })
            .collect()
    }

    /// How many servers are watched.
    pub fn len(&self) -> usize {
        self.servers.len()
    }

    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kids_of(pid: i32, f: &mut ChildrenFile, want: usize) -> Vec<i32> {
        // Bounded: the shell starts its children within moments.
        for _ in 0..200 {
            match f.read(pid) {
                Some(k) if k.len() == want => return k,
                _ => std::thread::sleep(std::time::Duration::from_millis(10)),
            }
        }
        f.read(pid).unwrap_or_default()
    }

    /// A pty another program makes wakes the watch but starts no compares; one the watched
    /// server makes (here a shell standing in for it, that opens `/dev/ptmx` after a moment)
    /// starts them.
    #[test]
    fn only_the_servers_own_ptys_start_compares() {
        let mut server = std::process::Command::new("sh")
            .args(["-c", "sleep 2; exec 3<>/dev/ptmx; exec sleep 30"])
            .spawn()
            .unwrap();
        let pid = server.id() as i32;
        let now = Instant::now();
        let mut panes = Panes::new();
        panes.sync(
            &[ServerWatch {
                kind: MuxKind::Tmux,
                socket: PathBuf::from("/nonexistent/sock"),
                session: None,
                server_pid: Some(pid),
            }],
            now,
        );
        let s = &mut panes.servers[0];
        // As for a tmux without control mode (`start_due` decides it from `tmux -V`).
        s.no_control = true;
        s.client = None;
        panes.check_pts();
        if panes.pts.is_none() || !panes.servers[0].pty_watched() {
            // No devpts to watch here: the timer stays, nothing to tell apart.
            let _ = server.kill();
            let _ = server.wait();
            return;
        }
        // Bounded: the shell is asleep in its first `sleep` within moments.
        for _ in 0..100 {
            panes.servers[0].masters = crate::proc::ptys::masters(pid);
            if panes.servers[0].masters.is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let mut stale = BTreeSet::new();
        let _ = panes.on_pty(now, &mut stale);
        panes.servers[0].burst_from = None;
        // Another program's pty (this test's own): seen, no compares.
        let mine = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/ptmx")
            .unwrap();
        std::thread::sleep(Duration::from_millis(50));
        let _ = panes.on_pty(Instant::now(), &mut stale);
        assert_eq!(
            panes.servers[0].burst_from, None,
            "a foreign pty started compares"
        );
        drop(mine);
        // The server's own: compares start. Bounded: it opens its pty after two seconds.
        let mut seen = false;
        for _ in 0..300 {
            let _ = panes.on_pty(Instant::now(), &mut stale);
            if panes.servers[0].burst_from.is_some() {
                seen = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = server.kill();
        let _ = server.wait();
        assert!(seen, "the server's own pty started no compares");
    }

    #[test]
    fn the_kept_children_file_reads_each_change_and_a_gone_process_reads_none() {
        let mut sh = std::process::Command::new("sh")
            .args(["-c", "sleep 30 & sleep 30 & wait"])
            .spawn()
            .unwrap();
        let pid = sh.id() as i32;
        let mut f = ChildrenFile::default();
        let two = kids_of(pid, &mut f, 2);
        assert_eq!(two.len(), 2, "{two:?}");
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(two[0]),
            nix::sys::signal::Signal::SIGKILL,
        );
        let one = kids_of(pid, &mut f, 1);
        assert_eq!(one, vec![two[1]]);
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(two[1]),
            nix::sys::signal::Signal::SIGKILL,
        );
        sh.wait().unwrap();
        assert!(f.read(pid).is_none_or(|k| k.is_empty()));
        assert_eq!(f.read(pid), None, "opened afresh: the process is gone");
    }
}
