//! The state words every layer shares: a seat's board state, a connection check's verdict, a
//! worker report's status, a close job's stage. Plain enums with their wire names, on the ground
//! floor (no dependency of their own), so that readers, rules and views (which read no evidence
//! or probe module themselves) all name each one the same way.

/// Board state of a seat (control board semantics, docs/behaviour.md §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BoardState {
    Working,
    Waiting,
    Error,
    Offline,
    Idle,
    Unknown,
}

impl BoardState {
    pub const ALL: [BoardState; 6] = [
        BoardState::Working,
        BoardState::Waiting,
        BoardState::Error,
        BoardState::Offline,
        BoardState::Idle,
        BoardState::Unknown,
    ];

    /// States the board counts as needing the person (the sidebar's "N waiting on you · M in error", the
    /// status line's summary, the alerts): every such state alerts by this rule, not by a list
    /// of reasons.
    pub fn needs_attention(self) -> bool {
        matches!(self, BoardState::Waiting | BoardState::Error)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            BoardState::Working => "working",
            BoardState::Waiting => "waiting",
            BoardState::Error => "error",
            BoardState::Offline => "offline",
            BoardState::Idle => "idle",
            BoardState::Unknown => "unknown",
        }
    }
}

impl serde::Serialize for BoardState {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// Connection state of one worker, separate from its activity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConnState {
    /// The expected session answered the health route.
    Connected,
    /// Refused, timed out, or another session answered; never proof the process is gone.
    Disconnected,
    /// Not checked, not provable, or no longer fresh.
    Unknown,
}

impl ConnState {
    /// The JSON/UI word: `connected`, `disconnected` or `unknown`.
    pub fn as_str(self) -> &'static str {
        match self {
            ConnState::Connected => "connected",
            ConnState::Disconnected => "disconnected",
            ConnState::Unknown => "unknown",
        }
    }
}

/// A report's explicit, worker-authored status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ReportStatus {
    Blocked,
    NeedsDecision,
    ReadyForReview,
    /// A tombstone: the worker withdrew its report.
    Clear,
}

impl ReportStatus {
    /// The wire name (`needs_decision`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            ReportStatus::Blocked => "blocked",
            ReportStatus::NeedsDecision => "needs_decision",
            ReportStatus::ReadyForReview => "ready_for_review",
            ReportStatus::Clear => "clear",
        }
    }

    /// Words for the sidebar (`needs decision`, ...).
    pub fn label(self) -> &'static str {
        match self {
            ReportStatus::Blocked => "blocked",
            ReportStatus::NeedsDecision => "needs decision",
            ReportStatus::ReadyForReview => "ready for review",
            ReportStatus::Clear => "clear",
        }
    }

    /// Parse a wire name exactly.
    pub fn parse(s: &str) -> Option<ReportStatus> {
        [
            ReportStatus::Blocked,
            ReportStatus::NeedsDecision,
            ReportStatus::ReadyForReview,
            ReportStatus::Clear,
        ]
        .into_iter()
        .find(|r| r.as_str() == s)
    }
}

/// `closeJob.state` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CloseState {
    Requested,
    AwaitingHandoff,
    AwaitingSettlement,
    Ready,
    Closing,
    Closed,
    Failed,
    TimedOut,
    Interrupted,
    Uncertain,
}

impl CloseState {
    /// Every state, in wire order.
    pub const ALL: [CloseState; 10] = [
        CloseState::Requested,
        CloseState::AwaitingHandoff,
        CloseState::AwaitingSettlement,
        CloseState::Ready,
        CloseState::Closing,
        CloseState::Closed,
        CloseState::Failed,
        CloseState::TimedOut,
        CloseState::Interrupted,
        CloseState::Uncertain,
    ];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            CloseState::Requested => "requested",
            CloseState::AwaitingHandoff => "awaiting_handoff",
            CloseState::AwaitingSettlement => "awaiting_settlement",
            CloseState::Ready => "ready",
            CloseState::Closing => "closing",
            CloseState::Closed => "closed",
            CloseState::Failed => "failed",
            CloseState::TimedOut => "timed_out",
            CloseState::Interrupted => "interrupted",
            CloseState::Uncertain => "uncertain",
        }
    }

    /// Parse a wire name exactly.
    pub fn parse(s: &str) -> Option<CloseState> {
        CloseState::ALL.into_iter().find(|c| c.as_str() == s)
    }

    /// A job still in flight (the first five states).
    pub fn is_pending(self) -> bool {
        matches!(
            self,
            CloseState::Requested
                | CloseState::AwaitingHandoff
                | CloseState::AwaitingSettlement
                | CloseState::Ready
                | CloseState::Closing
        )
    }

    /// A job that blocks a new close: pending, or `uncertain` until a person recovers it.
    pub fn is_fenced(self) -> bool {
        self.is_pending() || self == CloseState::Uncertain
    }
}
