//! A worker's timeline (`intercom-pane log NAME`, `intercom_log`): its turns, tool calls,
//! questions and the messages that answered them, built from its pi session file.
//!
//! Why from the end: `--since 30m` on a session of a GiB must cost what it costs on a MiB, so
//! the file is read backward (`backward.rs`) until a line older than the cutoff, within byte and
//! line budgets; the lines are then replayed oldest first through a [`Builder`], which
//! `--follow` keeps feeding as pi appends. A line that is not pi's (torn, too long, not JSON) is
//! skipped and counted, never fatal.

use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::backward::{self, Flow, Limits};
use super::question::{is_input_request, question_of};
use super::timeline_line::{first_line, line_fact, AssistantFact, Fact, LineFact};
use super::usage::UsageView;
use crate::clock::Ms;
use crate::fsguard::{self, FsError};

/// What one read may cost, whatever the file's size.
pub const READ_LIMITS: Limits = Limits {
    max_bytes: 64 * 1024 * 1024,
    max_lines: 50_000,
    line_cap: 8 * 1024 * 1024,
};
/// Most entries a builder keeps (the oldest go first).
pub(crate) const MAX_ENTRIES: usize = 5_000;
/// Most tool calls waiting for their result.
const OPEN_TOOLS: usize = 1024;
/// Characters kept of a prompt, an answer or a question's first line.
const LINE_CHARS: usize = 200;

/// How a turn ended (or that it has not).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum TurnEnd {
    /// Still running (or cut off by the end of what was read).
    Running,
    Settled,
    Aborted,
    Error,
    /// The last attempt failed and pi scheduled a retry that has not answered (yet).
    Retried,
    /// pi compacted the context and has not answered since.
    Compacted,
}

/// How a tool call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ToolEnd {
    Running,
    Ok,
    Error,
}

/// Who sent a message pi recorded: what the reply path's own record says
/// (`actions::reply::sent`), matched by the text's digest; `unknown` when nothing recorded it
/// (a person typing in pi, another tool, a record older than a day or from before records
/// were kept). pi records only the text, so a guess would be worse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Sender {
    Unknown,
    /// The sidebar's reply box.
    Sidebar,
    /// `intercom-pane reply` (also a board on another machine, through ssh).
    Reply,
    /// The coordinator's `intercom_reply` tool.
    CoordinatorTool,
    /// close-worker asking for the handoff.
    CloseWorker,
    /// spawn handing over the first task.
    Spawn,
    /// `restore --continue` nudging an agent cut off mid-turn.
    Restore,
}

/// Who sent a user message, and when the reply path handed it over (known from its record).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SentBy {
    pub sender: Sender,
    #[serde(with = "crate::clock::iso_ms_opt")]
    pub sent_at: Option<Ms>,
    /// The message's SHA-256: what finds its record.
    #[serde(skip)]
    pub sha256: String,
}

impl SentBy {
    fn unknown(sha256: String) -> SentBy {
        SentBy {
            sender: Sender::Unknown,
            sent_at: None,
            sha256,
        }
    }
}

