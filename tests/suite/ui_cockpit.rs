//! The sidebar as the place where the loop happens, on the pure app and a TestBackend screen:
//! what a waiting worker asks on its row and in details, ⏎ to its pane (or a clear stay),
//! `n`/`N`, the preview, `/`, `?`, the mouse, focus, close/resume after a confirmation, the
//! columns that have a source, and the usable minimum height — at 80×24, 120×40 and 200×60, with
//! and without Intercom data.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use intercom_pane::seam::clock::{parse_iso, Clock, Ms};
use intercom_pane::seam::snapshot::{ConnectionView, Row, Snapshot};
use intercom_pane::seam::states::BoardState;
use intercom_pane::seam::ui::app::{App, Effect, Msg, Options, Selection};
use intercom_pane::seam::ui::demo::{demo_row, demo_snapshot};
use intercom_pane::seam::ui::ports::{WorkerAction, WorkerOutcome};
use ratatui::buffer::Buffer;
use ratatui::style::Modifier;

/// A clock the test moves.
struct Manual(AtomicI64);

impl Clock for Manual {
    fn now_ms(&self) -> Ms {
        self.0.load(Ordering::SeqCst)
    }
}

fn t0() -> Ms {
    parse_iso("2026-11-29T10:00:03.000Z").unwrap()
}

fn app(snap: Snapshot) -> (App, Arc<Manual>) {
    let clock = Arc::new(Manual(AtomicI64::new(t0())));
    let mut a = App::new(
        clock.clone(),
        Options {
            color: true,
            reply_unavailable: None,
            workers_unavailable: None,
            spawn_unavailable: None,
        },
    );
    a.update(Msg::SnapshotArrived(snap));
    (a, clock)
}

/// Seats as a plain pi setup has them: no observation logs, no ports answering, no reports.
fn plain(n: usize) -> Snapshot {
    let mut s = demo_snapshot(n, 0, t0());
    for r in &mut s.rows {
        r.activity = None;
        r.report = None;
        r.handoff = None;
        r.close_job = None;
        r.connection = ConnectionView::not_checked();
    }
    s
}

fn key(a: &mut App, code: KeyCode) -> Vec<Effect> {
    a.update(Msg::Key(KeyEvent::new(code, KeyModifiers::NONE)))
}

fn ch(a: &mut App, c: char) -> Vec<Effect> {
    key(a, KeyCode::Char(c))
}

use crate::ui_render::buffer;

/// The screen as text, one line per row, trailing spaces dropped (`ui_render::text` unframed).
fn text(b: &Buffer) -> String {
    crate::ui_render::text(b)
        .lines()
        .map(|l| l.trim_start_matches('|').trim_end_matches('|').trim_end())
        .map(|l| format!("{l}\n"))
        .collect()
}

fn screen(a: &App, w: u16, h: u16) -> String {
    text(&buffer(a, w, h))
}

fn header(s: &str) -> &str {
    s.lines()
        .find(|l| l.contains("Worker") && l.contains("State"))
        .unwrap_or("")
}

fn selected(a: &App) -> String {
    match a.selection() {
        Some(Selection::Row(id)) => a.snapshot().unwrap().row(id).unwrap().name.clone(),
        Some(Selection::SeenGroup) => "<seen>".into(),
        None => String::new(),
    }
}

fn select(a: &mut App, name: &str) {
    key(a, KeyCode::Home);
    for _ in 0..40 {
        if selected(a) == name {
            return;
        }
        key(a, KeyCode::Down);
    }
    panic!("{name} never selected");
}

#[test]
fn without_intercom_no_dead_columns_and_the_question_is_on_the_row() {
    for (w, h) in [(80u16, 24u16), (120, 40), (200, 60)] {
        let (a, _) = app(plain(6));
        let s = screen(&a, w, h);
        let head = header(&s);
        assert!(head.contains("Detail"), "{w}x{h}:\n{s}");
        for dead in [
            "Connection",
            "Activity",
            "Observed",
            "Last activity",
            "Report",
            "Seen",
        ] {
            assert!(!head.contains(dead), "{w}x{h}: {dead} shown:\n{s}");
        }
        let waiting = s.lines().find(|l| l.contains(" builder ")).unwrap();
        assert!(
            waiting.contains("waiting") && waiting.contains("Choose staging or production"),
            "{w}x{h}:\n{s}"
        );
        let error = s.lines().find(|l| l.contains(" reviewer ")).unwrap();
        assert!(error.contains("provider returned 529"), "{s}");
        let working = s.lines().find(|l| l.contains(" coordinator ")).unwrap();
        assert!(working.contains("running bash for 12s"), "{s}");
        insta::assert_snapshot!(format!("cockpit_plain_{w}x{h}"), s);
    }
}

