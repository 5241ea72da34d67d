//! The worker list: where each line goes (shared by drawing and mouse clicks), the header, each
//! row's cells (the Detail column above all), the Seen group line and the overflow line.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Span;

use crate::clock::{short_age, Ms};
use crate::snapshot::{Row, RowRole};
use crate::states::BoardState;
use crate::text::width;
use crate::ui::app::{App, Item};
use crate::ui::details::job_text;
use crate::ui::fit::{age_secs, cell, clean, is_future, name_of, put};
use crate::ui::layout::{self, Col};
use crate::ui::reply_box::receipt_line;
use crate::ui::theme::{self, Theme};

/// Evidence older than this many seconds is marked `(old)` in the Observed column.
const OLD_AFTER_SECS: i64 = 60;

/// A finished close or resume shows on its row for this long (its details keep it).
const JOB_SHOWN_MS: Ms = 120_000;
/// A list this tall (or taller) gets its column header.
const HEADER_MIN_HEIGHT: u16 = 4;

/// Where each line of the list goes in `r`: the header, each shown item, the selected row's
/// receipt line, the overflow line. Pure: drawing and mouse clicks both follow it.
pub(crate) struct ListGeom {
    fitted: layout::Fitted,
    header_y: Option<u16>,
    /// (y, index into the items) of each shown item.
    pub(crate) rows: Vec<(u16, usize)>,
    receipt: Option<(u16, String, bool)>,
    /// The overflow line's y and the range of items shown.
    overflow: Option<(u16, std::ops::Range<usize>)>,
    sel: usize,
}

