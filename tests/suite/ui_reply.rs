//! The sidebar's reply box, update → effects only: a refused `r` holds the keyboard, the box is
//! bound to its seat and target, it closes after sending, multi-line drafts and pastes, drafts
//! and receipts across refreshes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use intercom_pane::seam::clock::{parse_iso, FixedClock, Ms};
use intercom_pane::seam::reply_text::MAX_REPLY_CHARS;
use intercom_pane::seam::snapshot::{ReplyPath, RosterStatus, Row, Snapshot};
use intercom_pane::seam::states::BoardState;
use intercom_pane::seam::ui::app::{App, Effect, Msg, Options, Selection};
use intercom_pane::seam::ui::demo::demo_row;
use intercom_pane::seam::ui::keys::Mode;
use intercom_pane::seam::ui::ports::{ReplyOutcome, ReplyRequest};

fn now() -> Ms {
    parse_iso("2026-11-29T10:00:03.000Z").unwrap()
}

fn app() -> App {
    App::new(
        Arc::new(FixedClock(now())),
        Options {
            color: true,
            reply_unavailable: None,
            workers_unavailable: None,
            spawn_unavailable: None,
        },
    )
}

fn row(id: &str, state: BoardState) -> Row {
    let mut r = demo_row(0, 0, now());
    r.id = id.into();
    r.name = format!("name-{id}");
    r.seen_key = format!("p/{id}");
    r.state = state;
    r.reply = ReplyPath::Available {
        target: format!("sock:{id}"),
    };
    r
}

fn no_path(id: &str, state: BoardState) -> Row {
    let mut r = row(id, state);
    r.reply = ReplyPath::Unavailable {
        reason: "reply needs a registered seat".into(),
    };
    r
}

fn snap(rows: Vec<Row>) -> Msg {
    Msg::SnapshotArrived(Snapshot {
        scanned_at: now(),
        roster: RosterStatus::Available { root: "/r".into() },
        rows,
        truncated: false,
        errors: vec![],
        usage: Default::default(),
        hosts: vec![],
    })
}

fn key(code: KeyCode) -> Msg {
    Msg::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

fn ch(c: char) -> Msg {
    key(KeyCode::Char(c))
}

fn typed(a: &mut App, text: &str) -> Vec<Effect> {
    text.chars().flat_map(|c| a.update(ch(c))).collect()
}

fn sel(a: &App) -> Option<String> {
    match a.selection() {
        Some(Selection::Row(id)) => Some(id.clone()),
        Some(Selection::SeenGroup) => Some("<seen group>".into()),
        None => None,
    }
}

fn sent(fx: &[Effect]) -> &ReplyRequest {
    match fx {
        [Effect::SendReply(req)] => req,
        other => panic!("expected one SendReply, got {other:?}"),
    }
}

fn note(a: &App) -> String {
    a.reply_box()
        .and_then(|b| b.note.clone())
        .unwrap_or_default()
}

#[test]
fn a_refused_r_holds_the_keyboard_until_enter_or_esc() {
    let mut a = app();
    a.update(snap(vec![
        no_path("off", BoardState::Offline),
        row("b", BoardState::Waiting),
    ]));
    assert_eq!(sel(&a).as_deref(), Some("off"));
    assert!(a.update(ch('r')).is_empty());
    assert_eq!(a.mode(), Mode::Notice);
    assert_eq!(
        a.notice(),
        Some("no reply to name-off: reply needs a registered seat")
    );
    // Everything typed next does nothing: no hide, no move, no seen mark, no second box, no
    // quit, no details; the refusal stays on screen.
    let mut fx = typed(&mut a, "or hello; just quit G");
    for k in [KeyCode::Down, KeyCode::PageDown, KeyCode::End, KeyCode::Tab] {
        fx.extend(a.update(key(k)));
    }
    fx.extend(a.update(Msg::Paste("pasted\n".into())));
    fx.extend(a.update(Msg::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT))));
    assert!(fx.is_empty(), "{fx:?}");
    assert!(!a.hide_offline() && !a.hide_seen() && !a.should_quit());
    assert_eq!(sel(&a).as_deref(), Some("off"));
    assert_eq!(a.reply_open(), None);
    assert!(a.draft("b").is_none());
    assert!(a.notice().is_some());
    // Enter dismisses it and does nothing else (details stay closed, nothing is sent).
    assert!(a.update(key(KeyCode::Enter)).is_empty());
    assert_eq!(a.notice(), None);
    assert!(!a.details_open());
    assert_eq!(a.mode(), Mode::List);
    // Esc dismisses too, without quitting; Ctrl+C still quits from a refusal.
    a.update(ch('r'));
    assert!(a.update(key(KeyCode::Esc)).is_empty());
    assert!(!a.should_quit() && a.notice().is_none());
    a.update(ch('r'));
    let ctrl_c = Msg::Key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL));
    assert_eq!(a.update(ctrl_c), vec![Effect::Quit]);

    // `r` on the Seen group header is refused the same way.
    let mut a = app();
    let mut s = row("s", BoardState::Idle);
    s.seen = true;
    a.update(snap(vec![s]));
    assert_eq!(sel(&a).as_deref(), Some("<seen group>"));
    a.update(ch('r'));
    assert_eq!(a.mode(), Mode::Notice);
    assert!(typed(&mut a, "ok").is_empty());
}

