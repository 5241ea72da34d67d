//! Strict validation of config bytes: every field of docs/interop.md §1, refused as a whole with a
//! fixed code and a message quoting the offending field.

use std::collections::HashSet;
use std::path::Path;

use serde_json::{Map, Value};

use super::{
    Agent, CloseJob, CloseReason, ConfigError, Handoff, IntercomConfig, MuxChoice, MAX_AGENTS,
    MAX_CONFIG_BYTES,
};
use crate::clock::{parse_iso, Ms};
use crate::states::CloseState;
use crate::text;

/// Validate config bytes already read (exposed so a writer can re-validate before replacing).
pub fn parse(root: &Path, bytes: &[u8]) -> Result<IntercomConfig, ConfigError> {
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(ConfigError {
            code: "config_oversize",
            message: format!("config.json is larger than {MAX_CONFIG_BYTES} bytes"),
        });
    }
    let raw: Value = serde_json::from_slice(bytes).map_err(|e| ConfigError {
        code: "config_not_json",
        message: format!(
            "config.json is not valid UTF-8 JSON (line {}, column {})",
            e.line(),
            e.column()
        ),
    })?;
    let top = raw
        .as_object()
        .ok_or_else(|| ConfigError::invalid("(top level)", "must be an object", Some(&raw)))?;

    match top.get("version") {
        Some(v) if v.as_u64() == Some(1) => {}
        Some(v) => return Err(ConfigError::invalid("version", "must be 1", Some(v))),
        None => return Err(ConfigError::invalid("version", "is missing", None)),
    }
    let multiplexer = match top.get("multiplexer") {
        None => None,
        Some(v) => Some(v.as_str().and_then(MuxChoice::parse).ok_or_else(|| {
            ConfigError::invalid(
                "multiplexer",
                "must be \"herdr\", \"none\" or \"tmux\"",
                Some(v),
            )
        })?),
    };
    let list = match top.get("agents") {
        Some(Value::Array(a)) => a,
        Some(v) => return Err(ConfigError::invalid("agents", "must be an array", Some(v))),
        None => return Err(ConfigError::invalid("agents", "is missing", None)),
    };
    if list.len() > MAX_AGENTS {
        return Err(ConfigError {
            code: "config_too_many_agents",
            message: format!(
                "config.json agents: {} entries, at most {MAX_AGENTS} are supported",
                list.len()
            ),
        });
    }

    let mut agents = Vec::with_capacity(list.len());
    let mut ids = HashSet::new();
    let mut names = HashSet::new();
    for (i, entry) in list.iter().enumerate() {
        let agent = parse_agent(i, entry)?;
        if !ids.insert(agent.session_id.clone()) {
            return Err(ConfigError::invalid(
                &format!("agents[{i}].sessionId"),
                "duplicates another agent's sessionId",
                entry.get("sessionId"),
            ));
        }
        if !names.insert(agent.name.to_lowercase()) {
            return Err(ConfigError::invalid(
                &format!("agents[{i}].name"),
                "duplicates another agent's name (names are compared case-insensitively)",
                entry.get("name"),
            ));
        }
        agents.push(agent);
    }
    let coordinators = agents.iter().filter(|a| a.coordinator).count();
    // An empty roster is valid (nothing configured yet); any roster needs exactly one coordinator.
    if !agents.is_empty() && coordinators != 1 {
        return Err(ConfigError::invalid(
            "agents",
            &format!("must have exactly one coordinator, found {coordinators}"),
            None,
        ));
    }

    let budget = match top.get("budget") {
        None => None,
        Some(v) => Some(budget_value("budget", v)?),
    };

    Ok(IntercomConfig {
        root: root.to_path_buf(),
        multiplexer,
        agents,
        budget,
        raw: std::sync::Arc::new(raw),
    })
}

