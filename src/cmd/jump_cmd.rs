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

use crate::alerts::memory::PaneRef;
use crate::alerts::memory_file;
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
use crate::mux;
use crate::mux::tmux::{is_pane_id, Tmux};
use crate::scan;
use crate::snapshot::{Row, SeatPane};
use crate::text::sanitize;

/// Deadline of the move itself (after the fresh pass), and of the local tmux calls.
const STEP: Duration = Duration::from_secs(5);
/// How long another host may take to say where the seat is.
const ASK_DEADLINE: Duration = Duration::from_secs(20);

/// Which seat a jump names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Seat {
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
pub(crate) fn run(args: &JumpArgs) -> i32 {
    let expect = match SeatExpect::flag(args.expect_seat.as_deref()) {
        Ok(e) => e,
        Err(e) => return refuse::<JumpExit>(e).code(),
    };
    if args.back && !args.src.hosts.is_empty() {
        return refuse::<JumpExit>("--back goes to a sidebar on this machine: it takes no --host")
            .code();
    }
    match hosts::one_target(&args.src.hosts) {
        Ok(Target::Local) => local(args, expect.as_ref()),
        Ok(Target::Remote(h)) => remote(args, &h, Seat::of(args), args.expect_seat.as_deref()),
        Err(e) => refuse::<JumpExit>(e).code(),
    }
}

/// The seat `name` names on this board: `<project>/<agent>` exactly, else an agent name only
/// one row has (case-insensitive).
/// Why a name finds no one seat, and why another host's answer names no place.
#[derive(Debug, Clone, PartialEq, Eq)]
enum NotFound {
    NoSeat(String),
    Several(String),
    NotJson,
    NoPane,
    NoSocket,
}

impl std::fmt::Display for NotFound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotFound::NoSeat(n) => write!(f, "no seat named {n:?}"),
            NotFound::Several(n) => {
                write!(f, "{n:?} names more than one seat; give <project>/<agent>")
            }
            NotFound::NotJson => f.write_str("its answer is not JSON"),
            NotFound::NoPane => f.write_str("its answer names no %N pane"),
            NotFound::NoSocket => f.write_str("its answer names no usable tmux socket"),
        }
    }
}

fn find<'a>(rows: &'a [Row], name: &str) -> Result<&'a Row, NotFound> {
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
        [] => Err(NotFound::NoSeat(sanitize(name))),
        _ => Err(NotFound::Several(sanitize(name))),
    }
}

fn local(args: &JumpArgs, expect: Option<&SeatExpect>) -> i32 {
    let r = match options_for(args) {
        Ok(r) => r,
        Err(code) => return code,
    };
    if args.back {
        return super::jump_back::go_back(&r.opts.data_root).code();
    }
    if let Some(f) = &args.from {
        if !mux::tmux::is_pane_id(f) {
            return refuse::<JumpExit>("--from takes a tmux pane id (% and digits)").code();
        }
    }
    let clock: Arc<dyn Clock> = Arc::from(r.clock);
    let opts = &r.opts;
    let found = which_seat(args, opts).and_then(|(session, recorded, name)| {
        seat_now(
            args,
            opts,
            clock.as_ref(),
            expect,
            &session,
            recorded.as_ref(),
            &name,
        )
    });
    let (row, session, now) = match found {
        Ok(f) => f,
        Err(code) => return code,
    };
    let Some(socket) = now
        .kind
        .server_socket(now.socket.as_deref(), opts.tmux_socket.as_deref())
    else {
        say("the seat's server socket is not known".into());
        return JumpExit::NoTarget.code();
    };
    if args.print || args.json {
        print_place(args.json, &now, &socket, session.as_deref(), &row.name);
        return JumpExit::Moved.code();
    }
    go(args, &now, &socket, &row.name)
}

