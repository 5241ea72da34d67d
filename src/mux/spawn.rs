//! Run a child process with a hard deadline and capped output, without helper threads.
//!
//! Why: a tmux client can hang forever (a stopped server, a wedged socket); the scan must never
//! wait on it past its deadline. The pipes are polled non-blocking from this thread, so nothing
//! is left behind when the deadline hits: the child is killed and reaped.

use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsRawFd;
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// What a finished child left behind.
#[derive(Debug)]
pub(crate) struct Output {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// Why a child could not be run to completion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunError {
    /// The program is not on PATH (or the path does not exist).
    NotFound,
    /// Spawning failed for another reason (permission, resources).
    Spawn(String),
    /// The deadline passed; the child was killed.
    Timeout,
    /// The child printed more than the cap; it was killed.
    Oversize,
}

/// Cap on what we keep of stderr (only shown as a short, sanitized detail).
const STDERR_CAP: usize = 64 * 1024;
/// Longest single poll, so an exited child whose pipes a grandchild still holds is noticed.
const POLL_SLICE_MS: i32 = 20;
/// After the child exits, how long we keep reading pipes that stay open (inherited elsewhere).
const DRAIN_GRACE: Duration = Duration::from_millis(100);

fn set_nonblocking(fd: i32) {
    // SAFETY: fcntl on a pipe fd we own; failure only means reads may block briefly, and poll
    // gates every read anyway.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
        }
    }
}

fn kill_and_reap(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// The child's pipes and what is left to feed it.
struct Pipes<'a> {
    out: Option<ChildStdout>,
    err: Option<ChildStderr>,
    inp: Option<ChildStdin>,
    input: &'a [u8],
    written: usize,
}

impl Pipes<'_> {
    /// Take the child's pipes, non-blocking; no stdin pipe when there is nothing to feed.
    fn of<'a>(child: &mut Child, input: &'a [u8]) -> Pipes<'a> {
        let p = Pipes {
            out: child.stdout.take(),
            err: child.stderr.take(),
            inp: child.stdin.take().filter(|_| !input.is_empty()),
            input,
            written: 0,
        };
        for fd in [
            p.out.as_ref().map(|p| p.as_raw_fd()),
            p.err.as_ref().map(|p| p.as_raw_fd()),
            p.inp.as_ref().map(|p| p.as_raw_fd()),
        ]
        .into_iter()
        .flatten()
        {
            set_nonblocking(fd);
        }
        p
    }

    fn output_open(&self) -> bool {
        self.out.is_some() || self.err.is_some()
    }

    /// Wait at most `slice_ms` for any pipe to be ready.
    fn wait(&self, slice_ms: i32) {
        let mut fds: Vec<libc::pollfd> = Vec::with_capacity(3);
        for (p, ev) in [
            (self.out.as_ref().map(|p| p.as_raw_fd()), libc::POLLIN),
            (self.err.as_ref().map(|p| p.as_raw_fd()), libc::POLLIN),
            (self.inp.as_ref().map(|p| p.as_raw_fd()), libc::POLLOUT),
        ] {
            if let Some(fd) = p {
                fds.push(libc::pollfd {
                    fd,
                    events: ev,
                    revents: 0,
                });
            }
        }
        if !fds.is_empty() {
            // SAFETY: `fds` is a valid, initialized slice of pollfd for its whole length.
            let _ = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, slice_ms) };
        } else {
            // Pipes are closed and the child is about to exit: check back soon.
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Read what is there (stdout up to `cap`: `Err(Oversize)` past it; stderr is simply cut at
    /// its cap, it is only ever a short detail) and write what the child will take.
    fn pump(
        &mut self,
        buf: &mut [u8],
        stdout: &mut Vec<u8>,
        stderr: &mut Vec<u8>,
        cap: usize,
    ) -> Result<(), RunError> {
        if let Some(p) = self.out.as_mut() {
            match drain(p, buf, stdout, cap) {
                Drain::Open => {}
                Drain::Eof => self.out = None,
                Drain::Over => return Err(RunError::Oversize),
            }
        }
        if let Some(p) = self.err.as_mut() {
            if let Drain::Eof | Drain::Over = drain(p, buf, stderr, STDERR_CAP) {
                self.err = None;
            }
        }
        if let Some(p) = self.inp.as_mut() {
            match p.write(self.input.get(self.written..).unwrap_or(&[])) {
                Ok(n) => self.written += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                // The child closed its stdin early: nothing more can be delivered.
                Err(_) => self.written = self.input.len(),
            }
            if self.written >= self.input.len() {
                self.inp = None; // dropping closes it: the child sees EOF
            }
        }
        Ok(())
    }
}

/// Run `cmd` to completion before `deadline`, feeding `stdin` (if any) and keeping at most
/// `stdout_cap` bytes of stdout.
pub(crate) fn run(
    cmd: &mut Command,
    stdin: Option<&[u8]>,
    deadline: Instant,
    stdout_cap: usize,
) -> Result<Output, RunError> {
    if Instant::now() >= deadline {
        return Err(RunError::Timeout);
    }
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) if e.kind() == ErrorKind::NotFound => return Err(RunError::NotFound),
        Err(e) => return Err(RunError::Spawn(e.kind().to_string())),
    };
    let mut pipes = Pipes::of(&mut child, stdin.unwrap_or(&[]));
    let r = collect(&mut child, &mut pipes, deadline, stdout_cap);
    if r.is_err() {
        kill_and_reap(&mut child);
    }
    r
}

