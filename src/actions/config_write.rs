//! Guarded rewrites of the shared Intercom `config.json` (docs/interop.md §1).
//!
//! One agent entry is changed by splicing: only the members the edit changes (and the legacy
//! `dashboardPort`, dropped from every entry) are rewritten in place; every other byte of the file
//! — other keys, their formatting, numbers too large for a float such as
//! `123456789012345678901234567890` — stays exactly as it was. (A parse-and-reprint would round
//! such numbers; serde_json's `arbitrary_precision` would keep them but change how every other
//! reader in this crate sees numbers, and still reformat the file.) New values are printed in the
//! file's own style (indented like their neighbours, or compact). The result must validate.
//!
//! No silent lost write: the replacement is swapped in atomically only if the file still holds
//! the bytes we read (`renameat2` exchange, swapped back at once otherwise: a change made meanwhile by
//! a writer without a lock, like the Intercom extension, is never overwritten, and ours is redone
//! on top of it), it keeps the file's mode and owner, and afterwards the file is read back (after a short pause, so a writer without a lock that read the
//! old file has landed its write) and our members must be there; a lost change is redone. Tries
//! go on until `REWRITE_FOR` has passed (at most `MAX_ATTEMPTS`), with a short random pause
//! after each lost race, else the caller hears that nothing could be confirmed. A deadline, not a
//! count: on a loaded machine every try takes longer and races more often, and a writer that
//! pauses between its rewrites must not make a run fail for that; one that never pauses still
//! ends the loop in bounded time.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use crate::actions::store;
use crate::evidence::config::{self, IntercomConfig, MAX_CONFIG_BYTES};
use crate::fsguard;

/// Longer than a slow fsync or a person's editor save; a writer holding it longer is stuck.
const LOCK_WAIT: Duration = Duration::from_secs(5);
const LOCK_POLL: Duration = Duration::from_millis(20);
/// How long a rewrite keeps trying when the file changed under it or our change was lost. Well
/// below `LOCK_WAIT`, so another of our writers waiting for the lock outlasts it.
const REWRITE_FOR: Duration = Duration::from_secs(3);
/// Backstop on the tries inside `REWRITE_FOR` (a try without a pause takes well over 30 µs).
const MAX_ATTEMPTS: usize = 100_000;
/// Longest pause after a lost race; the pause is random below a bound that doubles from 1 ms, so
/// tries do not fall into step with a writer that rewrites at a fixed rate, and a busy machine
/// is not kept busier.
const MAX_BACKOFF_MS: u64 = 16;
/// Pause before the read-back that confirms a write.
const CONFIRM_AFTER: Duration = Duration::from_millis(40);
/// Nesting depth the splice scanner follows (the validated config is far shallower).
const MAX_DEPTH: usize = 256;

/// Why a rewrite did not happen, or could not be confirmed on disk.
#[derive(Debug)]
pub enum WriteError<E> {
    /// The edit itself refused (its own reason); nothing written.
    Refused(E),
    /// config.json could not be read or used (`path: code`, or the config's own error).
    Unreadable(String),
    /// The config lock could not be taken.
    Lock(store::StoreError),
    /// The file is not one this splicer can edit (not UTF-8, the agent not found, …).
    Unspliceable(SpliceError),
    /// The edit would leave an invalid config; nothing written.
    WouldBeInvalid(config::ConfigError),
    /// Writing the replacement failed.
    Store(store::StoreError),
    /// Another writer kept replacing config.json: our change was lost and is not recorded.
    Lost,
    /// config.json kept changing while it was being updated: nothing written.
    KeptChanging,
}

