//! The Changes column (docs/behaviour.md §11): what each worker changed in git, as the runner's
//! `ChangesSource` last read it (`+120 −8 · 5 files · 2 uncommitted`), and whether a row shares a
//! changed file with another live row of the same repository (flagged on both rows).

use std::collections::{BTreeMap, BTreeSet};

use ratatui::text::{Line, Span};

use crate::snapshot::Row;
use crate::states::BoardState;
use crate::ui::theme::Theme;

/// One worker's changes since its base (committed, uncommitted and untracked together).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RowChanges {
    pub added: u64,
    pub removed: u64,
    pub files: u64,
    /// Files not committed yet (changed, staged or untracked).
    pub uncommitted: u64,
    /// The repository (its common git folder): overlaps are only within one.
    pub repo: String,
    /// The changed files, relative to the checkout's top.
    pub paths: BTreeSet<String>,
}

/// Which workers' changes to read again (the Changes column reads only when asked).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChangesAsk {
    /// Every worker: at start, and when the coordinator's seat moved (a land it ran moves a
    /// worker's base).
    All,
    /// These rows (by id).
    Rows(BTreeSet<String>),
}

/// What a new board asks the Changes column to read again: the workers whose seat moved in a
/// way that can come with a change in git (new, or its state, transcript or close job changed),
/// all of them when the coordinator's did; `None` when nothing did. Rows of other machines are
/// not read here.
pub(crate) fn asks_for(old: &[Row], new: &[Row]) -> Option<ChangesAsk> {
    use crate::snapshot::RowRole;
    let moved = |r: &Row| {
        old.iter().find(|o| o.id == r.id).is_none_or(|o| {
            (o.state, &o.state_reason, o.last_activity, &o.turn)
                != (r.state, &r.state_reason, r.last_activity, &r.turn)
                || (&o.close_job, o.relaunched_at) != (&r.close_job, r.relaunched_at)
        })
    };
    let local = new.iter().filter(|r| r.host.is_none());
    if local
        .clone()
        .any(|r| r.role == RowRole::Coordinator && moved(r))
    {
        return Some(ChangesAsk::All);
    }
    let rows: BTreeSet<String> = local
        .filter(|r| r.role == RowRole::Worker && moved(r))
        .map(|r| r.id.clone())
        .collect();
    (!rows.is_empty()).then_some(ChangesAsk::Rows(rows))
}

/// The review view (`v`) of one worker: summary lines, one line per changed file, the diff
/// (raw text from git: sanitized when drawn).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReviewText {
    pub summary: Vec<String>,
    pub files: Vec<String>,
    pub diff: Vec<String>,
}

/// Where the review view of a row is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReviewState<'a> {
    Loading,
    /// No git checkout (or it could not be read).
    Nothing,
    Ready(&'a ReviewText),
}

/// The last read, by row id (a worker's session id), and the review view's row.
#[derive(Debug, Default)]
pub(crate) struct Changes {
    by_row: BTreeMap<String, RowChanges>,
    /// The row the review view was asked for, and what arrived (`None`: still loading).
    review: Option<(String, Option<Option<ReviewText>>)>,
}

impl Changes {
    /// Whether the review view holds (or waits for) this row's review.
    pub(crate) fn is_for(&self, id: &str) -> bool {
        self.review.as_ref().is_some_and(|(r, _)| r == id)
    }

    pub(crate) fn loading(&mut self, id: &str) {
        self.review = Some((id.to_string(), None));
    }

    /// A review arrived: kept only when it is the one the view still waits for.
    pub(crate) fn arrived(&mut self, id: String, review: Option<ReviewText>) {
        if self.review.as_ref().is_some_and(|(r, _)| *r == id) {
            self.review = Some((id, Some(review)));
        }
    }

