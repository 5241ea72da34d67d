//! Which columns the list shows: only those with a source on this setup, and of those the most
//! important that fit the width.
//!
//! Every row starts with a 3-column prefix (selection marker, state glyph, space) so that even
//! the tiniest pane shows who needs attention: glyph + name.

use crate::snapshot::Row;
use crate::states::ConnState;

/// The sidebar's usable minimum height: title, column header, 3 rows, the line that says how
/// many more there are, and the key line. ensure-monitor places the sidebar at least this tall,
/// and the sidebar asks for it again when its terminal shrinks below it.
pub(crate) const MIN_HEIGHT: u16 = 7;

/// One table column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Col {
    Worker,
    State,
    /// What the seat asks, its error, the tool it runs, or why it is offline/unknown.
    Detail,
    Report,
    Connection,
    Activity,
    /// How old the Intercom observation is (not the person's Seen mark).
    Observed,
    LastActivity,
    /// What the worker changed in git (docs/behaviour.md §11).
    Changes,
}

impl Col {
    /// Header text.
    pub fn title(self) -> &'static str {
        match self {
            Col::Worker => "Worker",
            Col::State => "State",
            Col::Detail => "Detail",
            Col::Report => "Report",
            Col::Connection => "Connection",
            Col::Activity => "Activity",
            Col::Observed => "Observed",
            Col::LastActivity => "Last activity",
            Col::Changes => "Changes",
        }
    }

    /// Width the column needs (its longest fixed word); flexible columns give their minimum.
    pub fn min_width(self) -> u16 {
        match self {
            Col::Worker => WORKER_MIN,
            Col::State => 7,         // "working" / "waiting" / "offline" / "unknown"
            Col::Detail => 16,       // flexible: takes what is left
            Col::Report => 16,       // "ready for review"
            Col::Connection => 12,   // "disconnected"
            Col::Activity => 9,      // "thinking" + a mark when it differs from State
            Col::Observed => 9,      // "59m (old)"
            Col::LastActivity => 17, // "Waiting for input"
            Col::Changes => 20,      // "⚠ +1200 −80 · 50f · 3u"
        }
    }
}

/// Columns before the worker name: marker, glyph, space.
pub(crate) const PREFIX: u16 = 3;
const WORKER_MIN: u16 = 12;
/// The worker column grows to this before `Detail` takes the rest.
const WORKER_COMFORT: u16 = 24;
/// The detail keeps at least 1/`DETAIL_SHARE` of the width before other columns show.
const DETAIL_SHARE: u16 = 3;

use Col::*;

/// Most important first: when the width is short, columns drop from the end.
pub(crate) const IMPORTANCE: [Col; 9] = [
    Worker,
    State,
    Detail,
    Report,
    Connection,
    Changes,
    Activity,
    Observed,
    LastActivity,
];

/// Left to right on screen.
const ORDER: [Col; 9] = [
    Worker,
    State,
    Changes,
    Report,
    Connection,
    Activity,
    Observed,
    LastActivity,
    Detail,
];

/// The columns that have a source in these rows: Report only when some worker reported,
/// Connection only when Intercom is in use (a worker's health check answered, or observation
/// logs exist), Activity, Observed and Last activity only when observation logs exist.
pub fn with_source(rows: &[Row]) -> Vec<Col> {
    // Intercom workers always carry an activity; only one with an observation has a source.
    let observed = rows
        .iter()
        .any(|r| r.activity.as_ref().is_some_and(|a| a.observed_at.is_some()));
    let connected = rows
        .iter()
        .any(|r| r.connection.state == ConnState::Connected);
    let reported = rows.iter().any(|r| r.report.is_some());
    IMPORTANCE
        .into_iter()
        .filter(|c| match c {
            Worker | State | Detail => true,
            // Added by the list when the Changes source has something for a shown row.
            Changes => false,
            Report => reported,
            Connection => observed || connected,
            Activity | Observed | LastActivity => observed,
        })
        .collect()
}

/// A column placed on screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placed {
    pub col: Col,
    pub x: u16,
    pub width: u16,
}

/// The columns for one width.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fitted {
    /// Only the worker's name fits (no header line then).
    pub tiny: bool,
    pub cols: Vec<Placed>,
}