impl<E: std::fmt::Display> std::fmt::Display for WriteError<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WriteError::Refused(e) => e.fmt(f),
            WriteError::Unreadable(m) => f.write_str(&crate::text::sanitize(m)),
            WriteError::Unspliceable(e) => e.fmt(f),
            WriteError::Lock(e) | WriteError::Store(e) => e.fmt(f),
            WriteError::WouldBeInvalid(e) => {
                write!(f, "the change would make config invalid: {e}")
            }
            WriteError::Lost => f.write_str(
                "another writer kept replacing config.json and our change was lost; not recorded",
            ),
            WriteError::KeptChanging => {
                f.write_str("config.json kept changing while it was being updated; nothing written")
            }
        }
    }
}

impl<E: std::fmt::Debug + std::fmt::Display> std::error::Error for WriteError<E> {}

fn read<E>(root: &Path) -> Result<(Vec<u8>, IntercomConfig), WriteError<E>> {
    let path = config::config_path(root);
    let unreadable =
        |e: fsguard::FsError| WriteError::Unreadable(format!("{}: {}", path.display(), e.code()));
    fsguard::check_under(root, &path).map_err(unreadable)?;
    let bytes = fsguard::read_capped(&path, MAX_CONFIG_BYTES).map_err(unreadable)?;
    let cfg = config::parse(root, &bytes).map_err(|e| WriteError::Unreadable(e.to_string()))?;
    Ok((bytes, cfg))
}

fn lock(root: &Path) -> Result<store::Lock, store::StoreError> {
    let path = config::config_path(root).with_extension("json.lock");
    let until = Instant::now() + LOCK_WAIT;
    loop {
        match store::Lock::acquire(&path) {
            Ok(l) => return Ok(l),
            Err(e) if e.code == "locked" && Instant::now() < until => std::thread::sleep(LOCK_POLL),
            Err(e) => return Err(e),
        }
    }
}

/// An edit of one agent entry (its raw JSON object); an error `E` stops the rewrite.
pub type AgentEdit<'a, E> = &'a dyn Fn(&mut Map<String, Value>) -> Result<(), E>;

/// An edit that never refuses.
pub type NoRefusal = std::convert::Infallible;

/// What one edit does to the entry: members set to new values, members removed.
struct Change {
    set: Vec<(String, Value)>,
    removed: Vec<String>,
}

impl Change {
    fn between(before: &Map<String, Value>, after: &Map<String, Value>) -> Change {
        let set = after
            .iter()
            .filter(|(k, v)| before.get(*k) != Some(v))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let removed = before
            .keys()
            .filter(|k| !after.contains_key(*k))
            .cloned()
            .collect();
        Change { set, removed }
    }

    /// True when `entry` shows this change.
    fn shown_by(&self, entry: &Map<String, Value>) -> bool {
        self.set.iter().all(|(k, v)| entry.get(k) == Some(v))
            && self.removed.iter().all(|k| !entry.contains_key(k))
    }
}

/// Whether a text read back shows the change.
type Confirm<'a> = Box<dyn Fn(&str) -> Result<bool, SpliceError> + 'a>;
/// One try's plan, from the text read and its config (`None`: nothing to change).
type Plan<'p, 'a, E> =
    &'p dyn Fn(&str, &IntercomConfig) -> Result<Option<Planned<'a>>, WriteError<E>>;
/// Builds a new agent entry from the roster as it is under the lock, or refuses.
pub type MakeEntry<'a, E> = &'a dyn Fn(&IntercomConfig) -> Result<Map<String, Value>, E>;

/// One try's new text and how to tell it landed: `confirm` says whether a text read back shows
/// the change.
struct Planned<'a> {
    bytes: Vec<u8>,
    confirm: Confirm<'a>,
}

