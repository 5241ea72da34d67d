//! Drawing the reply box (framed, or compact in short panes; it grows with the draft) and how
//! reply outcomes read on the row and in the details.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Span;

use crate::text::clip;
use crate::ui::app::App;
use crate::ui::compose::{layout, ReplyBox, MAX_REPLY_CHARS};
use crate::ui::fit::{clean, clock_time, put};
use crate::ui::ports::ReplyOutcome;
use crate::ui::theme::Theme;

/// `delivered|queued|unconfirmed <time> to <target>` / `failed (exit N): <stderr>` /
/// `not sent: <reason>`.
pub(super) fn receipt_text(o: &ReplyOutcome) -> String {
    match o {
        ReplyOutcome::Delivered {
            at,
            target,
            outcome,
        } => {
            format!("{outcome} {} to {}", clock_time(*at), clean(target))
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

/// Below this body height the box is compact (no frame) instead of framed.
pub(crate) const REPLY_BOX_MIN_BODY: u16 = 9;
/// Draft lines a framed box grows to before it scrolls with the cursor.
const MAX_FRAMED_LINES: u16 = 8;
/// Draft lines a compact box grows to.
const MAX_COMPACT_LINES: u16 = 3;

/// What the row and the details say about replies to `row_id`: in flight, else the last
/// receipt; `true` when it is a warning (failed or not sent).
pub(crate) fn receipt_line(app: &App, row_id: &str) -> Option<(String, bool)> {
    if let Some(to) = app.sending_to(row_id) {
        return Some((format!("sending to {}…", clean(to)), false));
    }
    let rc = app.receipt(row_id)?;
    let warn =
        !matches!(rc.outcome, ReplyOutcome::Delivered { outcome, .. } if outcome != "unconfirmed");
    Some((receipt_text(&rc.outcome), warn))
}

/// The box's status line and whether it is a warning: in flight, why the last Enter sent
/// nothing, why Enter would send nothing now, else the size of the draft.
pub(crate) fn box_status(app: &App, b: &ReplyBox) -> (String, bool) {
    if let Some(to) = app.sending_to(&b.row_id) {
        return (format!("sending to {}…", clean(to)), false);
    }
    if let Some(note) = &b.note {
        return (clean(note), true);
    }
    if let Some(why) = app.reply_blocker() {
        return (format!("{why} — Enter sends nothing"), true);
    }
    let d = app.draft(&b.row_id).cloned().unwrap_or_default();
    let n = d.text.chars().count();
    let lines = d.text.split('\n').count();
    let text = if lines > 1 {
        format!("{n}/{MAX_REPLY_CHARS} characters, {lines} lines")
    } else {
        format!("{n}/{MAX_REPLY_CHARS} characters")
    };
    (text, false)
}

/// The compact box's prompt: the seat's name (clipped to a third of the width) and `›`.
fn compact_prompt(b: &ReplyBox, width: u16) -> String {
    format!("{}› ", clip(&b.name, (width as usize / 3).max(4)))
}

/// Columns the draft gets per line.
fn edit_width(b: &ReplyBox, width: u16, framed: bool) -> usize {
    let indent = if framed {
        4
    } else {
        crate::text::width(&compact_prompt(b, width))
    };
    (width as usize).saturating_sub(indent).max(1)
}

/// Rows the open box takes at the bottom of a body `body_h` rows high, and whether it is framed;
/// `None` when no box is open or there is no room. It grows with the draft, within bounds, and
/// leaves the list a few rows.
pub(crate) fn box_rows(app: &App, width: u16, body_h: u16) -> Option<(u16, bool)> {
    let b = app.reply_box()?;
    if body_h == 0 || width == 0 {
        return None;
    }
    let framed = body_h >= REPLY_BOX_MIN_BODY;
    let draft = app.draft(&b.row_id).cloned().unwrap_or_default();
    let rows = layout(&draft, edit_width(b, width, framed)).0.len();
    let rows = u16::try_from(rows).unwrap_or(u16::MAX).max(1);
    if framed {
        let lines = rows.min(MAX_FRAMED_LINES).min(body_h - 6);
        return Some((lines + 2, true));
    }
    let room = body_h.saturating_sub(1).max(1);
    let status = u16::from(box_status(app, b).1);
    let lines = rows.min(MAX_COMPACT_LINES).min(room);
    Some(((lines + status).min(room), false))
}

/// Draw the open box into `r`; returns where the text cursor belongs (none while sending).
pub(crate) fn draw_reply(
    app: &App,
    b: &ReplyBox,
    framed: bool,
    buf: &mut Buffer,
    r: Rect,
    t: &Theme,
) -> Option<(u16, u16)> {
    if r.height == 0 || r.width == 0 {
        return None;
    }
    let (status, warn) = box_status(app, b);
    let status_style = if warn { t.warn() } else { t.dim() };
    let sending = app.is_sending(&b.row_id);
    let (first_y, lines_h, indent, cont) = if framed && r.height >= 3 {
        let title = format!("┌ Reply to {} → {} ", b.name, clean(&b.target));
        let top = format!("{}{}", title, "─".repeat(r.width as usize));
        put(buf, r.x, r.y, r.width, &[Span::styled(top, t.header())]);
        let bottom = format!("└ {status} {}", "─".repeat(r.width as usize));
        let y = r.y + r.height - 1;
        put(buf, r.x, y, r.width, &[Span::styled(bottom, status_style)]);
        (
            r.y + 1,
            r.height - 2,
            "│ > ".to_string(),
            "│   ".to_string(),
        )
    } else {
        let prompt = compact_prompt(b, r.width);
        let pad = " ".repeat(crate::text::width(&prompt));
        let mut h = r.height;
        if warn && r.height >= 2 {
            h -= 1;
            let y = r.y + h;
            put(buf, r.x, y, r.width, &[Span::styled(status, status_style)]);
        }
        (r.y, h, prompt, pad)
    };
    let indent_w = crate::text::width(&indent) as u16;
    let edit_w = (r.width as usize).saturating_sub(indent_w as usize).max(1);
    let draft = app.draft(&b.row_id).cloned().unwrap_or_default();
    let (lines, (cur_line, cur_col)) = layout(&draft, edit_w);
    let shown = lines_h as usize;
    let top = (cur_line + 1).saturating_sub(shown);
    let style = if sending { t.dim() } else { Style::default() };
    for (i, line) in lines.iter().skip(top).take(shown).enumerate() {
        let y = first_y + i as u16;
        // The first line shown always names the seat (compact) or marks the prompt (framed).
        let lead = if i == 0 { &indent } else { &cont };
        let lead_style = if framed { Style::default() } else { t.header() };
        put(
            buf,
            r.x,
            y,
            r.width,
            &[
                Span::styled(lead.clone(), lead_style),
                Span::styled(clip(line, edit_w), style),
            ],
        );
    }
    if sending || lines_h == 0 {
        return None;
    }
    let x = r.x.saturating_add(indent_w).saturating_add(cur_col as u16);
    let y = first_y + cur_line.saturating_sub(top) as u16;
    (x < r.x + r.width).then_some((x, y))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn receipts_read_as_the_spec_says() {
        let at = crate::clock::parse_iso("2026-11-29T10:00:03.000Z").unwrap();
        assert_eq!(
            receipt_text(&ReplyOutcome::Delivered {
                at,
                target: "dev:builder".into(),
                outcome: "delivered",
            }),
            "delivered 10:00:03 to dev:builder"
        );
        assert_eq!(
            receipt_text(&ReplyOutcome::Delivered {
                at,
                target: "dev:builder".into(),
                outcome: "queued",
            }),
            "queued 10:00:03 to dev:builder"
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
