//! The quit signals (SIGTERM, SIGHUP, SIGINT) turned into a flag that a loop polls, while a
//! [`StopGuard`] lives: the sidebar quits cleanly with the terminal restored, and close-worker
//! ends its wait with the job recorded (`interrupted`, nothing closed) instead of dying with the
//! job left pending. The one handler for these signals in the process: a `--watch` engine's
//! waker asks to be woken by it too ([`also_wake`]), rather than installing a second one.

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
/// More eventfds a quit signal writes to (an engine's waker; -1: free). Each is a duplicate this
/// module owns for the life of the process, so the number never names another file later.
static ALSO_WAKE: [AtomicI32; 4] = [const { AtomicI32::new(-1) }; 4];

/// A new non-blocking eventfd: what a signal handler or another thread writes to wake a
/// `poll` (this module's quit signals, the live engine's `Waker`).
pub(crate) fn eventfd() -> std::io::Result<OwnedFd> {
    // SAFETY: eventfd(initval, flags) returns a new fd or -1.
    let raw = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
    if raw < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a fresh fd owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(raw) })
}

/// Make `fd` (an eventfd) readable. Async-signal-safe: one `write`.
pub(crate) fn poke(fd: i32) {
    let one: u64 = 1;
    // SAFETY: writes 8 bytes from a valid u64 to an eventfd.
    let _ = unsafe { libc::write(fd, (&one as *const u64).cast(), 8) };
}

/// Empty `fd`'s counter (an eventfd) after a wake.
pub(crate) fn drain(fd: i32) {
    let mut buf = [0u8; 8];
    // SAFETY: reads at most 8 bytes into a valid buffer from a non-blocking eventfd.
    let _ = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
}

extern "C" fn on_stop(_sig: libc::c_int) {
    // An atomic store and an eventfd write: both async-signal-safe.
    STOP.store(true, Ordering::SeqCst);
    let fd = STOP_FD.load(Ordering::SeqCst);
    if fd >= 0 {
        poke(fd);
    }
    for slot in &ALSO_WAKE {
        let fd = slot.load(Ordering::SeqCst);
        if fd >= 0 {
            poke(fd);
        }
    }
}

/// Make a quit signal also write to `fd` (an eventfd someone polls), for the rest of the
/// process. False when every slot is taken or the duplicate could not be made (the caller then
/// still sees [`stop_requested`] at its next wake).
pub(crate) fn also_wake(fd: std::os::fd::BorrowedFd<'_>) -> bool {
    let Ok(dup) = fd.try_clone_to_owned() else {
        return false;
    };
    let raw = dup.as_raw_fd();
    for slot in &ALSO_WAKE {
        if slot
            .compare_exchange(-1, raw, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            // Kept open for the life of the process: the handler may write to it at any time.
            std::mem::forget(dup);
            return true;
        }
    }
    false
}

/// Install the handler for the rest of the process (a `--watch` that ends with its engine).
pub(crate) fn stop_on_signals_for_life() {
    stop_fd();
    for sig in [Signal::SIGTERM, Signal::SIGHUP, Signal::SIGINT] {
        // SAFETY: the handler only stores to an atomic and writes to eventfds, both
        // async-signal-safe.
        let _ = unsafe { sigaction(sig, &quit_action()) };
    }
}

fn quit_action() -> SigAction {
    SigAction::new(
        SigHandler::Handler(on_stop),
        SaFlags::SA_RESTART,
        SigSet::empty(),
    )
}

/// The eventfd a quit signal writes to, made on first use and kept for the life of the process.
fn stop_fd() -> Option<i32> {
    STOP_FD_OWNED
        .get_or_init(|| {
            let fd = eventfd().ok()?;
            STOP_FD.store(fd.as_raw_fd(), Ordering::SeqCst);
            Some(fd)
        })
        .as_ref()
        .map(|fd| fd.as_raw_fd())
}

/// The terminal an interactive view reads keys from, to watch for its hangup: stdin when it is
/// one, else `/dev/tty` (as crossterm picks it), kept open for the life of the process so the
/// number stays valid. `None` when there is none.
pub(crate) fn terminal_fd() -> Option<i32> {
    use std::io::IsTerminal;
    use std::os::fd::IntoRawFd;
    if std::io::stdin().is_terminal() {
        return Some(std::io::stdin().as_raw_fd());
    }
    std::fs::File::open("/dev/tty")
        .ok()
        .map(IntoRawFd::into_raw_fd)
}

/// Why `wait_for_stop` returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Woke {
    /// SIGTERM, SIGHUP or SIGINT arrived.
    Signal,
    /// The watched terminal hung up (its other side closed) or is not valid any more.
    HungUp,
    /// The time given passed.
    Timeout,
}

