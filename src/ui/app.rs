//! The sidebar's state: plain data updated by messages. `update` returns effects (write a Seen
//! mark, send a reply, quit) for the runner to carry out; it never does I/O itself.

use std::collections::HashMap;
use std::sync::Arc;

use crossterm::event::{KeyEvent, MouseEvent};

use crate::clock::{Clock, Ms};
use crate::snapshot::{Row, Snapshot};
use crate::states::BoardState;
pub(crate) use crate::ui::compose::{Draft, ReplyBox};
use crate::ui::keys::{self, Action, Key, Mode};
use crate::ui::ports::{
    JumpOutcome, ReplyOutcome, ReplyRequest, SeatRef, SeenNotSaved, SpawnAsk, WorkerAction,
    WorkerOutcome,
};
use crate::ui::state::{passes, Cockpit, Spawns};

/// Bound on remembered drafts/receipts; past it, entries for rows no longer present are dropped.
const MAX_REMEMBERED: usize = 512;

/// Everything that can happen to the sidebar.
#[derive(Debug, Clone)]
pub enum Msg {
    /// A scan pass started (the title says so; ages are redrawn).
    PassStarted,
    /// A scan pass finished.
    SnapshotArrived(Snapshot),
    /// A scan pass finished and found nothing new (`SnapshotSource::unchanged`): the shown
    /// snapshot holds, as of this time.
    PassUnchanged { scanned_at: Ms },
    /// A key was pressed.
    Key(KeyEvent),
    /// Text pasted with bracketed paste: goes into the reply draft, never sends by itself.
    Paste(String),
    /// The terminal is now `width × height`.
    Resize(u16, u16),
    /// A reply the UI asked for has an outcome.
    ReplyFinished {
        row_id: String,
        outcome: ReplyOutcome,
    },
    /// A Seen/Unsee write finished.
    SeenFinished {
        row_id: String,
        seen: bool,
        result: Result<(), SeenNotSaved>,
    },
    /// The terminal says this pane gained (`true`) or lost the keyboard.
    Focus(bool),
    /// A mouse event (click, wheel).
    Mouse(MouseEvent),
    /// A jump the UI asked for has an outcome (`name`: the seat's name as shown).
    JumpFinished { name: String, outcome: JumpOutcome },
    /// A close or resume started from the list reached a stage.
    WorkerStage { row_id: String, stage: String },
    /// A close or resume started from the list ended.
    WorkerFinished {
        row_id: String,
        outcome: WorkerOutcome,
    },
    /// A spawn started from the form reached a stage (`name`: as typed).
    SpawnStage { name: String, stage: String },
    /// A spawn started from the form ended.
    SpawnFinished {
        name: String,
        outcome: WorkerOutcome,
    },
    /// The Changes column's new read (by row id).
    ChangesArrived(std::collections::BTreeMap<String, crate::ui::changes::RowChanges>),
    /// The review view's files and diff for a row (`None`: nothing to review).
    ReviewArrived {
        row_id: String,
        review: Option<crate::ui::changes::ReviewText>,
    },
    /// The timeline the `l` panel asked for (its lines, or why none).
    TimelineRead {
        row_id: String,
        result: Result<Vec<String>, crate::ui::ports::NoLines>,
    },
}

/// Work for the runner.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Leave the monitor.
    Quit,
    /// Write a Seen mark through the `SeenWriter`.
    WriteSeen {
        row_id: String,
        key: String,
        last_activity_iso: String,
        seen: bool,
    },
    /// Deliver one reply through the `ReplySender`.
    SendReply(ReplyRequest),
    /// Take the person to the seat's pane through the `Navigator`.
    Jump(SeatRef),
    /// Run close-worker or resume-worker on the seat through the `WorkerControl`.
    Worker { action: WorkerAction, seat: SeatRef },
    /// Make the sidebar's pane at least this many lines tall (the terminal shrank below it).
    KeepHeight(u16),
    /// Start a worker through the `Spawner`.
    Spawn(SpawnAsk),
    /// Read the review view's files and diff of a row through the `ChangesSource` (and the
    /// row's Changes column again).
    LoadReview { row_id: String },
    /// Read these workers' Changes column again (their seats moved on the board).
    ReadChanges(crate::ui::changes::ChangesAsk),
    /// Read the seat's timeline through the `TimelineReader`.
    ReadTimeline(SeatRef),
    /// Ask every other host waiting to be asked again now, through `HostsControl`.
    RetryHosts,
    /// Ask this host again now (the hosts view), through `HostsControl`.
    RetryHost(String),
}

