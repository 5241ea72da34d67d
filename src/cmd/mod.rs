//! Command runners: turn parsed flags into a scan and a view. Each returns the exit code.

pub mod close_cmd;
pub mod docs_cmd;
pub mod doctor_cmd;
pub mod ensure_monitor_cmd;
pub mod monitor_cmd;
pub mod options;
pub mod register_cmd;
pub mod reply_cmd;
pub mod resume_cmd;
pub mod scan_cmd;
pub mod status_cmd;

/// A refusal: printed on stderr, exit 2, nothing written.
pub fn refuse(msg: impl std::fmt::Display) -> i32 {
    eprintln!("intercom-pane: {msg}");
    2
}
