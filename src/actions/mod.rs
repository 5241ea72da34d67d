//! Explicit mutations. Every byte written goes through `crate::store`.

pub(crate) mod close;
pub(crate) mod config_write;
pub(crate) mod handoff;
pub(crate) mod init;
pub(crate) mod launch_spec;
pub(crate) mod monitor_pane;
pub(crate) mod monitor_place;
pub(crate) mod monitor_restart;
pub(crate) mod monitor_run;
pub(crate) mod register;
pub(crate) mod reply;
pub(crate) mod restore;
pub(crate) mod resume;
pub(crate) mod retire;
pub(crate) mod rosters;
pub(crate) mod seen;
pub(crate) mod session_log;
pub(crate) mod spawn;
pub(crate) mod worker_events;

pub(crate) use crate::paths::short_id;

/// The refusal of an action that needs the roster where none was found: where it looked.
pub(crate) fn no_roster_at(choice: &crate::scan::RootChoice) -> String {
    use crate::scan::RootChoice;
    let why = match choice {
        RootChoice::Discover(start) => format!(
            "no .pi-intercom/config.json in {} or any folder above it",
            start.display()
        ),
        RootChoice::Exact(root) => format!("no .pi-intercom/config.json in {}", root.display()),
        RootChoice::Skip => "no Intercom root was given (--no-root)".to_string(),
    };
    crate::snapshot::no_roster_here(&why)
}

/// A test hook's wait (never reached in real use: only when a test names `file` through its
/// variable): create `file`, then wait, at most 10 s, until the test removes it.
pub(crate) fn pause_for_test(file: &std::path::Path) {
    if crate::store::write_atomic(file, b"").is_err() {
        return;
    }
    let end = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while crate::fsguard::kind(file).is_ok() && std::time::Instant::now() < end {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
