//! What pi's run is doing, as the registration records it (`runState`, docs/interop.md §4):
//! the state words and the lifecycle events that set them. Shared by the record (`record`) and
//! the events the extension reports (`pi_events`).

use serde::{Deserialize, Serialize};

/// A registration's `runState.state`: what pi's run was doing at the last recorded event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunState {
    Working,
    Idle,
    Closed,
}

impl RunState {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            RunState::Working => "working",
            RunState::Idle => "idle",
            RunState::Closed => "closed",
        }
    }
}

/// A lifecycle event the extension records (`register --event`, `runState.event`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunEvent {
    SessionStart,
    AgentStart,
    AgentSettled,
    /// Older pi's `agent_end`: also fired before an automatic retry, so it is not proof that
    /// the run has settled (older pi has no `agent_settled`; this is its nearest boundary).
    AgentEnd,
    /// `/tree` moved pi's leaf (`--leaf-id`), which pi writes nowhere until the next entry.
    SessionTree,
    SessionShutdown,
}

impl RunEvent {
    const ALL: [RunEvent; 6] = [
        RunEvent::SessionStart,
        RunEvent::AgentStart,
        RunEvent::AgentSettled,
        RunEvent::AgentEnd,
        RunEvent::SessionTree,
        RunEvent::SessionShutdown,
    ];

    /// The event named `s`, if it is one.
    pub fn parse(s: &str) -> Option<RunEvent> {
        RunEvent::ALL.into_iter().find(|e| e.name() == s)
    }

    /// The wire name.
    pub fn name(self) -> &'static str {
        match self {
            RunEvent::SessionStart => "session_start",
            RunEvent::AgentStart => "agent_start",
            RunEvent::AgentSettled => "agent_settled",
            RunEvent::AgentEnd => "agent_end",
            RunEvent::SessionTree => "session_tree",
            RunEvent::SessionShutdown => "session_shutdown",
        }
    }

    /// The run state this event establishes.
    pub fn run_state(self) -> RunState {
        match self {
            RunEvent::SessionStart
            | RunEvent::AgentSettled
            | RunEvent::AgentEnd
            | RunEvent::SessionTree => RunState::Idle,
            RunEvent::AgentStart => RunState::Working,
            RunEvent::SessionShutdown => RunState::Closed,
        }
    }
}
