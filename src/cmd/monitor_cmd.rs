//! `intercom-pane monitor`: the sidebar on the real scan. Each pass runs a bounded health-probe
//! batch (cancelled at once when the user quits), then one scan that reads those checks.

use std::sync::Arc;

use crate::actions::reply;
use crate::alerts::run::AlertThread;
use crate::cli::MonitorArgs;
use crate::clock::Clock;
use crate::cmd::exit::MonitorExit;
use crate::cmd::live_source::{LiveSource, LogFrames};
use crate::cmd::monitor_hosts::HostPorts;
use crate::cmd::monitor_ports::{own_pane, ScanNavigator, ScanWorkers};
use crate::cmd::{options, refuse};
use crate::evidence::ScanMemory;
use crate::hosts::board::HostsSource;
use crate::hosts::Host;
use crate::scan::{self, ScanOptions};
use crate::snapshot::{ReplyPath, Snapshot};
use crate::ui::ports::{
    NoLines, ReplyOutcome, ReplyRequest, ReplySender, SeatRef, SeenNotSaved, SeenWriter,
    SnapshotSource, TimelineReader,
};
use crate::ui::run::{run_monitor_with, MonitorOptions, PASS_INTERVAL};

/// The sidebar's Seen writer: `seen.json` under the data root, written atomically by the store.
pub struct DataRootSeen {
    /// The intercom-pane data root (holds `board/seen.json`).
    pub data_root: std::path::PathBuf,
    /// The other machines on the board: a mark of one of their rows is kept on that host.
    pub hosts: crate::hosts::fleet::HostList,
}

impl SeenWriter for DataRootSeen {
    fn set_seen(&self, key: &str, last_activity_iso: &str, seen: bool) -> Result<(), SeenNotSaved> {
        // A row of another host (`hosts::wire::row_id`): its marks live on that host, written
        // there by its own `seen` (this runs on the sidebar's writer thread, never the UI's).
        if let Some((name, there)) = key.split_once(crate::board::record::HOST_SEPARATOR) {
            let Some(host) = self.hosts.find(name) else {
                return Err(SeenNotSaved::Failed(format!(
                    "host {} is not on this board",
                    crate::text::sanitize(name)
                )));
            };
            return crate::cmd::host_cmd::seen_there(&host, there, last_activity_iso, seen)
                .map_err(|e| SeenNotSaved::Failed(e.to_string()));
        }
        crate::actions::seen::set_seen(&self.data_root, key, last_activity_iso, seen)
            .map(|_| ())
            .map_err(|e| SeenNotSaved::Failed(e.to_string()))
    }
}

/// Replies from the sidebar: each send runs a fresh pass, so the seat's registration must be live
/// at the moment of sending, not when the row was drawn, and that pass must still show the seat
/// the box was bound to (same row id and key) at the target the box named.
pub(crate) struct ScanReply {
    opts: ScanOptions,
    clock: Arc<dyn Clock>,
    /// The sidebar's memory: its reply check reads what its passes read.
    memory: Arc<ScanMemory>,
}

impl ReplySender for ScanReply {
    fn send(&self, req: &ReplyRequest) -> ReplyOutcome {
        let pass = match scan::run(&self.opts, self.clock.as_ref(), None, Some(&self.memory)) {
            Ok(p) => p,
            Err(e) => {
                return ReplyOutcome::Refused {
                    reason: e.to_string(),
                }
            }
        };
        if let Err(why) = still_bound(&pass.snapshot, req) {
            return ReplyOutcome::Refused {
                reason: why.to_string(),
            };
        }
        match reply::send(
            &pass,
            &req.seen_key,
            &req.text,
            self.clock.now_ms(),
            crate::evidence::sessions::timeline::Sender::Sidebar,
        ) {
            Ok(r) if r.delivered || r.outcome == crate::mux::pi_channel::Outcome::Unconfirmed => {
                ReplyOutcome::Delivered {
                    at: r.sent_at,
                    target: r.target.describe(),
                    outcome: r.outcome.name(),
                }
            }
            Ok(r) => ReplyOutcome::Failed {
                exit: r.exit_code,
                signal: r.signal,
                stderr: r.stderr,
            },
            Err(refusal) => ReplyOutcome::Refused {
                reason: refusal.to_string(),
            },
        }
    }
}

