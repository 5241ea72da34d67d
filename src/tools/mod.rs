//! The coordinator's tools (`intercom_board`, `intercom_reply`, `intercom_close_worker`,
//! `intercom_resume_worker`, `intercom_spawn_worker`, `intercom_wait`, `intercom_review`, `intercom_log`): their names, descriptions and JSON Schemas (the
//! shipped pi extension registers exactly these, in the coordinator's pi only), and one call of
//! one tool, each a thin call into the same code the commands run (the board page, the reply
//! path, close-worker, resume-worker, spawn, the scan), never a second implementation.
//!
//! Every call is made by `intercom-pane tool NAME --pi-pid P --args JSON`, which first proves the
//! caller is the roster's coordinator's own pi (`caller`), then checks the arguments again (the
//! extension's schema is the first check), then runs the call under its time bound. Every string
//! in a result is sanitized (no control character, no escape sequence) and every result is one
//! JSON line well under 64 KiB.

pub(crate) mod caller;
mod calls;
pub(crate) mod wait;

use serde::Deserialize;
use serde_json::Value;

pub use calls::ToolExit;
pub(crate) use calls::{answer, run, Ctx, Refused};

/// Longest `timeoutSeconds` of `intercom_wait`.
pub(crate) const MAX_WAIT_SECS: u64 = 300;
/// How long `intercom_resume_worker` waits for the new seat to register.
pub(crate) const RESUME_WAIT_SECS: u64 = 60;
/// How long `intercom_spawn_worker` waits for the new seat to register.
pub(crate) const SPAWN_WAIT_SECS: u64 = 60;

/// The tools, in the order they are listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tool {
    Board,
    Reply,
    CloseWorker,
    ResumeWorker,
    SpawnWorker,
    Wait,
    Review,
    Log,
}

/// Most entries on one `intercom_log` page.
pub(crate) const MAX_LOG_LIMIT: usize = 50;

