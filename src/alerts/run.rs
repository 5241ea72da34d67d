//! The alerts beside a running sidebar or `watch`: each pass's snapshot goes to one thread that
//! keeps the status line current, applies the rule (`board::alerts`), records what it decided in
//! the shared memory, and sends. Nothing here runs on the pass thread, so no channel (a hung
//! `--on-alert` program, a tmux that does not answer) can slow the passes down.

use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::Duration;

use crate::alerts::channels::{self, Failures, StatusLine};
use crate::alerts::config::{Desktop, Settings};
use crate::alerts::memory::{LastAlert, Memory};
use crate::alerts::memory_file;
use crate::alerts::message::Alert;
use crate::alerts::programs::{Job, Pool};
use crate::board::alerts::{Decision, Outcome, Seat, Summary, Watch};
use crate::clock::{Clock, Ms};
use crate::snapshot::{RosterStatus, Row, Snapshot};
use crate::states::CloseState;
use crate::ui::ports::{CancelToken, Pass, SnapshotSource};

/// Longest the thread sleeps with nothing to do: it re-checks the status option then (as
/// often as the option is set again anyway; every pass re-checks it too, and a live board's
/// full pass comes every 30 s). Nothing to do is the idle board's usual state: each wake costs
/// a summary and a look at the alert memory.
const IDLE: Duration = channels::STATUS_REASSERT;
/// Desktop notifications: one at a time, each within this (with a Jump button: the wait for a
/// click, and this).
const DESKTOP_TIMEOUT: Duration = Duration::from_secs(5);
/// Most notifications waiting for a click at once (a later one shows when one ends).
const DESKTOP_WAITING: usize = 8;

/// `notify-send`, its pool, and whether it offers the Jump button.
struct DesktopNotifier {
    program: PathBuf,
    pool: Pool,
    actions: bool,
    jump_secs: u64,
}

/// Whether a close job explains a seat going away: one that is under way, closed it, or may
/// have (`uncertain`). A failed, timed-out or interrupted job closed nothing.
fn closing(row: &Row) -> bool {
    row.close_job.as_ref().is_some_and(|j| {
        !matches!(
            j.state,
            CloseState::Failed | CloseState::TimedOut | CloseState::Interrupted
        )
    })
}

/// What the rule reads of a row.
pub(crate) fn seat_of(row: &Row) -> Seat {
    Seat {
        session: row.id.clone(),
        state: row.state,
        reason: row.state_reason,
        turn: row.turn.clone(),
        since: row.state_since(),
        seen: row.seen,
        closing: closing(row),
        ended: row.session_ended,
    }
}

/// What the alerts need besides the settings.
#[derive(Debug, Clone)]
pub(crate) struct Where {
    pub data_root: PathBuf,
    /// The run's tmux server for seats that name none (`--tmux-socket`).
    pub default_tmux: Option<PathBuf>,
    /// The flags the jump command needs to find the same board (`--config`, `--root`, …).
    pub jump_flags: Vec<String>,
    /// Print each alert's JSON line on stdout (`watch`).
    pub print: bool,
}

/// The alert state of one sidebar or watcher.
pub(crate) struct Alerter {
    settings: Settings,
    at: Where,
    clock: std::sync::Arc<dyn Clock>,
    watch: Watch,
    memory: Memory,
    fingerprint: Option<(u64, u64, i64, i64)>,
    status: StatusLine,
    /// This board keeps the status count (`alerts::boards`); `Some(None)`: joining failed.
    presence: Option<Option<crate::alerts::boards::Presence>>,
    failures: Failures,
    /// The `--on-alert` pool and the (concurrency, timeout) it was started with.
    on_alert: Option<((usize, u64), Pool)>,
    /// The notifier for a Jump wait (`None` inside: no `notify-send` on PATH; looked up once
    /// per wait setting, not per pass).
    desktop: Option<(u64, Option<DesktopNotifier>)>,
    last: Option<Snapshot>,
    reload: Option<Reload>,
    loaded_at: Option<std::time::Instant>,
    reloaded_for_first: bool,
}

