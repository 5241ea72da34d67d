//! The read-only details panel of one row.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::snapshot::{BoardState, ReplyPath, Row, RowRole};
use crate::ui::app::App;
use crate::ui::fit::{age_text, cell, clean, name_of, wrap};
use crate::ui::reply_box::receipt_line;
use crate::ui::theme::{self, Theme};

/// Details fields, most useful first: when the pane is short the tail is cut, not the head.
const DETAIL_ORDER: &[&str] = &[
    // What the user just did comes first, so a short pane shows it without scrolling.
    "Last reply",
    "Seat",
    "Responsibility",
    "State",
    "Last error",
    "Connection",
    "Activity",
    "Report",
    "Reply",
    "Handoff",
    "Close",
    "Resume",
    "Task",
    "Workspace",
    "Model",
    "Last activity",
    "Relaunched",
    "Seen",
];

/// The details panel as screen lines for a given width (title first).
pub(crate) fn detail_lines(app: &App, row: &Row, width: u16, t: &Theme) -> Vec<Line<'static>> {
    let now = app.now();
    let mut lines: Vec<(String, String, Style)> = Vec::new();
    let mut add = |label: &str, value: String, style: Style| {
        lines.push((label.to_string(), value, style));
    };
    let role = match row.role {
        RowRole::Coordinator => "coordinator",
        RowRole::Worker => "worker",
        RowRole::Seat => "seat",
        RowRole::Connector => "connector",
    };
    add(
        "Seat",
        format!("{role} · project {}", clean(&row.project)),
        Style::default(),
    );
    if let Some(resp) = &row.responsibility {
        add("Responsibility", clean(resp), Style::default());
    }
    let why = format!("{} ({}", row.state_reason.words(), row.state_reason);
    add(
        "State",
        format!(
            "{} {} — {why}; source: {})",
            theme::glyph(row.state),
            row.state.as_str(),
            clean(&row.state_source.to_string())
        ),
        t.state(row.state),
    );
    let checked = match row.connection.checked_at {
        Some(at) => format!("checked {}", age_text(now, at)),
        None => "never checked".to_string(),
    };
    add(
        "Connection",
        format!(
            "{} — {}, {checked}",
            row.connection.state.as_str(),
            clean(&row.connection.reason)
        ),
        t.conn(row.connection.state),
    );
    match &row.activity {
        Some(a) => {
            let when = a
                .observed_at
                .map(|at| age_text(now, at))
                .unwrap_or_else(|| "time unknown".into());
            add(
                "Activity",
                format!(
                    "{} — {}, {when} (evidence: {})",
                    clean(&a.status),
                    clean(&a.label),
                    clean(&a.evidence)
                ),
                Style::default(),
            );
        }
        None => add("Activity", "unknown (no observation)".into(), t.dim()),
    }
    match &row.report {
        Some(rep) => add(
            "Report",
            format!(
                "{}, {} — {}",
                theme::report_word(&rep.status)
                    .map(str::to_string)
                    .unwrap_or_else(|| clean(&rep.status)),
                age_text(now, rep.updated_at),
                clean(&rep.summary)
            ),
            t.report(&rep.status),
        ),
        None => add("Report", "none".into(), t.dim()),
    }
    if let Some(hd) = &row.handoff {
        add(
            "Handoff",
            format!(
                "saved {} (job {})",
                age_text(now, hd.updated_at),
                clean(&hd.job_id)
            ),
            Style::default(),
        );
    }
    if let Some(cj) = &row.close_job {
        let reason = cj
            .reason
            .as_deref()
            .map(|r| format!(" ({})", clean(r)))
            .unwrap_or_default();
        add(
            "Close",
            format!(
                "{}{reason}, {} (job {})",
                clean(&cj.state),
                age_text(now, cj.updated_at),
                clean(&cj.job_id)
            ),
            Style::default(),
        );
        // A closed worker comes back with its saved session, name and responsibility, and only
        // on a person's word that it is closed.
        if cj.state == "closed" && row.state == BoardState::Offline {
            add(
                "Resume",
                format!(
                    "intercom-pane resume-worker {} --confirm-closed",
                    crate::text::shell_quote(&clean(&row.name))
                ),
                Style::default(),
            );
        }
    }
    let task = match (&row.task, &row.task_source) {
        (Some(task), Some(src)) => format!("{} (source: {})", clean(task), clean(src)),
        (Some(task), None) => clean(task),
        (None, _) => "unknown".into(),
    };
    add("Task", task, Style::default());
    add(
        "Workspace",
        row.workspace
            .as_deref()
            .map(clean)
            .unwrap_or_else(|| "unknown".into()),
        Style::default(),
    );
    let model = match (&row.model, &row.provider) {
        (Some(m), Some(p)) => format!("{} ({})", clean(m), clean(p)),
        (Some(m), None) => clean(m),
        (None, Some(p)) => format!("unknown ({})", clean(p)),
        (None, None) => "unknown".into(),
    };
    add("Model", model, Style::default());
    if let Some(at) = row.last_activity {
        add("Last activity", age_text(now, at), Style::default());
    }
    if let Some(at) = row.relaunched_at {
        add("Relaunched", age_text(now, at), Style::default());
    }
    if let Some(e) = &row.last_error {
        add(
            "Last error",
            clean(e),
            t.state(crate::snapshot::BoardState::Error),
        );
    }
    let seen = if app.is_seen(row) { "yes" } else { "no" };
    add("Seen", seen.into(), Style::default());
    let reply = match &row.reply {
        ReplyPath::Available { target } => format!("to {} (r)", clean(target)),
        ReplyPath::Unavailable { reason } => format!("unavailable: {}", clean(reason)),
    };
    add("Reply", reply, Style::default());
    if let Some((text, warn)) = receipt_line(app, &row.id) {
        let style = if warn { t.warn() } else { Style::default() };
        add("Last reply", text, style);
    }

    lines.sort_by_key(|(label, _, _)| {
        DETAIL_ORDER
            .iter()
            .position(|l| l == label)
            .unwrap_or(DETAIL_ORDER.len())
    });
    let title = format!("Details · {}", name_of(row));
    let mut out = vec![Line::from(Span::styled(title, t.header()))];
    let label_w = if width >= 40 { 15 } else { 0 };
    let value_w = (width as usize).saturating_sub(label_w).max(1);
    for (label, value, style) in lines {
        if label_w == 0 {
            // Narrow: `Label: value` clipped on one line.
            out.push(Line::from(Span::styled(format!("{label}: {value}"), style)));
            continue;
        }
        // Long values wrap onto up to three lines.
        for (i, part) in wrap(&value, value_w, 3).into_iter().enumerate() {
            let lab = if i == 0 {
                cell(&label, label_w as u16)
            } else {
                " ".repeat(label_w)
            };
            out.push(Line::from(vec![
                Span::styled(lab, t.dim()),
                Span::styled(part, style),
            ]));
        }
    }
    out
}

