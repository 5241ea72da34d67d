//! The preview panel (`p`): the selected worker's recent conversation as its session file has
//! it — the newest user text, the newest reply, what it asks, the tool it runs and for how
//! long. Read-only; it comes from the same pass as the row (no screen is read, nothing is
//! typed). Scrolls like the details.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::clock::{short_age, Ms};
use crate::snapshot::{Row, RunningTool};
use crate::states::BoardState;
use crate::ui::app::App;
use crate::ui::fit::{age_secs, clean, is_future, name_of, wrap_text};
use crate::ui::theme::{self, Theme};

/// Lines each part of the conversation may take.
const PART_LINES: usize = 12;

/// `bash for 12s` (or `a tool` when the name was not read).
pub(crate) fn running_text(run: &RunningTool, now: Ms) -> String {
    let name = run
        .name
        .as_deref()
        .map(clean)
        .unwrap_or_else(|| "a tool".into());
    match run.since {
        Some(at) if !is_future(now, at) => format!("{name} for {}", short_age(age_secs(now, at))),
        _ => name,
    }
}

/// The preview as screen lines for a given width (title first).
pub(crate) fn preview_lines(app: &App, row: &Row, width: u16, t: &Theme) -> Vec<Line<'static>> {
    let w = (width as usize).max(1);
    let mut out = vec![Line::from(Span::styled(
        format!(
            "Preview · {} · {} (from its session file, read-only)",
            name_of(row),
            row.state.as_str()
        ),
        t.header(),
    ))];
    let mut part = |title: &str, text: &str, style: Style| {
        out.push(Line::from(Span::styled(title.to_string(), t.dim())));
        for l in wrap_text(text, w.saturating_sub(2).max(1), PART_LINES) {
            out.push(Line::from(Span::styled(format!("  {l}"), style)));
        }
    };
    let mut any = false;
    if let Some(u) = &row.last_user_text {
        part("You (newest message):", u, Style::default());
        any = true;
    }
    if let Some(a) = &row.last_assistant_text {
        part("pi (newest reply):", a, Style::default());
        any = true;
    }
    if let Some(q) = &row.question {
        part("It asks:", q, t.state(BoardState::Waiting));
        any = true;
    }
    if let Some(run) = &row.running_tool {
        part(
            "Running now:",
            &running_text(run, app.now()),
            t.state(BoardState::Working),
        );
        any = true;
    }
    if let Some(e) = &row.last_error {
        part("Error:", e, t.state(BoardState::Error));
        any = true;
    }
    if !any {
        out.push(Line::from(Span::styled(
            "Nothing read from its session file yet (no file, or no messages in the newest \
             entries read)."
                .to_string(),
            t.dim(),
        )));
    }
    out.push(Line::from(Span::styled(
        format!(
            "{} {} — {}",
            theme::glyph(row.state),
            row.state.as_str(),
            row.state_reason.words()
        ),
        t.state(row.state),
    )));
    out
}
