//! The read-only details panel of one row.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::snapshot::{ReplyPath, Row, RowRole};
use crate::states::{BoardState, CloseState};
use crate::ui::app::App;
use crate::ui::fit::{age_text, cell, clean, name_of, wrap, wrap_text};
use crate::ui::reply_box::receipt_line;
use crate::ui::theme::{self, Theme};

/// Details fields, most useful first: when the pane is short the tail is cut, not the head.
const DETAIL_ORDER: &[&str] = &[
    // What the user just did comes first, so a short pane shows it without scrolling.
    "Last reply",
    "Job",
    // Then what the worker waits for.
    "Asks",
    "Last error",
    "Running",
    "Seat",
    "Responsibility",
    "State",
    "Why",
    "Differs",
    "Pane",
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
    "Usage",
    "Context",
    "Last activity",
    "Relaunched",
    "Seen mark",
];

/// Fields whose value is raw multi-line text, shown with its line breaks on up to this many
/// lines (other values are one sanitized line wrapped onto up to 3).
const MULTI_LINE: &[(&str, usize)] = &[("Asks", 10)];

/// One details field: its label (one of `DETAIL_ORDER`), its text, its style.
pub(crate) type Field = (&'static str, String, Style);

/// The details panel as screen lines for a given width (title first).
pub(crate) fn detail_lines(app: &App, row: &Row, width: u16, t: &Theme) -> Vec<Line<'static>> {
    let mut fields = seat_fields(row, app.now(), t);
    fields.extend(intercom_fields(app, row, t));
    fields.extend(session_fields(app, row, t));
    fields.extend(cockpit_fields(app, row, t));
    fields.sort_by_key(|(label, _, _)| {
        DETAIL_ORDER
            .iter()
            .position(|l| l == label)
            .unwrap_or(DETAIL_ORDER.len())
    });
    lay_out(fields, format!("Details · {}", name_of(row)), width, t)
}

/// The open panel's lines: the preview (`p`) or the details (`d`).
pub(crate) fn panel_lines(app: &App, row: &Row, width: u16, t: &Theme) -> Vec<Line<'static>> {
    if app.review_open() {
        crate::ui::changes::review_lines(app.review_of(&row.id), &row.name, t)
    } else if let Some(p) = app.timeline_panel() {
        crate::ui::log_panel::timeline_lines(p, row, width, t)
    } else if app.preview_open() {
        crate::ui::preview::preview_lines(app, row, width, t)
    } else {
        detail_lines(app, row, width, t)
    }
}

/// What the seat asks, runs, where ⏎ goes, why State and Activity differ, and the close or
/// resume started from the list.
fn cockpit_fields(app: &App, row: &Row, t: &Theme) -> Vec<Field> {
    let now = app.now();
    let mut out = Vec::new();
    if let Some(q) = &row.question {
        out.push(("Asks", q.clone(), t.state(BoardState::Waiting)));
    }
    if let Some(run) = &row.running_tool {
        out.push((
            "Running",
            crate::ui::preview::running_text(run, now),
            Style::default(),
        ));
    }
    if let Some(a) = row
        .activity
        .as_ref()
        .filter(|a| theme::activity_differs(row.state, a.status))
    {
        let when = a
            .observed_at
            .map(|at| age_text(now, at))
            .unwrap_or_else(|| "at an unknown time".into());
        out.push((
            "Differs",
            format!(
                "State {} comes from {}; Activity {} is Intercom's observation log, {when}. They \
                 read different evidence at different times: the newer one is more likely current.",
                row.state.as_str(),
                clean(&row.state_source.to_string()),
                a.status.as_str()
            ),
            t.warn(),
        ));
    }
    let pane = match &row.pane {
        Some(p) => format!("{} {} (⏎ goes there)", p.kind.name(), clean(&p.pane_id)),
        None => "no live pane: ⏎ stays here".to_string(),
    };
    out.push(("Pane", pane, Style::default()));
    if let Some(j) = app.job(&row.id) {
        let (text, warn) = job_text(j, now);
        let style = if warn { t.warn() } else { Style::default() };
        out.push(("Job", text, style));
    }
    out
}

