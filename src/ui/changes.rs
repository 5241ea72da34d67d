//! The Changes column (docs/behaviour.md §11): what each worker changed in git, as the runner's
//! `ChangesSource` last read it (`+120 −8 · 5 files · 2 uncommitted`), and whether a row shares a
//! changed file with another live row of the same repository (flagged on both rows).

use std::collections::{BTreeMap, BTreeSet};

use crate::snapshot::Row;
use crate::states::BoardState;

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

/// The last read, by row id (a worker's session id).
#[derive(Debug, Default)]
pub(crate) struct Changes {
    by_row: BTreeMap<String, RowChanges>,
}

impl Changes {
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
