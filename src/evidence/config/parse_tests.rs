//! Tests of config validation (`parse.rs`). Test code only (the architecture test reads a file up
//! to its first `cfg(test)`).
#[cfg(test)]
use super::*;
use serde_json::json;

fn base() -> Value {
    json!({"version": 1, "agents": [
        {"sessionId": "c", "name": "Coordinator", "coordinator": true,
         "description": "coord", "port": 41001, "projectDirectory": "."},
        {"sessionId": "w", "name": "Builder", "coordinator": false,
         "description": "builds", "port": 41002, "projectDirectory": "a/b"}
    ]})
}

fn check(v: &Value) -> Result<IntercomConfig, ConfigError> {
    parse(Path::new("/r"), v.to_string().as_bytes())
}

fn with(path: &[&str], val: Value) -> Value {
    let mut v = base();
    let mut cur = &mut v;
    for (n, p) in path.iter().enumerate() {
        if n + 1 == path.len() {
            cur.as_object_mut().unwrap().insert(p.to_string(), val);
            break;
        }
        cur = if let Ok(i) = p.parse::<usize>() {
            &mut cur[i]
        } else {
            &mut cur[*p]
        };
    }
    v
}

#[test]
fn accepts_base_and_projects_fields() {
    let c = check(&base()).unwrap();
    assert_eq!(c.agents.len(), 2);
    assert_eq!(c.workers().count(), 1);
    assert_eq!(c.coordinator().unwrap().name, "Coordinator");
    assert_eq!(c.find_by_name("bUILDER").unwrap().port, 41002);
    assert_eq!(c.multiplexer, None);
}

#[test]
fn field_rules() {
    let bad: Vec<(Vec<&str>, Value)> = vec![
        (vec!["version"], json!(2)),
        (vec!["multiplexer"], json!("screen")),
        (vec!["multiplexer"], json!(null)),
        (vec!["agents", "1", "sessionId"], json!("  ")),
        (vec!["agents", "1", "sessionId"], json!("a\u{0}b")),
        (vec!["agents", "1", "sessionId"], json!("x".repeat(257))),
        (vec!["agents", "1", "name"], json!(" Builder")),
        (vec!["agents", "1", "name"], json!("Bu\u{1b}[31mild")),
        (vec!["agents", "1", "name"], json!("COORDINATOR")),
        (vec!["agents", "1", "name"], json!("x".repeat(129))),
        (vec!["agents", "1", "coordinator"], json!(true)),
        (vec!["agents", "1", "coordinator"], json!("false")),
        (vec!["agents", "1", "description"], json!("")),
        (vec!["agents", "1", "port"], json!(0)),
        (vec!["agents", "1", "port"], json!(65536)),
        (vec!["agents", "1", "port"], json!(80.5)),
        (vec!["agents", "1", "projectDirectory"], json!("/abs")),
        (vec!["agents", "1", "projectDirectory"], json!("a/../b")),
        (vec!["agents", "1", "projectDirectory"], json!("")),
        (vec!["agents", "1", "dashboardPort"], json!(41999)),
        (vec!["agents", "0", "dashboardPort"], json!("x")),
        (vec!["agents", "1", "role"], json!(".bad")),
        (
            vec!["agents", "0", "handoff"],
            json!({"version": 1, "jobId": "a", "summary": "s", "updatedAt": "2026-11-29T10:00:00.000Z"}),
        ),
        (
            vec!["agents", "1", "handoff"],
            json!({"version": 1, "jobId": "a", "summary": "s", "updatedAt": "2026-11-29T10:00:00.000Z", "pid": 1}),
        ),
        (
            vec!["agents", "1", "handoff"],
            json!({"version": 1, "jobId": "a b", "summary": "s", "updatedAt": "2026-11-29T10:00:00.000Z"}),
        ),
        (
            vec!["agents", "1", "handoff"],
            json!({"version": 1, "jobId": "a", "summary": " ", "updatedAt": "2026-11-29T10:00:00.000Z"}),
        ),
        (
            vec!["agents", "1", "handoff"],
            json!({"version": 1, "jobId": "a", "summary": "s", "updatedAt": "yesterday"}),
        ),
        (
            vec!["agents", "1", "closeJob"],
            json!({"jobId": "a", "state": "done", "createdAt": "2026-11-29T10:00:00.000Z", "updatedAt": "2026-11-29T10:00:00.000Z", "deadlineAt": "2026-11-29T10:00:00.000Z"}),
        ),
        (
            vec!["agents", "1", "closeJob"],
            json!({"jobId": "a", "state": "closed", "createdAt": "2026-11-29T10:00:00.000Z", "updatedAt": "2026-11-29T10:00:00.000Z"}),
        ),
        (
            vec!["agents", "1", "closeJob"],
            json!({"jobId": "a", "state": "failed", "reason": "oops", "createdAt": "2026-11-29T10:00:00.000Z", "updatedAt": "2026-11-29T10:00:00.000Z", "deadlineAt": "2026-11-29T10:00:00.000Z"}),
        ),
    ];
    for (path, val) in bad {
        let v = with(&path, val.clone());
        let e = check(&v).expect_err(&format!("{path:?} = {val} should be refused"));
        assert_eq!(e.code(), "config_invalid", "{path:?}");
        assert!(!e.message.contains('\u{1b}'), "{}", e.message);
    }
}

