//! A host stream's lines, read on the thread that handles them: one `poll` per wait, so an idle
//! host's heartbeat wakes one thread here, not a reader thread and then its consumer.

use std::io::Read;
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};

/// Why a stream's lines ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StreamEnd {
    Eof,
    /// A line longer than the cap (the stream is not trusted past it).
    LineTooLong,
    Unreadable,
}

impl std::fmt::Display for StreamEnd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            StreamEnd::Eof => "its stream ended (the connection or its program closed it)",
            StreamEnd::LineTooLong => "a line of its stream was longer than the cap",
            StreamEnd::Unreadable => "its stream could not be read",
        })
    }
}

/// What one read takes from the pipe at most.
const CHUNK: usize = 64 * 1024;
/// Waits in one `next` that returned nothing (signals) before it gives up as timed out.
const MAX_ROUNDS: usize = 10_000;

/// Lines of at most `cap` bytes (without the newline) from `src`.
pub(crate) struct Lines<R> {
    src: R,
    cap: usize,
    buf: Vec<u8>,
    /// Where the next line starts in `buf`.
    start: usize,
    /// Bytes after `start` already looked at and holding no newline (a long line is read in
    /// many chunks: each is searched once).
    searched: usize,
    ended: Option<StreamEnd>,
}

impl<R: Read + AsFd> Lines<R> {
    pub(crate) fn new(src: R, cap: usize) -> Lines<R> {
        Lines {
            src,
            cap,
            buf: Vec::new(),
            start: 0,
            searched: 0,
            ended: None,
        }
    }

    /// The next line, its end, or `None` when none came within `within`. A line cut off by the
    /// end is no line (the end is said instead); once ended, every call says the same end.
    pub(crate) fn next(&mut self, within: Duration) -> Option<Result<String, StreamEnd>> {
        let until = Instant::now() + within;
        // Each round takes a line, ends, reads at least one byte (at most `cap` + CHUNK held),
        // or waits until `until`.
        for _ in 0..MAX_ROUNDS {
            if let Some(e) = &self.ended {
                return Some(Err(e.clone()));
            }
            let rest = self.buf.get(self.start..).unwrap_or_default();
            let new = rest.get(self.searched..).unwrap_or_default();
            if let Some(i) = memchr::memchr(b'\n', new).map(|i| i + self.searched) {
                let line = rest.get(..i).unwrap_or_default();
                if line.len() > self.cap {
                    self.ended = Some(StreamEnd::LineTooLong);
                    continue;
                }
                let text = String::from_utf8_lossy(line).into_owned();
                self.start += i + 1;
                self.searched = 0;
                return Some(Ok(text));
            }
            self.searched = rest.len();
            if rest.len() > self.cap {
                self.ended = Some(StreamEnd::LineTooLong);
                continue;
            }
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            match self.readable(left) {
                Some(true) => {}
                Some(false) => return None,
                // A signal: wait again for what is left.
                None => continue,
            }
            self.buf.drain(..self.start);
            self.start = 0;
            let have = self.buf.len();
            self.buf.resize(have + CHUNK, 0);
            let got = self.src.read(self.buf.get_mut(have..).unwrap_or_default());
            match got {
                Ok(0) => {
                    self.buf.truncate(have);
                    self.ended = Some(StreamEnd::Eof);
                }
                Ok(n) => self.buf.truncate(have + n),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => self.buf.truncate(have),
                Err(_) => {
                    self.buf.truncate(have);
                    self.ended = Some(StreamEnd::Unreadable);
                }
            }
        }
        None
    }

    /// Whether something (or the end) can be read within `left`; `None` when a signal ended the
    /// wait. Not `signals::wait_readable`: a quit there reads as nothing come, which would make
    /// a host look silent; a stop ends this wait by ending ssh (`Ender`) instead. A wait that failed otherwise ends the stream as unreadable (said next round).
    fn readable(&mut self, left: Duration) -> Option<bool> {
        // Rounded up: a wait never ends before its time.
        let ms = u32::try_from(left.as_micros().div_ceil(1000)).unwrap_or(u32::MAX);
        let timeout = PollTimeout::try_from(ms).unwrap_or(PollTimeout::MAX);
        let mut fds = [PollFd::new(self.src.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, timeout) {
            Ok(0) => Some(false),
            Ok(_) => Some(true),
            Err(nix::errno::Errno::EINTR) => None,
            Err(_) => {
                self.ended = Some(StreamEnd::Unreadable);
                Some(true)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Child, Command, Stdio};

    /// The script's lines, and the script to reap.
    fn lines_of(script: &str, cap: usize) -> (Lines<std::process::ChildStdout>, Child) {
        let mut c = Command::new("/bin/sh")
            .args(["-c", script])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        (Lines::new(c.stdout.take().unwrap(), cap), c)
    }

    fn reap(mut c: Child) {
        let _ = c.kill();
        let _ = c.wait();
    }

    #[test]
    fn lines_come_whole_in_order_then_the_end() {
        let (mut l, c) = lines_of("printf 'a\\nbb\\n'; sleep 0.2; printf 'c\\nhalf'", 8);
        let s = Duration::from_secs(5);
        assert_eq!(l.next(s), Some(Ok("a".into())));
        assert_eq!(l.next(s), Some(Ok("bb".into())));
        assert_eq!(l.next(s), Some(Ok("c".into())));
        // A line cut off by the end is no line.
        assert_eq!(l.next(s), Some(Err(StreamEnd::Eof)));
        assert_eq!(l.next(s), Some(Err(StreamEnd::Eof)));
        reap(c);
        // A line longer than a read, in many chunks, whole; the one after it too.
        let (mut l, c) = lines_of(
            "head -c 300000 /dev/zero | tr '\\0' y; printf '\\nz\\n'",
            300_000,
        );
        assert_eq!(l.next(s), Some(Ok("y".repeat(300_000))));
        assert_eq!(l.next(s), Some(Ok("z".into())));
        assert_eq!(l.next(s), Some(Err(StreamEnd::Eof)));
        reap(c);
    }

    #[test]
    fn a_silent_stream_times_out_and_a_long_line_ends_it() {
        let (mut l, c) = lines_of("sleep 2", 8);
        let t = Instant::now();
        assert_eq!(l.next(Duration::from_millis(150)), None);
        assert!(t.elapsed() >= Duration::from_millis(150));
        reap(c);
        let (mut l, c) = lines_of("printf '12345678\\n123456789\\nnext\\n'", 8);
        let s = Duration::from_secs(5);
        assert_eq!(l.next(s), Some(Ok("12345678".into())));
        assert_eq!(l.next(s), Some(Err(StreamEnd::LineTooLong)));
        assert_eq!(l.next(s), Some(Err(StreamEnd::LineTooLong)));
        reap(c);
        // Without a newline too: past the cap is enough.
        let (mut l, c) = lines_of("head -c 100000 /dev/zero | tr '\\0' x; sleep 2", 1000);
        assert_eq!(l.next(s), Some(Err(StreamEnd::LineTooLong)));
        reap(c);
    }
}