impl Sender {
    pub fn words(self) -> &'static str {
        match self {
            Sender::Unknown => "unknown sender",
            Sender::Sidebar => "from the sidebar",
            Sender::Reply => "from `reply`",
            Sender::CoordinatorTool => "from the coordinator's intercom_reply",
            Sender::CloseWorker => "from close-worker",
            Sender::Spawn => "from spawn (first task)",
            Sender::Restore => "from restore --continue",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Turn {
    #[serde(with = "crate::clock::iso_ms_opt")]
    pub ended: Option<Ms>,
    pub duration_ms: Option<i64>,
    pub outcome: TurnEnd,
    /// The turn began before what was read (its start is the first line seen).
    pub partial: bool,
    /// The first line of the message that started it.
    pub prompt: Option<String>,
    /// Who sent that message.
    #[serde(flatten)]
    pub from: SentBy,
    pub model: Option<String>,
    /// The `usage` of its assistant messages, summed (every attempt was a paid call); the cost
    /// in pi's unit (US dollars for its built-in prices).
    pub usage: UsageView,
    pub tools: u32,
    pub retries: u32,
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    pub name: String,
    pub args: String,
    #[serde(with = "crate::clock::iso_ms_opt")]
    pub ended: Option<Ms>,
    pub duration_ms: Option<i64>,
    pub outcome: ToolEnd,
}

/// What an entry is.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum What {
    Turn(Turn),
    Tool(ToolCall),
    /// A settled reply that asks for input (`Input needed: `).
    Question {
        text: String,
    },
    /// The message that followed a question.
    Answer {
        text: String,
        #[serde(flatten)]
        from: SentBy,
    },
    /// pi compacted the context.
    Compaction {},
    /// This tool's own record of the worker: the roster's `handoff` and `closeJob` (the newest
    /// of each, at its time, `by` absent) and what `actions::worker_events` recorded of each
    /// spawn, close, resume and restore (`by` says who asked).
    Event {
        event: EventKind,
        detail: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        by: Option<Actor>,
    },
}

/// Which of this tool's records an event is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum EventKind {
    /// The worker saved its public handoff for a close job.
    Handoff,
    /// A close job's state (`closeJob.state`, and its reason; from a record: where the handoff
    /// went).
    Close,
    /// `spawn` started the worker.
    Spawn,
    /// `resume-worker` started it again on its session.
    Resume,
    /// `restore` started it again (or found it could not).
    Restore,
    /// A change of the worker's budget (who, from, to).
    Budget,
}

impl EventKind {
    pub fn word(self) -> &'static str {
        match self {
            EventKind::Handoff => "handoff",
            EventKind::Close => "close",
            EventKind::Spawn => "spawn",
            EventKind::Resume => "resume",
            EventKind::Restore => "restore",
            EventKind::Budget => "budget",
        }
    }
}

/// Who asked for an action this tool took on a worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Actor {
    /// The command line (`intercom-pane spawn`, …; also the tmux plugin's restore at start).
    Cli,
    /// The sidebar (its keys and dialogs).
    Sidebar,
    /// The coordinator's tools (`intercom_spawn_worker`, `intercom_close_worker`, …).
    CoordinatorTool,
}

impl Actor {
    pub fn words(self) -> &'static str {
        match self {
            Actor::Cli => "by the command line",
            Actor::Sidebar => "from the sidebar",
            Actor::CoordinatorTool => "by the coordinator's tool",
        }
    }
}

/// Name the sender of each user message (turn prompts, answers) that `records` (the reply
/// path's, oldest first) hold, by the message's digest and time.
pub(crate) fn attribute(
    entries: &mut [LogEntry],
    records: &[crate::actions::reply::sent::SentRecord],
) {
    if records.is_empty() {
        return;
    }
    for e in entries.iter_mut() {
        let (Some(at), from) = (
            e.at,
            match &mut e.what {
                What::Turn(t) => &mut t.from,
                What::Answer { from, .. } => from,
                _ => continue,
            },
        ) else {
            continue;
        };
        if from.sha256.is_empty() || from.sender != Sender::Unknown {
            continue;
        }
        if let Some(r) = crate::actions::reply::sent::sender_of(records, &from.sha256, at) {
            from.sender = r.from;
            from.sent_at = Some(r.at);
        }
    }
}

/// Put `events` among `entries` (both oldest first) by time, each before the first entry that is
/// newer; the entries keep their order. Events without a time, or older than `since`, are left
/// out.
pub(crate) fn merge_events(
    entries: Vec<LogEntry>,
    mut events: Vec<LogEntry>,
    since: Option<Ms>,
) -> Vec<LogEntry> {
    events.retain(|e| e.at.is_some_and(|at| since.is_none_or(|s| at >= s)));
    events.sort_by_key(|e| e.at);
    let mut out = Vec::with_capacity(entries.len() + events.len());
    let mut ev = events.into_iter().peekable();
    for e in entries {
        while let Some(next) = ev.peek() {
            if matches!((next.at, e.at), (Some(n), Some(a)) if n < a) {
                out.extend(ev.next());
            } else {
                break;
            }
        }
        out.push(e);
    }
    out.extend(ev);
    out
}

/// One entry of a timeline.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LogEntry {
    /// Its place in the builder's sequence (what `--follow` updates refer to).
    pub seq: u64,
    /// When it started (`None`: the line had no readable time).
    #[serde(with = "crate::clock::iso_ms_opt")]
    pub at: Option<Ms>,
    #[serde(flatten)]
    pub what: What,
}