/// A close or resume from the list: its stage while it runs, its result after; `true` when it
/// did not do what was asked.
pub(crate) fn job_text(j: &crate::ui::state::JobView, now: crate::clock::Ms) -> (String, bool) {
    let cmd = j.action.command();
    match &j.outcome {
        None => (
            format!(
                "{cmd}: {} ({} s)",
                j.stage,
                crate::ui::fit::age_secs(now, j.started)
            ),
            false,
        ),
        Some(o) => {
            let detail = clean(&o.detail);
            let text = if detail == "-" {
                format!("{cmd}: {}", clean(&o.result))
            } else {
                format!("{cmd}: {} — {detail}", clean(&o.result))
            };
            (text, !o.ok)
        }
    }
}

/// What the seat is and why it shows its state.
fn seat_fields(row: &Row, now: crate::clock::Ms, t: &Theme) -> Vec<Field> {
    let role = match row.role {
        RowRole::Coordinator => "coordinator",
        RowRole::Worker => "worker",
        RowRole::Seat => "seat",
        RowRole::Connector => "connector",
    };
    let mut out = vec![(
        "Seat",
        format!("{role} · project {}", clean(&row.project)),
        Style::default(),
    )];
    if let Some(resp) = &row.responsibility {
        out.push(("Responsibility", clean(resp), Style::default()));
    }
    out.push((
        "State",
        // Words only: the code (`stateReason`) is in the board files and JSON for scripts.
        format!(
            "{} {} — {} (source: {})",
            theme::glyph(row.state),
            row.state.as_str(),
            row.state_reason.words(),
            clean(&row.state_source.to_string())
        ),
        t.state(row.state),
    ));
    // The rule that chose the state, in short (`intercom-pane explain` says it all).
    let rule = row.state_source.rule(row.state_reason);
    let why = match row.state_at {
        Some(at) => format!("{rule} (evidence {})", age_text(now, at)),
        None => rule.to_string(),
    };
    out.push(("Why", why, Style::default()));
    out
}

/// The Intercom worker's connection, observed activity, report, handoff and close job.
fn intercom_fields(app: &App, row: &Row, t: &Theme) -> Vec<Field> {
    // A seat found without a roster has no port, observation log or report to show.
    if row.role == RowRole::Seat {
        return Vec::new();
    }
    let now = app.now();
    let words = crate::board::reason::connection_words(&row.connection.reason);
    let checked = match row.connection.checked_at {
        Some(at) => format!(", checked {}", age_text(now, at)),
        None => String::new(),
    };
    let mut out = vec![(
        "Connection",
        format!("{} — {words}{checked}", row.connection.state.as_str()),
        t.conn(row.connection.state),
    )];
    out.push(match &row.activity {
        Some(a) => {
            let when = a
                .observed_at
                .map(|at| age_text(now, at))
                .unwrap_or_else(|| "time unknown".into());
            (
                "Activity",
                format!(
                    "{} — {}, {when} (evidence: {})",
                    a.status.as_str(),
                    clean(&a.label),
                    a.evidence.as_str().replace('_', " ")
                ),
                Style::default(),
            )
        }
        None => ("Activity", "unknown (no observation)".into(), t.dim()),
    });
    out.push(match &row.report {
        Some(rep) => (
            "Report",
            format!(
                "{}, {} — {}",
                rep.status.label(),
                age_text(now, rep.updated_at),
                clean(&rep.summary)
            ),
            t.report(rep.status),
        ),
        None => ("Report", "none".into(), t.dim()),
    });
    if let Some(hd) = &row.handoff {
        out.push((
            "Handoff",
            format!(
                "saved {} (job {})",
                age_text(now, hd.updated_at),
                clean(&hd.job_id)
            ),
            Style::default(),
        ));
    }
    out.extend(close_fields(app, row));
    out
}

/// The close job, and how to bring a closed worker back.
fn close_fields(app: &App, row: &Row) -> Vec<Field> {
    let Some(cj) = &row.close_job else {
        return Vec::new();
    };
    let reason = cj
        .reason
        .as_deref()
        .map(|r| format!(" ({})", clean(r).replace('_', " ")))
        .unwrap_or_default();
    let mut out = vec![(
        "Close",
        format!(
            "{}{reason}, {} (job {})",
            cj.state.as_str().replace('_', " "),
            age_text(app.now(), cj.updated_at),
            clean(&cj.job_id)
        ),
        Style::default(),
    )];
    // A closed worker comes back with its saved session, name and responsibility, and only
    // on a person's word that it is closed.
    if cj.state == CloseState::Closed && row.state == BoardState::Offline {
        out.push((
            "Resume",
            format!(
                "intercom-pane resume-worker {} --confirm-closed",
                crate::text::shell_quote(&clean(&row.name))
            ),
            Style::default(),
        ));
    }
    out
}

