//! What pi tells the shipped extension beyond its run state, as the registration's `pi` section
//! (docs/interop.md §4): an open dialog, a retry and its attempt, a compaction, the tool
//! running, how the last run settled, the context fill. The extension sends its whole current
//! picture with each event (`register --event E --pi-state JSON`), so a lost or coalesced event
//! loses nothing but its name; a picture with an older sequence number than the recorded one
//! is never written.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::run_state::RunEvent;
use crate::clock::{iso_ms, Ms};

/// Longest `--pi-state` accepted, in bytes.
pub(super) const MAX_PI_STATE_BYTES: usize = 8 * 1024;
/// Longest dialog title kept, in characters (the board shows it as the seat's question).
pub(super) const TITLE_CHARS: usize = 500;
/// Longest error text kept (a retry's or a compaction's), in characters.
pub(super) const ERROR_CHARS: usize = 300;
/// Highest retry attempt believed.
const MAX_ATTEMPT: u32 = 1000;
/// Most tools believed running at once.
const MAX_RUNNING: u32 = 10_000;
/// Most prompts believed held for the budget (the extension holds at most 16).
const MAX_HELD: u32 = 1000;
/// Most context tokens and largest context window believed.
const MAX_TOKENS: u64 = 1 << 40;

/// An event the extension reports beyond the run-state events (`RunEvent`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PiEvent {
    UiPromptStart,
    UiPromptEnd,
    ToolExecutionStart,
    ToolExecutionEnd,
    SessionBeforeCompact,
    SessionCompact,
    SessionCompactFailed,
    /// pi scheduled a retry of a failed provider call (seen by the extension as the failed
    /// attempt's `context_edit`; pi's own name for it in its JSON mode).
    AutoRetryStart,
    /// The retries ended: a later call succeeded, or pi gave up or was stopped.
    AutoRetryEnd,
    /// The extension held a prompt for the budget.
    BudgetHold,
    /// The extension let a held prompt go (the budget was lifted).
    BudgetRelease,
}

impl PiEvent {
    const ALL: [PiEvent; 11] = [
        PiEvent::UiPromptStart,
        PiEvent::UiPromptEnd,
        PiEvent::ToolExecutionStart,
        PiEvent::ToolExecutionEnd,
        PiEvent::SessionBeforeCompact,
        PiEvent::SessionCompact,
        PiEvent::SessionCompactFailed,
        PiEvent::AutoRetryStart,
        PiEvent::AutoRetryEnd,
        PiEvent::BudgetHold,
        PiEvent::BudgetRelease,
    ];

    pub fn name(self) -> &'static str {
        match self {
            PiEvent::UiPromptStart => "ui_prompt_start",
            PiEvent::UiPromptEnd => "ui_prompt_end",
            PiEvent::ToolExecutionStart => "tool_execution_start",
            PiEvent::ToolExecutionEnd => "tool_execution_end",
            PiEvent::SessionBeforeCompact => "session_before_compact",
            PiEvent::SessionCompact => "session_compact",
            PiEvent::SessionCompactFailed => "session_compact_failed",
            PiEvent::AutoRetryStart => "auto_retry_start",
            PiEvent::AutoRetryEnd => "auto_retry_end",
            PiEvent::BudgetHold => "budget_hold",
            PiEvent::BudgetRelease => "budget_release",
        }
    }

    pub fn parse(s: &str) -> Option<PiEvent> {
        PiEvent::ALL.into_iter().find(|e| e.name() == s)
    }
}

/// Any event `register --event` records: a run-state event or one of pi's other events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    Run(RunEvent),
    Pi(PiEvent),
}

impl Event {
    pub fn parse(s: &str) -> Option<Event> {
        RunEvent::parse(s)
            .map(Event::Run)
            .or_else(|| PiEvent::parse(s).map(Event::Pi))
    }