/// Reads the settings again.
pub(crate) type Reload =
    Box<dyn Fn() -> Result<Settings, crate::alerts::config::SettingsError> + Send>;

/// How often the settings are read again at most.
pub(crate) const RELOAD_EVERY: Duration = Duration::from_secs(30);

impl Alerter {
    /// `reload` reads the settings again (the file and the tmux plugin's options, then the
    /// flags): before the first alert and, while states settle, at most every `RELOAD_EVERY`,
    /// so a changed option takes effect without a restart.
    pub(crate) fn new(
        settings: Settings,
        at: Where,
        clock: std::sync::Arc<dyn Clock>,
        reload: Option<Reload>,
    ) -> Alerter {
        Alerter {
            settings,
            at,
            clock,
            watch: Watch::new(),
            memory: Memory::default(),
            fingerprint: None,
            status: StatusLine::default(),
            presence: None,
            failures: Failures::default(),
            on_alert: None,
            desktop: None,
            last: None,
            reload,
            loaded_at: Some(std::time::Instant::now()),
            reloaded_for_first: false,
        }
    }

    /// Read the settings again when due: once when a first state starts to settle (so what
    /// the first alert does is what the options say by then), then while a state settles, at
    /// most every `RELOAD_EVERY`. Never while nothing settles: reading the tmux plugin's
    /// options runs `tmux`, and an idle sidebar starts no process.
    fn maybe_reload(&mut self) {
        let pending = self.watch.has_pending();
        let first = !self.reloaded_for_first && pending;
        let due = first || (pending && self.loaded_at.is_none_or(|t| t.elapsed() >= RELOAD_EVERY));
        self.reloaded_for_first |= first;
        let Some(reload) = self.reload.as_ref().filter(|_| due) else {
            return;
        };
        self.loaded_at = Some(std::time::Instant::now());
        match reload() {
            Ok(s) => self.settings = s,
            Err(e) => crate::log::write(&crate::log::AlertChannelFailed::of(
                "settings",
                &e.to_string(),
            )),
        }
    }

    /// The `--on-alert` pool for the current settings (a new one when its size changed).
    fn on_alert_pool(&mut self) -> Option<&Pool> {
        self.settings.on_alert.as_ref()?;
        let want = (
            self.settings.on_alert_concurrency,
            self.settings.on_alert_timeout_secs,
        );
        if self.on_alert.as_ref().map(|(k, _)| *k) != Some(want) {
            let pool = Pool::start("on_alert", want.0, Duration::from_secs(want.1));
            self.on_alert = Some((want, pool));
        }
        self.on_alert.as_ref().map(|(_, p)| p)
    }

    /// The desktop notifier, when a desktop session is there and `notify-send` runs; a new one
    /// when the Jump wait changed (its pool's slots and deadline follow it).
    fn desktop(&mut self) -> Option<&DesktopNotifier> {
        if self.settings.desktop != Desktop::Auto
            || !channels::desktop_session(|k| std::env::var(k).ok())
        {
            return None;
        }
        let want = self.settings.desktop_jump_secs;
        if self.desktop.as_ref().map(|(secs, _)| *secs) != Some(want) {
            let notifier = channels::find_program("notify-send").map(|program| {
                let actions = want > 0 && channels::notify_send_has_actions(&program);
                // A notification that waits for a click holds its slot until then: several
                // at once.
                let pool = if actions {
                    Pool::start(
                        "desktop",
                        DESKTOP_WAITING,
                        Duration::from_secs(want) + DESKTOP_TIMEOUT,
                    )
                } else {
                    Pool::start("desktop", 1, DESKTOP_TIMEOUT)
                };
                DesktopNotifier {
                    program,
                    pool,
                    actions,
                    jump_secs: want,
                }
            });
            self.desktop = Some((want, notifier));
        }
        self.desktop.as_ref().and_then(|(_, d)| d.as_ref())
    }

