//! Whole-screen snapshots of the sidebar (ratatui TestBackend + insta) at the sizes people use,
//! with and without colour, details, the reply box, empty/unavailable rosters and 300 seats.
//! Time is a FixedClock, so every age is stable.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use intercom_pane::seam::clock::{parse_iso, FixedClock, Ms};
use intercom_pane::seam::snapshot::{RosterCode, RosterStatus, Snapshot};
use intercom_pane::seam::states::BoardState;
use intercom_pane::seam::ui::app::{App, Msg, Options};
use intercom_pane::seam::ui::demo::{demo_snapshot, EVIL_NAME};
use intercom_pane::seam::ui::ports::ReplyOutcome;
use intercom_pane::seam::ui::render::render;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};
use ratatui::Terminal;

fn now() -> Ms {
    parse_iso("2026-11-29T10:00:03.000Z").unwrap()
}

pub(crate) fn app_with(color: bool, snap: Snapshot) -> App {
    let mut a = App::new(
        Arc::new(FixedClock(now())),
        Options {
            color,
            reply_unavailable: None,
            workers_unavailable: None,
            spawn_unavailable: None,
        },
    );
    a.update(Msg::SnapshotArrived(snap));
    a
}

fn press(a: &mut App, code: KeyCode) {
    a.update(Msg::Key(KeyEvent::new(code, KeyModifiers::NONE)));
}

pub(crate) fn buffer(a: &App, w: u16, h: u16) -> Buffer {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| render(a, f)).unwrap();
    t.backend().buffer().clone()
}

/// The screen as text, one line per row, framed so widths are visible. Cells hidden behind a
/// wide character are skipped, as a terminal would show them.
pub(crate) fn text(b: &Buffer) -> String {
    let mut out = String::new();
    for y in 0..b.area.height {
        let mut line = String::new();
        let mut skip = 0usize;
        for x in 0..b.area.width {
            let sym = b[(x, y)].symbol();
            if skip > 0 {
                skip -= 1;
                continue;
            }
            skip = intercom_pane::seam::text::width(sym).saturating_sub(1);
            line.push_str(sym);
        }
        out.push_str(&format!("|{line}|\n"));
    }
    out
}

/// Styled runs (everything not plain): `y x0..x1 fg bg modifiers`.
fn styles(b: &Buffer) -> String {
    let mut out = String::new();
    for y in 0..b.area.height {
        let mut run: Option<(u16, String)> = None;
        for x in 0..=b.area.width {
            let key = if x < b.area.width {
                let c = &b[(x, y)];
                if c.fg == Color::Reset && c.bg == Color::Reset && c.modifier == Modifier::empty() {
                    None
                } else {
                    Some(format!("fg={:?} bg={:?} mod={:?}", c.fg, c.bg, c.modifier))
                }
            } else {
                None
            };
            let same = matches!((&run, &key), (Some((_, a)), Some(b)) if a == b);
            if !same {
                if let Some((x0, s)) = run.take() {
                    out.push_str(&format!("{y:>2} {x0:>3}..{x:<3} {s}\n"));
                }
                run = key.map(|k| (x, k));
            }
        }
    }
    out
}

fn assert_no_colour(b: &Buffer) {
    for y in 0..b.area.height {
        for x in 0..b.area.width {
            let c = &b[(x, y)];
            assert_eq!(
                (c.fg, c.bg),
                (Color::Reset, Color::Reset),
                "colour at {x},{y}"
            );
        }
    }
}

fn screen(a: &App, w: u16, h: u16) -> String {
    text(&buffer(a, w, h))
}

fn demo(n: usize) -> Snapshot {
    demo_snapshot(n, 0, now())
}

#[test]
fn sizes_with_colour() {
    for (w, h) in [(20u16, 5u16), (40, 10), (80, 24), (120, 40)] {
        let a = app_with(true, demo(10));
        let b = buffer(&a, w, h);
        let shot = format!("{}\n{}", text(&b), styles(&b));
        insta::assert_snapshot!(format!("colour_{w}x{h}"), shot);
    }
}

#[test]
fn sizes_without_colour_keep_words_and_glyphs() {
    for (w, h) in [(20u16, 5u16), (40, 10), (80, 24), (120, 40)] {
        let a = app_with(false, demo(10));
        let b = buffer(&a, w, h);
        assert_no_colour(&b);
        // Same words and glyphs as with colour: colour only repeats what the text says.
        let coloured = buffer(&app_with(true, demo(10)), w, h);
        assert_eq!(text(&b), text(&coloured));
        insta::assert_snapshot!(format!("mono_{w}x{h}"), text(&b));
    }
}

