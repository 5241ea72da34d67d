//! Waking the engine's `poll` from another thread or a signal handler: an eventfd. Writing to it
//! is async-signal-safe, so SIGTERM, SIGHUP and SIGINT end a `--watch` at once, not at its next
//! timer.

use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// One eventfd and a stop flag, shared by the engine and whoever may end it.
#[derive(Clone)]
pub struct Waker {
    fd: Arc<OwnedFd>,
    stop: Arc<AtomicBool>,
    /// Set by `interrupt`: the engine's wait returns (as at its own time) once.
    interrupted: Arc<AtomicBool>,
}

impl Waker {
    pub fn new() -> std::io::Result<Waker> {
        Ok(Waker {
            fd: Arc::new(crate::signals::eventfd()?),
            stop: Arc::new(AtomicBool::new(false)),
            interrupted: Arc::new(AtomicBool::new(false)),
        })
    }

    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Wake the engine (it looks at what changed and sleeps again).
    pub fn wake(&self) {
        crate::signals::poke(self.raw_fd());
    }

    /// End the engine's current (or next) wait once, as if the caller's own time had come
    /// (the hosts board moving this machine's passes to a thread of their own).
    pub fn interrupt(&self) {
        self.interrupted.store(true, Ordering::SeqCst);
        self.wake();
    }

    /// Whether `interrupt` was called since the last look (and forget it).
    pub(crate) fn take_interrupt(&self) -> bool {
        self.interrupted.swap(false, Ordering::SeqCst)
    }

    /// Ask the engine to stop, and wake it.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        self.wake();
    }

    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst) || crate::signals::stop_requested()
    }

    /// Empty the counter after a wake.
    pub fn drain(&self) {
        crate::signals::drain(self.raw_fd());
    }

    /// Make SIGTERM, SIGHUP and SIGINT stop this engine (`--watch`: a clean exit 0), through
    /// the process's one quit handler (`crate::signals`). Not undone: the process ends with the
    /// watch.
    pub fn stop_on_signals(&self) {
        crate::signals::also_wake(self.fd.as_fd());
        crate::signals::stop_on_signals_for_life();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wake_makes_the_fd_readable_until_drained() {
        let w = Waker::new().unwrap();
        let readable = |w: &Waker| {
            let mut p = libc::pollfd {
                fd: w.raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd.
            unsafe { libc::poll(&mut p, 1, 0) == 1 }
        };
        assert!(!readable(&w));
        w.wake();
        w.wake();
        assert!(readable(&w));
        w.drain();
        assert!(!readable(&w));
        let w2 = w.clone();
        w2.stop();
        assert!(w.stopped() && readable(&w));
    }
}
