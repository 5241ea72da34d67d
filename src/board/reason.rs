//! Why a seat shows its state, and where that came from: the fixed codes the board files, the
//! status JSON and `--print` carry, and the words the sidebar's details show beside them.
//!
//! Every code is serialized as its snake_case name (a few carry the code of what failed:
//! `session_<fs code>`, `<multiplexer>_<error code>`); the words for every code live in one
//! exhaustive `match` ([`StateReason::words`]), so a new code cannot ship without them.

use std::borrow::Cow;
use std::fmt;

use serde::{Serialize, Serializer};

use crate::evidence::sessions::{SessionError, TailDamage};
use crate::mux::{ErrorCode, MuxKind};

/// The fixed reason code of a seat's state (`stateReason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateReason {
    // From the session file (`board::classify`).
    /// A user message is the newest: the model is answering.
    UserMessage,
    /// A tool finished: the model is answering.
    ToolResult,
    /// The newest reply called a tool that has not returned.
    ToolRunning,
    /// A failed turn pi is retrying after its backoff.
    Retrying,
    /// A failed turn pi recovers by summarizing the conversation first.
    Compacting,
    /// The completed reply asks for input (`Input needed: ...`).
    InputNeeded,
    /// The last turn ended in an error pi will not retry.
    FinalError,
    /// The last turn was stopped.
    Aborted,
    /// The last reply was cut off at the length limit.
    Length,
    /// The last reply is complete.
    CompletedReply,
    /// The session file holds no message yet.
    NoMessages,
    // From the registration's run state (`scan::build`).
    /// A turn started that the session file does not show yet.
    TurnStarted,
    /// pi settled after the failed attempt: the retry was cancelled.
    RetryAbandoned,
    /// pi recorded the end of this session while its process still runs.
    SessionClosed,
    // From what pi told its extension (`board::pi_rules`).
    /// pi waits on an extension's dialog (confirm, select, input, editor, custom).
    Dialog,
    /// pi's retries of a failed provider call are used up.
    RetriesExhausted,
    /// A compaction failed and the run ended.
    CompactionFailed,
    /// The person (or an extension) stopped the run.
    RunAborted,
    /// Its extension holds a prompt: the worker's budget is reached.
    BudgetReached,
    /// Its budget passed the soft limit (an alert's own seat, never a row's state).
    BudgetSoft,
    // The seat's session file.
    /// No session file (pi writes nothing until the first prompt).
    NoSessionFile,
    /// The file named for the seat's session names another session in its header.
    SessionIdMismatch,
    /// A pi found in a pane whose session folder cannot be worked out (its environment or
    /// cwd could not be read).
    SessionNotLocated,
    /// A pi found in a pane whose folder holds session files, none named by any evidence (no
    /// live registration, no command line, no open file): which is its own is not known.
    SessionUndecided,
    /// The session file was refused or could not be read: `session_<code>`.
    SessionUnreadable(SessionError),
    /// The newest lines of the session file are damaged (`session_tail_*`).
    SessionTail(TailDamage),
    /// The worker's pane holds a live pi in another session.
    PaneRunsOtherSession,
    // Liveness (`liveness.rs`).
    /// `--liveness assume-alive`.
    AssumedAlive,
    /// The seat's pane runs its pi.
    PaneRunsPi,
    /// Its registered pi runs in another pane than the one it registered: the pane moved (a
    /// Herdr pane moved to another workspace gets a new id), found by the pi's process.
    PaneFollowed,
    /// The seat's pane runs something else.
    PaneNotRunningPi,
    /// The recorded pane no longer exists.
    PaneGone,
    /// The seat's multiplexer could not be asked, but its registered pi process is gone (its
    /// pid is free, or another incarnation of ours).
    RegisteredPiGone,
    /// No tmux session of the seat's name.
    NoTmuxSession,
    /// Which pane is the seat's is not known.
    PaneNotIdentified,
    /// The connector's recorded owner process runs.
    OwnerLive,
    /// The connector's recorded owner process is gone (or is another incarnation).
    OwnerGone,
    /// The connector records no owner process.
    OwnerMissing,
    /// The seat's multiplexer server could not be asked: `<kind>_<code>`.
    MuxUnanswered(MuxKind, Unanswered),
    /// A seat read from another host whose reason code this version does not know (the code
    /// itself is kept in its `StateSource::Host`).
    HostReported,
}

