//! The part of `App::update` that makes the sidebar the place where the loop happens: ⏎ takes
//! the person to the selected worker's pane, `n`/`N` walk the seats that need them, `p` shows
//! the worker's recent conversation, `/` filters by name, `?` shows every key, the mouse
//! selects (a double click goes to the pane), focus is tracked, and close/resume run from the
//! list after a confirmation that names the worker. Every multiplexer call and every action goes
//! out as an effect; the outcome comes back as a message.

use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};

use crate::clock::Ms;
use crate::snapshot::{Row, RowRole};
use crate::ui::app::{App, Effect, Item, Selection};
use crate::ui::fit::name_of;
use crate::ui::layout::MIN_HEIGHT;
use crate::ui::ports::{JumpOutcome, SeatRef, WorkerAction, WorkerOutcome};
use crate::ui::state::{JobView, TimelinePanel};
use crate::ui::theme;

/// Two clicks on the same row within this many milliseconds are a double click.
const DOUBLE_CLICK_MS: Ms = 500;
/// Longest filter text, in characters.
const MAX_FILTER_CHARS: usize = 64;
/// Bound on remembered worker jobs (running or finished).
const MAX_JOBS: usize = 256;

/// Whether a row needs the person: waiting or in error, and not marked seen.
pub(crate) fn needs_you(app: &App, row: &Row) -> bool {
    !app.is_seen(row) && (theme::needs_attention(row.state) || row.waiting_on_you)
}

impl App {
    /// ⏎: go to the selected seat's pane (the Seen group header opens or closes instead).
    pub(super) fn jump(&mut self, fx: &mut Vec<Effect>) {
        if matches!(self.selection(), Some(Selection::SeenGroup)) {
            self.seen_expanded = !self.seen_expanded;
            return;
        }
        let Some(row) = self.selected_row() else {
            self.message = Some("select a worker to go to its pane".into());
            return;
        };
        let name = name_of(row);
        let seat = SeatRef::of(row);
        if seat.pane.is_none() {
            // Nothing to go to: say so and stay.
            self.message = Some(format!(
                "{name} has no live pane ({}): staying here",
                row.state_reason.words()
            ));
            return;
        }
        self.message = Some(format!("going to {name}…"));
        self.cockpit.jumping = Some(name);
        fx.push(Effect::Jump(seat));
    }

    pub(super) fn on_jump_finished(&mut self, name: String, outcome: JumpOutcome) {
        self.cockpit.jumping = None;
        self.message = Some(match outcome {
            JumpOutcome::Moved { pane } => {
                format!("went to {name} ({})", crate::text::sanitize(&pane))
            }
            JumpOutcome::Refused { reason } => {
                format!("not moved to {name}: {}", crate::text::sanitize(&reason))
            }
        });
    }

    /// `n` / `N`: the next / previous listed seat that needs the person, wrapping.
    pub(super) fn next_attention(&mut self, forward: bool) {
        let view = self.list_view();
        let n = view.items.len();
        if n == 0 {
            return;
        }
        let cur = self.selected_index(&view.items);
        let found = (1..=n)
            .map(|k| {
                if forward {
                    (cur + k) % n
                } else {
                    (cur + n - k % n) % n
                }
            })
            .find(|&i| matches!(view.items[i], Item::Row(r) if needs_you(self, r)));
        let target = found.and_then(|i| match view.items[i] {
            Item::Row(r) => Some((i, r.id.clone())),
            Item::SeenGroup { .. } => None,
        });
        match target {
            Some((i, id)) => {
                if self.selection() != Some(&Selection::Row(id.clone())) {
                    self.details_scroll = 0;
                }
                self.set_selection(Selection::Row(id), i);
            }
            None => self.message = Some("no listed seat needs you".into()),
        }
    }

    /// `d` / `p`: open the panel with details / the preview, switch it, or close it.
    pub(super) fn toggle_panel(&mut self, preview: bool) {
        if self.selected_row().is_none() {
            self.message = Some("select a worker first".into());
            return;
        }
        if self.details_open
            && !self.cockpit.review
            && self.cockpit.timeline.is_none()
            && self.cockpit.preview == preview
        {
            self.details_open = false;
        } else {
            self.details_open = true;
            self.cockpit.preview = preview;
        }
        self.cockpit.review = false;
        self.cockpit.timeline = None;
        self.details_scroll = 0;
    }

