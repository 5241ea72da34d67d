//! `intercom-pane log NAME [--since D|ISO] [--json] [--follow]`: one pass to find the seat (as
//! `explain` does) and its session file, then its timeline (`evidence::sessions::timeline`),
//! read backward to the cutoff; `--follow` then prints each entry as pi writes it, woken by
//! inotify on the file's folder, until a quit signal.

use std::fs::File;
use std::path::Path;
use std::time::Duration;

use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify};

use crate::cli::LogArgs;
use crate::cmd::exit::LogExit;
use crate::cmd::{options, refuse};
use crate::evidence::sessions::timeline::{self, Builder, Follower, LogEntry, What};
use crate::views::timeline::{line, render, seat_log, LogRefusal, LogView, SeatLog};

/// Bytes a follower reads per wake (the rest waits for the next one, at once).
const FOLLOW_WAKE_BYTES: u64 = 16 * 1024 * 1024;
/// Longest sleep between looks when no event came: only a guard against a lost wake-up.
const FOLLOW_GUARD: Duration = Duration::from_secs(5);

pub(crate) fn run(args: &LogArgs) -> LogExit {
    let (r, pass) = match options::resolve_and_scan(&args.src) {
        Ok(x) => x,
        Err(e) => return refuse(e),
    };
    let now = r.clock.now_ms();
    let since = match args.since.as_deref() {
        None => None,
        Some(s) => match timeline::parse_since(s, now) {
            Some(at) => Some(at),
            None => {
                return refuse(format!(
                    "--since {:?}: give a duration (45s, 30m, 2h, 1d) or an ISO time",
                    crate::text::clip(&crate::text::sanitize(s), 40)
                ))
            }
        },
    };
    let SeatLog {
        key,
        file,
        read,
        session_id,
        entries,
    } = match seat_log(&pass, &args.name, since) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("intercom-pane: {e}");
            return match e {
                LogRefusal::Unknown(..) | LogRefusal::Ambiguous(_) => LogExit::UnknownSeat,
                LogRefusal::NoSessionFile(_) | LogRefusal::Unreadable(..) => LogExit::NoSession,
            };
        }
    };
    let path = Path::new(&file);
    let view = LogView {
        seat: &key,
        file: &file,
        since,
        bytes_read: read.bytes,
        truncated: read.truncated,
        skipped: read.builder.skipped,
        entries: entries.iter().collect(),
    };
    if args.follow && args.json {
        for e in &view.entries {
            json_line(e);
        }
    } else if args.json {
        crate::cmd::out(format_args!(
            "{}",
            crate::views::json::to_string_pretty(&view).unwrap_or_default()
        ));
    } else {
        for l in render(&view) {
            crate::cmd::out(format_args!("{l}"));
        }
    }
    if !args.follow {
        return LogExit::Printed;
    }
    let mut builder = read.builder;
    let opened = read.file;
    let senders = Senders {
        data_root: &pass.data_root,
        session_id: session_id.as_deref(),
    };
    follow(
        path,
        &opened,
        Follower::at(read.end),
        &mut builder,
        &senders,
        args.json,
    )
}

fn no_session(file: &str, code: &str) -> LogExit {
    eprintln!(
        "intercom-pane: cannot read the session file {}: {code}",
        crate::text::sanitize(file)
    );
    LogExit::NoSession
}

/// One line on standard output, flushed; false when it cannot be written (the reader left).
fn emit(s: &str) -> bool {
    use std::io::Write;
    let mut o = std::io::stdout().lock();
    writeln!(o, "{s}").and_then(|()| o.flush()).is_ok()
}

fn json_line(e: &LogEntry) -> bool {
    match serde_json::to_string(e) {
        Ok(s) => emit(&s),
        Err(_) => true,
    }
}

/// Print each new or changed entry until a quit signal, the reader going away, or the file
/// being replaced or cut (then pi writes elsewhere: run `log` again).
/// Where the reply path's records of the seat are: who sent a message `--follow` prints.
struct Senders<'a> {
    data_root: &'a Path,
    session_id: Option<&'a str>,
}

impl Senders<'_> {
    /// Name the senders of `entries`, reading the records only when a new message is among them.
    fn attribute(&self, entries: &mut [LogEntry]) {
        let Some(sid) = self.session_id else { return };
        let wanted = entries.iter().any(|e| {
            matches!(&e.what, What::Turn(t) if !t.from.sha256.is_empty())
                || matches!(&e.what, What::Answer { .. })
        });
        if wanted {
            timeline::attribute(
                entries,
                &crate::actions::reply::sent::read(self.data_root, sid),
            );
        }
    }
}

fn follow(
    path: &Path,
    file: &File,
    mut f: Follower,
    b: &mut Builder,
    senders: &Senders,
    json: bool,
) -> LogExit {
    let _signals = crate::signals::StopGuard::install();
    let dir = path.parent().unwrap_or(Path::new("."));
    let ino = match Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC) {
        Ok(i) => i,
        Err(e) => return refuse(format!("--follow cannot watch: {e}")),
    };
    let mask = AddWatchFlags::IN_MODIFY
        | AddWatchFlags::IN_CLOSE_WRITE
        | AddWatchFlags::IN_MOVED_TO
        | AddWatchFlags::IN_CREATE
        | AddWatchFlags::IN_DELETE_SELF
        | AddWatchFlags::IN_MOVE_SELF;
    if let Err(e) = ino.add_watch(dir, mask) {
        return refuse(format!("--follow cannot watch the session folder: {e}"));
    }
    let fd = std::os::fd::AsRawFd::as_raw_fd(&std::os::fd::AsFd::as_fd(&ino));
    loop {
        if crate::signals::stop_requested() {
            return LogExit::Printed;
        }
        // Read first, then wait: lines written before the watch existed are not missed.
        let len = match file.metadata() {
            Ok(m) => m.len(),
            Err(e) => return no_session(&path.display().to_string(), &e.to_string()),
        };
        if len < f.end {
            eprintln!("intercom-pane: the session file was cut; run `log` again");
            return LogExit::NoSession;
        }
        if let Err(e) = f.advance(file, len, b, FOLLOW_WAKE_BYTES) {
            return no_session(&path.display().to_string(), e.code());
        }
        let mut changed = b.take_changed();
        senders.attribute(&mut changed);
        for e in changed {
            let ok = if json { json_line(&e) } else { emit(&line(&e)) };
            if !ok {
                return LogExit::Printed;
            }
        }
        if f.end < len {
            continue; // more than one wake's worth was waiting
        }
        if crate::signals::wait_readable(fd, FOLLOW_GUARD) {
            // Only that something changed matters; the events themselves are dropped.
            while let Ok(ev) = ino.read_events() {
                if ev.is_empty() {
                    break;
                }
            }
        }
    }
}