#[test]
fn tiny_pane_still_shows_who_needs_attention() {
    // 20 × 3: glyph + name, and the overflow line counts the hidden seats needing attention.
    let a = app_with(false, demo(10));
    let s = screen(&a, 20, 3);
    insta::assert_snapshot!("tiny_20x3", s);
    assert!(s.contains("! builder"), "{s}");
    assert!(s.contains("+8"), "{s}");
}

#[test]
fn hostile_names_render_as_harmless_text() {
    let a = app_with(false, demo(10));
    let s = screen(&a, 120, 40);
    assert!(!s.contains('\u{1b}') && !s.contains('\u{7}') && !s.contains('\u{202e}'));
    assert!(s.contains("evilnameexe.txt"), "{s}");
    assert!(!EVIL_NAME.is_empty());
}

#[test]
fn details_open() {
    let mut a = app_with(true, demo(10));
    press(&mut a, KeyCode::Down);
    press(&mut a, KeyCode::Down);
    press(&mut a, KeyCode::Char('d'));
    insta::assert_snapshot!("details_80x24", screen(&a, 80, 24));
    insta::assert_snapshot!("details_120x40", screen(&a, 120, 40));
    // Short pane: details replace the list, and PgDn/PgUp scroll them (title stays).
    a.update(Msg::Resize(40, 10));
    insta::assert_snapshot!("details_40x10", screen(&a, 40, 10));
    press(&mut a, KeyCode::PageDown);
    let s = screen(&a, 40, 10);
    assert!(
        s.contains("Details · reviewer") && s.contains("lines above (PgUp)"),
        "{s}"
    );
    insta::assert_snapshot!("details_40x10_scrolled", s);
    for _ in 0..50 {
        press(&mut a, KeyCode::PageDown);
    }
    let s = screen(&a, 40, 10);
    assert!(
        s.contains("Seen") && !s.contains("more lines"),
        "bottom reached:\n{s}"
    );
    press(&mut a, KeyCode::PageUp);
    assert_ne!(screen(&a, 40, 10), s, "one PgUp moves back from the bottom");
    // Another row starts at the top.
    press(&mut a, KeyCode::Down);
    assert!(!screen(&a, 40, 10).contains("lines above"));
}

fn enter(a: &mut App) -> usize {
    a.update(Msg::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)))
        .len()
}

#[test]
fn reply_box_states() {
    let mut a = app_with(true, demo(10));
    press(&mut a, KeyCode::Down); // builder: reply path available
    press(&mut a, KeyCode::Char('r'));
    for c in "use the staging key".chars() {
        press(&mut a, KeyCode::Char(c));
    }
    insta::assert_snapshot!("reply_editing_80x24", screen(&a, 80, 24));
    insta::assert_snapshot!("reply_editing_40x10", screen(&a, 40, 10));
    // Enter sends and closes the box; the row says the reply is in flight.
    assert_eq!(enter(&mut a), 1);
    assert_eq!(a.reply_open(), None);
    insta::assert_snapshot!("reply_sending_80x24", screen(&a, 80, 24));
    a.update(Msg::ReplyFinished {
        row_id: "session-0001".into(),
        outcome: ReplyOutcome::Failed {
            exit: Some(3),
            signal: None,
            stderr: "can't find session: demo\u{1b}[31m\n".into(),
        },
    });
    insta::assert_snapshot!("reply_failed_80x24", screen(&a, 80, 24));
    press(&mut a, KeyCode::Char('r'));
    assert_eq!(enter(&mut a), 1);
    a.update(Msg::ReplyFinished {
        row_id: "session-0001".into(),
        outcome: ReplyOutcome::Delivered {
            at: now(),
            target: "demo:1".into(),
            outcome: "delivered",
        },
    });
    // The receipt survives a refresh and shows on the row.
    a.update(Msg::SnapshotArrived(demo_snapshot(10, 1, now())));
    let s = screen(&a, 80, 24);
    assert!(s.contains("↳ delivered 10:00:03 to demo:1"), "{s}");
    insta::assert_snapshot!("reply_delivered_80x24", s);

    // A row without a reply path: the refusal stays at the bottom until dismissed.
    let mut b = app_with(true, demo(10));
    press(&mut b, KeyCode::Char('r'));
    let s = screen(&b, 80, 24);
    assert!(
        s.contains("no reply to coordinator: reply needs a registered seat (⏎/Esc: dismiss)"),
        "{s}"
    );
    assert!(s.contains("⏎/Esc dismiss  ^C quit"), "{s}");

    // A run without a reply path: the box says so before anything is typed.
    let mut c = App::new(
        Arc::new(FixedClock(now())),
        Options {
            color: true,
            reply_unavailable: Some(intercom_pane::seam::ui::ports::NO_REPLY_PATH_REASON.into()),
            workers_unavailable: None,
            spawn_unavailable: None,
        },
    );
    c.update(Msg::SnapshotArrived(demo(10)));
    press(&mut c, KeyCode::Down);
    press(&mut c, KeyCode::Char('r'));
    insta::assert_snapshot!("reply_unavailable_80x24", screen(&c, 80, 24));
}

