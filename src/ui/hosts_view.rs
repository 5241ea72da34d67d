//! How other machines show on the sidebar (docs/behaviour.md §12): each row of another host
//! carries the host's name before its own; a host that is not answering gets a line under the
//! title (since when, and why, in ssh's or the host's words, sanitized), and its last rows stay
//! listed dimmed with their age — never drawn as live. The hosts view (`m`) lists every host:
//! its state, since when, its rows, when it last answered, and asks the selected one again.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Span;

use crate::clock::{short_age, Ms};
use crate::snapshot::{HostState, HostView, Row, Snapshot};
use crate::ui::fit::{age_secs, clean, clock_time, put, wrap};
use crate::ui::theme::Theme;

/// At most this many host lines; the rest are counted on the last one.
const MAX_HOST_LINES: usize = 3;

/// A host's state in the board's words: the JSON's `state` (`HostState::as_str`) in plain
/// words, one vocabulary for the host's line, its rows and the JSON.
pub(crate) fn phrase(state: HostState) -> &'static str {
    match state {
        HostState::Answering => "answering",
        HostState::Connecting => "connecting",
        HostState::NotAnswering => "not answering",
        HostState::AuthFailed => "authentication failed",
        HostState::HostKeyUnknown => "host key unknown",
        HostState::HostKeyChanged => "HOST KEY CHANGED",
        HostState::WrongVersion => "wrong version",
        HostState::Refused => "refused",
    }
}

/// What a host's state says, in words.
fn words(h: &HostView, now: Ms) -> String {
    let since = format!(
        "{} ({} ago)",
        clock_time(h.since),
        short_age(age_secs(now, h.since))
    );
    match h.state {
        HostState::Answering => "answering".into(),
        HostState::Connecting => "connecting…".into(),
        HostState::NotAnswering => match h.answered_at {
            Some(a) => format!(
                "not answering since {since}; its rows are from {} ago",
                short_age(age_secs(now, a))
            ),
            None => format!("not answering since {since}"),
        },
        HostState::HostKeyUnknown | HostState::HostKeyChanged => {
            format!("{}: refused", phrase(h.state))
        }
        s => phrase(s).into(),
    }
}

/// One line per host that is not answering (at most `MAX_HOST_LINES`).
pub(crate) fn host_lines(snap: &Snapshot, now: Ms) -> Vec<String> {
    let down: Vec<&HostView> = snap
        .hosts
        .iter()
        .filter(|h| h.state != HostState::Answering)
        .collect();
    let mut out: Vec<String> = down
        .iter()
        .take(MAX_HOST_LINES)
        .map(|h| {
            let mut l = format!("host {}: {}", clean(&h.name), words(h, now));
            if !h.detail.is_empty() {
                l.push_str(": ");
                l.push_str(&crate::text::one_line(&h.detail, 200));
            }
            l
        })
        .collect();
    if down.len() > MAX_HOST_LINES {
        if let Some(last) = out.last_mut() {
            last.push_str(&format!(" (+{} more hosts)", down.len() - MAX_HOST_LINES));
        }
    }
    if let Some(last) = out.last_mut() {
        last.push_str(RETRY_HINT);
    }
    out
}

/// The keys that ask the hosts again now (`Action::RetryHosts`) and open the hosts view, said
/// on the last host line.
const RETRY_HINT: &str = " · H: ask again now · m: hosts";

/// Longest detail a host's entry of the hosts view shows (ssh's or the host's words).
const MAX_DETAIL: usize = 300;
/// Most lines one host's detail takes in the hosts view.
const DETAIL_LINES: usize = 3;

/// The host the hosts view has selected: `selected` when the board still has it, else the first.
pub(crate) fn selected<'a>(snap: &'a Snapshot, selected: Option<&str>) -> Option<&'a HostView> {
    snap.hosts
        .iter()
        .find(|h| Some(h.name.as_str()) == selected)
        .or_else(|| snap.hosts.first())
}

/// "HH:MM:SS (5m ago)".
fn at_and_age(at: Ms, now: Ms) -> String {
    format!("{} ({} ago)", clock_time(at), short_age(age_secs(now, at)))
}