#[test]
fn with_intercom_data_each_column_has_a_source_and_differences_are_marked() {
    let (a, _) = app(demo_snapshot(10, 0, t0()));
    let s = screen(&a, 200, 60);
    let head = header(&s);
    for col in [
        "Worker",
        "State",
        "Report",
        "Connection",
        "Activity",
        "Observed",
        "Last activity",
        "Detail",
    ] {
        assert!(head.contains(col), "{col}:\n{s}");
    }
    // builder: State waiting, Activity thinking: marked on the row, explained in details.
    let row = s.lines().find(|l| l.contains(" builder ")).unwrap();
    assert!(
        row.contains("waiting") && row.contains("thinking*"),
        "{row}"
    );
    insta::assert_snapshot!("cockpit_intercom_200x60", s);
    for (w, h) in [(80u16, 24u16), (120, 40)] {
        insta::assert_snapshot!(format!("cockpit_intercom_{w}x{h}"), screen(&a, w, h));
    }
    let (mut a, _) = app(demo_snapshot(10, 0, t0()));
    select(&mut a, "builder");
    ch(&mut a, 'd');
    let s = screen(&a, 120, 40);
    assert!(
        s.contains("Differs") && s.contains("State waiting comes from demo"),
        "{s}"
    );
    assert!(s.contains("Asks") && s.contains("1. staging"), "{s}");
}

#[test]
fn focus_shows_in_the_title_and_the_key_line() {
    let (mut a, _) = app(plain(4));
    let s = screen(&a, 80, 24);
    assert!(!s.starts_with('▶'), "{s}");
    a.update(Msg::Focus(true));
    let b = buffer(&a, 80, 24);
    let s = text(&b);
    assert!(s.starts_with("▶ 4 seats"), "{s}");
    assert!(b[(0, 0)].modifier.contains(Modifier::REVERSED));
    assert!(s.lines().last().unwrap().contains("q quit"), "{s}");
    a.update(Msg::Focus(false));
    let b = buffer(&a, 80, 24);
    let s = text(&b);
    assert!(!b[(0, 0)].modifier.contains(Modifier::REVERSED));
    assert!(
        s.lines()
            .last()
            .unwrap()
            .starts_with("not focused: select this pane"),
        "{s}"
    );
    insta::assert_snapshot!("cockpit_unfocused_80x24", s);
}

#[test]
fn the_minimum_height_keeps_the_header_three_rows_and_the_key_line() {
    let (mut a, _) = app(demo_snapshot(10, 0, t0()));
    a.update(Msg::Focus(true));
    // At the minimum (7): title, header, 3 rows, what is cut, the key line.
    let s = screen(&a, 80, 7);
    let lines: Vec<&str> = s.lines().collect();
    assert!(lines[0].starts_with("▶ 10 seats"), "{s}");
    assert!(header(&s) == lines[1], "{s}");
    for l in &lines[2..5] {
        assert!(
            ["●", "!", "✗", "○", "·", "?"].iter().any(|g| l.contains(g)),
            "{s}"
        );
    }
    assert!(lines[5].starts_with("+7 more"), "{s}");
    assert!(lines[6].contains("q quit"), "{s}");
    // Shorter: the title goes first; the header, 3 rows and the key line stay.
    let s = screen(&a, 80, 6);
    let rows = s.lines().filter(|l| l.starts_with(['›', ' '])).count();
    assert!(!header(&s).is_empty() && rows >= 3, "{s}");
    assert!(s.lines().last().unwrap().contains("q quit"), "{s}");
    // Fewer rows than 3: all of them.
    let (b, _) = app(plain(2));
    let s = screen(&b, 80, 7);
    assert!(
        s.contains(" coordinator ") && s.contains(" builder "),
        "{s}"
    );
    // The terminal shrinks below the minimum: the sidebar asks once to be made tall again.
    assert_eq!(a.update(Msg::Resize(80, 5)), vec![Effect::KeepHeight(7)]);
    assert!(a.update(Msg::Resize(80, 5)).is_empty());
    assert!(a.update(Msg::Resize(80, 30)).is_empty());
    assert_eq!(a.update(Msg::Resize(80, 4)), vec![Effect::KeepHeight(7)]);
}