#[test]
fn receipts_and_refusals_show_at_every_pane_height() {
    let mut a = app_with(false, demo(10));
    press(&mut a, KeyCode::Down);
    press(&mut a, KeyCode::Char('r'));
    press(&mut a, KeyCode::Char('y'));
    enter(&mut a);
    a.update(Msg::ReplyFinished {
        row_id: "session-0001".into(),
        outcome: ReplyOutcome::Delivered {
            at: now(),
            target: "demo:1".into(),
            outcome: "delivered",
        },
    });
    for w in [20u16, 30, 40, 80, 120] {
        for h in 2..=30u16 {
            let s = screen(&a, w, h);
            assert!(s.contains("↳ deliver"), "list {w}x{h}:\n{s}");
        }
    }
    insta::assert_snapshot!("reply_delivered_40x3", screen(&a, 40, 3));
    press(&mut a, KeyCode::Char('d')); // details
    assert!(a.details_open());
    for w in [20u16, 40, 80] {
        for h in 2..=30u16 {
            let s = screen(&a, w, h);
            assert!(s.contains("Last reply"), "details {w}x{h}:\n{s}");
        }
    }
    insta::assert_snapshot!("reply_details_40x3", screen(&a, 40, 3));

    // A refused `r` is on screen at every height, even a one-row pane.
    let mut b = app_with(false, demo(10));
    press(&mut b, KeyCode::Char('r'));
    for w in [20u16, 40, 80] {
        for h in 1..=30u16 {
            let s = screen(&b, w, h);
            assert!(s.contains("no reply"), "{w}x{h}:\n{s}");
        }
    }
    insta::assert_snapshot!("reply_refused_20x3", screen(&b, 20, 3));
}

#[test]
fn the_box_names_its_seat_and_grows_with_the_draft() {
    let mut a = app_with(true, demo(10));
    press(&mut a, KeyCode::Down);
    press(&mut a, KeyCode::Char('r'));
    a.update(Msg::Paste("first line\nsecond line\nthird".into()));
    insta::assert_snapshot!("reply_multiline_80x24", screen(&a, 80, 24));
    insta::assert_snapshot!("reply_multiline_40x10", screen(&a, 40, 10));
    insta::assert_snapshot!("reply_multiline_30x3", screen(&a, 30, 3));
    // A long draft scrolls within the bounds, keeping the cursor's line in view.
    let long: String = (0..40).map(|i| format!("line {i}\n")).collect();
    a.update(Msg::Paste(long));
    let s = screen(&a, 80, 24);
    assert!(s.contains("│   line 39") && !s.contains("line 20"), "{s}");
    assert!(s.contains("Reply to builder"), "{s}");
    assert!(s.contains("builder"), "{s}");
    // Rows the box was not opened on may come and go: it keeps naming builder.
    let mut moved = demo(10);
    moved.rows.swap(1, 2);
    moved.rows.remove(0);
    a.update(Msg::SnapshotArrived(moved));
    assert!(screen(&a, 80, 24).contains("Reply to builder"));
    let mut gone = demo(10);
    gone.rows.remove(1);
    a.update(Msg::SnapshotArrived(gone));
    let s = screen(&a, 80, 24);
    assert!(s.contains("Reply to builder"), "{s}");
    assert!(
        s.contains("builder is gone from the board — Enter sends nothing"),
        "{s}"
    );
}