pub(crate) fn list_geom(app: &App, items: &[Item<'_>], r: Rect) -> ListGeom {
    let shown_cols = app
        .snapshot()
        .map(|s| {
            let mut cols = layout::with_source(&s.rows);
            if app.changes.any(&s.rows) {
                cols.push(Col::Changes);
            }
            cols
        })
        .unwrap_or_default();
    let fitted = layout::fit(r.width, &shown_cols);
    let sel = app.selected_index(items);
    let mut g = ListGeom {
        fitted,
        header_y: None,
        rows: Vec::new(),
        receipt: None,
        overflow: None,
        sel,
    };
    let mut y = r.y;
    let mut rows_h = r.height;
    if r.height >= HEADER_MIN_HEIGHT && !g.fitted.tiny {
        g.header_y = Some(y);
        y += 1;
        rows_h -= 1;
    }
    if rows_h == 0 {
        return g;
    }
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
    for i in offset..total {
        if used >= cap {
            break;
        }
        g.rows.push((y, i));
        y += 1;
        used += 1;
        shown += 1;
        if let (true, Some((text, warn))) = (i == sel, &receipt) {
            if used < cap {
                g.receipt = Some((y, text.clone(), *warn));
                y += 1;
                used += 1;
            }
        }
    }
    if shown < total && rows_h >= 2 && used < rows_h {
        g.overflow = Some((y, offset..offset + shown));
    }
    g
}

pub(crate) fn draw_list(
    app: &App,
    items: &[Item<'_>],
    buf: &mut Buffer,
    r: Rect,
    t: &Theme,
    now: Ms,
) {
    let g = list_geom(app, items, r);
    if let Some(y) = g.header_y {
        put(buf, r.x, y, r.width, &header_spans(&g.fitted, t));
    }
    for &(y, i) in &g.rows {
        let selected = i == g.sel;
        let spans = match &items[i] {
            Item::Row(row) => row_spans(app, row, &g.fitted, t, now, selected),
            Item::SeenGroup { count, expanded } => seen_group_spans(*count, *expanded, selected, t),
        };
        put(buf, r.x, y, r.width, &spans);
        if selected {
            buf.set_style(Rect::new(r.x, y, r.width, 1), t.selected());
        }
    }
    if let Some((y, text, warn)) = &g.receipt {
        let style = if *warn { t.warn() } else { t.dim() };
        put(
            buf,
            r.x,
            *y,
            r.width,
            &[Span::styled(format!("   ↳ {text}"), style)],
        );
    }
    if let Some((y, range)) = g.overflow {
        let line = overflow_line(app, items, g.sel, range, r.width, t);
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
            format!("+{hidden} more {pos}, {attn_hidden} waiting or in error")
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
    app: &App,
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
            Col::Detail => match crate::ui::hosts_view::stale_detail(
                row,
                app.snapshot().map_or(&[], |s| s.hosts.as_slice()),
                now,
            ) {
                Some(d) => (d, t.dim()),
                None => with_budget(row, detail_cell(app, row, now, t), t),
            },
            Col::Connection => (
                row.connection.state.as_str().to_string(),
                t.conn(row.connection.state),
            ),
            Col::Report => match &row.report {
                Some(rep) => (rep.status.label().to_string(), t.report(rep.status)),
                None => (String::new(), Style::default()),
            },
            Col::Activity => match &row.activity {
                // Marked when it says the opposite of State: the details explain why.
                Some(a) if theme::activity_differs(row.state, a.status) => {
                    (format!("{}*", a.status.as_str()), t.warn())
                }
                Some(a) => {
                    let style = if a.stale { t.dim() } else { Style::default() };
                    (a.status.as_str().to_string(), style)
                }
                None => ("-".to_string(), t.dim()),
            },
            Col::Observed => observed_cell(row, now, t),
            Col::Changes => match app.changes.of(&row.id) {
                Some(c) => {
                    let rows = app.snapshot().map_or(&[][..], |s| &s.rows[..]);
                    let overlap = app.changes.overlaps(row, rows);
                    let style = if overlap { t.warn() } else { Style::default() };
                    (crate::ui::changes::cell(c, overlap, p.width), style)
                }
                None => (String::new(), Style::default()),
            },
            Col::LastActivity => match &row.activity {
                Some(a) => (clean(&a.label), Style::default()),
                None => ("-".to_string(), t.dim()),
            },
        };
        spans.push(Span::styled(cell(&text, p.width), style));
    }
    // A row of a host that is not answering is its last known one: dimmed, never live.
    if row.host.as_ref().is_some_and(|h| !h.answering) {
        for s in spans.iter_mut() {
            s.style = t.dim();
        }
    }
    spans
}

/// The Detail cell with the row's budget in front when one applies (`$3.20/5.00 · …`), marked
/// from the soft limit on.
fn with_budget(row: &Row, (text, style): (String, Style), t: &Theme) -> (String, Style) {
    let Some(b) = row.budget.as_ref() else {
        return (text, style);
    };
    let words = b.short();
    if words.is_empty() {
        return (text, style);
    }
    let style = if b.level >= crate::budget::eval::Level::Soft {
        t.warn()
    } else {
        style
    };
    (format!("{words} · {text}"), style)
}

/// The Detail cell: a close, resume or spawn from the list (running, or just finished and the
/// seat needs nothing from the person), else the row's headline (`views::headline`).
fn detail_cell(app: &App, row: &Row, now: Ms, t: &Theme) -> (String, Style) {
    if let Some(j) = app.job(&row.id) {
        if let Some(f) = j.finished {
            crate::ui::fit::note_shown(crate::ui::fit::Shown::Until(
                f.saturating_add(JOB_SHOWN_MS + 1),
            ));
        }
        // A finished spawn or resume never hides what needs the person: the worker it started
        // shows its question or error as soon as it has one (the job stays in the details). A
        // finished close stays: its row is about to go offline, and until the next pass shows
        // that, "closed" is the news.
        let needs_you = matches!(row.state, BoardState::Waiting | BoardState::Error)
            && j.action != crate::ui::ports::WorkerAction::Close;
        if j.finished
            .is_none_or(|f| now - f <= JOB_SHOWN_MS && !needs_you)
        {
            let (text, warn) = job_text(j, now);
            return (text, if warn { t.warn() } else { t.header() });
        }
    }
    let one = |s: &str| crate::text::one_line(&crate::text::sanitize(s), 300);
    let h = crate::views::headline::headline(row, now);
    if let Some(at) = crate::views::headline::Headline::quiet_at(row).filter(|at| *at > now) {
        crate::ui::fit::note_shown(crate::ui::fit::Shown::Until(at));
    }
    use crate::views::headline::HeadlineSource as H;
    match (row.state, h.source) {
        (_, H::Reason) => (
            h.text,
            match row.state {
                BoardState::Offline | BoardState::Unknown | BoardState::Idle => t.dim(),
                _ => Style::default(),
            },
        ),
        (BoardState::Waiting, _) => (one(&h.text), t.state(BoardState::Waiting)),
        (BoardState::Error, _) => (one(&h.text), t.state(BoardState::Error)),
        (BoardState::Working, _) => {
            // The step's age changes on screen: noted for the next redraw.
            if let Some(at) = row.running_tool.as_ref().and_then(|r| r.since) {
                crate::ui::fit::note_shown(crate::ui::fit::Shown::Age(at));
            }
            let line = format!("running {}", one(&h.line()));
            (line, if h.quiet { t.warn() } else { Style::default() })
        }
        (_, H::LastResult) => (format!("→ {}", one(&h.text)), t.dim()),
        (_, H::LatestRequest) => (format!("asked: {}", one(&h.text)), t.dim()),
        _ => (one(&h.text), t.dim()),
    }
}

/// Observed column: age of the Intercom observation, `(old)` past 60 s; future times are
/// flagged.
fn observed_cell(row: &Row, now: Ms, t: &Theme) -> (String, Style) {
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