/// The rewrite loop every change shares (see the module notes): under the lock, read, `plan`
/// the new text from the text read and its config (`None`: nothing to change), validate, swap in
/// only if the file is still what was read, read back, redo a lost change.
fn rewrite<'a, E>(root: &Path, plan: Plan<'_, 'a, E>) -> Result<IntercomConfig, WriteError<E>> {
    let _lock = lock(root).map_err(WriteError::Lock)?;
    let path = config::config_path(root);
    let mut lost = false;
    let until = Instant::now() + REWRITE_FOR;
    for attempt in 0..MAX_ATTEMPTS {
        if attempt > 0 && Instant::now() >= until {
            break;
        }
        let (before, cfg) = read(root)?;
        let text = utf8(&before)?;
        let Some(planned) = plan(text, &cfg)? else {
            return Ok(cfg);
        };
        let bytes = planned.bytes;
        if bytes == before {
            return Ok(cfg);
        }
        let written = config::parse(root, &bytes).map_err(WriteError::WouldBeInvalid)?;
        let prepared =
            store::replace_keeping_mode(&path, &bytes, attempt == 0).map_err(WriteError::Store)?;
        // Replaced only if it is still the file we read: a write in between wins (it is swapped
        // back at once, never lost) and ours is redone on top of it.
        // (After a lost race the flush follows the swap: see `replace_keeping_mode`.)
        if !prepared
            .commit_if_current(&before)
            .map_err(WriteError::Store)?
        {
            backoff(attempt);
            continue;
        }
        std::thread::sleep(CONFIRM_AFTER);
        let (after, _) = read(root)?;
        if (planned.confirm)(utf8(&after)?).map_err(WriteError::Unspliceable)? {
            return Ok(written);
        }
        lost = true; // another writer replaced the file with one made before ours: redo
    }
    Err(if lost {
        WriteError::Lost
    } else {
        WriteError::KeptChanging
    })
}

/// The raw entry of the agent with `session_id` in `text`.
fn entry_of(text: &str, session_id: &str) -> Result<Map<String, Value>, SpliceError> {
    let d = scan::document(text, session_id)?;
    serde_json::from_str(&text[d.target]).map_err(SpliceError::Encode)
}

/// Change the agent with `session_id` through `edit` (given the raw entry object). Returns the
/// config as written and confirmed on disk.
pub fn update_agent<E>(
    root: &Path,
    session_id: &str,
    edit: AgentEdit<E>,
) -> Result<IntercomConfig, WriteError<E>> {
    rewrite(root, &|text, _cfg| {
        let doc = scan::document(text, session_id).map_err(WriteError::Unspliceable)?;
        let entry: Map<String, Value> = serde_json::from_str(&text[doc.target.clone()])
            .map_err(|e| WriteError::Unspliceable(SpliceError::Encode(e)))?;
        let mut edited = entry.clone();
        edited.remove("dashboardPort");
        edit(&mut edited).map_err(WriteError::Refused)?;
        let change = Change::between(&entry, &edited);
        let bytes = splice::apply(text, &doc, &change).map_err(WriteError::Unspliceable)?;
        Ok(Some(Planned {
            bytes,
            confirm: Box::new(move |t| Ok(change.shown_by(&entry_of(t, session_id)?))),
        }))
    })
}

/// Add one agent entry at the end of `agents`, printed in the style of the entries there (see
/// `agents::append`). `make` builds the entry from the roster as it is under the lock, or
/// refuses (a name taken meanwhile, a full roster): nothing is written then. Returns the config
/// as written and confirmed on disk, and the entry added.
pub fn append_agent<E>(
    root: &Path,
    make: MakeEntry<E>,
) -> Result<(IntercomConfig, Map<String, Value>), WriteError<E>> {
    let added = std::cell::RefCell::new(Map::new());
    let cfg = rewrite(root, &|text, cfg| {
        let entry = make(cfg).map_err(WriteError::Refused)?;
        let id = entry
            .get("sessionId")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let bytes = agents::append(text, &entry).map_err(WriteError::Unspliceable)?;
        let want = entry.clone();
        *added.borrow_mut() = entry;
        Ok(Some(Planned {
            bytes: bytes.into_bytes(),
            confirm: Box::new(move |t| match entry_of(t, &id) {
                Ok(on_disk) => Ok(on_disk == want),
                Err(SpliceError::NoAgent(_)) => Ok(false),
                Err(e) => Err(e),
            }),
        }))
    })?;
    Ok((cfg, added.into_inner()))
}

