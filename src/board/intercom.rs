//! The per-worker Intercom projection: one pure function that the sidebar and `status --json`
//! both call, so the two can never disagree (docs/interop.md §2, docs/behaviour.md §2 and §4).
//!
//! Interpretation choices (the spec leaves these open; each picks "unknown" over a guess):
//! - Status evidence is only this worker's `runtime.ready` / `host.activity` with a boolean `busy`,
//!   and `runtime.closed` (busy or not). Events are matched to the worker by `sessionId`.
//! - The newest is chosen by timestamp. If it lies in the future (`> now`, no tolerance) the
//!   status is `unknown` with evidence `clock_uncertain`; if several records share the newest
//!   timestamp and derive different statuses, `unknown` with `conflicting`. Otherwise the derived
//!   status is shown, with evidence `stale` when older than 60 s (the status itself is kept: the
//!   sidebar marks it `(old)`), else `recent`. No candidate at all: `unknown` / `missing`.
//! - `stale` (the boolean) is true exactly when evidence is `stale`.
//! - A `.jsonl.closed` file (writer ended) does not by itself turn a status into `closed`: only a
//!   `runtime.closed` record does, as in Intercom's own projection. `Event::writer_closed` is
//!   carried for views that want to say more.
//! - "Last activity" looks at events of the same session and the same writer as the newest
//!   status record, at or before it (any event type carrying a `detail`). The newest whose detail
//!   is not `processing`/`settled` gives the label, so a label may remain after the turn settled,
//!   as the seed describes. Otherwise the newest such record's own detail (`Processing`,
//!   `Turn settled`); otherwise a fixed word from the status: idle → `No active turn`, busy
//!   without any detail → `Processing`. A closed runtime is always `Runtime closed`: earlier
//!   labels of that writer no longer describe anything that is going on.
//! - `observationAgeSeconds` is null when the observation is in the future (an age of 0 would
//!   claim freshness we cannot know).
//! - Handoff and close-job ages are measured from their `updatedAt`. A `clear` report tombstone
//!   projects as no report.
//! - `WorkerObservation` carries raw text (names, summaries). `worker_status_json` sanitizes the
//!   text it emits; other views must sanitize and clip before drawing.

use serde::Serialize;
use serde_json::Value;

use crate::clock::{age_seconds, format_iso, Ms};
use crate::evidence::config::{Agent, CloseReason};
use crate::evidence::log_event::Event;
use crate::evidence::reports::ReportSet;
use crate::states::{CloseState, ReportStatus};
use crate::text;

/// Evidence older than this is stale (shown `(old)`).
pub(crate) const STALE_AFTER_MS: Ms = 60_000;

/// Last observed runtime activity of a worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ObservedStatus {
    Unknown,
    Closed,
    Idle,
    Thinking,
    Working,
}

impl ObservedStatus {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ObservedStatus::Unknown => "unknown",
            ObservedStatus::Closed => "closed",
            ObservedStatus::Idle => "idle",
            ObservedStatus::Thinking => "thinking",
            ObservedStatus::Working => "working",
        }
    }
}

/// How far the observed status can be trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Evidence {
    Recent,
    Stale,
    ClockUncertain,
    Conflicting,
    Missing,
}

impl Evidence {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Evidence::Recent => "recent",
            Evidence::Stale => "stale",
            Evidence::ClockUncertain => "clock_uncertain",
            Evidence::Conflicting => "conflicting",
            Evidence::Missing => "missing",
        }
    }
}

/// A worker's explicit report as the views show it (never a `clear` tombstone).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkerReport {
    pub status: ReportStatus,
    /// Raw summary; sanitize before drawing.
    pub summary: String,
    pub updated_at: Ms,
    pub age_seconds: i64,
    /// Always true: the worker wrote it, nobody verified it.
    pub self_reported: bool,
}

/// A worker's saved public handoff with its age.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkerHandoff {
    pub version: u32,
    pub job_id: String,
    /// Raw summary; sanitize before drawing.
    pub summary: String,
    pub updated_at: Ms,
    pub age_seconds: i64,
    /// Always true.
    pub self_reported: bool,
}

/// A worker's close workflow job with its age (from `updatedAt`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkerCloseJob {
    pub job_id: String,
    #[serde(serialize_with = "ser_state")]
    pub state: CloseState,
    pub created_at: Ms,
    pub updated_at: Ms,
    pub deadline_at: Ms,
    #[serde(serialize_with = "ser_reason")]
    pub reason: Option<CloseReason>,
    pub age_seconds: i64,
}

