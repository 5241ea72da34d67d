//! Drawing: a pure function of the `App` onto a frame. Every string taken from a row is
//! sanitized here, then clipped and padded by display width.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::Frame;

use crate::clock::{format_iso, short_age, Ms};
use crate::snapshot::{ReplyPath, RosterStatus, Row, RowRole, Snapshot};
use crate::text::{clip, sanitize, width};

use crate::ui::app::{App, Item};
use crate::ui::keys;
use crate::ui::layout::{self, Col};
use crate::ui::ports::ReplyOutcome;
use crate::ui::theme::{self, Theme};

/// Evidence older than this many seconds is marked `(old)` in the Seen column.
pub const OLD_AFTER_SECS: i64 = 60;

/// Vertical breakpoints: which chrome lines fit a given height.
const TITLE_MIN_HEIGHT: u16 = 6;
const HEADER_MIN_HEIGHT: u16 = 5;
const HELP_MIN_HEIGHT: u16 = 8;
const STATUS_MIN_HEIGHT: u16 = 4;
/// Below this body height details replace the list instead of sharing the screen.
const SPLIT_MIN_BODY: u16 = 14;
/// Below this body height the reply box is one line instead of a framed box.
const REPLY_BOX_MIN_BODY: u16 = 9;

/// Draw the whole sidebar. Never mutates the app.
pub fn render(app: &App, f: &mut Frame) {
    let area = f.area();
    let cursor = draw(app, f.buffer_mut(), area);
    if let Some((x, y)) = cursor {
        f.set_cursor_position((x, y));
    }
}

/// Draw into a buffer; returns where the text cursor belongs (reply editor), if anywhere.
pub fn draw(app: &App, buf: &mut Buffer, area: Rect) -> Option<(u16, u16)> {
    if area.width == 0 || area.height == 0 {
        return None;
    }
    let t = Theme { color: app.color() };
    let now = app.now();
    let mut top = area.y;
    let mut bottom = area.y + area.height;
    let h = area.height;

    if h >= HELP_MIN_HEIGHT {
        bottom -= 1;
        let help = keys::help_line_fitted(app.mode(), area.width as usize);
        put(
            buf,
            area.x,
            bottom,
            area.width,
            &[Span::styled(help, t.dim())],
        );
    }
    if h >= STATUS_MIN_HEIGHT {
        if let Some(msg) = status_text(app) {
            bottom -= 1;
            put(
                buf,
                area.x,
                bottom,
                area.width,
                &[Span::styled(msg, t.warn())],
            );
        }
    }
    let Some(snap) = app.snapshot() else {
        put(buf, area.x, top, area.width, &[Span::raw("Scanning…")]);
        return None;
    };
    if h >= TITLE_MIN_HEIGHT {
        put(
            buf,
            area.x,
            top,
            area.width,
            &title_spans(app, snap, now, area.width, &t),
        );
        top += 1;
    }

    // Roster notices come first: they explain an empty or partial list.
    if let RosterStatus::Unavailable { code, reason } = &snap.roster {
        let text = format!("status unavailable: {} ({})", clean(reason), clean(code));
        // The reason matters most when nothing else can be shown: up to 3 lines, leaving one.
        let max_lines = (bottom.saturating_sub(top).saturating_sub(1) as usize).clamp(1, 3);
        for line in wrap(&text, area.width as usize, max_lines) {
            if top >= bottom {
                break;
            }
            put(
                buf,
                area.x,
                top,
                area.width,
                &[Span::styled(line, t.warn())],
            );
            top += 1;
        }
    }

    let mut cursor = None;
    if let Some(id) = app.reply_open() {
        let body_h = bottom.saturating_sub(top);
        let box_h = if body_h >= REPLY_BOX_MIN_BODY { 3 } else { 1 };
        if body_h > box_h {
            bottom -= box_h;
            let r = Rect::new(area.x, bottom, area.width, box_h);
            cursor = draw_reply(app, snap, id, buf, r, &t);
        }
    }

    let body = Rect::new(area.x, top, area.width, bottom.saturating_sub(top));
    if body.height == 0 {
        return cursor;
    }
    let view = app.list_view();
    if view.items.is_empty() {
        let text = if snap.rows.is_empty() {
            match &snap.roster {
                RosterStatus::Available { .. } => "No workers: the roster is empty.".to_string(),
                // The notice above already says why there is nothing.
                RosterStatus::Unavailable { .. } => return cursor,
            }
        } else {
            format!(
                "All {} seats hidden (o: offline, h: seen).",
                snap.rows.len()
            )
        };
        for (i, line) in wrap(&text, body.width as usize, body.height as usize)
            .into_iter()
            .enumerate()
        {
            put(
                buf,
                body.x,
                body.y + i as u16,
                body.width,
                &[Span::raw(line)],
            );
        }
        return cursor;
    }

    let details_row = if app.details_open() {
        app.selected_row()
    } else {
        None
    };
    match details_row {
        Some(row) if body.height < SPLIT_MIN_BODY => {
            draw_details(&detail_lines(app, row, body.width, &t), buf, body, &t);
        }
        Some(row) => {
            // The list keeps at least a third of the body (and its selection); details get the rest.
            let lines = detail_lines(app, row, body.width, &t);
            let want = (view.items.len() as u16).saturating_add(2);
            let d_len = u16::try_from(lines.len()).unwrap_or(u16::MAX);
            let list_h = want
                .min(body.height.saturating_sub(d_len).max(body.height / 3))
                .max(4);
            let l = Rect {
                height: list_h,
                ..body
            };
            draw_list(app, &view.items, buf, l, &t, now);
            let d = Rect {
                y: body.y + list_h,
                height: body.height - list_h,
                ..body
            };
            draw_details(&lines, buf, d, &t);
        }
        None => draw_list(app, &view.items, buf, body, &t, now),
    }
    cursor
}

