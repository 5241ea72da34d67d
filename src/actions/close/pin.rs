//! The worker's pi, pinned: a pidfd opened on the recorded pid and then confirmed through `/proc`
//! (same start ticks, same boot, not a zombie). Every later signal goes through the pidfd, so it
//! can only ever reach that one process incarnation, never a process that reused its pid.
//!
//! Why a pin and not a pid: between "verified" and "closed" the pi may exit and another program
//! may start (in the same pane, or under the same pid). A pidfd tells "the pinned process has
//! exited" exactly, and a signal sent through it fails rather than reaching anyone else.
//!
//! The pidfd itself (opened, then confirmed through `/proc`) is `proc::pidfd`, shared with the
//! live engine.

use std::time::{Duration, Instant};

use crate::proc::pidfd::{OpenError, PidFd};
use crate::proc::{self, ProcIdentity};

/// How long a freeze (SIGSTOP) may take to show in `/proc`.
const FREEZE_WAIT: Duration = Duration::from_secs(1);
/// After SIGTERM, how long the pi gets to exit before SIGKILL.
const TERM_GRACE: Duration = Duration::from_secs(3);
/// After SIGKILL, how long its exit may take to show.
const KILL_WAIT: Duration = Duration::from_secs(2);

pub(super) struct Pin {
    fd: PidFd,
    pub(super) id: ProcIdentity,
    /// The command name at pin time: an `exec` into another program changes it.
    pub(super) comm: String,
}

/// How the pinned pi ended after its pane was closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ended {
    /// It exited on the pane's hangup or our SIGTERM within the grace time.
    Term,
    /// It needed SIGKILL.
    Kill,
    /// Still running after SIGKILL and the wait (or a signal could not be sent).
    Running,
}

impl Ended {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Ended::Term => "SIGTERM",
            Ended::Kill => "SIGKILL",
            Ended::Running => "still running",
        }
    }
}

/// Why the pi could not be pinned, signalled, or is no longer the pinned one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PinError {
    NoValidPid,
    Gone,
    /// gone, a zombie, or another incarnation
    NotAlive,
    /// `pidfd_open` failed with this errno.
    Open(i32),
    ImpossibleFd,
    ExitedWhilePinning,
    Exited,
    OtherProgram,
    /// A signal could not be sent (signal, errno).
    Signal(i32, i32),
    DidNotStop,
}

impl std::fmt::Display for PinError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PinError::NoValidPid => f.write_str("the recorded pi has no valid pid"),
            PinError::Gone => f.write_str("the recorded pi process is gone"),
            PinError::NotAlive => {
                f.write_str("the recorded pi process is gone, a zombie, or another incarnation")
            }
            PinError::Open(e) => write!(f, "cannot pin the pi process (pidfd_open errno {e})"),
            PinError::ImpossibleFd => f.write_str("pidfd_open returned an impossible fd"),
            PinError::ExitedWhilePinning => {
                f.write_str("the recorded pi process exited while it was being pinned")
            }
            PinError::Exited => f.write_str("the pinned pi has exited"),
            PinError::OtherProgram => f.write_str("the pinned pi now runs another program"),
            PinError::Signal(sig, e) => {
                write!(f, "signal {sig} to the pinned pi failed (errno {e})")
            }
            PinError::DidNotStop => f.write_str("the pinned pi did not stop"),
        }
    }
}

impl std::error::Error for PinError {}

impl From<OpenError> for PinError {
    fn from(e: OpenError) -> PinError {
        match e {
            OpenError::NoValidPid => PinError::NoValidPid,
            OpenError::Gone => PinError::Gone,
            OpenError::NotAlive => PinError::NotAlive,
            OpenError::Open(e) => PinError::Open(e),
            OpenError::ImpossibleFd => PinError::ImpossibleFd,
            OpenError::ExitedWhileOpening => PinError::ExitedWhilePinning,
        }
    }
}

impl Pin {
    /// Pin `id`: open a pidfd on its pid, then confirm the identity through `/proc`.
    pub(super) fn open(id: &ProcIdentity) -> Result<Pin, PinError> {
        let fd = PidFd::open(id)?;
        Ok(Pin {
            id: id.clone(),
            comm: fd.comm().to_string(),
            fd,
        })
    }

    /// True once the pinned process has exited (a zombie counts as exited).
    pub(super) fn exited(&self) -> bool {
        self.fd.exited()
    }

    /// Wait up to `d` for the pinned process to exit; true when it has.
    pub(super) fn wait_exit(&self, d: Duration) -> bool {
        self.fd.wait_exit(d)
    }

    /// Send `sig` to the pinned process only. Fails when it has exited.
    pub(super) fn signal(&self, sig: i32) -> Result<(), PinError> {
        self.fd.signal(sig).map_err(|e| match e {
            libc::ESRCH => PinError::Exited,
            e => PinError::Signal(sig, e),
        })
    }

    /// Still the pinned incarnation, running the same program, not exited.
    pub(super) fn still_same(&self) -> Result<(), PinError> {
        if self.exited() {
            return Err(PinError::Exited);
        }
        let st = proc::read_stat(self.id.pid).ok_or(PinError::Exited)?;
        if st.start_ticks != self.id.start_ticks || st.is_gone_state() {
            return Err(PinError::Exited);
        }
        if st.comm != self.comm {
            return Err(PinError::OtherProgram);
        }
        Ok(())
    }

    /// Stop the pinned process (SIGSTOP) and wait until `/proc` shows it stopped, so it can
    /// neither exit on its own nor `exec` another program while its pane is closed.
    pub(super) fn freeze(&self) -> Result<(), PinError> {
        self.signal(libc::SIGSTOP)?;
        let until = Instant::now() + FREEZE_WAIT;
        loop {
            self.still_same()?;
            if proc::read_stat(self.id.pid).is_some_and(|s| matches!(s.state, 'T' | 't')) {
                return Ok(());
            }
            if Instant::now() >= until {
                self.thaw();
                return Err(PinError::DidNotStop);
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Undo `freeze` (nothing closed after all).
    pub(super) fn thaw(&self) {
        let _ = self.signal(libc::SIGCONT);
    }

    /// End the pinned process after its pane is gone: SIGTERM (and SIGCONT, it was frozen),
    /// a bounded wait, then SIGKILL and another bounded wait.
    pub(super) fn end(&self) -> Ended {
        if self.exited() {
            return Ended::Term;
        }
        let _ = self.signal(libc::SIGTERM);
        let _ = self.signal(libc::SIGCONT);
        if self.wait_exit(TERM_GRACE) {
            return Ended::Term;
        }
        let _ = self.signal(libc::SIGKILL);
        if self.wait_exit(KILL_WAIT) {
            Ended::Kill
        } else {
            Ended::Running
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pin_reaches_only_its_own_process() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        let id = proc::identity(pid).unwrap();
        let mut wrong = id.clone();
        wrong.start_ticks += 1;
        assert!(Pin::open(&wrong).is_err(), "another incarnation is refused");
        let pin = Pin::open(&id).unwrap();
        assert!(!pin.exited());
        pin.freeze().unwrap();
        assert_eq!(proc::read_stat(pid).unwrap().state, 'T');
        pin.thaw();
        assert!(pin.still_same().is_ok());
        assert_eq!(pin.end(), Ended::Term);
        child.wait().unwrap();
        assert!(
            pin.signal(libc::SIGTERM).is_err(),
            "nothing else is reached"
        );
        assert!(Pin::open(&id).is_err());
    }
}
