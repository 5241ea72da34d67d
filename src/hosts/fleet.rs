//! The hosts a running board follows (docs/behaviour.md §12): one thread per host
//! (`hosts::link`), started, ended or replaced as the hosts file changes, without a restart.
//! `follow` watches the file (inotify, `live::files`) and applies it within a second.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::shared::Shared;
use super::{link, Host};
use crate::ui::ports::CancelToken;

/// The hosts of the board now, for whoever acts on a host's row (the sidebar's ports, seen
/// marks): the newest the hosts file named.
#[derive(Clone, Default)]
pub struct HostList(Arc<Mutex<Vec<Host>>>);

impl HostList {
    pub fn new(hosts: Vec<Host>) -> HostList {
        HostList(Arc::new(Mutex::new(hosts)))
    }

    /// The host of that name on the board now.
    pub fn find(&self, name: &str) -> Option<Host> {
        self.0
            .lock()
            .ok()?
            .iter()
            .find(|h| h.name.as_str() == name)
            .cloned()
    }

    pub fn all(&self) -> Vec<Host> {
        self.0.lock().map(|v| v.clone()).unwrap_or_default()
    }

    pub fn is_empty(&self) -> bool {
        self.0.lock().map_or(true, |v| v.is_empty())
    }

    fn set(&self, hosts: Vec<Host>) {
        if let Ok(mut v) = self.0.lock() {
            *v = hosts;
        }
    }
}

impl From<Vec<Host>> for HostList {
    fn from(v: Vec<Host>) -> HostList {
        HostList::new(v)
    }
}

/// One host's thread.
struct Run {
    host: Host,
    slot: usize,
    stop: CancelToken,
    thread: Option<JoinHandle<()>>,
    /// Still on the board (not yet retired).
    live: bool,
}

/// The host threads of one board.
pub(crate) struct Fleet {
    shared: Arc<Shared>,
    /// The board's own token: cancelling it ends every host's thread.
    stop: CancelToken,
    list: HostList,
    runs: Mutex<Vec<Run>>,
    /// Whether each host's stream is asked for its connection checks (`--probe`).
    probe: bool,
    /// Called once, when a host is first on the board (`on_first_host`).
    first_host: Mutex<Option<crate::ui::ports::Interrupter>>,
}

/// Retired slots are given to new hosts only past this many (so the board keeps the file's
/// order while it is edited a few times, and never grows without bound).
const REUSE_PAST: usize = 2 * super::file::MAX_HOSTS;

impl Fleet {
    /// `probe`: ask each host's stream for its connection checks (`--probe`).
    pub(crate) fn new(shared: Arc<Shared>, stop: CancelToken, probe: bool) -> Arc<Fleet> {
        Arc::new(Fleet {
            shared,
            stop,
            list: HostList::default(),
            runs: Mutex::new(Vec::new()),
            probe,
            first_host: Mutex::new(None),
        })
    }

    /// Call `f` once, when a host is first on the board.
    pub(crate) fn on_first_host(&self, f: crate::ui::ports::Interrupter) {
        if let Ok(mut g) = self.first_host.lock() {
            *g = Some(f);
        }
    }

    pub(crate) fn list(&self) -> HostList {
        self.list.clone()
    }