/// The `l` panel's timelines: a fresh pass finds the seat (it must still be the row the panel
/// was opened on) and its session file, read as `log NAME --since 24h` reads it.
pub(crate) struct ScanTimeline {
    opts: ScanOptions,
    clock: Arc<dyn Clock>,
    memory: Arc<ScanMemory>,
}

/// How far back the panel reads.
const TIMELINE_SINCE_MS: i64 = 24 * 3_600_000;

impl TimelineReader for ScanTimeline {
    fn read(&self, seat: &SeatRef) -> Result<Vec<String>, NoLines> {
        if seat.host.is_some() {
            return Err(NoLines::OtherHost(crate::text::sanitize(&seat.name)));
        }
        let pass = scan::run(&self.opts, self.clock.as_ref(), None, Some(&self.memory))
            .map_err(|e| NoLines::Refused(e.to_string()))?;
        if !pass
            .snapshot
            .rows
            .iter()
            .any(|r| r.id == seat.row_id && r.seen_key == seat.seen_key)
        {
            return Err(NoLines::Gone);
        }
        let since = Some(self.clock.now_ms() - TIMELINE_SINCE_MS);
        let log = crate::views::timeline::seat_log(&pass, &seat.seen_key, since)
            .map_err(|e| NoLines::Refused(e.to_string()))?;
        let view = crate::views::timeline::LogView {
            seat: &log.key,
            file: &log.file,
            since,
            bytes_read: log.read.bytes,
            truncated: log.read.truncated,
            skipped: log.read.builder.skipped,
            entries: log.entries.iter().collect(),
        };
        Ok(crate::views::timeline::render(&view))
    }
}

/// Why a reply box is no longer bound to what the board shows now.
#[derive(Debug, Clone, PartialEq, Eq)]
enum NotBound {
    Gone,
    OtherAgent,
    Moved(String),
    /// The seat has no reply path now (the board's reason).
    NoPath(String),
}

impl std::fmt::Display for NotBound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::text::sanitize;
        match self {
            NotBound::Gone => f.write_str("the seat is gone from the board"),
            NotBound::OtherAgent => f.write_str("the seat's row now belongs to another agent"),
            NotBound::Moved(t) => {
                write!(f, "the seat moved to {} since the box opened", sanitize(t))
            }
            NotBound::NoPath(reason) => f.write_str(&sanitize(reason)),
        }
    }
}

/// Whether `snap` still shows the seat and target `req` was composed for; why not, if not.
fn still_bound(snap: &Snapshot, req: &ReplyRequest) -> Result<(), NotBound> {
    let Some(row) = snap.row(&req.row_id) else {
        return Err(NotBound::Gone);
    };
    if row.seen_key != req.seen_key {
        return Err(NotBound::OtherAgent);
    }
    match &row.reply {
        ReplyPath::Available { target } if *target == req.target => Ok(()),
        ReplyPath::Available { target } => Err(NotBound::Moved(target.clone())),
        ReplyPath::Unavailable { reason } => Err(NotBound::NoPath(reason.clone())),
    }
}

pub(crate) fn run(args: &MonitorArgs) -> MonitorExit {
    let r = match options::resolve(&args.src) {
        Ok(r) => r,
        Err(e) => return refuse(e),
    };
    // The sidebar owns the terminal: a writer's warnings go to the log only.
    crate::store::quiet_warnings();
    let clock: Arc<dyn Clock> = Arc::from(r.clock);
    let data_root = r.opts.data_root.clone();
    let memory = Arc::new(ScanMemory::new());
    let (replies, opts) = local_ports(args, &r.opts, &clock, &memory);
    // Other machines: each on its own thread; their rows' actions run there.
    let remotes = match crate::hosts::sidebar_targets(&args.src.hosts) {
        Ok(t) => crate::hosts::remotes(&t),
        Err(e) => return refuse(e),
    };
    let (source, alerts) = match local_source(args, r.opts, &clock, memory) {
        Ok(s) => s,
        Err(e) => return refuse(e),
    };
    // Without --host the board is every host of the hosts file, as it is now and as it changes.
    let follow = follows_file(&args.src.hosts);
    let probe = !args.no_probe;
    let wired = match with_hosts(source, remotes, follow, replies, opts, &clock, probe) {
        Ok(w) => w,
        Err(e) => {
            if let Some(t) = alerts {
                t.stop(crate::cmd::alerts_cmd::STOP_GRACE);
            }
            return refuse(format!("cannot start the hosts' threads: {e}"));
        }
    };
    // The alerts see the whole board: this machine's rows and every host's (each alert names
    // its host).
    let result = run_monitor_with(
        with_alerts(wired.source, alerts.as_ref()),
        Arc::new(DataRootSeen {
            data_root,
            hosts: wired.hosts,
        }),
        wired.replies,
        clock,
        wired.opts,
    );
    if let Some(t) = alerts {
        t.stop(crate::cmd::alerts_cmd::STOP_GRACE);
    }
    match result {
        Ok(()) => MonitorExit::Quit,
        Err(e) => {
            eprintln!("intercom-pane monitor: {e}");
            MonitorExit::Failed
        }
    }
}

