//! Alerts (docs/behaviour.md §3b): a seat that enters a state needing the person reaches them
//! once per turn, through the channels they chose, and not where they already look.
//!
//! `board::alerts` holds the rule (pure); `memory` what every watcher remembers together;
//! the rest runs it beside a sidebar or `watch`.

pub mod channels;
pub mod config;
pub mod memory;
pub mod message;
pub mod programs;
pub mod run;