/// Why a multiplexer server's pane listing is missing from a pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unanswered {
    /// No socket path could be worked out for it.
    NoSocket,
    /// More servers than one pass asks.
    NotAsked,
    /// It was asked and failed with this code.
    Failed(ErrorCode),
}

impl Unanswered {
    /// The fixed code (`no_socket`, `not_asked`, or the multiplexer's error code).
    pub fn code(self) -> &'static str {
        match self {
            Unanswered::NoSocket => "no_socket",
            Unanswered::NotAsked => "not_asked",
            Unanswered::Failed(e) => e.code(),
        }
    }
}

impl StateReason {
    /// The human words for the code; the details show the code beside them.
    pub fn words(self) -> &'static str {
        match self {
            StateReason::UserMessage => "a message was sent; the model is answering",
            StateReason::ToolResult => "a tool finished; the model is answering",
            StateReason::ToolRunning => "a tool is running",
            StateReason::Retrying => "retrying after a provider error",
            StateReason::Compacting => "summarizing the conversation before it retries",
            StateReason::InputNeeded => "the last reply asks for input",
            StateReason::FinalError => "the last turn ended in an error",
            StateReason::Aborted => "the last turn was stopped",
            StateReason::Length => "the last reply was cut off",
            StateReason::CompletedReply => "the last reply is complete",
            StateReason::NoMessages => "no messages yet",
            StateReason::TurnStarted => "a turn started; pi has written nothing yet",
            StateReason::RetryAbandoned => "the retry was cancelled",
            StateReason::SessionClosed => "its pi moved on to another session",
            StateReason::Dialog => "pi waits on a dialog",
            StateReason::RetriesExhausted => "pi gave up retrying a provider error",
            StateReason::CompactionFailed => "summarizing the conversation failed",
            StateReason::RunAborted => "the run was stopped",
            StateReason::BudgetReached => "budget reached: its extension holds the next prompt",
            StateReason::BudgetSoft => "its budget passed the soft limit",
            StateReason::NoSessionFile => "pi has written no session file yet",
            StateReason::SessionIdMismatch => "its session file names another session",
            StateReason::SessionNotLocated => "where its pi keeps its session is not known",
            StateReason::SessionUndecided => {
                "nothing ties its pi to one of the session files in its folder"
            }
            StateReason::SessionUnreadable(_) => "its session file cannot be read",
            StateReason::SessionTail(TailDamage::Hole) => {
                "the newest lines of its session file are zero-filled"
            }
            StateReason::SessionTail(TailDamage::Cut) => "its session file ends in a cut line",
            StateReason::SessionTail(TailDamage::Malformed) => {
                "the newest line of its session file is not valid"
            }
            StateReason::PaneRunsOtherSession => "its pane runs pi in another session",
            StateReason::AssumedAlive => "assumed alive (--liveness assume-alive)",
            StateReason::PaneRunsPi => "its pane runs pi",
            StateReason::PaneFollowed => {
                "its pi runs in another pane than it registered (the pane moved)"
            }
            StateReason::PaneNotRunningPi => "its pane no longer runs pi",
            StateReason::PaneGone => "its pane is gone",
            StateReason::RegisteredPiGone => {
                "its registered pi process is gone (its multiplexer did not answer)"
            }
            StateReason::NoTmuxSession => "no tmux session of that name",
            StateReason::PaneNotIdentified => "its pane cannot be identified",
            StateReason::OwnerLive => "its connector's owner process runs",
            StateReason::OwnerGone => "its connector's owner process is gone",
            StateReason::OwnerMissing => "its connector records no owner process",
            StateReason::MuxUnanswered(_, Unanswered::NoSocket) => {
                "its multiplexer's socket is not known"
            }
            StateReason::MuxUnanswered(_, Unanswered::NotAsked) => {
                "its multiplexer was not asked (too many servers)"
            }
            StateReason::MuxUnanswered(_, Unanswered::Failed(_)) => {
                "its multiplexer could not be asked"
            }
            StateReason::HostReported => "its host gave a reason this version does not know",
        }
    }

    /// The wire code (what `Display` and serde write).
    pub fn code(self) -> Cow<'static, str> {
        Cow::Borrowed(match self {
            StateReason::UserMessage => "user_message",
            StateReason::ToolResult => "tool_result",
            StateReason::ToolRunning => "tool_running",
            StateReason::Retrying => "retrying",
            StateReason::Compacting => "compacting",
            StateReason::InputNeeded => "input_needed",
            StateReason::FinalError => "final_error",
            StateReason::Aborted => "aborted",
            StateReason::Length => "length",
            StateReason::CompletedReply => "completed_reply",
            StateReason::NoMessages => "no_messages",
            StateReason::TurnStarted => "turn_started",
            StateReason::RetryAbandoned => "retry_abandoned",
            StateReason::SessionClosed => "session_closed",
            StateReason::Dialog => "dialog",
            StateReason::RetriesExhausted => "retries_exhausted",
            StateReason::CompactionFailed => "compaction_failed",
            StateReason::RunAborted => "run_aborted",
            StateReason::BudgetReached => "budget_reached",
            StateReason::BudgetSoft => "budget_soft",
            StateReason::NoSessionFile => "no_session_file",
            StateReason::SessionIdMismatch => "session_id_mismatch",
            StateReason::SessionNotLocated => "session_not_located",
            StateReason::SessionUndecided => "session_undecided",
            StateReason::SessionTail(d) => d.code(),
            StateReason::PaneRunsOtherSession => "pane_runs_other_session",
            StateReason::AssumedAlive => "assumed_alive",
            StateReason::PaneRunsPi => "pane_runs_pi",
            StateReason::PaneFollowed => "pane_followed",
            StateReason::PaneNotRunningPi => "pane_not_running_pi",
            StateReason::PaneGone => "pane_gone",
            StateReason::RegisteredPiGone => "registered_pi_gone",
            StateReason::NoTmuxSession => "no_tmux_session",
            StateReason::PaneNotIdentified => "pane_not_identified",
            StateReason::OwnerLive => "owner_live",
            StateReason::OwnerGone => "owner_gone",
            StateReason::OwnerMissing => "owner_missing",
            StateReason::HostReported => "host_reported",
            StateReason::SessionUnreadable(e) => {
                return Cow::Owned(format!("session_{}", e.code()))
            }
            StateReason::MuxUnanswered(kind, why) => {
                return Cow::Owned(format!("{}_{}", kind.name(), why.code()))
            }
        })
    }
}

