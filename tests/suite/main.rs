//! The hermetic suite, one binary: real files, real loopback servers, real tmux on private
//! sockets and a protocol-faithful fake Herdr; nothing here needs a program `.ci/run` installs.
//! Each module is one former test file (`cargo test --test suite MODULE` runs one). The real-Herdr
//! tests among them are compiled as ignored, with the reason, when no `herdr` is on PATH.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

// Helpers shared by the test binaries (tests/support/<name>/mod.rs).
#[path = "../support/alerts_support/mod.rs"]
mod alerts_support;
#[path = "../support/close_support/mod.rs"]
mod close_support;
#[path = "../support/hostile_support/mod.rs"]
mod hostile_support;
#[path = "../support/hosts_support/mod.rs"]
mod hosts_support;
#[path = "../support/intercom_support/mod.rs"]
mod intercom_support;
#[path = "../support/io_count/mod.rs"]
mod io_count;
#[path = "../support/live_support/mod.rs"]
mod live_support;
#[path = "../support/lock_step/mod.rs"]
mod lock_step;
#[path = "../support/mux_herdr_fake/mod.rs"]
mod mux_herdr_fake;
#[path = "../support/mux_support/mod.rs"]
mod mux_support;
#[path = "../support/pi_support/mod.rs"]
mod pi_support;
#[path = "../support/probe_common/mod.rs"]
mod probe_common;
#[path = "../support/readme_support/mod.rs"]
mod readme_support;
#[path = "../support/scan_support/mod.rs"]
mod scan_support;
#[path = "../support/sessions_common/mod.rs"]
mod sessions_common;
#[path = "../support/spawn_support/mod.rs"]
mod spawn_support;
#[path = "../support/text_cases/mod.rs"]
mod text_cases;

mod alerts_channels;
mod alerts_dialogs;
mod alerts_sidebar;
mod alerts_watch;
mod architecture;
mod board_page;
mod budget_cli;
mod cli_help;
mod close_adversarial;
mod close_kills;
mod close_refusals;
mod close_worker;
mod close_writes;
mod commands_doc;
mod completion_names;
mod demo_actions;
mod demo_cli;
mod demo_lifecycle;
mod demo_screen;
mod doctor_cli;
mod ensure_monitor;
mod ensure_monitor_herdr;
mod explain_cli;
mod fuzz_regressions;
mod herdr_contract;
mod hosts_actions;
mod hosts_board;
mod hosts_bounds;
mod hosts_cli;
mod hosts_control;
mod hosts_faults;
mod hosts_follow;
mod hosts_hostile;
mod hosts_idle;
mod hosts_local_paths;
mod hosts_merged;
mod hosts_names;
mod hosts_refusals;
mod hosts_sidebar;
mod hosts_ssh_words;
mod hosts_stream;
mod hosts_ui;
mod hosts_watch;
mod init_cli;
mod intercom_fixture;
mod intercom_hostile;
mod live_check;
mod live_control;
mod live_engine;
mod live_herdr;
mod live_limits;
mod live_probe;
mod live_quiet;
mod live_watch;
mod liveness_silent;
mod log_cli;
mod log_events;
mod log_timeline;
mod monitor_tmux;
mod mux_herdr;
mod mux_jump;
mod mux_owner;
mod mux_tmux;
mod names_invisible;
mod pi_channel;
mod probe_batch;
mod probe_classify;
mod proc_identity;
mod readers_fuzz;
mod readme_commands;
mod readme_paths;
mod register_cli;
mod register_events;
mod register_forged;
mod register_shadow;
mod release;
mod reply_cli;
mod reply_herdr;
mod reply_text;
mod reply_text_table;
mod reply_typed;
mod restore_cli;
mod restore_herdr;
mod resume_herdr;
mod resume_worker;
mod review_land;
mod scan_board_unchanged;
mod scan_cli;
mod scan_herdr;
mod scan_json_escapes;
mod scan_memory;
mod scan_other_session;
mod scan_panes;
mod scan_print_errors;
mod scan_registered_file;
mod scan_rosters;
mod scan_tmux;
mod sessions_cases;
mod sessions_damage;
mod sessions_discovery;
mod sessions_fixtures;
mod sessions_hostile;
mod sessions_layouts;
mod sessions_real_runs;
mod spawn_cli;
mod spawn_herdr;
mod spawn_race;
mod spawn_retire;
mod store_sweep;
mod tmux_hostile;
mod tmux_hostile_actions;
mod tmux_plugin;
mod tools_caller;
mod trust_uid;
mod ui_app;
mod ui_arch;
mod ui_away;
mod ui_cockpit;
mod ui_render;
mod ui_reply;
mod ui_reply_tmux;
mod ui_robust;
mod ui_spawn;
mod ui_tmux;
mod wait_live;
mod words_plain;