/// The status line: a message, else the selected row's last reply receipt.
fn status_text(app: &App) -> Option<String> {
    if let Some(m) = app.message() {
        return Some(m.to_string());
    }
    if app.reply_open().is_some() {
        return None;
    }
    let row = app.selected_row()?;
    let r = app.receipt(&row.id)?;
    Some(format!(
        "reply to {}: {}",
        name_of(row),
        receipt_text(&r.outcome)
    ))
}

/// `delivered <time> to <target>` / `failed (exit N): <stderr>` / `not sent: <reason>`.
pub fn receipt_text(o: &ReplyOutcome) -> String {
    match o {
        ReplyOutcome::Delivered { at, target } => {
            format!("delivered {} to {}", clock_time(*at), clean(target))
        }
        ReplyOutcome::Failed {
            exit,
            signal,
            stderr,
        } => {
            let how = match (exit, signal) {
                (Some(n), _) => format!("failed (exit {n})"),
                (None, Some(s)) => format!("failed (signal {s})"),
                (None, None) => "failed".to_string(),
            };
            let err = crate::text::sanitize(stderr);
            let err = err.trim();
            if err.is_empty() {
                how
            } else {
                format!("{how}: {}", crate::text::one_line(err, 400))
            }
        }
        ReplyOutcome::Refused { reason } => format!("not sent: {}", clean(reason)),
    }
}

/// Sanitized evidence text; `-` when nothing printable is left (blank never passes for a value).
fn clean(s: &str) -> String {
    let c = sanitize(s);
    if c.trim().is_empty() {
        "-".to_string()
    } else {
        c
    }
}

/// A row's name as shown: the sanitized name, else its seen key, else `(unnamed)`.
fn name_of(row: &Row) -> String {
    for s in [&row.name, &row.seen_key] {
        let c = sanitize(s);
        if !c.trim().is_empty() {
            return c;
        }
    }
    "(unnamed)".to_string()
}

/// Whole seconds since `at`, never negative, and no overflow whatever the evidence says.
fn age_secs(now: Ms, at: Ms) -> i64 {
    now.saturating_sub(at).max(0) / 1000
}

/// More than a second ahead of our clock: shown as such, never as a fresh age.
fn is_future(now: Ms, at: Ms) -> bool {
    at > now.saturating_add(1_000)
}

