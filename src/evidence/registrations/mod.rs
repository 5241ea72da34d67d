//! Seat registrations: what each pi recorded about itself from the inside (docs/behaviour.md §5b).
//!
//! Locations: `<root>/.pi-intercom/seats/*.json` and `<dataRoot>/seats/<layout>/<seat>/registration.json`.
//! A registration is matched to a row by its session id or sessions folder, never by name alone,
//! and it is only trusted while its pid identity is alive (checked by the scan every pass).

use std::path::{Path, PathBuf};

use crate::clock::Ms;
use crate::fsguard::{self, Kind};

mod pi_events;
mod record;
mod run_state;

pub(crate) use pi_events::{
    BudgetHold, CompactPhase, CompactReason, ContextFill, PiReport, RetryPhase,
};
pub use pi_events::{Event, PiState};
pub use record::parse_record;
pub(crate) use record::{MuxRecord, Registration, RunRecord};
pub use run_state::RunEvent;
pub(crate) use run_state::RunState;

pub(crate) const MAX_REGISTRATION_BYTES: u64 = 64 * 1024;
const MAX_LAYOUTS: usize = 64;
const MAX_SEATS: usize = 512;

/// Two paths name the same place: equal, or equal once links are resolved (a folder reached
/// through a link, as a person's `cd` may have been).
pub(crate) fn same_path(a: &Path, b: &Path) -> bool {
    a == b
        || match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
            (Ok(x), Ok(y)) => x == y,
            _ => false,
        }
}

/// All registrations found, plus content-free errors for the ones refused.
#[derive(Debug, Default)]
pub(crate) struct RegistrationSet {
    pub items: Vec<Registration>,
    /// `<path>: <code>` (the path is ours to show; the content is not).
    pub errors: Vec<String>,
    pub truncated: bool,
    /// The roster's own seats folder (`<root>/.pi-intercom/seats`), when a root was read.
    pub own_dir: Option<PathBuf>,
}

impl RegistrationSet {
    /// THE record of a session, the one rule every reader uses (docs/behaviour.md §1, §5b):
    /// a record in the roster's own seats folder, when there is one, is the only candidate
    /// (an outside record — the data root, another layout — never overrides it, live or not);
    /// among the candidates a live one beats a fresher dead one; then the newest process start,
    /// then the newest run state.
    pub(crate) fn by_session_id(&self, id: &str) -> Option<&Registration> {
        self.best(|r| r.session_id.as_deref() == Some(id))
    }

    /// The record whose sessions folder is `dir` or one of its per-cwd subfolders (pi reports
    /// the subfolder it writes into), by the same rule.
    pub(crate) fn by_sessions_dir(&self, dir: &Path) -> Option<&Registration> {
        self.best(|r| {
            r.sessions_dir
                .as_deref()
                .is_some_and(|d| in_sessions_dir(Path::new(d), dir))
        })
    }

    /// The record of a seat (`by_session_id`), unless it comes from outside the roster's own
    /// seats folder and names another session file or folder than the board found for the seat
    /// (`Registration::matches_seat`): that is another pi's record of the same session id, and
    /// the seat has none.
    pub(crate) fn of_seat(
        &self,
        id: &str,
        board_file: Option<&Path>,
        folder: Option<&Path>,
    ) -> Option<&Registration> {
        self.by_session_id(id)
            .filter(|r| self.is_own(r) || r.matches_seat(board_file, folder).is_ok())
    }

    /// Is this record in the roster's own seats folder?
    pub(crate) fn is_own(&self, r: &Registration) -> bool {
        self.own_dir
            .as_deref()
            .is_some_and(|d| r.path.parent() == Some(d))
    }

    fn best(&self, want: impl Fn(&Registration) -> bool) -> Option<&Registration> {
        let all: Vec<&Registration> = self.items.iter().filter(|r| want(r)).collect();
        let own = all.iter().any(|r| self.is_own(r));
        let candidates: Vec<&Registration> =
            all.into_iter().filter(|r| !own || self.is_own(r)).collect();
        // One candidate (the common case) needs no look at `/proc`.
        if let [only] = candidates.as_slice() {
            return Some(only);
        }
        candidates
            .into_iter()
            .map(|r| (r.alive() == Some(true), freshness(r), r))
            .max_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)))
            .map(|(_, _, r)| r)
    }
}

/// Is `p` the folder `dir` or one of its per-cwd subfolders?
pub(crate) fn in_sessions_dir(p: &Path, dir: &Path) -> bool {
    p == dir || p.parent() == Some(dir)
}

fn freshness(r: &Registration) -> (Ms, Ms) {
    (
        r.started_at.unwrap_or(Ms::MIN),
        r.run_state.as_ref().map(|s| s.at).unwrap_or(Ms::MIN),
    )
}

/// The record file of `session_id` in a root's seats folder.
pub(crate) fn root_record(root: &Path, session_id: &str) -> PathBuf {
    crate::paths::seat_record(root, session_id)
}

/// The record file of `session_id` that `register` writes under the data root.
pub(crate) fn data_record(data_root: &Path, session_id: &str) -> PathBuf {
    data_root
        .join("seats")
        .join("pi")
        .join(crate::paths::short_id(session_id))
        .join("registration.json")
}