#[test]
fn the_box_stays_bound_to_its_seat_when_rows_reorder_or_hide() {
    let mut a = app();
    a.update(snap(vec![
        row("a", BoardState::Idle),
        row("b", BoardState::Waiting),
        row("c", BoardState::Offline),
    ]));
    a.update(ch('o')); // hide offline: c hidden
    a.update(key(KeyCode::Down));
    a.update(ch('r'));
    let b = a.reply_box().unwrap().clone();
    assert_eq!(
        (b.row_id.as_str(), b.name.as_str(), b.target.as_str()),
        ("b", "name-b", "sock:b")
    );
    typed(&mut a, "use plan B");
    // Rows reorder: the box and the selection stay on b.
    a.update(snap(vec![
        row("c", BoardState::Offline),
        row("b", BoardState::Waiting),
        row("a", BoardState::Idle),
    ]));
    assert_eq!(a.reply_open(), Some("b"));
    assert_eq!(sel(&a).as_deref(), Some("b"));
    // b goes offline while offline rows are hidden: it leaves the list, the box stays on it.
    a.update(snap(vec![
        row("a", BoardState::Idle),
        row("b", BoardState::Offline),
    ]));
    assert_eq!(sel(&a).as_deref(), Some("a"));
    assert_eq!(a.reply_open(), Some("b"));
    // Letters still go into b's draft; none acts as a command.
    assert!(typed(&mut a, " o").is_empty());
    assert!(a.hide_offline());
    let fx = a.update(key(KeyCode::Enter));
    let req = sent(&fx);
    assert_eq!(
        (req.row_id.as_str(), req.target.as_str(), req.text.as_str()),
        ("b", "sock:b", "use plan B o")
    );
    assert_eq!(a.reply_open(), None, "closed after sending");
}

#[test]
fn enter_sends_nothing_when_the_seat_is_gone_unreachable_or_moved() {
    let mut a = app();
    a.update(snap(vec![row("a", BoardState::Waiting)]));
    a.update(ch('r'));
    typed(&mut a, "hi");
    // Gone from the board: the box stays (typing stays text) and says so; Enter sends nothing.
    a.update(snap(vec![row("x", BoardState::Idle)]));
    assert_eq!(a.reply_open(), Some("a"));
    assert!(a.reply_blocker().unwrap().contains("name-a is gone"));
    assert!(a.update(key(KeyCode::Enter)).is_empty());
    assert!(note(&a).starts_with("not sent: name-a is gone"));
    assert!(typed(&mut a, "!").is_empty());
    assert_eq!(a.draft("a").unwrap().text, "hi!");
    // Back, but without a reply path.
    a.update(snap(vec![no_path("a", BoardState::Offline)]));
    assert!(a.update(key(KeyCode::Enter)).is_empty());
    assert!(note(&a).contains("no reply path now"), "{}", note(&a));
    // Back at another pane: never sent there on a guess.
    let mut moved = row("a", BoardState::Waiting);
    moved.reply = ReplyPath::Available {
        target: "sock:elsewhere".into(),
    };
    a.update(snap(vec![moved]));
    assert!(a.update(key(KeyCode::Enter)).is_empty());
    assert!(note(&a).contains("now at sock:elsewhere"), "{}", note(&a));
    // Reopened, the box names the new target and sends there, with the draft kept.
    a.update(key(KeyCode::Esc));
    a.update(ch('r'));
    assert_eq!(a.reply_box().unwrap().target, "sock:elsewhere");
    let fx = a.update(key(KeyCode::Enter));
    assert_eq!(sent(&fx).target, "sock:elsewhere");
    assert_eq!(sent(&fx).text, "hi!");
}

