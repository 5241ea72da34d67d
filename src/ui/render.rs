//! Drawing: a pure function of the `App` onto a frame. Every string taken from a row is
//! sanitized here, then clipped and padded by display width.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Span;
use ratatui::Frame;

use crate::clock::Ms;
use crate::snapshot::{RosterStatus, Snapshot};
use crate::states::BoardState;
use crate::text::width;
use crate::ui::app::App;
use crate::ui::details::{draw_details, panel_lines};
use crate::ui::fit::{clean, elapsed_secs, put, wrap};
use crate::ui::keys;
use crate::ui::list::{draw_list, list_geom};
use crate::ui::reply_box::{box_rows, draw_reply};
use crate::ui::theme::Theme;

/// Vertical breakpoints: which chrome lines fit a given height. At `layout::MIN_HEIGHT` (7)
/// everything shows: title, header, 3 rows, the overflow line and the key line; below it the
/// title goes first, then the header, then the key line, so rows stay longest.
const TITLE_MIN_HEIGHT: u16 = crate::ui::layout::MIN_HEIGHT;
const HELP_MIN_HEIGHT: u16 = 4;
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
    /// The "since you looked" line under the title.
    away: Option<(u16, String)>,
    /// Lines of the "status unavailable" notice.
    notice: Vec<(u16, String)>,
    /// The reply box and whether it is framed.
    reply: Option<(Rect, bool)>,
    /// What is left for the list and details.
    body: Rect,
    pub(crate) list: Option<Rect>,
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
        let max = if app.notice().is_some() || app.confirming().is_some() {
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
        // Only when something changed, and only where rows keep their minimum room.
        if h > TITLE_MIN_HEIGHT {
            if let Some(text) = app.away_line(area.width as usize) {
                p.away = Some((top, text));
                top += 1;
            }
        }
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
    // Other machines that are not answering: one line each (their rows are dimmed below).
    for text in crate::ui::hosts_view::host_lines(snap, app.now()) {
        if top + 1 >= bottom {
            break;
        }
        let line = crate::text::clip(&text, area.width as usize);
        p.notice.push((top, line));
        top += 1;
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
    let details_row = if app.details_open() && !app.help_open() && !app.hosts_open() {
        app.selected_row()
    } else {
        None
    };
    match details_row {
        Some(_) if body.height < SPLIT_MIN_BODY => p.details = Some(body),
        Some(row) => {
            // The list keeps at least a third of the body (and its selection); details get the rest.
            let theme = Theme { color: false };
            let d_len = panel_lines(app, row, body.width, &theme).len();
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

/// The body (the rows between the title and notices and the key line) of a `w × h` screen:
/// what the help overlay has to page through.
pub(crate) fn body_at(app: &App, w: u16, h: u16) -> Rect {
    plan(app, Rect::new(0, 0, w, h)).body
}

/// The item of the list under screen cell (`x`, `y`) on a `w × h` screen, if any.
pub(crate) fn item_at(app: &App, w: u16, h: u16, x: u16, y: u16) -> Option<usize> {
    if app.help_open() || app.hosts_open() || x >= w {
        return None;
    }
    let r = plan(app, Rect::new(0, 0, w, h)).list?;
    let view = app.list_view();
    list_geom(app, &view.items, r)
        .rows
        .iter()
        .find(|(ry, _)| *ry == y)
        .map(|(_, i)| *i)
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
        line(buf, y, &[key_line(app, area.width, &t)]);
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
    if let Some((y, text)) = &p.away {
        line(buf, *y, &[Span::styled(text.clone(), t.header())]);
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
    if app.help_open() {
        crate::ui::help::draw_help(app.help_scroll(), buf, body, &t);
        return cursor;
    }
    if app.hosts_open() {
        crate::ui::hosts_view::draw_hosts(snap, app.hosts_selected(), now, buf, body, &t);
        return cursor;
    }
    if let Some(form) = app.spawn_form() {
        // The form takes the body while it is open: nothing else competes for the keys.
        for (i, l) in form.lines(body.width as usize).iter().enumerate() {
            let Ok(i) = u16::try_from(i) else { break };
            if i >= body.height {
                break;
            }
            line(buf, body.y + i, &l.spans);
        }
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
                "All {} seats hidden (o: offline, h: seen, /: filter).",
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
        let lines = panel_lines(app, row, r.width, &t);
        let (len, fits) = (
            lines.len().saturating_sub(1),
            r.height.saturating_sub(1) as usize,
        );
        // The app stops scrolling where this frame ends (it does not measure its own layout).
        app.note_details_view(len, fits);
        let scroll = app.details_scroll().min(len.saturating_sub(fits));
        draw_details(&lines, scroll, buf, r, &t);
    }
    cursor
}

/// The bottom lines: a refusal that holds the keyboard (with how to dismiss it), else a message.
/// Reply receipts show on their row and in the details instead.
fn status_text(app: &App) -> Option<String> {
    if let Some(n) = app.notice() {
        return Some(format!("{n} (⏎/Esc: dismiss)"));
    }
    if let Some(c) = app.confirm_text() {
        return Some(c);
    }
    if app.filter_editing() {
        return Some(format!(
            "/{}▏ (⏎ keep · Esc clear)",
            crate::text::sanitize(app.filter())
        ));
    }
    app.message().map(str::to_string)
}

/// The key line from the binding table; when the terminal says another pane has the keyboard,
/// how to come back instead.
fn key_line(app: &App, w: u16, t: &Theme) -> Span<'static> {
    if app.focused() == Some(false) {
        let text = "not focused: select this pane (prefix + arrow, or a click) to use it";
        return Span::styled(crate::text::clip(text, w as usize), t.dim());
    }
    Span::styled(keys::help_line_fitted(app.mode(), w as usize), t.dim())
}

fn title_spans(app: &App, snap: &Snapshot, now: Ms, w: u16, t: &Theme) -> Vec<Span<'static>> {
    let view = app.list_view();
    // The same words and rule as `scan --print` (`N waiting on you`: waiting, not marked seen),
    // errors beside them; counted as the alerts' status summary counts them.
    let summary =
        crate::board::alerts::Summary::of(snap.rows.iter().map(|r| (&r.state, app.is_seen(r))));
    let (waiting, errors) = (summary.waiting, summary.error);
    // The sidebar has the keyboard: the title says so in reverse video.
    let head_style = match app.focused() {
        Some(true) => t.focused(),
        Some(false) => t.dim(),
        None => t.header(),
    };
    let head = match app.focused() {
        Some(true) => format!("▶ {} seats", snap.rows.len()),
        _ => format!("{} seats", snap.rows.len()),
    };
    let mut parts: Vec<(String, Style)> = vec![(head, head_style)];
    if !app.filter().is_empty() {
        parts.push((
            format!(
                "filter \"{}\": {} hidden",
                crate::text::sanitize(app.filter()),
                view.filtered
            ),
            t.warn(),
        ));
    }
    if waiting > 0 {
        parts.push((
            format!("{waiting} waiting on you"),
            t.state(BoardState::Waiting),
        ));
    }
    if errors > 0 {
        parts.push((format!("{errors} in error"), t.state(BoardState::Error)));
    }
    // Tokens and cost over every seat, as pi records them (`≥` while still counting).
    if snap.usage.usage.calls > 0 {
        parts.push((snap.usage.to_string(), t.dim()));
    }
    if app.hide_offline() {
        parts.push((format!("{} offline hidden", view.hidden_offline), t.dim()));
    }
    if app.hide_seen() {
        parts.push((format!("{} seen hidden", view.hidden_seen), t.dim()));
    }
    if !snap.errors.is_empty() {
        let first = clean(&snap.errors[0].to_string());
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
    parts.push((title_scan(app, snap, now), t.dim()));
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

/// The title's word on the last pass: its age (`<1m`, then minutes: redrawn when that changes,
/// not every second) and whether one runs now. A pass that found nothing new changes the frame
/// only if it changes this (`run::event_loop`).
pub(crate) fn title_scan(app: &App, snap: &Snapshot, now: Ms) -> String {
    let age = crate::ui::tick::title_age(elapsed_secs(now, snap.scanned_at));
    if app.scanning() {
        format!("scanned {age} ago, scanning…")
    } else {
        format!("scanned {age} ago")
    }
}
