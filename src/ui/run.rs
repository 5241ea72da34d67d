//! The event loop: raw mode + alternate screen, a background pass thread, an input thread, and a
//! main thread that sleeps on one channel and redraws only when something arrived.

use std::io::{self, IsTerminal, Write};
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use crossterm::event::{
    self, DisableBracketedPaste, DisableFocusChange, DisableMouseCapture, EnableBracketedPaste,
    EnableFocusChange, EnableMouseCapture, Event, KeyEventKind,
};
use crossterm::terminal::{
    self, BeginSynchronizedUpdate, EndSynchronizedUpdate, EnterAlternateScreen,
    LeaveAlternateScreen,
};
use crossterm::{cursor, execute, queue};
use ratatui::backend::CrosstermBackend;
use ratatui::Terminal;

use crate::clock::Clock;
use crate::ui::app::{App, Effect, Msg, Options};
use crate::ui::changes::ChangesAsk;
use crate::ui::frames::Frames;
use crate::ui::ports::NoTimeline;
use crate::ui::ports::{
    CancelToken, ChangesSource, FrameLog, JumpOutcome, Navigator, NoNavigator, NoSpawner,
    NoWorkerControl, Pass, ReplyOutcome, ReplyRequest, ReplySender, SeatRef, SeenWriter,
    SnapshotSource, SpawnAsk, Spawner, TimelineReader, WorkerAction, WorkerControl, WorkerOutcome,
};
use crate::ui::render::render;

/// Pause between the end of one pass and the start of the next (docs/behaviour.md §3).
pub(crate) const PASS_INTERVAL: Duration = Duration::from_secs(3);
/// The input thread's longest sleep: it re-checks then whether the monitor has ended. Quit
/// signals do not wait for it (their own thread sleeps on the signal's eventfd), and a quit
/// from the list ends the process; so an idle sidebar's input thread wakes once an hour.
const INPUT_POLL: Duration = Duration::from_secs(3600);
/// The signal thread's longest sleep before it looks again (bounded, like every wait).
const SIGNAL_WAIT: Duration = Duration::from_secs(3600);
/// A pass still running after this long shows "scanning…"; a shorter one is drawn once, done.
const SCANNING_SHOWN_AFTER: Duration = Duration::from_millis(300);
/// At most this many messages are applied before a redraw, so a flood cannot starve the screen.
const MAX_BATCH: usize = 256;

/// Loop settings.
#[derive(Clone)]
pub struct MonitorOptions {
    /// Pause between passes.
    pub pass_interval: Duration,
    /// Draw colours; `None` decides from `NO_COLOR` and `TERM`.
    pub color: Option<bool>,
    /// Takes the person to a worker's pane (⏎) and keeps the sidebar's height.
    pub navigator: Arc<dyn Navigator>,
    /// Runs close-worker and resume-worker from the list.
    pub workers: Arc<dyn WorkerControl>,
    /// Runs spawn from the form (`+`).
    pub spawner: Arc<dyn Spawner>,
    /// Reads a worker's timeline for the `l` panel.
    pub timeline: Arc<dyn TimelineReader>,
    /// Told about frames that show new states (the `live_frame` log event).
    pub frame_log: Option<Arc<dyn FrameLog>>,
    /// What the workers changed in git (the Changes column); none: no column.
    pub changes: Option<Arc<dyn ChangesSource>>,
    /// The other hosts of the board ("retry now"); none: this machine only.
    pub hosts: Option<Arc<dyn crate::ui::ports::HostsControl>>,
}

impl std::fmt::Debug for MonitorOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MonitorOptions")
            .field("pass_interval", &self.pass_interval)
            .field("color", &self.color)
            .finish_non_exhaustive()
    }
}

impl Default for MonitorOptions {
    fn default() -> Self {
        MonitorOptions {
            pass_interval: PASS_INTERVAL,
            color: None,
            navigator: Arc::new(NoNavigator {
                reason: "this sidebar cannot move between panes".into(),
            }),
            workers: Arc::new(NoWorkerControl {
                reason: "this sidebar cannot close or resume workers".into(),
            }),
            spawner: Arc::new(NoSpawner {
                reason: "this sidebar cannot spawn workers".into(),
            }),
            timeline: Arc::new(NoTimeline),
            frame_log: None,
            changes: None,
            hosts: None,
        }
    }
}

