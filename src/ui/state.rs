//! The parts of the sidebar's state that `App` holds for the cockpit and the spawn form, below
//! `App` and its views: `app.rs` names these types, and the files that add `App`'s behaviour
//! (`cockpit.rs`, `spawn_flow.rs`) and draw it name `app.rs`, never the other way round.

use std::collections::HashMap;

use crate::clock::Ms;
use crate::snapshot::Row;
use crate::ui::fit::name_of;
use crate::ui::ports::{SeatRef, WorkerAction, WorkerOutcome};
use crate::ui::spawn_form::SpawnForm;

/// A close or resume started from the list: its stage while it runs, its outcome after.
#[derive(Debug, Clone, PartialEq)]
pub struct JobView {
    pub action: WorkerAction,
    /// The seat's name as shown when it started.
    pub name: String,
    pub stage: String,
    pub started: Ms,
    pub outcome: Option<WorkerOutcome>,
    pub finished: Option<Ms>,
}

/// The cockpit's state inside `App`.
#[derive(Debug, Default)]
pub(crate) struct Cockpit {
    /// Whether the terminal says this pane has the keyboard (`None`: it never said).
    pub(crate) focused: Option<bool>,
    pub(crate) filter: String,
    pub(crate) filter_editing: bool,
    pub(crate) help_open: bool,
    pub(crate) help_scroll: usize,
    /// The hosts view (`m`) is open: the host selected there (by name; `None`: the first).
    pub(crate) hosts: Option<Option<String>>,
    /// The open panel shows the preview instead of the details.
    pub(crate) preview: bool,
    /// The open panel shows the review view (`v`: files and diff) instead of either.
    pub(crate) review: bool,
    /// The open panel shows a worker's timeline (`l`) instead: whose, and its lines once read.
    pub(crate) timeline: Option<TimelinePanel>,
    /// A close or resume waiting for `y`.
    pub(crate) confirm: Option<(WorkerAction, SeatRef)>,
    /// A jump in flight: the seat's name.
    pub(crate) jumping: Option<String>,
    pub(crate) jobs: HashMap<String, JobView>,
    pub(crate) last_click: Option<(Ms, String)>,
    /// The last height the sidebar asked to keep, so a shrink asks once.
    pub(crate) height_asked: Option<u16>,
}

/// The `l` panel: the row it was asked for, and its lines (`None` while they are read).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TimelinePanel {
    pub(crate) row_id: String,
    pub(crate) name: String,
    pub(crate) lines: Option<Result<Vec<String>, crate::ui::ports::NoLines>>,
}

/// Whether a row's name passes the filter (case-insensitive, on the name as shown).
pub(crate) fn passes(filter: &str, row: &Row) -> bool {
    filter.is_empty() || name_of(row).to_lowercase().contains(&filter.to_lowercase())
}

/// The form, and the spawns it started (by the name typed).
#[derive(Debug, Default)]
pub(crate) struct Spawns {
    pub(crate) form: Option<SpawnForm>,
    pub(crate) jobs: Vec<(String, JobView)>,
}