/// Read every registration under the Intercom root (if any) and the data root. Folders and
/// files that are not this user's, or that others may write, are refused (`fsguard::trusted`),
/// each with an error naming the path.
pub(crate) fn read_all(intercom_root: Option<&Path>, data_root: &Path) -> RegistrationSet {
    let mut set = match intercom_root {
        Some(root) => read_roster(root),
        None => RegistrationSet::default(),
    };
    let seats = data_root.join("seats");
    if !trusted_dir(&seats, &mut set) {
        return set;
    }
    if let Ok(layouts) = fsguard::list_dir(&seats, MAX_LAYOUTS) {
        set.truncated |= layouts.truncated;
        for layout in layouts.entries.iter().filter(|e| e.kind == Kind::Dir) {
            let ldir = seats.join(&layout.name);
            if !trusted_dir(&ldir, &mut set) {
                continue;
            }
            let Ok(seat_dirs) = fsguard::list_dir(&ldir, MAX_SEATS) else {
                continue;
            };
            set.truncated |= seat_dirs.truncated;
            for seat in seat_dirs.entries.iter().filter(|e| e.kind == Kind::Dir) {
                if set.items.len() + set.errors.len() >= MAX_SEATS {
                    set.truncated = true;
                    return set;
                }
                let sdir = ldir.join(&seat.name);
                if !trusted_dir(&sdir, &mut set) {
                    continue;
                }
                let p = sdir.join("registration.json");
                match fsguard::kind(&p) {
                    Err(fsguard::FsError::NotFound) => {}
                    _ => read_one(&p, &mut set),
                }
            }
        }
    }
    set
}

/// The records in one roster's own seats folder (`<root>/.pi-intercom/seats/*.json`) only: a
/// board's own roster, or another roster on this machine whose pi runs in a listed pane.
pub(crate) fn read_roster(root: &Path) -> RegistrationSet {
    let mut set = RegistrationSet::default();
    let dir = crate::paths::seats_dir(root);
    set.own_dir = Some(dir.clone());
    if fsguard::check_under(root, &dir).is_ok() && trusted_dir(&dir, &mut set) {
        read_flat(&dir, &mut set);
    }
    set
}

/// Every record of `session_id` that `register` or a reader could take for it: the seats
/// folder of each root in `roots`, and every layout under the data root. Used by `register`
/// to refuse a second live registration of a session (docs/behaviour.md §5b).
pub(crate) fn records_of_session(
    roots: &[PathBuf],
    data_root: &Path,
    session_id: &str,
) -> Vec<Registration> {
    let mut set = read_all(None, data_root);
    for root in roots {
        let p = root_record(root, session_id);
        if fsguard::check_under(root, &p).is_ok() {
            read_one(&p, &mut set);
        }
    }
    set.items
        .into_iter()
        .filter(|r| r.session_id.as_deref() == Some(session_id))
        .collect()
}

/// A state folder we read from: absent is fine (nothing to read), anything else must pass
/// `fsguard::trusted`; a refusal is recorded as an error.
fn trusted_dir(dir: &Path, set: &mut RegistrationSet) -> bool {
    match fsguard::trusted_dir(dir) {
        Ok(()) => true,
        Err(fsguard::FsError::NotFound) => false,
        Err(e) => {
            set.errors
                .push(format!("{}: registration_{}", dir.display(), e.code()));
            false
        }
    }
}

fn read_flat(dir: &Path, set: &mut RegistrationSet) {
    let Ok(list) = fsguard::list_dir(dir, MAX_SEATS) else {
        return;
    };
    set.truncated |= list.truncated;
    for e in &list.entries {
        let Some(name) = e.name_str() else { continue };
        if name.ends_with(".json") {
            read_one(&dir.join(name), set);
        }
    }
}

fn read_one(path: &Path, set: &mut RegistrationSet) {
    let f = match fsguard::open_trusted(path, Some(MAX_REGISTRATION_BYTES)) {
        Ok(f) => f,
        Err(e) => {
            set.errors
                .push(format!("{}: registration_{}", path.display(), e.code()));
            return;
        }
    };
    let bytes = match fsguard::read_at(&f.file, 0, f.len as usize) {
        Ok(b) => b,
        Err(e) => {
            set.errors
                .push(format!("{}: registration_{}", path.display(), e.code()));
            return;
        }
    };
    match parse(path, &bytes) {
        Some(r) => set.items.push(r),
        None => set
            .errors
            .push(format!("{}: registration_invalid", path.display())),
    }
}

/// Parse one registration (`record::parse_record`); `None` when it is invalid.
pub fn parse(path: &Path, bytes: &[u8]) -> Option<Registration> {
    parse_record(path, bytes).ok()
}

/// Read one registration file again (the reply path re-reads the seat's record right before
/// sending); `None` when it is gone, unreadable or invalid.
pub(crate) fn read_path(path: &Path) -> Option<Registration> {
    let bytes = fsguard::read_trusted(path, MAX_REGISTRATION_BYTES).ok()?;
    parse(path, &bytes)
}