/// Sees the roster under the lock and the removed entry's exact text; may refuse.
pub type RemoveCheck<'a, E> = &'a dyn Fn(&IntercomConfig, &str) -> Result<(), E>;

/// Remove the agent with `session_id` from `agents` (its entry and one separator; every other
/// byte stays). `check` sees the roster as it is under the lock and the entry's exact text
/// there, and may refuse. Returns the config as written and confirmed, and the entry's text.
pub fn remove_agent<E>(
    root: &Path,
    session_id: &str,
    check: RemoveCheck<E>,
) -> Result<(IntercomConfig, String), WriteError<E>> {
    let removed = std::cell::RefCell::new(String::new());
    let cfg = rewrite(root, &|text, cfg| {
        let entry = agent_text(text, session_id).map_err(WriteError::Unspliceable)?;
        check(cfg, &entry).map_err(WriteError::Refused)?;
        let bytes = agents::remove(text, session_id).map_err(WriteError::Unspliceable)?;
        *removed.borrow_mut() = entry;
        Ok(Some(Planned {
            bytes: bytes.into_bytes(),
            confirm: Box::new(move |t| match scan::document(t, session_id) {
                Err(SpliceError::NoAgent(_)) => Ok(true),
                Ok(_) => Ok(false),
                Err(e) => Err(e),
            }),
        }))
    })?;
    Ok((cfg, removed.into_inner()))
}

/// The exact text of the entry of the agent with `session_id` in config text `text` (every
/// byte, numbers as written).
pub fn agent_text(text: &str, session_id: &str) -> Result<String, SpliceError> {
    let d = scan::document(text, session_id)?;
    Ok(text[d.target].to_string())
}

/// The exact text of one agent's entry in the roster on disk now.
pub fn read_agent_text(root: &Path, session_id: &str) -> Result<String, String> {
    let (bytes, _) = read::<NoRefusal>(root).map_err(|e| e.to_string())?;
    let text = std::str::from_utf8(&bytes).map_err(|_| "config.json is not UTF-8".to_string())?;
    agent_text(text, session_id).map_err(|e| e.to_string())
}

/// The pause after the `attempt`th try lost a race: random below min(2^attempt, 16) ms.
fn backoff(attempt: usize) {
    let bound_ms = (1u64 << attempt.min(4)).min(MAX_BACKOFF_MS);
    let us = uuid::Uuid::new_v4().as_u64_pair().0 % (bound_ms * 1000);
    std::thread::sleep(Duration::from_micros(us));
}

fn utf8<E>(bytes: &[u8]) -> Result<&str, WriteError<E>> {
    std::str::from_utf8(bytes).map_err(|_| WriteError::Unspliceable(SpliceError::NotUtf8))
}

