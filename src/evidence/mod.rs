//! Evidence readers: bounded, read-only, never follow links. Each returns plain data.

pub mod config;
pub mod observations;
pub mod reports;
pub mod seen;
pub mod sessions;