/// The ports the loop carries effects out through.
struct Ports {
    seen: Arc<dyn SeenWriter>,
    reply: Arc<dyn ReplySender>,
    navigator: Arc<dyn Navigator>,
    workers: Arc<dyn WorkerControl>,
    spawner: Arc<dyn Spawner>,
    changes: Option<Arc<dyn ChangesSource>>,
    /// Asks the Changes column's reader to read rows again (none: no column).
    changes_asks: Option<Sender<ChangesAsk>>,
    timeline: Arc<dyn TimelineReader>,
    hosts: Option<Arc<dyn crate::ui::ports::HostsControl>>,
}

/// Colour is off when `NO_COLOR` is set to anything or `TERM` is `dumb`.
pub(crate) fn color_from_env(no_color: Option<&std::ffi::OsStr>, term: Option<&str>) -> bool {
    no_color.is_none() && term != Some("dumb")
}

/// Messages the loop handles besides the app's own.
enum Event2 {
    App(Msg),
    /// The pass thread panicked: the monitor cannot go on truthfully.
    SourceFailed(String),
    /// The input thread could not read the terminal.
    InputFailed(io::Error),
    /// SIGTERM, SIGHUP or SIGINT arrived: leave cleanly.
    Terminated,
}

/// Run the sidebar until the user quits.
pub fn run_monitor_with(
    source: Box<dyn SnapshotSource>,
    seen_writer: Arc<dyn SeenWriter>,
    reply_sender: Arc<dyn ReplySender>,
    clock: Arc<dyn Clock>,
    opts: MonitorOptions,
) -> io::Result<()> {
    let color = opts.color.unwrap_or_else(|| {
        color_from_env(
            std::env::var_os("NO_COLOR").as_deref(),
            std::env::var("TERM").ok().as_deref(),
        )
    });
    let mut app = App::new(
        clock,
        Options {
            color,
            reply_unavailable: reply_sender.unavailable_reason(),
            workers_unavailable: opts.workers.unavailable_reason(),
            spawn_unavailable: opts.spawner.unavailable_reason(),
        },
    );

    // Drawing into a pipe or file would only write escape codes into it: say so instead.
    if !io::stdout().is_terminal() {
        return Err(io::Error::other(
            "the monitor needs a terminal: stdout is not a tty",
        ));
    }
    let _guard = TerminalGuard::enter()?;
    // Quit signals end the loop cleanly (a thread sleeps on their eventfd).
    let _signals = crate::signals::StopGuard::install();
    let mut terminal = Terminal::new(CrosstermBackend::new(io::stdout()))?;
    terminal.clear()?;
    // A sidebar started shorter than its minimum asks for its height at once.
    let first = match terminal::size() {
        Ok((w, h)) => app.update(Msg::Resize(w, h)),
        Err(_) => Vec::new(),
    };

    let (tx, rx) = mpsc::channel::<Event2>();
    let cancel = source.cancel_token();
    let stop_input = Arc::new(AtomicBool::new(false));
    spawn_passes(source, cancel.clone(), opts.pass_interval, tx.clone())?;
    let changes_asks = opts
        .changes
        .clone()
        .map(|c| spawn_changes(c, cancel.clone(), tx.clone()))
        .transpose()?;
    spawn_input(stop_input.clone(), tx.clone())?;
    spawn_signal_watch(stop_input.clone(), tx.clone())?;

    let ports = Ports {
        seen: seen_writer,
        reply: reply_sender,
        navigator: opts.navigator.clone(),
        workers: opts.workers.clone(),
        spawner: opts.spawner.clone(),
        changes: opts.changes.clone(),
        changes_asks,
        timeline: opts.timeline.clone(),
        hosts: opts.hosts.clone(),
    };
    for fx in first {
        perform(fx, &tx, &ports);
    }
    let mut frames = Frames::new(opts.frame_log.clone());
    let result = event_loop(&mut app, &mut terminal, &rx, &tx, &ports, &mut frames);
    // Quitting cancels the in-flight pass (and its probes) and stops the input thread; neither is
    // joined, so a slow pass can never hold the terminal.
    cancel.cancel();
    stop_input.store(true, Ordering::SeqCst);
    result
}

