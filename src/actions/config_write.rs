//! Guarded rewrites of the shared Intercom `config.json` (docs/interop.md §1).
//!
//! One agent entry is changed by splicing: only the members the edit changes are rewritten in
//! place; every other byte of the file — other entries and keys, their formatting, numbers too
//! large for a float such as `123456789012345678901234567890` — stays exactly as it was. (A
//! parse-and-reprint would round such numbers; serde_json's `arbitrary_precision` would keep them
//! but change how every other reader in this crate sees numbers, and still reformat the file.)
//! New values are printed in the file's own layout (`config_write/style.rs`: comma-first or
//! comma-last, spaces or TABs, LF or CRLF, on several lines like their neighbours or compact).
//! The result must validate.
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

use crate::evidence::config::{self, IntercomConfig, MAX_CONFIG_BYTES};
use crate::fsguard;
use crate::store;

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
            Err(e) if e.code == store::code::StoreCode::Locked && Instant::now() < until => {
                std::thread::sleep(LOCK_POLL)
            }
            Err(e) => return Err(e),
        }
    }
}

/// An edit of one agent entry (its raw JSON object); an error `E` stops the rewrite.
pub(crate) type AgentEdit<'a, E> = &'a dyn Fn(&mut Map<String, Value>) -> Result<(), E>;

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
pub(crate) type MakeEntry<'a, E> = &'a dyn Fn(&IntercomConfig) -> Result<Map<String, Value>, E>;

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
pub(crate) fn update_agent<E>(
    root: &Path,
    session_id: &str,
    edit: AgentEdit<E>,
) -> Result<IntercomConfig, WriteError<E>> {
    rewrite(root, &|text, _cfg| {
        let (bytes, change) = edit_text(text, session_id, edit)?;
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
pub(crate) fn append_agent<E>(
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
pub(crate) type RemoveCheck<'a, E> = &'a dyn Fn(&IntercomConfig, &str) -> Result<(), E>;

/// Remove the agent with `session_id` from `agents` (its entry and one separator; every other
/// byte stays). `check` sees the roster as it is under the lock and the entry's exact text
/// there, and may refuse. Returns the config as written and confirmed, and the entry's text.
pub(crate) fn remove_agent<E>(
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
pub(crate) fn agent_text(text: &str, session_id: &str) -> Result<String, SpliceError> {
    let d = scan::document(text, session_id)?;
    Ok(text[d.target].to_string())
}

/// The exact text of one agent's entry in the roster on disk now.
pub(crate) fn read_agent_text(
    root: &Path,
    session_id: &str,
) -> Result<String, WriteError<NoRefusal>> {
    let (bytes, _) = read::<NoRefusal>(root)?;
    let text = std::str::from_utf8(&bytes)
        .map_err(|_| WriteError::Unreadable("config.json is not UTF-8".into()))?;
    agent_text(text, session_id).map_err(WriteError::Unspliceable)
}

/// `text` (a config's bytes) with the entry of `session_id` changed by `edit`, and what changed.
fn edit_text<E>(
    text: &str,
    session_id: &str,
    edit: AgentEdit<E>,
) -> Result<(Vec<u8>, Change), WriteError<E>> {
    let doc = scan::document(text, session_id).map_err(WriteError::Unspliceable)?;
    let entry: Map<String, Value> = serde_json::from_str(&text[doc.target.clone()])
        .map_err(|e| WriteError::Unspliceable(SpliceError::Encode(e)))?;
    let mut edited = entry.clone();
    edit(&mut edited).map_err(WriteError::Refused)?;
    let change = Change::between(&entry, &edited);
    let bytes = splice::apply(text, &doc, &change).map_err(WriteError::Unspliceable)?;
    Ok((bytes, change))
}

/// The splice alone, on text (no file, no lock, no validation): `text` with the agent entry of
/// `session_id` changed by `edit`. What `update_agent` writes; the fuzz target checks it against
/// serde_json.
pub fn splice_agent<E>(
    text: &str,
    session_id: &str,
    edit: AgentEdit<E>,
) -> Result<Vec<u8>, WriteError<E>> {
    edit_text(text, session_id, edit).map(|(bytes, _)| bytes)
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
mod style;
pub(crate) use scan::SpliceError;

#[cfg(test)]
mod tests;