/// Draw details lines into `r`, the title pinned and the rest scrolled by `scroll` lines
/// (clamped); lines cut above or below are counted on screen, never silently dropped.
pub(crate) fn draw_details(
    lines: &[Line<'static>],
    scroll: usize,
    buf: &mut Buffer,
    r: Rect,
    t: &Theme,
) {
    let Some((title, body)) = lines.split_first() else {
        return;
    };
    if r.height == 0 {
        return;
    }
    buf.set_line(r.x, r.y, title, r.width);
    let cap = r.height as usize - 1;
    if cap == 0 {
        return;
    }
    let scroll = scroll.min(body.len().saturating_sub(cap));
    let below = body.len().saturating_sub(scroll + cap);
    for (i, line) in body.iter().skip(scroll).take(cap).enumerate() {
        let y = r.y + 1 + i as u16;
        // With a single line there is no room for a note: the line itself is worth more.
        let note = if cap == 1 {
            None
        } else if i == 0 && scroll > 0 {
            Some(format!("… {scroll} lines above (PgUp)"))
        } else if i + 1 == cap && below > 0 {
            Some(format!("… {} more lines (PgDn)", below + 1))
        } else {
            None
        };
        match note {
            Some(text) => {
                buf.set_line(r.x, y, &Line::from(Span::styled(text, t.dim())), r.width);
            }
            None => {
                buf.set_line(r.x, y, line, r.width);
            }
        }
    }
}