#[test]
fn the_box_closes_after_sending_and_the_receipt_and_drafts_survive_refreshes() {
    let mut a = app();
    a.update(snap(vec![
        row("a", BoardState::Idle),
        row("b", BoardState::Waiting),
    ]));
    a.update(key(KeyCode::Down));
    a.update(ch('r'));
    typed(&mut a, "use plan B");
    // A refresh keeps the box, the draft and the cursor; Esc keeps the draft.
    a.update(snap(vec![
        row("b", BoardState::Waiting),
        row("a", BoardState::Idle),
    ]));
    assert_eq!(a.draft("b").unwrap().text, "use plan B");
    a.update(key(KeyCode::Esc));
    a.update(snap(vec![
        row("a", BoardState::Idle),
        row("b", BoardState::Waiting),
    ]));
    a.update(ch('r'));
    assert_eq!(a.draft("b").unwrap().text, "use plan B");
    let fx = a.update(key(KeyCode::Enter));
    assert_eq!(sent(&fx).text, "use plan B");
    assert_eq!(a.reply_open(), None);
    assert!(a.is_sending("b"));
    assert_eq!(a.sending_to("b"), Some("sock:b"));
    // The next `r` opens the box again instead of typing an `r`; the draft is locked while the
    // reply is in flight, and Enter cannot send it twice.
    a.update(ch('r'));
    assert_eq!(a.reply_open(), Some("b"));
    a.update(ch('x'));
    assert_eq!(a.draft("b").unwrap().text, "use plan B");
    assert!(a.update(key(KeyCode::Enter)).is_empty());
    a.update(key(KeyCode::Esc));
    // A failure keeps the draft for a deliberate retry; never retried by itself.
    a.update(Msg::ReplyFinished {
        row_id: "b".into(),
        outcome: ReplyOutcome::Failed {
            exit: Some(1),
            signal: None,
            stderr: "no such session".into(),
        },
    });
    assert!(!a.is_sending("b"));
    assert_eq!(a.draft("b").unwrap().text, "use plan B");
    a.update(ch('r'));
    let fx = a.update(key(KeyCode::Enter));
    assert_eq!(sent(&fx).text, "use plan B");
    a.update(Msg::ReplyFinished {
        row_id: "b".into(),
        outcome: ReplyOutcome::Delivered {
            at: now(),
            target: "sock:b".into(),
            outcome: "delivered",
        },
    });
    assert!(a.draft("b").is_none());
    a.update(snap(vec![
        row("b", BoardState::Idle),
        row("a", BoardState::Idle),
    ]));
    assert!(matches!(
        a.receipt("b").unwrap().outcome,
        ReplyOutcome::Delivered { .. }
    ));
}

#[test]
fn alt_enter_ctrl_j_and_pastes_make_multi_line_replies() {
    let mut a = app();
    a.update(snap(vec![row("a", BoardState::Waiting)]));
    a.update(ch('r'));
    typed(&mut a, "one");
    let alt_enter = Msg::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT));
    assert!(a.update(alt_enter).is_empty());
    typed(&mut a, "two");
    let ctrl_j = Msg::Key(KeyEvent::new(KeyCode::Char('j'), KeyModifiers::CONTROL));
    assert!(a.update(ctrl_j).is_empty());
    // A terminal pastes CR line ends: they arrive as line breaks, and never send.
    assert!(a
        .update(Msg::Paste("three\r\nfour\rfive".into()))
        .is_empty());
    assert_eq!(a.draft("a").unwrap().text, "one\ntwo\nthree\nfour\nfive");
    // Up/Down/Home/End move by line.
    a.update(key(KeyCode::Up));
    a.update(key(KeyCode::Home));
    typed(&mut a, ">");
    assert_eq!(a.draft("a").unwrap().text, "one\ntwo\nthree\n>four\nfive");
    let fx = a.update(key(KeyCode::Enter));
    assert_eq!(sent(&fx).text, "one\ntwo\nthree\n>four\nfive");
}