/// What is selected: a row (by `Row::id`, so it follows reorder) or the Seen group header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    Row(String),
    SeenGroup,
}

/// One line of the list.
#[derive(Debug, Clone, Copy)]
pub enum Item<'a> {
    Row(&'a Row),
    /// The "Seen (N)" group header.
    SeenGroup {
        count: usize,
        expanded: bool,
    },
}

/// The list as currently shown, plus what the toggles hide.
#[derive(Debug, Clone)]
pub struct ListView<'a> {
    pub items: Vec<Item<'a>>,
    /// Rows hidden by "hide offline".
    pub hidden_offline: usize,
    /// Seen rows hidden by "hide seen" (not counting those already hidden as offline).
    pub hidden_seen: usize,
    /// Rows the name filter hides.
    pub filtered: usize,
}

/// The last outcome of a reply to one row.
#[derive(Debug, Clone, PartialEq)]
pub struct Receipt {
    pub outcome: ReplyOutcome,
    pub finished_at: Ms,
}

/// A Seen mark written (or being written) but not yet visible in a snapshot.
#[derive(Debug, Clone)]
pub(super) struct SeenOverride {
    pub(super) last_activity: Option<Ms>,
    /// The mark the user asked for last (what the list shows).
    pub(super) seen: bool,
    /// A write is in flight; a toggle meanwhile only changes `seen`, and the finished write
    /// starts one more if the two differ, so quick presses never get lost or race on disk.
    pub(super) pending: bool,
    pub(super) key: String,
    pub(super) snapshots_after: u8,
}

/// Settings fixed at start.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Draw colours (false for `NO_COLOR` / `TERM=dumb`).
    pub color: bool,
    /// Why replies can never be sent by this run (the reply box shows it), if so.
    pub reply_unavailable: Option<String>,
    /// Why close and resume can never run from this sidebar, if so.
    pub workers_unavailable: Option<String>,
    /// Why workers can never be spawned from this sidebar, if so.
    pub spawn_unavailable: Option<String>,
}

/// The sidebar state.
pub struct App {
    clock: Arc<dyn Clock>,
    options: Options,
    snapshot: Option<Snapshot>,
    selection: Option<Selection>,
    /// Index of the selection in the last list, used when the selected row disappears.
    last_index: usize,
    pub(super) details_open: bool,
    pub(super) details_scroll: usize,
    /// The last frame's details (`note_details_view`): where scrolling down stops.
    details_view: std::cell::Cell<Option<(usize, usize)>>,
    pub(super) seen_expanded: bool,
    hide_offline: bool,
    hide_seen: bool,
    pub(super) reply_box: Option<ReplyBox>,
    pub(super) drafts: HashMap<String, Draft>,
    pub(super) receipts: HashMap<String, Receipt>,
    /// Replies in flight: row id → the target they were sent to.
    pub(super) sending: HashMap<String, String>,
    pub(super) seen_overrides: HashMap<String, SeenOverride>,
    pub(super) message: Option<String>,
    /// A refusal that holds the keyboard until Enter or Esc (see `Mode::Notice`).
    pub(super) notice: Option<String>,
    size: (u16, u16),
    scanning: bool,
    pub(super) quit: bool,
    pub(super) cockpit: Cockpit,
    pub(super) spawn: Spawns,
    pub(super) changes: crate::ui::changes::Changes,
    /// What changed while the person was not looking (the line under the title).
    away: crate::ui::away::Away,
}

impl App {
    /// A new sidebar with no snapshot yet.
    pub fn new(clock: Arc<dyn Clock>, options: Options) -> Self {
        App {
            clock,
            options,
            snapshot: None,
            selection: None,
            last_index: 0,
            details_open: false,
            details_scroll: 0,
            details_view: std::cell::Cell::new(None),
            seen_expanded: false,
            hide_offline: false,
            hide_seen: false,
            reply_box: None,
            drafts: HashMap::new(),
            receipts: HashMap::new(),
            sending: HashMap::new(),
            seen_overrides: HashMap::new(),
            message: None,
            notice: None,
            size: (80, 24),
            scanning: false,
            quit: false,
            cockpit: Cockpit::default(),
            spawn: Default::default(),
            changes: Default::default(),
            away: Default::default(),
        }
    }

