//! `intercom-pane jump`: to the pane of a seat named, of the seat that alerted last (the tmux
//! plugin's key) or of the seat an alert named. Never the wrong target: a fresh pass must show
//! the seat alive in a pane, and for `--last` in the very pane and pi the alert was about
//! (docs/behaviour.md §3b); with `--expect-seat`, the very seat a board showed.
//!
//! On another host (`--host`, or a last alert from another host's row): that host's own `jump
//! --print --json` re-checks the seat and says where it is; a local tmux window then runs `ssh
//! -t HOST tmux -S SOCKET attach-session -t %N ; select-pane -t %N` — opened beside the caller's
//! pane, or the same window selected again (docs/behaviour.md §12). Outside tmux, or with
//! `--print`, the exact command is printed instead. Exit: 0 moved or printed, 1 failed, 2
//! refused, 3 nothing to go to, 4 the seat changed, 20/21 the host not reached / stopped
//! answering.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;
use std::time::{Duration, Instant};

use crate::actions::alert_memory;
use crate::alerts::channels::tmux_socket;
use crate::alerts::memory::PaneRef;
use crate::board::record::HOST_SEPARATOR;
use crate::cli::JumpArgs;
use crate::clock::Clock;
use crate::cmd::exit::JumpExit;
use crate::cmd::monitor_ports::own_pane;
use crate::cmd::{options, refuse};
use crate::hosts::delegate::{self, Delegated};
use crate::hosts::expect::{SeatExpect, SeatFound};
use crate::hosts::ssh::{self, Tty};
use crate::hosts::{self, Host, Target};
use crate::mux::tmux::{is_pane_id, Tmux};
use crate::mux::{self, MuxKind};
use crate::scan;
use crate::snapshot::{Row, SeatPane};
use crate::text::sanitize;

/// Deadline of the move itself (after the fresh pass), and of the local tmux calls.
const STEP: Duration = Duration::from_secs(5);
/// How long another host may take to say where the seat is.
const ASK_DEADLINE: Duration = Duration::from_secs(20);

/// Which seat a jump names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seat {
    Name(String),
    Session(String),
    Last,
}

impl Seat {
    fn of(args: &JumpArgs) -> Seat {
        match (&args.name, &args.session_id) {
            (Some(n), _) => Seat::Name(n.clone()),
            (None, Some(id)) => Seat::Session(id.clone()),
            (None, None) => Seat::Last,
        }
    }
}

fn same(recorded: &PaneRef, now: &SeatPane) -> bool {
    recorded.kind == now.kind
        && recorded.socket == now.socket
        && recorded.pane_id == now.pane_id
        && recorded.pi == now.pi
}

fn say(line: String) {
    eprintln!("intercom-pane jump: {line}");
}

/// Run `jump`; its exit code (a delegated one comes back as the host's).
pub fn run(args: &JumpArgs) -> i32 {
    let expect = match SeatExpect::flag(args.expect_seat.as_deref()) {
        Ok(e) => e,
        Err(e) => return refuse::<JumpExit>(e).code(),
    };
    match hosts::one_target(&args.src.hosts) {
        Ok(Target::Local) => local(args, expect.as_ref()),
        Ok(Target::Remote(h)) => remote(args, &h, Seat::of(args), args.expect_seat.as_deref()),
        Err(e) => refuse::<JumpExit>(e).code(),
    }
}

/// The seat `name` names on this board: `<project>/<agent>` exactly, else an agent name only
/// one row has (case-insensitive).
fn find<'a>(rows: &'a [Row], name: &str) -> Result<&'a Row, String> {
    if let Some(r) = rows.iter().find(|r| r.seen_key == name) {
        return Ok(r);
    }
    let want = name.to_lowercase();
    match rows
        .iter()
        .filter(|r| r.name.to_lowercase() == want)
        .collect::<Vec<_>>()
        .as_slice()
    {
        [r] => Ok(r),
        [] => Err(format!("no seat named {:?}", sanitize(name))),
        _ => Err(format!(
            "{:?} names more than one seat; give <project>/<agent>",
            sanitize(name)
        )),
    }
}