/// `HH:MM:SS` UTC of a timestamp.
fn clock_time(ms: Ms) -> String {
    let iso = format_iso(ms);
    iso.get(11..19).unwrap_or(&iso).to_string()
}

fn title_spans(app: &App, snap: &Snapshot, now: Ms, w: u16, t: &Theme) -> Vec<Span<'static>> {
    let view = app.list_view();
    let attention = snap
        .rows
        .iter()
        .filter(|r| !app.is_seen(r) && (theme::needs_attention(r.state) || r.waiting_on_you))
        .count();
    let mut parts: Vec<(String, Style)> = vec![(format!("{} seats", snap.rows.len()), t.header())];
    if attention > 0 {
        parts.push((
            format!("{attention} need attention"),
            t.state(crate::snapshot::BoardState::Waiting),
        ));
    }
    if app.hide_offline() {
        parts.push((format!("{} offline hidden", view.hidden_offline), t.dim()));
    }
    if app.hide_seen() {
        parts.push((format!("{} seen hidden", view.hidden_seen), t.dim()));
    }
    if !snap.errors.is_empty() {
        let first = clean(&snap.errors[0]);
        let more = snap.errors.len() - 1;
        let text = if more > 0 {
            format!("⚠ {first} (+{more})")
        } else {
            format!("⚠ {first}")
        };
        parts.push((text, t.warn()));
    }
    if snap.truncated {
        parts.push(("⚠ truncated".into(), t.warn()));
    }
    let age = short_age(age_secs(now, snap.scanned_at));
    let scan = if app.scanning() {
        format!("scanned {age} ago, scanning…")
    } else {
        format!("scanned {age} ago")
    };
    parts.push((scan, t.dim()));
    // Keep parts in priority order while they fit; later ones drop first.
    let mut spans = Vec::new();
    let mut used = 0usize;
    for (i, (text, style)) in parts.into_iter().enumerate() {
        let sep = if i == 0 { 0 } else { 3 };
        if i > 0 && used + sep + width(&text) > w as usize {
            break;
        }
        if i > 0 {
            spans.push(Span::raw(" · "));
        }
        used += sep + width(&text);
        spans.push(Span::styled(text, style));
    }
    spans
}

