//! Benchmarks, all ignored by default; run one module at a time so they do not load each other:
//! `cargo test --release --test bench MODULE -- --ignored --nocapture` (see docs/benchmarks.md).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

// Helpers shared by the test binaries (tests/support/<name>/mod.rs).
#[path = "../support/hosts_support/mod.rs"]
mod hosts_support;
#[path = "../support/live_support/mod.rs"]
mod live_support;
#[path = "../support/mux_herdr_fake/mod.rs"]
mod mux_herdr_fake;
#[path = "../support/mux_support/mod.rs"]
mod mux_support;
#[path = "../support/pi_support/mod.rs"]
mod pi_support;
#[path = "../support/probe_common/mod.rs"]
mod probe_common;
#[path = "../support/scan_support/mod.rs"]
mod scan_support;
#[path = "../support/sessions_common/mod.rs"]
mod sessions_common;

mod hosts_bench;
mod live_bench;
mod log_line_bench;
mod log_timeline_bench;
mod monitor_bench;
mod mux_bench;
mod probe_bench;
mod review_bench;
mod sessions_bench;
mod stream_bench;
mod threads;
mod ui_bench;