mod agents;
mod scan;
mod splice;
pub use scan::SpliceError;

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
        update_agent::<NoRefusal>(root, "w", &|o| {
            o.insert("port".into(), json!(3));
            Ok(())
        })
        .unwrap();
        let text = std::fs::read_to_string(root.join(".pi-intercom/config.json")).unwrap();
        // A compact file stays compact: only the changed members are printed anew.
        assert!(
            text.starts_with("{\"version\":1,\"future\":{\"kept\":true},"),
            "{text}"
        );
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["future"]["kept"], true);
        assert_eq!(v["agents"][1]["extra"], "kept");
        assert_eq!(v["agents"][1]["port"], 3);
        assert!(v["agents"][0].get("dashboardPort").is_none());
        // An edit that breaks validation writes nothing.
        let before = std::fs::read(root.join(".pi-intercom/config.json")).unwrap();
        let e = update_agent::<NoRefusal>(root, "w", &|o| {
            o.insert("port".into(), json!(0));
            Ok(())
        })
        .unwrap_err();
        assert!(e.to_string().contains("invalid"), "{e}");
        assert_eq!(
            std::fs::read(root.join(".pi-intercom/config.json")).unwrap(),
            before
        );
        assert!(update_agent::<NoRefusal>(root, "nobody", &|_| Ok(())).is_err());
        // No temp or lock file is left behind.
        let names: Vec<String> = std::fs::read_dir(root.join(".pi-intercom"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert!(names.contains(&"config.json".to_string()), "{names:?}");
        assert!(
            names
                .iter()
                .all(|n| n == "config.json" || n == ".gitignore"),
            "{names:?}"
        );
    }

    /// Pretty text as Intercom writes it, with a huge integer and odd spacing in keys we do not
    /// own: only our members change; mode 0644 stays 0644.
    #[test]
    fn splices_only_the_owned_members_and_keeps_mode_and_huge_numbers() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join(".pi-intercom")).unwrap();
        let text = r#"{
  "version": 1,
  "big": 123456789012345678901234567890,
  "agents": [
    {
      "sessionId": "c",
      "name": "Coordinator",
      "coordinator": true,
      "description": "C.",
      "port": 1,
      "projectDirectory": "."
    },
    {
      "sessionId": "w",
      "name": "W",
      "coordinator": false,
      "description": "W.",
      "port": 2,
      "projectDirectory": ".",
      "extra": {"n":   1.50e3, "huge": 98765432109876543210987654321}
    }
  ]
}
"#;
        let p = root.join(".pi-intercom/config.json");
        std::fs::write(&p, text).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        update_agent::<NoRefusal>(root, "w", &|o| {
            o.insert(
                "closeJob".into(),
                json!({"jobId": "j", "state": "requested",
                "createdAt": "2026-11-30T00:00:00.000Z", "updatedAt": "2026-11-30T00:00:00.000Z",
                "deadlineAt": "2026-11-30T00:00:00.000Z"}),
            );
            Ok(())
        })
        .unwrap();
        let after = std::fs::read_to_string(&p).unwrap();
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o644);
        assert!(after.contains("\"big\": 123456789012345678901234567890,"));
        assert!(after.contains(
            "\"extra\": {\"n\":   1.50e3, \"huge\": 98765432109876543210987654321},\n      \"closeJob\": {\n        \"jobId\": \"j\","
        ), "{after}");
        // Everything before the edited member is byte-identical.
        let cut = text.find("\n    }\n  ]").unwrap();
        assert_eq!(&after[..cut], &text[..cut]);
        // Changing it again replaces only that member; removing it restores the original.
        update_agent::<NoRefusal>(root, "w", &|o| {
            o.remove("closeJob");
            Ok(())
        })
        .unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), text);
    }

    /// Every layout a person or another tool may leave: the edited entry ends up exactly as the
    /// edit says, every other entry and key as they were.
    #[test]
    fn splices_correctly_in_any_layout_and_position() {
        let base = json!({"version": 1, "agents": [
            {"sessionId": "c", "name": "Coordinator", "coordinator": true, "description": "C.",
             "port": 1, "projectDirectory": ".", "dashboardPort": 9},
            {"extra": 1, "sessionId": "w", "name": "W", "coordinator": false, "description": "W.",
             "port": 2, "projectDirectory": ".", "last": [1, {"a": "}"}]}]});
        let layouts = [
            serde_json::to_string(&base).unwrap(),
            serde_json::to_string_pretty(&base).unwrap(),
            serde_json::to_string_pretty(&base)
                .unwrap()
                .replace("  ", "\t"),
            serde_json::to_string_pretty(&base)
                .unwrap()
                .replace('\n', "\r\n"),
            serde_json::to_string(&base)
                .unwrap()
                .replace(',', " ,  ")
                .replace(':', " : "),
        ];
        let edits: [(&str, AgentEdit<NoRefusal>); 4] = [
            ("drop first", &|o| {
                o.remove("extra");
                Ok(())
            }),
            ("drop last, add two", &|o| {
                o.remove("last");
                o.insert("closeJob".into(), json!({"jobId": "j", "state": "failed",
                    "createdAt": "2026-11-30T00:00:00.000Z", "updatedAt": "2026-11-30T00:00:00.000Z",
                    "deadlineAt": "2026-11-30T00:00:00.000Z", "reason": "timeout"}));
                o.insert("note".into(), json!("x"));
                Ok(())
            }),
            ("change middle", &|o| {
                o.insert("port".into(), json!(41002));
                Ok(())
            }),
            ("drop all but required", &|o| {
                o.remove("extra");
                o.remove("last");
                Ok(())
            }),
        ];
        for text in &layouts {
            for (what, edit) in &edits {
                let dir = tempfile::tempdir().unwrap();
                let root = dir.path();
                std::fs::create_dir_all(root.join(".pi-intercom")).unwrap();
                std::fs::write(root.join(".pi-intercom/config.json"), text).unwrap();
                update_agent(root, "w", edit).unwrap();
                let out = std::fs::read_to_string(root.join(".pi-intercom/config.json")).unwrap();
                let got: Value =
                    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{what}: {e}\n{out}"));
                let mut want = base.clone();
                want["agents"][0]
                    .as_object_mut()
                    .unwrap()
                    .remove("dashboardPort");
                edit(want["agents"][1].as_object_mut().unwrap()).unwrap();
                assert_eq!(got, want, "{what} in {text}");
            }
        }
    }

    /// A whole entry added and removed again: the mode, every unknown key and a number too
    /// large for a float stay byte for byte; a refusal under the lock writes nothing.
    #[test]
    fn an_entry_is_added_and_removed_keeping_mode_unknown_keys_and_numbers() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join(".pi-intercom")).unwrap();
        let text = "{\n  \"version\": 1,\n  \"big\": 123456789012345678901234567890,\n  \"agents\": [\n    {\n      \"sessionId\": \"c\",\n      \"name\": \"Coordinator\",\n      \"coordinator\": true,\n      \"description\": \"C.\",\n      \"port\": 1,\n      \"projectDirectory\": \".\",\n      \"x\": 1.50e3\n    }\n  ]\n}\n";
        let p = root.join(".pi-intercom/config.json");
        std::fs::write(&p, text).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        let entry = json!({"sessionId": "w", "name": "W", "coordinator": false,
            "description": "W.", "port": 2, "projectDirectory": "."});
        let e = append_agent::<String>(root, &|cfg| {
            if cfg.find_by_name("w").is_some() {
                return Err("taken".into());
            }
            Ok(entry.as_object().unwrap().clone())
        });
        let (cfg, _) = e.unwrap();
        assert_eq!(cfg.agents.len(), 2);
        let after = std::fs::read_to_string(&p).unwrap();
        assert!(
            after.starts_with(&text[..text.find("\n    }").unwrap()]),
            "{after}"
        );
        assert!(after.contains("\"big\": 123456789012345678901234567890,"));
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o644);
        // The same name again is refused under the lock: nothing written.
        let refused = append_agent::<String>(root, &|cfg| {
            if cfg.find_by_name("w").is_some() {
                return Err("taken".into());
            }
            Ok(entry.as_object().unwrap().clone())
        });
        assert!(matches!(refused, Err(WriteError::Refused(ref m)) if m == "taken"));
        assert_eq!(std::fs::read_to_string(&p).unwrap(), after);
        // Removed again: the original bytes; its exact text is handed back.
        let (_, gone) = remove_agent::<String>(root, "w", &|_, _| Ok(())).unwrap();
        assert!(gone.starts_with("{\n      \"sessionId\": \"w\""), "{gone}");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), text);
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o644);
    }
}