/// Pump the pipes until the child exited and its output is drained (or the grace after its
/// exit passed). Bounded by the deadline, checked every iteration.
fn collect(
    child: &mut Child,
    pipes: &mut Pipes<'_>,
    deadline: Instant,
    stdout_cap: usize,
) -> Result<Output, RunError> {
    let mut stdout = Vec::new();
    let mut stderr = Vec::new();
    let mut exited: Option<(ExitStatus, Instant)> = None;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let now = Instant::now();
        if now >= deadline {
            return Err(RunError::Timeout);
        }
        if exited.is_none() {
            match child.try_wait() {
                Ok(Some(st)) => exited = Some((st, now)),
                Ok(None) => {}
                Err(_) => return Err(RunError::Spawn("wait failed".into())),
            }
        }
        if let Some((st, at)) = exited {
            if !pipes.output_open() || now.duration_since(at) >= DRAIN_GRACE {
                return Ok(Output {
                    status: st,
                    stdout,
                    stderr,
                });
            }
        }
        let remaining = deadline.saturating_duration_since(now).as_millis();
        pipes.wait(remaining.min(POLL_SLICE_MS as u128).max(1) as i32);
        pipes.pump(&mut buf, &mut stdout, &mut stderr, stdout_cap)?;
    }
}

enum Drain {
    Open,
    Eof,
    Over,
}

fn drain<R: Read>(p: &mut R, buf: &mut [u8], into: &mut Vec<u8>, cap: usize) -> Drain {
    // Bounded: each read either adds bytes (capped) or ends the loop.
    for _ in 0..1024 {
        match p.read(buf) {
            Ok(0) => return Drain::Eof,
            Ok(n) => {
                if into.len() + n > cap {
                    let room = cap.saturating_sub(into.len());
                    into.extend_from_slice(buf.get(..room).unwrap_or(&[]));
                    return Drain::Over;
                }
                into.extend_from_slice(buf.get(..n).unwrap_or(&[]));
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => return Drain::Open,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(_) => return Drain::Eof,
        }
    }
    Drain::Open
}

#[cfg(test)]
mod tests {
    use super::*;

    fn soon(ms: u64) -> Instant {
        Instant::now() + Duration::from_millis(ms)
    }

    #[test]
    fn captures_output_and_feeds_stdin() {
        let out = run(
            Command::new("cat").arg("-"),
            Some(b"hello\n"),
            soon(5000),
            1024,
        )
        .unwrap();
        assert!(out.status.success());
        assert_eq!(out.stdout, b"hello\n");
    }

    #[test]
    fn feeds_and_reads_more_than_a_pipe_buffer() {
        let input: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        let out = run(
            Command::new("cat").arg("-"),
            Some(&input),
            soon(5000),
            1 << 20,
        )
        .unwrap();
        assert_eq!(out.stdout, input);
    }

    #[test]
    fn kills_on_deadline() {
        let t = Instant::now();
        let r = run(Command::new("sleep").arg("5"), None, soon(200), 1024);
        assert_eq!(r.unwrap_err(), RunError::Timeout);
        assert!(t.elapsed() < Duration::from_secs(2));
    }

    #[test]
    fn missing_program_and_oversize() {
        let r = run(
            &mut Command::new("/nonexistent/prog-x"),
            None,
            soon(2000),
            10,
        );
        assert_eq!(r.unwrap_err(), RunError::NotFound);
        let r = run(
            Command::new("head").args(["-c", "100000", "/dev/zero"]),
            None,
            soon(5000),
            1000,
        );
        assert_eq!(r.unwrap_err(), RunError::Oversize);
    }
}