    pub(crate) fn review_of(&self, id: &str) -> ReviewState<'_> {
        match &self.review {
            Some((r, Some(Some(text)))) if r == id => ReviewState::Ready(text),
            Some((r, Some(None))) if r == id => ReviewState::Nothing,
            _ => ReviewState::Loading,
        }
    }

    pub(crate) fn set(&mut self, by_row: BTreeMap<String, RowChanges>) {
        self.by_row = by_row;
    }

    pub(crate) fn of(&self, id: &str) -> Option<&RowChanges> {
        self.by_row.get(id).filter(|c| c.files > 0)
    }

    /// Whether any of `rows` has changes to show (the column shows only then).
    pub(crate) fn any(&self, rows: &[Row]) -> bool {
        rows.iter().any(|r| self.of(&r.id).is_some())
    }

    /// Whether `row` (live) and another live row of its repository changed a same file.
    pub(crate) fn overlaps(&self, row: &Row, rows: &[Row]) -> bool {
        let live = |r: &Row| r.state != BoardState::Offline;
        let Some(mine) = self.of(&row.id).filter(|_| live(row)) else {
            return false;
        };
        rows.iter()
            .filter(|o| o.id != row.id && live(o))
            .filter_map(|o| self.of(&o.id))
            .any(|c| c.repo == mine.repo && !c.paths.is_disjoint(&mine.paths))
    }
}