#[test]
fn enter_goes_to_the_pane_or_says_why_it_stays() {
    let (mut a, _) = app(demo_snapshot(10, 0, t0()));
    select(&mut a, "builder");
    let fx = key(&mut a, KeyCode::Enter);
    match fx.as_slice() {
        [Effect::Jump(seat)] => {
            assert_eq!(seat.name, "builder");
            assert_eq!(seat.pane.as_ref().unwrap().pane_id, "%11");
        }
        other => panic!("{other:?}"),
    }
    assert!(screen(&a, 80, 24).contains("going to builder…"));
    a.update(Msg::JumpFinished {
        name: "builder".into(),
        outcome: intercom_pane::seam::ui::ports::JumpOutcome::Refused {
            reason: "builder moved since you saw it (was tmux %11, now tmux %40)".into(),
        },
    });
    let s = screen(&a, 80, 24);
    assert!(
        s.contains("not moved to builder: builder moved since you saw it"),
        "{s}"
    );
    // An offline seat has no live pane: nothing is asked, the sidebar says so and stays.
    select(&mut a, intercom_pane::seam::ui::demo::EVIL_NAME);
    assert!(key(&mut a, KeyCode::Enter).is_empty());
    let s = screen(&a, 80, 24);
    assert!(
        s.contains("has no live pane") && s.contains("staying here"),
        "{s}"
    );
}

#[test]
fn n_and_shift_n_walk_the_seats_that_need_you_and_wrap() {
    let (mut a, _) = app(demo_snapshot(10, 0, t0()));
    // Needing you: builder (waiting), reviewer (error), release-… (waiting), worker-008 (error).
    let mut seen = Vec::new();
    for _ in 0..5 {
        ch(&mut a, 'n');
        seen.push(selected(&a));
    }
    assert_eq!(
        seen,
        [
            "builder",
            "reviewer",
            "release-manager-with-a-very-long-name",
            "worker-008",
            "builder"
        ]
    );
    ch(&mut a, 'N');
    assert_eq!(selected(&a), "worker-008");
    // Marked seen: no longer needs you.
    ch(&mut a, 's');
    key(&mut a, KeyCode::Home);
    ch(&mut a, 'N');
    assert_eq!(selected(&a), "release-manager-with-a-very-long-name");
    // Nobody needs you: said, selection kept.
    let (mut b, _) = app(plain(1));
    ch(&mut b, 'n');
    assert!(screen(&b, 80, 24).contains("no listed seat needs you"));
}

#[test]
fn the_preview_shows_the_conversation_and_scrolls() {
    let mut snap = demo_snapshot(10, 0, t0());
    snap.rows[1].last_user_text = Some("Roll out the release.\nAsk me before production.".into());
    snap.rows[1].last_assistant_text = Some("Built and tested.".into());
    let (mut a, _) = app(snap);
    select(&mut a, "builder");
    ch(&mut a, 'p');
    assert!(a.preview_open());
    let s = screen(&a, 80, 24);
    for want in [
        "Preview · builder · waiting",
        "You (newest message):",
        "  Roll out the release.",
        "  Ask me before production.",
        "pi (newest reply):",
        "It asks:",
        "  1. staging",
    ] {
        assert!(s.contains(want), "{want}:\n{s}");
    }
    insta::assert_snapshot!("cockpit_preview_80x24", s);
    // Selecting another row previews that one; `d` switches to details; `p` closes.
    select(&mut a, "coordinator");
    assert!(screen(&a, 80, 24).contains("Running now:"));
    ch(&mut a, 'd');
    assert!(screen(&a, 80, 24).contains("Details · coordinator"));
    ch(&mut a, 'd');
    assert!(!a.details_open());
    // A short pane: the preview scrolls.
    select(&mut a, "builder");
    ch(&mut a, 'p');
    a.update(Msg::Resize(40, 8));
    let top = screen(&a, 40, 8);
    key(&mut a, KeyCode::PageDown);
    assert_ne!(screen(&a, 40, 8), top);
}