    /// `v`: open the panel with the selected worker's files and diff (read through the
    /// `ChangesSource`), or close it.
    pub(super) fn toggle_review(&mut self, fx: &mut Vec<Effect>) {
        let Some(id) = self.selected_row().map(|r| r.id.clone()) else {
            self.message = Some("select a worker first".into());
            return;
        };
        self.details_scroll = 0;
        if self.details_open && self.cockpit.review {
            self.details_open = false;
            self.cockpit.review = false;
            return;
        }
        self.details_open = true;
        self.cockpit.review = true;
        self.cockpit.timeline = None;
        self.changes.loading(&id);
        fx.push(Effect::LoadReview { row_id: id });
    }

    /// `l`: open the panel with the selected worker's timeline (read in the background, as
    /// `log NAME` reads it), or close it.
    pub(super) fn toggle_timeline(&mut self, fx: &mut Vec<Effect>) {
        let Some(row) = self.selected_row() else {
            self.message = Some("select a worker first".into());
            return;
        };
        if self.timeline_open() {
            self.details_open = false;
            self.cockpit.timeline = None;
            return;
        }
        let seat = SeatRef::of(row);
        self.cockpit.timeline = Some(TimelinePanel {
            row_id: seat.row_id.clone(),
            name: name_of(row),
            lines: None,
        });
        self.cockpit.review = false;
        self.details_open = true;
        self.details_scroll = usize::MAX / 2;
        fx.push(Effect::ReadTimeline(seat));
    }

    /// The lines the `l` panel asked for arrived (ignored once it closed or moved on).
    pub(super) fn on_timeline_read(
        &mut self,
        row_id: &str,
        result: Result<Vec<String>, crate::ui::ports::NoLines>,
    ) {
        if let Some(p) = self
            .cockpit
            .timeline
            .as_mut()
            .filter(|p| p.row_id == row_id)
        {
            p.lines = Some(result);
        }
    }

    /// Whether the open panel is a worker's timeline.
    pub fn timeline_open(&self) -> bool {
        self.details_open && self.cockpit.timeline.is_some()
    }

    /// The `l` panel, when open.
    pub(crate) fn timeline_panel(&self) -> Option<&TimelinePanel> {
        self.cockpit.timeline.as_ref().filter(|_| self.details_open)
    }

    /// `C` / `R`: put up the confirmation that names the worker (or refuse at once).
    pub(super) fn ask_worker_action(&mut self, action: WorkerAction) {
        let Some(row) = self.selected_row() else {
            self.notice = Some(format!("{}: select a worker first", action.command()));
            return;
        };
        let name = name_of(row);
        if let Some(why) = self.workers_unavailable() {
            self.notice = Some(format!(
                "{} {name}: {}",
                action.command(),
                crate::text::sanitize(why)
            ));
            return;
        }
        if row.role != RowRole::Worker {
            self.notice = Some(format!(
                "{} {name}: only configured workers can be closed or resumed",
                action.command()
            ));
            return;
        }
        if self
            .cockpit
            .jobs
            .get(&row.id)
            .is_some_and(|j| j.outcome.is_none())
        {
            self.notice = Some(format!("{name}: a close or resume is already running"));
            return;
        }
        let cost_budget = row
            .budget
            .as_ref()
            .and_then(|b| b.own)
            .is_some_and(|s| s.measure == crate::budget::eval::Measure::Cost);
        if action == WorkerAction::RaiseBudget && !cost_budget {
            self.notice = Some(format!(
                "{name} has no cost budget to raise (intercom-pane budget NAME --usd N sets one)"
            ));
            return;
        }
        self.cockpit.confirm = Some((action, SeatRef::of(row)));
    }

