//! Guarded rewrites of the shared Intercom `config.json` (interop.md §1): one agent entry is
//! changed, every other key (known or not) is kept, the legacy `dashboardPort` is dropped, the
//! result must validate, and the file is re-read immediately before it is replaced so a change
//! made meanwhile by the Intercom coordinator is never overwritten. Pretty JSON, 2-space indent,
//! trailing newline, written through the store (temp + fsync + rename).

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use crate::actions::store;
use crate::evidence::config::{self, IntercomConfig, MAX_CONFIG_BYTES};
use crate::fsguard;

const LOCK_WAIT: Duration = Duration::from_secs(2);
const LOCK_POLL: Duration = Duration::from_millis(20);
/// How many times a rewrite is retried when the file changed between read and replace.
const ATTEMPTS: usize = 3;

fn read(root: &Path) -> Result<(Vec<u8>, IntercomConfig), String> {
    let path = config::config_path(root);
    fsguard::check_under(root, &path).map_err(|e| format!("{}: {}", path.display(), e.code()))?;
    let bytes = fsguard::read_capped(&path, MAX_CONFIG_BYTES)
        .map_err(|e| format!("{}: {}", path.display(), e.code()))?;
    let cfg = config::parse(root, &bytes).map_err(|e| e.to_string())?;
    Ok((bytes, cfg))
}

fn lock(root: &Path) -> Result<store::Lock, String> {
    let path = config::config_path(root).with_extension("json.lock");
    let until = Instant::now() + LOCK_WAIT;
    loop {
        match store::Lock::acquire(&path) {
            Ok(l) => return Ok(l),
            Err(e) if e.code == "locked" && Instant::now() < until => std::thread::sleep(LOCK_POLL),
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// An edit of one agent entry (its raw JSON object); an error stops the rewrite.
pub type AgentEdit<'a> = &'a dyn Fn(&mut Map<String, Value>) -> Result<(), String>;

/// Change the agent with `session_id` through `edit` (given the raw entry object). Returns the
/// config as written.
pub fn update_agent(
    root: &Path,
    session_id: &str,
    edit: AgentEdit,
) -> Result<IntercomConfig, String> {
    let _lock = lock(root)?;
    for _ in 0..ATTEMPTS {
        let (before, cfg) = read(root)?;
        let mut raw = cfg.raw.clone();
        let agents = raw
            .get_mut("agents")
            .and_then(Value::as_array_mut)
            .ok_or("config has no agents array")?;
        let mut found = false;
        for entry in agents.iter_mut() {
            let Some(obj) = entry.as_object_mut() else {
                continue;
            };
            // Retired with the browser dashboard: removed whenever intercom-pane rewrites.
            obj.remove("dashboardPort");
            if obj.get("sessionId").and_then(Value::as_str) == Some(session_id) {
                edit(obj)?;
                found = true;
            }
        }
        if !found {
            return Err(format!("no agent with session id {session_id:?} in config"));
        }
        let mut bytes = serde_json::to_vec_pretty(&raw).map_err(|e| e.to_string())?;
        bytes.push(b'\n');
        let written = config::parse(root, &bytes)
            .map_err(|e| format!("the change would make config invalid: {e}"))?;
        // Re-read right before replacing: someone else's write in between wins, and we redo ours.
        let (now, _) = read(root)?;
        if now != before {
            continue;
        }
        store::write_atomic(&config::config_path(root), &bytes).map_err(|e| e.to_string())?;
        return Ok(written);
    }
    Err("config.json kept changing while it was being updated; nothing written".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keeps_unknown_keys_drops_dashboard_port_and_refuses_invalid_changes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join(".pi-intercom")).unwrap();
        let original = json!({"version": 1, "future": {"kept": true}, "agents": [
            {"sessionId": "c", "name": "Coordinator", "coordinator": true, "description": "C.",
             "port": 1, "projectDirectory": ".", "dashboardPort": 41999},
            {"sessionId": "w", "name": "W", "coordinator": false, "description": "W.", "port": 2,
             "projectDirectory": ".", "extra": "kept"}]});
        std::fs::write(root.join(".pi-intercom/config.json"), original.to_string()).unwrap();
        update_agent(root, "w", &|o| {
            o.insert("port".into(), json!(3));
            Ok(())
        })
        .unwrap();
        let text = std::fs::read_to_string(root.join(".pi-intercom/config.json")).unwrap();
        assert!(text.ends_with("}\n"));
        assert!(text.contains("\n  \"agents\": ["), "2-space indent");
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["future"]["kept"], true);
        assert_eq!(v["agents"][1]["extra"], "kept");
        assert_eq!(v["agents"][1]["port"], 3);
        assert!(v["agents"][0].get("dashboardPort").is_none());
        // An edit that breaks validation writes nothing.
        let before = std::fs::read(root.join(".pi-intercom/config.json")).unwrap();
        let e = update_agent(root, "w", &|o| {
            o.insert("port".into(), json!(0));
            Ok(())
        })
        .unwrap_err();
        assert!(e.contains("invalid"), "{e}");
        assert_eq!(
            std::fs::read(root.join(".pi-intercom/config.json")).unwrap(),
            before
        );
        assert!(update_agent(root, "nobody", &|_| Ok(())).is_err());
        // No temp or lock file is left behind.
        let names: Vec<String> = std::fs::read_dir(root.join(".pi-intercom"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["config.json"]);
    }
}
