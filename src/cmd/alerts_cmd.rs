//! `watch`, and the alert settings every command with alerts resolves (`monitor` too): the
//! settings file, then the tmux plugin's options, then the flags (docs/behaviour.md §3b).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::alerts::config::{self, Desktop, Settings, SettingsError, TMUX_OPTIONS};
use crate::alerts::run::{AlertThread, Alerter, Msg, Where};
use crate::cli::{AlertArgs, SourceArgs, WatchArgs};
use crate::clock::Clock;
use crate::cmd::exit::WatchExit;
use crate::cmd::live_source::LiveSource;
use crate::cmd::{options, refuse};
use crate::mux::tmux::Tmux;
use crate::scan::{RootChoice, ScanOptions};
use crate::ui::ports::{Pass, SnapshotSource};
use crate::ui::run::PASS_INTERVAL;

/// How long a stopping watcher or sidebar waits for the alert thread (it clears the status
/// option it set, one tmux call per server).
pub(crate) const STOP_GRACE: Duration = Duration::from_secs(3);
/// Deadline for reading the plugin's options at start.
const OPTIONS_DEADLINE: Duration = Duration::from_secs(3);

/// The settings file: the flag's, else `$XDG_CONFIG_HOME/intercom-pane/alerts.json` (else
/// `~/.config/…`); `true` when the flag named it (it must then exist).
fn settings_file(args: &AlertArgs) -> Option<(PathBuf, bool)> {
    if let Some(p) = &args.alert_config {
        return Some((p.clone(), true));
    }
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(|h| PathBuf::from(h).join(".config"))
        })?;
    Some((base.join("intercom-pane").join("alerts.json"), false))
}

/// The settings for a run whose default tmux server is `default_tmux`.
pub(crate) fn settings(
    args: &AlertArgs,
    default_tmux: Option<&Path>,
) -> Result<Settings, SettingsError> {
    let mut s = Settings::default();
    if let Some((path, named)) = settings_file(args) {
        // Read only when it is this user's and nobody else can change it: it names a program
        // that will be run.
        match crate::fsguard::read_trusted(&path, config::MAX_FILE_BYTES) {
            Ok(bytes) => s.apply_file(&bytes).map_err(|err| SettingsError::File {
                path: crate::text::sanitize(&path.display().to_string()),
                err,
            })?,
            Err(crate::fsguard::FsError::NotFound) if !named => {}
            Err(e) => {
                return Err(SettingsError::Unreadable {
                    path: crate::text::sanitize(&path.display().to_string()),
                    why: crate::fsguard::trust_reason(e, crate::fsguard::owner_of(&path)),
                })
            }
        }
    }
    let server = crate::mux::tmux::resolve_socket(None, default_tmux)
        .filter(|p| crate::fsguard::kind(p).is_ok());
    if let Some(sock) = server {
        let deadline = std::time::Instant::now() + OPTIONS_DEADLINE;
        if let Ok(values) = Tmux::at_socket(&sock).user_options(&TMUX_OPTIONS, deadline) {
            s.apply_tmux(&values).map_err(SettingsError::Setting)?;
        }
    }
    if args.no_alerts {
        s.enabled = false;
    }
    if let Some(v) = args.settle_secs {
        s.rules.settle_ms = v as i64 * 1000;
    }
    if args.alert_when_visible {
        s.quiet_when_visible = false;
    }
    if args.display_message {
        s.display_message = true;
    }
    if args.bell {
        s.bell = true;
    }
    if args.no_desktop {
        s.desktop = Desktop::Off;
    }
    if let Some(v) = args.desktop_jump_secs {
        s.desktop_jump_secs = v;
    }
    if args.no_status_line {
        s.status_line = false;
    }
    if let Some(argv) = &args.on_alert {
        config::check_argv(argv).map_err(SettingsError::Setting)?;
        s.on_alert = Some(argv.clone());
    }
    Ok(s)
}

/// The flags a `jump` needs to find the same board (absolute paths).
pub(crate) fn jump_flags(src: &SourceArgs, opts: &ScanOptions) -> Vec<String> {
    let mut f = Vec::new();
    if let Some(c) = &src.config {
        let c = crate::paths::absolute(c);
        f.extend(["--config".to_string(), c.display().to_string()]);
    }
    if let RootChoice::Exact(r) = &opts.root {
        f.extend(["--root".to_string(), r.display().to_string()]);
    }
    if let Some(t) = &opts.tmux_socket {
        f.extend(["--tmux-socket".to_string(), t.display().to_string()]);
    }
    // Seats found through these flags are on the jump's board only with them.
    let abs = crate::paths::absolute;
    for d in &src.sessions_dirs {
        f.extend(["--sessions-dir".to_string(), abs(d).display().to_string()]);
    }
    if let Some(r) = &src.repo {
        f.extend(["--repo".to_string(), abs(r).display().to_string()]);
    }
    match src.fleet.as_deref() {
        Some("none") => f.extend(["--fleet".to_string(), "none".to_string()]),
        Some(p) => f.extend([
            "--fleet".to_string(),
            abs(Path::new(p)).display().to_string(),
        ]),
        None => {}
    }
    f
}