    pub fn name(self) -> &'static str {
        match self {
            Event::Run(e) => e.name(),
            Event::Pi(e) => e.name(),
        }
    }

    /// Every name `register --event` accepts, for its error message.
    pub fn names() -> Vec<&'static str> {
        let run = ["session_start", "agent_start", "agent_settled", "agent_end"];
        let run = run.into_iter().chain(["session_tree", "session_shutdown"]);
        run.chain(PiEvent::ALL.into_iter().map(PiEvent::name))
            .collect()
    }
}

impl Serialize for Event {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// An unknown event name (a newer extension's) reads as `None`.
fn event_opt<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Event>, D::Error> {
    Ok(Option::<String>::deserialize(d)?.and_then(|e| Event::parse(&e)))
}

/// Which of pi's blocking extension dialogs (`ctx.ui.select/confirm/input/editor/custom`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DialogKind {
    Select,
    Confirm,
    Input,
    Editor,
    Custom,
}

/// A dialog pi shows and waits on (`ui_prompt_start` until `ui_prompt_end`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Dialog {
    pub kind: DialogKind,
    /// Its title, raw (views sanitize it).
    #[serde(default)]
    pub title: Option<String>,
    #[serde(with = "iso_ms")]
    pub since: Ms,
}

/// Where pi's retries of a failed provider call are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RetryPhase {
    /// Waiting out the backoff before attempt `attempt`.
    Waiting,
    /// Attempt `attempt` is running.
    Running,
    /// A retried call succeeded.
    Succeeded,
    /// The last attempt failed too and the run settled: pi gave up.
    Exhausted,
    /// The person stopped the run during the retries.
    Cancelled,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Retry {
    pub attempt: u32,
    pub phase: RetryPhase,
    #[serde(with = "iso_ms")]
    pub since: Ms,
    /// The failed call's error, raw and clipped.
    #[serde(default)]
    pub error: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactReason {
    Manual,
    Threshold,
    Overflow,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactPhase {
    Running,
    Done,
    Failed,
    Aborted,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Compaction {
    pub reason: CompactReason,
    pub phase: CompactPhase,
    #[serde(with = "iso_ms")]
    pub since: Ms,
    /// pi retries the cut-off turn after it (overflow recovery).
    #[serde(default)]
    pub will_retry: bool,
    #[serde(default)]
    pub error: Option<String>,
}

/// The tool pi started last and still runs (its name only, never its arguments).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolRun {
    pub name: String,
    #[serde(with = "iso_ms")]
    pub since: Ms,
    /// How many tools run now (parallel tool calls).
    pub running: u32,
}

/// How the last run settled (`agent_settled`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Settled {
    #[serde(with = "iso_ms")]
    pub at: Ms,
    /// Stopped by the person (Escape) or an extension.
    pub aborted: bool,
    /// The run's last provider call failed.
    #[serde(default)]
    pub error: bool,
}

/// How full the model's context is, as `ctx.getContextUsage()` reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextFill {
    /// Unknown right after a compaction, until the next response.
    #[serde(default)]
    pub tokens: Option<u64>,
    pub window: u64,
    #[serde(default)]
    pub percent: Option<f64>,
    #[serde(with = "iso_ms")]
    pub at: Ms,
}

impl ContextFill {
    /// A window and token count pi could report (the window above zero, both within
    /// `MAX_TOKENS`).
    pub fn window_ok(&self) -> bool {
        self.window > 0 && self.window <= MAX_TOKENS && self.tokens.is_none_or(|t| t <= MAX_TOKENS)
    }

    /// A fill percentage pi could report (finite, 0 to 1000), or none.
    pub fn percent_ok(&self) -> bool {
        self.percent
            .is_none_or(|p| p.is_finite() && (0.0..=1000.0).contains(&p))
    }
}

/// `12% of 128.0k` (or `? of 128.0k` right after a compaction).
impl std::fmt::Display for ContextFill {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let window = crate::evidence::sessions::usage::short_count(self.window);
        match (self.percent, self.tokens) {
            (Some(p), _) if p < 10.0 => write!(f, "{p:.1}% of {window}"),
            (Some(p), _) => write!(f, "{p:.0}% of {window}"),
            (None, Some(t)) => write!(
                f,
                "{} of {window}",
                crate::evidence::sessions::usage::short_count(t)
            ),
            (None, None) => write!(f, "? of {window}"),
        }
    }
}