#[test]
fn empty_and_unavailable_rosters_say_so() {
    let mut empty = demo(0);
    empty.rows.clear();
    let a = app_with(true, empty);
    let s = screen(&a, 80, 24);
    assert!(s.contains("No workers: the roster is empty."), "{s}");
    insta::assert_snapshot!("empty_80x24", s);

    let unavailable = Snapshot {
        scanned_at: now(),
        roster: RosterStatus::Unavailable {
            code: RosterCode::Config("config_missing"),
            reason: "no Intercom config at /home/dev/.pi-intercom/config.json".into(),
        },
        rows: vec![],
        truncated: false,
        errors: vec!["config_missing".into()],
        usage: Default::default(),
        hosts: vec![],
    };
    let a = app_with(true, unavailable);
    let s = screen(&a, 80, 24);
    assert!(s.contains("status unavailable: no Intercom config"), "{s}");
    insta::assert_snapshot!("unavailable_80x24", s);
    insta::assert_snapshot!("unavailable_20x5", screen(&a, 20, 5));

    let mut a = App::new(Arc::new(FixedClock(now())), Options::default());
    assert!(screen(&a, 40, 10).contains("Scanning…"));
    // While the next pass runs, the title says so next to the age of the last one.
    a.update(Msg::SnapshotArrived(demo(2)));
    a.update(Msg::PassStarted);
    assert!(screen(&a, 80, 10).contains("scanned <1m ago, scanning…"));
    a.update(Msg::SnapshotArrived(demo(2)));
    assert!(!screen(&a, 80, 10).contains("scanning…"));
}

#[test]
fn three_hundred_workers_show_an_overflow_line() {
    let mut snap = demo(300);
    snap.truncated = true;
    let mut a = app_with(true, snap);
    for _ in 0..40 {
        press(&mut a, KeyCode::Down);
    }
    let s = screen(&a, 80, 24);
    assert!(s.contains("+280 more (41/300)"), "{s}");
    insta::assert_snapshot!("workers300_80x24", s);
    insta::assert_snapshot!("workers300_40x10", screen(&a, 40, 10));
    press(&mut a, KeyCode::End);
    assert!(screen(&a, 80, 24).contains("(300/300)"));
}

#[test]
fn toggles_show_counts_and_the_seen_group() {
    let mut snap = demo(10);
    for r in snap.rows.iter_mut().take(3) {
        r.seen = true;
    }
    let mut a = app_with(false, snap);
    insta::assert_snapshot!("seen_group_80x24", screen(&a, 80, 24));
    press(&mut a, KeyCode::Char('o'));
    press(&mut a, KeyCode::Char('h'));
    let s = screen(&a, 80, 24);
    assert!(
        s.contains("offline hidden") && s.contains("seen hidden"),
        "{s}"
    );
    insta::assert_snapshot!("hidden_80x24", s);
    let v = a.list_view();
    assert!(v.hidden_offline > 0 && v.hidden_seen > 0);
    assert!(a.list_view().items.iter().all(
        |it| !matches!(it, intercom_pane::seam::ui::app::Item::Row(r) if r.state == BoardState::Offline)
    ));
}

/// The details of a closed worker say it can come back, and with which command (the name quoted
/// for a shell).
#[test]
fn a_closed_workers_details_give_the_resume_command() {
    let mut snap = demo_snapshot(3, 1, now());
    let row = &mut snap.rows[0];
    row.name = "Doc's".into();
    row.state = BoardState::Offline;
    row.close_job = Some(intercom_pane::seam::snapshot::RowCloseJob {
        job_id: "j1".into(),
        state: intercom_pane::seam::states::CloseState::Closed,
        reason: None,
        updated_at: now(),
    });
    let id = row.id.clone();
    let mut a = app_with(false, snap);
    for _ in 0..10 {
        if a.selected_row().map(|r| r.id.as_str()) == Some(id.as_str()) {
            break;
        }
        press(&mut a, KeyCode::Down);
    }
    press(&mut a, KeyCode::Char('d'));
    let screen = text(&buffer(&a, 120, 40));
    assert!(
        screen.contains("intercom-pane resume-worker 'Doc'\\''s' --confirm-closed"),
        "{screen}"
    );
}

