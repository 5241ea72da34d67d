//! A built-in changing snapshot source: simulated seats whose states move each pass. A fixture:
//! used by unit tests, and through `seam` by `examples/ui_demo.rs` (which `tests/suite/ui_tmux.rs`
//! drives), the snapshot tests and the benchmark; never by the binary.
//!
//! One seat is deliberately named with terminal escape sequences and a bidi override so every
//! view can show that hostile names render as harmless text.

use std::sync::Arc;
use std::time::Duration;

use crate::board::intercom::Evidence;
use crate::board::intercom::ObservedStatus;
use crate::board::provenance::TaskSource;
use crate::board::reason::{StateReason, StateSource};
use crate::clock::{Clock, Ms};
use crate::snapshot::{
    ActivityView, ConnectionView, ReplyPath, RosterStatus, Row, RowCloseJob, RowHandoff, RowReport,
    RowRole, Snapshot,
};
use crate::states::{BoardState, CloseState, ConnState, ReportStatus};
use crate::ui::ports::{CancelToken, SnapshotSource};

/// The hostile seat name: OSC title change, clear screen, and a right-to-left override.
pub const EVIL_NAME: &str = "evil\u{1b}]0;pwned\u{7}\u{1b}[2Jname\u{202e}exe.txt";

const NAMES: [&str; 8] = [
    "coordinator",
    "builder",
    "reviewer",
    EVIL_NAME,
    "docs-writer",
    "日本語ワーカー",
    "tester",
    "release-manager-with-a-very-long-name",
];

const LABELS: [&str; 5] = [
    "Running command",
    "Thinking",
    "Waiting for input",
    "Editing file",
    "Idle",
];

/// Seat `i` of a demo fleet at pass `pass`, observed relative to `now`.
pub fn demo_row(i: usize, pass: u64, now: Ms) -> Row {
    let name = NAMES
        .get(i)
        .map(|s| s.to_string())
        .unwrap_or_else(|| format!("worker-{i:03}"));
    let states = BoardState::ALL;
    let state = states[(i + pass as usize) % states.len()];
    let conn = match (i + pass as usize) % 5 {
        0..=2 => ConnState::Connected,
        3 => ConnState::Unknown,
        _ => ConnState::Disconnected,
    };
    let age_ms = ((i as i64 * 7_000) + pass as i64 * 3_000) % 180_000;
    Row {
        usage: None,
        budget: None,
        context: None,
        state_at: None,
        id: format!("session-{i:04}"),
        seen_key: format!("demo/{}", i),
        name,
        project: "demo".into(),
        role: if i == 0 {
            RowRole::Coordinator
        } else {
            RowRole::Worker
        },
        responsibility: Some(format!("Simulated seat {i}: changes state every pass")),
        state,
        state_reason: match state {
            BoardState::Working => StateReason::ToolRunning,
            BoardState::Waiting => StateReason::InputNeeded,
            BoardState::Error => StateReason::FinalError,
            BoardState::Offline => StateReason::PaneNotRunningPi,
            BoardState::Idle => StateReason::CompletedReply,
            BoardState::Unknown => StateReason::PaneNotIdentified,
        },
        state_source: StateSource::Demo,
        connection: demo_connection(conn, now),
        activity: (i % 7 != 6).then(|| demo_activity(i, pass, age_ms, now)),
        report: demo_report(i, now),
        handoff: (i % 5 == 2).then(|| RowHandoff {
            job_id: format!("job-{i}"),
            summary: "handoff saved".into(),
            updated_at: now - 300_000,
        }),
        close_job: (i % 5 == 2).then(|| RowCloseJob {
            job_id: format!("job-{i}"),
            state: CloseState::AwaitingSettlement,
            reason: None,
            updated_at: now - 240_000,
        }),
        task: Some(format!("Demo task {i}: keep the board honest")),
        task_source: Some(TaskSource::Registration),
        workspace: Some(format!("/home/dev/demo/seat-{i}")),
        model: Some("claude-sonnet".into()),
        provider: Some("anthropic".into()),
        last_error: (state == BoardState::Error).then(|| "provider returned 529".to_string()),
        last_assistant_text: None,
        question: (state == BoardState::Waiting).then(|| {
            "Choose staging or production for the rollout.\n\n1. staging\n2. production".into()
        }),
        last_user_text: Some(format!("Demo task {i}: keep the board honest")),
        running_tool: (state == BoardState::Working).then(|| crate::snapshot::RunningTool {
            name: Some("bash".into()),
            since: Some(now - 12_000),
        }),
        // A simulated pane for every seat whose pi is alive (⏎ has somewhere to go).
        pane: (!matches!(state, BoardState::Offline | BoardState::Unknown)).then(|| {
            crate::snapshot::SeatPane {
                kind: crate::snapshot::MuxKind::Tmux,
                socket: None,
                pane_id: format!("%{}", 10 + i),
                shell_pid: None,
                pi: None,
            }
        }),
        last_activity: Some(now - age_ms),
        relaunched_at: None,
        waiting_on_you: state == BoardState::Waiting,
        seen: false,
        alive: Some(state != BoardState::Offline),
        reply: demo_reply(i),
        turn: Some(format!("entry:demo-{i}-{pass}")),
        session_ended: false,
        host: None,
    }
}

