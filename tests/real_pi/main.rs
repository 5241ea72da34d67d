//! The real-pi tier: a real pi 1.6.0 on Node 22 (the folder `INTERCOM_PANE_REAL_PI` names, found by
//! build.rs) driven by a scripted loopback model in a private tmux. Without it every test here is
//! compiled as ignored, with the reason. Run: `cargo test --test real_pi`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

// Helpers shared by the test binaries (tests/support/<name>/mod.rs).
#[allow(dead_code)]
#[path = "../support/mux_herdr_fake/real.rs"]
mod herdr_real;
#[path = "../support/hostile_support/mod.rs"]
mod hostile_support;
#[path = "../support/hosts_support/mod.rs"]
mod hosts_support;
#[path = "../support/lock_step/mod.rs"]
mod lock_step;
#[path = "../support/mux_support/mod.rs"]
mod mux_support;
#[path = "../support/pi_support/mod.rs"]
mod pi_support;
#[path = "../support/readme_support/mod.rs"]
mod readme_support;
#[path = "../support/real_pi_support/mod.rs"]
mod real_pi_support;
#[path = "../support/scan_support/mod.rs"]
mod scan_support;
#[path = "../support/text_cases/mod.rs"]
mod text_cases;

mod real_pi;
mod real_pi_alerts;
mod real_pi_budget;
mod real_pi_channel;
mod real_pi_events;
mod real_pi_herdr;
mod real_pi_hostile;
mod real_pi_hosts;
mod real_pi_log;
mod real_pi_package;
mod real_pi_readme;
mod real_pi_reply;
mod real_pi_restore;
mod real_pi_rosters;
mod real_pi_shadow;
mod real_pi_sidebar;
mod real_pi_spawn;
mod real_pi_tools;
