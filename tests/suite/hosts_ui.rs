//! How other machines look on the sidebar (a drawn frame, ratatui TestBackend): each row of a
//! host carries the host's name, a host that is not answering gets a line under the title
//! saying since when and why (ssh's words sanitized), and its last rows are dimmed with their
//! age, never drawn as live. Pure: no ssh here (the real hosts are in hosts_board.rs).

use intercom_pane::seam::clock::{parse_iso, Ms};
use intercom_pane::seam::snapshot::{HostState, HostView, RowHost};
use intercom_pane::seam::ui::demo::{demo_row, demo_snapshot};
use ratatui::style::Color;

use crate::ui_render::{app_with, buffer, text};

fn now() -> Ms {
    parse_iso("2026-11-29T10:00:03.000Z").unwrap()
}

fn host_row(i: usize, host: &str, answering: bool) -> intercom_pane::seam::snapshot::Row {
    let mut r = demo_row(i, 0, now());
    r.name = "Builder".into();
    r.id = format!("{host}\u{1f}{i}");
    r.host = Some(RowHost {
        name: host.into(),
        key: "root/Builder".into(),
        session_id: None,
        answered_at: now() - 95_000,
        answering,
    });
    r
}

#[test]
fn host_rows_are_tagged_and_a_silent_host_is_said_and_dimmed() {
    let mut snap = demo_snapshot(2, 0, now());
    snap.rows.truncate(1);
    snap.rows[0].name = "Builder".into();
    snap.rows.push(host_row(1, "gpu", true));
    snap.rows.push(host_row(2, "build", false));
    snap.hosts = vec![
        HostView {
            name: "gpu".into(),
            state: HostState::Answering,
            since: now() - 300_000,
            answered_at: Some(now() - 1_000),
            via: Some("watch"),
            detail: String::new(),
            seats: 1,
        },
        HostView {
            name: "build".into(),
            state: HostState::NotAnswering,
            since: now() - 90_000,
            answered_at: Some(now() - 95_000),
            via: Some("poll"),
            detail: "ssh: connect to host 10.0.0.2 port 22: Connection refused\u{1b}[31m".into(),
            seats: 1,
        },
    ];
    let a = app_with(true, snap);
    let b = buffer(&a, 200, 12);
    let screen = text(&b);
    assert!(screen.contains("gpu:Builder"), "{screen}");
    assert!(screen.contains("build:Builder"), "{screen}");
    assert!(
        screen.contains("host build: not answering since 09:58:33 (1m ago); its rows are from 1m ago: ssh: connect to host 10.0.0.2 port 22: Connection refused"),
        "{screen}"
    );
    assert!(!screen.contains('\u{1b}'));
    assert!(
        screen.contains("host build not answering: as of 1m ago"),
        "{screen}"
    );
    assert!(
        !screen.contains("host gpu"),
        "an answering host has no line: {screen}"
    );
    // The silent host's row is dimmed, cell by cell; the answering host's is not.
    let y_of = |needle: &str| {
        (0..b.area.height)
            .find(|y| {
                let line: String = (0..b.area.width).map(|x| b[(x, *y)].symbol()).collect();
                line.contains(needle)
            })
            .unwrap()
    };
    let (silent, live) = (y_of("build:Builder"), y_of("gpu:Builder"));
    let dim =
        |y: u16| (1..60).all(|x| b[(x, y)].fg == Color::DarkGray || b[(x, y)].symbol() == " ");
    assert!(dim(silent), "{screen}");
    assert!(!dim(live), "{screen}");
}
