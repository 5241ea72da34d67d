//! The sidebar never panics: every size from 0×0 up, every panel, and hostile or extreme rows.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use intercom_pane::seam::board::reason::StateSource;
use intercom_pane::seam::clock::{parse_iso, FixedClock, Ms};
use intercom_pane::seam::snapshot::{ReplyPath, RosterCode, RosterStatus, Snapshot};
use intercom_pane::seam::ui::app::{App, Msg, Options};
use intercom_pane::seam::ui::demo::{demo_row, demo_snapshot};
use intercom_pane::seam::ui::ports::ReplyOutcome;
use intercom_pane::seam::ui::render::draw;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

fn now() -> Ms {
    parse_iso("2026-11-29T10:00:03.000Z").unwrap()
}

fn press(a: &mut App, code: KeyCode) {
    a.update(Msg::Key(KeyEvent::new(code, KeyModifiers::NONE)));
}

fn hostile_snapshot() -> Snapshot {
    let mut snap = demo_snapshot(12, 3, now());
    let names = [
        String::new(),
        "\u{1b}\u{1b}\u{1b}[".to_string(),
        "a\u{301}\u{301}\u{301}e\u{308}".to_string(),
        "👩‍👩‍👧‍👦🇫🇷".repeat(50),
        "x".repeat(20_000),
        "\u{200b}\u{feff}zero-width".to_string(),
        "\u{9b}31m\u{9d}osc\u{9c}c1".to_string(),
        "tab\there\nnewline\r".to_string(),
    ];
    for (r, name) in snap.rows.iter_mut().zip(names) {
        r.name = name.clone();
        r.responsibility = Some(name.clone());
        r.task = Some(name.clone());
        r.state_source = StateSource::OtherPaneProcess {
            seat: name.clone(),
            session: name.clone(),
            configured: name.clone(),
        };
        r.last_error = Some(name.clone());
        if let Some(rep) = r.report.as_mut() {
            rep.summary = name.clone();
        }
        if let Some(a) = r.activity.as_mut() {
            // The status is a typed code now: only the label can carry hostile text.
            a.label = name;
        }
    }
    // Extreme times: far future, far past, the ends of the integer range.
    let times = [i64::MIN, i64::MAX, 0, now() + 86_400_000];
    for (r, t) in snap.rows.iter_mut().skip(8).zip(times) {
        r.last_activity = Some(t);
        r.connection.checked_at = Some(t);
        if let Some(a) = r.activity.as_mut() {
            a.observed_at = Some(t);
        }
        if let Some(rep) = r.report.as_mut() {
            rep.updated_at = t;
        }
        r.reply = ReplyPath::Available {
            target: "\u{1b}]0;t\u{7}target".into(),
        };
    }
    snap.scanned_at = i64::MIN;
    snap.errors = vec!["\u{1b}[2Jerr".into(); 3];
    snap
}

fn apps() -> Vec<(&'static str, App)> {
    let mk = |snap: Snapshot| {
        let mut a = App::new(
            Arc::new(FixedClock(now())),
            Options {
                color: true,
                reply_unavailable: None,
                workers_unavailable: None,
                spawn_unavailable: None,
            },
        );
        a.update(Msg::SnapshotArrived(snap));
        a
    };
    let mut out = Vec::new();
    out.push(("list", mk(hostile_snapshot())));
    let mut d = mk(hostile_snapshot());
    press(&mut d, KeyCode::Down);
    press(&mut d, KeyCode::Enter);
    out.push(("details", d));
    let mut r = mk(hostile_snapshot());
    press(&mut r, KeyCode::End);
    press(&mut r, KeyCode::Char('r'));
    for c in "日本語のとても長い返事".repeat(20).chars() {
        press(&mut r, KeyCode::Char(c));
    }
    press(&mut r, KeyCode::Left);
    out.push(("reply", r));
    // A multi-line draft of wide text, taller than any pane; then sent, with a hostile receipt.
    let multiline = || {
        let mut m = mk(hostile_snapshot());
        press(&mut m, KeyCode::End);
        press(&mut m, KeyCode::Char('r'));
        m.update(Msg::Paste("日本語\n\n\tx\n".repeat(60)));
        press(&mut m, KeyCode::Up);
        m
    };
    out.push(("multiline", multiline()));
    let mut m = multiline();
    let id = m.reply_open().unwrap().to_string();
    press(&mut m, KeyCode::Enter);
    m.update(Msg::ReplyFinished {
        row_id: id,
        outcome: ReplyOutcome::Failed {
            exit: Some(1),
            signal: Some(9),
            stderr: "\u{1b}]0;pwned\u{7}\n".repeat(500),
        },
    });
    out.push(("receipt", m));
    // A refusal holding the keyboard (the hostile first row has no reply path).
    let mut n = mk(hostile_snapshot());
    press(&mut n, KeyCode::Char('r'));
    assert!(n.notice().is_some());
    out.push(("notice", n));
    out.push((
        "unavailable",
        mk(Snapshot {
            scanned_at: now(),
            roster: RosterStatus::Unavailable {
                code: RosterCode::Config("config_invalid"),
                reason: "\u{1b}]0;x\u{7}".repeat(1000),
            },
            rows: vec![demo_row(0, 0, now())],
            truncated: true,
            errors: vec![],
            usage: Default::default(),
            hosts: vec![],
        }),
    ));
    out.push(("many", mk(demo_snapshot(300, 0, now()))));
    out
}

#[test]
fn no_size_or_input_panics_and_nothing_leaks_controls() {
    let heights = [0u16, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 13, 14, 15, 24, 41];
    for (what, app) in apps() {
        for w in (0u16..=40).chain((41..=130).step_by(7)).chain([200, 400]) {
            for &h in &heights {
                let area = Rect::new(0, 0, w, h);
                let mut buf = Buffer::empty(area);
                let cursor = draw(&app, &mut buf, area);
                if let Some((x, y)) = cursor {
                    assert!(x < w.max(1) + 1 && y < h, "{what} {w}x{h}: cursor {x},{y}");
                }
                for cell in buf.content() {
                    assert!(
                        !cell.symbol().chars().any(|c| c.is_control()),
                        "{what} {w}x{h}: control char on screen"
                    );
                }
            }
        }
    }
}

#[test]
fn hostile_names_keep_the_columns_aligned() {
    use intercom_pane::seam::ui::layout::{fit, with_source, Col};
    let (_, app) = apps().into_iter().next().unwrap();
    for w in [60u16, 80, 120] {
        let area = Rect::new(0, 0, w, 24);
        let mut buf = Buffer::empty(area);
        draw(&app, &mut buf, area);
        let state = fit(w, &with_source(&app.snapshot().unwrap().rows))
            .cols
            .into_iter()
            .find(|p| p.col == Col::State)
            .unwrap();
        let words = ["working", "waiting", "error", "offline", "idle", "unknown"];
        // Title, header, then the 12 rows: the state word sits at the same column on each.
        for y in 2..14u16 {
            let word: String = (state.x..state.x + 7)
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect();
            assert!(
                words.contains(&word.trim()),
                "{w} cols, row {y}: state column reads {word:?}"
            );
        }
    }
}
