//! Progress of a waiting close on stderr: the stage, the time spent and the deadline. On a
//! terminal one line is rewritten in place (`\r`); otherwise a plain line is printed when the
//! stage changes and every few seconds. Off entirely with `--json`.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use crate::clock::Ms;

/// Plain (non-terminal) lines repeat at most this often for one stage.
const PLAIN_EVERY: Duration = Duration::from_secs(5);

pub(super) struct Progress<'a> {
    on: bool,
    /// Told each new stage (the sidebar's row), whether or not lines are printed.
    sink: Option<&'a dyn Fn(&str)>,
    tty: bool,
    started: Instant,
    stage: String,
    last_line: Option<Instant>,
    drawn: bool,
}

impl<'a> Progress<'a> {
    pub(super) fn new(on: bool, sink: Option<&'a dyn Fn(&str)>) -> Progress<'a> {
        Progress {
            on,
            sink,
            tty: std::io::stderr().is_terminal(),
            started: Instant::now(),
            stage: String::new(),
            last_line: None,
            drawn: false,
        }
    }

    /// Report that the run is at `stage`; `left_ms` is the time to the job's deadline.
    pub(super) fn tick(&mut self, stage: &str, now: Ms, deadline_at: Ms) {
        if let Some(sink) = self.sink.filter(|_| self.stage != stage) {
            sink(stage);
        }
        if !self.on {
            self.stage = stage.to_string();
            return;
        }
        let elapsed = self.started.elapsed().as_secs_f64();
        let left = (deadline_at - now).max(0) as f64 / 1000.0;
        let text =
            format!("close-worker: {stage}, {elapsed:.1} s elapsed, deadline in {left:.1} s");
        let mut err = std::io::stderr().lock();
        if self.tty {
            let _ = write!(err, "\r\x1b[K{text}");
            let _ = err.flush();
            self.drawn = true;
        } else if self.stage != stage || self.last_line.is_none_or(|t| t.elapsed() >= PLAIN_EVERY) {
            let _ = writeln!(err, "{text}");
            self.last_line = Some(Instant::now());
        }
        self.stage = stage.to_string();
    }

    /// One plain line that stays (what the run waits for and why), printed above the updating
    /// line; off with `--json`.
    pub(super) fn note(&mut self, text: &str) {
        if !self.on {
            return;
        }
        let mut err = std::io::stderr().lock();
        if self.tty && self.drawn {
            let _ = write!(err, "\r\x1b[K");
            self.drawn = false;
        }
        let _ = writeln!(err, "close-worker: {}", crate::text::sanitize(text));
    }

    /// End the updating line (terminal only) before the report is printed.
    pub(super) fn done(&mut self) {
        if self.on && self.tty && self.drawn {
            let _ = writeln!(std::io::stderr());
            self.drawn = false;
        }
    }
}
