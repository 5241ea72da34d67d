//! Evidence readers: bounded, read-only, never follow links. Each returns plain data.

pub mod config;
pub mod connectors;
pub mod log_line;
pub mod log_tail;
pub mod memo;
pub mod observations;
pub mod registrations;
pub mod reports;
pub mod seen;
pub mod sessions;

use std::sync::atomic::{AtomicBool, Ordering};

/// Whether this process reads the same evidence again (the sidebar's passes, tests): then what
/// was read is remembered by file identity (sessions, logs, the config) for the next pass.
static PASSES_REPEAT: AtomicBool = AtomicBool::new(true);

/// This process makes one pass and exits (`scan`, `status`): nothing read is remembered, since
/// remembering costs a copy and a lookup per file for a pass that never comes.
pub fn single_pass() {
    PASSES_REPEAT.store(false, Ordering::Relaxed);
}

/// Whether what a pass read is worth remembering.
pub(crate) fn remembering() -> bool {
    PASSES_REPEAT.load(Ordering::Relaxed)
}