/// One host's lines in the hosts view at `w` columns: its name and state, since when, its
/// rows, when it last answered, how it is read, then what ssh or the host said.
fn entry_lines(h: &HostView, now: Ms, w: usize) -> Vec<String> {
    let mut out = vec![format!("{}  {}", clean(&h.name), phrase(h.state))];
    let answered = match h.answered_at {
        Some(a) => format!("last answered {}", at_and_age(a, now)),
        None => "never answered yet".to_string(),
    };
    let rows = match h.seats {
        1 => "1 row".to_string(),
        n => format!("{n} rows"),
    };
    let mut facts = format!("since {} · {rows} · {answered}", at_and_age(h.since, now));
    if let Some(via) = h.via {
        facts.push_str(&format!(" · via {via}"));
    }
    let room = w.saturating_sub(2).max(1);
    out.extend(wrap(&facts, room, usize::MAX));
    let detail = crate::text::one_line(&h.detail, MAX_DETAIL);
    if !detail.is_empty() {
        out.extend(wrap(&detail, room, DETAIL_LINES));
    }
    out
}

/// The hosts view's lines at `w` columns: a title, then each host's entry (`true` on the
/// selected host's lines); the first line of an entry is its name, the rest indented.
pub(crate) fn view_lines(
    snap: &Snapshot,
    sel: Option<&str>,
    now: Ms,
    w: usize,
) -> Vec<(String, bool)> {
    let answering = snap
        .hosts
        .iter()
        .filter(|h| h.state == HostState::Answering)
        .count();
    let title = if snap.hosts.is_empty() {
        "Hosts: none (the hosts file names the other machines)".to_string()
    } else {
        format!(
            "Hosts: {} other, {answering} answering (this machine: local)",
            snap.hosts.len()
        )
    };
    let mut out = vec![(title, false)];
    let chosen = selected(snap, sel).map(|h| h.name.as_str());
    for h in &snap.hosts {
        let is = Some(h.name.as_str()) == chosen;
        for (i, l) in entry_lines(h, now, w).into_iter().enumerate() {
            let mark = match (i, is) {
                (0, true) => "▸ ",
                _ => "  ",
            };
            out.push((format!("{mark}{l}"), is));
        }
    }
    out
}

/// Draw the hosts view into `r`: it covers the list while open; scrolled so the selected
/// host's entry shows (the title stays).
pub(crate) fn draw_hosts(
    snap: &Snapshot,
    sel: Option<&str>,
    now: Ms,
    buf: &mut Buffer,
    r: Rect,
    t: &Theme,
) {
    if r.height == 0 || r.width == 0 {
        return;
    }
    let all = view_lines(snap, sel, now, r.width as usize);
    let cap = (r.height as usize).saturating_sub(1);
    let first = all.iter().skip(1).position(|(_, s)| *s).unwrap_or(0);
    let last = all.iter().skip(1).rposition(|(_, s)| *s).unwrap_or(0) + 1;
    // The selected entry's end on screen, and its start before its end when it is taller.
    let scroll = last.saturating_sub(cap).min(first);
    let blank = " ".repeat(r.width as usize);
    for y in r.y..r.y + r.height {
        // Blank the line first: the view covers what was drawn under it.
        put(buf, r.x, y, r.width, &[Span::raw(blank.clone())]);
    }
    if let Some((title, _)) = all.first() {
        put(
            buf,
            r.x,
            r.y,
            r.width,
            &[Span::styled(title.clone(), t.header())],
        );
    }
    for (i, (text, is)) in all.iter().skip(1 + scroll).take(cap).enumerate() {
        let span = if *is {
            Span::styled(text.clone(), t.selected())
        } else {
            Span::raw(text.clone())
        };
        put(buf, r.x, r.y + 1 + i as u16, r.width, &[span]);
    }
}

