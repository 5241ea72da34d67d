//! A tmux control-mode client that only listens (docs/interop.md §7a): the server tells us when
//! windows, panes or sessions come and go, instead of being asked every pass.
//!
//! How it is attached, so that it never changes what a person sees:
//! `tmux -N -u -S <socket> -C attach-session -E -f ignore-size,no-output,read-only -t $N`:
//! `ignore-size` (its size never counts for any window), `no-output` (no pane output is sent to
//! it), `read-only` (it cannot run a command that changes anything), `-E` (the session's
//! environment is not updated from ours), `-N` (never starts a server), and never `-d` (no
//! one else is detached). Nothing is ever written to its stdin; the pipe is held open only
//! because tmux ends a control client at end of input, so it also ends with us. It shows up in
//! `list-clients` with `#{client_control_mode}` = 1 and attaches to one session (`session_attached`
//! counts it); nothing in intercom-pane reads either.
//!
//! What it hears: `%window-add`, `%unlinked-window-add`, `%window-close`,
//! `%unlinked-window-close`, `%layout-change` (panes split or closed in its own session),
//! `%window-pane-changed`, `%sessions-changed`, `%session-changed`, `%session-renamed`,
//! `%window-renamed` (also tmux's automatic rename when a pane's command changes) and `%exit`.
//! Every line is treated as data: the only thing any of them can do is make the engine list the
//! panes again (a forged line costs one listing, never a wrong state). Lines are bounded.

use std::io::ErrorKind;
use std::os::fd::{AsRawFd, RawFd};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::time::Instant;

use super::args::Args;
use super::{ErrorCode, MuxError, Tmux};
use crate::mux::lines::{Line, Lines};

/// Longest line kept; the rest of a longer line is skipped (it still counts as a change).
const MAX_LINE: usize = 8 * 1024;
/// Most bytes read in one `read_notices` call; the fd stays readable for the next.
const MAX_READ: usize = 256 * 1024;

/// What one notification means for the engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Notice {
    /// The attach command finished (`%end` of the first block): the client is listening.
    Ready,
    /// Windows, panes or sessions may have changed: list the panes again.
    Panes,
    /// The client was detached or its server ended (`%exit`), or its output ended.
    Exit,
}

/// A running control-mode client.
pub struct ControlClient {
    child: Child,
    /// Held open: tmux ends a control client at end of input.
    _stdin: ChildStdin,
    stdout: ChildStdout,
    lines: Lines,
    state: State,
}

/// What the lines so far said.
#[derive(Default)]
struct State {
    /// Inside a `%begin`…`%end` block (a command's reply, never a notification).
    in_block: bool,
    ready: bool,
    ended: bool,
}

/// `$N`: a session id as tmux prints it (nothing a format or a shell would read).
fn is_session_id(s: &str) -> bool {
    s.strip_prefix('$')
        .is_some_and(|n| !n.is_empty() && n.len() <= 10 && n.bytes().all(|b| b.is_ascii_digit()))
}

impl Tmux {
    /// Attach a listening control-mode client to session `session_id` (`$N`).
    pub fn control_client(
        &self,
        session_id: &str,
        deadline: Instant,
    ) -> Result<ControlClient, MuxError> {
        if !is_session_id(session_id) {
            return Err(MuxError::new(ErrorCode::BadRequest, "invalid session id"));
        }
        self.server_may_listen()?;
        let version = self.version(deadline)?;
        let args = Args::new("attach-session")
            .arg("-E")
            .arg("-f")
            .arg("ignore-size,no-output,read-only")
            .arg("-t")
            .arg(session_id);
        let mut c = self.base_command();
        if version >= (3, 3) {
            c.arg("-N");
        }
        c.arg("-u")
            .arg("-S")
            .arg(&self.socket)
            .arg("-C")
            .args(&args.0)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = c.spawn().map_err(|e| match e.kind() {
            ErrorKind::NotFound => MuxError::new(ErrorCode::NotInstalled, "tmux not found"),
            k => MuxError::new(ErrorCode::Failed, k.to_string()),
        })?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(MuxError::new(ErrorCode::Failed, "no pipes to tmux"));
        };
        set_nonblocking(stdout.as_raw_fd());
        Ok(ControlClient {
            child,
            _stdin: stdin,
            stdout,
            lines: Lines::new(MAX_LINE),
            state: State::default(),
        })
    }
}