    /// The confirmation's text, naming the worker and what will happen.
    pub fn confirm_text(&self) -> Option<String> {
        let (action, seat) = self.cockpit.confirm.as_ref()?;
        let name = crate::text::sanitize(&seat.name);
        Some(match action {
            WorkerAction::Close => format!(
                "Close worker {name}? It is asked to save its handoff, its turn must settle, then \
                 its pane is closed (close-worker). y: close {name} · n/Esc: cancel"
            ),
            WorkerAction::Resume => format!(
                "Resume worker {name}? You confirm it is closed; it starts again with its saved \
                 session in a tmux session (Herdr: tab) of its own (resume-worker). y: resume \
                 {name} · n/Esc: cancel"
            ),
            WorkerAction::RaiseBudget => match self
                .snapshot()
                .and_then(|s| s.row(&seat.row_id))
                .and_then(|r| r.budget.as_ref())
                .and_then(|b| b.own)
                .filter(|s| s.measure == crate::budget::eval::Measure::Cost)
            {
                Some(s) => {
                    let step = crate::budget::change::sidebar_step(s.limit);
                    format!(
                        "Raise worker {name}'s budget from ${:.2} to ${:.2} (budget --raise \
                         {step:.2}); a held prompt then goes. y: raise · n/Esc: cancel",
                        s.limit,
                        s.limit + step
                    )
                }
                // Refused before asking (`ask_worker_action`); the budget went meanwhile.
                None => format!("Worker {name} has no cost budget to raise. n/Esc: cancel"),
            },
            // Never asked: the spawn form is its own confirmation.
            WorkerAction::Spawn => format!("Spawn worker {name}? n/Esc: cancel"),
        })
    }

    /// `y` on the confirmation: the job starts in the background.
    pub(super) fn confirm_worker_action(&mut self, fx: &mut Vec<Effect>) {
        let Some((action, seat)) = self.cockpit.confirm.take() else {
            return;
        };
        if self.cockpit.jobs.len() >= MAX_JOBS {
            self.cockpit.jobs.retain(|_, j| j.outcome.is_none());
        }
        let now = self.now();
        self.cockpit.jobs.insert(
            seat.row_id.clone(),
            JobView {
                action,
                name: crate::text::sanitize(&seat.name),
                stage: "starting".into(),
                started: now,
                outcome: None,
                finished: None,
            },
        );
        fx.push(Effect::Worker { action, seat });
    }

    pub(super) fn on_worker_stage(&mut self, row_id: &str, stage: &str) {
        if let Some(j) = self.cockpit.jobs.get_mut(row_id) {
            if j.outcome.is_none() {
                j.stage = crate::text::one_line(&crate::text::sanitize(stage), 120);
            }
        }
    }

    pub(super) fn on_worker_finished(&mut self, row_id: &str, outcome: WorkerOutcome) {
        let now = self.now();
        if let Some(j) = self.cockpit.jobs.get_mut(row_id) {
            j.outcome = Some(outcome);
            j.finished = Some(now);
        }
    }

    /// `/`: start typing a name filter (the text so far is kept).
    pub(super) fn open_filter(&mut self) {
        self.cockpit.filter_editing = true;
    }

    pub(super) fn filter_char(&mut self, c: char) {
        if !c.is_control() && self.cockpit.filter.chars().count() < MAX_FILTER_CHARS {
            self.cockpit.filter.push(c);
        }
    }

    pub(super) fn filter_back(&mut self) {
        self.cockpit.filter.pop();
    }

    pub(super) fn close_filter(&mut self, keep: bool) {
        self.cockpit.filter_editing = false;
        if !keep {
            self.cockpit.filter.clear();
        }
    }

    /// Esc in the list: a filter is cleared first; only then does Esc quit.
    pub(super) fn back(&mut self, fx: &mut Vec<Effect>) {
        if self.cockpit.filter.is_empty() {
            self.quit = true;
            fx.push(Effect::Quit);
        } else {
            self.cockpit.filter.clear();
        }
    }

    /// Scroll the help overlay a line, or a page of the rows it has on this screen (at a 10-row
    /// sidebar as at a tall one); never past its last line.
    pub(super) fn scroll_help(&mut self, down: bool, page: bool) {
        use crate::ui::help;
        let (w, h) = self.size();
        let body = crate::ui::render::body_at(self, w, h);
        let step = if page { help::page(body.height) } else { 1 };
        let last = help::max_scroll(body.width, body.height);
        let s = &mut self.cockpit.help_scroll;
        *s = if down {
            s.saturating_add(step).min(last)
        } else {
            s.saturating_sub(step).min(last)
        };
    }