/// Sleep until a quit signal arrives, `tty` (if given) hangs up, or `limit` passes, in one
/// `poll`, not on a timer: an idle sidebar's signal thread costs nothing while it waits. The
/// terminal is polled for nothing but its hangup and error bits, so no key is read away from
/// the input thread. A terminal that closes without a SIGHUP reaching us (our parent shell
/// ignored it) is noticed here: crossterm's reader spins on a dead terminal instead of failing
/// (crossterm issue 793), so the sidebar must not wait for it to say so.
pub(crate) fn wait_for_stop(tty: Option<i32>, limit: Duration) -> Woke {
    let end = Instant::now() + limit;
    loop {
        if stop_requested() {
            return Woke::Signal;
        }
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Woke::Timeout;
        }
        // No events asked of the terminal: only POLLHUP, POLLERR and POLLNVAL come back.
        let got = poll_with_stop(tty.map(|t| (t, 0)), left);
        if got & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0 {
            return Woke::HungUp;
        }
    }
}

/// Sleep until `fd` is readable (true), a quit signal arrives or `limit` passes (false): a
/// follower's wait on its inotify fd that a quit still ends at once.
pub(crate) fn wait_readable(fd: i32, limit: Duration) -> bool {
    if stop_requested() {
        return false;
    }
    poll_with_stop(Some((fd, libc::POLLIN)), limit) & libc::POLLIN != 0 && !stop_requested()
}

/// One `poll` of the quit eventfd and of `extra` (an fd and the events asked of it), for at most
/// `limit`: what came back on `extra` (0 for nothing, or a timeout). The eventfd is emptied when
/// it fired, so that a signal before this guard does not make a caller spin.
fn poll_with_stop(extra: Option<(i32, libc::c_short)>, limit: Duration) -> libc::c_short {
    let fd = stop_fd();
    let mut fds = Vec::with_capacity(2);
    if let Some(fd) = fd {
        fds.push(libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        });
    }
    if let Some((x, events)) = extra {
        fds.push(libc::pollfd {
            fd: x,
            events,
            revents: 0,
        });
    }
    // Without an eventfd (fd limit) the flag is looked at twice a second.
    let cap = if fd.is_some() {
        limit
    } else {
        limit.min(Duration::from_millis(500))
    };
    let ms = cap.as_millis().clamp(1, i32::MAX as u128) as i32;
    // SAFETY: `fds` is a valid array of `fds.len()` pollfds for the duration of the call.
    let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
    if n <= 0 {
        return 0;
    }
    let mut got = 0;
    for p in &fds {
        if Some(p.fd) == fd && p.revents & libc::POLLIN != 0 {
            drain(p.fd);
        } else if extra.is_some_and(|(x, _)| x == p.fd) {
            got = p.revents;
        }
    }
    got
}

/// Whether a quit signal arrived since the guard was installed.
pub(crate) fn stop_requested() -> bool {
    STOP.load(Ordering::SeqCst)
}

/// While it lives, the quit signals only set the flag; the previous handlers come back on drop.
pub(crate) struct StopGuard {
    prev: Vec<(Signal, SigAction)>,
}

impl StopGuard {
    pub(crate) fn install() -> Self {
        STOP.store(false, Ordering::SeqCst);
        // Made before the handler, so that every signal it sees can wake `wait_for_stop`.
        stop_fd();
        let action = quit_action();
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A real pty pair: (master, slave), both owned.
    fn pty() -> (OwnedFd, OwnedFd) {
        // SAFETY: plain libc calls on a fresh master fd; every result is checked.
        unsafe {
            let m = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC);
            assert!(m >= 0, "posix_openpt");
            let master = OwnedFd::from_raw_fd(m);
            assert_eq!(libc::grantpt(m), 0);
            assert_eq!(libc::unlockpt(m), 0);
            let mut name = [0 as libc::c_char; 128];
            assert_eq!(libc::ptsname_r(m, name.as_mut_ptr(), name.len()), 0);
            let s = libc::open(
                name.as_ptr(),
                libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC,
            );
            assert!(s >= 0, "open the slave");
            (master, OwnedFd::from_raw_fd(s))
        }
    }

    #[test]
    fn a_terminal_whose_other_side_closed_wakes_the_wait_with_no_signal() {
        let (master, slave) = pty();
        // Open: nothing to say within the limit (no key is read: only hangup bits are asked).
        assert_eq!(
            wait_for_stop(Some(slave.as_raw_fd()), Duration::from_millis(50)),
            Woke::Timeout
        );
        drop(master);
        let t = Instant::now();
        assert_eq!(
            wait_for_stop(Some(slave.as_raw_fd()), Duration::from_secs(10)),
            Woke::HungUp
        );
        assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
    }
}
