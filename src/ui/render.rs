//! Drawing: a pure function of the `App` onto a frame. Every string taken from a row is
//! sanitized here, then clipped and padded by display width.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Span;
use ratatui::Frame;

use crate::clock::{short_age, Ms};
use crate::snapshot::{RosterStatus, Row, RowRole, Snapshot};
use crate::text::width;
use crate::ui::app::{App, Item};
use crate::ui::details::{detail_lines, draw_details};
use crate::ui::fit::{age_secs, cell, clean, is_future, name_of, put, wrap};
use crate::ui::keys;
use crate::ui::layout::{self, Col};
pub use crate::ui::reply_box::receipt_text;
use crate::ui::reply_box::{box_rows, draw_reply, receipt_line};
use crate::ui::theme::{self, Theme};

/// Evidence older than this many seconds is marked `(old)` in the Seen column.
pub const OLD_AFTER_SECS: i64 = 60;

/// Vertical breakpoints: which chrome lines fit a given height.
const TITLE_MIN_HEIGHT: u16 = 6;
const HEADER_MIN_HEIGHT: u16 = 5;
const HELP_MIN_HEIGHT: u16 = 8;
/// Below this body height details replace the list instead of sharing the screen.
const SPLIT_MIN_BODY: u16 = 14;
/// Lines a refusal or message may wrap onto at the bottom (fewer in short panes).
const MAX_STATUS_LINES: usize = 3;
/// Lines a refusal that holds the keyboard may wrap onto.
const MAX_NOTICE_LINES: usize = 6;

/// Draw the whole sidebar. Never mutates the app.
pub fn render(app: &App, f: &mut Frame) {
    let area = f.area();
    let cursor = draw(app, f.buffer_mut(), area);
    if let Some((x, y)) = cursor {
        f.set_cursor_position((x, y));
    }
}

/// Where each part of one frame goes. Pure: `draw` follows it, and the app uses it to know how
/// many details lines are visible (so scrolling stops exactly at the end).
#[derive(Debug, Clone, Default)]
pub(crate) struct Plan {
    help: Option<u16>,
    /// The refusal or message at the bottom, wrapped, and whether it is a refusal.
    status: Vec<(u16, String)>,
    title: Option<u16>,
    /// Lines of the "status unavailable" notice.
    notice: Vec<(u16, String)>,
    /// The reply box and whether it is framed.
    reply: Option<(Rect, bool)>,
    /// What is left for the list and details.
    body: Rect,
    list: Option<Rect>,
    details: Option<Rect>,
}

/// Lay out one frame of `area` for the app's current state.
pub(crate) fn plan(app: &App, area: Rect) -> Plan {
    let mut p = Plan::default();
    if area.width == 0 || area.height == 0 {
        return p;
    }
    let mut top = area.y;
    let mut bottom = area.y + area.height;
    let h = area.height;
    if h >= HELP_MIN_HEIGHT {
        bottom -= 1;
        p.help = Some(bottom);
    }
    // A refusal or message shows at every height (in a one-row pane it takes the row): a
    // refusal holds the keyboard, so it must be seen.
    if let Some(msg) = status_text(app) {
        let room = bottom.saturating_sub(top) as usize;
        // A refusal holds the keyboard, so it may take all but one row (the selected one).
        let max = if app.notice().is_some() {
            room.saturating_sub(1).clamp(1, MAX_NOTICE_LINES)
        } else {
            (room.saturating_sub(1) / 2).clamp(1, MAX_STATUS_LINES)
        };
        let lines = wrap(&msg, area.width as usize, max);
        for (i, l) in lines.iter().enumerate() {
            let y = bottom - (lines.len() - i) as u16;
            p.status.push((y, l.clone()));
        }
        bottom -= lines.len() as u16;
    }
    let Some(snap) = app.snapshot() else {
        p.body = Rect::new(area.x, top, area.width, bottom.saturating_sub(top));
        return p;
    };
    if h >= TITLE_MIN_HEIGHT {
        p.title = Some(top);
        top += 1;
    }
    // Roster notices come first: they explain an empty or partial list.
    if let RosterStatus::Unavailable { code, reason } = &snap.roster {
        let text = format!(
            "status unavailable: {} ({})",
            clean(reason),
            clean(code.as_str())
        );
        // The reason matters most when nothing else can be shown: up to 3 lines, leaving one.
        let max_lines = (bottom.saturating_sub(top).saturating_sub(1) as usize).clamp(1, 3);
        for line in wrap(&text, area.width as usize, max_lines) {
            if top >= bottom {
                break;
            }
            p.notice.push((top, line));
            top += 1;
        }
    }
    if let Some((box_h, framed)) = box_rows(app, area.width, bottom.saturating_sub(top)) {
        bottom -= box_h;
        p.reply = Some((Rect::new(area.x, bottom, area.width, box_h), framed));
    }
    let body = Rect::new(area.x, top, area.width, bottom.saturating_sub(top));
    p.body = body;
    let items = app.list_view().items.len();
    if body.height == 0 || items == 0 {
        return p;
    }
    let details_row = if app.details_open() {
        app.selected_row()
    } else {
        None
    };
    match details_row {
        Some(_) if body.height < SPLIT_MIN_BODY => p.details = Some(body),
        Some(row) => {
            // The list keeps at least a third of the body (and its selection); details get the rest.
            let theme = Theme { color: false };
            let d_len = detail_lines(app, row, body.width, &theme).len();
            let d_len = u16::try_from(d_len).unwrap_or(u16::MAX);
            let want = (items as u16).saturating_add(2);
            let list_h = want
                .min(body.height.saturating_sub(d_len).max(body.height / 3))
                .max(4);
            p.list = Some(Rect {
                height: list_h,
                ..body
            });
            p.details = Some(Rect {
                y: body.y + list_h,
                height: body.height - list_h,
                ..body
            });
        }
        None => p.list = Some(body),
    }
    p
}

