//! Small text helpers shared by the panels: sanitize-or-dash, names, ages, padding, wrapping.

use ratatui::buffer::Buffer;
use ratatui::text::{Line, Span};

use std::cell::RefCell;

use crate::clock::{format_iso, short_age, Ms};
use crate::snapshot::Row;
use crate::text::{clip, sanitize, width};

/// Sanitized evidence text; `-` when nothing printable is left (blank never passes for a value).
pub(crate) fn clean(s: &str) -> String {
    let c = sanitize(s);
    if c.trim().is_empty() {
        "-".to_string()
    } else {
        c
    }
}

/// The name prefix of a row of another host (`build:`).
pub(crate) fn prefix(row: &Row) -> Option<String> {
    row.host.as_ref().map(|h| format!("{}:", clean(&h.name)))
}

/// A row's name as shown: the sanitized name, else its seen key, else `(unnamed)`; a row of
/// another host starts with that host's name (`build:Builder`).
pub(crate) fn name_of(row: &Row) -> String {
    let host = prefix(row).unwrap_or_default();
    for s in [&row.name, &row.seen_key] {
        let c = sanitize(s);
        if !c.trim().is_empty() {
            return format!("{host}{c}");
        }
    }
    format!("{host}(unnamed)")
}

/// A seat's name as shown, from what the person saw (sanitized, never blank).
pub(crate) fn name_of_seat(seat: &crate::ui::ports::SeatRef) -> String {
    for s in [&seat.name, &seat.seen_key] {
        let c = sanitize(s);
        if !c.trim().is_empty() {
            return c;
        }
    }
    "(unnamed)".to_string()
}

/// A time a frame showed text from, and how that text changes by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shown {
    /// An age of `at` (`short_age`, or "in the future" while it is ahead of the clock).
    Age(Ms),
    /// Text that stays until this time, then changes (a finished job's line goes).
    Until(Ms),
}

thread_local! {
    /// While `drawing` runs: what the frame showed that changes with time alone. Noted where
    /// the text is made, so the loop redraws when the screen would differ and never for an age
    /// nobody sees (a row's last activity while only its observation age is listed). Only the
    /// drawing thread's own frame is noted; `None` otherwise (tests, `views/`).
    static SHOWN: RefCell<Option<Vec<Shown>>> = const { RefCell::new(None) };
}

/// Note something the frame being drawn shows that changes with time.
pub(crate) fn note_shown(s: Shown) {
    SHOWN.with(|c| {
        if let Some(v) = c.borrow_mut().as_mut() {
            // Bounded: a frame shows a few hundred cells at most.
            if v.len() < 4096 {
                v.push(s);
            }
        }
    });
}

/// Run `draw` and return what it showed that changes with time.
pub(crate) fn drawing<R>(draw: impl FnOnce() -> R) -> (R, Vec<Shown>) {
    let outer = SHOWN.with(|c| c.replace(Some(Vec::new())));
    let out = draw();
    let shown = SHOWN.with(|c| c.replace(outer)).unwrap_or_default();
    (out, shown)
}

/// Whole seconds since `at`, never negative, and no overflow whatever the evidence says. The
/// caller shows it: it is noted for the next redraw.
pub(crate) fn age_secs(now: Ms, at: Ms) -> i64 {
    note_shown(Shown::Age(at));
    elapsed_secs(now, at)
}

/// `age_secs` for text that changes in its own steps (the title's `<1m`, then minutes): not
/// noted; the caller's steps are the loop's to know.
pub(crate) fn elapsed_secs(now: Ms, at: Ms) -> i64 {
    now.saturating_sub(at).max(0) / 1000
}

/// More than a second ahead of our clock: shown as such, never as a fresh age.
pub(crate) fn is_future(now: Ms, at: Ms) -> bool {
    note_shown(Shown::Age(at));
    at > now.saturating_add(1_000)
}

/// `HH:MM:SS` UTC of a timestamp.
pub(crate) fn clock_time(ms: Ms) -> String {
    let iso = format_iso(ms);
    iso.get(11..19).unwrap_or(&iso).to_string()
}

/// `12s ago`, or `in the future (<time>)` when evidence is ahead of our clock.
pub(crate) fn age_text(now: Ms, at: Ms) -> String {
    if is_future(now, at) {
        format!("in the future ({})", format_iso(at))
    } else {
        format!("{} ago", short_age(age_secs(now, at)))
    }
}

/// Clip to `w` columns and pad with spaces to exactly `w`.
pub(crate) fn cell(s: &str, w: u16) -> String {
    let w = w as usize;
    let mut c = clip(s, w);
    let cw = width(&c);
    if cw < w {
        c.push_str(&" ".repeat(w - cw));
    }
    c
}

/// Put spans on one line, clipped to `w` columns (ratatui cuts by display width).
pub(crate) fn put(buf: &mut Buffer, x: u16, y: u16, w: u16, spans: &[Span<'_>]) {
    let line = Line::from(spans.to_vec());
    buf.set_line(x, y, &line, w);
}

/// Wrap by display width at spaces where possible, at most `max_lines` lines (the last one
/// ends with `…` when text remains). Words wider than a line are cut by grapheme.
pub(crate) fn wrap(s: &str, w: usize, max_lines: usize) -> Vec<String> {
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

/// Raw multi-line evidence text for a panel: each line sanitized and wrapped, blank-line runs
/// kept as one blank line, at most `max_lines` lines (the last ends with `…` when text remains).
pub(crate) fn wrap_text(raw: &str, w: usize, max_lines: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cut = false;
    for line in raw.lines() {
        let clean = sanitize(line);
        if clean.trim().is_empty() {
            if out.last().is_some_and(|l| !l.is_empty()) {
                out.push(String::new());
            }
            continue;
        }
        for part in wrap(clean.trim_end(), w, usize::MAX) {
            if out.len() == max_lines {
                cut = true;
                break;
            }
            out.push(part);
        }
        if cut {
            break;
        }
    }
    while out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    if cut {
        out = ellipsize(out, w);
    }
    out
}

/// Mark the last kept line as cut: it ends with `…` within `w` columns.
pub(crate) fn ellipsize(mut lines: Vec<String>, w: usize) -> Vec<String> {
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
    fn multi_line_text_keeps_its_paragraphs_and_its_cap() {
        let t = "Choose:\n\n\n1. staging\x1b[2J\r\n2. production\n";
        assert_eq!(
            wrap_text(t, 20, 10),
            vec!["Choose:", "", "1. staging", "2. production"]
        );
        let capped = wrap_text(t, 20, 3);
        assert_eq!(capped.len(), 3);
        assert!(capped[2].ends_with('…'));
        assert!(wrap_text("\n\n", 10, 3).is_empty());
    }

    #[test]
    fn blank_evidence_and_extreme_times() {
        assert_eq!(clean("\u{1b}[2J"), "-");
        assert_eq!(age_secs(0, i64::MIN), i64::MAX / 1000);
        assert_eq!(age_secs(5_000, 10_000), 0);
        assert!(is_future(0, i64::MAX) && !is_future(i64::MAX, 0));
        assert_eq!(cell("日本語", 5), "日本…");
        assert_eq!(cell("ab", 4), "ab  ");
    }
}