fn ser_state<S: serde::Serializer>(s: &CloseState, ser: S) -> Result<S::Ok, S::Error> {
    ser.serialize_str(s.as_str())
}

fn ser_reason<S: serde::Serializer>(r: &Option<CloseReason>, ser: S) -> Result<S::Ok, S::Error> {
    match r {
        Some(r) => ser.serialize_str(r.as_str()),
        None => ser.serialize_none(),
    }
}

/// Everything the views show about one worker from Intercom evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkerObservation {
    pub session_id: String,
    /// Configured name, raw (validated: no control characters).
    pub name: String,
    pub observed_status: ObservedStatus,
    /// One of the fixed labels (see module docs).
    pub last_activity: &'static str,
    /// Timestamp of the newest status record, if any.
    pub observed_at: Option<Ms>,
    /// Whole seconds since `observed_at`; None when missing or in the future.
    pub observation_age_seconds: Option<i64>,
    pub stale: bool,
    pub evidence: Evidence,
    /// The writer of the newest status record (when there is exactly one).
    pub writer_id: Option<String>,
    pub report: Option<WorkerReport>,
    pub handoff: Option<WorkerHandoff>,
    pub close_job: Option<WorkerCloseJob>,
}

/// The fixed public label for an activity `detail`.
pub(crate) fn detail_label(detail: &str) -> Option<&'static str> {
    Some(match detail {
        "processing" => "Processing",
        "thinking" => "Thinking",
        "responding" => "Writing response",
        "reading_files" => "Reading files",
        "editing_files" => "Editing files",
        "running_command" => "Running command",
        "using_tool" => "Using a tool",
        "multiple_tools" => "Running multiple tools",
        "settled" => "Turn settled",
        _ => return None,
    })
}

/// The status a single record supports, or None when it is not status evidence.
fn status_of(e: &Event) -> Option<ObservedStatus> {
    match e.event {
        "runtime.closed" => Some(ObservedStatus::Closed),
        "runtime.ready" | "host.activity" => match e.busy? {
            false => Some(ObservedStatus::Idle),
            true if e.phase == Some("thinking") => Some(ObservedStatus::Thinking),
            true => Some(ObservedStatus::Working),
        },
        _ => None,
    }
}

/// A pass's events grouped by session, oldest first within each: built once per pass, so
/// projecting 255 workers does not compare every worker's id with all 500 events.
pub struct EventIndex<'a> {
    by_session: std::collections::HashMap<&'a str, Vec<&'a Event>>,
}

