//! The kinds of entries, message roles and stop reasons of a pi session file (docs/interop.md
//! §6), with pi's names for them.

/// What kind of entry a line is (its top-level `type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// `message`
    Message,
    /// `model_change`
    ModelChange,
    /// `compaction`
    Compaction,
    /// `context_edit` (pi 1.6.0: written when a retry is scheduled)
    ContextEdit,
    /// `branch_summary`
    BranchSummary,
    /// Any other type (`thinking_level_change`, `label`, `custom`, ...).
    Other,
}

impl EntryKind {
    /// pi's name for it (`other` for the rest).
    pub fn name(self) -> &'static str {
        match self {
            EntryKind::Message => "message",
            EntryKind::ModelChange => "model_change",
            EntryKind::Compaction => "compaction",
            EntryKind::ContextEdit => "context_edit",
            EntryKind::BranchSummary => "branch_summary",
            EntryKind::Other => "other",
        }
    }
}

/// `message.role` of a message entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
    ToolResult,
    BashExecution,
    /// pi 1.6.0 writes the system prompt as a message; it is neither user nor assistant.
    System,
    /// Legacy `custom` role.
    Custom,
    Other,
}

impl Role {
    /// pi's name for it (`other` for the rest).
    pub fn name(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::ToolResult => "toolResult",
            Role::BashExecution => "bashExecution",
            Role::System => "system",
            Role::Custom => "custom",
            Role::Other => "other",
        }
    }

    /// Whether a message of this role decides the seat's turn state. A `bashExecution` is a
    /// command the person ran with `!` in pi: it starts no agent turn, and pi appends it only
    /// when no turn is streaming (it queues it until the turn ends), so it never decides.
    pub fn decides_turn(self) -> bool {
        matches!(self, Role::User | Role::Assistant | Role::ToolResult)
    }
}

/// `message.stopReason` of an assistant message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    Stop,
    Length,
    ToolUse,
    Error,
    Aborted,
    Other,
}

impl StopReason {
    /// pi's name for it (`other` for the rest).
    pub fn name(self) -> &'static str {
        match self {
            StopReason::Stop => "stop",
            StopReason::Length => "length",
            StopReason::ToolUse => "toolUse",
            StopReason::Error => "error",
            StopReason::Aborted => "aborted",
            StopReason::Other => "other",
        }
    }
}
