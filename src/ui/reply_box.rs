//! The one-line reply editor and how reply outcomes read.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Span;

use crate::snapshot::{ReplyPath, Snapshot};
use crate::text::{clip, sanitize, width};
use crate::ui::app::App;
use crate::ui::fit::{clean, clock_time, name_of, put};
use crate::ui::ports::ReplyOutcome;
use crate::ui::theme::Theme;

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

pub(crate) fn draw_reply(
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

#[cfg(test)]
mod tests {
    use super::*;

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