impl<'a> EventIndex<'a> {
    pub fn new(events: &'a [Event]) -> EventIndex<'a> {
        let mut by_session: std::collections::HashMap<&str, Vec<&Event>> =
            std::collections::HashMap::new();
        for e in events {
            by_session.entry(e.session_id.as_str()).or_default().push(e);
        }
        EventIndex { by_session }
    }

    /// The session's events, oldest first.
    fn of(&self, session_id: &str) -> &[&'a Event] {
        self.by_session.get(session_id).map_or(&[], Vec::as_slice)
    }
}

/// Project one configured worker from the pass's events and reports at time `now`.
pub fn project_worker(
    agent: &Agent,
    events: &EventIndex,
    reports: &ReportSet,
    now: Ms,
) -> WorkerObservation {
    let seen = observe(events.of(&agent.session_id), now);
    let observation_age_seconds = match seen.at {
        Some(ts) if ts <= now => Some(age_seconds(now, ts)),
        _ => None,
    };
    let report = reports.active(&agent.session_id).map(|r| WorkerReport {
        status: r.status,
        summary: r.summary.clone(),
        updated_at: r.updated_at,
        age_seconds: age_seconds(now, r.updated_at),
        self_reported: true,
    });
    let handoff = agent.handoff.as_ref().map(|h| WorkerHandoff {
        version: h.version,
        job_id: h.job_id.clone(),
        summary: h.summary.clone(),
        updated_at: h.updated_at,
        age_seconds: age_seconds(now, h.updated_at),
        self_reported: true,
    });
    let close_job = agent.close_job.as_ref().map(|j| WorkerCloseJob {
        job_id: j.job_id.clone(),
        state: j.state,
        created_at: j.created_at,
        updated_at: j.updated_at,
        deadline_at: j.deadline_at,
        reason: j.reason,
        age_seconds: age_seconds(now, j.updated_at),
    });
    WorkerObservation {
        session_id: agent.session_id.clone(),
        name: agent.name.clone(),
        observed_status: seen.status,
        last_activity: seen.label,
        observed_at: seen.at,
        observation_age_seconds,
        stale: seen.evidence == Evidence::Stale,
        evidence: seen.evidence,
        writer_id: seen.writer_id,
        report,
        handoff,
        close_job,
    }
}

/// What the observation logs say about one worker: its status, how good that evidence is, the
/// activity label, when, and which writer said it.
struct Observed {
    status: ObservedStatus,
    evidence: Evidence,
    label: &'static str,
    at: Option<Ms>,
    writer_id: Option<String>,
}

impl Observed {
    fn unknown(evidence: Evidence, label: &'static str, at: Option<Ms>) -> Observed {
        Observed {
            status: ObservedStatus::Unknown,
            evidence,
            label,
            at,
            writer_id: None,
        }
    }
}

/// The newest status record of the worker (`mine`: its session's events, oldest first) decides,
/// unless it is in the future or records of the same instant disagree.
fn observe(mine: &[&Event], now: Ms) -> Observed {
    let mine = || mine.iter().copied();
    let missing = || Observed::unknown(Evidence::Missing, "no observation", None);
    let Some(ts) = mine()
        .filter(|e| status_of(e).is_some())
        .map(|e| e.timestamp)
        .max()
    else {
        return missing();
    };
    let newest: Vec<(&Event, ObservedStatus)> = mine()
        .filter(|e| e.timestamp == ts)
        .filter_map(|e| status_of(e).map(|s| (e, s)))
        .collect();
    // Never empty (`ts` came from the same records); fall back to "missing" anyway rather than
    // index blindly.
    let Some(&(event, status)) = newest.first() else {
        return missing();
    };
    if ts > now {
        return Observed::unknown(Evidence::ClockUncertain, "clock uncertain", Some(ts));
    }
    if !newest.iter().all(|(_, s)| *s == status) {
        return Observed::unknown(Evidence::Conflicting, "conflicting records", Some(ts));
    }
    Observed {
        status,
        evidence: if now - ts > STALE_AFTER_MS {
            Evidence::Stale
        } else {
            Evidence::Recent
        },
        label: activity_label(event, status, mine()),
        at: Some(ts),
        writer_id: Some(event.writer_id.clone()),
    }
}

/// `mine`: the session's events, oldest first.
fn activity_label<'a>(
    newest: &Event,
    status: ObservedStatus,
    mine: impl Iterator<Item = &'a Event> + Clone,
) -> &'static str {
    // A label may outlive its turn's settlement, but not the runtime: once closed, nothing that
    // writer reported earlier is still going on.
    if status == ObservedStatus::Closed {
        return "Runtime closed";
    }
    let same_writer = mine.filter(|e| {
        e.writer_id == newest.writer_id && e.timestamp <= newest.timestamp && e.detail.is_some()
    });
    // Events are oldest first; `max_by_key` keeps the last of equal keys, i.e. file order.
    let specific = same_writer
        .clone()
        .filter(|e| !matches!(e.detail, Some("processing") | Some("settled")))
        .max_by_key(|e| e.timestamp);
    if let Some(label) = specific.and_then(|e| e.detail).and_then(detail_label) {
        return label;
    }
    let any = same_writer.max_by_key(|e| e.timestamp);
    if let Some(label) = any.and_then(|e| e.detail).and_then(detail_label) {
        return label;
    }
    match status {
        ObservedStatus::Closed => "Runtime closed",
        ObservedStatus::Idle => "No active turn",
        ObservedStatus::Thinking | ObservedStatus::Working => "Processing",
        ObservedStatus::Unknown => "no observation",
    }
}

/// The worker object of `status --json` (docs/behaviour.md §4), compatible with Intercom's own
/// `intercom_worker_status`. Text fields are sanitized here; `connection` is passed through.
pub fn worker_status_json(obs: &WorkerObservation, connection: Value) -> Value {
    serde_json::to_value(worker_status(obs, connection)).unwrap_or_default()
}