/// Lines that were not used, by why.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Skipped {
    /// Not JSON of pi's shape.
    pub unreadable: u32,
    /// Longer than the line cap.
    pub huge: u32,
    /// The last line has no newline yet (pi is writing it, or it was cut).
    pub torn: u32,
    /// Entries dropped, oldest first, past the most kept (`MAX_ENTRIES`).
    pub dropped: u32,
}

/// Turns lines (oldest first) into entries.
#[derive(Debug, Default)]
pub(crate) struct Builder {
    entries: VecDeque<LogEntry>,
    next_seq: u64,
    turn: Option<u64>,
    tools: HashMap<String, u64>,
    question: bool,
    /// The entry id of the newest failed attempt (a `context_edit` aimed at it is a retry).
    failed: Option<String>,
    /// Entries added or changed since the last `take_changed`, in order.
    changed: Vec<u64>,
    pub skipped: Skipped,
}

impl Builder {
    pub(crate) fn entries(&self) -> impl DoubleEndedIterator<Item = &LogEntry> {
        self.entries.iter()
    }

    /// The entries added or changed since the last call, oldest first.
    pub(crate) fn take_changed(&mut self) -> Vec<LogEntry> {
        let mut seqs = std::mem::take(&mut self.changed);
        seqs.sort_unstable();
        seqs.dedup();
        seqs.iter().filter_map(|s| self.get(*s).cloned()).collect()
    }

    fn get(&self, seq: u64) -> Option<&LogEntry> {
        let first = self.entries.front()?.seq;
        self.entries
            .get(usize::try_from(seq.checked_sub(first)?).ok()?)
    }

    fn get_mut(&mut self, seq: u64) -> Option<&mut LogEntry> {
        let first = self.entries.front()?.seq;
        let i = usize::try_from(seq.checked_sub(first)?).ok()?;
        self.changed.push(seq);
        self.entries.get_mut(i)
    }

