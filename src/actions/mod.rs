//! Explicit mutations. Every byte written goes through `store`.

pub mod close;
pub mod config_write;
pub mod handoff;
pub mod monitor_pane;
pub mod monitor_restart;
pub mod register;
pub mod reply;
pub mod resume;
pub mod seen;
pub mod store;

/// The first 24 hex characters of the SHA-256 of `s`: a stable, path-safe name for a session's
/// machine-local records (registrations, monitor ownership).
pub fn short_id(s: &str) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(s.as_bytes())
        .iter()
        .take(12)
        .map(|b| format!("{b:02x}"))
        .collect()
}