fn local(args: &JumpArgs, expect: Option<&SeatExpect>) -> i32 {
    let r = match options::resolve(&args.src) {
        Ok(r) => r,
        Err(e) => return refuse::<JumpExit>(e).code(),
    };
    // `--last` reads the roster the alerting board read, unless told otherwise (the plugin's
    // key runs this from wherever tmux runs its commands).
    let r = match (args.last, &args.src.root, last_root(&r.opts.data_root)) {
        (true, None, Some(root)) => {
            let mut src = args.src.clone();
            src.root = Some(root);
            match options::resolve(&src) {
                Ok(r) => r,
                Err(e) => return refuse::<JumpExit>(e).code(),
            }
        }
        _ => r,
    };
    if let Some(f) = &args.from {
        if !mux::tmux::is_pane_id(f) {
            return refuse::<JumpExit>("--from takes a tmux pane id (% and digits)").code();
        }
    }
    let clock: Arc<dyn Clock> = Arc::from(r.clock);
    // Which seat, and (for --last) where it was when it alerted.
    let (session, recorded, name) = if args.last {
        let memory = match alert_memory::read(&r.opts.data_root) {
            Ok(m) => m,
            Err(e) => return refuse::<JumpExit>(e).code(),
        };
        let Some(last) = memory.last else {
            say("no alert recorded yet".into());
            return JumpExit::NoTarget.code();
        };
        // An alert about another host's row: that host re-checks its seat and says where.
        if let Some((host, id)) = last.session.split_once(HOST_SEPARATOR) {
            return match hosts::one_target(&[host.to_string()]) {
                Ok(Target::Remote(h)) => {
                    // Only the pane and pi it alerted from: that host refuses (exit 4) when its
                    // seat is in another pane or pi now, as a jump here would.
                    let alerted = last.pane.as_ref().map(|p| {
                        let pi = p.pi.as_ref();
                        SeatExpect {
                            session_id: None,
                            pid: pi.map(|x| x.0),
                            start_ticks: pi.map(|x| x.1),
                            boot_id: pi.map(|x| x.2.clone()),
                            pane: Some(p.pane_id.clone()),
                        }
                        .token()
                    });
                    let expect = args.expect_seat.clone().or(alerted);
                    remote(args, &h, Seat::Session(id.to_string()), expect.as_deref())
                }
                Ok(Target::Local) | Err(_) => {
                    say(format!(
                        "the last alert came from host {}, which is not in the hosts file",
                        sanitize(host)
                    ));
                    JumpExit::NoTarget.code()
                }
            };
        }
        let Some(pane) = last.pane else {
            say(format!(
                "{} alerted without a live pane ({}): nowhere to go",
                sanitize(&last.name),
                sanitize(&last.state)
            ));
            return JumpExit::NoTarget.code();
        };
        (last.session, Some(pane), last.name)
    } else {
        let id = args.session_id.clone().unwrap_or_default();
        (id.clone(), None, id)
    };
    let pass = match scan::run(&r.opts, clock.as_ref(), None, None) {
        Ok(p) => p,
        Err(e) => return refuse::<JumpExit>(e).code(),
    };
    let row = match &args.name {
        Some(n) => match find(&pass.snapshot.rows, n) {
            Ok(row) => row,
            Err(why) => {
                say(why);
                return JumpExit::NoTarget.code();
            }
        },
        None => match pass.snapshot.row(&session) {
            Some(row) => row,
            None => {
                say(format!("{} is not on the board", sanitize(&name)));
                return JumpExit::NoTarget.code();
            }
        },
    };
    let session = pass
        .records
        .iter()
        .find(|x| x.key() == row.seen_key)
        .and_then(|x| x.session_id.clone());
    if let Some(e) = expect {
        if let Err(why) = e.check(&SeatFound::of_row(row, session.as_deref())) {
            say(why);
            return JumpExit::Changed.code();
        }
    }
    let Some(now) = row.pane.clone() else {
        say(format!("{} has no live pane", sanitize(&row.name)));
        return JumpExit::NoTarget.code();
    };
    if let Some(rec) = &recorded {
        if !same(rec, &now) {
            say(format!(
                "{} is no longer where it alerted from (was {} {}, now {} {}): nothing moved",
                sanitize(&row.name),
                rec.kind.name(),
                sanitize(&rec.pane_id),
                now.kind.name(),
                sanitize(&now.pane_id)
            ));
            return JumpExit::Changed.code();
        }
    }
    let socket = match now.kind {
        MuxKind::Tmux => tmux_socket(now.socket.as_deref(), r.opts.tmux_socket.as_deref()),
        MuxKind::Herdr => now.socket.as_ref().map(std::path::PathBuf::from),
    };
    let Some(socket) = socket else {
        say("the seat's server socket is not known".into());
        return JumpExit::NoTarget.code();
    };
    if args.print || args.json {
        let v = serde_json::json!({"mux": now.kind.name(), "socket": socket.display().to_string(),
            "pane": now.pane_id, "sessionId": session, "agent": row.name});
        if args.json {
            crate::cmd::out(format_args!("{v}"));
        } else if now.kind == MuxKind::Tmux {
            let argv = [
                "tmux".to_string(),
                "-S".into(),
                socket.display().to_string(),
                "switch-client".into(),
                "-t".into(),
                now.pane_id.clone(),
            ];
            crate::cmd::out(format_args!("{}", shell_line(&argv)));
        } else {
            crate::cmd::out(format_args!(
                "herdr pane {} (socket {})",
                sanitize(&now.pane_id),
                sanitize(&socket.display().to_string())
            ));
        }
        return JumpExit::Moved.code();
    }
    let from = args.from.clone().or_else(|| own_pane_on(&socket, now.kind));
    let m = mux::open(now.kind, &socket);
    match m.jump_to(&now.pane_id, from.as_deref(), Instant::now() + STEP) {
        Ok(()) => {
            crate::cmd::out(format_args!(
                "{} {} ({})",
                now.kind.name(),
                now.pane_id,
                sanitize(&row.name)
            ));
            JumpExit::Moved.code()
        }
        Err(e) => {
            say(e.to_string());
            JumpExit::Failed.code()
        }
    }
}