impl Tool {
    pub(crate) const ALL: [Tool; 8] = [
        Tool::Board,
        Tool::Reply,
        Tool::CloseWorker,
        Tool::ResumeWorker,
        Tool::SpawnWorker,
        Tool::Wait,
        Tool::Review,
        Tool::Log,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Tool::Board => "intercom_board",
            Tool::Reply => "intercom_reply",
            Tool::CloseWorker => "intercom_close_worker",
            Tool::ResumeWorker => "intercom_resume_worker",
            Tool::SpawnWorker => "intercom_spawn_worker",
            Tool::Wait => "intercom_wait",
            Tool::Review => "intercom_review",
            Tool::Log => "intercom_log",
        }
    }

    pub(crate) fn from_name(name: &str) -> Option<Tool> {
        Tool::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The longest the extension lets one call run before it kills it (the call bounds itself
    /// well within this). The close answers at once; its job runs on, detached, on its own
    /// deadline.
    pub(crate) fn timeout_ms(self) -> u64 {
        match self {
            Tool::Board => 30_000,
            Tool::Reply => 30_000,
            Tool::CloseWorker => 30_000,
            Tool::ResumeWorker => (RESUME_WAIT_SECS + 60) * 1000,
            Tool::SpawnWorker => (SPAWN_WAIT_SECS + 60) * 1000,
            Tool::Wait => (MAX_WAIT_SECS + 30) * 1000,
            Tool::Review => 90_000,
            Tool::Log => 30_000,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Tool::Board => "Intercom board",
            Tool::Reply => "Intercom reply",
            Tool::CloseWorker => "Intercom close worker",
            Tool::ResumeWorker => "Intercom resume worker",
            Tool::SpawnWorker => "Intercom spawn worker",
            Tool::Wait => "Intercom wait",
            Tool::Review => "Intercom review",
            Tool::Log => "Intercom log",
        }
    }

    fn description(self) -> &'static str {
        match self {
            Tool::Board => "A page of the worker seats on the intercom-pane board, read fresh: each seat's state (working, waiting, error, offline, idle, unknown), why (reason code and words), where that came from and how old it is, the question a waiting worker asks or the error text, its report, handoff, close-job and resume stage, and whether it can be replied to. Filter by attention (waiting or error, not marked seen), name or host. Pages of at most `limit` seats (1-20, default 10) and 40 KiB; follow `nextOffset` (null at the end). Read-only.",
            Tool::Reply => "Send one text to one worker seat (by name) through the board's guarded reply path (the worker's pi extension channel, or typed into its pane). Returns the receipt: outcome `delivered` (a turn started with it), `queued` (the worker is busy; it gets the text when its turn ends), `unconfirmed` (sent but not confirmed: do not resend) or `failed`. At most 2000 characters, no control characters but newline and tab. Never retried.",
            Tool::CloseWorker => "Close one worker's pane after it has saved its public handoff and its turn has settled, with every identity check of `intercom-pane close-worker`. Returns at once with acceptance and a job id (or the refusal); the close runs in the background and its outcome arrives later as a message, and on the board (`closeJob`). Never closes the coordinator or a monitor.",
            Tool::ResumeWorker => "Bring a closed worker back on its saved session (on tmux in a session of its own named like it), never twice, with every check of `intercom-pane resume-worker`. Only with `confirmClosed: true`, after you (or the person) confirmed the worker is really closed. Waits up to 60 s for the new seat to register.",
            Tool::SpawnWorker => "Start a new worker with every check of `intercom-pane spawn`: it is added to the roster (a fresh session id), its pi starts in a new window beside the coordinator (in the root, a folder under it, or a new git worktree), and once it registers the optional first task is handed to it through the reply path. Waits up to 60 s for the new seat to register. Refused for a taken, reserved or malformed name, a bad folder, a full roster.",
            Tool::Wait => "Wait until one worker seat reaches one of the given board states, or the timeout passes (at most 300 s); returns the seat as the board shows it then, with `reached` true or false. Read-only.",
            Tool::Review => "What one worker changed in its git checkout (its `spawn --worktree` worktree, else the checkout of its folder), as `intercom-pane review NAME --json` gives it: its branch, the commit it started from and whether the branch it lands on moved on since, its commits since (subject, time), each changed file with lines added and removed as committed, uncommitted or untracked, whether merging it would conflict (and in which files), and the files it shares with other live workers (overlaps). At most 100 files and 30 commits listed (totals count them all). Read-only: nothing is merged or changed; landing is the person's `intercom-pane land`.",
            Tool::Log => "What one worker did, from its pi session file: each turn (start, end, duration, how it ended: settled, aborted, error, retried, compacted, running; model, tokens, cost, the prompt's first line), each tool call (name, one-line arguments, duration, ok or error), each question it asked (`Input needed:`) and the message that answered it (and who sent it), each compaction, and what was done to it: spawn, close (where its handoff went), resume, restore, with who asked. Newest first, pages of at most `limit` entries (1-50, default 20) and 40 KiB; follow `nextOffset` to older entries (null at the end). `since`: a duration back from now (45s, 30m, 2h, 1d) or an ISO time. Read-only.",
        }
    }

    /// One line for the `<tools>` section of pi's system prompt.
    fn snippet(self) -> &'static str {
        match self {
            Tool::Board => "intercom_board: a page of the worker seats with their true state, question or error, report, handoff, close and resume stage",
            Tool::Reply => "intercom_reply: send one text to one worker and get its receipt (delivered, queued, unconfirmed, failed)",
            Tool::CloseWorker => "intercom_close_worker: close a worker after its handoff (answers at once; the outcome arrives as a message)",
            Tool::ResumeWorker => "intercom_resume_worker: bring a closed worker back on its saved session (confirmClosed: true)",
            Tool::SpawnWorker => "intercom_spawn_worker: start a new worker (name, optional first task, folder or git worktree)",
            Tool::Wait => "intercom_wait: wait until a worker reaches one of the given states, or a timeout",
            Tool::Review => "intercom_review: what a worker changed in git (commits, files, merge conflicts, overlap with other workers), read-only",
            Tool::Log => "intercom_log: a worker's turns, tool calls, questions and answers, and what was done to it (spawn, close, resume, restore), newest first",
        }
    }

    /// Its JSON Schema, from `schemas.json` (data, kept beside the code: the limits in it are
    /// checked against this module's constants by a test).
    fn parameters(self) -> Value {
        static SCHEMAS: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
        SCHEMAS
            .get_or_init(|| serde_json::from_str(include_str!("schemas.json")).unwrap_or_default())
            .get(self.name())
            .cloned()
            .unwrap_or_default()
    }

    /// What the extension registers: name, label, description, JSON Schema, time bound, and
    /// whether the call goes on in the background after its first answer.
    pub(crate) fn definition(self) -> Value {
        let d = Definition {
            name: self.name(),
            label: self.label(),
            description: self.description(),
            prompt_snippet: self.snippet(),
            parameters: self.parameters(),
            timeout_ms: self.timeout_ms(),
            background: self == Tool::CloseWorker,
        };
        serde_json::to_value(d).unwrap_or_default()
    }
}

