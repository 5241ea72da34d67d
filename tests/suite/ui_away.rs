//! The sidebar's "since you looked" line: what finished, asked or failed while the person was
//! not looking, shown under the title and cleared by a key press or the pane gaining the
//! keyboard (the App driven by messages, the screen drawn as in tests/suite/ui_render.rs).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use intercom_pane::seam::states::BoardState::{self, Error, Idle, Waiting, Working};
use intercom_pane::seam::ui::app::{App, Msg};

use crate::ui_app::{app, row};
use crate::ui_render::{buffer, text};

/// A pass with these seats (name, state), in this order; ids follow the position.
fn snap(seats: &[(&str, BoardState)]) -> Msg {
    let rows = seats
        .iter()
        .enumerate()
        .map(|(i, (name, state))| {
            let mut r = row(&format!("id-{i}"), *state);
            r.name = (*name).to_string();
            r
        })
        .collect();
    crate::ui_app::snap(rows)
}

fn screen(a: &App, w: u16, h: u16) -> String {
    text(&buffer(a, w, h))
}

/// The screen's second line (the one under the title), without its frame.
fn second_line(a: &App, w: u16, h: u16) -> String {
    let s = screen(a, w, h);
    let line = s.lines().nth(1).unwrap_or_default();
    line.trim_matches('|').trim_end().to_string()
}

const ALL_WORKING: [(&str, BoardState); 4] = [
    ("Builder", Working),
    ("Docs", Working),
    ("Tests", Working),
    ("Quiet", Working),
];

#[test]
fn transitions_while_away_show_under_the_title_and_a_key_press_clears_them() {
    let mut a = app();
    a.update(snap(&ALL_WORKING));
    let before = screen(&a, 100, 14);
    assert!(!before.contains("since you looked"), "{before}");

    // Away (the terminal said another pane has the keyboard): one finishes, one asks, one fails.
    a.update(Msg::Focus(false));
    a.update(snap(&[
        ("Builder", Idle),
        ("Docs", Waiting),
        ("Tests", Error),
        ("Quiet", Working),
    ]));
    // Builder goes back to work and finishes again: still one "finished".
    a.update(snap(&[
        ("Builder", Working),
        ("Docs", Waiting),
        ("Tests", Error),
        ("Quiet", Working),
    ]));
    a.update(snap(&[
        ("Builder", Idle),
        ("Docs", Waiting),
        ("Tests", Error),
        ("Quiet", Working),
    ]));
    assert_eq!(
        second_line(&a, 100, 14),
        "since you looked: 1 finished · 1 asked · 1 failed (Builder, Docs, Tests)"
    );
    // A narrow pane clips it to its width.
    let narrow = second_line(&a, 30, 14);
    assert_eq!(narrow, "since you looked: 1 finished …");

    // A key press (any key) is a look: the line is gone and the list moves up under the title.
    a.update(Msg::Key(KeyEvent::new(KeyCode::Down, KeyModifiers::NONE)));
    let after = screen(&a, 100, 14);
    assert!(!after.contains("since you looked"), "{after}");
    assert_eq!(after.lines().count(), 14);
}

#[test]
fn gaining_the_keyboard_clears_the_line_and_nothing_piles_up_while_focused() {
    let mut a = app();
    a.update(Msg::Focus(false));
    a.update(snap(&ALL_WORKING));
    a.update(snap(&[
        ("Builder", Working),
        ("Docs", Working),
        ("Tests", Error),
        ("Quiet", Working),
    ]));
    assert_eq!(
        second_line(&a, 100, 14),
        "since you looked: 1 failed (Tests)"
    );

    a.update(Msg::Focus(true));
    assert!(!screen(&a, 100, 14).contains("since you looked"));

    // While the pane has the keyboard the person sees the rows change: nothing is recorded.
    a.update(snap(&[
        ("Builder", Idle),
        ("Docs", Waiting),
        ("Tests", Error),
        ("Quiet", Working),
    ]));
    assert!(!screen(&a, 100, 14).contains("since you looked"));

    // Away again: only what happens from now on counts.
    a.update(Msg::Focus(false));
    a.update(snap(&[
        ("Builder", Idle),
        ("Docs", Waiting),
        ("Tests", Error),
        ("Quiet", Idle),
    ]));
    assert_eq!(
        second_line(&a, 100, 14),
        "since you looked: 1 finished (Quiet)"
    );
}

#[test]
fn hostile_names_are_harmless_and_a_seven_line_pane_keeps_its_rows() {
    let mut a = app();
    let evil = "ev\u{1b}]0;pwned\u{7}il\n$(reboot)\u{202e}";
    a.update(snap(&[(evil, Working), ("Docs", Working)]));
    a.update(snap(&[(evil, Waiting), ("Docs", Working)]));
    let line = second_line(&a, 100, 14);
    assert!(line.starts_with("since you looked: 1 asked ("), "{line}");
    assert!(
        !line.contains('\u{1b}') && !line.contains('\u{7}') && !line.contains('\u{202e}'),
        "{line:?}"
    );
    assert!(line.contains("$(reboot)"), "{line}");
    // At the smallest height that shows the title, the rows keep their room: no line.
    let small = screen(&a, 100, 7);
    assert!(!small.contains("since you looked"), "{small}");
    assert!(screen(&a, 100, 8).contains("since you looked"));
}
