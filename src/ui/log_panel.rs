//! The timeline panel (`l`): the selected worker's turns, tool calls, questions and answers as
//! `intercom-pane log NAME` prints them (read off the UI thread through the `TimelineReader`),
//! newest last; it opens scrolled to the end and scrolls like the details.

use ratatui::text::{Line, Span};

use crate::snapshot::Row;
use crate::ui::fit::{clean, wrap_text};
use crate::ui::state::TimelinePanel;
use crate::ui::theme::Theme;

/// Lines one entry may take when wrapped.
const ENTRY_LINES: usize = 4;

/// The panel as screen lines for a given width (title first).
pub(crate) fn timeline_lines(
    p: &TimelinePanel,
    row: &Row,
    width: u16,
    t: &Theme,
) -> Vec<Line<'static>> {
    let w = (width as usize).max(1);
    let mut out = vec![Line::from(Span::styled(
        format!("Timeline · {} (from its session file, newest last)", p.name),
        t.header(),
    ))];
    if row.id != p.row_id {
        out.push(Line::from(Span::styled(
            "another worker is selected: l twice shows its timeline".to_string(),
            t.dim(),
        )));
    }
    match &p.lines {
        None => out.push(Line::from(Span::styled("reading…".to_string(), t.dim()))),
        Some(Err(why)) => out.push(Line::from(Span::styled(
            format!("no timeline: {}", clean(&why.to_string())),
            t.dim(),
        ))),
        Some(Ok(lines)) => {
            for l in lines {
                for (i, part) in wrap_text(&clean(l), w.saturating_sub(2).max(1), ENTRY_LINES)
                    .into_iter()
                    .enumerate()
                {
                    let indent = if i == 0 { "" } else { "  " };
                    out.push(Line::from(format!("{indent}{part}")));
                }
            }
        }
    }
    out
}