#[test]
fn the_timeline_panel_asks_for_the_workers_log_and_shows_it_newest_last() {
    let (mut a, _) = app(demo_snapshot(10, 0, t0()));
    select(&mut a, "builder");
    let fx = ch(&mut a, 'l');
    let seat = match fx.as_slice() {
        [Effect::ReadTimeline(seat)] => seat.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(seat.name, "builder");
    assert!(a.timeline_open() && !a.preview_open());
    assert!(screen(&a, 80, 24).contains("reading…"));
    // A reply for another row (the panel moved on) is dropped; this row's is shown.
    a.update(Msg::TimelineRead {
        row_id: "elsewhere".into(),
        result: Ok(vec!["not this one".into()]),
    });
    let mut lines: Vec<String> = (0..40)
        .map(|i| format!("2026-11-29 09:{i:02}:00  tool     bash ok 1.0s · step {i}"))
        .collect();
    lines.push("2026-11-29 09:59:00  question pick \u{1b}]0;owned\u{7}one".into());
    a.update(Msg::TimelineRead {
        row_id: seat.row_id.clone(),
        result: Ok(lines),
    });
    let s = screen(&a, 80, 24);
    assert!(s.contains("Timeline · builder"), "{s}");
    assert!(!s.contains("not this one"));
    // Opened at its end: the newest entry shows, the oldest is scrolled away.
    assert!(s.contains("question pick one"), "{s}");
    assert!(!s.contains("step 0 ") && !s.contains('\u{1b}'), "{s}");
    // `l` again closes it; `d` after `l` shows the details instead.
    ch(&mut a, 'l');
    assert!(!a.details_open());
    ch(&mut a, 'l');
    ch(&mut a, 'd');
    assert!(!a.timeline_open() && screen(&a, 80, 24).contains("Details · builder"));
    // Why there is none.
    ch(&mut a, 'd');
    ch(&mut a, 'l');
    a.update(Msg::TimelineRead {
        row_id: seat.row_id,
        result: Err(intercom_pane::seam::ui::ports::NoLines::Refused(
            "root/builder has no session file yet".into(),
        )),
    });
    assert!(screen(&a, 80, 24).contains("no timeline: root/builder has no session file yet"));
}

#[test]
fn help_is_the_key_table_and_filter_narrows_by_name() {
    let (mut a, _) = app(demo_snapshot(10, 0, t0()));
    ch(&mut a, '?');
    assert!(a.help_open());
    let mut all = String::new();
    for _ in 0..20 {
        all.push_str(&screen(&a, 80, 24));
        key(&mut a, KeyCode::PageDown);
    }
    for b in intercom_pane::seam::ui::keys::BINDINGS {
        assert!(all.contains(b.what), "{} missing from the overlay", b.what);
    }
    insta::assert_snapshot!("cockpit_help_80x24", {
        key(&mut a, KeyCode::Home);
        let (mut h, _) = app(demo_snapshot(10, 0, t0()));
        ch(&mut h, '?');
        screen(&h, 80, 24)
    });
    key(&mut a, KeyCode::Esc);
    assert!(!a.help_open());

    ch(&mut a, '/');
    for c in "WORKER-00".chars() {
        ch(&mut a, c);
    }
    let s = screen(&a, 80, 24);
    assert!(s.contains("/WORKER-00▏"), "{s}");
    assert!(s.contains("worker-008") && !s.contains(" builder "), "{s}");
    // `q` typed into the filter is text, not quit.
    assert!(ch(&mut a, 'q').is_empty());
    key(&mut a, KeyCode::Backspace);
    key(&mut a, KeyCode::Enter);
    let s = screen(&a, 80, 24);
    assert!(s.contains("filter \"WORKER-00\": 8 hidden"), "{s}");
    // Esc clears the filter first; the next Esc quits.
    assert!(key(&mut a, KeyCode::Esc).is_empty());
    assert!(screen(&a, 80, 24).contains(" builder "));
    assert_eq!(key(&mut a, KeyCode::Esc), vec![Effect::Quit]);
}

fn click(a: &mut App, x: u16, y: u16) -> Vec<Effect> {
    a.update(Msg::Mouse(MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column: x,
        row: y,
        modifiers: KeyModifiers::NONE,
    }))
}