    fn push(&mut self, at: Option<Ms>, what: What) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        if self.entries.len() >= MAX_ENTRIES {
            self.entries.pop_front();
            self.skipped.dropped = self.skipped.dropped.saturating_add(1);
        }
        self.entries.push_back(LogEntry { seq, at, what });
        self.changed.push(seq);
        seq
    }

    fn turn_mut(&mut self) -> Option<&mut Turn> {
        let seq = self.turn?;
        match self.get_mut(seq) {
            Some(LogEntry {
                what: What::Turn(t),
                ..
            }) => Some(t),
            _ => None,
        }
    }

    /// The open turn, or a new one begun at `at` when the lines start inside a turn.
    fn ensure_turn(&mut self, at: Option<Ms>) {
        if self.turn_mut().is_none() {
            self.turn = Some(self.push(at, What::Turn(new_turn(None, true))));
        }
    }

    fn end_turn(&mut self, at: Option<Ms>, outcome: TurnEnd, error: Option<String>) {
        let start = self.turn.and_then(|s| self.get(s)).and_then(|e| e.at);
        if let Some(t) = self.turn_mut() {
            t.outcome = outcome;
            t.ended = at;
            t.duration_ms = match (start, at) {
                (Some(s), Some(e)) if e >= s => Some(e - s),
                _ => None,
            };
            if error.is_some() {
                t.error = error;
            }
        }
    }

    /// Count a line that could not be used.
    pub(crate) fn skip_unreadable(&mut self) {
        self.skipped.unreadable = self.skipped.unreadable.saturating_add(1);
    }

    /// One whole line, in file order.
    pub(crate) fn feed_line(&mut self, line: &[u8]) {
        match line_fact(line) {
            Some(f) => self.feed(f),
            None => self.skip_unreadable(),
        }
    }

    pub(crate) fn feed(&mut self, f: LineFact) {
        let at = f.at;
        match f.fact {
            Fact::User { text, sha256 } => {
                let prompt = first_line(&text, LINE_CHARS);
                if std::mem::take(&mut self.question) {
                    self.push(
                        at,
                        What::Answer {
                            text: prompt.clone(),
                            from: SentBy::unknown(sha256.clone()),
                        },
                    );
                }
                self.failed = None;
                let mut turn = new_turn(Some(prompt), false);
                turn.from = SentBy::unknown(sha256);
                self.turn = Some(self.push(at, What::Turn(turn)));
            }
            Fact::Assistant(a) => self.assistant(at, a),
            Fact::ToolResult {
                call_id,
                name,
                is_error,
                duration_ms,
            } => self.tool_result(at, call_id, name, is_error, duration_ms),
            Fact::ContextEdit { target } => {
                if target.is_some() && target == self.failed {
                    self.failed = None;
                    let ended = self
                        .turn
                        .and_then(|s| self.get(s))
                        .and_then(|e| match &e.what {
                            What::Turn(t) => t.ended,
                            _ => None,
                        });
                    if let Some(t) = self.turn_mut() {
                        t.retries = t.retries.saturating_add(1);
                    }
                    self.end_turn(ended.or(at), TurnEnd::Retried, None);
                }
            }
            Fact::Compaction => {
                self.push(at, What::Compaction {});
                let recovering = self.turn.and_then(|s| self.get(s)).is_some_and(|e| {
                    matches!(&e.what, What::Turn(t) if matches!(t.outcome, TurnEnd::Running | TurnEnd::Error | TurnEnd::Retried))
                });
                if recovering {
                    self.end_turn(at, TurnEnd::Compacted, None);
                }
            }
            Fact::Other => {}
        }
    }

    fn assistant(&mut self, at: Option<Ms>, a: AssistantFact) {
        let AssistantFact {
            id,
            stop,
            error,
            model,
            usage,
            calls,
            text,
        } = a;
        self.ensure_turn(at);
        let n_calls = calls.len();
        if let Some(t) = self.turn_mut() {
            t.usage.usage.add(&usage);
            if model.is_some() {
                t.model = model;
            }
            t.tools = t
                .tools
                .saturating_add(u32::try_from(n_calls).unwrap_or(u32::MAX));
            // A later message reopens a turn that looked over (a retry answered).
            t.outcome = TurnEnd::Running;
            t.ended = None;
            t.duration_ms = None;
        }
        for c in calls {
            let seq = self.push(
                at,
                What::Tool(ToolCall {
                    name: c.name,
                    args: c.args,
                    ended: None,
                    duration_ms: None,
                    outcome: ToolEnd::Running,
                }),
            );
            if let Some(id) = c.id {
                if self.tools.len() >= OPEN_TOOLS {
                    self.tools.clear();
                }
                self.tools.insert(id, seq);
            }
        }
        match stop.as_deref() {
            Some("stop" | "length") if n_calls == 0 => {
                self.end_turn(at, TurnEnd::Settled, None);
                let first = first_line(&text, usize::MAX);
                if is_input_request(&first) {
                    if let Some(q) = question_of(&text) {
                        self.push(
                            at,
                            What::Question {
                                text: first_line(&q, LINE_CHARS),
                            },
                        );
                        self.question = true;
                    }
                }
            }
            Some("aborted") => self.end_turn(at, TurnEnd::Aborted, error),
            Some("error") => {
                self.failed = id;
                self.end_turn(at, TurnEnd::Error, error);
            }
            _ => {}
        }
    }

    fn tool_result(
        &mut self,
        at: Option<Ms>,
        call_id: Option<String>,
        name: Option<String>,
        is_error: bool,
        duration_ms: Option<i64>,
    ) {
        let outcome = if is_error {
            ToolEnd::Error
        } else {
            ToolEnd::Ok
        };
        let seq = call_id.as_ref().and_then(|id| self.tools.remove(id));
        let start = seq.and_then(|s| self.get(s)).and_then(|e| e.at);
        if let Some(LogEntry {
            what: What::Tool(t),
            ..
        }) = seq.and_then(|s| self.get_mut(s))
        {
            t.ended = at;
            t.outcome = outcome;
            t.duration_ms = duration_ms.or(match (start, at) {
                (Some(s), Some(e)) if e >= s => Some(e - s),
                _ => None,
            });
            return;
        }
        // Its call is older than what was read.
        self.push(
            match (at, duration_ms) {
                (Some(a), Some(d)) => Some(a - d),
                _ => at,
            },
            What::Tool(ToolCall {
                name: name.unwrap_or_default(),
                args: String::new(),
                ended: at,
                duration_ms,
                outcome,
            }),
        );
    }
}

