//! Reading another host's board: its records (`scan --json`, and the `board`/`seat`/`removed`
//! lines of `status --watch --json-lines`, docs/interop.md §10 and §12) made into rows of this board.
//!
//! Everything here is data from another machine: bounded by the transport (line and answer
//! caps), parsed leniently (an unknown code becomes `unknown`/`host_reported`, never a guess),
//! and shown only through the views' sanitizing like every other evidence text.

use serde::Deserialize;
use serde_json::Value;

use crate::board::intercom::{Evidence, ObservedStatus};
use crate::board::reason::{StateReason, StateSource};
use crate::board::record::SeatKey;
use crate::clock::{parse_iso, Ms};
use crate::evidence::registrations::ContextFill;
use crate::snapshot::{
    ActivityView, ConnectionView, MuxKind, ReplyPath, Row, RowCloseJob, RowHandoff, RowHost,
    RowReport, RowRole, RunningTool, SeatPane, UsageView,
};
use crate::states::{BoardState, CloseState, ConnState, ReportStatus};
use crate::text::one_line;

/// Most records taken from one board (a roster has at most 256 agents, plus pane seats).
pub(crate) const MAX_RECORDS: usize = 1024;

/// A row's id (and seen key) on this board: its id there, keyed with its host
/// (`SeatKey::on_host`), so a host's ids never meet this machine's or another host's.
pub(crate) fn row_id(host: &str, id: &str) -> String {
    SeatKey::on_host(host, id).into()
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct Rec {
    agent: String,
    project: String,
    state: String,
    state_reason: String,
    state_source: String,
    waiting_on_you: bool,
    seen: bool,
    alive: Option<bool>,
    session_id: Option<String>,
    task: Option<String>,
    workspace: Option<String>,
    model: Option<String>,
    provider: Option<String>,
    last_assistant_text: Option<String>,
    last_error: Option<String>,
    question: Option<String>,
    last_activity: Option<String>,
    relaunched_at: Option<String>,
    state_at: Option<String>,
    // Read leniently: a member this version cannot read leaves it out, not the row.
    context: Option<Value>,
    usage: Option<Value>,
    budget: Option<Value>,
    intercom: Option<Value>,
    connector: Option<Value>,
    seat: Option<Value>,
}

fn s<'a>(v: &'a Value, k: &str) -> Option<&'a str> {
    v.get(k).and_then(Value::as_str)
}

fn iso(v: &Value, k: &str) -> Option<Ms> {
    s(v, k).and_then(parse_iso)
}

fn state_of(s: &str) -> BoardState {
    BoardState::ALL
        .into_iter()
        .find(|b| b.as_str() == s)
        .unwrap_or(BoardState::Unknown)
}

/// The seat's `<project>/<agent>` key in a record.
pub(crate) fn key_of(rec: &Value) -> Option<String> {
    Some(SeatKey::new(s(rec, "project")?, s(rec, "agent")?).into())
}