#[test]
fn a_click_selects_and_a_double_click_goes_to_the_pane() {
    let (mut a, clock) = app(demo_snapshot(10, 0, t0()));
    a.update(Msg::Resize(80, 24));
    let s = screen(&a, 80, 24);
    let y = s.lines().position(|l| l.contains(" reviewer ")).unwrap() as u16;
    assert!(click(&mut a, 10, y).is_empty());
    assert_eq!(selected(&a), "reviewer");
    // The second click a second later is another single click.
    clock.0.fetch_add(1_000, Ordering::SeqCst);
    assert!(click(&mut a, 10, y).is_empty());
    clock.0.fetch_add(200, Ordering::SeqCst);
    let fx = click(&mut a, 10, y);
    assert!(
        matches!(fx.as_slice(), [Effect::Jump(s)] if s.name == "reviewer"),
        "{fx:?}"
    );
    // Clicks on the header or below the rows select nothing.
    let yb = s.lines().position(|l| l.contains(" builder ")).unwrap() as u16;
    assert!(click(&mut a, 5, 1).is_empty() && click(&mut a, 5, 20).is_empty());
    assert_eq!(selected(&a), "reviewer");
    click(&mut a, 5, yb);
    assert_eq!(selected(&a), "builder");
    // The wheel moves the selection.
    a.update(Msg::Mouse(MouseEvent {
        kind: MouseEventKind::ScrollDown,
        column: 0,
        row: 0,
        modifiers: KeyModifiers::NONE,
    }));
    assert_eq!(selected(&a), "reviewer");
}

fn with_closed(mut snap: Snapshot, name: &str) -> Snapshot {
    let r: &mut Row = snap.rows.iter_mut().find(|r| r.name == name).unwrap();
    r.state = BoardState::Offline;
    r.pane = None;
    snap
}

