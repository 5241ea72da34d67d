//! The help overlay (`?`): every key, from the binding table, per part of the sidebar. It
//! covers the list and panels while open; it scrolls; Esc, `?`, `q` or ⏎ close it.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Span;

use crate::ui::fit::{cell, put};
use crate::ui::keys;
use crate::ui::theme::Theme;

/// Width of the keys column.
const KEYS_W: u16 = 16;

/// The overlay's lines: (text, is a section title).
fn lines() -> Vec<(String, String, bool)> {
    let mut out = Vec::new();
    for (title, rows) in keys::overlay() {
        out.push((title.to_string(), String::new(), true));
        for (k, what) in rows {
            out.push((k, what.to_string(), false));
        }
    }
    out
}

/// How many lines the overlay has (scrolling stops at the last).
pub(crate) fn line_count() -> usize {
    lines().len()
}

/// Draw the overlay into `r`, its title pinned, scrolled by `scroll` lines (clamped).
pub(crate) fn draw_help(scroll: usize, buf: &mut Buffer, r: Rect, t: &Theme) {
    if r.height == 0 || r.width == 0 {
        return;
    }
    let title = "Keys (Esc or ? closes; PgDn/PgUp scroll)";
    put(buf, r.x, r.y, r.width, &[Span::styled(title, t.header())]);
    let all = lines();
    let cap = r.height as usize - 1;
    let scroll = scroll.min(all.len().saturating_sub(cap));
    for (i, (a, b, section)) in all.iter().skip(scroll).take(cap).enumerate() {
        let y = r.y + 1 + i as u16;
        let spans = if *section {
            vec![Span::styled(a.clone(), t.header())]
        } else {
            vec![
                Span::raw("  "),
                Span::styled(cell(a, KEYS_W), t.dim()),
                Span::raw(" "),
                Span::raw(b.clone()),
            ]
        };
        // Blank the line first: the overlay covers what was drawn under it.
        put(
            buf,
            r.x,
            y,
            r.width,
            &[Span::raw(" ".repeat(r.width as usize))],
        );
        put(buf, r.x, y, r.width, &spans);
    }
    for y in (r.y + 1 + all.len().saturating_sub(scroll).min(cap) as u16)..(r.y + r.height) {
        put(
            buf,
            r.x,
            y,
            r.width,
            &[Span::raw(" ".repeat(r.width as usize))],
        );
    }
}