/// The row of one record of host `host`, whose board was current at `answered_at`; `None` for
/// the coordinator (a board seat, not a sidebar row, as on this machine) and for a record that
/// is not one.
pub fn row_of(host: &str, rec: &Value, answered_at: Ms) -> Option<Row> {
    let r: Rec = serde_json::from_value(rec.clone()).ok()?;
    if r.agent.is_empty() || r.project.is_empty() {
        return None;
    }
    let seat = r.seat.as_ref();
    let role = role_of(seat, &r)?;
    let key: String = SeatKey::new(&r.project, &r.agent).into();
    let (state_reason, state_source) = reason_of(host, &r);
    let ic = r.intercom.as_ref();
    Some(Row {
        usage: r.usage.as_ref().and_then(UsageView::from_json),
        budget: r.budget.and_then(crate::budget::from_json),
        context: context_of(r.context),
        state_at: r.state_at.as_deref().and_then(parse_iso),
        id: row_id(host, r.session_id.as_deref().unwrap_or(&key)),
        seen_key: row_id(host, &key),
        name: r.agent.clone(),
        project: r.project.clone(),
        role,
        responsibility: None,
        state: state_of(&r.state),
        state_reason,
        state_source,
        connection: connection_in(ic),
        activity: ic.map(activity_of),
        report: member(ic, "report").and_then(report_of),
        handoff: member(ic, "handoff").and_then(handoff_of),
        close_job: member(ic, "closeJob").and_then(close_job_of),
        task: r.task,
        task_source: None,
        workspace: r.workspace,
        model: r.model,
        provider: r.provider,
        last_error: r.last_error,
        last_assistant_text: r.last_assistant_text,
        question: r.question,
        last_user_text: seat.and_then(|x| s(x, "lastUserText")).map(str::to_string),
        running_tool: member(seat, "runningTool").map(running_tool_of),
        pane: member(seat, "pane").and_then(pane_of),
        last_activity: r.last_activity.as_deref().and_then(parse_iso),
        relaunched_at: r.relaunched_at.as_deref().and_then(parse_iso),
        waiting_on_you: r.waiting_on_you,
        seen: r.seen,
        alive: r.alive,
        turn: seat.and_then(|x| s(x, "turn")).map(|t| one_line(t, 200)),
        session_ended: session_ended_in(seat),
        reply: reply_of(host, seat),
        host: Some(RowHost {
            name: host.to_string(),
            key,
            session_id: r.session_id,
            answered_at,
            answering: true,
        }),
    })
}

/// The member `k` of `v`, when both are there.
fn member<'a>(v: Option<&'a Value>, k: &str) -> Option<&'a Value> {
    v.and_then(|v| v.get(k))
}

/// The row's role; `None` for the coordinator (a board seat, not a sidebar row).
fn role_of(seat: Option<&Value>, r: &Rec) -> Option<RowRole> {
    Some(match seat.and_then(|x| s(x, "role")) {
        Some("coordinator") => return None,
        Some("worker") => RowRole::Worker,
        Some("connector") => RowRole::Connector,
        Some(_) => RowRole::Seat,
        None if r.connector.is_some() => RowRole::Connector,
        None if r.intercom.is_some() => RowRole::Worker,
        None => RowRole::Seat,
    })
}

/// Why the host says the row is in its state: its reason (`host_reported` when this version
/// does not know the code, which the source then quotes) and its source, as the host's.
fn reason_of(host: &str, r: &Rec) -> (StateReason, StateSource) {
    let reason = StateReason::from_code(&r.state_reason);
    let mut source = one_line(&r.state_source, 200);
    if reason.is_none() {
        source.push_str(&format!("; reason {}", one_line(&r.state_reason, 60)));
    }
    let source = StateSource::Host {
        host: host.to_string(),
        source,
    };
    (reason.unwrap_or(StateReason::HostReported), source)
}

/// The context fill, when it reads and its numbers are possible.
fn context_of(v: Option<Value>) -> Option<ContextFill> {
    v.and_then(|v| serde_json::from_value::<ContextFill>(v).ok())
        .filter(|c| c.window_ok() && c.percent_ok())
}

fn connection_in(ic: Option<&Value>) -> ConnectionView {
    member(ic, "connection")
        .map(connection_of)
        .unwrap_or_else(ConnectionView::not_checked)
}

fn running_tool_of(t: &Value) -> RunningTool {
    RunningTool {
        name: s(t, "name").map(str::to_string),
        since: iso(t, "since"),
    }
}