fn new_turn(prompt: Option<String>, partial: bool) -> Turn {
    Turn {
        ended: None,
        duration_ms: None,
        outcome: TurnEnd::Running,
        partial,
        prompt,
        from: SentBy::unknown(String::new()),
        model: None,
        usage: UsageView::default(),
        tools: 0,
        retries: 0,
        error: None,
    }
}

/// A timeline read from a file, and where reading can go on (`--follow`).
#[derive(Debug)]
pub(crate) struct Read {
    /// The file, open: `--follow` goes on reading it (the same file even if renamed).
    pub file: File,
    pub builder: Builder,
    /// Just past the last complete line read.
    pub end: u64,
    /// Bytes read.
    pub bytes: u64,
    /// A budget ran out before the cutoff: older entries were not read.
    pub truncated: bool,
}

/// A whole timeline, for tests and the fuzz target (the command keeps its `Builder`).
#[derive(Debug, Clone, PartialEq)]
pub struct Timeline {
    pub entries: Vec<LogEntry>,
    pub skipped: Skipped,
    pub truncated: bool,
    pub bytes: u64,
}

impl Read {
    fn timeline(self) -> Timeline {
        Timeline {
            entries: self.builder.entries().cloned().collect(),
            skipped: self.builder.skipped,
            truncated: self.truncated,
            bytes: self.bytes,
        }
    }
}

/// The timeline of the session file at `path` from `since` (all of it within the budgets
/// when `None`), read backward.
pub fn read_timeline(path: &Path, since: Option<Ms>, lim: &Limits) -> Result<Timeline, FsError> {
    Ok(read_path(path, since, lim)?.timeline())
}

/// The timeline of the session file at `path` (opened without following a link, never
/// blocking on a FIFO), with the file kept open.
pub(crate) fn read_path(path: &Path, since: Option<Ms>, lim: &Limits) -> Result<Read, FsError> {
    let f = fsguard::open_regular(path, None)?;
    read_open(f.file, f.len, since, lim)
}

/// The same file read forward from its start by a [`Follower`], `step` bytes at a time (what
/// `--follow` sees as pi appends): within the budgets it must equal [`read_timeline`].
pub fn follow_timeline(path: &Path, step: u64) -> Result<Timeline, FsError> {
    let f = fsguard::open_regular(path, None)?;
    let mut b = Builder::default();
    let mut fl = Follower::at(0);
    let mut bytes = 0;
    while fl.end < f.len {
        let before = fl.end;
        fl.advance(&f.file, f.len.min(fl.end + step.max(1)), &mut b, u64::MAX)?;
        if fl.end == before {
            break;
        }
        bytes = fl.end;
    }
    Ok(Timeline {
        entries: b.entries().cloned().collect(),
        skipped: b.skipped,
        truncated: false,
        bytes,
    })
}

fn read_open(file: File, len: u64, since: Option<Ms>, lim: &Limits) -> Result<Read, FsError> {
    let end = backward::complete_end(&file, len, lim.max_bytes)?;
    let mut facts: Vec<LineFact> = Vec::new();
    let mut unreadable = 0u32;
    let st = backward::read_back(&file, end, lim, |line| match line_fact(line) {
        Some(f) => {
            if let (Some(cut), Some(at)) = (since, f.at) {
                if at < cut {
                    return Flow::Stop;
                }
            }
            facts.push(f);
            Flow::More
        }
        None => {
            unreadable = unreadable.saturating_add(1);
            Flow::More
        }
    })?;
    let mut b = Builder::default();
    for f in facts.into_iter().rev() {
        b.feed(f);
    }
    b.changed.clear();
    b.skipped.unreadable = unreadable;
    b.skipped.huge = st.huge;
    b.skipped.torn = u32::from(end < len);
    Ok(Read {
        file,
        builder: b,
        end,
        bytes: st.bytes,
        truncated: st.truncated,
    })
}

/// Reads what pi appended after a first read: whole lines only; a line without its newline
/// yet waits for it.
#[derive(Debug)]
pub(crate) struct Follower {
    pub end: u64,
    carry: Vec<u8>,
    huge: bool,
}

