//! Command runners: turn parsed flags into a scan and a view. Each returns its exit enum
//! (`exit`).

pub(crate) mod alerts_cmd;
pub(crate) mod board_cmd;
pub(crate) mod budget_cmd;
pub(crate) mod close_cmd;
pub(crate) mod close_receipt;
pub(crate) mod commands_md;
pub(crate) mod completion_names;
pub(crate) mod docs_cmd;
pub(crate) mod doctor_cmd;
pub(crate) mod ensure_monitor_cmd;
pub(crate) mod exit;
pub(crate) mod explain_cmd;
pub(crate) mod host_cmd;
pub(crate) mod host_forward;
pub(crate) mod jump_back;
pub(crate) mod jump_cmd;
pub(crate) mod live_source;
pub(crate) mod log_cmd;
pub(crate) mod monitor_cmd;
pub(crate) mod monitor_hosts;
pub(crate) mod monitor_ports;
pub(crate) mod options;
pub(crate) mod register_cmd;
pub(crate) mod reply_cmd;
pub(crate) mod restore_cmd;
pub(crate) mod resume_cmd;
pub(crate) mod review_cmd;
pub(crate) mod scan_cmd;
pub(crate) mod spawn_cmd;
pub(crate) mod status_cmd;
pub(crate) mod text_input;
pub(crate) mod tool_cmd;
pub(crate) mod watch_cmd;

/// One line on standard output. A reader that went away (`status --json | head`) ends the
/// output, never the process with a panic, as `println!` would.
pub(crate) fn out(line: std::fmt::Arguments) {
    use std::io::Write;
    let _ = writeln!(std::io::stdout().lock(), "{line}");
}

/// Bytes on standard output; `false` only when writing failed for another reason than the
/// reader going away.
pub(crate) fn out_bytes(bytes: &[u8]) -> bool {
    use std::io::Write;
    let mut o = std::io::stdout().lock();
    match o.write_all(bytes).and_then(|()| o.flush()) {
        Ok(()) => true,
        Err(e) => e.kind() == std::io::ErrorKind::BrokenPipe,
    }
}

/// A refusal: printed on stderr, exit 2, nothing written.
pub(crate) fn refuse<X: crate::exit_code::Refusable>(msg: impl std::fmt::Display) -> X {
    eprintln!("intercom-pane: {msg}");
    X::REFUSED
}

/// Progress of a command that waits, on stderr: one updating line on a terminal, plain lines
/// otherwise, nothing with `--json`.
pub(crate) struct Progress {
    cmd: &'static str,
    quiet: bool,
    tty: bool,
    wrote: std::cell::Cell<bool>,
}

pub(crate) fn progress(cmd: &'static str, json: bool) -> Progress {
    use std::io::IsTerminal;
    Progress {
        cmd,
        quiet: json,
        tty: std::io::stderr().is_terminal(),
        wrote: std::cell::Cell::new(false),
    }
}

impl Progress {
    pub(crate) fn line(&self, line: &str) {
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
    pub(crate) fn finish(&self) {
        if self.tty && self.wrote.get() {
            eprintln!();
        }
    }
}