    /// After a pass: the status line, then the rule.
    pub(crate) fn pass(&mut self, snap: Snapshot) {
        self.maybe_reload();
        let servers = channels::tmux_servers(&snap, self.at.default_tmux.as_deref());
        if self.settings.status_line {
            if self.presence.is_none() {
                let joined = crate::alerts::boards::join(&self.at.data_root);
                if let Err(e) = &joined {
                    crate::log::write(&crate::log::AlertChannelFailed::of(
                        "status_line",
                        &e.to_string(),
                    ));
                }
                self.presence = Some(joined.ok());
            }
            let summary = Summary::of(snap.rows.iter().map(|r| (&r.state, r.seen)));
            self.status
                .update(&servers, &summary.text(), &mut self.failures);
        }
        let valid = snap.scanned_at;
        self.decide(&snap, &servers, valid);
        self.last = Some(snap);
    }

    /// Between passes: the board stream's last snapshot holds until its next pass (any change
    /// makes one), so what has settled by now alerts now.
    pub(crate) fn tick(&mut self) {
        let Some(snap) = self.last.take() else { return };
        let servers = channels::tmux_servers(&snap, self.at.default_tmux.as_deref());
        if self.settings.status_line {
            let summary = Summary::of(snap.rows.iter().map(|r| (&r.state, r.seen)));
            self.status
                .update(&servers, &summary.text(), &mut self.failures);
        }
        let now = self.clock.now_ms();
        self.decide(&snap, &servers, now);
        self.last = Some(snap);
    }

    /// When the thread should look again without a pass.
    pub(crate) fn next_due(&self) -> Option<Ms> {
        self.watch.next_due(&self.settings.rules)
    }

    /// The process ends: clear the status option it set, unless another board on the data
    /// root still keeps it current (`alerts::boards`).
    pub(crate) fn finish(&mut self) {
        let presence = self.presence.take().flatten();
        let status = &mut self.status;
        crate::alerts::boards::leave(&self.at.data_root, presence, || status.clear());
    }

    fn refresh_memory(&mut self) {
        let fp = memory_file::fingerprint(&self.at.data_root);
        if fp.is_some() && fp == self.fingerprint {
            return;
        }
        match memory_file::read(&self.at.data_root) {
            Ok(m) => {
                self.memory = m;
                self.fingerprint = fp;
            }
            // Unreadable or invalid: keep what we had; the next write says why in the log.
            Err(_) => self.fingerprint = None,
        }
    }

    fn decide(&mut self, snap: &Snapshot, servers: &[PathBuf], valid_through: Ms) {
        if !self.settings.enabled {
            return;
        }
        self.refresh_memory();
        // A budget past its soft limit alerts once per crossing, as a seat of its own.
        let with_budget = crate::budget::alerts::with_budget_seats(snap);
        let snap: &Snapshot = &with_budget;
        let seats: Vec<Seat> = snap.rows.iter().map(seat_of).collect();
        let decisions = self.watch.step(
            &seats,
            &self.memory,
            snap.scanned_at,
            valid_through,
            &self.settings.rules,
        );
        let now = self.clock.now_ms();
        let channels = self.channels();
        // Alerts another process sent whose channels here may still owe the person them (none
        // without a channel: then nothing is claimed, and a channel added later still can).
        let late = if channels.is_empty() {
            Vec::new()
        } else {
            self.watch
                .late(&seats, &self.memory, now, &self.settings.rules)
        };
        if decisions.is_empty() && late.is_empty() {
            return;
        }
        let decided = self.outcomes(snap, &decisions);
        let known: Vec<usize> = decisions
            .iter()
            .filter_map(|d| match d {
                Decision::Know { index } => Some(*index),
                _ => None,
            })
            .collect();
        let flags = self.jump_flags(snap);
        let jump_key = self.settings.jump_key.clone();
        let make = |i: usize, key: &str| {
            let mut a = Alert::of(&snap.rows[i], key, now, &flags);
            crate::budget::alerts::worker_alert(&mut a);
            a.jump_key = jump_key.clone();
            a
        };
        let own_last = decided
            .iter()
            .rev()
            .find(|(_, _, o)| *o == Outcome::Alerted)
            .map(|(i, key, _)| make(*i, key));
        let mut items: Vec<Item> = decided
            .into_iter()
            .map(|(index, key, outcome)| Item {
                index,
                key,
                outcome: Some(outcome),
            })
            .collect();
        items.extend(late.into_iter().map(|(index, key)| Item {
            index,
            key,
            outcome: None,
        }));
        let claims = self.record(snap, now, &known, &items, &channels, own_last.as_ref());
        for (item, (first, claimed)) in items.iter().zip(claims) {
            let row = &snap.rows[item.index];
            self.watch.mark_done(&row.id, &item.key);
            let outcome = match item.outcome {
                Some(o) if first => outcome_word(o),
                _ => "already_handled",
            };
            crate::log::write(&crate::log::Alert {
                seat: &row.name,
                session: &row.id,
                state: row.state.as_str(),
                key: &item.key,
                outcome,
                channels: &claimed,
            });
            if !claimed.is_empty() {
                self.send(&make(item.index, &item.key), servers, &claimed);
            }
        }
    }