fn parse_agent(i: usize, entry: &Value) -> Result<Agent, ConfigError> {
    let obj = entry.as_object().ok_or_else(|| {
        ConfigError::invalid(&format!("agents[{i}]"), "must be an object", Some(entry))
    })?;
    // Checked in this order so the first bad field named is always the same one.
    let (session_id, name, coordinator) = parse_who(i, obj)?;
    let (description, port, project_directory) = parse_where(i, obj, coordinator)?;
    let WorkerFields {
        role,
        handoff,
        close_job,
    } = parse_worker_fields(i, obj, coordinator)?;
    let budget = match obj.get("budget") {
        None => None,
        Some(v) if coordinator => {
            return Err(ConfigError::invalid(
                &format!("agents[{i}].budget"),
                "is for workers only",
                Some(v),
            ))
        }
        Some(v) => Some(budget_value(&format!("agents[{i}].budget"), v)?),
    };
    Ok(Agent {
        session_id,
        name,
        coordinator,
        description,
        port,
        project_directory,
        role,
        handoff,
        close_job,
        budget,
    })
}

/// A `budget` value (a worker's or the roster's), refused with the budget's own reason.
fn budget_value(at: &str, v: &Value) -> Result<crate::budget::spec::Budget, ConfigError> {
    crate::budget::spec::parse(v).map_err(|e| ConfigError::invalid(at, &e.to_string(), Some(v)))
}

/// `sessionId`, `name` and `coordinator` of `agents[i]`.
fn parse_who(i: usize, obj: &Map<String, Value>) -> Result<(String, String, bool), ConfigError> {
    let at = |field: &str| format!("agents[{i}].{field}");
    let session_id = req_str(obj, at, "sessionId")?;
    if session_id.trim().is_empty() || session_id.chars().count() > 256 || session_id.contains('\0')
    {
        return Err(ConfigError::invalid(
            &at("sessionId"),
            "must be non-blank, at most 256 characters, without NUL",
            obj.get("sessionId"),
        ));
    }

    let name = req_str(obj, at, "name")?;
    if name.trim().is_empty()
        || name.chars().count() > 128
        || name.trim() != name
        || name.chars().any(char::is_control)
    {
        return Err(ConfigError::invalid(
            &at("name"),
            "must be non-blank, at most 128 characters, without leading/trailing spaces or control characters",
            obj.get("name"),
        ));
    }
    if let Some((c, pos)) = crate::names::first_invisible(&name) {
        return Err(ConfigError::invalid(
            &at("name"),
            &format!(
                "holds a character that shows nothing (U+{:04X}) at character {pos}: names that differ only by such characters look the same, so they are refused",
                c as u32
            ),
            Some(&Value::String(crate::names::visible(&name))),
        ));
    }

    let coordinator = match obj.get("coordinator") {
        Some(Value::Bool(b)) => *b,
        Some(v) => {
            return Err(ConfigError::invalid(
                &at("coordinator"),
                "must be a boolean",
                Some(v),
            ))
        }
        None => return Err(ConfigError::invalid(&at("coordinator"), "is missing", None)),
    };
    if !coordinator && name.to_lowercase() == "coordinator" {
        return Err(ConfigError::invalid(
            &at("name"),
            "a worker may not be named coordinator (in any case)",
            obj.get("name"),
        ));
    }

    Ok((session_id, name, coordinator))
}

