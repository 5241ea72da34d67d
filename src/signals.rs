//! The quit signals (SIGTERM, SIGHUP, SIGINT) turned into a flag that a loop polls, while a
//! [`StopGuard`] lives: the sidebar quits cleanly with the terminal restored, and close-worker
//! ends its wait with the job recorded (`interrupted`, nothing closed) instead of dying with the
//! job left pending.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};

/// Set by the handler; read by whoever polls [`stop_requested`].
static STOP: AtomicBool = AtomicBool::new(false);
/// The eventfd the handler writes to, so that a thread can sleep until a quit signal instead of
/// looking at the flag on a timer (-1 until [`wait_for_stop`] made it).
static STOP_FD: AtomicI32 = AtomicI32::new(-1);
static STOP_FD_OWNED: OnceLock<Option<OwnedFd>> = OnceLock::new();

extern "C" fn on_stop(_sig: libc::c_int) {
    // An atomic store and an eventfd write: both async-signal-safe.
    STOP.store(true, Ordering::SeqCst);
    let fd = STOP_FD.load(Ordering::SeqCst);
    if fd >= 0 {
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a valid u64 to our own eventfd.
        let _ = unsafe { libc::write(fd, (&one as *const u64).cast(), 8) };
    }
}

/// The eventfd a quit signal writes to, made on first use.
fn stop_fd() -> Option<i32> {
    STOP_FD_OWNED
        .get_or_init(|| {
            // SAFETY: eventfd(initval, flags) returns a new fd or -1.
            let raw = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
            if raw < 0 {
                return None;
            }
            STOP_FD.store(raw, Ordering::SeqCst);
            // SAFETY: a fresh fd owned by nobody else; kept for the life of the process.
            Some(unsafe { OwnedFd::from_raw_fd(raw) })
        })
        .as_ref()
        .map(|fd| fd.as_raw_fd())
}

/// Sleep until a quit signal arrives (true) or `limit` passes (false), in one `poll`, not on a
/// timer: an idle sidebar's signal thread costs nothing while it waits.
pub fn wait_for_stop(limit: Duration) -> bool {
    let fd = stop_fd();
    let end = Instant::now() + limit;
    loop {
        if stop_requested() {
            return true;
        }
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        let ms = left.as_millis().clamp(1, i32::MAX as u128) as i32;
        match fd {
            Some(fd) => {
                let mut p = libc::pollfd {
                    fd,
                    events: libc::POLLIN,
                    revents: 0,
                };
                // SAFETY: one valid pollfd for the duration of the call.
                if unsafe { libc::poll(&mut p, 1, ms) } == 1 {
                    // Emptied, so that a signal before this guard does not make it spin.
                    let mut buf = [0u8; 8];
                    // SAFETY: reads at most 8 bytes into a valid buffer from our eventfd.
                    let _ = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
                }
            }
            // No eventfd (fd limit): look at the flag twice a second.
            None => std::thread::sleep(left.min(Duration::from_millis(500))),
        }
    }
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
        // Made before the handler, so that every signal it sees can wake `wait_for_stop`.
        stop_fd();
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