    /// This process's channels now, by the ids their claims carry (`STDOUT`, `on_alert_id`, …).
    fn channels(&mut self) -> Vec<String> {
        let mut c = Vec::new();
        if self.at.print {
            c.push(STDOUT.to_string());
        }
        if let Some(argv) = &self.settings.on_alert {
            c.push(on_alert_id(argv));
        }
        if self.settings.display_message {
            c.push(DISPLAY.to_string());
        }
        if self.settings.bell {
            c.push(BELL.to_string());
        }
        if self.desktop().is_some() {
            c.push(DESKTOP.to_string());
        }
        c
    }

    /// What becomes of each decision that alerts or records (the person is looking: asked once
    /// per alert, right before it is recorded): (row, key, outcome).
    fn outcomes(&self, snap: &Snapshot, decisions: &[Decision]) -> Vec<(usize, String, Outcome)> {
        decisions
            .iter()
            .filter_map(|d| match d {
                Decision::Alert { index, key } => {
                    let outcome = if self.seen_there(&snap.rows[*index]) {
                        Outcome::Visible
                    } else {
                        Outcome::Alerted
                    };
                    Some((*index, key.clone(), outcome))
                }
                Decision::Record {
                    index,
                    key,
                    outcome,
                } => Some((*index, key.clone(), *outcome)),
                Decision::Know { .. } => None,
            })
            .collect()
    }

    /// The row's pane is on screen now, and the settings keep quiet then. Another host's pane
    /// is never judged by a client here (its `%N` names a pane of that host): it alerts.
    fn seen_there(&self, row: &Row) -> bool {
        self.settings.quiet_when_visible
            && row.local_pane().is_some_and(|p| {
                let r = crate::alerts::memory::PaneRef {
                    kind: p.kind,
                    socket: p.socket.clone(),
                    pane_id: p.pane_id.clone(),
                    pi: p.pi.clone(),
                };
                channels::visible(&r, self.at.default_tmux.as_deref()) == Some(true)
            })
    }

    /// The jump finds the same board: the roster this pass read, when no flag named one.
    fn jump_flags(&self, snap: &Snapshot) -> Vec<String> {
        let mut flags = self.at.jump_flags.clone();
        if let (RosterStatus::Available { root }, false) =
            (&snap.roster, flags.iter().any(|f| f == "--root"))
        {
            flags.extend(["--root".to_string(), root.clone()]);
        }
        flags
    }