/// The options to scan with: `--last` reads the roster the alerting board read, unless told
/// otherwise (the plugin's key runs this from wherever tmux runs its commands). `Err`: the exit
/// code of a refusal.
fn options_for(args: &JumpArgs) -> Result<options::Resolved, i32> {
    let r = options::resolve(&args.src).map_err(|e| refuse::<JumpExit>(e).code())?;
    match (args.last, &args.src.root, last_root(&r.opts.data_root)) {
        (true, None, Some(root)) => {
            let mut src = args.src.clone();
            src.root = Some(root);
            options::resolve(&src).map_err(|e| refuse::<JumpExit>(e).code())
        }
        _ => Ok(r),
    }
}

/// Which seat (session id, or the name given), and for `--last` where it was when it alerted:
/// (session, the pane it alerted from, the name to show). `Err`: the exit code, of a refusal or
/// of the other host a last alert came from (which re-checks its seat and says where).
fn which_seat(
    args: &JumpArgs,
    opts: &scan::ScanOptions,
) -> Result<(String, Option<PaneRef>, String), i32> {
    if !args.last {
        let id = args.session_id.clone().unwrap_or_default();
        return Ok((id.clone(), None, id));
    }
    let memory = memory_file::read(&opts.data_root).map_err(|e| refuse::<JumpExit>(e).code())?;
    let Some(last) = memory.last else {
        say("no alert recorded yet".into());
        return Err(JumpExit::NoTarget.code());
    };
    if let Some((host, id)) = last.session.split_once(HOST_SEPARATOR) {
        return Err(last_on_host(args, host, id, last.pane.as_ref()));
    }
    let Some(pane) = last.pane else {
        say(format!(
            "{} alerted without a live pane ({}): nowhere to go",
            sanitize(&last.name),
            sanitize(&last.state)
        ));
        return Err(JumpExit::NoTarget.code());
    };
    Ok((last.session, Some(pane), last.name))
}