fn event_loop(
    app: &mut App,
    terminal: &mut Terminal<CrosstermBackend<io::Stdout>>,
    rx: &Receiver<Event2>,
    tx: &Sender<Event2>,
    ports: &Ports,
    frames: &mut Frames,
) -> io::Result<()> {
    let mut last = draw(app, terminal)?;
    loop {
        // Sleep until something happens, or until an age on screen changes (no pass for that).
        let tick = last
            .redraw_at
            .map(|at| Duration::from_millis(at.saturating_sub(app.now()).max(1) as u64));
        let first = match tick {
            Some(d) => match rx.recv_timeout(d) {
                Ok(ev) => ev,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    last = draw(app, terminal)?;
                    continue;
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => return Ok(()),
            },
            None => match rx.recv() {
                Ok(ev) => ev,
                Err(_) => return Ok(()),
            },
        };
        let mut next = Some(first);
        let mut applied = 0;
        // Whether every message was a pass starting or one that found nothing new.
        let mut only_passes = true;
        loop {
            let mut only_pass_started = true;
            while let Some(ev) = next.take() {
                only_pass_started &= matches!(ev, Event2::App(Msg::PassStarted));
                only_passes &= matches!(
                    ev,
                    Event2::App(Msg::PassStarted | Msg::PassUnchanged { .. })
                );
                match ev {
                    Event2::App(msg) => {
                        for fx in app.update(msg) {
                            match fx {
                                Effect::Quit => return Ok(()),
                                other => perform(other, tx, ports),
                            }
                        }
                    }
                    Event2::SourceFailed(why) => {
                        return Err(io::Error::other(format!("snapshot source failed: {why}")));
                    }
                    Event2::InputFailed(e) => return Err(e),
                    Event2::Terminated => return Ok(()),
                }
                applied += 1;
                if applied < MAX_BATCH {
                    next = rx.try_recv().ok();
                }
            }
            // A pass that ends quickly would only flash "scanning…" and cost a second frame:
            // wait a moment for its result. Any other message (a key) ends the wait at once.
            if only_pass_started && applied < MAX_BATCH {
                match rx.recv_timeout(SCANNING_SHOWN_AFTER) {
                    Ok(ev) => {
                        next = Some(ev);
                        continue;
                    }
                    Err(mpsc::RecvTimeoutError::Timeout) => {}
                    Err(mpsc::RecvTimeoutError::Disconnected) => return Ok(()),
                }
            }
            break;
        }
        // A quiet board's timer pass changes nothing on screen unless it changes the title's
        // word on the last pass: no frame then (a frame renders and compares the whole screen),
        // only a new time for the next tick of an age the last frame showed.
        if only_passes && last.title == title_now(app, app.now()) {
            last.redraw_at = crate::ui::tick::next_redraw(app.snapshot(), &last.shown, app.now());
            continue;
        }
        last = draw(app, terminal)?;
        frames.drawn(app);
    }
}

/// What the last frame showed that matters to the next.
struct Drawn {
    /// When it next changes by time alone (an age it shows ticks over), if it does.
    redraw_at: Option<crate::clock::Ms>,
    /// The ages and timed lines it showed.
    shown: Vec<crate::ui::fit::Shown>,
    /// The title's word on the last pass (`render::title_scan`).
    title: Option<String>,
}

fn title_now(app: &App, now: crate::clock::Ms) -> Option<String> {
    app.snapshot()
        .map(|s| crate::ui::render::title_scan(app, s, now))
}

/// One frame, wrapped in a synchronized update so the terminal shows it whole (no flicker).
fn draw(app: &App, terminal: &mut Terminal<CrosstermBackend<io::Stdout>>) -> io::Result<Drawn> {
    queue!(terminal.backend_mut(), BeginSynchronizedUpdate)?;
    // ratatui shows the cursor only when the frame placed it (the reply editor), else hides it.
    let now = app.now();
    let (drawn, shown) = crate::ui::fit::drawing(|| terminal.draw(|f| render(app, f)).map(|_| ()));
    execute!(terminal.backend_mut(), EndSynchronizedUpdate)?;
    drawn?;
    Ok(Drawn {
        redraw_at: crate::ui::tick::next_redraw(app.snapshot(), &shown, now),
        shown,
        title: title_now(app, now),
    })
}

