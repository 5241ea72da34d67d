//! Evidence readers: bounded, read-only, never follow links. Each returns plain data.

pub mod config;
pub mod connectors;
pub mod log_line;
pub mod log_tail;
pub mod observations;
pub mod registrations;
pub mod reports;
pub mod seen;
pub mod sessions;