fn draw_list(app: &App, items: &[Item<'_>], buf: &mut Buffer, r: Rect, t: &Theme, now: Ms) {
    let fitted = layout::fit(r.width);
    let mut y = r.y;
    let mut rows_h = r.height;
    if r.height >= HEADER_MIN_HEIGHT - 1 && fitted.name != "tiny" {
        let mut spans = vec![Span::raw(" ".repeat(layout::PREFIX as usize))];
        let mut x = layout::PREFIX;
        for p in &fitted.cols {
            spans.push(Span::raw(" ".repeat(p.x.saturating_sub(x) as usize)));
            spans.push(Span::styled(cell(p.col.title(), p.width), t.header()));
            x = p.x + p.width;
        }
        put(buf, r.x, y, r.width, &spans);
        y += 1;
        rows_h -= 1;
    }
    if rows_h == 0 {
        return;
    }
    let sel = app.selected_index(items);
    let total = items.len();
    let overflow = total > rows_h as usize;
    let cap = if overflow {
        (rows_h as usize).saturating_sub(1).max(1)
    } else {
        rows_h as usize
    };
    // Keep the selection visible: scroll just enough to show it at the bottom.
    let offset = if sel < cap { 0 } else { sel + 1 - cap };
    for (i, item) in items.iter().enumerate().skip(offset).take(cap) {
        let selected = i == sel;
        let spans = match item {
            Item::Row(row) => row_spans(row, &fitted, t, now, selected),
            Item::SeenGroup { count, expanded } => {
                let marker = if selected { "›" } else { " " };
                let arrow = if *expanded { "▾" } else { "▸" };
                let hint = if *expanded {
                    "⏎ collapse"
                } else {
                    "⏎ expand"
                };
                vec![
                    Span::raw(format!("{marker}{arrow} ")),
                    Span::styled(format!("Seen ({count})"), t.header()),
                    Span::styled(format!("  {hint}"), t.dim()),
                ]
            }
        };
        put(buf, r.x, y, r.width, &spans);
        if selected {
            buf.set_style(Rect::new(r.x, y, r.width, 1), t.selected());
        }
        y += 1;
    }
    if overflow && rows_h >= 2 {
        let shown = offset..(offset + cap).min(total);
        let hidden = total - shown.len();
        let attn_hidden = items
            .iter()
            .enumerate()
            .filter(|(i, _)| !shown.contains(i))
            .filter(|(_, it)| match it {
                Item::Row(row) => theme::needs_attention(row.state) && !app.is_seen(row),
                Item::SeenGroup { .. } => false,
            })
            .count();
        let pos = format!("({}/{})", sel + 1, total);
        let variants = [
            if attn_hidden > 0 {
                format!("+{hidden} more {pos}, {attn_hidden} need attention")
            } else {
                format!("+{hidden} more {pos}")
            },
            if attn_hidden > 0 {
                format!("+{hidden} {pos} {attn_hidden}!")
            } else {
                format!("+{hidden} {pos}")
            },
            format!("+{hidden} {}/{}", sel + 1, total),
            format!("+{hidden}"),
        ];
        let text = variants
            .iter()
            .find(|v| width(v) <= r.width as usize)
            .cloned()
            .unwrap_or_else(|| format!("+{hidden}"));
        let style = if attn_hidden > 0 { t.warn() } else { t.dim() };
        put(buf, r.x, y, r.width, &[Span::styled(text, style)]);
    }
}

fn row_spans(
    row: &Row,
    fitted: &layout::Fitted,
    t: &Theme,
    now: Ms,
    selected: bool,
) -> Vec<Span<'static>> {
    let marker = if selected { "›" } else { " " };
    let mut spans = vec![
        Span::raw(marker.to_string()),
        Span::styled(theme::glyph(row.state).to_string(), t.state(row.state)),
        Span::raw(" "),
    ];
    let mut x = layout::PREFIX;
    for p in &fitted.cols {
        spans.push(Span::raw(" ".repeat(p.x.saturating_sub(x) as usize)));
        x = p.x + p.width;
        let (text, style) = match p.col {
            Col::Worker => {
                let mut name = name_of(row);
                if row.role == RowRole::Connector {
                    name.push_str(" (connector)");
                }
                let style = if row.waiting_on_you {
                    t.header()
                } else {
                    Style::default()
                };
                (name, style)
            }
            Col::State => (row.state.as_str().to_string(), t.state(row.state)),
            Col::Connection => (
                row.connection.state.as_str().to_string(),
                t.conn(row.connection.state),
            ),
            Col::Report => match &row.report {
                Some(rep) => (
                    theme::report_word(&rep.status)
                        .map(str::to_string)
                        .unwrap_or_else(|| clean(&rep.status)),
                    t.report(&rep.status),
                ),
                None => (String::new(), Style::default()),
            },
            Col::Activity => match &row.activity {
                Some(a) => {
                    let style = if a.stale { t.dim() } else { Style::default() };
                    (clean(&a.status), style)
                }
                None => ("unknown".to_string(), t.dim()),
            },
            Col::Seen => seen_cell(row, now, t),
            Col::LastActivity => match &row.activity {
                Some(a) => (clean(&a.label), Style::default()),
                None => ("-".to_string(), t.dim()),
            },
        };
        spans.push(Span::styled(cell(&text, p.width), style));
    }
    spans
}

/// Seen column: age of the status observation, `(old)` past 60 s; future times are flagged.
fn seen_cell(row: &Row, now: Ms, t: &Theme) -> (String, Style) {
    let Some(at) = row.activity.as_ref().and_then(|a| a.observed_at) else {
        return ("-".to_string(), t.dim());
    };
    if is_future(now, at) {
        return ("future".to_string(), t.warn());
    }
    let secs = age_secs(now, at);
    if secs > OLD_AFTER_SECS {
        (format!("{} (old)", short_age(secs)), t.dim())
    } else {
        (short_age(secs), Style::default())
    }
}

fn age_text(now: Ms, at: Ms) -> String {
    if is_future(now, at) {
        format!("in the future ({})", format_iso(at))
    } else {
        format!("{} ago", short_age(age_secs(now, at)))
    }
}

