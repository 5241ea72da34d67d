//! The help overlay (`?`): every key, from the binding table, per part of the sidebar. It
//! covers the list and panels while open; it scrolls a line (↓/↑) or a page of the rows it has
//! (PgDn/PgUp); a description too long for the width goes on to the next line, so a narrow pane
//! (a phone over ssh, 50 columns) reads every word; Esc, `?`, `q` or ⏎ close it.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Span;

use crate::text::width;
use crate::ui::fit::{cell, put, wrap};
use crate::ui::keys;
use crate::ui::theme::Theme;

/// Widest keys column.
const KEYS_W: usize = 16;
/// Narrowest description column: below it a description goes under its keys.
const MIN_WHAT_W: usize = 16;

/// One line of the overlay: a section title, or a binding's keys (empty on a continuation)
/// and (part of) what it does.
enum HelpLine {
    Section(&'static str),
    Key(String, String),
}

/// The overlay's lines at `w` columns: each description wrapped to the room beside its keys.
fn lines(w: u16) -> Vec<HelpLine> {
    let table = keys::overlay();
    let keys_w = table
        .iter()
        .flat_map(|(_, rows)| rows.iter().map(|(k, _)| width(k)))
        .max()
        .unwrap_or(0)
        .min(KEYS_W);
    let w = w as usize;
    // "  KEYS what": two columns when the description has room, else the description under
    // its keys, indented.
    let beside = w.saturating_sub(2 + keys_w + 1);
    let mut out = Vec::new();
    for (title, rows) in table {
        out.push(HelpLine::Section(title));
        for (k, what) in rows {
            if beside >= MIN_WHAT_W {
                for (i, part) in wrap(what, beside, usize::MAX).into_iter().enumerate() {
                    let k = if i == 0 {
                        cell(&k, keys_w as u16)
                    } else {
                        " ".repeat(keys_w)
                    };
                    out.push(HelpLine::Key(k, part));
                }
            } else {
                out.push(HelpLine::Key(k, String::new()));
                for part in wrap(what, w.saturating_sub(4).max(1), usize::MAX) {
                    out.push(HelpLine::Key("  ".into(), part));
                }
            }
        }
    }
    out
}

/// Rows of lines under the title in a body `body_h` rows tall.
fn visible(body_h: u16) -> usize {
    (body_h as usize).saturating_sub(1)
}

/// One page: the lines shown, less one kept from the page before (at least one).
pub(crate) fn page(body_h: u16) -> usize {
    visible(body_h).saturating_sub(1).max(1)
}

/// The furthest scroll in a `body_w × body_h` body: the last line at its bottom.
pub(crate) fn max_scroll(body_w: u16, body_h: u16) -> usize {
    lines(body_w).len().saturating_sub(visible(body_h))
}

/// Draw the overlay into `r`, its title pinned (with which lines show), scrolled by `scroll`
/// lines (clamped).
pub(crate) fn draw_help(scroll: usize, buf: &mut Buffer, r: Rect, t: &Theme) {
    if r.height == 0 || r.width == 0 {
        return;
    }
    let all = lines(r.width);
    let cap = visible(r.height);
    let scroll = scroll.min(all.len().saturating_sub(cap));
    let shown = all.len().saturating_sub(scroll).min(cap);
    let title = if shown < all.len() {
        format!(
            "Keys {}–{} of {} (PgDn/PgUp; Esc closes)",
            scroll + 1,
            scroll + shown,
            all.len()
        )
    } else {
        "Keys (Esc or ? closes)".to_string()
    };
    let blank = " ".repeat(r.width as usize);
    put(buf, r.x, r.y, r.width, &[Span::raw(blank.clone())]);
    put(buf, r.x, r.y, r.width, &[Span::styled(title, t.header())]);
    for i in 0..cap {
        let y = r.y + 1 + i as u16;
        // Blank the line first: the overlay covers what was drawn under it.
        put(buf, r.x, y, r.width, &[Span::raw(blank.clone())]);
        let spans = match all.get(scroll + i) {
            Some(HelpLine::Section(title)) => vec![Span::styled(*title, t.header())],
            Some(HelpLine::Key(k, what)) => vec![
                Span::raw("  "),
                Span::styled(k.clone(), t.dim()),
                Span::raw(" "),
                Span::raw(what.clone()),
            ],
            None => continue,
        };
        put(buf, r.x, y, r.width, &spans);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(w: u16) -> Vec<String> {
        lines(w)
            .into_iter()
            .map(|l| match l {
                HelpLine::Section(s) => s.to_string(),
                HelpLine::Key(k, what) => format!("  {k} {what}"),
            })
            .collect()
    }

    #[test]
    fn every_word_fits_its_width_and_a_page_is_the_rows_shown_less_one() {
        for w in [30u16, 50, 80] {
            let all = text(w);
            assert!(
                all.iter().all(|l| width(l.trim_end()) <= w as usize),
                "{w}: {all:?}"
            );
            // Nothing is cut: every description's words are there.
            let joined = all.join(" ");
            for (_, rows) in keys::overlay() {
                for (_, what) in rows {
                    for word in what.split(' ') {
                        assert!(joined.contains(word), "{w}: {word}");
                    }
                }
            }
        }
        assert!(text(50).len() > text(80).len(), "narrow panes wrap");
        assert_eq!(page(10), 8);
        assert_eq!(page(2), 1);
        assert_eq!(page(0), 1);
        assert_eq!(max_scroll(80, 200), 0);
        assert_eq!(max_scroll(80, 11), lines(80).len() - 10);
    }
}