/// `description`, `port`, `projectDirectory` and the legacy `dashboardPort` of `agents[i]`.
fn parse_where(
    i: usize,
    obj: &Map<String, Value>,
    coordinator: bool,
) -> Result<(String, u16, String), ConfigError> {
    let at = |field: &str| format!("agents[{i}].{field}");
    let description = req_str(obj, at, "description")?;
    if description.trim().is_empty() || description.chars().count() > 4096 {
        return Err(ConfigError::invalid(
            &at("description"),
            "must be non-blank and at most 4096 characters",
            obj.get("description"),
        ));
    }

    let port = match obj.get("port") {
        Some(v) => port_value(v).ok_or_else(|| {
            ConfigError::invalid(&at("port"), "must be an integer 1..65535", Some(v))
        })?,
        None => return Err(ConfigError::invalid(&at("port"), "is missing", None)),
    };

    let project_directory = req_str(obj, at, "projectDirectory")?;
    if !valid_project_dir(&project_directory) {
        return Err(ConfigError::invalid(
            &at("projectDirectory"),
            "must be a root-relative path (\".\" for the root), never absolute, never containing ..",
            obj.get("projectDirectory"),
        ));
    }

    // Legacy, coordinator only: accepted (and never shown) when it is a port on the coordinator.
    if let Some(v) = obj.get("dashboardPort") {
        if !coordinator {
            return Err(ConfigError::invalid(
                &at("dashboardPort"),
                "is only accepted on the coordinator",
                Some(v),
            ));
        }
        if port_value(v).is_none() {
            return Err(ConfigError::invalid(
                &at("dashboardPort"),
                "must be an integer 1..65535",
                Some(v),
            ));
        }
    }

    Ok((description, port, project_directory))
}

/// The optional fields of an agent.
struct WorkerFields {
    role: Option<String>,
    handoff: Option<Handoff>,
    close_job: Option<CloseJob>,
}

/// The optional `role`, `handoff` and `closeJob` of `agents[i]` (the last two for workers only).
fn parse_worker_fields(
    i: usize,
    obj: &Map<String, Value>,
    coordinator: bool,
) -> Result<WorkerFields, ConfigError> {
    let at = |field: &str| format!("agents[{i}].{field}");
    let role = match obj.get("role") {
        None => None,
        Some(Value::String(s)) if valid_role(s) => Some(s.clone()),
        Some(v) => {
            return Err(ConfigError::invalid(
                &at("role"),
                "must match [A-Za-z0-9][A-Za-z0-9._-]{0,63}",
                Some(v),
            ))
        }
    };

    let handoff = match obj.get("handoff") {
        None => None,
        Some(v) if coordinator => {
            return Err(ConfigError::invalid(
                &at("handoff"),
                "is for workers only",
                Some(v),
            ))
        }
        Some(v) => Some(parse_handoff(&at("handoff"), v)?),
    };
    let close_job = match obj.get("closeJob") {
        None => None,
        Some(v) if coordinator => {
            return Err(ConfigError::invalid(
                &at("closeJob"),
                "is for workers only",
                Some(v),
            ))
        }
        Some(v) => Some(parse_close_job(&at("closeJob"), v)?),
    };

    Ok(WorkerFields {
        role,
        handoff,
        close_job,
    })
}

fn parse_handoff(path: &str, v: &Value) -> Result<Handoff, ConfigError> {
    let obj = exact_object(path, v, &["version", "jobId", "summary", "updatedAt"], &[])?;
    match obj.get("version") {
        Some(x) if x.as_u64() == Some(1) => {}
        x => {
            return Err(ConfigError::invalid(
                &format!("{path}.version"),
                "must be 1",
                x,
            ))
        }
    }
    let job_id = job_id(path, obj)?;
    let summary = req_str(obj, |k| format!("{path}.{k}"), "summary")?;
    if summary.trim().is_empty() || summary.chars().count() > 4000 {
        return Err(ConfigError::invalid(
            &format!("{path}.summary"),
            "must be non-blank and at most 4000 characters",
            obj.get("summary"),
        ));
    }
    let updated_at = time_field(path, obj, "updatedAt")?;
    Ok(Handoff {
        version: 1,
        job_id,
        summary,
        updated_at,
    })
}

fn parse_close_job(path: &str, v: &Value) -> Result<CloseJob, ConfigError> {
    let obj = exact_object(
        path,
        v,
        &["jobId", "state", "createdAt", "updatedAt", "deadlineAt"],
        &["reason"],
    )?;
    let job_id = job_id(path, obj)?;
    let state = match obj.get("state") {
        Some(Value::String(s)) => CloseState::parse(s),
        _ => None,
    }
    .ok_or_else(|| {
        ConfigError::invalid(
            &format!("{path}.state"),
            "is not a known close state",
            obj.get("state"),
        )
    })?;
    let reason = match obj.get("reason") {
        None => None,
        Some(x) => Some(x.as_str().and_then(CloseReason::parse).ok_or_else(|| {
            ConfigError::invalid(
                &format!("{path}.reason"),
                "is not a known close reason",
                Some(x),
            )
        })?),
    };
    Ok(CloseJob {
        job_id,
        state,
        created_at: time_field(path, obj, "createdAt")?,
        updated_at: time_field(path, obj, "updatedAt")?,
        deadline_at: time_field(path, obj, "deadlineAt")?,
        reason,
    })
}