    // ---- read access (render and tests) ----

    /// Current time from the injected clock.
    pub fn now(&self) -> Ms {
        self.clock.now_ms()
    }
    /// Whether colour is on.
    pub fn color(&self) -> bool {
        self.options.color
    }
    /// Why replies cannot be sent at all in this run, if so.
    pub fn reply_unavailable(&self) -> Option<&str> {
        self.options.reply_unavailable.as_deref()
    }
    /// Why close and resume cannot run from this sidebar at all, if so.
    pub fn workers_unavailable(&self) -> Option<&str> {
        self.options.workers_unavailable.as_deref()
    }
    /// Why workers cannot be spawned from this sidebar at all, if so.
    pub fn spawn_unavailable(&self) -> Option<&str> {
        self.options.spawn_unavailable.as_deref()
    }
    /// The latest snapshot, if one arrived.
    pub fn snapshot(&self) -> Option<&Snapshot> {
        self.snapshot.as_ref()
    }
    /// The current selection.
    pub fn selection(&self) -> Option<&Selection> {
        self.selection.as_ref()
    }
    /// The selected row, if a row (not the group header) is selected.
    /// The review view's state for a row.
    pub fn review_of(&self, id: &str) -> crate::ui::changes::ReviewState<'_> {
        self.changes.review_of(id)
    }
    pub fn selected_row(&self) -> Option<&Row> {
        match (&self.selection, &self.snapshot) {
            (Some(Selection::Row(id)), Some(s)) => s.row(id),
            _ => None,
        }
    }
    /// The "since you looked" line for `width` columns, or `None` when nothing changed while
    /// the person was away (see `ui::away`).
    pub fn away_line(&self, width: usize) -> Option<String> {
        self.away.line(width)
    }
    /// Whether the details panel is open.
    pub fn details_open(&self) -> bool {
        self.details_open
    }
    /// Lines the details panel is scrolled by (render clamps it).
    pub fn details_scroll(&self) -> usize {
        self.details_scroll
    }
    /// The row id whose reply box is open.
    pub fn reply_open(&self) -> Option<&str> {
        self.reply_box.as_ref().map(|b| b.row_id.as_str())
    }
    /// The open reply box: the seat it is bound to, as it was when it opened.
    pub fn reply_box(&self) -> Option<&ReplyBox> {
        self.reply_box.as_ref()
    }
    /// The refusal holding the keyboard until Enter or Esc, if any.
    pub fn notice(&self) -> Option<&str> {
        self.notice.as_deref()
    }
    /// Whether the Seen group is expanded.
    pub fn seen_expanded(&self) -> bool {
        self.seen_expanded
    }
    /// Whether offline rows are hidden.
    pub fn hide_offline(&self) -> bool {
        self.hide_offline
    }
    /// Whether seen rows are hidden.
    pub fn hide_seen(&self) -> bool {
        self.hide_seen
    }
    /// The one-line status message (refusals, errors), if any.
    pub fn message(&self) -> Option<&str> {
        self.message.as_deref()
    }
    /// The draft for a row.
    pub fn draft(&self, row_id: &str) -> Option<&Draft> {
        self.drafts.get(row_id)
    }
    /// The last reply receipt for a row.
    pub fn receipt(&self, row_id: &str) -> Option<&Receipt> {
        self.receipts.get(row_id)
    }
    /// Whether a reply to this row is in flight.
    pub fn is_sending(&self, row_id: &str) -> bool {
        self.sending.contains_key(row_id)
    }
    /// Where the reply in flight to this row goes, if one is.
    pub fn sending_to(&self, row_id: &str) -> Option<&str> {
        self.sending.get(row_id).map(String::as_str)
    }
    /// Whether a pass is running now.
    pub fn scanning(&self) -> bool {
        self.scanning
    }
    /// Whether the user asked to quit.
    pub fn should_quit(&self) -> bool {
        self.quit
    }
    /// Last known terminal size.
    pub fn size(&self) -> (u16, u16) {
        self.size
    }

    /// Which part has the keyboard.
    pub fn mode(&self) -> Mode {
        if self.notice.is_some() {
            Mode::Notice
        } else if self.cockpit.confirm.is_some() {
            Mode::Confirm
        } else if self.spawn.form.is_some() {
            Mode::Spawn
        } else if self.reply_box.is_some() {
            Mode::Reply
        } else if self.cockpit.filter_editing {
            Mode::Filter
        } else if self.cockpit.help_open {
            Mode::Help
        } else if self.cockpit.hosts.is_some() {
            Mode::Hosts
        } else if self.details_open {
            Mode::Details
        } else {
            Mode::List
        }
    }

    /// Seen as the sidebar shows it: a mark just written wins until a snapshot catches up.
    pub fn is_seen(&self, row: &Row) -> bool {
        match self.seen_overrides.get(&row.id) {
            Some(o) if o.last_activity == row.last_activity => o.seen,
            _ => row.seen,
        }
    }

    /// The list after the toggles: unseen rows in scan order, then the "Seen (N)" group.
    pub fn list_view(&self) -> ListView<'_> {
        let mut view = ListView {
            items: Vec::new(),
            hidden_offline: 0,
            hidden_seen: 0,
            filtered: 0,
        };
        let Some(snap) = &self.snapshot else {
            return view;
        };
        let mut seen_rows = Vec::new();
        for row in &snap.rows {
            if !passes(&self.cockpit.filter, row) {
                view.filtered += 1;
            } else if self.hide_offline && row.state == BoardState::Offline {
                view.hidden_offline += 1;
            } else if self.is_seen(row) {
                seen_rows.push(row);
            } else {
                view.items.push(Item::Row(row));
            }
        }
        if self.hide_seen {
            view.hidden_seen = seen_rows.len();
        } else if !seen_rows.is_empty() {
            view.items.push(Item::SeenGroup {
                count: seen_rows.len(),
                expanded: self.seen_expanded,
            });
            if self.seen_expanded {
                view.items.extend(seen_rows.into_iter().map(Item::Row));
            }
        }
        view
    }

    /// Index of the selection in `items` (falls back to the last index, clamped).
    pub fn selected_index(&self, items: &[Item<'_>]) -> usize {
        let found = items.iter().position(|it| match (it, &self.selection) {
            (Item::Row(r), Some(Selection::Row(id))) => &r.id == id,
            (Item::SeenGroup { .. }, Some(Selection::SeenGroup)) => true,
            _ => false,
        });
        found.unwrap_or_else(|| self.last_index.min(items.len().saturating_sub(1)))
    }

    // ---- update ----

    /// Apply one message; returns the effects the runner must carry out.
    pub fn update(&mut self, msg: Msg) -> Vec<Effect> {
        let mut fx = Vec::new();
        match msg {
            Msg::PassStarted => self.scanning = true,
            Msg::SnapshotArrived(s) => {
                self.scanning = false;
                // While the pane has the keyboard the person sees each change: none piles up.
                let present = self.cockpit.focused == Some(true);
                self.away.snapshot(&s.rows, present);
                // The Changes column is read at start, then for the seats that moved.
                if let Some(ask) = self
                    .snapshot
                    .as_ref()
                    .and_then(|old| crate::ui::changes::asks_for(&old.rows, &s.rows))
                {
                    fx.push(Effect::ReadChanges(ask));
                }
                self.on_snapshot(s);
            }
            Msg::PassUnchanged { scanned_at } => {
                // Only the time moves: the rows, and so the Seen marks the person just set,
                // are what the last snapshot said (a new seen.json makes a pass that differs).
                self.scanning = false;
                if let Some(s) = self.snapshot.as_mut() {
                    s.scanned_at = scanned_at;
                }
            }
            Msg::Key(ev) => {
                // Any key is a look, bound or not.
                self.away.looked();
                if let Some(k) = keys::key_of(&ev) {
                    self.on_key(k, &mut fx);
                }
            }
            Msg::Resize(w, h) => {
                self.size = (w, h);
                self.check_height(h, &mut fx);
            }
            Msg::Focus(f) => {
                if f {
                    self.away.looked();
                }
                self.cockpit.focused = Some(f);
            }
            Msg::Mouse(ev) => self.on_mouse(ev, &mut fx),
            Msg::JumpFinished { name, outcome } => self.on_jump_finished(name, outcome),
            Msg::WorkerStage { row_id, stage } => self.on_worker_stage(&row_id, &stage),
            Msg::WorkerFinished { row_id, outcome } => self.on_worker_finished(&row_id, outcome),
            Msg::SpawnStage { name, stage } => self.on_spawn_stage(&name, &stage),
            Msg::SpawnFinished { name, outcome } => self.on_spawn_finished(&name, outcome),
            Msg::ChangesArrived(by_row) => self.changes.set(by_row),
            Msg::ReviewArrived { row_id, review } => self.changes.arrived(row_id, review),
            Msg::TimelineRead { row_id, result } => self.on_timeline_read(&row_id, result),
            Msg::Paste(text) if self.mode() == Mode::Spawn => self.spawn_paste(&text),
            Msg::Paste(text) => self.on_paste(&text),
            Msg::ReplyFinished { row_id, outcome } => self.on_reply_finished(row_id, outcome),
            Msg::SeenFinished {
                row_id,
                seen,
                result,
            } => self.on_seen_finished(row_id, seen, result, &mut fx),
        }
        self.sync_selection();
        self.follow_review(&mut fx);
        fx
    }

    /// The review view follows the selection: another row selected reads that row's review.
    fn follow_review(&mut self, fx: &mut Vec<Effect>) {
        if !self.review_open() {
            return;
        }
        let Some(id) = self.selected_row().map(|r| r.id.clone()) else {
            return;
        };
        if !self.changes.is_for(&id) {
            self.changes.loading(&id);
            fx.push(Effect::LoadReview { row_id: id });
        }
    }

    fn on_snapshot(&mut self, snap: Snapshot) {
        // Drop overrides the new snapshot has caught up with (or made moot); keep pending ones.
        self.seen_overrides.retain(|id, o| {
            if o.pending {
                return true;
            }
            let Some(row) = snap.row(id) else {
                return false;
            };
            if row.last_activity != o.last_activity || row.seen == o.seen {
                return false;
            }
            // A pass that read seen.json just before the write: give it two more passes.
            o.snapshots_after += 1;
            o.snapshots_after < 3
        });
        if self.drafts.len() + self.receipts.len() > MAX_REMEMBERED {
            let open = self.reply_open().map(str::to_string);
            let keep = |id: &String| snap.row(id).is_some() || open.as_ref() == Some(id);
            self.drafts.retain(|id, _| keep(id));
            self.receipts.retain(|id, _| keep(id));
        }
        // An open box stays open and bound to its seat whatever this pass says: closing it
        // under the user's fingers would turn the rest of the typed text into commands. The box
        // says when its seat is gone or unreachable, and Enter then sends nothing.
        self.snapshot = Some(snap);
    }

    /// Keep the selection on an existing item: the open reply box's seat when listed, else by
    /// id if present, else the same index.
    fn sync_selection(&mut self) {
        if let Some(b) = &self.reply_box {
            if self
                .list_view()
                .items
                .iter()
                .any(|it| matches!(it, Item::Row(r) if r.id == b.row_id))
            {
                self.selection = Some(Selection::Row(b.row_id.clone()));
            }
        }
        let (sel, idx) = {
            let view = self.list_view();
            if view.items.is_empty() {
                (None, 0)
            } else {
                let idx = self.selected_index(&view.items);
                (Some(item_selection(&view.items[idx])), idx)
            }
        };
        if sel != self.selection {
            // Another row's details start at the top.
            self.details_scroll = 0;
        }
        self.selection = sel;
        self.last_index = idx;
        if self.selected_row().is_none() {
            // Details describe one row; with none selected there is nothing to show.
            self.details_open = false;
        }
    }

    fn on_key(&mut self, key: Key, fx: &mut Vec<Effect>) {
        let mode = self.mode();
        if mode != Mode::Notice {
            self.message = None;
        }
        if let Some(b) = &mut self.reply_box {
            b.note = None;
        }
        if mode == Mode::Spawn && keys::action_for(mode, key).is_none() {
            self.spawn_key(key, fx);
            return;
        }
        match keys::action_for(mode, key) {
            Some(a) => self.on_action(a, fx),
            // In the editor and the filter an unbound printable key is text; elsewhere (the
            // notice and the confirmation above all) it does nothing.
            None => match (mode, key) {
                (Mode::Reply, Key::Char(c)) => self.insert_char(c),
                (Mode::Filter, Key::Char(c)) => self.filter_char(c),
                _ => {}
            },
        }
    }

    fn on_action(&mut self, action: Action, fx: &mut Vec<Effect>) {
        let page = (self.size.1 as usize).saturating_sub(4).max(1) as isize;
        let half_page = (page as usize / 2).max(1);
        match action {
            Action::Up => self.move_by(-1),
            Action::Down => self.move_by(1),
            Action::PageUp => self.move_by(-page),
            Action::PageDown => self.move_by(page),
            Action::Top => self.move_by(isize::MIN / 2),
            Action::Bottom => self.move_by(isize::MAX / 2),
            Action::Jump => self.jump(fx),
            Action::NextAttention => self.next_attention(true),
            Action::PrevAttention => self.next_attention(false),
            Action::ToggleDetails => self.toggle_panel(false),
            Action::TogglePreview => self.toggle_panel(true),
            Action::ToggleReview => self.toggle_review(fx),
            Action::ToggleTimeline => self.toggle_timeline(fx),
            Action::CloseDetails => self.details_open = false,
            Action::CloseWorker => self.ask_worker_action(WorkerAction::Close),
            Action::ResumeWorker => self.ask_worker_action(WorkerAction::Resume),
            Action::RaiseBudget => self.ask_worker_action(WorkerAction::RaiseBudget),
            Action::OpenSpawn => self.open_spawn(),
            Action::Confirm => self.confirm_worker_action(fx),
            Action::Cancel => self.cockpit.confirm = None,
            Action::OpenHelp => {
                self.cockpit.help_open = true;
                self.cockpit.help_scroll = 0;
            }
            Action::CloseHelp => self.cockpit.help_open = false,
            Action::OpenFilter => self.open_filter(),
            Action::AcceptFilter => self.close_filter(true),
            Action::ClearFilter => self.close_filter(false),
            Action::Back => self.back(fx),
            Action::ScrollDetailsDown if self.mode() == Mode::Help => self.scroll_help(true, false),
            Action::ScrollDetailsUp if self.mode() == Mode::Help => self.scroll_help(false, false),
            Action::HelpPageDown => self.scroll_help(true, true),
            Action::HelpPageUp => self.scroll_help(false, true),
            Action::ScrollDetailsDown => {
                // Never past the last screenful the person saw, so PgUp always moves back at
                // once (before any frame, the frame clamps what it shows).
                let max = self
                    .details_view
                    .get()
                    .map_or(usize::MAX, |(len, fits)| len.saturating_sub(fits));
                self.details_scroll = (self.details_scroll + half_page).min(max);
            }
            Action::ScrollDetailsUp => {
                self.details_scroll = self.details_scroll.saturating_sub(half_page);
            }
            Action::Quit => {
                self.quit = true;
                fx.push(Effect::Quit);
            }
            Action::ToggleSeen => self.toggle_seen(fx),
            Action::HideOffline => self.hide_offline = !self.hide_offline,
            Action::HideSeen => self.hide_seen = !self.hide_seen,
            Action::RetryHosts => self.retry_hosts(fx),
            Action::OpenHosts => self.cockpit.hosts = Some(None),
            Action::CloseHosts => self.cockpit.hosts = None,
            Action::HostUp => self.move_host(-1),
            Action::HostDown => self.move_host(1),
            Action::RetryHost => self.retry_host(fx),
            Action::OpenReply => self.open_reply(),
            Action::Send => self.send(fx),
            Action::CloseReply => self.reply_box = None,
            Action::NewLine => self.insert_text("\n"),
            Action::CursorLeft => self.edit(Draft::left),
            Action::CursorRight => self.edit(Draft::right),
            Action::CursorUp => self.edit(Draft::up),
            Action::CursorDown => self.edit(Draft::down),
            Action::CursorHome => self.edit(Draft::home),
            Action::CursorEnd => self.edit(Draft::end),
            Action::DeleteBack if self.mode() == Mode::Filter => self.filter_back(),
            Action::DeleteBack => self.edit(Draft::delete_back),
            Action::DeleteForward => self.edit(Draft::delete_forward),
            Action::Dismiss => self.notice = None,
        }
    }

    /// `H`: ask every other host that is not answering again now (they are otherwise asked
    /// again after their pause: up to 8 s, 30 s when refused).
    fn retry_hosts(&mut self, fx: &mut Vec<Effect>) {
        let waiting = self.snapshot().map_or(0, |s| {
            s.hosts
                .iter()
                .filter(|h| h.state != crate::snapshot::HostState::Answering)
                .count()
        });
        let on_board = self.snapshot().map_or(0, |s| s.hosts.len());
        self.notice = Some(match (on_board, waiting) {
            (0, _) => "no other hosts on this board (the hosts file names them)".into(),
            (_, 0) => "every host is answering".into(),
            (_, n) => {
                fx.push(Effect::RetryHosts);
                format!("asking {n} host(s) again now")
            }
        });
    }

    /// The host the hosts view has selected (`None` when it is closed or the board has none).
    pub fn hosts_selected(&self) -> Option<&str> {
        let sel = self.cockpit.hosts.as_ref()?;
        crate::ui::hosts_view::selected(self.snapshot()?, sel.as_deref()).map(|h| h.name.as_str())
    }

    /// Whether the hosts view is open.
    pub fn hosts_open(&self) -> bool {
        self.cockpit.hosts.is_some()
    }

    /// Move the hosts view's selection by `delta` hosts (it stops at the ends).
    fn move_host(&mut self, delta: isize) {
        let Some(snap) = self.snapshot() else { return };
        let names: Vec<&str> = snap.hosts.iter().map(|h| h.name.as_str()).collect();
        let Some(cur) = self
            .hosts_selected()
            .and_then(|n| names.iter().position(|x| *x == n))
        else {
            return;
        };
        let max = names.len().saturating_sub(1) as isize;
        let to = (cur as isize).saturating_add(delta).clamp(0, max) as usize;
        let name = names.get(to).map(|n| n.to_string());
        self.cockpit.hosts = Some(name);
    }

    /// `H` or ⏎ in the hosts view: ask the selected host again now, by the same path as `H` in
    /// the list (a host answering has nothing to retry).
    fn retry_host(&mut self, fx: &mut Vec<Effect>) {
        let Some(h) = self
            .hosts_selected()
            .and_then(|n| self.snapshot()?.hosts.iter().find(|h| h.name == n))
        else {
            self.message = Some("no other hosts on this board (the hosts file names them)".into());
            return;
        };
        let name = crate::ui::fit::clean(&h.name);
        self.message = Some(if h.state == crate::snapshot::HostState::Answering {
            format!("host {name} is answering")
        } else {
            fx.push(Effect::RetryHost(h.name.clone()));
            format!("asking host {name} again now")
        });
    }

    /// What the last frame's details showed: (lines below the pinned title, lines that fit). Told
    /// by the frame (`render::draw`): the app does not measure its own layout, since the views
    /// sit above it.
    pub(crate) fn note_details_view(&self, len: usize, fits: usize) {
        self.details_view.set(Some((len, fits)));
    }

    /// Select `sel`, at `idx` of the list as shown.
    pub(super) fn set_selection(&mut self, sel: Selection, idx: usize) {
        self.selection = Some(sel);
        self.last_index = idx;
    }

    pub(super) fn move_by(&mut self, delta: isize) {
        let view = self.list_view();
        if view.items.is_empty() {
            return;
        }
        let cur = self.selected_index(&view.items) as isize;
        let max = view.items.len() as isize - 1;
        let idx = cur.saturating_add(delta).clamp(0, max) as usize;
        let sel = Some(item_selection(&view.items[idx]));
        if sel != self.selection {
            self.details_scroll = 0;
        }
        self.selection = sel;
        self.last_index = idx;
    }
}

fn item_selection(item: &Item<'_>) -> Selection {
    match item {
        Item::Row(r) => Selection::Row(r.id.clone()),
        Item::SeenGroup { .. } => Selection::SeenGroup,
    }
}