/// The extension's current picture of its pi (what `--pi-state` carries).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PiState {
    #[serde(default)]
    pub dialog: Option<Dialog>,
    #[serde(default)]
    pub retry: Option<Retry>,
    #[serde(default)]
    pub compaction: Option<Compaction>,
    #[serde(default)]
    pub tool: Option<ToolRun>,
    #[serde(default)]
    pub settled: Option<Settled>,
    #[serde(default)]
    pub context: Option<ContextFill>,
    /// The extension enforces budgets (present: it does), and what it holds.
    #[serde(default)]
    pub budget: Option<BudgetHold>,
}

/// What the extension holds for the budget: how many prompts, since when (none: `held` 0).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BudgetHold {
    pub held: u32,
    #[serde(default, with = "crate::clock::iso_ms_opt")]
    pub since: Option<Ms>,
}

/// The registration's `pi` section: the picture, its sequence number, the event that sent it
/// and when `register` recorded it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PiReport {
    pub seq: u64,
    #[serde(with = "iso_ms")]
    pub at: Ms,
    #[serde(default, deserialize_with = "event_opt")]
    pub event: Option<Event>,
    #[serde(flatten)]
    pub state: PiState,
}

/// Why a `--pi-state` is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PiStateError {
    TooLong,
    Json(String),
    /// A field breaks its rule (named).
    Field(&'static str),
}

impl std::fmt::Display for PiStateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PiStateError::TooLong => write!(f, "longer than {MAX_PI_STATE_BYTES} bytes"),
            PiStateError::Json(e) => write!(f, "not the extension's JSON ({e})"),
            PiStateError::Field(name) => write!(f, "{name} is out of range"),
        }
    }
}

fn clip_chars(s: &mut Option<String>, max: usize) {
    if let Some(t) = s.as_mut() {
        if let Some((i, _)) = t.char_indices().nth(max) {
            t.truncate(i);
        }
    }
    if s.as_ref().is_some_and(|t| t.trim().is_empty()) {
        *s = None;
    }
}

fn tool_name_ok(n: &str) -> bool {
    !n.is_empty()
        && n.len() <= 64
        && n.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b':' | b'/'))
}

impl PiState {
    /// Parse what the extension sent (`--pi-state`), with texts clipped to their caps.
    pub fn from_arg(arg: &str) -> Result<PiState, PiStateError> {
        if arg.len() > MAX_PI_STATE_BYTES {
            return Err(PiStateError::TooLong);
        }
        let mut st: PiState = serde_json::from_str(arg).map_err(|e| {
            PiStateError::Json(crate::text::clip(
                &crate::text::sanitize(&e.to_string()),
                120,
            ))
        })?;
        if let Some(d) = st.dialog.as_mut() {
            clip_chars(&mut d.title, TITLE_CHARS);
        }
        if let Some(r) = st.retry.as_mut() {
            clip_chars(&mut r.error, ERROR_CHARS);
        }
        if let Some(c) = st.compaction.as_mut() {
            clip_chars(&mut c.error, ERROR_CHARS);
        }
        st.check()?;
        Ok(st)
    }

    /// The caps, the one place they live: `Err` names the first field that breaks one.
    pub fn check(&self) -> Result<(), PiStateError> {
        let long =
            |s: &Option<String>, max: usize| s.as_ref().is_some_and(|t| t.chars().count() > max);
        if self
            .dialog
            .as_ref()
            .is_some_and(|d| long(&d.title, TITLE_CHARS))
        {
            return Err(PiStateError::Field("dialog.title"));
        }
        if let Some(r) = &self.retry {
            if r.attempt == 0 || r.attempt > MAX_ATTEMPT {
                return Err(PiStateError::Field("retry.attempt"));
            }
            if long(&r.error, ERROR_CHARS) {
                return Err(PiStateError::Field("retry.error"));
            }
        }
        if self
            .compaction
            .as_ref()
            .is_some_and(|c| long(&c.error, ERROR_CHARS))
        {
            return Err(PiStateError::Field("compaction.error"));
        }
        if let Some(t) = &self.tool {
            if !tool_name_ok(&t.name) {
                return Err(PiStateError::Field("tool.name"));
            }
            if t.running == 0 || t.running > MAX_RUNNING {
                return Err(PiStateError::Field("tool.running"));
            }
        }
        if let Some(c) = &self.context {
            if !c.window_ok() {
                return Err(PiStateError::Field("context.window"));
            }
            if !c.percent_ok() {
                return Err(PiStateError::Field("context.percent"));
            }
        }
        if self.budget.as_ref().is_some_and(|b| b.held > MAX_HELD) {
            return Err(PiStateError::Field("budget.held"));
        }
        Ok(())
    }