/// How many details lines (below the pinned title) fit on a `width × height` screen now.
pub(crate) fn details_capacity(app: &App, width: u16, height: u16) -> usize {
    plan(app, Rect::new(0, 0, width, height))
        .details
        .map(|r| r.height.saturating_sub(1) as usize)
        .unwrap_or(0)
}

/// Draw into a buffer; returns where the text cursor belongs (reply editor), if anywhere.
pub fn draw(app: &App, buf: &mut Buffer, area: Rect) -> Option<(u16, u16)> {
    let p = plan(app, area);
    if area.width == 0 || area.height == 0 {
        return None;
    }
    let t = Theme { color: app.color() };
    let now = app.now();
    let line =
        |buf: &mut Buffer, y: u16, spans: &[Span<'_>]| put(buf, area.x, y, area.width, spans);
    if let Some(y) = p.help {
        let help = keys::help_line_fitted(app.mode(), area.width as usize);
        line(buf, y, &[Span::styled(help, t.dim())]);
    }
    for (y, msg) in &p.status {
        line(buf, *y, &[Span::styled(msg.clone(), t.warn())]);
    }
    let Some(snap) = app.snapshot() else {
        line(buf, p.body.y, &[Span::raw("Scanning…")]);
        return None;
    };
    if let Some(y) = p.title {
        line(buf, y, &title_spans(app, snap, now, area.width, &t));
    }
    for (y, text) in &p.notice {
        line(buf, *y, &[Span::styled(text.clone(), t.warn())]);
    }
    let cursor = match (p.reply, app.reply_box()) {
        (Some((r, framed)), Some(b)) => draw_reply(app, b, framed, buf, r, &t),
        _ => None,
    };
    let body = p.body;
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
        for (i, text) in wrap(&text, body.width as usize, body.height as usize)
            .into_iter()
            .enumerate()
        {
            line(buf, body.y + i as u16, &[Span::raw(text)]);
        }
        return cursor;
    }
    if let Some(r) = p.list {
        draw_list(app, &view.items, buf, r, &t, now);
    }
    if let (Some(r), Some(row)) = (p.details, app.selected_row()) {
        let lines = detail_lines(app, row, r.width, &t);
        draw_details(&lines, app.details_scroll(), buf, r, &t);
    }
    cursor
}

