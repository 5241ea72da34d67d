//! App::update: selection, Esc semantics, toggles with counts, Seen marks (the reply box:
//! tests/suite/ui_reply.rs).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use intercom_pane::seam::clock::{parse_iso, FixedClock, Ms};
use intercom_pane::seam::snapshot::{ReplyPath, RosterStatus, Row, Snapshot};
use intercom_pane::seam::states::BoardState;
use intercom_pane::seam::ui::app::{App, Effect, Item, Msg, Options, Selection};
use intercom_pane::seam::ui::demo::demo_row;

fn now() -> Ms {
    parse_iso("2026-11-29T10:00:03.000Z").unwrap()
}

pub(crate) fn app() -> App {
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

pub(crate) fn row(id: &str, state: BoardState) -> Row {
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

pub(crate) fn snap(rows: Vec<Row>) -> Msg {
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

fn ctrl_c() -> Msg {
    Msg::Key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL))
}

fn sel(app: &App) -> Option<String> {
    match app.selection() {
        Some(Selection::Row(id)) => Some(id.clone()),
        Some(Selection::SeenGroup) => Some("<seen group>".into()),
        None => None,
    }
}

fn ids(app: &App) -> Vec<String> {
    app.list_view()
        .items
        .iter()
        .map(|it| match it {
            Item::Row(r) => r.id.clone(),
            Item::SeenGroup { count, expanded } => format!("Seen({count},{expanded})"),
        })
        .collect()
}

#[test]
fn selection_follows_the_id_across_reorder_and_falls_back_by_index() {
    let mut a = app();
    a.update(snap(vec![
        row("a", BoardState::Idle),
        row("b", BoardState::Idle),
        row("c", BoardState::Idle),
    ]));
    assert_eq!(
        sel(&a).as_deref(),
        Some("a"),
        "first row selected on arrival"
    );
    a.update(key(KeyCode::Down));
    assert_eq!(sel(&a).as_deref(), Some("b"));
    // Reorder: b moves last; the selection stays on b.
    a.update(snap(vec![
        row("c", BoardState::Idle),
        row("a", BoardState::Idle),
        row("b", BoardState::Idle),
    ]));
    assert_eq!(sel(&a).as_deref(), Some("b"));
    let v = a.list_view();
    assert_eq!(a.selected_index(&v.items), 2);
    // b disappears: the selection lands on whatever is now at its index (clamped).
    a.update(snap(vec![
        row("c", BoardState::Idle),
        row("a", BoardState::Idle),
    ]));
    assert_eq!(sel(&a).as_deref(), Some("a"));
    // j/k and the arrows both move; the ends clamp.
    a.update(ch('k'));
    assert_eq!(sel(&a).as_deref(), Some("c"));
    a.update(key(KeyCode::Up));
    assert_eq!(sel(&a).as_deref(), Some("c"));
    a.update(ch('j'));
    a.update(ch('j'));
    assert_eq!(sel(&a).as_deref(), Some("a"));
    // Empty roster: no selection, keys do nothing harmful.
    a.update(snap(vec![]));
    assert_eq!(sel(&a), None);
    assert!(a.update(key(KeyCode::Down)).is_empty());
    assert!(a.update(key(KeyCode::Enter)).is_empty());
    assert!(!a.details_open());
}

#[test]
fn esc_closes_details_first_then_quits_and_q_or_ctrl_c_always_quit() {
    let mut a = app();
    a.update(snap(vec![row("a", BoardState::Waiting)]));
    a.update(ch('d'));
    assert!(a.details_open());
    assert!(a.update(key(KeyCode::Esc)).is_empty());
    assert!(!a.details_open());
    assert!(!a.should_quit());
    assert_eq!(a.update(key(KeyCode::Esc)), vec![Effect::Quit]);
    assert!(a.should_quit());

    let mut a = app();
    a.update(snap(vec![row("a", BoardState::Waiting)]));
    a.update(ch('d'));
    assert_eq!(a.update(ch('q')), vec![Effect::Quit]);

    // In the reply editor `q` is text, Esc closes the box, Ctrl+C still quits.
    let mut a = app();
    a.update(snap(vec![row("a", BoardState::Waiting)]));
    a.update(ch('r'));
    assert_eq!(a.reply_open(), Some("a"));
    assert!(a.update(ch('q')).is_empty());
    assert_eq!(a.draft("a").unwrap().text, "q");
    assert!(a.update(key(KeyCode::Esc)).is_empty());
    assert_eq!(a.reply_open(), None);
    a.update(ch('r'));
    assert_eq!(a.update(ctrl_c()), vec![Effect::Quit]);
}

#[test]
fn hide_toggles_report_what_they_hide() {
    let mut a = app();
    let mut seen = row("s", BoardState::Idle);
    seen.seen = true;
    let mut seen_off = row("so", BoardState::Offline);
    seen_off.seen = true;
    a.update(snap(vec![
        row("a", BoardState::Offline),
        row("b", BoardState::Working),
        row("c", BoardState::Offline),
        seen,
        seen_off,
    ]));
    assert_eq!(ids(&a), ["a", "b", "c", "Seen(2,false)"]);
    a.update(ch('o'));
    assert!(a.hide_offline());
    let v = a.list_view();
    assert_eq!(v.hidden_offline, 3);
    assert_eq!(ids(&a), ["b", "Seen(1,false)"]);
    a.update(ch('h'));
    let v = a.list_view();
    assert_eq!((v.hidden_offline, v.hidden_seen), (3, 1));
    assert_eq!(ids(&a), ["b"]);
    a.update(ch('o'));
    let v = a.list_view();
    assert_eq!((v.hidden_offline, v.hidden_seen), (0, 2));
    assert_eq!(ids(&a), ["a", "b", "c"]);
}

#[test]
fn seen_group_is_collapsed_but_reachable() {
    let mut a = app();
    let mut s1 = row("s1", BoardState::Idle);
    s1.seen = true;
    let mut s2 = row("s2", BoardState::Idle);
    s2.seen = true;
    a.update(snap(vec![row("a", BoardState::Idle), s1, s2]));
    assert_eq!(ids(&a), ["a", "Seen(2,false)"]);
    a.update(key(KeyCode::Down));
    assert_eq!(sel(&a).as_deref(), Some("<seen group>"));
    // Enter on the group header expands it rather than opening details.
    a.update(key(KeyCode::Enter));
    assert!(!a.details_open());
    assert_eq!(ids(&a), ["a", "Seen(2,true)", "s1", "s2"]);
    a.update(key(KeyCode::End));
    assert_eq!(sel(&a).as_deref(), Some("s2"));
    a.update(ch('d'));
    assert!(a.details_open());
}

#[test]
fn seen_mark_writes_the_exact_last_activity_and_reverts_on_failure() {
    let mut a = app();
    let r = row("a", BoardState::Waiting);
    let last = r.last_activity.unwrap();
    a.update(snap(vec![r.clone(), row("b", BoardState::Idle)]));
    let fx = a.update(ch('s'));
    assert_eq!(
        fx,
        vec![Effect::WriteSeen {
            row_id: "a".into(),
            key: "p/a".into(),
            last_activity_iso: intercom_pane::seam::clock::format_iso(last),
            seen: true,
        }]
    );
    // Shown as seen at once; the selection moves on to the next row at the same place.
    assert_eq!(ids(&a), ["b", "Seen(1,false)"]);
    assert_eq!(sel(&a).as_deref(), Some("b"));
    // A second press while the write is pending would act on b, not a.
    a.update(Msg::SeenFinished {
        row_id: "a".into(),
        seen: true,
        result: Err("seen_invalid: /x/board/seen.json is not a JSON object".into()),
    });
    assert_eq!(ids(&a), ["a", "b"]);
    assert!(a
        .message()
        .unwrap()
        .starts_with("seen not saved: seen_invalid"));

    // Success: the mark holds until a snapshot reflects it (even through one stale pass).
    a.update(key(KeyCode::Home));
    a.update(ch('s'));
    a.update(Msg::SeenFinished {
        row_id: "a".into(),
        seen: true,
        result: Ok(()),
    });
    a.update(snap(vec![r.clone(), row("b", BoardState::Idle)]));
    assert_eq!(ids(&a), ["b", "Seen(1,false)"]);
    let mut marked = r.clone();
    marked.seen = true;
    a.update(snap(vec![marked, row("b", BoardState::Idle)]));
    assert_eq!(ids(&a), ["b", "Seen(1,false)"]);
    // New activity brings the row back by itself (the scan stops applying the mark).
    let mut newer = r.clone();
    newer.last_activity = Some(last + 1000);
    a.update(snap(vec![newer, row("b", BoardState::Idle)]));
    assert_eq!(ids(&a), ["a", "b"]);

    // No last activity: refused with a reason, no write.
    let mut bare = row("c", BoardState::Idle);
    bare.last_activity = None;
    let mut a = app();
    a.update(snap(vec![bare]));
    assert!(a.update(ch('s')).is_empty());
    assert!(a.message().unwrap().contains("last activity"));
}

#[test]
fn a_toggle_while_a_seen_write_runs_is_shown_at_once_and_saved_after_it() {
    let mut a = app();
    let r = row("a", BoardState::Waiting);
    let last = r.last_activity.unwrap();
    a.update(snap(vec![r.clone()]));
    assert_eq!(a.update(ch('s')).len(), 1);
    assert_eq!(ids(&a), ["Seen(1,false)"]);
    // Open the group, select a, unmark it before the first write reports back: no second
    // write races the first, but the list shows the wish at once.
    a.update(key(KeyCode::Enter));
    a.update(key(KeyCode::End));
    assert_eq!(sel(&a).as_deref(), Some("a"));
    assert!(a.update(ch('s')).is_empty());
    assert_eq!(ids(&a), ["a"]);
    assert_eq!(a.message(), None);
    // The first write finishes: the latest wish (unseen) is written next.
    let fx = a.update(Msg::SeenFinished {
        row_id: "a".into(),
        seen: true,
        result: Ok(()),
    });
    assert_eq!(
        fx,
        vec![Effect::WriteSeen {
            row_id: "a".into(),
            key: "p/a".into(),
            last_activity_iso: intercom_pane::seam::clock::format_iso(last),
            seen: false,
        }]
    );
    // It finishes too: nothing more to write, and a stale pass that still read "seen" does not
    // flip the row back.
    let fx = a.update(Msg::SeenFinished {
        row_id: "a".into(),
        seen: false,
        result: Ok(()),
    });
    assert!(fx.is_empty());
    let mut stale = r.clone();
    stale.seen = true;
    a.update(snap(vec![stale]));
    assert_eq!(ids(&a), ["a"]);
}

/// A pass that found nothing new moves only the snapshot's time: the rows, the selection and
/// the Seen marks stay, and the title says no pass runs.
#[test]
fn a_pass_that_found_nothing_new_moves_only_the_time() {
    let mut a = app();
    a.update(snap(vec![
        row("a", BoardState::Waiting),
        row("b", BoardState::Working),
    ]));
    a.update(key(KeyCode::Down));
    let rows = a.snapshot().unwrap().rows.clone();
    let selected = a.selection().cloned();
    a.update(Msg::PassStarted);
    assert!(a.scanning());
    a.update(Msg::PassUnchanged {
        scanned_at: now() + 30_000,
    });
    assert!(!a.scanning());
    let s = a.snapshot().unwrap();
    assert_eq!(s.scanned_at, now() + 30_000);
    assert_eq!(s.rows, rows);
    assert_eq!(a.selection().cloned(), selected);
}

/// `same_board` tells a pass that found nothing new (only its time moved) from any other.
#[test]
fn same_board_ignores_only_the_time() {
    let Msg::SnapshotArrived(s) = snap(vec![row("a", BoardState::Waiting)]) else {
        unreachable!()
    };
    let mut later = s.clone();
    later.scanned_at += 30_000;
    assert!(later.same_board(&s));
    let mut moved = later.clone();
    moved.rows[0].state = BoardState::Working;
    assert!(!moved.same_board(&s));
    let mut aged = later.clone();
    aged.rows[0].connection.checked_at = Some(now());
    assert!(!aged.same_board(&s));
    let mut erred = later;
    erred.truncated = true;
    assert!(!erred.same_board(&s));
}

/// `v`: the review view reads the selected row's review, follows the selection to another row,
/// ignores a review that arrives for a row it no longer shows, and closes on `v` again.
#[test]
fn the_review_view_follows_the_selection_and_drops_stale_answers() {
    use intercom_pane::seam::ui::changes::{ReviewState, ReviewText};
    let mut a = app();
    a.update(snap(vec![
        row("a", BoardState::Idle),
        row("b", BoardState::Idle),
    ]));
    let fx = a.update(ch('v'));
    assert_eq!(fx, vec![Effect::LoadReview { row_id: "a".into() }]);
    assert!(a.review_open());
    let fx = a.update(key(KeyCode::Down));
    assert_eq!(fx, vec![Effect::LoadReview { row_id: "b".into() }]);
    // The answer for `a` comes late: not shown for `b`.
    let text = ReviewText {
        summary: vec!["a's".into()],
        files: vec![],
        diff: vec![],
    };
    assert!(a
        .update(Msg::ReviewArrived {
            row_id: "a".into(),
            review: Some(text.clone())
        })
        .is_empty());
    assert_eq!(
        a.review_of("b"),
        ReviewState::Loading,
        "a stale answer is not b's"
    );
    a.update(Msg::ReviewArrived {
        row_id: "b".into(),
        review: None,
    });
    assert_eq!(a.review_of("b"), ReviewState::Nothing);
    assert!(a.update(ch('v')).is_empty());
    assert!(!a.review_open());
}

#[test]
fn h_asks_the_hosts_that_are_not_answering_again_and_says_so() {
    use intercom_pane::seam::snapshot::{HostState, HostView};
    let mut a = app();
    a.update(snap(vec![row("a", BoardState::Idle)]));
    assert!(a.update(ch('H')).is_empty(), "no hosts: nothing asked");
    assert!(
        a.notice().unwrap().contains("no other hosts"),
        "{:?}",
        a.notice()
    );
    a.update(key(KeyCode::Esc));
    let host = |name: &str, state| HostView {
        name: name.into(),
        state,
        since: now(),
        answered_at: None,
        via: None,
        detail: String::new(),
        seats: 0,
    };
    let Msg::SnapshotArrived(mut s) = snap(vec![row("a", BoardState::Idle)]) else {
        unreachable!()
    };
    s.hosts = vec![host("b", HostState::Answering)];
    a.update(Msg::SnapshotArrived(s.clone()));
    assert!(a.update(ch('H')).is_empty());
    assert_eq!(a.notice(), Some("every host is answering"));
    a.update(key(KeyCode::Esc));
    s.hosts.push(host("c", HostState::NotAnswering));
    s.hosts.push(host("d", HostState::Refused));
    a.update(Msg::SnapshotArrived(s));
    let fx = a.update(ch('H'));
    assert!(matches!(fx.as_slice(), [Effect::RetryHosts]), "{fx:?}");
    assert_eq!(a.notice(), Some("asking 2 host(s) again now"));
}
