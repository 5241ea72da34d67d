//! The sidebar's spawn form: a worker's name, an optional first task, worktree yes or no. Pure
//! state and keys; what it asks for is run by a `ports::Spawner` in the background (the same
//! guarded `spawn` as the command), and the new row shows in the list when the scan sees it.

use ratatui::text::Line;

use super::compose::Draft;
use super::keys::Key;
use super::ports::SpawnAsk;
use crate::text::{clip, sanitize};

/// The form's fields, in Tab order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Name,
    Task,
    Worktree,
}

/// An open spawn form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpawnForm {
    pub name: Draft,
    pub task: Draft,
    pub worktree: bool,
    pub field: Field,
    /// Why the last Enter started nothing, until the next key.
    pub note: Option<String>,
}

/// What a key did to the form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormKey {
    /// Still open.
    Stay,
    /// Closed without starting anything.
    Cancel,
    /// Closed: start this spawn.
    Submit(SpawnAsk),
}

/// Longest name the form takes (the command's own limit, checked again there).
const NAME_CHARS: usize = 64;

impl Default for SpawnForm {
    fn default() -> Self {
        SpawnForm {
            name: Draft::default(),
            task: Draft::default(),
            worktree: false,
            field: Field::Name,
            note: None,
        }
    }
}

impl SpawnForm {
    pub fn new() -> SpawnForm {
        SpawnForm::default()
    }

    fn draft(&mut self) -> Option<&mut Draft> {
        match self.field {
            Field::Name => Some(&mut self.name),
            Field::Task => Some(&mut self.task),
            Field::Worktree => None,
        }
    }

    fn next(&mut self) {
        self.field = match self.field {
            Field::Name => Field::Task,
            Field::Task => Field::Worktree,
            Field::Worktree => Field::Name,
        };
    }

    fn prev(&mut self) {
        self.field = match self.field {
            Field::Name => Field::Worktree,
            Field::Task => Field::Name,
            Field::Worktree => Field::Task,
        };
    }

    /// Text typed or pasted into the current field (control characters dropped: the name and
    /// the task are refused with them anyway; one line each).
    pub fn type_text(&mut self, s: &str) {
        self.note = None;
        let clean: String = s.chars().filter(|c| !c.is_control()).collect();
        let is_name = self.field == Field::Name;
        let Some(d) = self.draft() else {
            return;
        };
        if is_name && d.text.chars().count() + clean.chars().count() > NAME_CHARS {
            return;
        }
        d.insert(&clean);
    }

    /// One key.
    pub fn key(&mut self, k: Key) -> FormKey {
        self.note = None;
        match k {
            Key::Esc => return FormKey::Cancel,
            Key::Enter => return self.submit(),
            Key::Down | Key::Ctrl('n') => self.next(),
            Key::Up | Key::Ctrl('p') => self.prev(),
            Key::Char(' ') if self.field == Field::Worktree => self.worktree = !self.worktree,
            Key::Char(c) if self.field != Field::Worktree => self.type_text(&c.to_string()),
            Key::Backspace => {
                if let Some(d) = self.draft() {
                    d.delete_back();
                }
            }
            Key::Left => {
                if let Some(d) = self.draft() {
                    d.left();
                }
            }
            Key::Right => {
                if let Some(d) = self.draft() {
                    d.right();
                }
            }
            _ => {}
        }
        FormKey::Stay
    }

    fn submit(&mut self) -> FormKey {
        let name = self.name.text.trim().to_string();
        if name.is_empty() {
            self.note = Some("give the worker a name".into());
            self.field = Field::Name;
            return FormKey::Stay;
        }
        let task = self.task.text.trim();
        FormKey::Submit(SpawnAsk {
            name,
            prompt: (!task.is_empty()).then(|| task.to_string()),
            worktree: self.worktree,
        })
    }

    /// The form's lines for a panel `width` columns wide.
    pub fn lines(&self, width: usize) -> Vec<Line<'static>> {
        let mark = |f: Field| if self.field == f { "›" } else { " " };
        let field = |label: &str, text: &str| clip(&format!("{label}{}", sanitize(text)), width);
        let mut out = vec![
            Line::from("Spawn a worker beside the coordinator"),
            Line::from(field(
                &format!("{} name:       ", mark(Field::Name)),
                &self.name.text,
            )),
            Line::from(field(
                &format!("{} first task: ", mark(Field::Task)),
                &self.task.text,
            )),
            Line::from(format!(
                "{} worktree:   [{}]",
                mark(Field::Worktree),
                if self.worktree { "x" } else { " " }
            )),
            Line::from(clip("⏎ start  ↑↓ field  Space worktree  Esc cancel", width)),
        ];
        if let Some(n) = &self.note {
            out.push(Line::from(clip(&sanitize(n), width)));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(f: &mut SpawnForm, s: &str) {
        for c in s.chars() {
            assert_eq!(f.key(Key::Char(c)), FormKey::Stay);
        }
    }

    #[test]
    fn a_name_a_task_and_the_worktree_box_make_one_request() {
        let mut f = SpawnForm::new();
        assert_eq!(f.key(Key::Enter), FormKey::Stay, "no name yet");
        assert!(f.note.is_some());
        typed(&mut f, "Docs");
        f.key(Key::Down);
        typed(&mut f, "Write the notes");
        f.key(Key::Down);
        f.key(Key::Char(' '));
        assert_eq!(
            f.key(Key::Enter),
            FormKey::Submit(SpawnAsk {
                name: "Docs".into(),
                prompt: Some("Write the notes".into()),
                worktree: true
            })
        );
        let mut g = SpawnForm::new();
        g.type_text("a\u{1b}[2Jb\nc");
        assert_eq!(
            g.name.text, "a[2Jbc",
            "control characters never reach the field"
        );
        g.type_text(&"x".repeat(100));
        assert_eq!(g.name.text, "a[2Jbc", "a name over the limit is not taken");
        assert_eq!(g.key(Key::Esc), FormKey::Cancel);
        let lines = SpawnForm::new().lines(40);
        assert!(lines.iter().all(|l| l.width() <= 40));
    }
}
