//! `scan --print`: one line per seat, then the summary line.

use crate::board::record::SeatRecord;
use crate::clock::{format_iso, short_age};
use crate::text::{clip, sanitize};

/// First column `*` waiting on you, `s` seen, blank otherwise; last line
/// `board: <dir> (N sessions, N waiting on you, N seen)`.
pub fn print_table(records: &[SeatRecord], board_dir: &str) -> String {
    let mut out = String::new();
    let name_w = records
        .iter()
        .map(|r| crate::text::width(&sanitize(r.key().as_str())).min(40))
        .max()
        .unwrap_or(0);
    for r in records {
        let mark = if r.waiting_on_you {
            '*'
        } else if r.seen {
            's'
        } else {
            ' '
        };
        let key = clip(&sanitize(r.key().as_str()), 40);
        let pad = name_w.saturating_sub(crate::text::width(&key));
        let age = r
            .age_seconds
            .map(short_age)
            .unwrap_or_else(|| "-".to_string());
        let preview = match &r.relaunched_at {
            Some(t) => format!("relaunched at {}, no messages since", format_iso(*t)),
            None => r
                .task
                .as_deref()
                .map(sanitize)
                .unwrap_or_else(|| "unknown task".to_string()),
        };
        out.push_str(&format!(
            "{mark} {key}{} {:<8} {:>4}  {}\n",
            " ".repeat(pad),
            r.state.as_str(),
            if r.relaunched_at.is_some() { "-" } else { &age },
            clip(&preview, 80)
        ));
    }
    let waiting = records.iter().filter(|r| r.waiting_on_you).count();
    let seen = records.iter().filter(|r| r.seen).count();
    out.push_str(&format!(
        "board: {board_dir} ({} sessions, {waiting} waiting on you, {seen} seen)\n",
        records.len()
    ));
    out
}