/// What the session says (task, workspace, model, times, last error), seen, and the reply.
fn session_fields(app: &App, row: &Row, t: &Theme) -> Vec<Field> {
    let now = app.now();
    let task = match (&row.task, &row.task_source) {
        (Some(task), Some(src)) => format!(
            "{} (source: {})",
            clean(task),
            src.as_str().replace('-', " ")
        ),
        (Some(task), None) => clean(task),
        (None, _) => "unknown".into(),
    };
    let model = match (&row.model, &row.provider) {
        (Some(m), Some(p)) => format!("{} ({})", clean(m), clean(p)),
        (Some(m), None) => clean(m),
        (None, Some(p)) => format!("unknown ({})", clean(p)),
        (None, None) => "unknown".into(),
    };
    let workspace = row
        .workspace
        .as_deref()
        .map(clean)
        .unwrap_or_else(|| "unknown".into());
    let mut out = vec![
        ("Task", task, Style::default()),
        ("Workspace", workspace, Style::default()),
        ("Model", model, Style::default()),
    ];
    if let Some(u) = &row.usage {
        out.push((
            "Usage",
            format!("{u} over {} calls", u.usage.calls),
            Style::default(),
        ));
    }
    if let Some(b) = row
        .budget
        .as_ref()
        .map(|b| b.short())
        .filter(|w| !w.is_empty())
    {
        out.push(("Budget", clean(&b), Style::default()));
    }
    if let Some(c) = &row.context {
        out.push((
            "Context",
            format!("{c}, {}", age_text(now, c.at)),
            Style::default(),
        ));
    }
    if let Some(at) = row.last_activity {
        out.push(("Last activity", age_text(now, at), Style::default()));
    }
    if let Some(at) = row.relaunched_at {
        out.push(("Relaunched", age_text(now, at), Style::default()));
    }
    if let Some(e) = &row.last_error {
        out.push(("Last error", clean(e), t.state(BoardState::Error)));
    }
    let seen = if app.is_seen(row) {
        "yes (s to unmark)"
    } else {
        "no (s marks it read)"
    };
    out.push(("Seen mark", seen.into(), Style::default()));
    let reply = match &row.reply {
        ReplyPath::Available { target } => format!("to {} (r)", clean(target)),
        ReplyPath::Unavailable { reason } => format!("unavailable: {}", clean(reason)),
    };
    out.push(("Reply", reply, Style::default()));
    if let Some((text, warn)) = receipt_line(app, &row.id) {
        let style = if warn { t.warn() } else { Style::default() };
        out.push(("Last reply", text, style));
    }
    out
}

/// The title, then each field: `Label: value` clipped on one line when narrow, else the label
/// in its column and the value wrapped onto up to three lines.
pub(crate) fn lay_out(
    fields: Vec<Field>,
    title: String,
    width: u16,
    t: &Theme,
) -> Vec<Line<'static>> {
    let mut out = vec![Line::from(Span::styled(title, t.header()))];
    let label_w = if width >= 40 { 15 } else { 0 };
    let value_w = (width as usize).saturating_sub(label_w).max(1);
    for (label, value, style) in fields {
        let multi = MULTI_LINE
            .iter()
            .find(|(l, _)| *l == label)
            .map(|(_, n)| *n);
        if label_w == 0 {
            let value = match multi {
                Some(_) => clean(&value),
                None => value,
            };
            out.push(Line::from(Span::styled(format!("{label}: {value}"), style)));
            continue;
        }
        let parts = match multi {
            Some(n) => wrap_text(&value, value_w, n),
            None => wrap(&value, value_w, 3),
        };
        for (i, part) in parts.into_iter().enumerate() {
            let lab = if i == 0 {
                cell(label, label_w as u16)
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
