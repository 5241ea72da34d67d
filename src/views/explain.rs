//! `intercom-pane explain NAME`: every source's evidence for one seat, each with its age, and
//! the rule that chose its state (docs/behaviour.md §2). Built from one pass (the record and
//! row the board shows) and the two files that pass read for the seat, read again for their
//! details: the session file's newest entry and the registration with pi's events.

use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::board::reason::{StateReason, StateSource};
use crate::board::record::SeatRecord;
use crate::clock::{age_seconds, format_iso, Ms};
use crate::evidence::registrations::{self, ContextFill, PiReport, RunRecord};
use crate::evidence::sessions;
use crate::evidence::sessions::usage::UsageView;
use crate::scan::Scan;
use crate::snapshot::{Row, SeatPane};
use crate::states::BoardState;

/// A time and how old it was when the pass ran.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Stamp {
    pub at: Ms,
    pub age_seconds: i64,
}

impl Stamp {
    fn of(at: Ms, now: Ms) -> Stamp {
        Stamp {
            at,
            age_seconds: age_seconds(now, at),
        }
    }
}

impl Serialize for Stamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        StampJson {
            at: format_iso(self.at),
            age_seconds: self.age_seconds,
        }
        .serialize(s)
    }
}

/// A stamp as `explain` shows it: the time and its age.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct StampJson {
    at: String,
    age_seconds: i64,
}