impl StateReason {
    /// The reason a code names, for the codes that carry nothing else (a board reading another
    /// host's records); `None` for the others.
    pub fn from_code(code: &str) -> Option<StateReason> {
        use StateReason as R;
        [
            R::UserMessage,
            R::ToolResult,
            R::ToolRunning,
            R::Retrying,
            R::Compacting,
            R::InputNeeded,
            R::FinalError,
            R::Aborted,
            R::Length,
            R::CompletedReply,
            R::NoMessages,
            R::TurnStarted,
            R::RetryAbandoned,
            R::SessionClosed,
            R::Dialog,
            R::RetriesExhausted,
            R::CompactionFailed,
            R::RunAborted,
            R::BudgetReached,
            R::BudgetSoft,
            R::NoSessionFile,
            R::SessionIdMismatch,
            R::SessionNotLocated,
            R::SessionUndecided,
            R::SessionTail(TailDamage::Hole),
            R::SessionTail(TailDamage::Cut),
            R::SessionTail(TailDamage::Malformed),
            R::PaneRunsOtherSession,
            R::AssumedAlive,
            R::PaneRunsPi,
            R::PaneFollowed,
            R::PaneNotRunningPi,
            R::PaneGone,
            R::RegisteredPiGone,
            R::NoTmuxSession,
            R::PaneNotIdentified,
            R::OwnerLive,
            R::OwnerGone,
            R::OwnerMissing,
            R::HostReported,
        ]
        .into_iter()
        .find(|r| r.code() == code)
    }
}

