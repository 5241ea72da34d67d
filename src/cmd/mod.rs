//! Command runners: turn parsed flags into a scan and a view. Each returns its exit enum
//! (`exit`).

pub mod alerts_cmd;
pub mod board_cmd;
pub mod close_cmd;
pub mod close_receipt;
pub mod docs_cmd;
pub mod doctor_cmd;
pub mod ensure_monitor_cmd;
pub mod exit;
pub mod explain_cmd;
pub mod host_cmd;
pub mod jump_cmd;
pub mod live_source;
pub mod monitor_cmd;
pub mod monitor_hosts;
pub mod monitor_ports;
pub mod options;
pub mod register_cmd;
pub mod reply_cmd;
pub mod resume_cmd;
pub mod scan_cmd;
pub mod spawn_cmd;
pub mod status_cmd;
pub mod text_input;
pub mod tool_cmd;
pub mod watch_cmd;

/// One line on standard output. A reader that went away (`status --json | head`) ends the
/// output, never the process with a panic, as `println!` would.
pub fn out(line: std::fmt::Arguments) {
    use std::io::Write;
    let _ = writeln!(std::io::stdout().lock(), "{line}");
}

/// Bytes on standard output; `false` only when writing failed for another reason than the
/// reader going away.
pub fn out_bytes(bytes: &[u8]) -> bool {
    use std::io::Write;
    let mut o = std::io::stdout().lock();
    match o.write_all(bytes).and_then(|()| o.flush()) {
        Ok(()) => true,
        Err(e) => e.kind() == std::io::ErrorKind::BrokenPipe,
    }
}

/// A refusal: printed on stderr, exit 2, nothing written.
pub fn refuse<X: crate::exit_code::Refusable>(msg: impl std::fmt::Display) -> X {
    eprintln!("intercom-pane: {msg}");
    X::REFUSED
}

/// Progress of a command that waits, on stderr: one updating line on a terminal, plain lines
/// otherwise, nothing with `--json`.
pub struct Progress {
    cmd: &'static str,
    quiet: bool,
    tty: bool,
    wrote: std::cell::Cell<bool>,
}

pub fn progress(cmd: &'static str, json: bool) -> Progress {
    use std::io::IsTerminal;
    Progress {
        cmd,
        quiet: json,
        tty: std::io::stderr().is_terminal(),
        wrote: std::cell::Cell::new(false),
    }
}

impl Progress {
    pub fn line(&self, line: &str) {
        use std::io::Write;
        if self.quiet {
            return;
        }
        let mut e = std::io::stderr();
        if self.tty {
            let _ = write!(e, "\r\x1b[2K{}: {line}", self.cmd);
        } else {
            let _ = writeln!(e, "{}: {line}", self.cmd);
        }
        let _ = e.flush();
        self.wrote.set(true);
    }

    /// End the updating line (on a terminal) before the receipt.
    pub fn finish(&self) {
        if self.tty && self.wrote.get() {
            eprintln!();
        }
    }
}