    /// A mouse event: a left click selects the row under it, a second click on the same row
    /// soon after goes to its pane; the wheel moves the selection.
    pub(super) fn on_mouse(&mut self, ev: MouseEvent, fx: &mut Vec<Effect>) {
        use crate::ui::keys::Mode;
        if !matches!(self.mode(), Mode::List | Mode::Details) {
            return;
        }
        match ev.kind {
            MouseEventKind::ScrollUp => self.move_by(-1),
            MouseEventKind::ScrollDown => self.move_by(1),
            MouseEventKind::Down(MouseButton::Left) => {
                let (w, h) = self.size();
                let Some(i) = crate::ui::render::item_at(self, w, h, ev.column, ev.row) else {
                    return;
                };
                let view = self.list_view();
                let Some(item) = view.items.get(i) else {
                    return;
                };
                let sel = match item {
                    Item::Row(r) => Selection::Row(r.id.clone()),
                    Item::SeenGroup { .. } => Selection::SeenGroup,
                };
                let key = match &sel {
                    Selection::Row(id) => id.clone(),
                    Selection::SeenGroup => String::new(),
                };
                let now = self.now();
                let double = self
                    .cockpit
                    .last_click
                    .as_ref()
                    .is_some_and(|(at, k)| *k == key && now - at <= DOUBLE_CLICK_MS);
                if self.selection() != Some(&sel) {
                    self.details_scroll = 0;
                }
                self.set_selection(sel, i);
                if double {
                    self.cockpit.last_click = None;
                    self.jump(fx);
                } else {
                    self.cockpit.last_click = Some((now, key));
                }
            }
            _ => {}
        }
    }

    /// The terminal grew or shrank: below the usable minimum, ask (once per size) for the
    /// sidebar's pane to be made tall enough again.
    pub(super) fn check_height(&mut self, h: u16, fx: &mut Vec<Effect>) {
        if h >= MIN_HEIGHT {
            self.cockpit.height_asked = None;
        } else if self.cockpit.height_asked != Some(h) {
            self.cockpit.height_asked = Some(h);
            fx.push(Effect::KeepHeight(MIN_HEIGHT));
        }
    }

    // ---- read access (render and tests) ----

    /// Whether the terminal says this pane has the keyboard (`None`: never said).
    pub fn focused(&self) -> Option<bool> {
        self.cockpit.focused
    }
    /// The name filter (empty: none).
    pub fn filter(&self) -> &str {
        &self.cockpit.filter
    }
    /// Whether the filter is being typed.
    pub fn filter_editing(&self) -> bool {
        self.cockpit.filter_editing
    }
    /// Whether the help overlay is open.
    pub fn help_open(&self) -> bool {
        self.cockpit.help_open
    }
    /// Lines the help overlay is scrolled by.
    pub fn help_scroll(&self) -> usize {
        self.cockpit.help_scroll
    }
    /// Whether the open panel is the preview (else the details).
    pub fn preview_open(&self) -> bool {
        self.details_open
            && self.cockpit.preview
            && !self.cockpit.review
            && self.cockpit.timeline.is_none()
    }
    /// Whether the open panel is the review view (`v`).
    pub fn review_open(&self) -> bool {
        self.details_open && self.cockpit.review
    }
    /// The close or resume waiting for its confirmation, if one.
    pub fn confirming(&self) -> Option<(WorkerAction, &SeatRef)> {
        self.cockpit.confirm.as_ref().map(|(a, s)| (*a, s))
    }
    /// The close or resume started on this row (running or finished), if any.
    pub fn job(&self, row_id: &str) -> Option<&JobView> {
        self.cockpit
            .jobs
            .get(row_id)
            .or_else(|| self.spawn_job_of(row_id))
    }
    /// The name of the seat a jump is going to, while one is in flight.
    pub fn jumping(&self) -> Option<&str> {
        self.cockpit.jumping.as_deref()
    }
}