/// Whether a connection's reason code says it was checked at all (`not_checked`: no probe ran).
pub(crate) fn connection_checked(code: &str) -> bool {
    code != crate::probe::reason::NOT_CHECKED
}

/// The words for a connection's reason code (`probe::reason`), shown where people read it (the
/// details, `status`); the code itself stays in the JSON.
pub(crate) fn connection_words(code: &str) -> &'static str {
    use crate::probe::reason as r;
    match code {
        r::VERIFIED => "its port answered as this session",
        r::IDENTITY_MISMATCH => "another session answered on its port",
        r::REFUSED => "nothing listens on its port",
        r::TIMEOUT => "its health check did not answer in time",
        r::LEGACY => "its Intercom has no health check route",
        r::HTTP_ERROR => "its health check answered with an HTTP error",
        r::MALFORMED => "its health check answered something unreadable",
        r::UNSUPPORTED_VERSION => "its health check speaks another version",
        r::OVERSIZE => "its health check answered more than allowed",
        r::NETWORK_ERROR => "the connection to its port failed",
        r::ABORTED => "the check was cancelled",
        r::NOT_CHECKED => "not checked",
        r::STALE => "the last check is too old",
        r::INVALID_INPUT => "no valid port or session id to check",
        _ => "an unrecognised check result",
    }
}

impl fmt::Display for StateReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.code())
    }
}

impl Serialize for StateReason {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Where a seat's state came from (`stateSource`), as the board files say it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StateSource {
    /// The session file, its branch ending at its last line.
    SessionFile,
    /// The session file, at the branch pi's `/tree` chose (known from the registration).
    SessionFileAtTreeLeaf,
    /// There is no session file.
    NoSessionFile,
    /// The registration's run state.
    RegistrationRunState,
    /// `--liveness assume-alive`.
    AssumedAlive,
    /// Liveness without a registration that names a pane.
    NoRegistration,
    /// The connector's owner record (none recorded).
    ConnectorOwnerRecord,
    /// The connector's owner process.
    ConnectorOwnerProcess,
    /// The pane listing of this multiplexer.
    Mux(MuxKind),
    /// The registration's pi process (pid, start ticks, boot id), checked in `/proc`: this
    /// multiplexer could not be asked (why).
    RegisteredPi(MuxKind, Unanswered),
    /// A live registered pi in the worker's pane runs another session. Ids sanitized, clipped.
    OtherRegisteredPi {
        pid: i32,
        session: String,
        configured: String,
    },
    /// A pane seat found from its pi process in the worker's pane runs another session. Ids
    /// sanitized, clipped.
    OtherPaneProcess {
        seat: String,
        session: String,
        configured: String,
    },
    /// What pi told its extension (the registration's `pi` section).
    Pi(PiSource),
    /// The demo's simulated seats.
    Demo,
    /// A seat read from another host: what that host said (`source`, and the reason code when
    /// this version does not know it), sanitized and clipped.
    Host { host: String, source: String },
}

/// Which of pi's reports decided a state (`StateSource::Pi`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PiSource {
    Dialog,
    Compaction,
    /// A retry, with its attempt.
    Retry(u32),
    /// How the last run settled.
    Settled,
    /// A prompt held for the budget.
    Budget,
}

