//! Bounded newline-delimited reading from a non-blocking stream: the listeners' notifications
//! (a tmux control client's output, Herdr's event stream). Each call reads what is there, at
//! most `max_read` bytes, never blocks; a line longer than the cap is skipped whole and reported
//! as such.

use std::io::{ErrorKind, Read};

/// One line read.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Line<'a> {
    Full(&'a [u8]),
    /// A line over the cap (its bytes were dropped).
    Skipped,
}

/// The partial line between reads.
pub(crate) struct Lines {
    buf: Vec<u8>,
    skipping: bool,
    cap: usize,
}

impl Lines {
    pub(crate) fn new(cap: usize) -> Lines {
        Lines {
            buf: Vec::new(),
            skipping: false,
            cap,
        }
    }

    /// Read what `r` has (at most `max_read` bytes), calling `f` for each complete line. False
    /// when the stream ended (end of file or an error other than "nothing yet").
    pub(crate) fn read(
        &mut self,
        r: &mut impl Read,
        max_read: usize,
        mut f: impl FnMut(Line),
    ) -> bool {
        let mut chunk = [0u8; 16 * 1024];
        let mut total = 0;
        while total < max_read {
            match r.read(&mut chunk) {
                Ok(0) => return false,
                Ok(n) => {
                    total += n;
                    for &b in &chunk[..n] {
                        self.byte(b, &mut f);
                    }
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => return true,
                Err(_) => return false,
            }
        }
        true
    }

    fn byte(&mut self, b: u8, f: &mut impl FnMut(Line)) {
        if b == b'\n' {
            if self.skipping {
                f(Line::Skipped);
            } else {
                f(Line::Full(&self.buf));
            }
            self.buf.clear();
            self.skipping = false;
        } else if self.buf.len() >= self.cap {
            self.buf.clear();
            self.skipping = true;
        } else if !self.skipping {
            self.buf.push(b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_split_bounded_and_kept_across_reads() {
        let mut l = Lines::new(8);
        let mut got = Vec::new();
        let mut push = |x: Line| {
            got.push(match x {
                Line::Full(b) => String::from_utf8_lossy(b).into_owned(),
                Line::Skipped => "<skipped>".into(),
            })
        };
        assert!(!l.read(&mut &b"ab\ncd"[..], 1024, &mut push));
        assert!(!l.read(&mut &b"e\n0123456789abc\nz\n"[..], 1024, &mut push));
        assert_eq!(got, ["ab", "cde", "<skipped>", "z"]);
    }
}
