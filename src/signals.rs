//! The quit signals (SIGTERM, SIGHUP, SIGINT) turned into a flag that a loop polls, while a
//! [`StopGuard`] lives: the sidebar quits cleanly with the terminal restored, and close-worker
//! ends its wait with the job recorded (`interrupted`, nothing closed) instead of dying with the
//! job left pending.

use std::sync::atomic::{AtomicBool, Ordering};

use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};

/// Set by the handler; read by whoever polls [`stop_requested`].
static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_stop(_sig: libc::c_int) {
    // Only an atomic store: the one thing a signal handler may safely do here.
    STOP.store(true, Ordering::SeqCst);
}

/// Whether a quit signal arrived since the guard was installed.
pub fn stop_requested() -> bool {
    STOP.load(Ordering::SeqCst)
}

/// While it lives, the quit signals only set the flag; the previous handlers come back on drop.
pub struct StopGuard {
    prev: Vec<(Signal, SigAction)>,
}

impl StopGuard {
    pub fn install() -> Self {
        STOP.store(false, Ordering::SeqCst);
        let action = SigAction::new(
            SigHandler::Handler(on_stop),
            SaFlags::SA_RESTART,
            SigSet::empty(),
        );
        let mut prev = Vec::new();
        for sig in [Signal::SIGTERM, Signal::SIGHUP, Signal::SIGINT] {
            // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
            if let Ok(old) = unsafe { sigaction(sig, &action) } {
                prev.push((sig, old));
            }
        }
        StopGuard { prev }
    }
}

impl Drop for StopGuard {
    fn drop(&mut self) {
        for (sig, old) in self.prev.drain(..) {
            // SAFETY: restores the handler that was installed before ours.
            let _ = unsafe { sigaction(sig, &old) };
        }
    }
}