    /// Make the board follow `hosts`: a host no longer named (or named with other settings)
    /// ends its thread and leaves the board; a new one joins, connecting. Unchanged hosts go
    /// on as they were.
    pub(crate) fn apply(&self, hosts: &[Host]) -> std::io::Result<()> {
        let Ok(mut runs) = self.runs.lock() else {
            return Ok(());
        };
        let mut ended = Vec::new();
        for r in runs.iter_mut().filter(|r| r.live) {
            if !hosts.contains(&r.host) {
                r.live = false;
                r.stop.cancel();
                self.shared.retire(r.slot);
                ended.push(r.host.clone());
            }
        }
        // Threads that ended free their slot; their handles are joined.
        for r in runs.iter_mut().filter(|r| !r.live) {
            if r.thread.as_ref().is_some_and(JoinHandle::is_finished) {
                if let Some(t) = r.thread.take() {
                    let _ = t.join();
                }
            }
        }
        let mut result = Ok(());
        for h in hosts {
            if runs.iter().any(|r| r.live && r.host.name == h.name) {
                continue;
            }
            let reuse = (runs.len() >= REUSE_PAST)
                .then(|| runs.iter().position(|r| !r.live && r.thread.is_none()))
                .flatten();
            let slot = self
                .shared
                .add(h.name.as_str(), reuse.map(|i| runs[i].slot));
            let stop = CancelToken::new();
            let child = stop.clone();
            self.stop.on_cancel(Box::new(move || child.cancel()));
            let shared = self.shared.clone();
            match link::start(h.clone(), slot, shared, stop.clone(), self.probe) {
                Ok(t) => {
                    let run = Run {
                        host: h.clone(),
                        slot,
                        stop,
                        thread: Some(t),
                        live: true,
                    };
                    match reuse {
                        Some(i) => runs[i] = run,
                        None => runs.push(run),
                    }
                }
                Err(e) => {
                    self.shared.retire(slot);
                    result = Err(e);
                }
            }
        }
        let live: Vec<Host> = hosts
            .iter()
            .filter(|h| runs.iter().any(|r| r.live && r.host == **h))
            .cloned()
            .collect();
        let any = !live.is_empty();
        self.list.set(live);
        drop(runs);
        if any {
            if let Some(f) = self.first_host.lock().ok().and_then(|mut g| g.take()) {
                f();
            }
        }
        if !ended.is_empty() {
            log_file_event(
                Some(ended.iter().map(|h| h.name.to_string()).collect()),
                "removed",
                "no longer in the hosts file".into(),
            );
            self.end_later(ended);
        }
        result
    }

    /// Stop the shared connections of hosts that left, once their threads ended what they ran
    /// there (on a thread of its own: the board goes on meanwhile).
    fn end_later(&self, hosts: Vec<Host>) {
        let threads: Vec<JoinHandle<()>> = match self.runs.lock() {
            Ok(mut runs) => runs
                .iter_mut()
                .filter(|r| !r.live && hosts.contains(&r.host))
                .filter_map(|r| r.thread.take())
                .collect(),
            Err(_) => Vec::new(),
        };
        let _ = std::thread::Builder::new()
            .name("ip-host-ended".into())
            .spawn(move || super::board::end_links(threads, &hosts));
    }
}

impl crate::ui::ports::HostsControl for Fleet {
    fn retry_now(&self) {
        self.shared.retry_now();
    }

    fn retry_host(&self, name: &str) -> bool {
        self.shared.retry_host(name)
    }
}

impl Fleet {
    /// End every host's thread (bounded) and stop the shared connections.
    pub(crate) fn end(&self) {
        self.stop.cancel();
        let (threads, hosts) = match self.runs.lock() {
            Ok(mut runs) => {
                let hosts: Vec<Host> = runs.iter().map(|r| r.host.clone()).collect();
                let threads = runs.iter_mut().filter_map(|r| r.thread.take()).collect();
                (threads, hosts)
            }
            Err(_) => (Vec::new(), Vec::new()),
        };
        super::board::end_links(threads, &hosts);
    }
}

/// How often the file is looked at without an inotify event where its folder cannot be
/// watched: the board still follows it within this long.
const RECHECK: Duration = Duration::from_secs(1);
/// How often it is looked at all the same while watched (a change inotify cannot tell, such
/// as a folder on the way to it replaced).
const RECHECK_WATCHED: Duration = Duration::from_secs(300);