impl fmt::Display for StateSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StateSource::SessionFile => f.write_str("session file"),
            StateSource::SessionFileAtTreeLeaf => {
                f.write_str("session file, at the branch pi's /tree chose (registration)")
            }
            StateSource::NoSessionFile => f.write_str("no session file"),
            StateSource::RegistrationRunState => f.write_str("registration run state"),
            StateSource::AssumedAlive => f.write_str("--liveness assume-alive"),
            StateSource::NoRegistration => f.write_str("no registration"),
            StateSource::ConnectorOwnerRecord => f.write_str("connector owner record"),
            StateSource::ConnectorOwnerProcess => f.write_str("connector owner process"),
            StateSource::Mux(kind) => f.write_str(kind.name()),
            StateSource::RegisteredPi(kind, why) => write!(
                f,
                "registration: its pi process is gone ({} not asked: {})",
                kind.name(),
                why.code()
            ),
            StateSource::OtherRegisteredPi {
                pid,
                session,
                configured,
            } => write!(
                f,
                "registration: the pi in its pane (pid {pid}) runs session {session}, not the \
                 configured {configured}"
            ),
            StateSource::OtherPaneProcess {
                seat,
                session,
                configured,
            } => write!(
                f,
                "pi process: the pi in its pane ({seat}) runs session {session}, not the \
                 configured {configured}"
            ),
            StateSource::Pi(PiSource::Dialog) => f.write_str("pi extension: dialog"),
            StateSource::Pi(PiSource::Compaction) => f.write_str("pi extension: compaction"),
            StateSource::Pi(PiSource::Retry(n)) => {
                write!(f, "pi extension: retry attempt {n}")
            }
            StateSource::Pi(PiSource::Settled) => f.write_str("pi extension: settled run"),
            StateSource::Pi(PiSource::Budget) => f.write_str("pi extension: budget hold"),
            StateSource::Demo => f.write_str("demo"),
            StateSource::Host { host, source } => write!(f, "host {host}: {source}"),
        }
    }
}

impl StateSource {
    /// Which state rule chose a state from this source (with `reason`), in words: `explain`
    /// and the sidebar's details say it. The rules and their order are `board::verdict`'s
    /// (docs/behaviour.md §2).
    pub fn rule(&self, reason: StateReason) -> &'static str {
        use StateReason as R;
        match self {
            StateSource::SessionFile | StateSource::SessionFileAtTreeLeaf => match reason {
                R::SessionUnreadable(_) | R::SessionIdMismatch => {
                    "a session file that cannot be used says nothing: unknown, never idle"
                }
                R::SessionTail(_) => "damaged newest lines decide nothing: unknown",
                _ => "the transcript rules: the newest entry that decides a turn",
            },
            StateSource::NoSessionFile => "a live pi that has written nothing yet is idle",
            StateSource::RegistrationRunState => match reason {
                R::TurnStarted => {
                    "the registration's run state is newer than the file: a turn started"
                }
                R::SessionClosed => "pi recorded the end of this session while its process runs",
                R::RetryAbandoned => "pi settled after the failed attempt: no retry will run",
                _ => "a run that started before the marked failure has not settled: pi recovers",
            },
            StateSource::Host { .. } => "the other host's own rules chose it (its board says why)",
            StateSource::Pi(_) => {
                "what pi told its extension outranks the file (dialog, compaction, retry, failed \
                 compaction, exhausted retries, stopped run)"
            }
            StateSource::AssumedAlive
            | StateSource::NoRegistration
            | StateSource::ConnectorOwnerRecord
            | StateSource::ConnectorOwnerProcess
            | StateSource::Mux(_)
            | StateSource::RegisteredPi(..) => {
                "liveness decides a seat whose pi is not seen running"
            }
            StateSource::OtherRegisteredPi { .. } | StateSource::OtherPaneProcess { .. } => {
                "its pane runs another session: what its own evidence says is not what runs"
            }
            StateSource::Demo => "the demo's simulation",
        }
    }
}

impl Serialize for StateSource {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fsguard::FsError;

