//! intercom-pane: one bounded scan of a pi/Intercom fleet, several read-only views, and a few
//! explicit, verified mutations. See docs/architecture.md for the flow.

pub mod actions;
pub mod alerts;
pub mod board;
pub mod cli;
pub mod cli_help;
pub mod clock;
pub mod cmd;
pub mod demo;
pub mod doctor;
pub mod evidence;
pub mod exit_code;
pub mod fsguard;
pub mod hosts;
pub mod live;
pub mod liveness;
pub mod log;
pub mod mux;
pub mod names;
pub mod owned;
pub mod paths;
pub mod probe;
pub mod proc;
pub mod reply_text;
pub mod scan;
pub mod signals;
pub mod snapshot;
pub mod states;
pub mod store;
pub mod text;
pub mod tools;
pub mod ui;
pub mod views;
