//! `intercom-pane jump [--host NAME] NAME [--print] [--json] [--expect-seat TOKEN]`: go to a
//! seat's pane (docs/behaviour.md §12).
//!
//! On this machine: the caller's tmux client is switched to the pane (the sidebar's ⏎, after a
//! fresh pass shows the same seat). On another host: that host's own `jump --print --json` says
//! where the seat is (after its own fresh pass and `--expect-seat` check), and a local tmux
//! window runs `ssh -t HOST tmux -S SOCKET attach-session -t %N ; select-pane -t %N` — opened
//! beside the caller's pane, or the same window selected again. Outside tmux, or with
//! `--print`, the exact command is printed instead. Exit: 0 moved or printed, 1 not moved, 2
//! refused, 14 the seat changed, 20/21 the host not reached / stopped answering.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::cli::JumpArgs;
use crate::cmd::monitor_ports::{own_pane, ScanNavigator};
use crate::cmd::options;
use crate::hosts::delegate::{self, Delegated};
use crate::hosts::expect::{SeatExpect, SeatFound};
use crate::hosts::ssh::{self, Tty};
use crate::hosts::{self, Host, Target};
use crate::mux::tmux::{is_pane_id, Tmux};
use crate::mux::MuxKind;
use crate::snapshot::Row;
use crate::text::sanitize;
use crate::ui::ports::{JumpOutcome, Navigator, SeatRef};

const MOVED: i32 = 0;
const NOT_MOVED: i32 = 1;
const REFUSED: i32 = 2;
const SEAT_CHANGED: i32 = 14;
/// How long the host may take to say where the seat is.
const ASK_DEADLINE: Duration = Duration::from_secs(20);
/// Deadline of the local tmux calls.
const STEP: Duration = Duration::from_secs(5);

fn refuse(msg: impl std::fmt::Display) -> i32 {
    eprintln!("intercom-pane: jump: {msg}");
    REFUSED
}

pub fn run(a: &JumpArgs) -> i32 {
    let expect = match a.expect_seat.as_deref().map(SeatExpect::parse).transpose() {
        Ok(e) => e,
        Err(e) => return refuse(e),
    };
    match hosts::one_target(&a.src.hosts) {
        Ok(Target::Local) => local(a, expect.as_ref()),
        Ok(Target::Remote(h)) => remote(a, &h),
        Err(e) => refuse(e),
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

fn local(a: &JumpArgs, expect: Option<&SeatExpect>) -> i32 {
    let (r, pass) = match options::resolve_and_scan(&a.src) {
        Ok(x) => x,
        Err(e) => return refuse(e),
    };
    let row = match find(&pass.snapshot.rows, &a.name) {
        Ok(r) => r,
        Err(e) => return refuse(e),
    };
    let session = pass
        .records
        .iter()
        .find(|x| x.key() == row.seen_key)
        .and_then(|x| x.session_id.clone());
    if let Some(e) = expect {
        if let Err(why) = e.check(&SeatFound::of_row(row, session.as_deref())) {
            eprintln!("intercom-pane: jump: {why}");
            return SEAT_CHANGED;
        }
    }
    let Some(pane) = row.pane.as_ref() else {
        eprintln!(
            "intercom-pane: jump: {} has no live pane",
            sanitize(&row.name)
        );
        return NOT_MOVED;
    };
    if pane.kind != MuxKind::Tmux {
        eprintln!(
            "intercom-pane: jump: {} is in a Herdr pane: use the sidebar's ⏎",
            sanitize(&row.name)
        );
        return NOT_MOVED;
    }
    let Some(socket) =
        crate::liveness::socket_path(pane.socket.as_deref(), r.opts.tmux_socket.as_deref())
    else {
        return refuse("its tmux server's socket is not known");
    };
    if a.print || a.json {
        let v = json!({"mux": "tmux", "socket": socket.display().to_string(), "pane": pane.pane_id,
            "sessionId": session, "agent": row.name});
        if a.json {
            crate::cmd::out(format_args!("{v}"));
        } else {
            let argv = [
                "tmux".to_string(),
                "-S".into(),
                socket.display().to_string(),
                "switch-client".into(),
                "-t".into(),
                pane.pane_id.clone(),
            ];
            crate::cmd::out(format_args!("{}", shell_line(&argv)));
        }
        return MOVED;
    }
    let nav = ScanNavigator {
        opts: r.opts.clone(),
        clock: std::sync::Arc::from(r.clock),
        own: own_pane(),
    };
    match nav.jump(&SeatRef::of(row)) {
        JumpOutcome::Moved { pane } => {
            crate::cmd::out(format_args!("moved to {}", sanitize(&pane)));
            MOVED
        }
        JumpOutcome::Refused { reason } => {
            eprintln!("intercom-pane: jump: {}", sanitize(&reason));
            NOT_MOVED
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
    name: &str,
    expect: Option<&str>,
    own: Option<&crate::mux::Owner>,
) -> Result<RemoteJump, (i32, String)> {
    let mut flags = vec!["--print".to_string(), "--json".into()];
    if let Some(t) = expect {
        flags.extend(["--expect-seat".into(), t.to_string()]);
    }
    let words = delegate::words(host, "jump", &flags, &[name.to_string()]);
    let d = delegate::run(host, &words, None, ASK_DEADLINE);
    let (socket, pane, agent) = match &d {
        Delegated::Ran {
            code: 0, stdout, ..
        } => place_of(stdout).map_err(|why| (REFUSED, format!("host {}: {why}", host.name)))?,
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
    let control = ssh::control_dir().map_err(|e| (REFUSED, e))?;
    let argv =
        ssh::argv(host, &control, &tmux_words, Tty::Yes).map_err(|e| (REFUSED, e.to_string()))?;
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
            NOT_MOVED,
            format!("{e}; run it yourself: {}", shell_line(&full)),
        )),
    }
}

fn remote(a: &JumpArgs, host: &Host) -> i32 {
    let own = if a.print { None } else { own_pane() };
    match remote_jump(host, &a.name, a.expect_seat.as_deref(), own.as_ref()) {
        Ok(RemoteJump::Printed(line)) => {
            crate::cmd::out(format_args!("{line}"));
            MOVED
        }
        Ok(RemoteJump::Window { id, reused, what }) => {
            let how = if reused { "selected" } else { "opened" };
            crate::cmd::out(format_args!("{how} window {id}: {what}"));
            MOVED
        }
        Err((code, why)) => {
            eprintln!("intercom-pane: jump: {why}");
            code
        }
    }
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