/// A check result of the kind the probe gives for `conn`.
fn demo_connection(conn: ConnState, now: Ms) -> ConnectionView {
    ConnectionView {
        state: conn,
        reason: match conn {
            ConnState::Connected => "verified",
            ConnState::Disconnected => "refused",
            ConnState::Unknown => "not_checked",
        }
        .into(),
        checked_at: (conn != ConnState::Unknown).then_some(now - 2_000),
    }
}

/// The observed activity of seat `i`, `age_ms` old.
fn demo_activity(i: usize, pass: u64, age_ms: i64, now: Ms) -> ActivityView {
    ActivityView {
        status: [
            ObservedStatus::Working,
            ObservedStatus::Thinking,
            ObservedStatus::Idle,
            ObservedStatus::Closed,
            ObservedStatus::Unknown,
        ][(i + pass as usize) % 5],
        label: LABELS[(i + pass as usize) % LABELS.len()].into(),
        observed_at: Some(now - age_ms),
        stale: age_ms > 60_000,
        evidence: if age_ms > 60_000 {
            Evidence::Stale
        } else {
            Evidence::Recent
        },
    }
}

/// Every fourth seat without a report; the others one of each kind that asks for attention.
fn demo_report(i: usize, now: Ms) -> Option<RowReport> {
    match i % 4 {
        1 => Some((
            ReportStatus::Blocked,
            "waiting on API credentials from the lead",
        )),
        2 => Some((ReportStatus::NeedsDecision, "two designs; need a pick")),
        3 => Some((ReportStatus::ReadyForReview, "branch pushed, tests green")),
        _ => None,
    }
    .map(|(status, summary)| RowReport {
        status,
        summary: summary.into(),
        updated_at: now - 95_000,
    })
}

/// Every third seat can be replied to; the others say why not.
fn demo_reply(i: usize) -> ReplyPath {
    if i % 3 == 1 {
        ReplyPath::Available {
            target: format!("demo:{}", i),
        }
    } else {
        ReplyPath::Unavailable {
            reason: "reply needs a registered seat".into(),
        }
    }
}

/// A whole demo snapshot of `workers` seats at pass `pass`.
pub fn demo_snapshot(workers: usize, pass: u64, now: Ms) -> Snapshot {
    Snapshot {
        scanned_at: now - 1_000,
        roster: RosterStatus::Available {
            root: "/home/dev/demo".into(),
        },
        rows: (0..workers).map(|i| demo_row(i, pass, now)).collect(),
        truncated: false,
        errors: Vec::new(),
        usage: Default::default(),
        hosts: Vec::new(),
    }
}

/// A `SnapshotSource` over `demo_snapshot`: each pass takes `pass_time` (cancellable).
pub struct DemoSource {
    /// Number of simulated seats.
    pub workers: usize,
    /// How long each simulated pass takes.
    pub pass_time: Duration,
    pass: u64,
    clock: Arc<dyn Clock>,
    cancel: CancelToken,
}

impl DemoSource {
    /// A demo fleet of `workers` seats.
    pub fn new(workers: usize, pass_time: Duration, clock: Arc<dyn Clock>) -> Self {
        DemoSource {
            workers,
            pass_time,
            pass: 0,
            clock,
            cancel: CancelToken::new(),
        }
    }
}

impl SnapshotSource for DemoSource {
    fn next_snapshot(&mut self) -> Snapshot {
        // Like a real pass: takes time, and stops waiting as soon as it is cancelled.
        self.cancel.wait_timeout(self.pass_time);
        let snap = demo_snapshot(self.workers, self.pass, self.clock.now_ms());
        self.pass = self.pass.wrapping_add(1);
        snap
    }

    fn cancel_token(&self) -> CancelToken {
        self.cancel.clone()
    }
}
