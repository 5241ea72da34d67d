//! A process held by a pidfd: opened on a recorded identity's pid and then confirmed through
//! `/proc` (same start ticks, same boot, not a zombie). Used by close-worker's pin (signals go
//! through it, so they can only reach that one incarnation) and by the live engine (its exit
//! makes the fd readable, which wakes the loop at once).
//!
//! Why the confirmation comes after the open: a pidfd names whatever process held the pid when
//! it was opened. If `/proc` then still shows the recorded start ticks and boot, the recorded
//! process held the pid before the open and still does, so the pidfd names it.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

use super::{read_stat, status, ProcIdentity, ProcStatus};

/// Why a pidfd could not be opened on a recorded identity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OpenError {
    /// The recorded pid is not a valid pid.
    NoValidPid,
    /// No process holds the pid.
    Gone,
    /// The pid is held by a zombie, another incarnation, or a process of another boot.
    NotAlive,
    /// `pidfd_open` failed with this errno.
    Open(i32),
    /// `pidfd_open` returned a value that is no fd.
    ImpossibleFd,
    /// The process exited between the open and the confirmation.
    ExitedWhileOpening,
}

/// A pidfd confirmed to name `id`.
pub(crate) struct PidFd {
    fd: OwnedFd,
    /// The command name at open time: an `exec` into another program changes it.
    comm: String,
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

impl PidFd {
    /// Open a pidfd on `id.pid`, then confirm the identity through `/proc`.
    pub(crate) fn open(id: &ProcIdentity) -> Result<PidFd, OpenError> {
        if id.pid <= 0 {
            return Err(OpenError::NoValidPid);
        }
        // SAFETY: pidfd_open takes (pid_t, unsigned int) and returns a new fd or -1.
        let raw = unsafe { libc::syscall(libc::SYS_pidfd_open, id.pid, 0u32) };
        if raw < 0 {
            return Err(match errno() {
                libc::ESRCH => OpenError::Gone,
                e => OpenError::Open(e),
            });
        }
        let Ok(raw) = i32::try_from(raw) else {
            return Err(OpenError::ImpossibleFd);
        };
        // SAFETY: `raw` is a fresh fd owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let st = read_stat(id.pid).ok_or(OpenError::Gone)?;
        if status(id) != ProcStatus::Alive {
            return Err(OpenError::NotAlive);
        }
        let held = PidFd { fd, comm: st.comm };
        if held.exited() {
            return Err(OpenError::ExitedWhileOpening);
        }
        Ok(held)
    }

    /// The command name when the fd was opened.
    pub(crate) fn comm(&self) -> &str {
        &self.comm
    }

    /// The raw fd (for `pidfd_send_signal` and `poll`).
    pub(crate) fn raw(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// True once the process has exited (a zombie counts as exited).
    pub(crate) fn exited(&self) -> bool {
        self.wait_exit(Duration::ZERO)
    }

    /// Wait up to `d` for the process to exit; true when it has.
    pub(crate) fn wait_exit(&self, d: Duration) -> bool {
        let until = Instant::now() + d;
        loop {
            let left = until.saturating_duration_since(Instant::now());
            let ms = i32::try_from(left.as_millis()).unwrap_or(i32::MAX);
            let mut p = libc::pollfd {
                fd: self.raw(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd, count 1.
            let n = unsafe { libc::poll(&mut p, 1, ms) };
            if n > 0 {
                return true;
            }
            if n == 0 || errno() != libc::EINTR || Instant::now() >= until {
                return false;
            }
        }
    }

    /// Send `sig` to this process only: `Err(errno)` when it fails (`ESRCH`: it has exited).
    pub(crate) fn signal(&self, sig: i32) -> Result<(), i32> {
        // SAFETY: pidfd_send_signal(int pidfd, int sig, siginfo_t *info, unsigned int flags).
        let r = unsafe {
            libc::syscall(
                libc::SYS_pidfd_send_signal,
                self.raw(),
                sig,
                std::ptr::null::<libc::siginfo_t>(),
                0u32,
            )
        };
        if r == 0 {
            Ok(())
        } else {
            Err(errno())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_fd_opens_only_on_its_own_incarnation_and_wakes_on_exit() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        let id = super::super::identity(pid).unwrap();
        let mut wrong = id.clone();
        wrong.start_ticks += 1;
        assert_eq!(PidFd::open(&wrong).err(), Some(OpenError::NotAlive));
        let mut other_boot = id.clone();
        other_boot.boot_id = "00000000-0000-0000-0000-000000000000".into();
        assert_eq!(PidFd::open(&other_boot).err(), Some(OpenError::NotAlive));
        let fd = PidFd::open(&id).unwrap();
        assert!(!fd.exited());
        child.kill().unwrap();
        assert!(fd.wait_exit(Duration::from_secs(5)));
        child.wait().unwrap();
        assert_eq!(fd.signal(libc::SIGTERM), Err(libc::ESRCH));
        assert!(PidFd::open(&id).is_err());
        assert_eq!(
            PidFd::open(&ProcIdentity {
                pid: 0,
                start_ticks: 0,
                boot_id: String::new()
            })
            .err(),
            Some(OpenError::NoValidPid)
        );
    }
}