    /// Record the decisions (and the last alert) in the alert memory, and claim each alerted
    /// turn for this process's channels; for each item, whether this process was the first to
    /// handle its key, and the channels it claimed (only those send). A memory that cannot be
    /// kept never costs an alert: this process's own alerts go out on every channel it has,
    /// and that is logged.
    fn record(
        &mut self,
        snap: &Snapshot,
        now: Ms,
        known: &[usize],
        items: &[Item],
        channels: &[String],
        last: Option<&Alert>,
    ) -> Vec<(bool, Vec<String>)> {
        let rows = &snap.rows;
        let recorded = memory_file::update(&self.at.data_root, now, |m| {
            for i in known {
                m.know(&rows[*i].id, now);
            }
            let mut out = Vec::new();
            for it in items {
                let id = &rows[it.index].id;
                let first = match it.outcome {
                    Some(o) => m.record(id, &it.key, o, now),
                    None => false,
                };
                // Whoever recorded the turn, each channel sends it once.
                out.push((first, m.claim(id, &it.key, channels)));
            }
            if let Some(a) = last {
                m.last = Some(LastAlert {
                    session: a.session.clone(),
                    seat_key: a.seat_key.clone(),
                    name: a.name.clone(),
                    state: a.state.as_str().into(),
                    at: now,
                    pane: a.pane.clone(),
                    root: match &snap.roster {
                        RosterStatus::Available { root } => Some(root.clone()),
                        RosterStatus::Unavailable { .. } => None,
                    },
                });
            }
            out
        });
        match recorded {
            Ok((out, m)) => {
                self.memory = m;
                self.fingerprint = memory_file::fingerprint(&self.at.data_root);
                out
            }
            Err(e) => {
                // Never miss an alert because the memory could not be kept: send, and say so.
                crate::log::write(&crate::log::AlertChannelFailed::of(
                    "memory",
                    &e.to_string(),
                ));
                items
                    .iter()
                    .map(|it| match it.outcome {
                        Some(Outcome::Alerted) => (true, channels.to_vec()),
                        Some(_) => (true, Vec::new()),
                        None => (false, Vec::new()),
                    })
                    .collect()
            }
        }
    }

    /// Send `a` on the channels claimed for it.
    fn send(&mut self, a: &Alert, servers: &[PathBuf], claimed: &[String]) {
        let on = |id: &str| claimed.iter().any(|c| c == id);
        if self.at.print && on(STDOUT) {
            use std::io::Write;
            // A reader that went away ends nothing but this line.
            let _ = writeln!(std::io::stdout().lock(), "{}", a.json_line());
        }
        if let Some(argv) = self
            .settings
            .on_alert
            .clone()
            .filter(|argv| on(&on_alert_id(argv)))
        {
            let mut line = a.json_line().into_bytes();
            line.push(b'\n');
            if let Some(pool) = self.on_alert_pool() {
                pool.submit(Job {
                    channel: "on_alert",
                    argv,
                    stdin: Some(line),
                    env: a.env(),
                    then: None,
                    waits: false,
                });
            }
        }
        if self.settings.display_message && on(DISPLAY) {
            channels::display(servers, a, &mut self.failures);
        }
        if self.settings.bell && on(BELL) {
            channels::bell();
        }
        if on(DESKTOP) {
            if let Some(d) = self.desktop() {
                let click = match (d.actions, std::env::current_exe()) {
                    (true, Ok(exe)) => a.click_jump(&exe).map(|jump| channels::Click {
                        wait: Duration::from_secs(d.jump_secs),
                        jump,
                    }),
                    _ => None,
                };
                d.pool.submit(channels::desktop_job(&d.program, a, click));
            }
        }
    }
}

/// One turn this pass handles: decided here (`outcome`), or alerted by another process and
/// perhaps still owed on this one's channels (`None`).
struct Item {
    index: usize,
    key: String,
    outcome: Option<Outcome>,
}

/// Channel ids (what a claim in the alert memory names): the same channel, whichever process
/// runs it, sends each alert once. `watch`'s standard output is one channel among watchers.
pub(crate) const STDOUT: &str = "stdout";
pub(crate) const DISPLAY: &str = "display_message";
pub(crate) const BELL: &str = "bell";
pub(crate) const DESKTOP: &str = "desktop";

/// An `--on-alert` program's channel: the same argv is the same channel (two watchers with the
/// same program run it once per alert; two different programs each run).
pub(crate) fn on_alert_id(argv: &[String]) -> String {
    format!("on_alert:{}", crate::paths::short_id(&argv.join("\0")))
}