/// Carry out an effect on its own thread; its outcome comes back as a message.
fn perform(fx: Effect, tx: &Sender<Event2>, ports: &Ports) {
    let tx = tx.clone();
    match fx {
        Effect::WriteSeen {
            row_id,
            key,
            last_activity_iso,
            seen,
        } => write_seen(tx, ports, row_id, key, last_activity_iso, seen),
        Effect::SendReply(req) => send_reply(tx, ports, req),
        Effect::Jump(seat) => jump(tx, ports, seat),
        Effect::Worker { action, seat } => run_worker(tx, ports, action, seat),
        Effect::KeepHeight(lines) => keep_height(ports, lines),
        Effect::Spawn(ask) => spawn_worker(tx, ports, ask),
        Effect::LoadReview { row_id } => {
            // What the person is about to review is read for the column too (a change made by
            // hand while its pi was idle shows then).
            ask_changes(ports, ChangesAsk::Rows([row_id.clone()].into()));
            load_review(tx, ports, row_id)
        }
        Effect::ReadChanges(ask) => ask_changes(ports, ask),
        Effect::ReadTimeline(seat) => read_timeline(tx, ports, seat),
        Effect::RetryHosts => {
            if let Some(h) = &ports.hosts {
                h.retry_now();
            }
        }
        Effect::RetryHost(name) => {
            if let Some(h) = &ports.hosts {
                h.retry_host(&name);
            }
        }
        Effect::Quit => {}
    }
}

/// Write a Seen mark; `SeenFinished` comes back (a failure undoes the optimistic mark).
fn write_seen(
    tx: Sender<Event2>,
    ports: &Ports,
    row_id: String,
    key: String,
    last_activity_iso: String,
    seen: bool,
) {
    let w = ports.seen.clone();
    let (tx2, id2) = (tx.clone(), row_id.clone());
    let spawned = thread::Builder::new()
        .name("seen-write".into())
        .spawn(move || {
            let result = panic::catch_unwind(AssertUnwindSafe(|| {
                w.set_seen(&key, &last_activity_iso, seen)
            }))
            .unwrap_or_else(|_| Err("seen writer failed unexpectedly".into()));
            let _ = tx.send(Event2::App(Msg::SeenFinished {
                row_id,
                seen,
                result,
            }));
        });
    if let Err(e) = spawned {
        // No thread: report it like any failed write so the optimistic mark is undone.
        let _ = tx2.send(Event2::App(Msg::SeenFinished {
            row_id: id2,
            seen,
            result: Err(format!("cannot start the seen writer: {e}").into()),
        }));
    }
}

/// Deliver one reply; `ReplyFinished` comes back.
fn send_reply(tx: Sender<Event2>, ports: &Ports, req: ReplyRequest) {
    let s = ports.reply.clone();
    let (tx2, id2) = (tx.clone(), req.row_id.clone());
    let spawned =
        thread::Builder::new()
            .name("reply-send".into())
            .spawn(move || {
                let outcome = panic::catch_unwind(AssertUnwindSafe(|| s.send(&req)))
                    .unwrap_or_else(|_| ReplyOutcome::Refused {
                        reason: "reply sender failed unexpectedly".into(),
                    });
                let _ = tx.send(Event2::App(Msg::ReplyFinished {
                    row_id: req.row_id,
                    outcome,
                }));
            });
    if let Err(e) = spawned {
        let _ = tx2.send(Event2::App(Msg::ReplyFinished {
            row_id: id2,
            outcome: ReplyOutcome::Refused {
                reason: format!("cannot start the reply sender: {e}"),
            },
        }));
    }
}