/// This machine's ports: replies, navigation, close/resume and spawn, through the scan.
fn local_ports(
    args: &MonitorArgs,
    opts: &ScanOptions,
    clock: &Arc<dyn Clock>,
    memory: &Arc<ScanMemory>,
) -> (ScanReply, MonitorOptions) {
    let replies = ScanReply {
        opts: opts.clone(),
        clock: clock.clone(),
        memory: memory.clone(),
    };
    let navigator = ScanNavigator {
        opts: opts.clone(),
        clock: clock.clone(),
        own: own_pane(),
    };
    // In the demo, `+` and resume start its simulated stand-in, never the person's `pi`.
    let stand_in = crate::demo::stand_in_pi(args.src.config.as_deref());
    let in_demo = stand_in.is_some();
    let pi_program = stand_in
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "pi".into());
    let workers = ScanWorkers {
        pi_program: pi_program.clone(),
        opts: opts.clone(),
        clock: clock.clone(),
        system_config: args.src.config.as_ref().map(|c| {
            std::env::current_dir()
                .map(|d| d.join(c))
                .unwrap_or_else(|_| c.clone())
        }),
    };
    let spawner = crate::cmd::spawn_cmd::CommandSpawner {
        pi_program,
        no_worktree: in_demo
            .then_some("the demo's simulated workers share its folder: no worktree in the demo"),
        opts: opts.clone(),
        system_config: args.src.config.as_deref().map(crate::paths::absolute),
        clock: clock.clone(),
    };
    let monitor = MonitorOptions {
        pass_interval: PASS_INTERVAL,
        color: None,
        navigator: Arc::new(navigator),
        workers: Arc::new(workers),
        spawner: Arc::new(spawner),
        timeline: Arc::new(ScanTimeline {
            opts: opts.clone(),
            clock: clock.clone(),
            memory: memory.clone(),
        }),
        frame_log: Some(Arc::new(LogFrames)),
        // The demo's root is no repository, and the demo runs no `git` from the person's PATH.
        changes: (!in_demo).then(|| {
            Arc::new(crate::cmd::review_cmd::GitChanges {
                root: opts.root.clone(),
            }) as _
        }),
        hosts: None,
    };
    (replies, monitor)
}

/// This machine's board (the board stream) and the alerts riding on it.
fn local_source(
    args: &MonitorArgs,
    opts: ScanOptions,
    clock: &Arc<dyn Clock>,
    memory: Arc<ScanMemory>,
) -> Result<(Box<dyn SnapshotSource>, Option<AlertThread>), crate::live::stream::StreamError> {
    let live = LiveSource::new(
        opts.clone(),
        clock.clone(),
        !args.no_probe,
        memory,
        crate::live::Settings {
            full_every: std::time::Duration::from_secs(args.live.full_pass_secs),
            ..crate::live::Settings::default()
        },
    )?;
    let alerts = start_alerts(args, &opts, clock);
    Ok((Box::new(live), alerts))
}

/// Alerts ride on the sidebar's passes (docs/behaviour.md §3b); settings that cannot be used
/// leave the sidebar without them, said on stderr and in the log. With the live engine a
/// snapshot holds until the next pass (any change makes one), so a state alerts as soon as it
/// has settled, not at the next pass (up to the 30 s full pass when nothing else moves).
fn start_alerts(
    args: &MonitorArgs,
    opts: &ScanOptions,
    clock: &Arc<dyn Clock>,
) -> Option<AlertThread> {
    match crate::cmd::alerts_cmd::start(&args.src, &args.alerts, opts, clock.clone(), false) {
        Ok(t) => Some(t),
        Err(e) => {
            eprintln!("intercom-pane monitor: no alerts: {e}");
            crate::log::write(&crate::log::AlertChannelFailed::of(
                "settings",
                &e.to_string(),
            ));
            None
        }
    }
}