/// Width the columns need, the detail given `detail` (its share of the width).
fn min_total(cols: &[Col], detail: u16) -> u16 {
    let need = |c: &Col| match c {
        Detail => detail,
        other => other.min_width(),
    };
    PREFIX + cols.iter().map(|c| need(c) + 1).sum::<u16>() - 1
}

/// Choose the most important of `shown` that fit `width`, and place them. The detail (what a
/// worker asks, its error) is what a person reads: less important columns drop before it gets
/// less than `DETAIL_SHARE` of the width.
pub fn fit(width: u16, shown: &[Col]) -> Fitted {
    let mut keep: Vec<Col> = IMPORTANCE
        .into_iter()
        .filter(|c| *c == Worker || shown.contains(c))
        .collect();
    let detail = Detail.min_width().max(width / DETAIL_SHARE);
    while keep.len() > 3 && min_total(&keep, detail) > width {
        keep.pop();
    }
    while keep.len() > 1 && min_total(&keep, Detail.min_width()) > width {
        keep.pop();
    }
    let fixed: u16 = keep
        .iter()
        .filter(|c| **c != Worker && **c != Detail)
        .map(|c| c.min_width() + 1)
        .sum();
    let flex = width.saturating_sub(PREFIX + fixed);
    let (worker_w, detail_w) = if keep.contains(&Detail) {
        // Both flexible: the name first up to a comfortable width, then the detail.
        let avail = flex.saturating_sub(1);
        let worker = avail
            .saturating_sub(detail)
            .min(WORKER_COMFORT)
            .max(WORKER_MIN.min(avail));
        (worker, avail.saturating_sub(worker))
    } else {
        (flex, 0)
    };
    let mut x = PREFIX;
    let mut cols = Vec::with_capacity(keep.len());
    for c in ORDER.into_iter().filter(|c| keep.contains(c)) {
        let w = match c {
            Worker => worker_w,
            Detail => detail_w,
            other => other.min_width(),
        };
        cols.push(Placed {
            col: c,
            x,
            width: w,
        });
        x = x.saturating_add(w).saturating_add(1);
    }
    Fitted {
        tiny: keep.len() == 1,
        cols,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(f: &Fitted) -> Vec<Col> {
        f.cols.iter().map(|p| p.col).collect()
    }

    #[test]
    fn least_important_columns_drop_first_and_sourceless_ones_never_show() {
        let all = IMPORTANCE.to_vec();
        assert_eq!(names(&fit(200, &all)), ORDER.to_vec());
        let d = fit(200, &all)
            .cols
            .into_iter()
            .find(|p| p.col == Detail)
            .unwrap();
        assert!(d.width >= 200 / DETAIL_SHARE, "{d:?}");
        let at80 = names(&fit(80, &all));
        assert_eq!(at80, vec![Worker, State, Report, Connection, Detail]);
        assert_eq!(
            names(&fit(120, &all)),
            vec![Worker, State, Changes, Report, Connection, Detail]
        );
        // Without the Changes column (no worker changed anything in git), as before it.
        let no_changes: Vec<Col> = all.iter().copied().filter(|c| *c != Changes).collect();
        assert_eq!(
            names(&fit(120, &no_changes)),
            vec![Worker, State, Report, Connection, Activity, Observed, Detail]
        );
        assert_eq!(names(&fit(40, &all)), vec![Worker, State, Detail]);
        assert!(fit(20, &all).tiny && fit(0, &all).tiny);
        // No Intercom: worker, state and detail only, whatever the width.
        let plain = vec![Worker, State, Detail];
        assert_eq!(names(&fit(200, &plain)), plain);
        let w = fit(200, &plain);
        assert_eq!(w.cols[0].width, WORKER_COMFORT);
    }

    #[test]
    fn columns_never_exceed_the_width() {
        for shown in [IMPORTANCE.to_vec(), vec![Worker, State, Detail]] {
            for w in 0..=300u16 {
                let f = fit(w, &shown);
                let last = f.cols.last().unwrap();
                assert!(
                    last.x + last.width <= w.max(PREFIX + f.cols[0].width),
                    "width {w}"
                );
                if !f.tiny {
                    assert!(f.cols[0].width >= WORKER_MIN, "width {w}");
                }
            }
        }
        let full = fit(160, &IMPORTANCE);
        let last = full.cols.last().unwrap();
        assert_eq!(last.x + last.width, 160);
        assert_eq!(full.cols.len(), 8);
    }
}