/// Take the person to the seat's pane; `JumpFinished` comes back.
/// Read a worker's timeline off the UI thread; `TimelineRead` comes back.
fn read_timeline(tx: Sender<Event2>, ports: &Ports, seat: SeatRef) {
    let reader = ports.timeline.clone();
    let (row_id, row_id2) = (seat.row_id.clone(), seat.row_id.clone());
    background(
        tx,
        "timeline",
        move |_| {
            let result = panic::catch_unwind(AssertUnwindSafe(|| reader.read(&seat)))
                .unwrap_or_else(|_| {
                    Err(crate::ui::ports::NoLines::Refused(
                        "the timeline reader failed unexpectedly".into(),
                    ))
                });
            Msg::TimelineRead { row_id, result }
        },
        |reason| Msg::TimelineRead {
            row_id: row_id2,
            result: Err(crate::ui::ports::NoLines::Refused(reason)),
        },
    );
}

fn jump(tx: Sender<Event2>, ports: &Ports, seat: SeatRef) {
    let nav = ports.navigator.clone();
    let name = crate::ui::fit::name_of_seat(&seat);
    let name2 = name.clone();
    background(
        tx,
        "jump",
        move |_| {
            let outcome =
                panic::catch_unwind(AssertUnwindSafe(|| nav.jump(&seat))).unwrap_or_else(|_| {
                    JumpOutcome::Refused {
                        reason: "the navigator failed unexpectedly".into(),
                    }
                });
            Msg::JumpFinished { name, outcome }
        },
        |reason| Msg::JumpFinished {
            name: name2,
            outcome: JumpOutcome::Refused { reason },
        },
    );
}

/// Run close-worker or resume-worker on the seat; its stages come back as `WorkerStage`, its
/// end as `WorkerFinished`.
fn run_worker(tx: Sender<Event2>, ports: &Ports, action: WorkerAction, seat: SeatRef) {
    let w = ports.workers.clone();
    let row_id = seat.row_id.clone();
    let id2 = row_id.clone();
    background(
        tx,
        "worker-job",
        move |tx| {
            let stage_tx = tx.clone();
            let id = row_id.clone();
            let stage = move |s: &str| {
                let _ = stage_tx.send(Event2::App(Msg::WorkerStage {
                    row_id: id.clone(),
                    stage: s.to_string(),
                }));
            };
            let outcome = panic::catch_unwind(AssertUnwindSafe(|| w.run(action, &seat, &stage)))
                .unwrap_or_else(|_| WorkerOutcome {
                    ok: false,
                    result: "failed".into(),
                    detail: format!("{} failed unexpectedly", action.command()),
                });
            Msg::WorkerFinished { row_id, outcome }
        },
        |reason| Msg::WorkerFinished {
            row_id: id2,
            outcome: WorkerOutcome {
                ok: false,
                result: "failed".into(),
                detail: reason,
            },
        },
    );
}

/// Make the sidebar's pane at least `lines` tall. Nothing comes back: the resize (if any)
/// arrives as a Resize event.
fn keep_height(ports: &Ports, lines: u16) {
    let nav = ports.navigator.clone();
    let _ = thread::Builder::new()
        .name("keep-height".into())
        .spawn(move || {
            let _ = panic::catch_unwind(AssertUnwindSafe(|| nav.keep_height(lines)));
        });
}

/// Start a worker; its stages come back as `SpawnStage`, its end as `SpawnFinished`.
fn spawn_worker(tx: Sender<Event2>, ports: &Ports, ask: SpawnAsk) {
    let sp = ports.spawner.clone();
    let name = ask.name.clone();
    let name2 = name.clone();
    background(
        tx,
        "spawn-job",
        move |tx| {
            let stage_tx = tx.clone();
            let n = name.clone();
            let stage = move |s: &str| {
                let _ = stage_tx.send(Event2::App(Msg::SpawnStage {
                    name: n.clone(),
                    stage: s.to_string(),
                }));
            };
            let outcome = panic::catch_unwind(AssertUnwindSafe(|| sp.spawn(&ask, &stage)))
                .unwrap_or_else(|_| WorkerOutcome {
                    ok: false,
                    result: "failed".into(),
                    detail: "spawn failed unexpectedly".into(),
                });
            Msg::SpawnFinished { name, outcome }
        },
        |reason| Msg::SpawnFinished {
            name: name2,
            outcome: WorkerOutcome {
                ok: false,
                result: "failed".into(),
                detail: reason,
            },
        },
    );
}

