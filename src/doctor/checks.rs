//! The doctor's checks of the multiplexers, the binary, the data root and the roster.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::Check;
use crate::board::reason::{StateReason, StateSource};
use crate::board::record::SeatKey;
use crate::mux::{self, ErrorCode, Multiplexer, MuxEnv, MuxKind};
use crate::owned::monitor::MonitorRecord;
use crate::scan::{Scan, ScanOptions};
use crate::snapshot::{RosterCode, RosterStatus};
use crate::store;

const DEADLINE: Duration = Duration::from_secs(3);
const INSTALL_TMUX: &str = "install tmux 3.2 or newer (Debian/Ubuntu: sudo apt-get install tmux) and make sure it is on PATH";

fn deadline() -> Instant {
    Instant::now() + DEADLINE
}

/// `tmux -V` on PATH, then the server the board asks by default (`--tmux-socket`, `$TMUX`, else
/// `tmux -L default`). No server yet is only a warning: nothing runs to be shown.
pub(super) fn tmux(opts: &ScanOptions) -> Vec<Check> {
    let socket = crate::mux::tmux::resolve_socket(None, opts.tmux_socket.as_deref());
    let probe = mux::tmux::Tmux::at_socket(socket.as_deref().unwrap_or(Path::new("/")));
    let (major, minor) = match probe.version(deadline()) {
        Ok(v) => v,
        Err(e) if e.code == ErrorCode::NotInstalled => {
            return vec![Check::fail(
                "tmux",
                "tmux is not on PATH: no liveness, no sidebar pane, no replies",
                INSTALL_TMUX,
            )]
        }
        Err(e) => return vec![Check::fail("tmux", format!("tmux: {e}"), INSTALL_TMUX)],
    };
    let mut out = vec![Check::ok("tmux", format!("tmux {major}.{minor} on PATH"))];
    let Some(socket) = socket else {
        out.push(Check::warn(
            "tmux server",
            "no socket to ask (neither $TMUX nor $TMUX_TMPDIR/HOME-based default)",
            "pass --tmux-socket PATH",
        ));
        return out;
    };
    let server = mux::tmux::Tmux::at_socket(&socket);
    out.push(match server.list_panes(deadline()) {
        Ok(list) => Check::ok(
            "tmux server",
            format!("{} answers ({} panes)", socket.display(), list.panes.len()),
        ),
        // Nothing runs yet is fine on a fresh machine; with a tmux roster its agents are not
        // running, and every seat of it reads offline or unknown.
        Err(e) if e.code == ErrorCode::NoServer => match roster_in_tmux(opts) {
            Some(names) => Check::fail(
                "tmux server",
                format!(
                    "no tmux server answers on {}: the roster's agents ({names}) run in its panes, so none of them runs now",
                    socket.display()
                ),
                "start the agents' tmux sessions (README, Setup step 3a: `tmux new-session -d -s <name> \"pi --session-id <id>\"`), or pass --tmux-socket for the server they run on",
            ),
            None => Check::warn(
                "tmux server",
                format!("no tmux server answers on {}", socket.display()),
                "start tmux (the agents run in its panes), or pass --tmux-socket for another server",
            ),
        },
        Err(e) => Check::fail(
            "tmux server",
            format!("{}: {e}", socket.display()),
            "check that this user may use the socket; restart the tmux server if it hangs",
        ),
    });
    out
}

/// The roster the options find, if any (unreadable counts as none: the roster check says why).
fn roster_of(opts: &ScanOptions) -> Option<crate::evidence::config::IntercomConfig> {
    match &opts.root {
        crate::scan::RootChoice::Exact(r) => crate::evidence::config::load(r).ok(),
        crate::scan::RootChoice::Discover(start) => {
            crate::evidence::config::discover(start).ok().flatten()
        }
        crate::scan::RootChoice::Skip => None,
    }
}

/// The names of the roster's agents (clipped) when the roster runs them in tmux (its
/// `multiplexer` says `tmux` or nothing).
fn roster_in_tmux(opts: &ScanOptions) -> Option<String> {
    use crate::evidence::config::MuxChoice;
    let cfg = roster_of(opts)?;
    if !matches!(cfg.multiplexer, None | Some(MuxChoice::Tmux)) || cfg.agents.is_empty() {
        return None;
    }
    let names: Vec<String> = cfg.agents.iter().map(|a| a.name.clone()).collect();
    Some(crate::text::clip(
        &crate::text::sanitize(&names.join(", ")),
        120,
    ))
}