/// The same worker object, typed (a board record serializes it without a JSON value between).
pub(crate) fn worker_status<'a, C: Serialize + 'a>(
    obs: &'a WorkerObservation,
    connection: C,
) -> impl Serialize + 'a {
    let handoff = obs.handoff.as_ref().map(|h| HandoffJson {
        version: h.version,
        job_id: &h.job_id,
        summary: text::sanitize(&h.summary),
        updated_at: format_iso(h.updated_at),
        age_seconds: h.age_seconds,
        self_reported: true,
    });
    let close_job = obs.close_job.as_ref().map(|j| CloseJobJson {
        job_id: &j.job_id,
        state: j.state.as_str(),
        created_at: format_iso(j.created_at),
        updated_at: format_iso(j.updated_at),
        deadline_at: format_iso(j.deadline_at),
        reason: j.reason.map(CloseReason::as_str),
        age_seconds: j.age_seconds,
    });
    let report = obs.report.as_ref().map(|r| ReportJson {
        status: r.status.as_str(),
        summary: text::sanitize(&r.summary),
        updated_at: format_iso(r.updated_at),
        age_seconds: r.age_seconds,
        self_reported: true,
    });
    WorkerStatus {
        session_id: &obs.session_id,
        name: text::sanitize(&obs.name),
        observed_status: obs.observed_status.as_str(),
        last_activity: obs.last_activity,
        observed_at: obs.observed_at.map(format_iso),
        observation_age_seconds: obs.observation_age_seconds,
        stale: obs.stale,
        evidence: obs.evidence.as_str(),
        connection,
        handoff,
        close_job,
        report,
    }
}

/// The worker object of `status --json`, members in Intercom's order.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WorkerStatus<'a, C> {
    session_id: &'a str,
    name: String,
    observed_status: &'static str,
    last_activity: &'static str,
    observed_at: Option<String>,
    observation_age_seconds: Option<i64>,
    stale: bool,
    evidence: &'static str,
    connection: C,
    handoff: Option<HandoffJson<'a>>,
    close_job: Option<CloseJobJson<'a>>,
    report: Option<ReportJson>,
}

/// The worker's handoff as Intercom shows it (`selfReported`: the worker wrote it).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct HandoffJson<'a> {
    version: u32,
    job_id: &'a str,
    summary: String,
    updated_at: String,
    age_seconds: i64,
    self_reported: bool,
}

/// The worker's close job as Intercom shows it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CloseJobJson<'a> {
    job_id: &'a str,
    state: &'static str,
    created_at: String,
    updated_at: String,
    deadline_at: String,
    reason: Option<&'static str>,
    age_seconds: i64,
}

/// The worker's own report as Intercom shows it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ReportJson {
    status: &'static str,
    summary: String,
    updated_at: String,
    age_seconds: i64,
    self_reported: bool,
}

