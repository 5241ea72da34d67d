//! `/dev/pts` watched with inotify (docs/behaviour.md §3a). Every tmux pane has a pty, made when
//! the pane opens and removed when it closes, and the kernel tells an inotify watch on the pty
//! folder of both, naming the pty. So on a tmux too old for a control client the server's
//! children are compared when one of its ptys comes or goes, not every 400 ms: an idle sidebar
//! then wakes for nothing. Ptys of other programs (a terminal, an ssh login, a build) wake the
//! watch too, once each; the server's masters (`proc::ptys`) tell them apart, so they start no
//! compares. Only the devpts instance mounted at this process's `/dev/pts` is seen: a
//! server whose own `/dev/pts` is another instance (another mount namespace) is still compared
//! on the timer.

use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::os::unix::fs::MetadataExt;

use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify};

const PTS: &str = "/dev/pts";
/// Most reads of queued events in one drain (each up to a page of events); what is left keeps
/// the fd readable for the next turn of the loop.
const MAX_READS: usize = 16;

/// Most pty numbers kept from one drain; past it, anything may have changed.
const MAX_NEWS: usize = 256;

/// What one drain found: the ptys made and removed, by number.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct PtyNews {
    pub(crate) made: Vec<u32>,
    pub(crate) gone: Vec<u32>,
    /// Events were lost (or too many, or a name that is no number): anything may have changed.
    pub(crate) unknown: bool,
}

impl PtyNews {
    pub(crate) fn any(&self) -> bool {
        self.unknown || !self.made.is_empty() || !self.gone.is_empty()
    }
}

/// The watch, and the devpts instance it is on.
pub(crate) struct PtsWatch {
    ino: Inotify,
    dev: u64,
}

impl PtsWatch {
    /// `None` when `/dev/pts` cannot be watched (no devpts, no inotify left): the timer stays.
    pub(crate) fn open() -> Option<PtsWatch> {
        if super::switched_off("pts") {
            return None;
        }
        let dev = std::fs::metadata(PTS).ok()?.dev();
        let ino = Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC).ok()?;
        ino.add_watch(PTS, AddWatchFlags::IN_CREATE | AddWatchFlags::IN_DELETE)
            .ok()?;
        Some(PtsWatch { ino, dev })
    }

    pub(crate) fn raw_fd(&self) -> RawFd {
        self.ino.as_fd().as_raw_fd()
    }

    /// Empty the queue (bounded): the ptys that came or went, or that events were lost.
    pub(crate) fn drain(&self) -> PtyNews {
        let mut news = PtyNews::default();
        for _ in 0..MAX_READS {
            let events = match self.ino.read_events() {
                Ok(events) if !events.is_empty() => events,
                _ => break,
            };
            for e in events {
                let n = e
                    .name
                    .as_ref()
                    .and_then(|n| n.to_str()?.parse::<u32>().ok());
                let list = if e.mask.contains(AddWatchFlags::IN_CREATE) {
                    &mut news.made
                } else {
                    &mut news.gone
                };
                match n {
                    Some(n) if list.len() < MAX_NEWS => list.push(n),
                    // An overflow (no name), a name that is no pty, too many: not known.
                    _ => news.unknown = true,
                }
            }
        }
        news
    }

    /// Whether process `pid` (a tmux server of ours) makes its ptys in the watched instance:
    /// its own `/dev/pts` is the same filesystem as ours.
    pub(crate) fn covers(&self, pid: i32) -> bool {
        std::fs::metadata(format!("/proc/{pid}/root{PTS}")).is_ok_and(|m| m.dev() == self.dev)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pty opened and closed (what tmux does for a pane) is seen; nothing else queued reads
    /// as nothing.
    #[test]
    fn a_pty_made_and_removed_is_seen_and_this_process_is_covered() {
        let Some(w) = PtsWatch::open() else {
            // No devpts here: nothing to check (the timer stays).
            return;
        };
        assert!(w.covers(std::process::id() as i32));
        w.drain();
        // Opening the multiplexer device makes a pty (its node under /dev/pts), as tmux does.
        let pty = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/ptmx")
            .unwrap();
        use std::os::fd::AsRawFd;
        let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{}", pty.as_raw_fd()));
        let n: Option<u32> = info.ok().and_then(|i| {
            i.lines()
                .find_map(|l| l.strip_prefix("tty-index:"))?
                .trim()
                .parse()
                .ok()
        });
        // Bounded: the event is queued as the pty is made. Other programs' ptys may come too.
        let mut made = Vec::new();
        for _ in 0..100 {
            made.extend(w.drain().made);
            if n.is_some_and(|n| made.contains(&n)) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(
            n.is_some_and(|n| made.contains(&n)),
            "{n:?} not in {made:?}"
        );
        drop(pty);
        let mut gone = Vec::new();
        for _ in 0..100 {
            gone.extend(w.drain().gone);
            if n.is_some_and(|n| gone.contains(&n)) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(
            n.is_some_and(|n| gone.contains(&n)),
            "{n:?} not in {gone:?}"
        );
    }
}
