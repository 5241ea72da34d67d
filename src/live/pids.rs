//! Each seat's pi held by a pidfd (`proc::pidfd`: opened, then confirmed by start ticks and boot
//! id), so its exit makes an fd readable and wakes the engine at once, instead of waiting for the
//! next pass to notice.

use std::collections::HashMap;
use std::os::fd::RawFd;

use crate::proc::pidfd::PidFd;
use crate::proc::ProcIdentity;

/// Most processes held at once (a roster's 256 seats plus panes' own pis).
pub const MAX_HELD: usize = 1024;

/// The pis held now.
#[derive(Default)]
pub struct PidSet {
    held: HashMap<ProcIdentity, PidFd>,
}

impl PidSet {
    pub fn new() -> PidSet {
        PidSet::default()
    }

    /// Hold exactly `ids` (at most `MAX_HELD`): open what is new, close what is no longer
    /// wanted. Returns how many wanted processes could not be held because they are gone already
    /// (a pass should look again: the one that named them is out of date).
    pub fn sync(&mut self, ids: &[ProcIdentity]) -> usize {
        let wanted: Vec<&ProcIdentity> = ids.iter().take(MAX_HELD).collect();
        self.held.retain(|id, _| wanted.contains(&id));
        let mut gone = 0;
        for id in wanted {
            if self.held.contains_key(id) {
                continue;
            }
            match PidFd::open(id) {
                Ok(fd) => {
                    self.held.insert(id.clone(), fd);
                }
                Err(_) => gone += 1,
            }
        }
        gone
    }

    /// The fds to poll, with the identity each holds.
    pub fn fds(&self) -> impl Iterator<Item = (RawFd, &ProcIdentity)> {
        self.held.iter().map(|(id, fd)| (fd.raw(), id))
    }

    /// Stop holding the process behind `fd` (it exited); its identity.
    pub fn take(&mut self, fd: RawFd) -> Option<ProcIdentity> {
        let id = self.held.iter().find(|(_, f)| f.raw() == fd)?.0.clone();
        self.held.remove(&id);
        Some(id)
    }

    pub fn len(&self) -> usize {
        self.held.len()
    }

    pub fn is_empty(&self) -> bool {
        self.held.is_empty()
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
        let (fd, _) = set.fds().next().map(|(f, i)| (f, i.clone())).unwrap();
        a.kill().unwrap();
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let n = unsafe { libc::poll(&mut p, 1, Duration::from_secs(5).as_millis() as i32) };
        assert_eq!(n, 1);
        assert_eq!(set.take(fd), Some(ida));
        assert!(set.is_empty());
        a.wait().unwrap();
    }
}