/// Herdr, when the roster or the environment names it: its socket answers `ping`.
pub(super) fn herdr(opts: &ScanOptions) -> Check {
    let env = MuxEnv::from_process();
    let roster_wants = match &opts.root {
        crate::scan::RootChoice::Exact(r) => crate::evidence::config::load(r).ok(),
        crate::scan::RootChoice::Discover(start) => {
            crate::evidence::config::discover(start).ok().flatten()
        }
        crate::scan::RootChoice::Skip => None,
    }
    .is_some_and(|c| c.multiplexer == Some(crate::evidence::config::MuxChoice::Herdr));
    if !(roster_wants || env.herdr_env || env.herdr_socket_path.is_some()) {
        return Check::skip(
            "herdr",
            "not configured (no HERDR_SOCKET_PATH, HERDR_ENV or roster multiplexer \"herdr\")",
        );
    }
    let Some(h) = mux::herdr::Herdr::from_env(&env) else {
        return Check::fail(
            "herdr",
            "Herdr is configured but no socket can be named",
            "set HERDR_SOCKET_PATH to Herdr's socket",
        );
    };
    match h.ping(deadline()) {
        Ok((version, protocol)) => Check::ok(
            "herdr",
            format!(
                "{} answers (Herdr {version}, protocol {protocol})",
                h.socket_path().display()
            ),
        ),
        Err(e) => Check::fail(
            "herdr",
            format!("{}: {e}", h.socket_path().display()),
            "start Herdr (0.8 or newer), or set HERDR_SOCKET_PATH to its socket",
        ),
    }
}

/// The roster runs on Herdr (`"multiplexer": "herdr"`) and no live registered seat is on tmux.
pub(super) fn herdr_only(pass: &Scan) -> bool {
    let herdr = pass
        .config
        .as_ref()
        .is_some_and(|c| c.multiplexer == Some(crate::evidence::config::MuxChoice::Herdr));
    herdr
        && !pass
            .reply_paths
            .values()
            .any(|p| p.as_ref().is_ok_and(|t| t.kind == mux::MuxKind::Tmux))
}

/// When Herdr could not be asked: which seats read `unknown` because of it, and which read
/// `offline` anyway because their registered pi is provably gone (`registered_pi_gone`).
pub(super) fn herdr_seats(pass: &Scan) -> Option<Check> {
    let unanswered: Vec<String> = pass
        .records
        .iter()
        .filter(|r| r.state_reason.code().starts_with("herdr_"))
        .map(|r| format!("{} ({})", r.key(), r.state_reason.code()))
        .collect();
    let gone: Vec<String> = pass
        .records
        .iter()
        .filter(|r| {
            matches!(
                r.state_source,
                crate::board::reason::StateSource::RegisteredPi(mux::MuxKind::Herdr, _)
            )
        })
        .map(|r| r.key())
        .map(|k| k.to_string())
        .collect();
    if unanswered.is_empty() && gone.is_empty() {
        return None;
    }
    let mut detail = Vec::new();
    if !unanswered.is_empty() {
        detail.push(format!(
            "{} read unknown: their Herdr server did not answer, so their panes could not be asked",
            unanswered.join(", ")
        ));
    }
    if !gone.is_empty() {
        detail.push(format!(
            "{} read offline: their Herdr server did not answer, but their registered pi is gone (its pid is free or another process)",
            gone.join(", ")
        ));
    }
    Some(Check::warn(
        "herdr seats",
        detail.join("; "),
        "start the Herdr server these seats run in (their registrations name its socket), or check that this user may use it",
    ))
}

