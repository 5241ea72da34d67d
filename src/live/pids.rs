//! Each seat's pi held by a pidfd (`proc::pidfd`: opened, then confirmed by start ticks and boot
//! id), so its exit makes an fd readable and wakes the engine at once, instead of waiting for the
//! next pass to notice. The pidfds sit in one epoll instance, which the engine polls as a single
//! fd: a wake then costs the same with 1 or 1024 pis held (a `poll` over 64 pidfds was most of
//! an idle sidebar's wake, which tmux before 3.7 makes every 400 ms).

use std::collections::HashMap;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use crate::proc::pidfd::PidFd;
use crate::proc::ProcIdentity;

/// Most processes held at once (a roster's 256 seats plus panes' own pis).
pub(crate) const MAX_HELD: usize = 1024;

/// The pis held now.
#[derive(Default)]
pub(crate) struct PidSet {
    held: HashMap<ProcIdentity, PidFd>,
    /// The epoll instance over every held pidfd (`None`: it could not be made; each pidfd is
    /// then polled on its own).
    epoll: Option<OwnedFd>,
}

impl PidSet {
    pub(crate) fn new() -> PidSet {
        // SAFETY: epoll_create1 returns a new fd or -1.
        let raw = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        // SAFETY: a fresh fd owned by nobody else.
        let epoll = (raw >= 0).then(|| unsafe { OwnedFd::from_raw_fd(raw) });
        PidSet {
            held: HashMap::new(),
            epoll,
        }
    }

    /// Add `fd` to the epoll instance, or take it out (before it is closed: an fd number can
    /// come back for another file). False when the kernel refused.
    fn watch(&self, fd: RawFd, add: bool) -> bool {
        let Some(ep) = &self.epoll else {
            return true;
        };
        let mut ev = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: fd as u64,
        };
        let op = if add {
            libc::EPOLL_CTL_ADD
        } else {
            libc::EPOLL_CTL_DEL
        };
        // SAFETY: a valid epoll fd, a valid fd and a valid event struct.
        unsafe { libc::epoll_ctl(ep.as_raw_fd(), op, fd, &mut ev) == 0 }
    }

    /// Hold exactly `ids` (at most `MAX_HELD`): open what is new, close what is no longer
    /// wanted. Returns how many wanted processes could not be held because they are gone already
    /// (a pass should look again: the one that named them is out of date).
    pub(crate) fn sync(&mut self, ids: &[ProcIdentity]) -> usize {
        let wanted: Vec<&ProcIdentity> = ids.iter().take(MAX_HELD).collect();
        let dropped: Vec<ProcIdentity> = self
            .held
            .keys()
            .filter(|id| !wanted.contains(id))
            .cloned()
            .collect();
        for id in dropped {
            self.forget(&id);
        }
        let mut gone = 0;
        for id in wanted {
            if self.held.contains_key(id) {
                continue;
            }
            match PidFd::open(id) {
                // Held only when the epoll instance took it: a pidfd nobody polls would hide
                // its exit until the next full pass.
                Ok(fd) if self.watch(fd.raw(), true) => {
                    self.held.insert(id.clone(), fd);
                }
                Ok(_) | Err(_) => gone += 1,
            }
        }
        gone
    }

    /// The fds to poll: the epoll instance, else every pidfd.
    pub(crate) fn fds(&self) -> Vec<RawFd> {
        match &self.epoll {
            Some(ep) => vec![ep.as_raw_fd()],
            None => self.held.values().map(PidFd::raw).collect(),
        }
    }

    /// `fd` (one of `fds`) is readable: the processes that exited, no longer held.
    pub(crate) fn ready(&mut self, fd: RawFd) -> Vec<ProcIdentity> {
        let Some(ep) = &self.epoll else {
            return self.take(fd).into_iter().collect();
        };
        let mut events = [libc::epoll_event { events: 0, u64: 0 }; 64];
        // SAFETY: a valid epoll fd and a buffer of `events.len()` events; no wait (timeout 0).
        let n = unsafe {
            libc::epoll_wait(ep.as_raw_fd(), events.as_mut_ptr(), events.len() as i32, 0)
        };
        let ready: Vec<RawFd> = events
            .iter()
            .take(usize::try_from(n).unwrap_or(0))
            .map(|e| e.u64 as RawFd)
            .collect();
        ready.into_iter().filter_map(|fd| self.take(fd)).collect()
    }

    /// Stop holding the process behind `fd` (it exited); its identity.
    fn take(&mut self, fd: RawFd) -> Option<ProcIdentity> {
        let id = self.held.iter().find(|(_, f)| f.raw() == fd)?.0.clone();
        self.forget(&id);
        Some(id)
    }

    /// Stop holding `id`: out of the epoll instance first, then closed.
    fn forget(&mut self, id: &ProcIdentity) {
        if let Some(fd) = self.held.get(id) {
            self.watch(fd.raw(), false);
        }
        self.held.remove(id);
    }

    pub(crate) fn len(&self) -> usize {
        self.held.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn an_exit_makes_its_fd_readable_and_a_gone_process_is_counted() {
        let mut a = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let mut b = std::process::Command::new("true").spawn().unwrap();
        let ida = crate::proc::identity(a.id() as i32).unwrap();
        let mut idb = ida.clone();
        idb.pid = b.id() as i32;
        idb.start_ticks = 1;
        let mut set = PidSet::new();
        assert_eq!(set.sync(&[ida.clone(), idb]), 1);
        b.wait().unwrap();
        assert_eq!(set.len(), 1);
        let fd = set.fds()[0];
        a.kill().unwrap();
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let n = unsafe { libc::poll(&mut p, 1, Duration::from_secs(5).as_millis() as i32) };
        assert_eq!(n, 1);
        assert_eq!(set.ready(fd), vec![ida]);
        assert_eq!(set.len(), 0);
        // Nothing else ready: the epoll instance is quiet again.
        assert!(set.ready(fd).is_empty());
        a.wait().unwrap();
    }
}