/// A last alert about another host's row: that host re-checks its seat and says where; its
/// exit code.
fn last_on_host(args: &JumpArgs, host: &str, id: &str, pane: Option<&PaneRef>) -> i32 {
    match hosts::one_target(&[host.to_string()]) {
        Ok(Target::Remote(h)) => {
            // Only the pane and pi it alerted from: that host refuses (exit 4) when its seat
            // is in another pane or pi now, as a jump here would.
            let alerted = pane.map(|p| {
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
    }
}

/// The seat on a fresh pass, checked: still the seat `expect` names, alive in a pane, and for
/// `--last` in the pane and pi it alerted from (`recorded`). Its row, session id and pane; `Err`:
/// the exit code.
fn seat_now(
    args: &JumpArgs,
    opts: &scan::ScanOptions,
    clock: &dyn Clock,
    expect: Option<&SeatExpect>,
    session: &str,
    recorded: Option<&PaneRef>,
    name: &str,
) -> Result<(Row, Option<String>, SeatPane), i32> {
    let pass = scan::run(opts, clock, None, None).map_err(|e| refuse::<JumpExit>(e).code())?;
    let row = match &args.name {
        Some(n) => find(&pass.snapshot.rows, n).map_err(|why| {
            // Named outside any roster: say so, and how to name one.
            let no_roster = match &opts.root {
                scan::RootChoice::Discover(start) => {
                    matches!(crate::evidence::config::discover_root(start), Ok(None))
                }
                scan::RootChoice::Exact(_) => false,
                scan::RootChoice::Skip => true,
            };
            if no_roster
                && pass
                    .snapshot
                    .rows
                    .iter()
                    .all(|r| r.name.to_lowercase() != n.to_lowercase())
            {
                say(format!(
                    "{why}: {}",
                    crate::actions::no_roster_at(&opts.root)
                ));
            } else {
                say(why.to_string());
            }
            JumpExit::NoTarget.code()
        })?,
        None => pass.snapshot.row(session).ok_or_else(|| {
            say(format!("{} is not on the board", sanitize(name)));
            JumpExit::NoTarget.code()
        })?,
    };
    let session = pass
        .records
        .iter()
        .find(|x| x.key() == row.seen_key)
        .and_then(|x| x.session_id.clone());
    if let Some(e) = expect {
        if let Err(why) = e.check(&SeatFound::of_row(row, session.as_deref())) {
            say(why.to_string());
            return Err(JumpExit::Changed.code());
        }
    }
    let Some(now) = row.pane.clone() else {
        say(format!("{} has no live pane", sanitize(&row.name)));
        return Err(JumpExit::NoTarget.code());
    };
    if let Some(rec) = recorded {
        if !same(rec, &now) {
            say(format!(
                "{} is no longer where it alerted from (was {} {}, now {} {}): nothing moved",
                sanitize(&row.name),
                rec.kind.name(),
                sanitize(&rec.pane_id),
                now.kind.name(),
                sanitize(&now.pane_id)
            ));
            return Err(JumpExit::Changed.code());
        }
    }
    Ok((row.clone(), session, now))
}

/// `--json`'s answer: where the seat is.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Place<'a> {
    mux: &'static str,
    socket: String,
    pane: &'a str,
    session_id: Option<&'a str>,
    agent: &'a str,
}

/// `--print` / `--json`: where the seat is, for a person or another host's `jump`.
fn print_place(
    json: bool,
    now: &SeatPane,
    socket: &std::path::Path,
    session: Option<&str>,
    agent: &str,
) {
    if json {
        let place = Place {
            mux: now.kind.name(),
            socket: socket.display().to_string(),
            pane: &now.pane_id,
            session_id: session,
            agent,
        };
        let v = serde_json::to_string(&place).unwrap_or_default();
        crate::cmd::out(format_args!("{v}"));
    } else {
        crate::cmd::out(format_args!("{}", now.kind.jump_hint(socket, &now.pane_id)));
    }
}

/// Move to the seat's pane (from `--from`, else this process's own pane on that server when the
/// multiplexer moves a client); the exit code.
fn go(args: &JumpArgs, now: &SeatPane, socket: &std::path::Path, agent: &str) -> i32 {
    let from = args.from.clone().or_else(|| now.kind.own_pane_on(socket));
    let m = mux::open(now.kind, socket);
    match m.jump_to(&now.pane_id, from.as_deref(), Instant::now() + STEP) {
        Ok(()) => {
            crate::cmd::out(format_args!(
                "{} {} ({})",
                now.kind.name(),
                now.pane_id,
                sanitize(agent)
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
fn place_of(stdout: &[u8]) -> Result<(PathBuf, String, String), NotFound> {
    let v: Value = serde_json::from_slice(stdout).map_err(|_| NotFound::NotJson)?;
    let s = |k: &str| v.get(k).and_then(Value::as_str);
    let pane = s("pane")
        .filter(|p| is_pane_id(p))
        .ok_or(NotFound::NoPane)?;
    let socket = s("socket")
        .filter(|p| p.starts_with('/') && p.len() < 4096 && !p.chars().any(char::is_control))
        .ok_or(NotFound::NoSocket)?;
    let agent = s("agent").unwrap_or("seat");
    Ok((
        PathBuf::from(socket),
        pane.to_string(),
        crate::text::one_line(agent, 40),
    ))
}

/// What a jump to another host's seat did.
pub(crate) enum RemoteJump {
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
pub(crate) fn remote_jump(
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
    let control = ssh::control_dir().map_err(|e| (refused, e.to_string()))?;
    let argv = ssh::argv(host, &control, &tmux_words, Tty::Yes, None)
        .map_err(|e| (refused, e.to_string()))?;
    let mut full = vec!["ssh".to_string()];
    full.extend(argv.iter().map(|a| a.to_string_lossy().into_owned()));
    // A window that attaches over ssh: tmux only (`Tmux::open_tagged_window`).
    let Some((own, tmux)) = own.and_then(|o| Some((o, Tmux::of(o.kind, &o.socket_path)?))) else {
        return Ok(RemoteJump::Printed(shell_line(&full)));
    };
    let tag = format!(
        "{}/{}/{}",
        host.name,
        crate::paths::short_id(&socket_text).get(..8).unwrap_or("0"),
        pane
    );
    let title = format!("{}:{agent}", host.name);
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
    let last = memory_file::read(data_root).ok()?.last?;
    last.root.map(std::path::PathBuf::from)
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