/// Where a program name resolves on `PATH` (a name with a `/` is taken as is).
pub(super) fn which(program: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let runnable = |p: &Path| {
        std::fs::metadata(p)
            .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            .unwrap_or(false)
    };
    if program.contains('/') {
        let p = PathBuf::from(program);
        return runnable(&p).then_some(p);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .take(256)
        .map(|d| d.join(program))
        .find(|p| runnable(p))
}

/// The program the pi extension runs: `$INTERCOM_PANE_BIN`, else `intercom-pane` on PATH.
pub(super) fn binary() -> Check {
    let named = std::env::var("INTERCOM_PANE_BIN")
        .ok()
        .filter(|v| !v.is_empty());
    let program = named.clone().unwrap_or_else(|| "intercom-pane".into());
    let Some(path) = which(&program) else {
        return Check::fail(
            "binary",
            match named {
                Some(p) => format!("INTERCOM_PANE_BIN={p} is not a runnable file"),
                None => "intercom-pane is not on PATH: the pi extension cannot register seats or place the sidebar".into(),
            },
            "cargo install --locked --path <intercom-pane checkout> (puts it in ~/.cargo/bin, which must be on PATH), or export INTERCOM_PANE_BIN=/path/to/intercom-pane for pi",
        );
    };
    let mut cmd = std::process::Command::new(&path);
    cmd.arg("--version");
    let version = mux::spawn::run(&mut cmd, None, deadline(), 4096)
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    let mine = format!("intercom-pane {}", env!("CARGO_PKG_VERSION"));
    match version {
        Some(v) if v == mine => Check::ok("binary", format!("{} ({v})", path.display())),
        Some(v) => Check::warn(
            "binary",
            format!(
                "{} says {v:?}, this doctor is {mine:?}",
                crate::text::sanitize(&path.display().to_string())
            ),
            "reinstall so pi runs the same build (cargo install --locked --path <checkout>)",
        ),
        None => Check::fail(
            "binary",
            format!("{} does not answer --version", path.display()),
            "reinstall it (cargo install --locked --path <intercom-pane checkout>)",
        ),
    }
}

/// The data root exists and takes a file (one probe file, written and removed by the store).
pub(super) fn data_root(root: &Path) -> Check {
    let probe = root.join(format!(".doctor-probe-{}", std::process::id()));
    match store::write_atomic_derived(&probe, b"intercom-pane doctor\n") {
        Ok(()) => {
            let _ = store::remove_file(&probe);
            Check::ok("data root", format!("{} is writable", root.display()))
        }
        Err(e) => Check::fail(
            "data root",
            format!("{} is not writable: {e}", root.display()),
            "give this user write access to it, or name another folder as dataRoot in --config (default: $XDG_STATE_HOME/intercom-pane)",
        ),
    }
}

/// The ssh control folder, when the hosts file names other hosts: which one is used (the
/// fallback said with why the usual one was refused), or why none can be.
pub(super) fn ssh_control() -> Option<Check> {
    if crate::hosts::file_hosts().map_or(true, |h| h.is_empty()) {
        return None;
    }
    Some(match crate::hosts::ssh::control() {
        Ok(c) => match c.fallback_for {
            None => Check::ok("ssh control folder", c.dir.display().to_string()),
            Some(why) => Check::warn(
                "ssh control folder",
                format!("{} (the usual folder was refused: {why})", c.dir.display()),
                "remove or fix the usual folder (it must be yours, 0700), or set XDG_RUNTIME_DIR",
            ),
        },
        Err(e) => Check::fail(
            "ssh control folder",
            e.to_string(),
            "set XDG_RUNTIME_DIR to a folder of your own, or fix the folders named",
        ),
    })
}

/// The roster reads, and every configured agent's session is found (a session file or a
/// registration with its id).
pub(super) fn roster(pass: &Scan) -> Vec<Check> {
    let cfg = match (&pass.config, &pass.snapshot.roster) {
        (Some(c), _) => c,
        (None, RosterStatus::Unavailable { code, reason }) if *code == RosterCode::NoRoot => {
            return vec![Check::skip(
                "roster",
                format!("{reason} (only the Intercom sidebar rows need one)"),
            )]
        }
        (None, RosterStatus::Unavailable { reason, .. }) => {
            return vec![Check::fail(
                "roster",
                format!("the roster cannot be used: {reason}"),
                "fix .pi-intercom/config.json as the message says (each agent needs sessionId, name, port, projectDirectory; one coordinator)",
            )]
        }
        (None, RosterStatus::Available { root }) => {
            return vec![Check::fail(
                "roster",
                format!("{root}: the roster was not kept by the scan"),
                "run `intercom-pane scan --print` to see why",
            )]
        }
    };
    let mut out = vec![Check::ok(
        "roster",
        format!(
            "{} is valid ({} agents, {} workers)",
            cfg.path().display(),
            cfg.agents.len(),
            cfg.workers().count()
        ),
    )];
    let mut missing = Vec::new();
    for a in &cfg.agents {
        let mine = || {
            pass.records
                .iter()
                .filter(|r| r.session_id.as_deref() == Some(a.session_id.as_str()))
        };
        if mine().any(|r| r.session_file.is_some() || r.registered.is_some()) {
            continue;
        }
        // The scan knows the exact cause when the agent's pane runs a pi in another session:
        // say that, not "no session" (and the extension check leaves that pane alone).
        match mine().find_map(|r| other_session(&r.state_source)) {
            Some((session, configured)) => out.push(Check::fail(
                "sessions",
                format!(
                    "{}: the pi in its pane runs session {session}, not the configured {configured}",
                    crate::text::sanitize(&a.name)
                ),
                format!(
                    "put the session id that pi runs into the roster as {}'s sessionId, or restart the pi in that pane with `pi --session-id {}`",
                    crate::text::sanitize(&a.name),
                    crate::text::sanitize(&a.session_id)
                ),
            )),
            None => missing.push(format!(
                "{} ({})",
                a.name,
                crate::text::clip(&a.session_id, 40)
            )),
        }
    }
    if !missing.is_empty() {
        out.push(Check::fail(
            "sessions",
            format!(
                "no pi session file or registration for: {}",
                missing.join(", ")
            ),
            "start each agent's pi with `pi --session-id <its sessionId>` (or copy the id pi prints into the roster); pass --sessions-dir when pi keeps sessions elsewhere",
        ));
    } else if !out.iter().any(|c| c.name == "sessions") {
        out.push(Check::ok(
            "sessions",
            "every configured agent's pi session was found",
        ));
    }
    out
}

/// (the session the pane's pi runs, the configured one) when that is why a seat has no session.
fn other_session(source: &StateSource) -> Option<(&str, &str)> {
    match source {
        StateSource::OtherRegisteredPi {
            session,
            configured,
            ..
        }
        | StateSource::OtherPaneProcess {
            session,
            configured,
            ..
        } => Some((session, configured)),
        _ => None,
    }
}

/// Every seat whose pane runs pi has a live registration: the extension is loaded in it.
pub(super) fn extension_loaded(pass: &Scan) -> Check {
    // A pane whose pi runs another session is not this seat's pi: that pi is its own seat,
    // checked as such (and the sessions check names the mix-up).
    let live_seats = || {
        pass.records
            .iter()
            .filter(|r| r.alive == Some(true))
            .filter(|r| r.state_reason != StateReason::PaneRunsOtherSession)
    };
    let silent: Vec<SeatKey> = live_seats()
        .filter(|r| r.registered.as_ref().and_then(|g| g.alive) != Some(true))
        .map(|r| r.key())
        .collect();
    let live = live_seats().count();
    if live == 0 {
        return Check::skip("extension loaded", "no live pi seat to ask");
    }
    if silent.is_empty() {
        return Check::ok(
            "extension loaded",
            format!("all {live} live pi seat(s) registered themselves"),
        );
    }
    Check::fail(
        "extension loaded",
        format!(
            "pi runs without a live registration in: {} (the extension is not loaded there)",
            silent.join(", ")
        ),
        "install the extension (pi install <checkout>/linux/pi-extension), then restart those pis or type /reload in them",
    )
}

/// The coordinator's sidebar placement: a launch that stopped half-way fences ensure-monitor
/// until a person looked (`--recover`), so no sidebar appears until then.
pub(super) fn monitor(pass: &Scan) -> Option<Check> {
    let cfg = pass.config.as_ref()?;
    // Without a worker there is nothing to show, so no sidebar to place.
    cfg.workers().next()?;
    let coordinator = cfg.coordinator()?;
    let record = crate::actions::monitor_pane::record_path(&cfg.root, &coordinator.session_id);
    let bytes = match crate::fsguard::read_capped(&record, 64 * 1024) {
        Ok(b) => b,
        Err(crate::fsguard::FsError::NotFound) => {
            return Some(Check::skip(
                "monitor",
                "no sidebar placed for this coordinator yet: its pi places one when it starts with the extension and the roster has a worker, and `spawn` when it adds one; prefix M in the coordinator's pane opens one (the tmux plugin), which the coordinator then keeps",
            ))
        }
        Err(e) => {
            return Some(Check::fail(
                "monitor",
                format!("{} cannot be read ({})", record.display(), e.code()),
                "inspect it; remove it only when no monitor pane of ours is open",
            ))
        }
    };
    let v: MonitorRecord = match crate::owned::decode(&bytes) {
        Ok(v) => v,
        Err(e) => {
            return Some(Check::fail(
                "monitor",
                format!("{} is not a monitor record ({e})", record.display()),
                "inspect it; remove it only when no monitor pane of ours is open",
            ))
        }
    };
    let stage = v.stage_name();
    let pane = crate::text::sanitize(v.pane.as_deref().unwrap_or("?"));
    let kind = v.multiplexer.map_or("?", MuxKind::name);
    Some(match v.stage() {
        Some(s) if s.is_placed() => match recorded_pane(&v) {
            Ok(()) => Check::ok(
                "monitor",
                format!("placed in {kind} pane {pane} ({})", record.display()),
            ),
            Err(why) => Check::warn(
                "monitor",
                format!(
                    "the sidebar recorded in {kind} pane {pane} ({}) is not there: {why}",
                    record.display()
                ),
                "start the coordinator's pi again (its extension places a new sidebar above it), or press prefix M in the coordinator's pane (the tmux plugin)",
            ),
        },
        Some(s) if s.is_ours_pending() && v.marker().is_some() => {
            let s = s.as_str();
            Check::warn(
                "monitor",
                format!(
                    "a sidebar placement is under way or stopped at stage {s} ({})",
                    record.display()
                ),
                "the coordinator's next start (or `intercom-pane ensure-monitor` in its pane) takes it up where it stopped",
            )
        }
        _ => Check::fail(
            "monitor",
            format!(
                "a sidebar launch stopped at stage {:?} ({}): ensure-monitor is fenced",
                crate::text::clip(&crate::text::sanitize(stage), 40),
                record.display()
            ),
            "look at the coordinator's window (close a half-made pane yourself), then run `intercom-pane ensure-monitor --recover` in the coordinator's pane",
        ),
    })
}

/// Why the sidebar pane a monitor record names is not there.
#[derive(Debug)]
enum PaneMissing {
    NoMultiplexer,
    NoPane,
    Replaced,
    Gone,
    NoServer {
        kind: MuxKind,
        socket: String,
    },
    NotAsked {
        kind: MuxKind,
        socket: String,
        err: crate::mux::MuxError,
    },
}

impl std::fmt::Display for PaneMissing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PaneMissing::NoMultiplexer => f.write_str("the record names no multiplexer"),
            PaneMissing::NoPane => f.write_str("the record names no server or pane"),
            PaneMissing::Replaced => f.write_str("that pane id now holds another pane"),
            PaneMissing::Gone => f.write_str("the pane is gone"),
            PaneMissing::NoServer { kind, socket } => {
                write!(f, "its {} server ({socket}) no longer answers", kind.name())
            }
            PaneMissing::NotAsked { kind, socket, err } => write!(
                f,
                "its {} server ({socket}) could not be asked: {err}",
                kind.name()
            ),
        }
    }
}