    #[test]
    fn codes_are_the_wire_names() {
        let cases = [
            (StateReason::UserMessage, "user_message"),
            (
                StateReason::SessionTail(TailDamage::Cut),
                "session_tail_cut",
            ),
            (
                StateReason::SessionUnreadable(SessionError::Fs(FsError::Link)),
                "session_link_refused",
            ),
            (
                StateReason::SessionUnreadable(SessionError::InvalidHeader),
                "session_invalid_header",
            ),
            (
                StateReason::MuxUnanswered(MuxKind::Herdr, Unanswered::NotAsked),
                "herdr_not_asked",
            ),
            (
                StateReason::MuxUnanswered(MuxKind::Tmux, Unanswered::Failed(ErrorCode::NoServer)),
                "tmux_no_server",
            ),
            (StateReason::OwnerMissing, "owner_missing"),
        ];
        for (reason, code) in cases {
            assert_eq!(reason.to_string(), code);
            assert_eq!(serde_json::to_value(reason).unwrap(), code);
            assert!(!reason.words().is_empty());
        }
        assert_eq!(
            serde_json::to_value(StateSource::Mux(MuxKind::Herdr)).unwrap(),
            "herdr"
        );
    }

    #[test]
    fn every_connection_reason_has_words() {
        use crate::probe::reason as r;
        for code in [
            r::VERIFIED,
            r::IDENTITY_MISMATCH,
            r::REFUSED,
            r::TIMEOUT,
            r::LEGACY,
            r::HTTP_ERROR,
            r::MALFORMED,
            r::UNSUPPORTED_VERSION,
            r::OVERSIZE,
            r::NETWORK_ERROR,
            r::ABORTED,
            r::NOT_CHECKED,
            r::STALE,
            r::INVALID_INPUT,
        ] {
            let words = connection_words(code);
            assert!(
                !words.contains("unrecognised") && !words.contains('_'),
                "{code}"
            );
        }
        assert_eq!(connection_words("x"), "an unrecognised check result");
    }

    #[test]
    fn every_code_is_distinct_snake_case_and_has_words() {
        use StateReason::*;
        let mut all = vec![
            UserMessage,
            ToolResult,
            ToolRunning,
            Retrying,
            Compacting,
            InputNeeded,
            FinalError,
            Aborted,
            Length,
            CompletedReply,
            NoMessages,
            TurnStarted,
            RetryAbandoned,
            SessionClosed,
            Dialog,
            RetriesExhausted,
            CompactionFailed,
            RunAborted,
            BudgetReached,
            BudgetSoft,
            NoSessionFile,
            SessionIdMismatch,
            SessionNotLocated,
            SessionUndecided,
            PaneRunsOtherSession,
            AssumedAlive,
            PaneRunsPi,
            PaneNotRunningPi,
            PaneGone,
            NoTmuxSession,
            PaneNotIdentified,
            OwnerLive,
            OwnerGone,
            OwnerMissing,
        ];
        all.extend([TailDamage::Hole, TailDamage::Cut, TailDamage::Malformed].map(SessionTail));
        all.extend(
            [
                SessionError::Empty,
                SessionError::InvalidHeader,
                SessionError::Fs(FsError::Fifo),
            ]
            .map(SessionUnreadable),
        );
        for kind in [MuxKind::Tmux, MuxKind::Herdr] {
            for why in [
                Unanswered::NoSocket,
                Unanswered::NotAsked,
                Unanswered::Failed(ErrorCode::Timeout),
            ] {
                all.push(MuxUnanswered(kind, why));
            }
        }
        let codes: std::collections::HashSet<String> = all.iter().map(|r| r.to_string()).collect();
        assert_eq!(codes.len(), all.len(), "two reasons share a code");
        for (r, code) in all.iter().zip(all.iter().map(|r| r.to_string())) {
            assert!(
                code.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'),
                "{code}"
            );
            assert!(!r.words().is_empty() && !r.words().contains('_'), "{code}");
        }
    }
}