/// Stable partition: items for which `is_disconnected` is false first, then the rest, each group
/// in its original (configured) order.
pub(crate) fn sort_disconnected_last<T>(items: &mut [T], is_disconnected: impl Fn(&T) -> bool) {
    // `sort_by_key` is stable, so configured order survives inside both groups.
    items.sort_by_key(|x| is_disconnected(x));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const S: &str = "s-1";
    const W1: &str = "00000000-0000-7000-8000-000000000001";
    const W2: &str = "00000000-0000-7000-8000-000000000002";

    fn agent() -> Agent {
        Agent {
            session_id: S.into(),
            name: "Builder".into(),
            coordinator: false,
            description: "d".into(),
            port: 41002,
            project_directory: ".".into(),
            role: None,
            handoff: None,
            close_job: None,
            budget: None,
        }
    }

    fn ev(ts: Ms, writer: &str, event: &'static str, busy: Option<bool>) -> Event {
        Event {
            timestamp: ts,
            writer_id: writer.into(),
            session_id: S.into(),
            event,
            peer_session_id: None,
            peer_name: None,
            correlation_id: None,
            kind: None,
            busy,
            phase: None,
            detail: None,
            port: None,
            role: None,
            pi_role: None,
            outcome: None,
            error_code: None,
            operation: None,
            writer_closed: false,
        }
    }

    fn act(ts: Ms, phase: &'static str, detail: &'static str, busy: bool) -> Event {
        Event {
            phase: Some(phase),
            detail: Some(detail),
            ..ev(ts, W1, "host.activity", Some(busy))
        }
    }

    fn run(events: &[Event], now: Ms) -> WorkerObservation {
        project_worker(
            &agent(),
            &EventIndex::new(events),
            &ReportSet::default(),
            now,
        )
    }

    #[test]
    fn missing_when_no_status_records() {
        let o = run(&[ev(1000, W1, "transport.send", None)], 2000);
        assert_eq!(o.observed_status, ObservedStatus::Unknown);
        assert_eq!(o.evidence, Evidence::Missing);
        assert_eq!(o.last_activity, "no observation");
        assert_eq!(o.observed_at, None);
        // host.activity without a boolean busy is not status evidence.
        let o = run(&[ev(1000, W1, "host.activity", None)], 2000);
        assert_eq!(o.evidence, Evidence::Missing);
    }

    #[test]
    fn label_survives_settlement_and_stale_keeps_status() {
        let evs = [
            act(1_000, "tool", "running_command", true),
            act(2_000, "idle", "settled", false),
        ];
        let o = run(&evs, 2_500);
        assert_eq!(o.observed_status, ObservedStatus::Idle);
        assert_eq!(o.last_activity, "Running command");
        assert_eq!(o.evidence, Evidence::Recent);
        let o = run(&evs, 2_000 + STALE_AFTER_MS + 1);
        assert_eq!(o.evidence, Evidence::Stale);
        assert!(o.stale);
        assert_eq!(o.observed_status, ObservedStatus::Idle);
        assert_eq!(o.observation_age_seconds, Some(60));
    }

    #[test]
    fn fallback_labels() {
        let o = run(&[act(1_000, "idle", "settled", false)], 1_000);
        assert_eq!(o.last_activity, "Turn settled");
        let o = run(&[act(1_000, "working", "processing", true)], 1_000);
        assert_eq!(
            (o.observed_status, o.last_activity),
            (ObservedStatus::Working, "Processing")
        );
        let o = run(&[ev(1_000, W1, "runtime.ready", Some(false))], 1_000);
        assert_eq!(o.last_activity, "No active turn");
        let o = run(&[ev(1_000, W1, "runtime.closed", None)], 1_000);
        assert_eq!(
            (o.observed_status, o.last_activity),
            (ObservedStatus::Closed, "Runtime closed")
        );
        // A label from another writer (an earlier runtime) is not carried over.
        let evs = [
            act(500, "tool", "editing_files", true),
            ev(1_000, W2, "runtime.ready", Some(false)),
        ];
        assert_eq!(run(&evs, 1_000).last_activity, "No active turn");
    }

    #[test]
    fn future_and_conflicting() {
        let o = run(&[act(5_000, "thinking", "thinking", true)], 1_000);
        assert_eq!(o.observed_status, ObservedStatus::Unknown);
        assert_eq!(o.evidence, Evidence::ClockUncertain);
        assert_eq!(o.last_activity, "clock uncertain");
        assert_eq!(o.observation_age_seconds, None);
        let evs = [
            ev(1_000, W1, "runtime.ready", Some(false)),
            ev(1_000, W2, "runtime.closed", None),
        ];
        let o = run(&evs, 2_000);
        assert_eq!(o.evidence, Evidence::Conflicting);
        assert_eq!(o.last_activity, "conflicting records");
        assert_eq!(o.observed_status, ObservedStatus::Unknown);
        // Equal timestamps that agree are fine.
        let evs = [
            ev(1_000, W1, "runtime.ready", Some(false)),
            act(1_000, "idle", "settled", false),
        ];
        assert_eq!(run(&evs, 2_000).evidence, Evidence::Recent);
    }

    #[test]
    fn thinking_vs_working() {
        let o = run(&[act(1_000, "thinking", "thinking", true)], 1_000);
        assert_eq!(
            (o.observed_status, o.last_activity),
            (ObservedStatus::Thinking, "Thinking")
        );
        let o = run(&[act(1_000, "responding", "responding", true)], 1_000);
        assert_eq!(
            (o.observed_status, o.last_activity),
            (ObservedStatus::Working, "Writing response")
        );
    }

    #[test]
    fn disconnected_sort_is_stable() {
        let mut v = vec![("a", true), ("b", false), ("c", true), ("d", false)];
        sort_disconnected_last(&mut v, |x| x.1);
        let names: Vec<_> = v.iter().map(|x| x.0).collect();
        assert_eq!(names, ["b", "d", "a", "c"]);
    }

    #[test]
    fn json_shape_for_missing() {
        let o = run(&[], 0);
        let j = worker_status_json(&o, json!({"state": "unknown"}));
        let keys: Vec<_> = j.as_object().unwrap().keys().cloned().collect();
        assert_eq!(
            keys,
            [
                "sessionId",
                "name",
                "observedStatus",
                "lastActivity",
                "observedAt",
                "observationAgeSeconds",
                "stale",
                "evidence",
                "connection",
                "handoff",
                "closeJob",
                "report"
            ]
        );
        assert_eq!(j["observedAt"], Value::Null);
        assert_eq!(j["evidence"], "missing");
    }
}
