//! How other machines show on the sidebar (docs/behaviour.md §12): each row of another host
//! carries the host's name before its own; a host that is not answering gets a line under the
//! title (since when, and why, in ssh's or the host's words, sanitized), and its last rows stay
//! listed dimmed with their age — never drawn as live.

use crate::clock::{short_age, Ms};
use crate::snapshot::{HostState, HostView, Row, Snapshot};
use crate::ui::fit::{age_secs, clean, clock_time};

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

/// The key that asks the hosts again now (`Action::RetryHosts`), said on the last host line.
const RETRY_HINT: &str = " · H: ask again now";

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