/// The parts of a pi report the board's unit tests build reports from.
#[cfg(test)]
pub(crate) use pi_events::{Compaction, Dialog, DialogKind, Retry, Settled};

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(path: &str, pid: i32, started: &str) -> Registration {
        let me = crate::proc::identity(pid);
        let v = serde_json::json!({"version": 1, "sessionId": "s", "pid": pid,
            "startTicks": me.as_ref().map(|i| i.start_ticks), "bootId": me.map(|i| i.boot_id),
            "startedAt": started});
        parse(Path::new(path), v.to_string().as_bytes()).unwrap()
    }

    #[test]
    fn one_record_per_session_own_first_then_live_then_newest() {
        let me = std::process::id() as i32;
        // A pid that is not running: spawn and reap a child.
        let mut c = std::process::Command::new("true").spawn().unwrap();
        let dead = c.id() as i32;
        c.wait().unwrap();
        let live_old = rec(
            "/data/seats/pi/a/registration.json",
            me,
            "2026-01-01T00:00:00.000Z",
        );
        let dead_new = rec(
            "/data/seats/pi/b/registration.json",
            dead,
            "2026-06-01T00:00:00.000Z",
        );
        let set = RegistrationSet {
            items: vec![dead_new.clone(), live_old.clone()],
            ..Default::default()
        };
        assert_eq!(
            set.by_session_id("s").unwrap().path,
            live_old.path,
            "live beats fresher dead"
        );
        // The roster's own record wins, even dead, over a live outside one.
        let own_dead = rec(
            "/root/.pi-intercom/seats/x.json",
            dead,
            "2026-01-01T00:00:00.000Z",
        );
        let set = RegistrationSet {
            items: vec![live_old.clone(), own_dead.clone()],
            own_dir: Some(PathBuf::from("/root/.pi-intercom/seats")),
            ..Default::default()
        };
        assert_eq!(set.by_session_id("s").unwrap().path, own_dead.path);
        // An outside record that names another folder than the seat's is not the seat's.
        let set = RegistrationSet {
            items: vec![live_old.clone()],
            ..Default::default()
        };
        assert!(
            set.of_seat("s", None, Some(Path::new("/nonexistent-folder")))
                .is_some(),
            "no cwd recorded: nothing to contradict"
        );
        let mut elsewhere = live_old;
        elsewhere.cwd = Some("/tmp".into());
        let set = RegistrationSet {
            items: vec![elsewhere],
            ..Default::default()
        };
        assert!(set
            .of_seat("s", None, Some(Path::new("/nonexistent-folder")))
            .is_none());
    }

    #[test]
    fn a_channel_is_an_absolute_socket_path_or_nothing() {
        let reg = |c: &str| {
            let v = format!(r#"{{"version":1,"sessionId":"a","channel":{c}}}"#);
            parse(Path::new("/x.json"), v.as_bytes()).unwrap().channel
        };
        assert_eq!(
            reg(r#""/run/user/1/intercom-pane-x/reply.sock""#).as_deref(),
            Some("/run/user/1/intercom-pane-x/reply.sock")
        );
        assert_eq!(reg(r#""relative/reply.sock""#), None);
        assert_eq!(reg(&format!("\"/{}\"", "a".repeat(120))), None);
        assert_eq!(reg("null"), None);
    }

    #[test]
    fn reads_data_root_layout_and_refuses_links() {
        let dir = tempfile::tempdir().unwrap();
        let seat = dir.path().join("seats/main/builder");
        std::fs::create_dir_all(&seat).unwrap();
        std::fs::write(
            seat.join("registration.json"),
            br#"{"version":1,"seat":"builder","sessionId":"abc","sessionsDir":"/x/sessions","pid":1,
                "startedAt":"2026-11-29T10:00:00.000Z","task":"Fix CI","taskSetBy":"jason",
                "mux":{"kind":"tmux","session":"builder"},"runState":{"state":"working","seq":2,"at":"2026-11-29T10:00:01.000Z"}}"#,
        )
        .unwrap();
        let bad = dir.path().join("seats/main/bad");
        std::fs::create_dir_all(&bad).unwrap();
        std::fs::write(bad.join("registration.json"), b"{not json").unwrap();
        let linked = dir.path().join("seats/main/linked");
        std::fs::create_dir_all(&linked).unwrap();
        std::os::unix::fs::symlink(
            seat.join("registration.json"),
            linked.join("registration.json"),
        )
        .unwrap();

        let set = read_all(None, dir.path());
        assert_eq!(set.items.len(), 1);
        let r = set.by_session_id("abc").unwrap();
        assert_eq!(r.task.as_deref(), Some("Fix CI"));
        assert_eq!(r.run_state.as_ref().unwrap().state, RunState::Working);
        assert!(set.by_sessions_dir(Path::new("/x/sessions")).is_some());
        assert_eq!(set.errors.len(), 2);
        assert!(set
            .errors
            .iter()
            .any(|e| e.ends_with("registration_invalid")));
        assert!(set
            .errors
            .iter()
            .any(|e| e.ends_with("registration_link_refused")));
    }
}
