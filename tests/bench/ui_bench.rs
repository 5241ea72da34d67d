//! Render time per frame: 256 seats at 120×40 on a TestBackend. Run with
//! `cargo test --release --test bench ui_bench -- --ignored --nocapture`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use intercom_pane::seam::clock::{parse_iso, FixedClock};
use intercom_pane::seam::ui::app::{App, Msg, Options};
use intercom_pane::seam::ui::demo::demo_snapshot;
use intercom_pane::seam::ui::render::render;
use ratatui::backend::TestBackend;
use ratatui::Terminal;

#[test]
#[ignore = "a benchmark: run by hand in release, one module at a time (docs/benchmarks.md)"]
fn render_256_rows_at_120x40() {
    let now = parse_iso("2026-11-29T10:00:03.000Z").unwrap();
    let mut app = App::new(
        Arc::new(FixedClock(now)),
        Options {
            color: true,
            reply_unavailable: None,
            workers_unavailable: None,
            spawn_unavailable: None,
        },
    );
    let mut term = Terminal::new(TestBackend::new(120, 40)).unwrap();
    const FRAMES: u32 = 2000;
    for details in [false, true] {
        let mut worst = std::time::Duration::ZERO;
        let mut drawing = std::time::Duration::ZERO;
        let start = Instant::now();
        for i in 0..FRAMES {
            // A fresh snapshot every 50 frames and a moving selection, like a live sidebar.
            if i % 50 == 0 {
                app.update(Msg::SnapshotArrived(demo_snapshot(256, i as u64, now)));
            }
            app.update(Msg::Key(KeyEvent::new(KeyCode::Down, KeyModifiers::NONE)));
            let t0 = Instant::now();
            term.draw(|f| render(&app, f)).unwrap();
            let d = t0.elapsed();
            drawing += d;
            worst = worst.max(d);
        }
        let per = start.elapsed() / FRAMES;
        let draw = drawing / FRAMES;
        println!(
            "render 256 rows 120x40 details={details}: draw {draw:?}/frame, update+draw {per:?}/frame, worst draw {worst:?}"
        );
        app.update(Msg::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)));
    }
}

#[test]
#[ignore = "a benchmark: run by hand in release, one module at a time (docs/benchmarks.md)"]
fn draw_only_256_rows_at_120x40() {
    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;
    let now = parse_iso("2026-11-29T10:00:03.000Z").unwrap();
    let mut app = App::new(Arc::new(FixedClock(now)), Options::default());
    app.update(Msg::SnapshotArrived(demo_snapshot(256, 0, now)));
    let area = Rect::new(0, 0, 120, 40);
    let mut buf = Buffer::empty(area);
    const FRAMES: u32 = 2000;
    let start = Instant::now();
    for _ in 0..FRAMES {
        buf.reset();
        intercom_pane::seam::ui::render::draw(&app, &mut buf, area);
    }
    println!(
        "draw only (no terminal diff) 256 rows 120x40: {:?}/frame",
        start.elapsed() / FRAMES
    );
}

#[test]
#[ignore = "a benchmark: run by hand in release, one module at a time (docs/benchmarks.md)"]
fn draw_with_a_full_multi_line_reply_draft() {
    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;
    let now = parse_iso("2026-11-29T10:00:03.000Z").unwrap();
    let mut app = App::new(Arc::new(FixedClock(now)), Options::default());
    app.update(Msg::SnapshotArrived(demo_snapshot(256, 0, now)));
    app.update(Msg::Key(KeyEvent::new(KeyCode::Down, KeyModifiers::NONE)));
    app.update(Msg::Key(KeyEvent::new(
        KeyCode::Char('r'),
        KeyModifiers::NONE,
    )));
    // 2000 characters (the cap) of wide and narrow text over 100 lines; a keypress per frame.
    let line = "日本語 text, quoted \"x\" $(y)\n";
    let draft: String = line.repeat(80).chars().take(2000).collect();
    app.update(Msg::Paste(draft));
    assert_eq!(
        app.draft(app.reply_open().unwrap())
            .unwrap()
            .text
            .chars()
            .count(),
        2000
    );
    let area = Rect::new(0, 0, 120, 40);
    let mut buf = Buffer::empty(area);
    const FRAMES: u32 = 2000;
    let start = Instant::now();
    for i in 0..FRAMES {
        let k = if i % 2 == 0 {
            KeyCode::Up
        } else {
            KeyCode::Down
        };
        app.update(Msg::Key(KeyEvent::new(k, KeyModifiers::NONE)));
        buf.reset();
        intercom_pane::seam::ui::render::draw(&app, &mut buf, area);
    }
    println!(
        "update+draw with a 2000-character 80-line draft, 256 rows 120x40: {:?}/frame",
        start.elapsed() / FRAMES
    );
}