/// Follow the hosts file at `path` until `stop`: each change that parses applies to `fleet`
/// (within a second); a file refused keeps the hosts as they are, logged once per reason.
/// `applied`: the hosts the board started with (read from the file before).
pub(crate) fn follow(
    fleet: Arc<Fleet>,
    path: PathBuf,
    applied: Vec<Host>,
    stop: CancelToken,
) -> std::io::Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name("ip-hosts-file".into())
        .spawn(move || {
            let mut watch = Watch::new(&path);
            // The stop wakes the wait at once: no timer looks at it.
            if let Some(w) = &watch.stop {
                let w = w.clone();
                stop.on_cancel(Box::new(move || w.stop()));
            }
            let mut last = Some(applied);
            let mut said = String::new();
            let mut next_look = Instant::now() + watch.recheck();
            // Bounded by `stop`: each turn sleeps until an event, the stop or the next look.
            while !stop.is_cancelled() {
                let event = watch.wait(next_look.saturating_duration_since(Instant::now()));
                if !event && Instant::now() < next_look {
                    continue;
                }
                next_look = Instant::now() + watch.recheck();
                if event {
                    watch.sync();
                }
                match super::file::read(&path) {
                    Ok(hosts) if last.as_ref() != Some(&hosts) => {
                        if let Err(e) = fleet.apply(&hosts) {
                            log_file_event(
                                None,
                                "refused",
                                format!("a host's thread did not start: {e}"),
                            );
                        }
                        last = Some(hosts);
                        said.clear();
                    }
                    Ok(_) => {}
                    Err(e) => {
                        let why = e.to_string();
                        if why != said {
                            log_file_event(
                                None,
                                "refused",
                                format!(
                                    "the hosts file was not applied (the hosts stay as they \
                                     were): {why}"
                                ),
                            );
                            said = why;
                        }
                    }
                }
            }
        })
}

/// A `host_state` log line about the hosts file: the hosts it names (`hosts`), its state
/// and why.
fn log_file_event(hosts: Option<Vec<String>>, state: &'static str, detail: String) {
    crate::log::write(&crate::log::HostState {
        host: None,
        hosts,
        state,
        detail: crate::text::one_line(&detail, 300),
    });
}

/// The hosts file's folder under inotify (none when it cannot be watched: the timed look
/// still follows the file).
struct Watch {
    set: Option<crate::live::files::WatchSet>,
    specs: Vec<crate::live::files::Spec>,
    changes: Vec<crate::live::files::Change>,
    /// Woken by the board's stop (without one, waits are cut to `RECHECK`).
    stop: Option<crate::live::wake::Waker>,
}

impl Watch {
    fn new(path: &std::path::Path) -> Watch {
        let specs = match (path.parent(), path.file_name().and_then(|n| n.to_str())) {
            (Some(dir), Some(name)) => vec![crate::live::files::Spec::only(dir, &[name])],
            _ => Vec::new(),
        };
        let mut w = Watch {
            set: crate::live::files::WatchSet::new().ok(),
            specs,
            changes: Vec::new(),
            stop: crate::live::wake::Waker::new().ok(),
        };
        w.sync();
        w
    }

    fn sync(&mut self) {
        if let Some(s) = self.set.as_mut() {
            s.sync(&self.specs);
        }
    }

    /// How long until the file is looked at without an event: long only while its folder (or
    /// the way to it) is watched and the stop can wake the wait.
    fn recheck(&self) -> Duration {
        let watched = self
            .set
            .as_ref()
            .is_some_and(|s| s.limit().is_none() && s.len() > 0);
        if watched && self.stop.is_some() {
            RECHECK_WATCHED
        } else {
            RECHECK
        }
    }

    /// Wait up to `d` for an event about the file or its folder (or the stop); whether an
    /// event came.
    fn wait(&mut self, d: Duration) -> bool {
        let d = if self.stop.is_some() {
            d
        } else {
            d.min(RECHECK)
        };
        let Some(set) = self.set.as_mut() else {
            std::thread::sleep(d.min(Duration::from_millis(250)));
            return false;
        };
        let stop_fd = self.stop.as_ref().map_or(-1, |w| w.raw_fd());
        let mut fd = [
            libc::pollfd {
                fd: set.raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            // A negative fd is skipped by poll(2).
            libc::pollfd {
                fd: stop_fd,
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        let ms = libc::c_int::try_from(d.as_millis()).unwrap_or(libc::c_int::MAX);
        // SAFETY: two valid pollfds; bounded by `ms`.
        let n = unsafe { libc::poll(fd.as_mut_ptr(), 2, ms) };
        if n <= 0 || fd[0].revents & libc::POLLIN == 0 {
            return false;
        }
        self.changes.clear();
        set.drain(&mut self.changes);
        !self.changes.is_empty()
    }
}