#[test]
fn accepts_optional_fields_and_unknown_keys() {
    let mut v = with(&["agents", "0", "dashboardPort"], json!(41999));
    v["agents"][1]["role"] = json!("builder.v2");
    v["agents"][1]["futureKey"] = json!({"x": 1});
    v["agents"][1]["closeJob"] = json!({"jobId": "j-1", "state": "uncertain", "reason": "close_unverified",
        "createdAt": "2026-11-29T10:00:00.000Z", "updatedAt": "2026-11-29T10:00:01.000Z", "deadlineAt": "2026-11-29T10:02:00.000Z"});
    v["multiplexer"] = json!("tmux");
    let c = check(&v).unwrap();
    let w = &c.agents[1];
    assert_eq!(w.role.as_deref(), Some("builder.v2"));
    let job = w.close_job.as_ref().unwrap();
    assert!(job.state.is_fenced() && !job.state.is_pending());
    assert_eq!(job.reason, Some(CloseReason::CloseUnverified));
    assert_eq!(c.raw["agents"][1]["futureKey"]["x"], 1);
    assert_eq!(c.multiplexer, Some(MuxChoice::Tmux));
}

#[test]
fn roster_rules() {
    let mut v = base();
    v["agents"][1]["name"] = json!("coordinator2");
    v["agents"][1]["sessionId"] = json!("c");
    assert!(check(&v).unwrap_err().message.contains("sessionId"));
    let mut v = base();
    v["agents"][0]["coordinator"] = json!(false);
    v["agents"][0]["name"] = json!("Lead");
    assert!(check(&v)
        .unwrap_err()
        .message
        .contains("exactly one coordinator"));
    let v = json!({"version": 1, "agents": []});
    assert_eq!(check(&v).unwrap().agents.len(), 0);
    let e = parse(Path::new("/r"), b"{not json").unwrap_err();
    assert_eq!(e.code(), "config_not_json");
    let e = parse(Path::new("/r"), b"[1]").unwrap_err();
    assert_eq!(e.code(), "config_invalid");
}

#[test]
fn close_state_names_round_trip() {
    for s in CloseState::ALL {
        assert_eq!(CloseState::parse(s.as_str()), Some(s));
    }
    for r in CloseReason::ALL {
        assert_eq!(CloseReason::parse(r.as_str()), Some(r));
    }
    let pending: Vec<_> = CloseState::ALL.iter().filter(|s| s.is_pending()).collect();
    assert_eq!(pending.len(), 5);
}
