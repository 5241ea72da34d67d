//! Evidence readers: bounded, read-only, never follow links. Each returns plain data.

pub mod config;
pub mod connectors;
pub mod log_line;
pub mod log_tail;
pub mod memo;
pub mod observations;
pub mod registrations;
pub mod reports;
pub mod seen;
pub mod sessions;

/// What passes read from files unchanged since (sessions, logs, reports, the config), kept by
/// whoever makes passes again (the sidebar) and handed to each pass, as the probe cache is. A
/// one-shot command (`scan`, `status`, the actions' checks) passes none: remembering costs a
/// copy and a lookup per file for a pass that never comes. Each reader takes only its own part.
pub struct ScanMemory {
    pub config: config::ConfigMemo,
    pub sessions: sessions::SessionMemo,
    pub reports: reports::ReportMemo,
    pub logs: log_tail::LogMemo,
}

impl ScanMemory {
    pub fn new() -> ScanMemory {
        ScanMemory {
            config: config::ConfigMemo::new(config::CONFIGS_KEPT),
            sessions: sessions::SessionMemo::new(sessions::SESSIONS_KEPT),
            reports: reports::ReportMemo::new(reports::REPORTS_KEPT),
            logs: log_tail::LogMemo::default(),
        }
    }
}

impl Default for ScanMemory {
    fn default() -> Self {
        ScanMemory::new()
    }
}