/// The newest entry of the seat's branch.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct EntryFacts {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub role: Option<&'static str>,
    pub stop_reason: Option<&'static str>,
    pub tool_call: bool,
    pub at: Option<Stamp>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TranscriptFacts {
    pub file: Option<String>,
    pub bytes: Option<u64>,
    pub newest_entry: Option<EntryFacts>,
    pub last_activity: Option<Stamp>,
    /// Why the file says nothing (unreadable, another session's, gone since the pass).
    pub problem: Option<String>,
    /// A seat found from a pane's pi: what ties the pi to this file (`SessionTie` code).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tie: Option<crate::board::provenance::SessionTie>,
    /// With tie `undecided`: the files that could be the pi's session.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RunFacts {
    pub state: &'static str,
    pub event: Option<&'static str>,
    pub seq: u64,
    pub at: Stamp,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RegistrationFacts {
    pub path: String,
    /// `true` live, `false` stale (its pi is gone), `null` no pid to check.
    pub alive: Option<bool>,
    pub pid: Option<i32>,
    pub started: Option<Stamp>,
    pub run_state: Option<RunFacts>,
    pub channel: bool,
    /// Evidence from a dead pi never counts: `false` when the board ignored this record.
    pub counted: bool,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ExtensionFacts {
    pub event: Option<&'static str>,
    pub seq: u64,
    pub recorded: Stamp,
    /// The picture as pi's extension sent it (times as ISO text).
    pub picture: Value,
    pub counted: bool,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PaneFacts {
    pub alive: Option<bool>,
    pub multiplexer: Option<&'static str>,
    pub socket: Option<String>,
    pub pane: Option<String>,
    pub shell_pid: Option<i32>,
    pub pi_pid: Option<i32>,
    pub tmux_session: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ObservationFacts {
    pub status: &'static str,
    pub label: &'static str,
    pub evidence: &'static str,
    pub observed: Option<Stamp>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ProbeFacts {
    pub state: &'static str,
    pub reason: &'static str,
    pub checked: Option<Stamp>,
}

/// Everything `explain` says about one seat.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Explanation {
    pub seat: String,
    pub name: String,
    pub state: BoardState,
    pub state_reason: StateReason,
    pub reason_words: &'static str,
    pub state_source: StateSource,
    pub rule: &'static str,
    pub question: Option<String>,
    /// What the row says beside its state, and where from (`views::headline`).
    pub headline: Option<crate::views::headline::Headline>,
    #[serde(serialize_with = "iso")]
    pub scanned_at: Ms,
    pub transcript: TranscriptFacts,
    pub registration: Option<RegistrationFacts>,
    pub extension: Option<ExtensionFacts>,
    pub pane: PaneFacts,
    pub observations: Option<ObservationFacts>,
    pub probe: Option<ProbeFacts>,
    /// When the evidence that decided the state happened.
    pub state_evidence: Option<Stamp>,
    /// Tokens and cost as pi records them in the session file.
    pub usage: Option<UsageView>,
    pub model: Option<String>,
    /// The context fill pi reports (through the extension).
    pub context: Option<ContextFill>,
    /// Its budget's standing, as the row shows it.
    #[serde(serialize_with = "crate::budget::serialize_opt")]
    pub budget: Option<crate::budget::BudgetView>,
    /// Every recorded change of its budget (who, when, from, to), oldest first.
    pub budget_changes: Vec<crate::budget::record::Change>,
}

fn iso<S: Serializer>(at: &Ms, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format_iso(*at))
}

fn transcript(rec: &SeatRecord, now: Ms) -> TranscriptFacts {
    let mut t = TranscriptFacts {
        file: rec.session_file.clone(),
        bytes: None,
        newest_entry: None,
        last_activity: rec.last_activity.map(|a| Stamp::of(a, now)),
        problem: None,
        tie: rec.session_tie,
        candidates: rec.session_candidates.clone(),
    };
    let Some(file) = rec.session_file.as_deref() else {
        t.problem = Some(match rec.state_reason {
            StateReason::NoSessionFile => "pi has written no session file yet".into(),
            r => r.words().into(),
        });
        return t;
    };
    match sessions::read_session(std::path::Path::new(file)) {
        Ok(s) => {
            t.bytes = Some(s.file_len);
            t.newest_entry = s.branch.first().map(|e| EntryFacts {
                kind: e.kind.name(),
                role: e.role.map(|r| r.name()),
                stop_reason: e.stop_reason.map(|r| r.name()),
                tool_call: e.has_tool_call,
                at: e.timestamp.map(|at| Stamp::of(at, now)),
            });
        }
        Err(e) => t.problem = Some(format!("session_{}", e.code())),
    }
    t
}

fn run_facts(rs: &RunRecord, now: Ms) -> RunFacts {
    RunFacts {
        state: rs.state.as_str(),
        event: rs.event.map(|e| e.name()),
        seq: rs.seq,
        at: Stamp::of(rs.at, now),
    }
}

fn extension(pi: &PiReport, counted: bool, now: Ms) -> ExtensionFacts {
    ExtensionFacts {
        event: pi.event.map(|e| e.name()),
        seq: pi.seq,
        recorded: Stamp::of(pi.at, now),
        picture: serde_json::to_value(&pi.state).unwrap_or(Value::Null),
        counted,
    }
}

fn pane(rec: &SeatRecord, row: Option<&Row>) -> PaneFacts {
    let p: Option<&SeatPane> = row.and_then(|r| r.pane.as_ref());
    PaneFacts {
        alive: rec.alive,
        multiplexer: p.map(|p| p.kind.name()),
        socket: p
            .and_then(|p| p.socket.clone())
            .or_else(|| rec.tmux.socket.clone()),
        pane: p.map(|p| p.pane_id.clone()),
        shell_pid: p.and_then(|p| p.shell_pid),
        pi_pid: p.and_then(|p| p.pi.as_ref().map(|pi| pi.0)),
        tmux_session: rec.tmux.session.clone(),
    }
}

/// The explanation of the seat `key` in `scan` (none when the pass has no such seat).
pub(crate) fn explain(scan: &Scan, key: &str, now: Ms) -> Option<Explanation> {
    let rec = scan.records.iter().find(|r| r.key() == key)?;
    let row = scan.snapshot.rows.iter().find(|r| r.seen_key == key);
    let reg = rec
        .registered
        .as_ref()
        .and_then(|v| registrations::read_path(std::path::Path::new(&v.path)).map(|r| (v, r)));
    // Evidence from a dead pi never counts (and a record the board found stale is not read
    // again as live).
    let counted = rec
        .registered
        .as_ref()
        .is_some_and(|v| v.alive == Some(true));
    let registration = rec.registered.as_ref().map(|v| RegistrationFacts {
        path: v.path.clone(),
        alive: v.alive,
        pid: v.pid,
        started: v.started_at.map(|s| Stamp::of(s, now)),
        run_state: reg
            .as_ref()
            .and_then(|(_, r)| r.run_state.as_ref())
            .map(|rs| run_facts(rs, now)),
        channel: reg.as_ref().is_some_and(|(_, r)| r.channel.is_some()),
        counted: v.alive != Some(false),
    });
    let ext = reg
        .as_ref()
        .and_then(|(_, r)| r.pi.as_ref())
        .map(|pi| extension(pi, counted, now));
    let intercom = rec.intercom.as_ref();
    Some(Explanation {
        seat: key.to_string(),
        name: rec.agent.clone(),
        state: rec.state,
        state_reason: rec.state_reason,
        reason_words: rec.state_reason.words(),
        state_source: rec.state_source.clone(),
        rule: rec.state_source.rule(rec.state_reason),
        question: rec.question.clone(),
        headline: row.map(|r| crate::views::headline::headline(r, now)),
        scanned_at: scan.scanned_at,
        transcript: transcript(rec, now),
        registration,
        extension: ext,
        pane: pane(rec, row),
        observations: intercom.map(|i| ObservationFacts {
            status: i.obs.observed_status.as_str(),
            label: i.obs.last_activity,
            evidence: i.obs.evidence.as_str(),
            observed: i.obs.observed_at.map(|a| Stamp::of(a, now)),
        }),
        probe: intercom.map(|i| ProbeFacts {
            state: i.connection.state.as_str(),
            reason: i.connection.reason,
            checked: i.connection.checked_at.map(|a| Stamp::of(a, now)),
        }),
        state_evidence: rec.state_at.map(|a| Stamp::of(a, now)),
        usage: rec.usage,
        model: rec.model.clone(),
        context: rec.context.clone(),
        budget: rec.budget.clone(),
        budget_changes: match (&scan.config, &rec.session_id) {
            (Some(cfg), Some(id)) => crate::budget::record::read(&cfg.root, id),
            _ => Vec::new(),
        },
    })
}

fn ago(s: &Stamp) -> String {
    format!("{} ago", crate::clock::short_age(s.age_seconds))
}

fn shown(s: &str) -> String {
    crate::text::clip(&crate::text::sanitize(s), 200)
}

/// The explanation as lines of text (all text from files sanitized): the seat's state and why,
/// then one line per source of evidence.
pub(crate) fn render(e: &Explanation) -> Vec<String> {
    let mut out = state_lines(e);
    out.extend(e.headline.as_ref().map(headline_line));
    out.push(transcript_line(&e.transcript));
    out.push(registration_line(e.registration.as_ref()));
    out.push(extension_line(e.extension.as_ref(), e.scanned_at));
    out.push(pane_line(&e.pane));
    out.extend(e.observations.as_ref().map(observations_line));
    out.extend(e.probe.as_ref().map(probe_line));
    out.extend(e.usage.as_ref().map(|u| usage_line(u, e.model.as_deref())));
    out.extend(e.context.as_ref().map(|c| context_line(c, e.scanned_at)));
    out.extend(crate::budget::explain_lines(
        e.budget.as_ref(),
        &e.budget_changes,
    ));
    out
}

/// What the row says beside its state, where that came from, and the quiet rule for a step.
fn headline_line(h: &crate::views::headline::Headline) -> String {
    use crate::views::headline::HeadlineSource as H;
    let from = match h.source {
        H::Question => "its question",
        H::Error => "its error",
        H::RunningTool => "the step running now",
        H::LastResult => "its last result (the newest reply's first line)",
        H::LatestRequest => "its latest request (the newest user message)",
        H::Task => "its task",
        H::Reason => "the reason's words",
    };
    let mut line = format!("  row says      {} ({from})", shown(&h.line()));
    if h.source == H::RunningTool {
        line.push_str(&format!(
            "; a step with no new event for {} reads `quiet`, the state stays working",
            crate::clock::short_age(crate::views::headline::QUIET_AFTER_MS / 1000)
        ));
    }
    line
}

/// The seat, its state and the reason; the rule; the deciding source; the question it asks.
fn state_lines(e: &Explanation) -> Vec<String> {
    let mut out = vec![
        format!(
            "{} ({}): {} — {} [{}]",
            shown(&e.name),
            shown(&e.seat),
            e.state.as_str(),
            e.reason_words,
            e.state_reason
        ),
        format!("  rule          {}", e.rule),
        format!(
            "  source        {}{}",
            shown(&e.state_source.to_string()),
            e.state_evidence
                .as_ref()
                .map(|s| format!(", evidence {}", ago(s)))
                .unwrap_or_default()
        ),
    ];
    if let Some(q) = &e.question {
        out.push(format!("  asks          {}", shown(q)));
    }
    out
}

/// The session file, its newest entry, and why it says nothing if it does not.
fn transcript_line(t: &TranscriptFacts) -> String {
    let mut line = match &t.file {
        Some(f) => format!("  transcript    {}", shown(f)),
        None => "  transcript    none".to_string(),
    };
    if let Some(b) = t.bytes {
        line.push_str(&format!(" ({b} bytes)"));
    }
    if let Some(n) = &t.newest_entry {
        line.push_str(&format!("; newest entry: {}", entry_words(n)));
        if let Some(at) = &n.at {
            line.push_str(&format!(", {}", ago(at)));
        }
    }
    if let Some(p) = &t.problem {
        line.push_str(&format!(" ({})", shown(p)));
    }
    if let Some(tie) = t.tie {
        line.push_str(&format!("\n  tied by       {}", tie.words()));
    }
    for c in &t.candidates {
        line.push_str(&format!("\n  could be      {}", shown(c)));
    }
    line
}

/// The newest entry in words: `a finished reply`, `a reply calling a tool`, `a user message`…
fn entry_words(n: &EntryFacts) -> String {
    match (n.kind, n.role, n.stop_reason) {
        ("message", Some("user"), _) => "a user message".into(),
        ("message", Some("toolResult"), _) => "a tool's result".into(),
        ("message", Some("bashExecution"), _) => "a command the person ran with !".into(),
        ("message", Some("assistant"), _) if n.tool_call => "a reply calling a tool".into(),
        ("message", Some("assistant"), Some("stop")) => "a finished reply".into(),
        ("message", Some("assistant"), Some("length")) => "a reply cut at the length limit".into(),
        ("message", Some("assistant"), Some("aborted")) => "a stopped reply".into(),
        ("message", Some("assistant"), Some("error")) => "a failed reply".into(),
        ("message", Some("assistant"), _) => "a reply".into(),
        ("message", Some(role), _) => format!("a {role} message"),
        ("model_change", ..) => "a model change".into(),
        ("compaction", ..) => "a compaction summary".into(),
        (kind, ..) => format!("a {} entry", kind.replace('_', " ")),
    }
}

/// The registration: its pi and whether it lives, the run state, the reply channel.
fn registration_line(r: Option<&RegistrationFacts>) -> String {
    let Some(r) = r else {
        return "  registration  none (no live extension record)".into();
    };
    let mut l = format!(
        "  registration  {}: pi {} {}",
        shown(&r.path),
        r.pid.map_or("?".into(), |p| p.to_string()),
        match r.alive {
            Some(true) => "live",
            Some(false) => "gone (not counted)",
            None => "unverifiable",
        }
    );
    if let Some(rs) = &r.run_state {
        l.push_str(&format!(
            "; run {} since {} {}",
            rs.state,
            rs.event.unwrap_or("?"),
            ago(&rs.at)
        ));
    }
    if r.channel {
        l.push_str("; reply channel open");
    }
    l
}

/// pi's newest event and its picture (ages as of `scanned_at`).
fn extension_line(x: Option<&ExtensionFacts>, scanned_at: Ms) -> String {
    match x {
        None => "  pi events     none recorded".into(),
        Some(x) => format!(
            "  pi events     {} {}{}: {}",
            x.event.unwrap_or("?"),
            ago(&x.recorded),
            if x.counted {
                ""
            } else {
                " (not counted: its pi is gone)"
            },
            picture_words(&x.picture, scanned_at)
        ),
    }
}

/// Whether the pane runs its pi, which pane, and pi's pid.
fn pane_line(p: &PaneFacts) -> String {
    format!(
        "  pane          {}{}{}",
        match p.alive {
            Some(true) => "runs its pi",
            Some(false) => "does not run its pi",
            None => "not known",
        },
        match (&p.multiplexer, &p.pane) {
            (Some(m), Some(id)) => format!(" ({m} {})", shown(id)),
            _ => p
                .tmux_session
                .as_deref()
                .map(|s| format!(" (tmux session {})", shown(s)))
                .unwrap_or_default(),
        },
        p.pi_pid
            .map(|pid| format!(", pi {pid}"))
            .unwrap_or_default()
    )
}

fn observations_line(o: &ObservationFacts) -> String {
    format!(
        "  observations  {} ({}{}): {}",
        o.status,
        o.evidence,
        o.observed
            .as_ref()
            .map(|s| format!(", {}", ago(s)))
            .unwrap_or_default(),
        o.label
    )
}

fn probe_line(p: &ProbeFacts) -> String {
    if !crate::board::reason::connection_checked(p.reason) {
        return "  connection    not checked by this command (the sidebar checks it every 15 s; `status --probe` once)".into();
    }
    format!(
        "  connection    {}: {}{}",
        p.state,
        crate::board::reason::connection_words(p.reason),
        p.checked
            .as_ref()
            .map(|s| format!(", checked {}", ago(s)))
            .unwrap_or_default()
    )
}

fn usage_line(u: &UsageView, model: Option<&str>) -> String {
    format!(
        "  usage         {u} over {} calls{}",
        u.usage.calls,
        model
            .map(|m| format!(" ({})", shown(m)))
            .unwrap_or_default()
    )
}

fn context_line(c: &ContextFill, scanned_at: Ms) -> String {
    format!("  context       {c}, {}", ago(&Stamp::of(c.at, scanned_at)))
}

/// pi's picture in a few words, each with its age (at `now`) where it has one.
fn picture_words(p: &Value, now: Ms) -> String {
    let mut parts = Vec::new();
    let age = |v: &Value| {
        v.as_str()
            .and_then(crate::clock::parse_iso)
            .map(|at| format!(" since {}", ago(&Stamp::of(at, now))))
            .unwrap_or_default()
    };
    if let Some(d) = p.get("dialog").filter(|d| d.is_object()) {
        parts.push(format!(
            "dialog {} {:?}{}",
            d["kind"].as_str().unwrap_or("?"),
            shown(d["title"].as_str().unwrap_or("")),
            age(&d["since"])
        ));
    }
    if let Some(r) = p.get("retry").filter(|d| d.is_object()) {
        parts.push(format!(
            "retry attempt {} {}{}",
            r["attempt"],
            r["phase"].as_str().unwrap_or("?"),
            age(&r["since"])
        ));
    }
    if let Some(c) = p.get("compaction").filter(|d| d.is_object()) {
        parts.push(format!(
            "compaction ({}) {}{}",
            c["reason"].as_str().unwrap_or("?"),
            c["phase"].as_str().unwrap_or("?"),
            age(&c["since"])
        ));
    }
    if let Some(t) = p.get("tool").filter(|d| d.is_object()) {
        parts.push(format!(
            "tool {} running{} ({} at once)",
            shown(t["name"].as_str().unwrap_or("?")),
            age(&t["since"]),
            t["running"]
        ));
    }
    if let Some(s) = p.get("settled").filter(|d| d.is_object()) {
        parts.push(format!(
            "last run {}{}",
            if s["aborted"] == true {
                "stopped"
            } else if s["error"] == true {
                "ended in an error"
            } else {
                "settled"
            },
            s["at"]
                .as_str()
                .and_then(crate::clock::parse_iso)
                .map(|at| format!(" {}", ago(&Stamp::of(at, now))))
                .unwrap_or_default()
        ));
    }
    if let Some(c) = p
        .get("context")
        .and_then(|c| serde_json::from_value::<ContextFill>(c.clone()).ok())
    {
        parts.push(format!("context {c}"));
    }
    if parts.is_empty() {
        "nothing open".into()
    } else {
        parts.join("; ")
    }
}
