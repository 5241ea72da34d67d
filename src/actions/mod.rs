//! Explicit mutations. Every byte written goes through `crate::store`.

pub mod alert_memory;
pub mod close;
pub mod config_write;
pub mod handoff;
pub mod init;
pub mod launch_spec;
pub mod monitor_pane;
pub mod monitor_place;
pub mod monitor_restart;
pub mod register;
pub mod reply;
pub mod resume;
pub mod retire;
pub mod seen;
pub mod spawn;

pub use crate::paths::short_id;

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
