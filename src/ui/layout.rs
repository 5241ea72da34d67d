//! Named breakpoints: which columns fit a given width, least important dropped first.
//!
//! Every row starts with a 3-column prefix (selection marker, state glyph, space) so that even
//! the tiniest pane shows who needs attention: glyph + name.

/// One table column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Col {
    Worker,
    State,
    Connection,
    Report,
    Activity,
    Seen,
    LastActivity,
}

impl Col {
    /// Header text.
    pub fn title(self) -> &'static str {
        match self {
            Col::Worker => "Worker",
            Col::State => "State",
            Col::Connection => "Connection",
            Col::Report => "Report",
            Col::Activity => "Activity",
            Col::Seen => "Seen",
            Col::LastActivity => "Last activity",
        }
    }

    /// Width the column needs (its longest fixed word); flexible columns give their minimum.
    pub fn min_width(self) -> u16 {
        match self {
            Col::Worker => WORKER_MIN,
            Col::State => 7,       // "working" / "waiting" / "offline" / "unknown"
            Col::Connection => 12, // "disconnected"
            Col::Report => 16,     // "ready for review"
            Col::Activity => 8,    // "thinking"
            Col::Seen => 9,        // "59m (old)"
            Col::LastActivity => 13,
        }
    }
}

/// Columns before the worker name: marker, glyph, space.
pub const PREFIX: u16 = 3;
const WORKER_MIN: u16 = 12;
/// The worker column grows to this before `Last activity` takes the rest.
const WORKER_COMFORT: u16 = 24;

/// A named set of columns.
#[derive(Debug, Clone, Copy)]
pub struct Breakpoint {
    pub name: &'static str,
    pub cols: &'static [Col],
}

use Col::*;

/// Widest first; the first that fits the width wins.
pub const BREAKPOINTS: &[Breakpoint] = &[
    Breakpoint {
        name: "full",
        cols: &[
            Worker,
            State,
            Connection,
            Report,
            Activity,
            Seen,
            LastActivity,
        ],
    },
    Breakpoint {
        name: "wide",
        cols: &[Worker, State, Connection, Report, Activity, Seen],
    },
    Breakpoint {
        name: "medium",
        cols: &[Worker, State, Connection, Report, Activity],
    },
    Breakpoint {
        name: "compact",
        cols: &[Worker, State, Connection, Report],
    },
    Breakpoint {
        name: "narrow",
        cols: &[Worker, State, Report],
    },
    Breakpoint {
        name: "slim",
        cols: &[Worker, State],
    },
    Breakpoint {
        name: "tiny",
        cols: &[Worker],
    },
];

impl Breakpoint {
    /// Narrowest width this breakpoint fits in (tiny fits anything).
    pub fn min_width(&self) -> u16 {
        if self.cols.len() == 1 {
            return 0;
        }
        PREFIX + self.cols.iter().map(|c| c.min_width() + 1).sum::<u16>() - 1
    }
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
    pub name: &'static str,
    pub cols: Vec<Placed>,
}

/// Choose the breakpoint for `width` and place its columns.
pub fn fit(width: u16) -> Fitted {
    let bp = BREAKPOINTS
        .iter()
        .find(|b| b.min_width() <= width)
        .unwrap_or(&BREAKPOINTS[BREAKPOINTS.len() - 1]);
    let fixed: u16 = bp
        .cols
        .iter()
        .filter(|c| **c != Worker && **c != LastActivity)
        .map(|c| c.min_width() + 1)
        .sum();
    let flex_total = width.saturating_sub(PREFIX + fixed);
    let has_last = bp.cols.contains(&LastActivity);
    let (worker_w, last_w) = if has_last {
        // Both flexible: the name first up to a comfortable width, then the label.
        let avail = flex_total.saturating_sub(1);
        let last_min = LastActivity.min_width();
        let worker = avail
            .saturating_sub(last_min)
            .min(WORKER_COMFORT.max(avail / 2))
            .max(WORKER_MIN.min(avail));
        (worker, avail.saturating_sub(worker))
    } else {
        (flex_total, 0)
    };
    let mut x = PREFIX;
    let mut cols = Vec::with_capacity(bp.cols.len());
    for &c in bp.cols {
        let w = match c {
            Worker => worker_w,
            LastActivity => last_w,
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
        name: bp.name,
        cols,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn breakpoints_drop_least_important_first() {
        assert_eq!(fit(200).name, "full");
        assert_eq!(fit(120).name, "full");
        assert_eq!(fit(80).name, "wide");
        assert_eq!(fit(40).name, "narrow");
        assert_eq!(fit(20).name, "tiny");
        assert_eq!(fit(0).name, "tiny");
        // Each narrower breakpoint is the previous minus one column.
        for pair in BREAKPOINTS.windows(2) {
            assert_eq!(pair[0].cols.len(), pair[1].cols.len() + 1);
            assert!(pair[0].min_width() > pair[1].min_width());
        }
    }

    #[test]
    fn columns_never_exceed_the_width() {
        for w in 0..=300u16 {
            let f = fit(w);
            let last = f.cols.last().unwrap();
            assert!(
                last.x + last.width <= w.max(PREFIX + f.cols[0].width),
                "width {w}"
            );
            if f.name != "tiny" {
                assert!(f.cols[0].width >= WORKER_MIN, "width {w}");
            }
        }
        let full = fit(120);
        let last = full.cols.last().unwrap();
        assert_eq!(last.x + last.width, 120);
    }
}
