//! Where things live in an Intercom root's `.pi-intercom/` folder: the one place that names its
//! files (docs/interop.md). Path arithmetic: nothing here reads or writes (`absolute` asks for
//! the current folder).

use std::path::{Path, PathBuf};

/// The folder under a root that holds Intercom state.
pub(crate) const STATE_DIR: &str = ".pi-intercom";
/// The roster file name inside `STATE_DIR`.
pub(crate) const CONFIG_FILE: &str = "config.json";
/// Ownership records of monitor panes are `monitor-<hash>.json` in `STATE_DIR`.
pub(crate) const MONITOR_RECORD_PREFIX: &str = "monitor-";

/// First 24 hex digits of sha256(`s`): names files after a session id without quoting it.
pub fn short_id(s: &str) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(s.as_bytes())
        .iter()
        .take(12)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `p` made absolute against the current folder, `.` components dropped (links are not
/// resolved: the path stays the one the person gave). Unchanged when the folder is unreadable.
pub(crate) fn absolute(p: &Path) -> PathBuf {
    let joined = if p.is_absolute() {
        p.to_path_buf()
    } else {
        match std::env::current_dir() {
            Ok(d) => d.join(p),
            Err(_) => return p.to_path_buf(),
        }
    };
    joined
        .components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect()
}

/// `<root>/.pi-intercom`.
pub(crate) fn state_dir(root: &Path) -> PathBuf {
    root.join(STATE_DIR)
}

/// `<root>/.pi-intercom/.gitignore`: keeps the machine-local files out of commits.
pub(crate) fn gitignore_file(root: &Path) -> PathBuf {
    state_dir(root).join(".gitignore")
}

/// `<root>/.pi-intercom/config.json`: the roster.
pub(crate) fn config_file(root: &Path) -> PathBuf {
    state_dir(root).join(CONFIG_FILE)
}

/// `<root>/.pi-intercom/jobs`: close-job records and locks, resume fences and locks.
pub(crate) fn jobs_dir(root: &Path) -> PathBuf {
    state_dir(root).join("jobs")
}

/// `<root>/.pi-intercom/jobs/<jobId>.json`: a close job's recorded worker identity.
pub(crate) fn close_job_record(root: &Path, job_id: &str) -> PathBuf {
    jobs_dir(root).join(format!("{job_id}.json"))
}

/// `<root>/.pi-intercom/jobs/<jobId>.lock`: held exactly while the run of that close job lives.
pub(crate) fn close_job_lock(root: &Path, job_id: &str) -> PathBuf {
    jobs_dir(root).join(format!("{job_id}.lock"))
}

/// `<root>/.pi-intercom/jobs/resume-<hash>.json`: a resume's fence.
pub(crate) fn resume_fence(root: &Path, session_id: &str) -> PathBuf {
    jobs_dir(root).join(format!("resume-{}.json", short_id(session_id)))
}

/// `<root>/.pi-intercom/jobs/resume-<hash>.lock`: one resume of a worker at a time.
pub(crate) fn resume_lock(root: &Path, session_id: &str) -> PathBuf {
    jobs_dir(root).join(format!("resume-{}.lock", short_id(session_id)))
}

/// `<root>/.pi-intercom/jobs/restore.lock`: one `restore` of a roster at a time.
pub(crate) fn restore_lock(root: &Path) -> PathBuf {
    jobs_dir(root).join("restore.lock")
}

/// `<root>/.pi-intercom/jobs/spawn-<hash of the lowercase name>.lock`: one spawn of a name at a
/// time (names are unique ignoring case).
pub(crate) fn spawn_lock(root: &Path, name: &str) -> PathBuf {
    jobs_dir(root).join(format!("spawn-{}.lock", short_id(&name.to_lowercase())))
}

/// `<root>/.pi-intercom/workers`: launch specs of the workers `spawn` started.
pub(crate) fn workers_dir(root: &Path) -> PathBuf {
    state_dir(root).join("workers")
}

/// `<root>/.pi-intercom/workers/<hash>.json`: one worker's launch spec (mode 0600).
pub(crate) fn launch_spec(root: &Path, session_id: &str) -> PathBuf {
    workers_dir(root).join(format!("{}.json", short_id(session_id)))
}

/// `<dataRoot>/launches/<hash>.json`: the data root's copy of a launch spec (or the record of a
/// pi started by hand, from its registration), mode 0600.
pub(crate) fn launch_record(data_root: &Path, session_id: &str) -> PathBuf {
    data_root
        .join("launches")
        .join(format!("{}.json", short_id(session_id)))
}

/// `<root>/.pi-intercom/worktrees`: git worktrees `spawn --worktree` creates, one per worker.
pub(crate) fn worktrees_dir(root: &Path) -> PathBuf {
    state_dir(root).join("worktrees")
}

/// `<root>/.pi-intercom/retired`: what `retire` keeps of a worker it removed from the roster.
pub(crate) fn retired_dir(root: &Path) -> PathBuf {
    state_dir(root).join("retired")
}

/// `<root>/.pi-intercom/seats`: registrations written under the Intercom root.
pub(crate) fn seats_dir(root: &Path) -> PathBuf {
    state_dir(root).join("seats")
}

/// `<root>/.pi-intercom/seats/<hash>.json`: one session's registration.
pub(crate) fn seat_record(root: &Path, session_id: &str) -> PathBuf {
    seats_dir(root).join(format!("{}.json", short_id(session_id)))
}

/// `<root>/.pi-intercom/logs`: the observation logs.
pub(crate) fn logs_dir(root: &Path) -> PathBuf {
    state_dir(root).join("logs")
}

/// `<root>/.pi-intercom/reports`: the workers' reports.
pub(crate) fn reports_dir(root: &Path) -> PathBuf {
    state_dir(root).join("reports")
}

/// `<root>/.pi-intercom/monitor-<hash of the coordinator's session id>.json`.
pub(crate) fn monitor_record(root: &Path, coordinator_session: &str) -> PathBuf {
    state_dir(root).join(format!(
        "{MONITOR_RECORD_PREFIX}{}.json",
        short_id(coordinator_session)
    ))
}

/// Whether a file name in `STATE_DIR` is a monitor ownership record.
pub(crate) fn is_monitor_record(name: &str) -> bool {
    name.starts_with(MONITOR_RECORD_PREFIX) && name.ends_with(".json")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_lies_in_the_state_folder() {
        let r = Path::new("/r");
        assert_eq!(config_file(r), Path::new("/r/.pi-intercom/config.json"));
        assert_eq!(
            close_job_lock(r, "j"),
            Path::new("/r/.pi-intercom/jobs/j.lock")
        );
        let m = monitor_record(r, "s");
        let name = m.file_name().and_then(|n| n.to_str()).unwrap_or("");
        assert!(is_monitor_record(name), "{name}");
        assert_eq!(name.len(), "monitor-.json".len() + 24);
        assert!(seat_record(r, "s").starts_with(seats_dir(r)));
    }
}