/// Is the sidebar pane a monitor record names still there: its multiplexer answers, the pane
/// exists and carries the record's marker (a pane id can come back after a restart).
fn recorded_pane(v: &MonitorRecord) -> Result<(), PaneMissing> {
    let Some(kind) = v.multiplexer else {
        return Err(PaneMissing::NoMultiplexer);
    };
    let (Some(socket), Some(pane)) = (v.socket.as_deref(), v.pane.as_deref()) else {
        return Err(PaneMissing::NoPane);
    };
    let shown = crate::text::sanitize(socket);
    match mux::open(kind, Path::new(socket)).find_pane(pane, deadline()) {
        Ok(Some(p)) if p.marker.is_some() && p.marker.as_deref() == v.marker() => Ok(()),
        Ok(Some(_)) => Err(PaneMissing::Replaced),
        Ok(None) => Err(PaneMissing::Gone),
        Err(e) if e.code == ErrorCode::NoServer => Err(PaneMissing::NoServer {
            kind,
            socket: shown,
        }),
        Err(err) => Err(PaneMissing::NotAsked {
            kind,
            socket: shown,
            err,
        }),
    }
}

/// The roster's `.pi-intercom/.gitignore`, which keeps machine-local files (seats, jobs, locks,
/// monitor records) out of commits: every writer keeps it and reports what it cannot keep.
pub(super) fn gitignore(pass: &Scan) -> Option<Check> {
    use crate::store::{ignore_state, ignored_lines, IgnoreState};
    let cfg = pass.config.as_ref()?;
    let file = crate::paths::gitignore_file(&cfg.root);
    let shown = file.display();
    let lines = ignored_lines().join(" ");
    Some(match ignore_state(&file) {
        IgnoreState::Complete => Check::ok(
            "gitignore",
            format!("{shown} keeps machine-local files out of commits"),
        ),
        IgnoreState::Absent => Check::ok(
            "gitignore",
            format!("{shown} not written yet (the first write into the folder creates it)"),
        ),
        IgnoreState::Lacks(missing, _) => Check::warn(
            "gitignore",
            format!("{shown} lacks {}", missing.join(" ")),
            "the next write into .pi-intercom/ appends them; or add them yourself",
        ),
        IgnoreState::Problem(why) => Check::warn(
            "gitignore",
            format!(
                "{shown}: {why}; it is not kept, so machine-local files could end up in a commit"
            ),
            format!("make it a regular UTF-8 file under 64 KiB listing: {lines}"),
        ),
    })
}