/// Run `job` on its own thread and send its message back; when no thread can start, the
/// message `failed` makes of the reason is sent instead.
/// The review view's files and diff for one row; `ReviewArrived` comes back.
fn load_review(tx: Sender<Event2>, ports: &Ports, row_id: String) {
    let src = ports.changes.clone();
    let id2 = row_id.clone();
    background(
        tx,
        "review",
        move |_| {
            let review = src.and_then(|s| {
                panic::catch_unwind(AssertUnwindSafe(|| s.review(&row_id)))
                    .ok()
                    .flatten()
            });
            Msg::ReviewArrived { row_id, review }
        },
        |_| Msg::ReviewArrived {
            row_id: id2,
            review: None,
        },
    );
}

fn background(
    tx: Sender<Event2>,
    name: &str,
    job: impl FnOnce(&Sender<Event2>) -> Msg + Send + 'static,
    failed: impl FnOnce(String) -> Msg,
) {
    let tx2 = tx.clone();
    let spawned = thread::Builder::new().name(name.into()).spawn(move || {
        let msg = job(&tx);
        let _ = tx.send(Event2::App(msg));
    });
    if let Err(e) = spawned {
        let _ = tx2.send(Event2::App(failed(format!("cannot start a thread: {e}"))));
    }
}

/// Hand an ask to the Changes column's reader (nothing when there is no column).
fn ask_changes(ports: &Ports, ask: ChangesAsk) {
    if let Some(tx) = &ports.changes_asks {
        // The reader ended (a read panicked): the column stays as last read.
        let _ = tx.send(ask);
    }
}

/// The Changes column's reader (`changes_feed`): reads once now, then only when asked; it ends
/// with the sidebar (the asks' sender dropped, or the cancel token) or when a read panics.
fn spawn_changes(
    source: Arc<dyn ChangesSource>,
    cancel: CancelToken,
    tx: Sender<Event2>,
) -> io::Result<Sender<ChangesAsk>> {
    let (ask_tx, ask_rx) = mpsc::channel();
    thread::Builder::new()
        .name("changes".into())
        .spawn(move || {
            crate::ui::changes_feed::serve(source.as_ref(), &ask_rx, |column| {
                !cancel.is_cancelled() && tx.send(Event2::App(Msg::ChangesArrived(column))).is_ok()
            });
        })
        .map(|_| ask_tx)
}

/// Passes back to back with a pause between them, never overlapping (one thread, one at a time).
fn spawn_passes(
    mut source: Box<dyn SnapshotSource>,
    cancel: CancelToken,
    interval: Duration,
    tx: Sender<Event2>,
) -> io::Result<()> {
    thread::Builder::new()
        .name("scan-passes".into())
        .spawn(move || {
            // Whether the last pass was slow: only then is the next one announced (so the
            // sidebar can say "scanning…" while it runs); a quick pass is one message, one wake.
            let mut slow = true;
            loop {
                if cancel.is_cancelled() {
                    return;
                }
                if slow && tx.send(Event2::App(Msg::PassStarted)).is_err() {
                    return;
                }
                let started = std::time::Instant::now();
                let pass = match panic::catch_unwind(AssertUnwindSafe(|| source.next_pass())) {
                    Ok(p) => p,
                    Err(_) => {
                        let _ = tx.send(Event2::SourceFailed("a scan pass panicked".into()));
                        return;
                    }
                };
                slow = started.elapsed() >= SCANNING_SHOWN_AFTER;
                let msg = match pass {
                    Pass::Same { scanned_at } => Msg::PassUnchanged { scanned_at },
                    Pass::New(snap) => Msg::SnapshotArrived(snap),
                };
                if cancel.is_cancelled() || tx.send(Event2::App(msg)).is_err() {
                    return;
                }
                if source.wait_for_change(interval) {
                    return;
                }
            }
        })
        .map(|_| ())
}