/// The Detail cell of a row whose host is not answering: the host's state in the host line's
/// words (`hosts`: the board's), how old the row is, and its last state.
pub(crate) fn stale_detail(row: &Row, hosts: &[HostView], now: Ms) -> Option<String> {
    let h = row.host.as_ref().filter(|h| !h.answering)?;
    let state = hosts
        .iter()
        .find(|v| v.name == h.name)
        .map_or(HostState::NotAnswering, |v| v.state);
    // A host answering again whose row is not yet refreshed is still this row's last word.
    let state = match state {
        HostState::Answering | HostState::Connecting => HostState::NotAnswering,
        s => s,
    };
    Some(format!(
        "host {} {}: as of {} ago, {}",
        clean(&h.name),
        phrase(state),
        short_age(age_secs(now, h.answered_at)),
        row.state.as_str()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::RowHost;
    use crate::ui::fit::prefix;

    fn view(state: HostState) -> HostView {
        HostView {
            name: "build".into(),
            state,
            since: 10_000,
            answered_at: Some(5_000),
            via: Some("watch"),
            detail: "Connection refused\u{1b}[2J".into(),
            seats: 3,
        }
    }

    #[test]
    fn hosts_not_answering_get_a_line_with_their_age_and_words() {
        let mut snap = crate::ui::demo::demo_snapshot(1, 0, 70_000);
        snap.hosts = vec![view(HostState::Answering), view(HostState::NotAnswering)];
        let lines = host_lines(&snap, 70_000);
        assert_eq!(lines.len(), 1);
        assert!(
            lines[0].contains("host build: not answering since"),
            "{}",
            lines[0]
        );
        assert!(
            lines[0].contains("1m ago") && lines[0].contains("Connection refused"),
            "{}",
            lines[0]
        );
        assert!(!lines[0].contains('\u{1b}'));
        snap.hosts = (0..5).map(|_| view(HostState::HostKeyChanged)).collect();
        let lines = host_lines(&snap, 70_000);
        assert_eq!(lines.len(), MAX_HOST_LINES);
        assert!(lines[2].contains("(+2 more hosts) · H: ask again now"));
        assert!(!lines[1].contains("H: ask"));
    }

    #[test]
    fn the_hosts_view_lists_every_host_and_keeps_the_selected_one_in_sight() {
        let mut snap = crate::ui::demo::demo_snapshot(1, 0, 70_000);
        let mut up = view(HostState::Answering);
        up.name = "gpu".into();
        up.detail.clear();
        up.answered_at = Some(69_000);
        up.seats = 1;
        let mut hosts = vec![up];
        for i in 0..6 {
            let mut h = view(HostState::NotAnswering);
            h.name = format!("b{i}");
            hosts.push(h);
        }
        hosts[6].answered_at = None;
        hosts[6].via = None;
        snap.hosts = hosts;
        let lines = view_lines(&snap, Some("b0"), 70_000, 120);
        let text: Vec<&str> = lines.iter().map(|(l, _)| l.as_str()).collect();
        assert_eq!(text[0], "Hosts: 7 other, 1 answering (this machine: local)");
        assert_eq!(text[1], "  gpu  answering");
        assert_eq!(
            text[2],
            "  since 00:00:10 (1m ago) · 1 row · last answered 00:01:09 (1s ago) · via watch"
        );
        assert_eq!(text[3], "▸ b0  not answering");
        assert!(lines[3].1 && lines[4].1 && lines[5].1 && !lines[6].1);
        assert!(
            text[4].contains("3 rows · last answered 00:00:05 (1m ago)"),
            "{}",
            text[4]
        );
        assert_eq!(text[5], "  Connection refused");
        assert!(text.iter().all(|l| !l.contains('\u{1b}')));
        assert_eq!(
            text[19],
            "  since 00:00:10 (1m ago) · 3 rows · never answered yet"
        );
        // No host chosen (or one gone): the first.
        let first = view_lines(&snap, Some("gone"), 70_000, 120);
        assert!(first[1].0.starts_with("▸ gpu"));

        // A short view scrolls to the selected host; the title stays.
        let mut buf = Buffer::empty(Rect::new(0, 0, 60, 6));
        let t = Theme { color: false };
        let area = buf.area;
        draw_hosts(&snap, Some("b5"), 70_000, &mut buf, area, &t);
        let rows: Vec<String> = (0..6)
            .map(|y| (0..60).map(|x| buf[(x, y)].symbol()).collect::<String>())
            .collect();
        assert!(rows[0].starts_with("Hosts: 7 other"), "{rows:?}");
        assert!(rows.iter().any(|r| r.starts_with("▸ b5")), "{rows:?}");
        assert!(!rows.iter().any(|r| r.contains("gpu")), "{rows:?}");
        // None on the board: it says where they come from.
        snap.hosts.clear();
        assert_eq!(view_lines(&snap, None, 70_000, 80).len(), 1);
    }

    #[test]
    fn a_row_of_a_silent_host_says_so() {
        let mut row = crate::ui::demo::demo_row(1, 0, 70_000);
        assert_eq!(stale_detail(&row, &[], 70_000), None);
        row.host = Some(RowHost {
            name: "gpu".into(),
            key: "p/a".into(),
            session_id: None,
            answered_at: 10_000,
            answering: false,
        });
        let d = stale_detail(&row, &[], 70_000).unwrap();
        assert!(d.starts_with("host gpu not answering: as of 1m ago"), "{d}");
        let mut changed = view(HostState::HostKeyChanged);
        changed.name = "gpu".into();
        let d = stale_detail(&row, &[changed], 70_000).unwrap();
        assert!(
            d.starts_with("host gpu HOST KEY CHANGED: as of 1m ago"),
            "{d}"
        );
        assert_eq!(prefix(&row).as_deref(), Some("gpu:"));
    }
}