/// Each word quoted for this machine's shell, for a person to run.
fn shell_line(argv: &[String]) -> String {
    argv.iter()
        .map(|w| crate::text::shell_quote(w))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Where a seat is on another host, as its `jump --print --json` said: checked here, never
/// taken as given (a `%N` pane, an absolute socket path without control characters).
fn place_of(stdout: &[u8]) -> Result<(PathBuf, String, String), String> {
    let v: Value =
        serde_json::from_slice(stdout).map_err(|_| "its answer is not JSON".to_string())?;
    let s = |k: &str| v.get(k).and_then(Value::as_str);
    let pane = s("pane")
        .filter(|p| is_pane_id(p))
        .ok_or("its answer names no %N pane")?;
    let socket = s("socket")
        .filter(|p| p.starts_with('/') && p.len() < 4096 && !p.chars().any(char::is_control))
        .ok_or("its answer names no usable tmux socket")?;
    let agent = s("agent").unwrap_or("seat");
    Ok((
        PathBuf::from(socket),
        pane.to_string(),
        crate::text::one_line(agent, 40),
    ))
}

/// What a jump to another host's seat did.
pub enum RemoteJump {
    /// A local window shows it (`reused`: the window was already open).
    Window {
        id: String,
        reused: bool,
        what: String,
    },
    /// Not in a tmux pane, or asked to print: the command, for the person to run.
    Printed(String),
}

/// Jump to the seat `name` of `host`: the host checks it (its own fresh pass, `expect`) and
/// says where it is; a local window beside `own` attaches to it over ssh, or (without `own`)
/// the exact command is given. `Err((exit, why))` when nothing was opened.
pub fn remote_jump(
    host: &Host,
    seat: &Seat,
    expect: Option<&str>,
    own: Option<&crate::mux::Owner>,
) -> Result<RemoteJump, (i32, String)> {
    let mut flags = vec!["--print".to_string(), "--json".into()];
    if let Some(t) = expect {
        flags.extend(["--expect-seat".into(), t.to_string()]);
    }
    let positional = match seat {
        Seat::Name(n) => vec![n.clone()],
        Seat::Session(id) => {
            flags.extend(["--session-id".into(), id.clone()]);
            Vec::new()
        }
        Seat::Last => {
            flags.push("--last".into());
            Vec::new()
        }
    };
    let words = delegate::words(host, "jump", &flags, &positional);
    let d = delegate::run(host, &words, None, ASK_DEADLINE);
    let (socket, pane, agent) = match &d {
        Delegated::Ran {
            code: 0, stdout, ..
        } => place_of(stdout).map_err(|why| {
            (
                JumpExit::Refused.code(),
                format!("host {}: {why}", host.name),
            )
        })?,
        Delegated::Ran { code, stderr, .. } => {
            let why = stderr
                .lines()
                .take(5)
                .map(sanitize)
                .collect::<Vec<_>>()
                .join("; ");
            return Err((*code, why));
        }
        Delegated::NotStarted(why) | Delegated::Unknown(why) => {
            return Err((
                d.code(),
                format!("host {}: not moved: {}", host.name, sanitize(why)),
            ))
        }
    };
    // Data, never a format: targets are checked `%N`, the socket is an argument of `-S`.
    let socket_text = socket.display().to_string();
    let tmux_words: Vec<String> = [
        "tmux",
        "-S",
        &socket_text,
        "attach-session",
        "-t",
        &pane,
        ";",
        "select-pane",
        "-t",
        &pane,
    ]
    .iter()
    .map(|w| w.to_string())
    .collect();
    let refused = JumpExit::Refused.code();
    let control = ssh::control_dir().map_err(|e| (refused, e))?;
    let argv =
        ssh::argv(host, &control, &tmux_words, Tty::Yes).map_err(|e| (refused, e.to_string()))?;
    let mut full = vec!["ssh".to_string()];
    full.extend(argv.iter().map(|a| a.to_string_lossy().into_owned()));
    let Some(own) = own.filter(|o| o.kind == MuxKind::Tmux) else {
        return Ok(RemoteJump::Printed(shell_line(&full)));
    };
    let tag = format!(
        "{}/{}/{}",
        host.name,
        crate::paths::short_id(&socket_text).get(..8).unwrap_or("0"),
        pane
    );
    let title = format!("{}:{agent}", host.name);
    let tmux = Tmux::at_socket(&own.socket_path);
    match tmux.open_tagged_window(&own.pane.id, &tag, &title, &full, Instant::now() + STEP) {
        Ok((id, reused)) => Ok(RemoteJump::Window {
            id,
            reused,
            what: format!("{} {pane} on host {}", sanitize(&agent), host.name),
        }),
        Err(e) => Err((
            JumpExit::Failed.code(),
            format!("{e}; run it yourself: {}", shell_line(&full)),
        )),
    }
}

fn remote(a: &JumpArgs, host: &Host, seat: Seat, expect: Option<&str>) -> i32 {
    let own = if a.print { None } else { own_pane() };
    match remote_jump(host, &seat, expect, own.as_ref()) {
        Ok(RemoteJump::Printed(line)) => {
            crate::cmd::out(format_args!("{line}"));
            JumpExit::Moved.code()
        }
        Ok(RemoteJump::Window { id, reused, what }) => {
            let how = if reused { "selected" } else { "opened" };
            crate::cmd::out(format_args!("{how} window {id}: {what}"));
            JumpExit::Moved.code()
        }
        Err((code, why)) => {
            eprintln!("intercom-pane: jump: {why}");
            code
        }
    }
}

/// The root recorded with the last alert, when there is one.
fn last_root(data_root: &std::path::Path) -> Option<std::path::PathBuf> {
    let last = alert_memory::read(data_root).ok()?.last?;
    last.root.map(std::path::PathBuf::from)
}

/// `$TMUX_PANE` when this process runs in a pane of that tmux server.
fn own_pane_on(socket: &std::path::Path, kind: MuxKind) -> Option<String> {
    if kind != MuxKind::Tmux {
        return None;
    }
    let ours = std::env::var("TMUX")
        .ok()
        .and_then(|t| mux::tmux::Tmux::from_tmux_env(&t))?;
    use crate::mux::Multiplexer;
    let same = ours.socket_path() == socket
        || matches!((std::fs::canonicalize(ours.socket_path()), std::fs::canonicalize(socket)),
            (Ok(a), Ok(b)) if a == b);
    let pane = std::env::var("TMUX_PANE").ok()?;
    (same && mux::tmux::is_pane_id(&pane)).then_some(pane)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hosts_answer_is_checked() {
        let ok = br#"{"mux":"tmux","socket":"/tmp/t s","pane":"%3","agent":"B"}"#;
        assert_eq!(
            place_of(ok).unwrap(),
            (PathBuf::from("/tmp/t s"), "%3".into(), "B".into())
        );
        for bad in [
            &br#"{"socket":"/tmp/s","pane":"3"}"#[..],
            br#"{"socket":"/tmp/s","pane":"%3;kill-server"}"#,
            br#"{"socket":"rel","pane":"%3"}"#,
            br#"{"socket":"/tmp/a\nb","pane":"%3"}"#,
            b"not json",
        ] {
            assert!(place_of(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
    }
}