/// The alert thread for a run with these options.
pub(crate) fn start(
    src: &SourceArgs,
    args: &AlertArgs,
    opts: &ScanOptions,
    clock: Arc<dyn Clock>,
    print: bool,
) -> Result<AlertThread, SettingsError> {
    let s = settings(args, opts.tmux_socket.as_deref())?;
    let (args2, tmux) = (args.clone(), opts.tmux_socket.clone());
    let reload: crate::alerts::run::Reload = Box::new(move || settings(&args2, tmux.as_deref()));
    let at = Where {
        data_root: opts.data_root.clone(),
        default_tmux: opts.tmux_socket.clone(),
        jump_flags: jump_flags(src, opts),
        print,
    };
    AlertThread::spawn(Alerter::new(s, at, clock, Some(reload))).map_err(SettingsError::NoThread)
}

pub(crate) fn watch(args: &WatchArgs) -> WatchExit {
    // Blocked before any thread exists, so only the signal thread below takes them (children
    // start with them unblocked: `programs` and std reset the mask).
    let quit = crate::demo::watchdog::quit_signals();
    if quit.thread_block().is_err() {
        eprintln!("intercom-pane watch: cannot block the quit signals");
        return WatchExit::Failed;
    }
    let r = match options::resolve(&args.src) {
        Ok(r) => r,
        Err(e) => return refuse(e),
    };
    let clock: Arc<dyn Clock> = Arc::from(r.clock);
    // This machine and every host of the hosts file (`--host` names which): each alert names
    // its host (docs/behaviour.md §12).
    let remotes = match crate::hosts::sidebar_targets(&args.src.hosts) {
        Ok(t) => crate::hosts::remotes(&t),
        Err(e) => return refuse(e),
    };
    let thread = match start(&args.src, &args.alerts, &r.opts, clock.clone(), true) {
        Ok(t) => t,
        Err(e) => return refuse(e),
    };
    // The sidebar's board stream: a state alerts as soon as its settle delay has passed.
    let memory = std::sync::Arc::new(crate::evidence::ScanMemory::new());
    let settings = crate::live::Settings {
        full_every: Duration::from_secs(args.live.full_pass_secs),
        ..crate::live::Settings::default()
    };
    let mut source: Box<dyn SnapshotSource> =
        match LiveSource::new(r.opts, clock.clone(), false, memory, settings) {
            Ok(s) => Box::new(s),
            Err(e) => {
                thread.stop(STOP_GRACE);
                return refuse(e);
            }
        };
    // Without --host: every host of the hosts file, as it changes while this runs.
    let follow = crate::cmd::monitor_cmd::follows_file(&args.src.hosts);
    if !remotes.is_empty() || follow.is_some() {
        let started =
            // Alerts read no connection state: no host checks its connections for them.
            crate::hosts::board::HostsSource::start(
                source,
                remotes.clone(),
                clock,
                PASS_INTERVAL,
                false,
            )
                .and_then(|s| match follow {
                    Some(path) => s.follow_file(path, remotes).map(|()| s),
                    None => Ok(s),
                });
        source = match started {
            Ok(s) => Box::new(s),
            Err(e) => {
                thread.stop(STOP_GRACE);
                return refuse(format!("cannot start the hosts' threads: {e}"));
            }
        };
    }
    let cancel = source.cancel_token();
    let on_signal = cancel.clone();
    let waiter = std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            if quit.wait().is_ok() {
                on_signal.cancel();
            }
        });
    if waiter.is_err() {
        eprintln!("intercom-pane watch: cannot start the signal thread");
        thread.stop(STOP_GRACE);
        return WatchExit::Failed;
    }
    let tx = thread.sender();
    // A pass when something changed, as the sidebar runs them; only a board that shows
    // something new goes to the alerts (what has settled since alerts on the thread's own time).
    while !source.wait_for_change(PASS_INTERVAL) {
        let Pass::New(snap) = source.next_pass() else {
            continue;
        };
        if cancel.is_cancelled() || tx.send(Msg::Pass(snap)).is_err() {
            break;
        }
    }
    thread.stop(STOP_GRACE);
    WatchExit::Stopped
}