fn session_ended_in(seat: Option<&Value>) -> bool {
    member(seat, "sessionEnded")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// Where a reply to the row goes on its host, or why none can.
fn reply_of(host: &str, seat: Option<&Value>) -> ReplyPath {
    match member(seat, "reply") {
        Some(v) => match (s(v, "target"), s(v, "unavailable")) {
            (Some(t), _) => ReplyPath::Available {
                target: format!("{t} on {host}"),
            },
            (None, why) => ReplyPath::Unavailable {
                reason: why.unwrap_or("no reply path").to_string(),
            },
        },
        None => ReplyPath::Unavailable {
            reason: format!("host {host} does not say where a reply would go"),
        },
    }
}

fn pane_of(p: &Value) -> Option<SeatPane> {
    let kind = MuxKind::parse(s(p, "mux")?)?;
    let pi = p.get("pi").and_then(|pi| {
        Some((
            i32::try_from(pi.get("pid")?.as_i64()?).ok()?,
            pi.get("startTicks")?.as_u64()?,
            s(pi, "bootId")?.to_string(),
        ))
    });
    Some(SeatPane {
        kind,
        socket: s(p, "socket").map(str::to_string),
        pane_id: s(p, "paneId")?.to_string(),
        shell_pid: p
            .get("shellPid")
            .and_then(Value::as_i64)
            .and_then(|v| i32::try_from(v).ok()),
        pi,
    })
}

fn connection_of(c: &Value) -> ConnectionView {
    let state = match s(c, "state") {
        Some("connected") => ConnState::Connected,
        Some("disconnected") => ConnState::Disconnected,
        _ => ConnState::Unknown,
    };
    ConnectionView {
        state,
        reason: crate::text::one_line(s(c, "reason").unwrap_or("not_checked"), 40),
        checked_at: iso(c, "checkedAt"),
    }
}

fn activity_of(i: &Value) -> ActivityView {
    use ObservedStatus as O;
    let status = [O::Unknown, O::Closed, O::Idle, O::Thinking, O::Working]
        .into_iter()
        .find(|o| Some(o.as_str()) == s(i, "observedStatus"))
        .unwrap_or(O::Unknown);
    use Evidence as E;
    let evidence = [
        E::Recent,
        E::Stale,
        E::ClockUncertain,
        E::Conflicting,
        E::Missing,
    ]
    .into_iter()
    .find(|e| Some(e.as_str()) == s(i, "evidence"))
    .unwrap_or(E::Missing);
    ActivityView {
        status,
        label: crate::text::one_line(s(i, "lastActivity").unwrap_or("no observation"), 60),
        observed_at: iso(i, "observedAt"),
        stale: i.get("stale").and_then(Value::as_bool).unwrap_or(true),
        evidence,
    }
}

fn report_of(r: &Value) -> Option<RowReport> {
    Some(RowReport {
        status: ReportStatus::parse(s(r, "status")?)?,
        summary: s(r, "summary")?.to_string(),
        updated_at: iso(r, "updatedAt")?,
    })
}

fn handoff_of(h: &Value) -> Option<RowHandoff> {
    Some(RowHandoff {
        job_id: s(h, "jobId")?.to_string(),
        summary: s(h, "summary")?.to_string(),
        updated_at: iso(h, "updatedAt")?,
    })
}

fn close_job_of(j: &Value) -> Option<RowCloseJob> {
    Some(RowCloseJob {
        job_id: s(j, "jobId")?.to_string(),
        state: CloseState::parse(s(j, "state")?)?,
        reason: s(j, "reason").map(str::to_string),
        updated_at: iso(j, "updatedAt")?,
    })
}

/// The records of a board object (`scan --json`, or a stream's `board` line), at most
/// `MAX_RECORDS`.
pub fn records(board: &Value) -> Vec<&Value> {
    board
        .get("records")
        .and_then(Value::as_array)
        .map(|a| a.iter().take(MAX_RECORDS).collect())
        .unwrap_or_default()
}

/// A heartbeat's `checked` (at most `MAX_CHECKED` seats; a time that does not read is left out).
fn rechecked(line: &Value) -> Vec<(String, String, Ms)> {
    line.get("checked")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .take(crate::views::rechecks::MAX_CHECKED)
                .filter_map(|(k, t)| {
                    let t = t.as_str()?;
                    Some((k.clone(), t.to_string(), parse_iso(t)?))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// One line of `status --watch --json-lines` (schema version 1).
#[derive(Debug, PartialEq)]
pub enum Line {
    /// The whole board again.
    Board(Value),
    /// One seat whose record changed.
    Seat { key: String, record: Value },
    /// One seat that left the board.
    Removed { key: String },
    /// The stream is alive; nothing changed but the connection checks named here, which found
    /// what the seats' last lines said: (key, `checkedAt` as sent, as a time).
    Heartbeat { checked: Vec<(String, String, Ms)> },
    /// Another schema version or kind: the stream cannot be followed.
    Unknown(String),
}

/// Parse one stream line.
pub fn line(text: &str) -> Line {
    let Ok(mut v) = serde_json::from_str::<Value>(text) else {
        return Line::Unknown("not JSON".into());
    };
    if v.get("v").and_then(Value::as_u64) != Some(1) {
        return Line::Unknown("not schema version 1".into());
    }
    let key = s(&v, "key").map(str::to_string);
    match (s(&v, "kind"), key) {
        (Some("board"), _) => match v.get_mut("board").map(Value::take) {
            Some(b) if b.is_object() => Line::Board(b),
            _ => Line::Unknown("a board line without its board".into()),
        },
        (Some("seat"), Some(key)) => match v.get_mut("seat").map(Value::take) {
            Some(record) if record.is_object() => Line::Seat { key, record },
            _ => Line::Unknown("a seat line without its record".into()),
        },
        (Some("removed"), Some(key)) => Line::Removed { key },
        (Some("heartbeat"), _) => Line::Heartbeat {
            checked: rechecked(&v),
        },
        (k, _) => Line::Unknown(format!("kind {:?}", k.unwrap_or(""))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn record() -> Value {
        json!({
            "agent": "Builder", "project": "proj", "state": "waiting",
            "stateReason": "input_needed", "stateSource": "session file",
            "waitingOnYou": true, "seen": false, "alive": true, "sessionId": "s-1",
            "question": "staging or production?", "lastActivity": "2026-01-01T00:00:00.000Z",
            "intercom": {"observedStatus": "idle", "lastActivity": "Turn settled",
                "observedAt": "2026-01-01T00:00:00.000Z", "stale": false, "evidence": "recent",
                "connection": {"state": "connected", "reason": "verified", "checkedAt": null},
                "report": {"status": "needs_decision", "summary": "pick one",
                    "updatedAt": "2026-01-01T00:00:00.000Z"}, "handoff": null, "closeJob": null},
            "seat": {"role": "worker", "reply": {"target": "tmux %3"},
                "pane": {"mux": "tmux", "socket": "/tmp/s", "paneId": "%3", "shellPid": 10,
                         "pi": {"pid": 42, "startTicks": 7, "bootId": "b"}},
                "lastUserText": "go", "runningTool": null}
        })
    }

    #[test]
    fn tokens_cost_context_and_the_states_time_come_along_and_a_bad_one_only_drops_itself() {
        let mut rec = record();
        rec["stateAt"] = json!("2026-01-01T00:00:01.000Z");
        rec["usage"] = json!({"calls": 2, "input": 1000, "output": 200, "cacheRead": 0,
            "cacheWrite": 0, "cost": 0.25, "atLeast": false});
        rec["context"] = json!({"tokens": 5000, "window": 128000, "percent": 3.9,
            "at": "2026-01-01T00:00:01.000Z"});
        let row = row_of("build", &rec, 5).unwrap();
        let usage = row.usage.unwrap();
        assert_eq!((usage.usage.input, usage.usage.output), (1000, 200));
        assert_eq!(usage.usage.cost_nanos, 250_000_000);
        assert_eq!(row.context.unwrap().window, 128000);
        assert_eq!(row.state_at, parse_iso("2026-01-01T00:00:01.000Z"));
        rec["usage"] = json!({"calls": "many"});
        rec["context"] = json!({"window": -1});
        let row = row_of("build", &rec, 5).unwrap();
        assert_eq!(row.context, None);
        rec["context"] = json!({"tokens": 5, "window": 100, "percent": 1e300,
            "at": "2026-01-01T00:00:01.000Z"});
        let row = row_of("build", &rec, 5).unwrap();
        assert_eq!((row.usage, row.context), (None, None));
        assert_eq!(row.state, BoardState::Waiting);
    }

    #[test]
    fn a_record_becomes_a_tagged_row() {
        let row = row_of("build", &record(), 5).unwrap();
        assert_eq!(row.id, "build\u{1f}s-1");
        assert_eq!(row.seen_key, "build\u{1f}proj/Builder");
        assert_eq!(row.state, BoardState::Waiting);
        assert_eq!(row.state_reason, StateReason::InputNeeded);
        assert_eq!(row.state_source.to_string(), "host build: session file");
        assert_eq!(row.role, RowRole::Worker);
        assert_eq!(row.pane.as_ref().unwrap().pi, Some((42, 7, "b".into())));
        assert_eq!(row.connection.state, ConnState::Connected);
        assert_eq!(
            row.report.as_ref().unwrap().status,
            ReportStatus::NeedsDecision
        );
        assert!(
            matches!(&row.reply, ReplyPath::Available { target } if target == "tmux %3 on build")
        );
        let h = row.host.unwrap();
        assert_eq!(
            (h.name.as_str(), h.key.as_str(), h.answered_at),
            ("build", "proj/Builder", 5)
        );
    }

    #[test]
    fn odd_records_are_unknown_never_guessed() {
        let mut r = record();
        r["state"] = json!("sleeping");
        r["stateReason"] = json!("brand_new_reason");
        let row = row_of("b", &r, 0).unwrap();
        assert_eq!(row.state, BoardState::Unknown);
        assert_eq!(row.state_reason, StateReason::HostReported);
        assert!(row.state_source.to_string().contains("brand_new_reason"));
        r["seat"]["role"] = json!("coordinator");
        assert!(row_of("b", &r, 0).is_none());
        assert!(row_of("b", &json!({"agent": 1}), 0).is_none());
        assert!(row_of("b", &json!([]), 0).is_none());
    }

    #[test]
    fn stream_lines() {
        let b =
            line(r#"{"v":1,"kind":"board","seq":1,"at":"x","why":"start","board":{"records":[]}}"#);
        assert_eq!(b, Line::Board(json!({"records": []})));
        let s = line(r#"{"v":1,"kind":"seat","seq":2,"at":"x","key":"p/a","seat":{"agent":"a"}}"#);
        assert_eq!(
            s,
            Line::Seat {
                key: "p/a".into(),
                record: json!({"agent": "a"})
            }
        );
        assert_eq!(
            line(r#"{"v":1,"kind":"removed","seq":3,"at":"x","key":"p/a"}"#),
            Line::Removed { key: "p/a".into() }
        );
        assert_eq!(
            line(r#"{"v":1,"kind":"heartbeat","seq":4}"#),
            Line::Heartbeat { checked: vec![] }
        );
        let t = "2026-01-01T00:00:15.000Z";
        assert_eq!(
            line(&format!(
                r#"{{"v":1,"kind":"heartbeat","seq":5,"checked":{{"p/a":"{t}","p/b":"not a time","p/c":3}}}}"#
            )),
            Line::Heartbeat {
                checked: vec![("p/a".into(), t.into(), parse_iso(t).unwrap())]
            }
        );
        assert!(matches!(line(r#"{"v":2,"kind":"seat"}"#), Line::Unknown(_)));
        assert!(matches!(line("garbage"), Line::Unknown(_)));
        assert!(matches!(
            line(r#"{"v":1,"kind":"seat","key":"k"}"#),
            Line::Unknown(_)
        ));
    }
}