#[test]
fn close_and_resume_ask_by_name_then_run_in_the_background_with_stage_and_receipt() {
    let (mut a, clock) = app(demo_snapshot(10, 0, t0()));
    select(&mut a, "builder");
    assert!(ch(&mut a, 'C').is_empty());
    let s = screen(&a, 80, 24);
    assert!(
        s.contains("Close worker builder?") && s.contains("y: close builder"),
        "{s}"
    );
    // Nothing but y, n or Esc answers; letters do nothing.
    for c in ['q', 'C', 'r', 'j', 'Y'] {
        assert!(ch(&mut a, c).is_empty(), "{c}");
    }
    assert!(key(&mut a, KeyCode::Enter).is_empty());
    assert_eq!(selected(&a), "builder");
    key(&mut a, KeyCode::Esc);
    assert!(a.confirming().is_none());
    ch(&mut a, 'C');
    let fx = ch(&mut a, 'y');
    let id = match fx.as_slice() {
        [Effect::Worker {
            action: WorkerAction::Close,
            seat,
        }] => {
            assert_eq!(seat.name, "builder");
            seat.row_id.clone()
        }
        other => panic!("{other:?}"),
    };
    // The keyboard is free at once; the row shows the stage while it runs.
    assert_eq!(ch(&mut a, 'j').len(), 0);
    key(&mut a, KeyCode::Up);
    a.update(Msg::WorkerStage {
        row_id: id.clone(),
        stage: "awaiting handoff".into(),
    });
    clock.0.fetch_add(4_000, Ordering::SeqCst);
    let s = screen(&a, 120, 40);
    let row = s.lines().find(|l| l.contains(" builder ")).unwrap();
    assert!(
        row.contains("close-worker: awaiting handoff (4 s)"),
        "{row}"
    );
    // A second close of the same worker while this runs is refused.
    ch(&mut a, 'C');
    assert!(screen(&a, 120, 40).contains("already running"));
    key(&mut a, KeyCode::Esc);
    a.update(Msg::WorkerFinished {
        row_id: id.clone(),
        outcome: WorkerOutcome {
            ok: true,
            result: "closed".into(),
            detail: String::new(),
        },
    });
    let s = screen(&a, 120, 40);
    let row = s.lines().find(|l| l.contains(" builder ")).unwrap();
    assert!(row.contains("close-worker: closed"), "{row}");
    ch(&mut a, 'd');
    let s = screen(&a, 120, 40);
    assert!(s.contains("Job            close-worker: closed"), "{s}");

    // Resume on a closed worker; a refusal is shown, not swallowed.
    let (mut b, _) = app(with_closed(demo_snapshot(10, 0, t0()), "docs-writer"));
    select(&mut b, "docs-writer");
    ch(&mut b, 'R');
    assert!(screen(&b, 120, 40).contains("Resume worker docs-writer?"));
    let fx = ch(&mut b, 'y');
    let id = match fx.as_slice() {
        [Effect::Worker {
            action: WorkerAction::Resume,
            seat,
        }] => seat.row_id.clone(),
        other => panic!("{other:?}"),
    };
    b.update(Msg::WorkerFinished {
        row_id: id,
        outcome: WorkerOutcome {
            ok: false,
            result: "refused".into(),
            detail: "docs-writer still runs its session".into(),
        },
    });
    let s = screen(&b, 200, 40);
    let row = s.lines().find(|l| l.contains(" docs-writer ")).unwrap();
    assert!(
        row.contains("resume-worker: refused — docs-writer still runs its session"),
        "{row}"
    );

    // Only configured workers: the coordinator row is refused with a notice.
    let (mut c, _) = app(demo_snapshot(3, 0, t0()));
    select(&mut c, "coordinator");
    assert!(ch(&mut c, 'C').is_empty());
    assert!(screen(&c, 120, 40).contains("only configured workers"));
    let _ = demo_row(0, 0, t0());
}

#[test]
fn intercom_workers_without_observations_get_no_observation_columns() {
    // Configured workers always carry an activity view; without an observation it is no source.
    let mut s = plain(3);
    for r in &mut s.rows {
        r.activity = Some(intercom_pane::seam::snapshot::ActivityView {
            status: intercom_pane::seam::board::intercom::ObservedStatus::Unknown,
            label: "no observation".into(),
            observed_at: None,
            stale: false,
            evidence: intercom_pane::seam::board::intercom::Evidence::Missing,
        });
    }
    let (a, _) = app(s);
    let s = screen(&a, 200, 60);
    let head = header(&s);
    for dead in ["Connection", "Activity", "Observed", "Last activity"] {
        assert!(!head.contains(dead), "{dead}:\n{s}");
    }
}

/// The help overlay's title: (first line shown, last line shown, lines in all).
fn help_title(s: &str) -> (usize, usize, usize) {
    let t = s
        .lines()
        .find(|l| l.starts_with("Keys "))
        .unwrap_or_else(|| panic!("no help title:\n{s}"));
    let nums: Vec<usize> = t
        .split(|c: char| !c.is_ascii_digit())
        .filter(|n| !n.is_empty())
        .map(|n| n.parse().unwrap())
        .collect();
    assert_eq!(nums.len(), 3, "{t}");
    (nums[0], nums[1], nums[2])
}

