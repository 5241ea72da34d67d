//! `/dev/pts` watched with inotify (docs/behaviour.md §3a). Every tmux pane has a pty, made when
//! the pane opens and removed when it closes, and the kernel tells an inotify watch on the pty
//! folder of both. So on a tmux too old for a control client the server's children are compared
//! when a pty comes or goes, not every 400 ms: an idle sidebar then wakes for nothing. Ptys of
//! other programs (a terminal, an ssh login) wake it too; a compare that finds the same children
//! changes nothing. Only the devpts instance mounted at this process's `/dev/pts` is seen: a
//! server whose own `/dev/pts` is another instance (another mount namespace) is still compared
//! on the timer.

use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::os::unix::fs::MetadataExt;

use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify};

const PTS: &str = "/dev/pts";
/// Most reads of queued events in one drain (each up to a page of events); what is left keeps
/// the fd readable for the next turn of the loop.
const MAX_READS: usize = 16;

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

    /// Empty the queue (bounded): true when a pty came or went, or events were lost.
    pub(crate) fn drain(&self) -> bool {
        let mut any = false;
        for _ in 0..MAX_READS {
            match self.ino.read_events() {
                Ok(events) if !events.is_empty() => any = true,
                _ => break,
            }
        }
        any
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
        let mut seen = false;
        // Bounded: the event is queued as the pty is made.
        for _ in 0..100 {
            if w.drain() {
                seen = true;
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(seen, "the new pty was not seen");
        drop(pty);
        let mut gone = false;
        for _ in 0..100 {
            if w.drain() {
                gone = true;
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(gone, "the closed pty was not seen");
    }
}
