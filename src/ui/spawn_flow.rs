//! The part of `App::update` for the spawn form: `+` opens it, its keys go to it, Enter starts
//! the spawn in the background (the runner's `Spawner`, the command's own guarded code), and
//! its stages and outcome show in the status line and, once a scan lists the new worker, on its
//! row and in its details, as a close or resume from the list does.

use crate::ui::app::{App, Effect};
use crate::ui::keys::Key;
use crate::ui::ports::{SpawnAsk, WorkerAction, WorkerOutcome};
use crate::ui::spawn_form::{FormKey, SpawnForm};
use crate::ui::state::JobView;

/// Spawns remembered (running or finished); the oldest finished go first.
const MAX_SPAWNS: usize = 32;

fn clean(s: &str) -> String {
    crate::text::one_line(&crate::text::sanitize(s), 160)
}

impl App {
    /// The open spawn form, if any.
    pub fn spawn_form(&self) -> Option<&SpawnForm> {
        self.spawn.form.as_ref()
    }

    /// `+`: open the form (or say why this sidebar cannot spawn).
    pub(super) fn open_spawn(&mut self) {
        if let Some(why) = self.spawn_unavailable() {
            self.notice = Some(format!("cannot spawn from here: {why}"));
            return;
        }
        self.spawn.form = Some(SpawnForm::new());
    }

    pub(super) fn spawn_key(&mut self, key: Key, fx: &mut Vec<Effect>) {
        let Some(form) = &mut self.spawn.form else {
            return;
        };
        match form.key(key) {
            FormKey::Stay => {}
            FormKey::Cancel => self.spawn.form = None,
            FormKey::Submit(ask) => self.start_spawn(ask, fx),
        }
    }

    /// A paste goes into the form's current field (one line; control characters dropped).
    pub(super) fn spawn_paste(&mut self, text: &str) {
        if let Some(form) = &mut self.spawn.form {
            form.type_text(text);
        }
    }

    fn start_spawn(&mut self, ask: SpawnAsk, fx: &mut Vec<Effect>) {
        let key = ask.name.to_lowercase();
        if self
            .spawn
            .jobs
            .iter()
            .any(|(n, j)| n.to_lowercase() == key && j.outcome.is_none())
        {
            if let Some(f) = &mut self.spawn.form {
                f.note = Some("a spawn of that name is already running".into());
            }
            return;
        }
        self.spawn.form = None;
        if self.spawn.jobs.len() >= MAX_SPAWNS {
            if let Some(i) = self
                .spawn
                .jobs
                .iter()
                .position(|(_, j)| j.outcome.is_some())
            {
                self.spawn.jobs.remove(i);
            }
        }
        let name = clean(&ask.name);
        self.spawn.jobs.push((
            ask.name.clone(),
            JobView {
                action: WorkerAction::Spawn,
                name: name.clone(),
                stage: "starting".into(),
                started: self.now(),
                outcome: None,
                finished: None,
            },
        ));
        self.message = Some(format!("spawn {name}: starting"));
        fx.push(Effect::Spawn(ask));
    }

    fn spawn_job_mut(&mut self, name: &str) -> Option<&mut JobView> {
        self.spawn
            .jobs
            .iter_mut()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, j)| j)
    }

    pub(super) fn on_spawn_stage(&mut self, name: &str, stage: &str) {
        let stage = clean(stage);
        if let Some(j) = self.spawn_job_mut(name) {
            if j.outcome.is_none() {
                j.stage = stage.clone();
            }
        }
        self.message = Some(format!("spawn {}: {stage}", clean(name)));
    }

    pub(super) fn on_spawn_finished(&mut self, name: &str, outcome: WorkerOutcome) {
        let now = self.now();
        self.message = Some(format!(
            "spawn {}: {} — {}",
            clean(name),
            clean(&outcome.result),
            clean(&outcome.detail)
        ));
        if let Some(j) = self.spawn_job_mut(name) {
            j.outcome = Some(outcome);
            j.finished = Some(now);
        }
    }

    /// The spawn job of the row's worker (matched by its configured name), if one was started.
    pub(crate) fn spawn_job_of(&self, row_id: &str) -> Option<&JobView> {
        let name = self.snapshot()?.row(row_id)?.name.to_lowercase();
        self.spawn
            .jobs
            .iter()
            .rev()
            .find(|(n, _)| n.to_lowercase() == name)
            .map(|(_, j)| j)
    }
}