#[test]
fn help_pages_by_the_rows_it_has_and_reads_whole_in_a_short_or_narrow_pane() {
    // A 10-row sidebar, the usual terminal, a phone over ssh.
    for (w, h) in [(40u16, 10u16), (80, 24), (50, 20)] {
        let (mut a, _) = app(demo_snapshot(10, 0, t0()));
        a.update(Msg::Resize(w, h));
        ch(&mut a, '?');
        let mut s = screen(&a, w, h);
        if (w, h) == (50, 20) {
            insta::assert_snapshot!("cockpit_help_50x20", s);
        }
        let (first, last, all) = help_title(&s);
        let shown = last - first + 1;
        assert_eq!(first, 1, "{w}x{h}:\n{s}");
        // Every row between the title and the key line holds a line of help.
        let rows_below_title = s.lines().count() - 3;
        assert_eq!(shown, rows_below_title, "{w}x{h}:\n{s}");
        let mut seen = String::new();
        let mut pages = 0;
        loop {
            // The key hints stay on the bottom line; nothing is wider than the pane.
            let bottom = s.lines().last().unwrap();
            assert!(
                bottom.contains("PgDn/PgUp page") && bottom.contains("Esc/? close help"),
                "{w}x{h}: {bottom}"
            );
            assert!(
                s.lines()
                    .all(|l| intercom_pane::seam::text::width(l) <= w as usize),
                "{w}x{h}:\n{s}"
            );
            seen.push_str(&s);
            let (f, l, _) = help_title(&s);
            if l == all {
                break;
            }
            key(&mut a, KeyCode::PageDown);
            s = screen(&a, w, h);
            let (f2, _, _) = help_title(&s);
            // A page is the rows shown less one: the last line shown stays on screen.
            assert_eq!(f2, (f + shown - 1).min(all - shown + 1), "{w}x{h}");
            assert!(f2 > f && f2 <= l, "{w}x{h}: {f}..{l} then {f2}");
            pages += 1;
            assert!(pages <= all, "{w}x{h}: PgDn never reached the end");
        }
        assert_eq!(pages, (all - shown).div_ceil(shown - 1), "{w}x{h}");
        // Past the end PgDn stays; PgUp comes back at once; ↑ moves a line.
        key(&mut a, KeyCode::PageDown);
        assert_eq!(help_title(&screen(&a, w, h)).1, all);
        key(&mut a, KeyCode::Up);
        assert_eq!(help_title(&screen(&a, w, h)).1, all - 1, "{w}x{h}");
        key(&mut a, KeyCode::PageUp);
        assert!(help_title(&screen(&a, w, h)).1 < all - 1, "{w}x{h}");
        // Every word of every binding was readable (long ones wrap, never cut).
        let words: Vec<&str> = seen.split_whitespace().collect();
        for b in intercom_pane::seam::ui::keys::BINDINGS {
            for word in b.what.split(' ') {
                assert!(words.contains(&word), "{w}x{h}: {word:?} of {:?}", b.what);
            }
        }
    }
}

#[test]
fn dollar_raises_a_workers_budget_after_a_confirmation_naming_both_amounts() {
    use intercom_pane::seam::budget::eval::{Level, Measure, Standing};
    use intercom_pane::seam::budget::spec::OnContext;
    use intercom_pane::seam::budget::BudgetView;
    let mut snap = demo_snapshot(10, 0, t0());
    let r: &mut Row = snap.rows.iter_mut().find(|r| r.name == "builder").unwrap();
    let own = Standing {
        measure: Measure::Cost,
        spent: 4.5,
        limit: 5.0,
        level: Level::Soft,
        no_pricing: false,
        at_least: false,
    };
    r.budget = Some(BudgetView {
        own: Some(own),
        fleet: None,
        context: None,
        on_context: OnContext::Hold,
        enforced: true,
        held: 0,
        level: Level::Soft,
    });
    let (mut a, _clock) = app(snap);
    select(&mut a, "builder");
    let s = screen(&a, 160, 40);
    let row = s.lines().find(|l| l.contains(" builder ")).unwrap();
    assert!(row.contains("$4.50/5.00 soft"), "{row}");
    assert!(ch(&mut a, '$').is_empty());
    let s = screen(&a, 160, 40);
    assert!(
        s.contains("Raise worker builder's budget from $5.00 to $7.50"),
        "{s}"
    );
    let fx = ch(&mut a, 'y');
    match fx.as_slice() {
        [Effect::Worker {
            action: WorkerAction::RaiseBudget,
            seat,
        }] => assert_eq!(seat.name, "builder"),
        other => panic!("{other:?}"),
    }
    // A worker without a cost budget: said, nothing runs.
    select(&mut a, "reviewer");
    ch(&mut a, '$');
    assert!(screen(&a, 160, 40).contains("has no cost budget to raise"));
    assert!(a.confirming().is_none());
    assert!(ch(&mut a, 'y').is_empty());
}