    /// Every time the picture carries, for the writer's range check.
    pub fn times(&self) -> Vec<Ms> {
        let mut t = Vec::new();
        t.extend(self.dialog.as_ref().map(|d| d.since));
        t.extend(self.retry.as_ref().map(|r| r.since));
        t.extend(self.compaction.as_ref().map(|c| c.since));
        t.extend(self.tool.as_ref().map(|x| x.since));
        t.extend(self.settled.as_ref().map(|s| s.at));
        t.extend(self.context.as_ref().map(|c| c.at));
        t.extend(self.budget.as_ref().and_then(|b| b.since));
        t
    }
}

impl PiReport {
    /// The reader's check: a section that breaks a cap is not believed at all.
    pub fn validate(self) -> Result<PiReport, PiStateError> {
        self.state.check()?;
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_extensions_picture_is_parsed_clipped_and_checked() {
        let st = PiState::from_arg(&format!(
            r#"{{"dialog":{{"kind":"confirm","title":"{}","since":"2026-01-01T00:00:00.000Z"}},
                "tool":{{"name":"bash","since":"2026-01-01T00:00:00.000Z","running":1}},
                "future":"ignored"}}"#,
            "é".repeat(600)
        ))
        .unwrap();
        let d = st.dialog.unwrap();
        assert_eq!(d.kind, DialogKind::Confirm);
        assert_eq!(d.title.unwrap().chars().count(), TITLE_CHARS);
        assert_eq!(st.tool.unwrap().name, "bash");
        let bad = |json: &str| PiState::from_arg(json).unwrap_err();
        assert_eq!(
            bad(r#"{"retry":{"attempt":0,"phase":"waiting","since":"2026-01-01T00:00:00Z"}}"#),
            PiStateError::Field("retry.attempt")
        );
        assert_eq!(
            bad(r#"{"tool":{"name":"rm -rf /","since":"2026-01-01T00:00:00Z","running":1}}"#),
            PiStateError::Field("tool.name")
        );
        assert!(matches!(
            bad(r#"{"dialog":{"kind":"poke","since":"2026-01-01T00:00:00Z"}}"#),
            PiStateError::Json(_)
        ));
        assert_eq!(
            bad(&" ".repeat(MAX_PI_STATE_BYTES + 1)),
            PiStateError::TooLong
        );
    }

    #[test]
    fn a_report_round_trips_with_its_event_name() {
        let r = PiReport {
            seq: 9,
            at: 1_800_000_000_000,
            event: Some(Event::Pi(PiEvent::UiPromptStart)),
            state: PiState {
                settled: Some(Settled {
                    at: 1_800_000_000_000,
                    aborted: true,
                    error: false,
                }),
                ..PiState::default()
            },
        };
        let text = serde_json::to_string(&r).unwrap();
        assert!(text.contains(r#""event":"ui_prompt_start""#), "{text}");
        let back: PiReport = serde_json::from_str(&text).unwrap();
        assert_eq!(back, r);
        let later: PiReport =
            serde_json::from_str(&text.replace("ui_prompt_start", "some_later_event")).unwrap();
        assert_eq!(later.event, None);
        assert_eq!(
            Event::parse("agent_settled"),
            Some(Event::Run(RunEvent::AgentSettled))
        );
    }
}