fn outcome_word(o: Outcome) -> &'static str {
    match o {
        Outcome::Alerted => "alerted",
        Outcome::Visible => "visible",
        Outcome::Seen => "seen",
        Outcome::Earlier => "earlier",
    }
}

/// What the alert thread is told.
pub(crate) enum Msg {
    /// A pass's snapshot.
    Pass(Snapshot),
    /// Stop (clearing the status option first).
    Stop,
}

/// The running alert thread.
pub(crate) struct AlertThread {
    tx: Sender<Msg>,
    join: Option<std::thread::JoinHandle<()>>,
}

impl AlertThread {
    /// Start the thread: passes arrive on its channel; a live source's settle times wake it.
    pub(crate) fn spawn(mut alerter: Alerter) -> std::io::Result<AlertThread> {
        let (tx, rx) = mpsc::channel::<Msg>();
        let join = std::thread::Builder::new()
            .name("alerts".into())
            .spawn(move || {
                thread_loop(&mut alerter, &rx);
                alerter.finish();
            })?;
        Ok(AlertThread {
            tx,
            join: Some(join),
        })
    }

    /// Where passes go.
    pub(crate) fn sender(&self) -> Sender<Msg> {
        self.tx.clone()
    }

    /// Stop the thread and wait for it at most `grace` (it clears the status option it set).
    pub(crate) fn stop(mut self, grace: Duration) {
        let _ = self.tx.send(Msg::Stop);
        let Some(j) = self.join.take() else { return };
        let deadline = std::time::Instant::now() + grace;
        while !j.is_finished() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        if j.is_finished() {
            let _ = j.join();
        }
    }
}

fn thread_loop(alerter: &mut Alerter, rx: &Receiver<Msg>) {
    loop {
        let wait = alerter
            .next_due()
            .map(|due| {
                let now = alerter.clock.now_ms();
                Duration::from_millis(due.saturating_sub(now).clamp(1, 30_000) as u64)
            })
            .unwrap_or(IDLE);
        match rx.recv_timeout(wait) {
            Ok(Msg::Pass(snap)) => {
                // Only the newest pass matters when several queued up.
                let mut snap = snap;
                loop {
                    match rx.try_recv() {
                        Ok(Msg::Pass(newer)) => snap = newer,
                        Ok(Msg::Stop) => return,
                        Err(_) => break,
                    }
                }
                alerter.pass(snap);
            }
            Ok(Msg::Stop) => return,
            Err(RecvTimeoutError::Timeout) => alerter.tick(),
            Err(RecvTimeoutError::Disconnected) => return,
        }
    }
}

/// A snapshot source that also hands every pass to the alert thread (the sidebar's passes are
/// the alerts' passes: one scan, not two).
pub(crate) struct AlertingSource {
    pub inner: Box<dyn SnapshotSource>,
    pub alerts: Sender<Msg>,
}

impl SnapshotSource for AlertingSource {
    fn next_snapshot(&mut self) -> Snapshot {
        let snap = self.inner.next_snapshot();
        let _ = self.alerts.send(Msg::Pass(snap.clone()));
        snap
    }

    fn next_pass(&mut self) -> Pass {
        let pass = self.inner.next_pass();
        // A live pass that found nothing new tells the alerts nothing: the snapshot they have
        // still holds (a live board's alerts settle on the thread's own time, `tick`).
        if let Pass::New(snap) = &pass {
            let _ = self.alerts.send(Msg::Pass(snap.clone()));
        }
        pass
    }

    fn cancel_token(&self) -> CancelToken {
        self.inner.cancel_token()
    }

    /// The inner source decides when the next pass is due (the live engine waits for a change;
    /// a board over several hosts wakes on any host's change).
    fn wait_for_change(&mut self, interval: std::time::Duration) -> bool {
        self.inner.wait_for_change(interval)
    }

    fn interrupter(&self) -> Option<crate::ui::ports::Interrupter> {
        self.inner.interrupter()
    }
}