fn set_nonblocking(fd: RawFd) {
    // SAFETY: fcntl on a pipe fd we own; failure only means a read could block, and the engine
    // reads only after poll said the fd is readable.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
        }
    }
}

impl ControlClient {
    /// The fd to poll: readable when tmux said something (or the client ended).
    pub fn raw_fd(&self) -> RawFd {
        self.stdout.as_raw_fd()
    }

    /// Whether the client has ended (`%exit` or end of its output).
    pub fn ended(&self) -> bool {
        self.state.ended
    }

    /// Whether the attach finished and the client is listening.
    pub fn ready(&self) -> bool {
        self.state.ready
    }

    /// Read what tmux sent (bounded, never blocks) and say what it means.
    pub fn read_notices(&mut self, out: &mut Vec<Notice>) {
        if self.state.ended {
            return;
        }
        let state = &mut self.state;
        let open = self.lines.read(&mut self.stdout, MAX_READ, |l| match l {
            Line::Full(line) => state.line(line, out),
            // A line over the cap still counts as a change.
            Line::Skipped => out.push(Notice::Panes),
        });
        if !open {
            self.state.end(out);
        }
    }
}

impl State {
    fn end(&mut self, out: &mut Vec<Notice>) {
        if !self.ended {
            self.ended = true;
            out.push(Notice::Exit);
        }
    }

    fn line(&mut self, line: &[u8], out: &mut Vec<Notice>) {
        if self.ended {
            return;
        }
        let word = line.split(|&b| b == b' ').next().unwrap_or(&[]);
        match word {
            b"%begin" => self.in_block = true,
            b"%end" | b"%error" => {
                self.in_block = false;
                if !self.ready {
                    self.ready = true;
                    if word == b"%end" {
                        out.push(Notice::Ready);
                    } else {
                        self.end(out);
                    }
                }
            }
            _ if self.in_block => {}
            b"%exit" => self.end(out),
            // Output, flow control and things that change no pane.
            b"%output"
            | b"%extended-output"
            | b"%pause"
            | b"%continue"
            | b"%client-detached"
            | b"%client-session-changed"
            | b"%session-window-changed"
            | b"%pane-mode-changed"
            | b"%paste-buffer-changed"
            | b"%paste-buffer-deleted"
            | b"%subscription-changed"
            | b"%message"
            | b"%config-error" => {}
            // Anything else, known or not, may mean panes changed.
            _ => out.push(Notice::Panes),
        }
    }
}

impl Drop for ControlClient {
    fn drop(&mut self) {
        // The client only listens: ending it changes nothing on the server.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The notices `text` gives, read as the client reads its pipe (then its end).
    fn notices(text: &[u8]) -> (Vec<Notice>, State) {
        let mut out = Vec::new();
        let mut state = State::default();
        let mut lines = Lines::new(MAX_LINE);
        let open = lines.read(&mut &text[..], usize::MAX, |l| match l {
            Line::Full(line) => state.line(line, &mut out),
            Line::Skipped => out.push(Notice::Panes),
        });
        assert!(!open);
        state.end(&mut out);
        (out, state)
    }

    #[test]
    fn notifications_become_notices_and_replies_do_not() {
        let (n, state) = notices(
            b"%begin 1 2 0\n%window-add @9\n%end 1 2 0\n%session-changed $1 a\n\
              %output %1 hi\n%unlinked-window-close @3\n%client-detached x\n%exit\n\
              %window-add @10\n",
        );
        assert_eq!(
            n,
            vec![Notice::Ready, Notice::Panes, Notice::Panes, Notice::Exit]
        );
        assert!(state.ended && state.ready);
        // A line over the cap is skipped whole, and still counts.
        let mut long = vec![b'x'; MAX_LINE * 2];
        long.push(b'\n');
        assert_eq!(notices(&long).0, vec![Notice::Panes, Notice::Exit]);
        // A failed attach ends it.
        assert_eq!(
            notices(b"%begin 1 2 0\ncan't find session\n%error 1 2 0\n").0,
            vec![Notice::Exit]
        );
    }

    #[test]
    fn only_session_ids_are_attached_to() {
        assert!(is_session_id("$0") && is_session_id("$12"));
        for bad in ["", "$", "0", "$1;", "$-1", "#{S}", "$1 ", "=x"] {
            assert!(!is_session_id(bad), "{bad}");
        }
    }
}
