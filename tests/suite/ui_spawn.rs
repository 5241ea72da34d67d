//! The sidebar's spawn form on the pure app and a TestBackend screen: `+` opens it; its keys and
//! pastes stay in it (no list key acts meanwhile); Enter asks the runner for one spawn with the
//! name, first task and worktree choice; the stages and the outcome show in the status line and,
//! once a snapshot lists the new worker, on its row; a sidebar that cannot spawn says why.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use intercom_pane::seam::states::BoardState;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use intercom_pane::seam::clock::{parse_iso, Clock, Ms};
use intercom_pane::seam::snapshot::Snapshot;
use intercom_pane::seam::ui::app::{App, Effect, Msg, Options};
use intercom_pane::seam::ui::demo::{demo_row, demo_snapshot};
use intercom_pane::seam::ui::keys::Mode;
use intercom_pane::seam::ui::ports::{SpawnAsk, WorkerAction, WorkerOutcome};

struct Fixed(AtomicI64);

impl Clock for Fixed {
    fn now_ms(&self) -> Ms {
        self.0.load(Ordering::SeqCst)
    }
}

fn t0() -> Ms {
    parse_iso("2026-11-29T10:00:03.000Z").unwrap()
}

fn app(spawn_unavailable: Option<&str>) -> App {
    let mut a = App::new(
        Arc::new(Fixed(AtomicI64::new(t0()))),
        Options {
            color: false,
            spawn_unavailable: spawn_unavailable.map(str::to_string),
            ..Options::default()
        },
    );
    a.update(Msg::SnapshotArrived(demo_snapshot(3, 0, t0())));
    a
}

fn key(a: &mut App, code: KeyCode) -> Vec<Effect> {
    a.update(Msg::Key(KeyEvent::new(code, KeyModifiers::NONE)))
}

fn typed(a: &mut App, s: &str) {
    for c in s.chars() {
        assert!(key(a, KeyCode::Char(c)).is_empty(), "{c}");
    }
}

fn screen(a: &App, w: u16, h: u16) -> String {
    crate::ui_render::text(&crate::ui_render::buffer(a, w, h))
}

#[test]
fn the_form_asks_for_one_spawn_and_its_progress_shows_until_the_row_does() {
    let mut a = app(None);
    assert!(key(&mut a, KeyCode::Char('+')).is_empty());
    assert_eq!(a.mode(), Mode::Spawn);
    let s = screen(&a, 80, 24);
    assert!(s.contains("Spawn a worker beside the coordinator"), "{s}");
    // List keys are text here: `q` does not quit, `s` marks nothing.
    typed(&mut a, "qs");
    assert!(!a.should_quit());
    key(&mut a, KeyCode::Backspace);
    key(&mut a, KeyCode::Backspace);
    typed(&mut a, "Docs");
    key(&mut a, KeyCode::Down);
    a.update(Msg::Paste("Write the\u{1b}[2J notes".into()));
    key(&mut a, KeyCode::Down);
    key(&mut a, KeyCode::Char(' '));
    let s = screen(&a, 80, 24);
    assert!(s.contains("name:       Docs"), "{s}");
    assert!(s.contains("first task: Write the[2J notes"), "{s}");
    assert!(s.contains("worktree:   [x]"), "{s}");
    let fx = key(&mut a, KeyCode::Enter);
    assert_eq!(
        fx,
        [Effect::Spawn(SpawnAsk {
            name: "Docs".into(),
            prompt: Some("Write the[2J notes".into()),
            worktree: true,
        })]
    );
    assert_eq!(a.mode(), Mode::List, "the form closed");
    // Progress in the status line while no row shows the worker.
    a.update(Msg::SpawnStage {
        name: "Docs".into(),
        stage: "waiting for Docs to register in %7 (2 s of 60 s)".into(),
    });
    assert!(screen(&a, 100, 24).contains("spawn Docs: waiting for Docs to register"));
    // The scan lists it: its row shows the job.
    let mut snap: Snapshot = demo_snapshot(3, 0, t0());
    let mut row = demo_row(5, 0, t0());
    row.name = "Docs".into();
    row.id = "docs-session".into();
    snap.rows.push(row);
    a.update(Msg::SnapshotArrived(snap));
    let job = a.job("docs-session").expect("the new row shows its spawn");
    assert_eq!(job.action, WorkerAction::Spawn);
    assert!(job.stage.contains("waiting for Docs"), "{job:?}");
    a.update(Msg::SpawnFinished {
        name: "Docs".into(),
        outcome: WorkerOutcome {
            ok: true,
            result: "spawned".into(),
            detail: "running in %7".into(),
        },
    });
    let s = screen(&a, 120, 30);
    assert!(s.contains("spawn Docs: spawned — running in %7"), "{s}");
    assert!(a.job("docs-session").unwrap().outcome.as_ref().unwrap().ok);
    // The new worker asks at once: its row shows the question, not the finished spawn.
    let mut snap: Snapshot = demo_snapshot(3, 1, t0());
    let mut row = demo_row(5, 1, t0());
    row.name = "Docs".into();
    row.id = "docs-session".into();
    row.state = BoardState::Waiting;
    row.question = Some("Which branch should Docs use?".into());
    snap.rows.push(row);
    a.update(Msg::SnapshotArrived(snap));
    let s = screen(&a, 120, 30);
    let line = s.lines().find(|l| l.contains("! Docs")).unwrap_or_default();
    assert!(line.contains("Which branch should Docs use?"), "{s}");
    assert!(!line.contains("spawned"), "{s}");
}

#[test]
fn an_empty_name_esc_and_a_sidebar_that_cannot_spawn() {
    let mut a = app(None);
    key(&mut a, KeyCode::Char('+'));
    assert!(
        key(&mut a, KeyCode::Enter).is_empty(),
        "no name: nothing starts"
    );
    assert!(screen(&a, 80, 24).contains("give the worker a name"));
    key(&mut a, KeyCode::Esc);
    assert_eq!(a.mode(), Mode::List);
    let mut b = app(Some("no Intercom roster"));
    assert!(key(&mut b, KeyCode::Char('+')).is_empty());
    assert_eq!(b.mode(), Mode::Notice);
    assert!(b.notice().unwrap().contains("no Intercom roster"));
}
