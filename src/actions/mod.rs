//! Explicit mutations. Every byte written goes through `store`.

pub mod alert_memory;
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

pub use crate::paths::short_id;