/// Bytes read per `pread` while following.
const FOLLOW_CHUNK: usize = 1024 * 1024;

impl Follower {
    pub(crate) fn at(end: u64) -> Follower {
        Follower {
            end,
            carry: Vec::new(),
            huge: false,
        }
    }

    /// Feed `b` the lines appended up to `len` (the file's length now); bounded by `max_bytes`
    /// per call (the rest waits for the next).
    pub(crate) fn advance(
        &mut self,
        file: &File,
        len: u64,
        b: &mut Builder,
        max_bytes: u64,
    ) -> Result<(), FsError> {
        let mut read = 0u64;
        let line_cap = READ_LIMITS.line_cap;
        while self.end < len && read < max_bytes {
            let n = usize::try_from((len - self.end).min(FOLLOW_CHUNK as u64)).unwrap_or(0);
            let buf = fsguard::read_at(file, self.end, n)?;
            if buf.is_empty() {
                break;
            }
            read += buf.len() as u64;
            self.end += buf.len() as u64;
            let mut lo = 0;
            while let Some(i) = memchr::memchr(b'\n', &buf[lo..]) {
                let piece = &buf[lo..lo + i];
                if self.huge || self.carry.len() + piece.len() > line_cap {
                    b.skipped.huge = b.skipped.huge.saturating_add(1);
                } else if self.carry.is_empty() {
                    if !piece.is_empty() {
                        b.feed_line(piece);
                    }
                } else {
                    self.carry.extend_from_slice(piece);
                    let line = std::mem::take(&mut self.carry);
                    b.feed_line(&line);
                }
                self.carry.clear();
                self.huge = false;
                lo += i + 1;
            }
            let rest = &buf[lo..];
            if self.huge || self.carry.len() + rest.len() > line_cap {
                self.huge = true;
                self.carry.clear();
            } else {
                self.carry.extend_from_slice(rest);
            }
        }
        b.skipped.torn = u32::from(!self.carry.is_empty() || self.huge);
        Ok(())
    }
}