/// What the extension registers for one tool.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Definition {
    name: &'static str,
    label: &'static str,
    description: &'static str,
    prompt_snippet: &'static str,
    parameters: Value,
    timeout_ms: u64,
    background: bool,
}

/// Every tool's definition, in order.
pub(crate) fn definitions() -> Vec<Value> {
    Tool::ALL.into_iter().map(Tool::definition).collect()
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct BoardParams {
    #[serde(default)]
    pub attention: bool,
    pub name: Option<String>,
    pub host: Option<String>,
    #[serde(default)]
    pub offset: usize,
    pub limit: Option<usize>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct LogParams {
    pub name: String,
    pub since: Option<String>,
    #[serde(default)]
    pub offset: usize,
    pub limit: Option<usize>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct ReplyParams {
    pub name: String,
    pub text: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct CloseParams {
    pub name: String,
    pub deadline_seconds: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct ResumeParams {
    pub name: String,
    pub confirm_closed: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct SpawnParams {
    pub name: String,
    pub description: Option<String>,
    pub prompt: Option<String>,
    pub dir: Option<String>,
    #[serde(default)]
    pub worktree: bool,
    pub branch: Option<String>,
    pub model: Option<String>,
    pub thinking: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct WaitParams {
    pub name: String,
    pub states: Vec<String>,
    pub timeout_seconds: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct ReviewParams {
    pub name: String,
    pub into: Option<String>,
}

/// One call: the tool and its arguments, checked.
#[derive(Debug)]
pub(crate) enum Call {
    Board(BoardParams),
    Reply(ReplyParams),
    CloseWorker(CloseParams),
    ResumeWorker(ResumeParams),
    SpawnWorker(SpawnParams),
    Wait(WaitParams),
    Review(ReviewParams),
    Log(LogParams),
}

/// Longest `--args` accepted (a 2000-character text, JSON-escaped, fits many times).
pub(crate) const MAX_ARGS_BYTES: usize = 64 * 1024;

/// Why a tool's arguments were refused.
#[derive(Debug)]
pub(crate) enum ArgsRefusal {
    TooBig,
    Json {
        tool: &'static str,
        err: serde_json::Error,
    },
    /// A field and the rule it breaks, both this module's own words.
    Rule {
        field: &'static str,
        rule: &'static str,
    },
    WaitSecs,
    UnknownState(String),
}

impl std::fmt::Display for ArgsRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ArgsRefusal::TooBig => write!(f, "arguments over {MAX_ARGS_BYTES} bytes"),
            ArgsRefusal::Json { tool, err } => write!(f, "bad arguments for {tool}: {err}"),
            ArgsRefusal::Rule { field, rule } => write!(f, "{field}: {rule}"),
            ArgsRefusal::WaitSecs => write!(f, "timeoutSeconds: 1-{MAX_WAIT_SECS}"),
            ArgsRefusal::UnknownState(s) => write!(
                f,
                "states: {s:?} is not one of working, waiting, error, offline, idle, unknown"
            ),
        }
    }
}

fn rule(field: &'static str, rule: &'static str) -> ArgsRefusal {
    ArgsRefusal::Rule { field, rule }
}

/// Parse a tool's arguments (unknown fields, wrong types and out-of-range values refused).
pub(crate) fn parse(tool: Tool, args: &str) -> Result<Call, ArgsRefusal> {
    if args.len() > MAX_ARGS_BYTES {
        return Err(ArgsRefusal::TooBig);
    }
    let bad = |err: serde_json::Error| ArgsRefusal::Json {
        tool: tool.name(),
        err,
    };
    let name_ok = |n: &str| -> Result<(), ArgsRefusal> {
        if n.trim().is_empty() || n.chars().count() > 200 || n.chars().any(char::is_control) {
            return Err(rule("name", "1-200 characters, no control characters"));
        }
        Ok(())
    };
    let call = match tool {
        Tool::Board => {
            let a: BoardParams = serde_json::from_str(args).map_err(bad)?;
            if let Some(n) = &a.name {
                name_ok(n)?;
            }
            if a.limit.is_some_and(|l| !(1..=20).contains(&l)) {
                return Err(rule("limit", "1-20"));
            }
            Call::Board(a)
        }
        Tool::Log => {
            let a: LogParams = serde_json::from_str(args).map_err(bad)?;
            name_ok(&a.name)?;
            if a.limit.is_some_and(|l| !(1..=MAX_LOG_LIMIT).contains(&l)) {
                return Err(rule("limit", "1-50"));
            }
            if a.since.as_ref().is_some_and(|s| s.chars().count() > 40) {
                return Err(rule("since", "at most 40 characters"));
            }
            Call::Log(a)
        }
        Tool::Reply => {
            let a: ReplyParams = serde_json::from_str(args).map_err(bad)?;
            name_ok(&a.name)?;
            Call::Reply(a)
        }
        Tool::CloseWorker => {
            let a: CloseParams = serde_json::from_str(args).map_err(bad)?;
            name_ok(&a.name)?;
            if a.deadline_seconds
                .is_some_and(|d| !(1..=crate::actions::close::MAX_DEADLINE_SECS).contains(&d))
            {
                return Err(rule("deadlineSeconds", "1-120"));
            }
            Call::CloseWorker(a)
        }
        Tool::ResumeWorker => {
            let a: ResumeParams = serde_json::from_str(args).map_err(bad)?;
            name_ok(&a.name)?;
            Call::ResumeWorker(a)
        }
        Tool::SpawnWorker => {
            let a: SpawnParams = serde_json::from_str(args).map_err(bad)?;
            // The name's own rules are spawn's; here only what never reaches it.
            if a.dir.is_some() && a.worktree {
                return Err(rule("dir and worktree", "one or the other"));
            }
            if a.branch.is_some() && !a.worktree {
                return Err(rule("branch", "goes with worktree: true"));
            }
            Call::SpawnWorker(a)
        }
        Tool::Wait => {
            let a: WaitParams = serde_json::from_str(args).map_err(bad)?;
            name_ok(&a.name)?;
            if !(1..=MAX_WAIT_SECS).contains(&a.timeout_seconds) {
                return Err(ArgsRefusal::WaitSecs);
            }
            if a.states.is_empty() || a.states.len() > 6 {
                return Err(rule(
                    "states",
                    "1-6 of working, waiting, error, offline, idle, unknown",
                ));
            }
            for s in &a.states {
                if wait::state_named(s).is_none() {
                    return Err(ArgsRefusal::UnknownState(crate::text::sanitize(s)));
                }
            }
            Call::Wait(a)
        }
        Tool::Review => {
            let a: ReviewParams = serde_json::from_str(args).map_err(bad)?;
            name_ok(&a.name)?;
            if let Some(i) = &a.into {
                name_ok(i)?;
            }
            Call::Review(a)
        }
    };
    Ok(call)
}

/// Every string in `v` sanitized (no control character, no escape sequence, one line): what a
/// tool result may carry.
pub(crate) fn sanitized(v: Value) -> Value {
    match v {
        Value::String(s) => Value::String(crate::text::sanitize(&s)),
        Value::Array(a) => Value::Array(a.into_iter().map(sanitized).collect()),
        Value::Object(o) => Value::Object(
            o.into_iter()
                .map(|(k, v)| (crate::text::sanitize(&k), sanitized(v)))
                .collect(),
        ),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_schema_is_there_and_its_limits_are_this_modules() {
        for t in Tool::ALL {
            let p = t.parameters();
            assert_eq!(p["type"], "object", "{}", t.name());
            assert_eq!(p["additionalProperties"], false, "{}", t.name());
        }
        let max =
            |t: Tool, field: &str| Tool::parameters(t)["properties"][field]["maximum"].clone();
        assert_eq!(max(Tool::Log, "limit"), MAX_LOG_LIMIT);
        assert_eq!(max(Tool::Wait, "timeoutSeconds"), MAX_WAIT_SECS);
        assert_eq!(
            max(Tool::CloseWorker, "deadlineSeconds"),
            crate::actions::close::MAX_DEADLINE_SECS
        );
        let levels = &Tool::SpawnWorker.parameters()["properties"]["thinking"]["enum"];
        assert_eq!(
            *levels,
            serde_json::json!(crate::actions::spawn::THINKING_LEVELS)
        );
        let states = &Tool::Wait.parameters()["properties"]["states"]["items"]["enum"];
        for s in states.as_array().unwrap() {
            assert!(wait::state_named(s.as_str().unwrap()).is_some(), "{s}");
        }
    }

    #[test]
    fn arguments_are_checked_again() {
        assert!(parse(Tool::Board, "{}").is_ok());
        assert!(parse(Tool::Board, r#"{"limit": 21}"#).is_err());
        assert!(parse(Tool::Board, r#"{"sneaky": 1}"#).is_err());
        assert!(parse(Tool::Log, r#"{"name": "W", "since": "30m", "limit": 50}"#).is_ok());
        assert!(parse(Tool::Log, r#"{"name": "W", "limit": 51}"#).is_err());
        assert!(parse(Tool::Log, r#"{"limit": 5}"#).is_err());
        assert!(parse(Tool::Reply, r#"{"name": "W"}"#).is_err());
        assert!(parse(Tool::Reply, r#"{"name": "W\u001b", "text": "x"}"#).is_err());
        assert!(parse(Tool::CloseWorker, r#"{"name": "W", "deadlineSeconds": 0}"#).is_err());
        assert!(parse(Tool::ResumeWorker, r#"{"name": "W"}"#).is_err());
        assert!(parse(
            Tool::Wait,
            r#"{"name": "W", "states": ["waiting"], "timeoutSeconds": 301}"#
        )
        .is_err());
        assert!(parse(
            Tool::Wait,
            r#"{"name": "W", "states": ["sleeping"], "timeoutSeconds": 5}"#
        )
        .is_err());
        assert!(parse(
            Tool::Wait,
            r#"{"name": "W", "states": ["waiting", "error"], "timeoutSeconds": 5}"#
        )
        .is_ok());
        assert!(parse(Tool::Board, &" ".repeat(MAX_ARGS_BYTES + 1)).is_err());
        assert!(parse(Tool::Review, r#"{"name": "W"}"#).is_ok());
        assert!(parse(Tool::Review, r#"{"name": "W", "into": "a\nb"}"#).is_err());
        assert!(parse(Tool::Review, r#"{"name": "W", "patch": true}"#).is_err());
    }

    #[test]
    fn results_carry_no_escape_sequences() {
        let v =
            sanitized(serde_json::json!({"a\u{1b}": ["x\u{1b}[2Jy", {"q": "\u{9b}31m"}], "n": 1}));
        let text = v.to_string();
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{9b}'),
            "{text}"
        );
        assert!(!text.contains("\\u001b"), "{text}");
        assert_eq!(v["n"], 1);
    }

    #[test]
    fn every_tool_has_a_closed_object_schema_and_a_bound() {
        for t in Tool::ALL {
            let d = t.definition();
            assert_eq!(Tool::from_name(d["name"].as_str().unwrap()), Some(t));
            assert_eq!(d["parameters"]["type"], "object");
            assert_eq!(d["parameters"]["additionalProperties"], false);
            assert!(d["timeoutMs"].as_u64().unwrap() <= 330_000);
        }
    }
}