/// The review view's lines: a title, the summary, the files, then the diff coloured by line.
pub(crate) fn review_lines(state: ReviewState<'_>, name: &str, t: &Theme) -> Vec<Line<'static>> {
    let clean = |s: &str| crate::text::sanitize(s);
    let mut out = vec![Line::from(Span::styled(
        format!("Review: {} (v closes, PgUp/PgDn scroll)", clean(name)),
        t.header(),
    ))];
    let r = match state {
        ReviewState::Loading => {
            out.push(Line::from(Span::styled("reading git…", t.dim())));
            return out;
        }
        ReviewState::Nothing => {
            out.push(Line::from(Span::styled(
                "nothing to review: no git checkout",
                t.dim(),
            )));
            return out;
        }
        ReviewState::Ready(r) => r,
    };
    out.extend(r.summary.iter().map(|l| Line::from(clean(l))));
    if !r.files.is_empty() {
        out.push(Line::from(Span::styled("Files", t.header())));
        out.extend(
            r.files
                .iter()
                .map(|l| Line::from(format!("  {}", clean(l)))),
        );
    }
    if !r.diff.is_empty() {
        out.push(Line::from(Span::styled("Diff", t.header())));
    }
    for l in &r.diff {
        let style = if l.starts_with("+++") || l.starts_with("---") || l.starts_with("diff ") {
            t.header()
        } else if l.starts_with('+') {
            t.state(BoardState::Working)
        } else if l.starts_with('-') {
            t.state(BoardState::Error)
        } else if l.starts_with("@@") {
            t.report(crate::states::ReportStatus::ReadyForReview)
        } else {
            ratatui::style::Style::default()
        };
        out.push(Line::from(Span::styled(clean(l), style)));
    }
    out
}

/// The cell: the longest form that fits `width` (the overlap mark first, so it is never cut).
pub(crate) fn cell(c: &RowChanges, overlap: bool, width: u16) -> String {
    let mark = if overlap { "⚠ " } else { "" };
    let lines = format!("+{} −{}", c.added, c.removed);
    let (files, fshort) = (format!("{} files", c.files), format!("{}f", c.files));
    let forms = if c.uncommitted > 0 {
        vec![
            format!("{mark}{lines} · {files} · {} uncommitted", c.uncommitted),
            format!("{mark}{lines} · {fshort} · {}u", c.uncommitted),
        ]
    } else {
        vec![
            format!("{mark}{lines} · {files}"),
            format!("{mark}{lines} · {fshort}"),
        ]
    };
    let fits = |s: &String| crate::text::width(s) <= width as usize;
    forms
        .iter()
        .find(|s| fits(s))
        .or(forms.last())
        .cloned()
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ch(paths: &[&str], repo: &str) -> RowChanges {
        RowChanges {
            added: 120,
            removed: 8,
            files: paths.len() as u64,
            uncommitted: 2,
            repo: repo.into(),
            paths: paths.iter().map(|p| p.to_string()).collect(),
        }
    }

    #[test]
    fn the_cell_takes_the_longest_form_that_fits() {
        let c = ch(&["a", "b", "c", "d", "e"], "/r");
        assert_eq!(cell(&c, false, 40), "+120 −8 · 5 files · 2 uncommitted");
        assert_eq!(cell(&c, false, 20), "+120 −8 · 5f · 2u");
        assert_eq!(cell(&c, true, 20), "⚠ +120 −8 · 5f · 2u");
        let clean = RowChanges {
            uncommitted: 0,
            ..c
        };
        assert_eq!(cell(&clean, false, 40), "+120 −8 · 5 files");
    }

    /// A new board asks for the workers whose seat moved (new, state, transcript), all of them
    /// when the coordinator's moved, and nothing when only other fields or other hosts moved.
    #[test]
    fn a_new_board_asks_for_the_workers_that_moved() {
        use crate::snapshot::RowRole;
        let row = |i: usize, id: &str, role: RowRole| {
            let mut r = crate::ui::demo::demo_row(i, 0, 0);
            r.id = id.into();
            r.role = role;
            r.host = None;
            r
        };
        let old = vec![
            row(0, "C", RowRole::Coordinator),
            row(1, "A", RowRole::Worker),
            row(2, "B", RowRole::Worker),
        ];
        let ask = |ids: &[&str]| ChangesAsk::Rows(ids.iter().map(|s| s.to_string()).collect());
        assert_eq!(asks_for(&old, &old), None, "nothing moved");
        let mut new = old.clone();
        new[1].model = Some("other".into());
        new[2].seen = !new[2].seen;
        assert_eq!(asks_for(&old, &new), None, "nothing git can follow moved");
        new[1].last_activity = Some(new[1].last_activity.unwrap_or(0) + 1);
        new.push(row(3, "D", RowRole::Worker));
        assert_eq!(asks_for(&old, &new), Some(ask(&["A", "D"])));
        let mut far = row(4, "E", RowRole::Worker);
        far.host = Some(crate::snapshot::RowHost {
            name: "b".into(),
            key: "p/E".into(),
            session_id: None,
            answering: true,
            answered_at: 0,
        });
        let mut gone = old.clone();
        gone[2].state = match gone[2].state {
            BoardState::Offline => BoardState::Idle,
            _ => BoardState::Offline,
        };
        gone.push(far);
        assert_eq!(
            asks_for(&old, &gone),
            Some(ask(&["B"])),
            "another host's row"
        );
        let mut coord = old.clone();
        coord[0].turn = Some("entry:x".into());
        assert_eq!(asks_for(&old, &coord), Some(ChangesAsk::All));
    }

    #[test]
    fn overlaps_need_two_live_rows_of_one_repository_and_a_shared_file() {
        let row = |i: usize, id: &str| {
            let mut r = crate::ui::demo::demo_row(i, 0, 0);
            r.id = id.into();
            r.state = BoardState::Idle;
            r
        };
        let (a, b, c, d) = (row(0, "A"), row(1, "B"), row(2, "C"), row(3, "D"));
        let mut off = row(4, "E");
        off.state = BoardState::Offline;
        let mut m = Changes::default();
        m.set(BTreeMap::from([
            (a.id.clone(), ch(&["x", "y"], "/r")),
            (b.id.clone(), ch(&["y"], "/r")),
            (c.id.clone(), ch(&["x"], "/s")),
            (d.id.clone(), ch(&["z"], "/r")),
            (off.id.clone(), ch(&["z"], "/r")),
        ]));
        let rows = vec![a.clone(), b.clone(), c.clone(), d.clone(), off];
        assert!(m.overlaps(&a, &rows) && m.overlaps(&b, &rows));
        assert!(!m.overlaps(&c, &rows), "another repository");
        assert!(!m.overlaps(&d, &rows), "only an offline row shares z");
        assert!(m.any(&rows));
    }
}
