//! Alerts (docs/behaviour.md §3b): a seat that enters a state needing the person reaches them
//! once per turn, through the channels they chose, and not where they already look.
//!
//! `board::alerts` holds the rule (pure); `memory` what every watcher remembers together, down
//! to which channel sent each alert (`memory_file` reads and writes it); `boards` which of them
//! still keep the status count;
//! the rest runs it beside a sidebar or `watch`.

pub(crate) mod boards;
pub(crate) mod channels;
pub(crate) mod config;
pub(crate) mod memory;
pub(crate) mod memory_file;
pub(crate) mod message;
pub(crate) mod programs;
pub(crate) mod run;