/// Ends the loop when a quit signal arrives (SIGTERM, SIGHUP, SIGINT) or the terminal goes away,
/// at once: it sleeps on the signal's eventfd and the terminal's hangup bit, so nothing wakes
/// while nothing happens, and a sidebar whose terminal closed without a SIGHUP reaching it
/// (a parent shell that ignores it) ends instead of spinning in crossterm's reader.
fn spawn_signal_watch(stop: Arc<AtomicBool>, tx: Sender<Event2>) -> io::Result<()> {
    let tty = crate::signals::terminal_fd();
    thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                match crate::signals::wait_for_stop(tty, SIGNAL_WAIT) {
                    crate::signals::Woke::Timeout => continue,
                    crate::signals::Woke::Signal | crate::signals::Woke::HungUp => {
                        let _ = tx.send(Event2::Terminated);
                        return;
                    }
                }
            }
        })
        .map(|_| ())
}

/// Keys and resizes; idle, it sleeps in crossterm's poll (see `INPUT_POLL`).
fn spawn_input(stop: Arc<AtomicBool>, tx: Sender<Event2>) -> io::Result<()> {
    thread::Builder::new()
        .name("input".into())
        .spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                let ready = event::poll(INPUT_POLL);
                match ready {
                    Ok(false) => continue,
                    Ok(true) => {}
                    Err(e) => {
                        let _ = tx.send(Event2::InputFailed(e));
                        return;
                    }
                }
                if stop.load(Ordering::SeqCst) {
                    return;
                }
                let msg = match event::read() {
                    Ok(Event::Key(k)) if k.kind != KeyEventKind::Release => Msg::Key(k),
                    Ok(Event::Resize(w, h)) => Msg::Resize(w, h),
                    Ok(Event::Paste(text)) => Msg::Paste(text),
                    Ok(Event::FocusGained) => Msg::Focus(true),
                    Ok(Event::FocusLost) => Msg::Focus(false),
                    Ok(Event::Mouse(m)) => Msg::Mouse(m),
                    Ok(_) => continue,
                    Err(e) => {
                        let _ = tx.send(Event2::InputFailed(e));
                        return;
                    }
                };
                if tx.send(Event2::App(msg)).is_err() {
                    return;
                }
            }
        })
        .map(|_| ())
}

/// Restores the terminal when dropped, and from a panic hook while it lives.
struct TerminalGuard {
    restored: Arc<AtomicBool>,
}

impl TerminalGuard {
    fn enter() -> io::Result<Self> {
        terminal::enable_raw_mode()?;
        let restored = Arc::new(AtomicBool::new(false));
        let guard = TerminalGuard {
            restored: restored.clone(),
        };
        // Bracketed paste: a pasted newline arrives as text, not as an Enter that would send.
        // Focus reports: the title says whether this pane has the keyboard (tmux forwards
        // them with `focus-events on`). Mouse: a click selects, a double click goes to the pane.
        if let Err(e) = execute!(
            io::stdout(),
            EnterAlternateScreen,
            EnableBracketedPaste,
            EnableFocusChange,
            EnableMouseCapture,
            cursor::Hide
        ) {
            drop(guard);
            return Err(e);
        }
        let prev = panic::take_hook();
        let flag = restored.clone();
        let ui_thread = thread::current().id();
        panic::set_hook(Box::new(move |info| {
            // Only a panic on the UI thread ends the monitor: background panics are caught and
            // reported as messages, and must not drop the terminal out from under a live UI.
            if thread::current().id() == ui_thread {
                // Put the terminal back first so the panic message is readable.
                restore(&flag);
            }
            prev(info);
        }));
        Ok(guard)
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore(&self.restored);
    }
}

/// Leave the alternate screen, show the cursor, leave raw mode; only once.
fn restore(done: &AtomicBool) {
    if done.swap(true, Ordering::SeqCst) {
        return;
    }
    let mut out = io::stdout();
    let _ = execute!(
        out,
        EndSynchronizedUpdate,
        DisableMouseCapture,
        DisableFocusChange,
        DisableBracketedPaste,
        LeaveAlternateScreen,
        cursor::Show
    );
    let _ = terminal::disable_raw_mode();
    let _ = out.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_follows_no_color_and_dumb_terminals() {
        use std::ffi::OsStr;
        assert!(color_from_env(None, Some("xterm-256color")));
        assert!(!color_from_env(Some(OsStr::new("")), Some("xterm")));
        assert!(!color_from_env(Some(OsStr::new("1")), None));
        assert!(!color_from_env(None, Some("dumb")));
        assert!(color_from_env(None, None));
    }
}