/// A seat found without any setup (a pi in a pane: no roster, no extension) shows its details in
/// plain words: no raw codes (`not_checked`, `first-user-message`, `pane_runs_pi`), no Intercom
/// fields it cannot have, and a reply refusal that says what to do.
#[test]
fn a_zero_setup_seat_shows_plain_words() {
    use intercom_pane::seam::board::provenance::TaskSource;
    use intercom_pane::seam::board::reason::{StateReason, StateSource};
    use intercom_pane::seam::scan::ReplyUnavailable;
    use intercom_pane::seam::snapshot::{ConnectionView, ReplyPath, RowRole};
    let mut snap = demo(3);
    {
        let r = &mut snap.rows[1];
        r.name = "build %3".into();
        r.role = RowRole::Seat;
        r.state = BoardState::Idle;
        r.state_reason = StateReason::PaneRunsPi;
        r.state_source = StateSource::Mux(intercom_pane::seam::mux::MuxKind::Tmux);
        r.connection = ConnectionView::not_checked();
        r.activity = None;
        r.report = None;
        r.handoff = None;
        r.close_job = None;
        r.question = None;
        r.last_error = None;
        r.responsibility = None;
        r.task_source = Some(TaskSource::FirstUserMessage);
        r.reply = ReplyPath::Unavailable {
            reason: ReplyUnavailable::NoExtension.to_string(),
        };
    }
    let mut a = app_with(false, snap);
    while !screen(&a, 120, 40).contains("›· build %3") {
        press(&mut a, KeyCode::Down);
    }
    press(&mut a, KeyCode::Char('d'));
    let s = screen(&a, 160, 40);
    let details: String = s
        .lines()
        .skip_while(|l| !l.contains("Details · build %3"))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        details.contains("its pane runs pi (source: tmux)"),
        "{details}"
    );
    assert!(
        details.contains("(source: first user message)"),
        "{details}"
    );
    assert!(
        details
            .contains("install it (pi install <checkout>/linux/pi-extension), then type /reload"),
        "{details}"
    );
    for absent in ["Connection", "Activity", "Report"] {
        assert!(!details.contains(absent), "{absent}: {details}");
    }
    // No snake_case or dashed code anywhere in it (paths aside).
    let code = details.split_whitespace().find(|w| {
        let w = w.trim_matches(|c: char| !c.is_ascii_alphanumeric());
        !w.contains('/')
            && (w.contains('_') || w.matches('-').count() >= 2)
            && w.chars()
                .all(|c| c.is_ascii_lowercase() || c == '_' || c == '-')
    });
    assert_eq!(code, None, "{details}");
}

/// The sidebar's header and `scan --print` count the seats that wait on you with the same words
/// and the same rule, from one pass (errors are counted beside, in words of their own).
#[test]
fn the_header_and_scan_print_say_waiting_on_you_alike() {
    use crate::scan_support::{pi_root, scan_options, Env};
    use intercom_pane::seam::clock::SystemClock;
    use intercom_pane::seam::scan;
    let env = Env::new();
    pi_root(&env, &["waiting", "error", "idle", "tool"]);
    let opts = scan_options(&env, env.path("root"));
    std::fs::create_dir_all(env.path("data")).unwrap();
    let pass = scan::run(&opts, &SystemClock, None, None).unwrap();
    let printed = intercom_pane::seam::views::print::print_table(&pass.records, "b");
    assert!(printed.contains(", 1 waiting on you, "), "{printed}");
    let a = app_with(false, pass.snapshot.clone());
    let s = screen(&a, 120, 20);
    let head = s.lines().next().unwrap();
    assert!(head.contains(" · 1 waiting on you · 1 in error"), "{head}");
    assert!(!s.contains("need attention"), "{s}");
}

/// Over ssh from a phone (50 × 20) and in an 80 × 24 terminal: the list keeps its key hints on
/// the last line, no line is wider than the pane, and the help overlay (`?`) is readable there:
/// its title, whole key names with their words, and how to leave it.
#[test]
fn phone_and_terminal_sizes_keep_key_hints_and_a_readable_help() {
    for (w, h) in [(50u16, 20u16), (80, 24)] {
        let mut a = app_with(false, demo(10));
        let s = screen(&a, w, h);
        let last = s.lines().last().unwrap_or_default().to_string();
        for hint in ["⏎ go to pane", "? help", "q quit"] {
            assert!(last.contains(hint), "{w}x{h} key line: {last}\n{s}");
        }
        if w == 50 {
            insta::assert_snapshot!("mono_50x20", s.clone());
        }
        press(&mut a, KeyCode::Char('?'));
        let help = screen(&a, w, h);
        for l in help.lines() {
            // `|` frames each row of the text dump.
            assert!(
                intercom_pane::seam::text::width(l) <= usize::from(w) + 2,
                "{w}x{h}: {l}"
            );
        }
        for words in ["go to pane", "reply", "close help", "PgDn/PgUp"] {
            assert!(
                help.contains(words),
                "{w}x{h} help lacks {words:?}:\n{help}"
            );
        }
        if w == 50 {
            insta::assert_snapshot!("help_50x20", help);
        }
    }
}