/// `--since`: `30m`, `2h`, `45s`, `1d`, or an ISO time. The cutoff, given the time now.
pub(crate) fn parse_since(s: &str, now: Ms) -> Option<Ms> {
    let s = s.trim();
    if let Some(at) = crate::clock::parse_iso(s) {
        return Some(at);
    }
    let unit = s.chars().last()?;
    let n: i64 = s[..s.len() - unit.len_utf8()].parse().ok()?;
    let ms = match unit {
        's' => 1_000,
        'm' => 60_000,
        'h' => 3_600_000,
        'd' => 86_400_000,
        _ => return None,
    };
    (n >= 0).then(|| now.saturating_sub(n.saturating_mul(ms)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(lines: &[&str]) -> Builder {
        let mut b = Builder::default();
        for l in lines {
            b.feed_line(l.as_bytes());
        }
        b
    }

    fn ts(s: u32) -> String {
        format!("2026-12-01T10:00:{s:02}.000Z")
    }

    fn user(s: u32, text: &str) -> String {
        format!(
            r#"{{"type":"message","id":"u{s}","timestamp":"{}","message":{{"role":"user","content":{}}}}}"#,
            ts(s),
            serde_json::to_string(text).unwrap()
        )
    }

    fn asst(s: u32, stop: &str, text: &str, call: Option<(&str, &str)>) -> String {
        let mut content = vec![serde_json::json!({"type":"text","text":text})];
        if let Some((id, name)) = call {
            content.push(serde_json::json!({"type":"toolCall","id":id,"name":name,"arguments":{"command":"ls"}}));
        }
        serde_json::json!({"type":"message","id":format!("a{s}"),"timestamp":ts(s),"message":{"role":"assistant","content":content,"model":"m1","usage":{"input":10,"output":2,"cost":{"total":0.25}},"stopReason":stop}}).to_string()
    }

    fn result(s: u32, id: &str, err: bool) -> String {
        serde_json::json!({"type":"message","timestamp":ts(s),"message":{"role":"toolResult","toolCallId":id,"toolName":"bash","content":[],"isError":err}}).to_string()
    }

    #[test]
    fn a_turn_with_tools_a_question_and_its_answer() {
        let b = feed(&[
            &user(1, "do it"),
            &asst(2, "toolUse", "", Some(("c1", "bash"))),
            &result(5, "c1", true),
            &asst(6, "stop", "Input needed: which one?\nmore", None),
            &user(9, "the first"),
        ]);
        let e: Vec<_> = b.entries().cloned().collect();
        let What::Turn(t) = &e[0].what else { panic!() };
        assert_eq!(
            (t.outcome, t.duration_ms, t.tools),
            (TurnEnd::Settled, Some(5000), 1)
        );
        let u = t.usage.usage;
        assert_eq!((u.calls, u.input, u.cost()), (2, 20, 0.5));
        assert_eq!(t.prompt.as_deref(), Some("do it"));
        let What::Tool(tool) = &e[1].what else {
            panic!()
        };
        assert_eq!(
            (tool.outcome, tool.duration_ms),
            (ToolEnd::Error, Some(3000))
        );
        assert_eq!(
            e[2].what,
            What::Question {
                text: "which one?".into()
            }
        );
        assert_eq!(
            e[3].what,
            What::Answer {
                text: "the first".into(),
                from: SentBy::unknown(crate::actions::reply::sent::digest("the first"))
            }
        );
        assert!(matches!(&e[4].what, What::Turn(t) if t.outcome == TurnEnd::Running));
    }

    #[test]
    fn retries_aborts_and_compactions() {
        let edit = |s: u32, target: &str| {
            serde_json::json!({"type":"context_edit","timestamp":ts(s),"targetId":target,"replacement":null}).to_string()
        };
        let b = feed(&[&user(1, "x"), &asst(2, "error", "", None), &edit(2, "a2")]);
        let e: Vec<_> = b.entries().cloned().collect();
        assert!(
            matches!(&e[0].what, What::Turn(t) if t.outcome == TurnEnd::Retried && t.retries == 1)
        );
        let b = feed(&[
            &user(1, "x"),
            &asst(2, "error", "", None),
            &edit(2, "a2"),
            &asst(5, "stop", "ok", None),
        ]);
        let e: Vec<_> = b.entries().cloned().collect();
        assert!(
            matches!(&e[0].what, What::Turn(t) if t.outcome == TurnEnd::Settled && t.retries == 1 && t.duration_ms == Some(4000))
        );
        let b = feed(&[&user(1, "x"), &asst(3, "aborted", "", None)]);
        assert!(
            matches!(&b.entries().next().unwrap().what, What::Turn(t) if t.outcome == TurnEnd::Aborted)
        );
        let comp = serde_json::json!({"type":"compaction","timestamp":ts(4)}).to_string();
        let b = feed(&[
            &user(1, "x"),
            &asst(2, "error", "", None),
            &edit(2, "a2"),
            &comp,
        ]);
        let e: Vec<_> = b.entries().cloned().collect();
        assert!(matches!(&e[0].what, What::Turn(t) if t.outcome == TurnEnd::Compacted));
        assert_eq!(e[1].what, What::Compaction {});
    }

    #[test]
    fn the_oldest_entries_go_first_and_are_counted() {
        let mut b = Builder::default();
        for i in 0..MAX_ENTRIES + 10 {
            b.feed_line(user(1, &format!("p{i}")).as_bytes());
        }
        assert_eq!(b.entries().count(), MAX_ENTRIES);
        assert_eq!(b.skipped.dropped, 10);
        assert!(
            matches!(&b.entries().next().unwrap().what, What::Turn(t) if t.prompt.as_deref() == Some("p10"))
        );
    }

    #[test]
    fn since_takes_durations_and_times() {
        let now = 10_000_000;
        assert_eq!(parse_since("30m", now), Some(now - 1_800_000));
        assert_eq!(parse_since("2h", now), Some(now - 7_200_000));
        assert_eq!(
            parse_since("1d", 100_000_000),
            Some(100_000_000 - 86_400_000)
        );
        assert!(parse_since("2026-12-01T10:00:00Z", now).is_some());
        assert_eq!(parse_since("x", now), None);
        assert_eq!(parse_since("m", now), None);
        assert_eq!(parse_since("-3m", now), None);
        assert_eq!(parse_since("é", now), None);
    }
}