#[test]
fn pastes_that_a_reply_may_not_carry_are_refused_whole() {
    let mut a = app();
    a.update(snap(vec![row("a", BoardState::Waiting)]));
    // Outside the box a paste does nothing but say where it would go.
    assert!(a.update(Msg::Paste("x".into())).is_empty());
    assert_eq!(a.message(), Some("paste goes into the reply box (r)"));
    a.update(ch('r'));
    a.update(ch('>'));
    for hostile in [
        "ok\u{1b}[201~/quit\r",
        "bell\u{7}",
        "l\u{202e}r",
        "c1\u{9b}x",
    ] {
        assert!(a.update(Msg::Paste(hostile.into())).is_empty());
        assert_eq!(a.draft("a").unwrap().text, ">", "{hostile:?}");
        assert!(note(&a).starts_with("paste not inserted"), "{}", note(&a));
    }
    // Over the cap: refused whole, not cut.
    a.update(Msg::Paste("y".repeat(MAX_REPLY_CHARS)));
    assert_eq!(a.draft("a").unwrap().text, ">");
    assert!(note(&a).contains("2000"), "{}", note(&a));
    a.update(Msg::Paste("tab\there".into()));
    assert_eq!(a.draft("a").unwrap().text, ">tab\there");
    assert_eq!(a.draft("a").unwrap().cursor, 9);
    // The next key clears the note.
    a.update(key(KeyCode::Left));
    assert_eq!(note(&a), "");
}

#[test]
fn blank_text_and_a_run_without_a_reply_path_send_nothing() {
    let mut a = app();
    a.update(snap(vec![row("a", BoardState::Waiting)]));
    a.update(ch('r'));
    assert!(a.update(key(KeyCode::Enter)).is_empty());
    a.update(Msg::Paste("  \n\t ".into()));
    assert!(a.update(key(KeyCode::Enter)).is_empty());
    assert!(note(&a).starts_with("not sent: "), "{}", note(&a));
    assert!(note(&a).contains("blank"), "{}", note(&a));
    assert_eq!(a.reply_open(), Some("a"), "a refused Enter keeps the box");

    let mut a = App::new(
        Arc::new(FixedClock(now())),
        Options {
            color: false,
            reply_unavailable: Some("reply path not available in this build".into()),
            workers_unavailable: None,
            spawn_unavailable: None,
        },
    );
    a.update(snap(vec![row("a", BoardState::Waiting)]));
    a.update(ch('r'));
    typed(&mut a, "y");
    assert!(a.update(key(KeyCode::Enter)).is_empty());
    assert!(
        note(&a).contains("reply path not available"),
        "{}",
        note(&a)
    );
    assert!(a.receipt("a").is_none(), "nothing happened, so no receipt");
}

#[test]
fn editor_handles_multibyte_text_and_the_length_cap() {
    let mut a = app();
    a.update(snap(vec![row("a", BoardState::Waiting)]));
    a.update(ch('r'));
    typed(&mut a, "héllo 日本");
    a.update(key(KeyCode::Left));
    a.update(key(KeyCode::Backspace));
    assert_eq!(a.draft("a").unwrap().text, "héllo 本");
    a.update(key(KeyCode::Home));
    a.update(key(KeyCode::Delete));
    a.update(ch('H'));
    assert_eq!(a.draft("a").unwrap().text, "Héllo 本");
    a.update(key(KeyCode::End));
    a.update(key(KeyCode::Right));
    a.update(ch('!'));
    assert_eq!(a.draft("a").unwrap().text, "Héllo 本!");
    // Control characters never enter a draft.
    a.update(ch('\u{1b}'));
    assert_eq!(a.draft("a").unwrap().text, "Héllo 本!");
    typed(&mut a, &"x".repeat(MAX_REPLY_CHARS + 10));
    assert_eq!(a.draft("a").unwrap().text.chars().count(), MAX_REPLY_CHARS);
    assert!(note(&a).contains("2000"));
}