/// What the sidebar runs on: the board's source, the reply path and the other ports.
struct Wiring {
    source: Box<dyn SnapshotSource>,
    replies: Arc<dyn ReplySender>,
    opts: MonitorOptions,
    /// The other machines on the board now.
    hosts: crate::hosts::fleet::HostList,
}

/// The hosts file a board follows while it runs (hosts added, removed or changed there join
/// or leave it within a second): without `--host` or with `--host all`, the default file;
/// else none (the hosts named are the board's).
pub(crate) fn follows_file(given: &[String]) -> Option<std::path::PathBuf> {
    if crate::hosts::follows_file(given) {
        crate::hosts::file::default_path()
    } else {
        None
    }
}

/// With other machines (or a hosts file to follow): their boards joined to this one's, and
/// replies, navigation and close/resume of their rows sent to them. Unchanged without any.
fn with_hosts(
    source: Box<dyn SnapshotSource>,
    remotes: Vec<Host>,
    follow: Option<std::path::PathBuf>,
    replies: ScanReply,
    mut opts: MonitorOptions,
    clock: &Arc<dyn Clock>,
    probe: bool,
) -> std::io::Result<Wiring> {
    if remotes.is_empty() && follow.is_none() {
        return Ok(Wiring {
            source,
            replies: Arc::new(replies),
            opts,
            hosts: Default::default(),
        });
    }
    let source = HostsSource::start(source, remotes.clone(), clock.clone(), PASS_INTERVAL, probe)?;
    if let Some(path) = follow {
        source.follow_file(path, remotes)?;
    }
    let hosts = source.hosts();
    opts.hosts = Some(source.control());
    let ports = Arc::new(HostPorts {
        hosts: hosts.clone(),
        reply: Arc::new(replies),
        navigator: opts.navigator.clone(),
        workers: opts.workers.clone(),
        own: own_pane(),
    });
    opts.navigator = ports.clone();
    opts.workers = ports.clone();
    Ok(Wiring {
        source: Box::new(source),
        replies: ports,
        opts,
        hosts,
    })
}

/// The board, also handed to the alerts when they run.
fn with_alerts(
    source: Box<dyn SnapshotSource>,
    alerts: Option<&AlertThread>,
) -> Box<dyn SnapshotSource> {
    match alerts {
        Some(t) => Box::new(crate::alerts::run::AlertingSource {
            inner: source,
            alerts: t.sender(),
        }),
        None => source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::RosterStatus;

    #[test]
    fn a_send_goes_only_to_the_seat_and_target_the_box_named() {
        let now = 1_000;
        let mut row = crate::ui::demo::demo_row(1, 0, now);
        row.reply = ReplyPath::Available {
            target: "tmux %3".into(),
        };
        let snap = |rows| Snapshot {
            scanned_at: now,
            roster: RosterStatus::Available { root: "/r".into() },
            rows,
            truncated: false,
            errors: vec![],
            usage: Default::default(),
            hosts: vec![],
        };
        let req = ReplyRequest {
            row_id: row.id.clone(),
            seen_key: row.seen_key.clone(),
            name: row.name.clone(),
            target: "tmux %3".into(),
            text: "hi".into(),
            host: None,
            pane: None,
        };
        assert_eq!(still_bound(&snap(vec![row.clone()]), &req), Ok(()));
        assert_eq!(still_bound(&snap(vec![]), &req), Err(NotBound::Gone));
        let mut moved = row.clone();
        moved.reply = ReplyPath::Available {
            target: "tmux %9".into(),
        };
        assert!(still_bound(&snap(vec![moved]), &req)
            .unwrap_err()
            .to_string()
            .contains("%9"));
        let mut other = row.clone();
        other.seen_key = "p/other".into();
        assert!(still_bound(&snap(vec![other]), &req).is_err());
        let mut stale = row;
        stale.reply = ReplyPath::Unavailable {
            reason: "stale".into(),
        };
        assert_eq!(
            still_bound(&snap(vec![stale]), &req),
            Err(NotBound::NoPath("stale".into()))
        );
    }
}