/// `v` as an object with exactly the keys of `required` (+ any of `optional`).
fn exact_object<'a>(
    path: &str,
    v: &'a Value,
    required: &[&str],
    optional: &[&str],
) -> Result<&'a Map<String, Value>, ConfigError> {
    let obj = v
        .as_object()
        .ok_or_else(|| ConfigError::invalid(path, "must be an object", Some(v)))?;
    exact_keys(path, obj, required, optional)?;
    Ok(obj)
}

/// Refuse missing required keys and any key outside `required` + `optional`.
fn exact_keys(
    path: &str,
    obj: &Map<String, Value>,
    required: &[&str],
    optional: &[&str],
) -> Result<(), ConfigError> {
    for k in required {
        if !obj.contains_key(*k) {
            return Err(ConfigError::invalid(
                &format!("{path}.{k}"),
                "is missing",
                None,
            ));
        }
    }
    if let Some(extra) = obj
        .keys()
        .find(|k| !required.contains(&k.as_str()) && !optional.contains(&k.as_str()))
    {
        let shown = text::clip(&text::sanitize(extra), 60);
        return Err(ConfigError::invalid(
            path,
            &format!("has an unsupported key \"{shown}\""),
            None,
        ));
    }
    Ok(())
}

fn job_id(path: &str, obj: &Map<String, Value>) -> Result<String, ConfigError> {
    match obj.get("jobId") {
        Some(Value::String(s)) if valid_job_id(s) => Ok(s.clone()),
        x => Err(ConfigError::invalid(
            &format!("{path}.jobId"),
            "must match [A-Za-z0-9-]{1,128}",
            x,
        )),
    }
}

fn time_field(path: &str, obj: &Map<String, Value>, key: &str) -> Result<Ms, ConfigError> {
    obj.get(key)
        .and_then(Value::as_str)
        .and_then(parse_iso)
        .ok_or_else(|| {
            ConfigError::invalid(
                &format!("{path}.{key}"),
                "must be an ISO 8601 time",
                obj.get(key),
            )
        })
}

/// The string field `key`; `path` names it in an error (made only then: a roster of 255
/// agents is read on every `status`).
fn req_str(
    obj: &Map<String, Value>,
    path: impl Fn(&str) -> String,
    key: &str,
) -> Result<String, ConfigError> {
    match obj.get(key) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(v) => Err(ConfigError::invalid(
            &path(key),
            "must be a string",
            Some(v),
        )),
        None => Err(ConfigError::invalid(&path(key), "is missing", None)),
    }
}

fn port_value(v: &Value) -> Option<u16> {
    let n = v.as_u64()?;
    if (1..=65535).contains(&n) {
        u16::try_from(n).ok()
    } else {
        None
    }
}

fn valid_project_dir(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('/')
        && !s.contains('\0')
        && !s.chars().any(char::is_control)
        && s.split(['/', '\\']).all(|c| c != "..")
}

/// `[A-Za-z0-9-]{1,128}`.
pub(crate) fn valid_job_id(s: &str) -> bool {
    (1..=128).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

/// `[A-Za-z0-9][A-Za-z0-9._-]{0,63}`.
pub(super) fn valid_role(s: &str) -> bool {
    let b = s.as_bytes();
    (1..=64).contains(&b.len())
        && b[0].is_ascii_alphanumeric()
        && b[1..]
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-'))
}

#[cfg(test)]
#[path = "parse_tests.rs"]
mod tests;
