//! A reply typed into a pi's pane: the request and the answer every multiplexer gives
//! (`Multiplexer::deliver`), so `reply` has one path whatever the pane is in.

use super::pi_channel::Outcome;

/// One text for the pi in one pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PiText<'a> {
    /// The pane the pi was registered in (tmux: a `%N` id; Herdr: followed when pi moved).
    pub pane: &'a str,
    /// The pi that must still run there: pid and, when known, its start ticks.
    pub pi: Option<(i32, Option<u64>)>,
    /// Who sends (`host:intercom-pane`), where the multiplexer's tool shows it.
    pub sender: &'a str,
    pub text: &'a str,
}

/// What a delivery that may have typed did: the receipt's fields. `outcome` is `Delivered`,
/// `Unconfirmed` (typed, not known to be submitted) or `Failed` (the caller makes a
/// `Delivered` to a busy pi `Queued`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Typed {
    pub outcome: Outcome,
    /// The pane it went to (Herdr: where pi is now).
    pub pane: String,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// Why nothing was typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Untyped {
    /// No pane of that server holds that pi (or the server is not ours): no path to it.
    NoPath(String),
    /// pi's editor holds a draft or shows a dialog, or the pane is in a mode.
    Busy(String),
    /// The delivery tool never started.
    ToolNotStarted(String),
}