/// Details fields, most useful first: when the pane is short the tail is cut, not the head.
const DETAIL_ORDER: &[&str] = &[
    "Seat",
    "Responsibility",
    "State",
    "Last error",
    "Connection",
    "Activity",
    "Report",
    "Reply",
    "Last reply",
    "Handoff",
    "Close",
    "Task",
    "Workspace",
    "Model",
    "Last activity",
    "Relaunched",
    "Seen",
];

/// The details panel as screen lines for a given width (title first).
fn detail_lines(app: &App, row: &Row, width: u16, t: &Theme) -> Vec<Line<'static>> {
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
    add(
        "State",
        format!(
            "{} {} — {} (source: {})",
            theme::glyph(row.state),
            row.state.as_str(),
            clean(&row.state_reason),
            clean(&row.state_source)
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
    if let Some(rc) = app.receipt(&row.id) {
        add("Last reply", receipt_text(&rc.outcome), Style::default());
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

/// Draw details lines into `r`; when they do not fit, the last line says how many are cut.
fn draw_details(lines: &[Line<'static>], buf: &mut Buffer, r: Rect, t: &Theme) {
    let cap = r.height as usize;
    let cut = lines.len() > cap;
    for (i, line) in lines.iter().take(cap).enumerate() {
        let y = r.y + i as u16;
        if cut && i + 1 == cap {
            let more = lines.len() - i;
            let text = format!("… {more} more lines");
            buf.set_line(r.x, y, &Line::from(Span::styled(text, t.dim())), r.width);
        } else {
            buf.set_line(r.x, y, line, r.width);
        }
    }
}

fn draw_reply(
    app: &App,
    snap: &Snapshot,
    id: &str,
    buf: &mut Buffer,
    r: Rect,
    t: &Theme,
) -> Option<(u16, u16)> {
    let row = snap.row(id)?;
    let draft = app.draft(id).cloned().unwrap_or_default();
    let sending = app.is_sending(id);
    let target = match &row.reply {
        ReplyPath::Available { target } => clean(target),
        ReplyPath::Unavailable { .. } => String::new(),
    };
    let status = if sending {
        format!("sending to {target}…")
    } else if let Some(reason) = app.reply_unavailable() {
        format!("reply unavailable: {}", clean(reason))
    } else if let Some(rc) = app.receipt(id) {
        receipt_text(&rc.outcome)
    } else {
        format!(
            "{}/{} characters",
            draft.text.chars().count(),
            crate::ui::app::MAX_REPLY_CHARS
        )
    };
    let (edit_y, edit_x, edit_w) = if r.height >= 3 {
        let title = format!("┌ Reply to {} → {target} ", name_of(row));
        let top = format!("{}{}", title, "─".repeat(r.width as usize));
        put(buf, r.x, r.y, r.width, &[Span::styled(top, t.header())]);
        let bottom = format!("└ {status} {}", "─".repeat(r.width as usize));
        let status_style = if app.receipt(id).is_some() || app.reply_unavailable().is_some() {
            t.warn()
        } else {
            t.dim()
        };
        put(
            buf,
            r.x,
            r.y + 2,
            r.width,
            &[Span::styled(bottom, status_style)],
        );
        put(buf, r.x, r.y + 1, r.width, &[Span::raw("│ > ")]);
        (r.y + 1, r.x + 4, r.width.saturating_sub(4))
    } else {
        put(
            buf,
            r.x,
            r.y,
            r.width,
            &[Span::styled("reply> ", t.header())],
        );
        (r.y, r.x + 7, r.width.saturating_sub(7))
    };
    if edit_w == 0 {
        return None;
    }
    // Show the part of the draft around the cursor, always leaving a cell for the cursor.
    let text = sanitize(&draft.text);
    let chars: Vec<char> = text.chars().collect();
    let cursor = draft.cursor.min(chars.len());
    let mut start = cursor;
    let mut used = 0usize;
    while start > 0 {
        let w = width(chars[start - 1].encode_utf8(&mut [0u8; 4]));
        if used + w + 1 > edit_w as usize {
            break;
        }
        used += w;
        start -= 1;
    }
    let visible: String = chars[start..].iter().collect();
    let style = if sending { t.dim() } else { Style::default() };
    put(
        buf,
        edit_x,
        edit_y,
        edit_w,
        &[Span::styled(clip(&visible, edit_w as usize), style)],
    );
    (!sending).then_some((edit_x + used as u16, edit_y))
}

/// Clip to `w` columns and pad with spaces to exactly `w`.
fn cell(s: &str, w: u16) -> String {
    let w = w as usize;
    let mut c = clip(s, w);
    let cw = width(&c);
    if cw < w {
        c.push_str(&" ".repeat(w - cw));
    }
    c
}

/// Put spans on one line, clipped to `w` columns (ratatui cuts by display width).
fn put(buf: &mut Buffer, x: u16, y: u16, w: u16, spans: &[Span<'_>]) {
    let line = Line::from(spans.to_vec());
    buf.set_line(x, y, &line, w);
}

/// Wrap by display width at spaces where possible, at most `max_lines` lines (the last one
/// ends with `…` when text remains). Words wider than a line are cut by grapheme.
fn wrap(s: &str, w: usize, max_lines: usize) -> Vec<String> {
    use unicode_segmentation::UnicodeSegmentation;
    let mut out: Vec<String> = Vec::new();
    if w == 0 || max_lines == 0 {
        return out;
    }
    let mut line = String::new();
    let mut lw = 0usize;
    for word in s.split_inclusive(' ') {
        // A trailing space may hang past the edge; only the visible part must fit.
        let vis = width(word.trim_end());
        if lw > 0 && lw + vis > w {
            out.push(std::mem::take(&mut line).trim_end().to_string());
            lw = 0;
            if out.len() == max_lines {
                return ellipsize(out, w);
            }
        }
        if vis > w {
            for g in word.graphemes(true) {
                let gw = width(g);
                if lw + gw > w {
                    out.push(std::mem::take(&mut line).trim_end().to_string());
                    lw = 0;
                    if out.len() == max_lines {
                        return ellipsize(out, w);
                    }
                }
                line.push_str(g);
                lw += gw;
            }
            continue;
        }
        line.push_str(word);
        lw += width(word);
    }
    if !line.trim().is_empty() || out.is_empty() {
        out.push(line.trim_end().to_string());
    }
    out
}

/// Mark the last kept line as cut: it ends with `…` within `w` columns.
fn ellipsize(mut lines: Vec<String>, w: usize) -> Vec<String> {
    if let Some(last) = lines.pop() {
        let room = w.saturating_sub(1);
        let mut cut = clip(&last, room);
        if cut.ends_with('…') {
            cut.pop();
        }
        cut.push('…');
        lines.push(cut);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_respects_width_and_line_cap() {
        let lines = wrap("alpha beta gamma delta epsilon", 11, 3);
        assert!(lines.iter().all(|l| width(l) <= 11), "{lines:?}");
        assert_eq!(lines[0], "alpha beta");
        let capped = wrap(&"word ".repeat(100), 12, 2);
        assert_eq!(capped.len(), 2);
        assert!(capped[1].ends_with('…'));
        let wide = wrap("日本語テキストがとても長い", 6, 5);
        assert!(wide.iter().all(|l| width(l) <= 6), "{wide:?}");
        assert_eq!(wrap("", 5, 2), vec![String::new()]);
        assert!(wrap("x", 0, 2).is_empty());
    }

    #[test]
    fn receipts_read_as_the_spec_says() {
        let at = crate::clock::parse_iso("2026-11-29T10:00:03.000Z").unwrap();
        assert_eq!(
            receipt_text(&ReplyOutcome::Delivered {
                at,
                target: "dev:builder".into()
            }),
            "delivered 10:00:03 to dev:builder"
        );
        assert_eq!(
            receipt_text(&ReplyOutcome::Failed {
                exit: Some(3),
                signal: None,
                stderr: "no such session\n\u{1b}[31m".into()
            }),
            "failed (exit 3): no such session"
        );
    }
}