/// The bottom lines: a refusal that holds the keyboard (with how to dismiss it), else a message.
/// Reply receipts show on their row and in the details instead.
fn status_text(app: &App) -> Option<String> {
    if let Some(n) = app.notice() {
        return Some(format!("{n} (⏎/Esc: dismiss)"));
    }
    app.message().map(str::to_string)
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
    // In steps (`<10s`, `<30s`, …): redrawn when the step changes, not every second.
    let age = crate::ui::tick::title_age(age_secs(now, snap.scanned_at));
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
        put(buf, r.x, y, r.width, &header_spans(&fitted, t));
        y += 1;
        rows_h -= 1;
    }
    if rows_h == 0 {
        return;
    }
    let sel = app.selected_index(items);
    let total = items.len();
    // The selected row's reply receipt (or the reply in flight) shows on the line under it.
    let receipt = match items.get(sel) {
        Some(Item::Row(row)) => receipt_line(app, &row.id),
        _ => None,
    };
    let extra = usize::from(receipt.is_some());
    let rows_h = rows_h as usize;
    let overflow = total + extra > rows_h;
    let mut cap = if overflow {
        rows_h.saturating_sub(1).max(1)
    } else {
        rows_h
    };
    if cap < 1 + extra {
        // Too short for the row, its receipt and the overflow line: the receipt wins.
        cap = rows_h;
    }
    // Keep the selection (and its receipt) visible: scroll just enough to show them at the bottom.
    let offset = (sel + 1 + extra).saturating_sub(cap).min(sel);
    let mut used = 0usize;
    let mut shown = 0usize;
    for (i, item) in items.iter().enumerate().skip(offset) {
        if used >= cap {
            break;
        }
        let selected = i == sel;
        let spans = match item {
            Item::Row(row) => row_spans(row, &fitted, t, now, selected),
            Item::SeenGroup { count, expanded } => seen_group_spans(*count, *expanded, selected, t),
        };
        put(buf, r.x, y, r.width, &spans);
        if selected {
            buf.set_style(Rect::new(r.x, y, r.width, 1), t.selected());
        }
        y += 1;
        used += 1;
        shown += 1;
        if let (true, Some((text, warn))) = (selected, &receipt) {
            if used < cap {
                let style = if *warn { t.warn() } else { t.dim() };
                put(
                    buf,
                    r.x,
                    y,
                    r.width,
                    &[Span::styled(format!("   ↳ {text}"), style)],
                );
                y += 1;
                used += 1;
            }
        }
    }
    if shown < total && rows_h >= 2 && used < rows_h {
        let line = overflow_line(app, items, sel, offset..offset + shown, r.width, t);
        put(buf, r.x, y, r.width, &[line]);
    }
}

/// The column titles, each at its column.
fn header_spans(fitted: &layout::Fitted, t: &Theme) -> Vec<Span<'static>> {
    let mut spans = vec![Span::raw(" ".repeat(layout::PREFIX as usize))];
    let mut x = layout::PREFIX;
    for p in &fitted.cols {
        spans.push(Span::raw(" ".repeat(p.x.saturating_sub(x) as usize)));
        spans.push(Span::styled(cell(p.col.title(), p.width), t.header()));
        x = p.x + p.width;
    }
    spans
}

/// The line of the folded group of seen rows.
fn seen_group_spans(count: usize, expanded: bool, selected: bool, t: &Theme) -> Vec<Span<'static>> {
    let marker = if selected { "›" } else { " " };
    let arrow = if expanded { "▾" } else { "▸" };
    let hint = if expanded {
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

/// The count of rows cut off, the selection's position and how many hidden rows need
/// attention, in the longest wording that fits `width`.
fn overflow_line(
    app: &App,
    items: &[Item<'_>],
    sel: usize,
    shown: std::ops::Range<usize>,
    width_cells: u16,
    t: &Theme,
) -> Span<'static> {
    let total = items.len();
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
        .find(|v| width(v) <= width_cells as usize)
        .cloned()
        .unwrap_or_else(|| format!("+{hidden}"));
    let style = if attn_hidden > 0 { t.warn() } else { t.dim() };
    Span::styled(text, style)
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
                Some(rep) => (rep.status.label().to_string(), t.report(rep.status)),
                None => (String::new(), Style::default()),
            },
            Col::Activity => match &row.activity {
                Some(a) => {
                    let style = if a.stale { t.dim() } else { Style::default() };
                    (a.status.as_str().to_string(), style)
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
