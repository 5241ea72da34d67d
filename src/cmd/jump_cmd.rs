//! `intercom-pane jump`: to the pane of the seat that alerted last (the tmux plugin's key) or of
//! the seat an alert named. Never the wrong target: a fresh pass must show the seat alive in a
//! pane, and for `--last` in the very pane and pi the alert was about (docs/behaviour.md §3b).

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::actions::alert_memory;
use crate::alerts::channels::tmux_socket;
use crate::alerts::memory::PaneRef;
use crate::cli::JumpArgs;
use crate::clock::Clock;
use crate::cmd::exit::JumpExit;
use crate::cmd::{options, refuse};
use crate::mux::{self, MuxKind};
use crate::scan;
use crate::snapshot::SeatPane;
use crate::text::sanitize;

/// Deadline of the move itself (after the fresh pass).
const STEP: Duration = Duration::from_secs(5);

fn same(recorded: &PaneRef, now: &SeatPane) -> bool {
    recorded.kind == now.kind
        && recorded.socket == now.socket
        && recorded.pane_id == now.pane_id
        && recorded.pi == now.pi
}

fn say(line: String) {
    eprintln!("intercom-pane jump: {line}");
}

pub fn run(args: &JumpArgs) -> JumpExit {
    let r = match options::resolve(&args.src) {
        Ok(r) => r,
        Err(e) => return refuse(e),
    };
    // `--last` reads the roster the alerting board read, unless told otherwise (the plugin's
    // key runs this from wherever tmux runs its commands).
    let r = match (args.last, &args.src.root, last_root(&r.opts.data_root)) {
        (true, None, Some(root)) => {
            let mut src = args.src.clone();
            src.root = Some(root);
            match options::resolve(&src) {
                Ok(r) => r,
                Err(e) => return refuse(e),
            }
        }
        _ => r,
    };
    if let Some(f) = &args.from {
        if !mux::tmux::is_pane_id(f) {
            return refuse("--from takes a tmux pane id (% and digits)");
        }
    }
    let clock: Arc<dyn Clock> = Arc::from(r.clock);
    // Which seat, and (for --last) where it was when it alerted.
    let (session, recorded, name) = if args.last {
        let memory = match alert_memory::read(&r.opts.data_root) {
            Ok(m) => m,
            Err(e) => return refuse(e),
        };
        let Some(last) = memory.last else {
            say("no alert recorded yet".into());
            return JumpExit::NoTarget;
        };
        let Some(pane) = last.pane else {
            say(format!(
                "{} alerted without a live pane ({}): nowhere to go",
                sanitize(&last.name),
                sanitize(&last.state)
            ));
            return JumpExit::NoTarget;
        };
        (last.session, Some(pane), last.name)
    } else {
        let id = args.session_id.clone().unwrap_or_default();
        (id.clone(), None, id)
    };
    let pass = match scan::run(&r.opts, clock.as_ref(), None, None) {
        Ok(p) => p,
        Err(e) => return refuse(e),
    };
    let Some(row) = pass.snapshot.row(&session) else {
        say(format!("{} is not on the board", sanitize(&name)));
        return JumpExit::NoTarget;
    };
    let Some(now) = row.pane.clone() else {
        say(format!("{} has no live pane", sanitize(&row.name)));
        return JumpExit::NoTarget;
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
            return JumpExit::Changed;
        }
    }
    let socket = match now.kind {
        MuxKind::Tmux => tmux_socket(now.socket.as_deref(), r.opts.tmux_socket.as_deref()),
        MuxKind::Herdr => now.socket.as_ref().map(std::path::PathBuf::from),
    };
    let Some(socket) = socket else {
        say("the seat's server socket is not known".into());
        return JumpExit::NoTarget;
    };
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
            JumpExit::Moved
        }
        Err(e) => {
            say(e.to_string());
            JumpExit::Failed
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
