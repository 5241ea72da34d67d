//! Evidence readers: bounded, read-only, never follow links. Each returns plain data.

pub(crate) mod config;
pub(crate) mod connectors;
pub(crate) mod log_event;
pub(crate) mod log_line;
pub(crate) mod log_tail;
pub(crate) mod memo;
pub(crate) mod observations;
pub(crate) mod registrations;
pub(crate) mod reports;
pub(crate) mod seen;
pub(crate) mod sessions;

/// What passes read from files unchanged since (sessions, logs, reports, the config), kept by
/// whoever makes passes again (the sidebar) and handed to each pass, as the probe cache is. A
/// one-shot command (`scan`, `status`, the actions' checks) passes none: remembering costs a
/// copy and a lookup per file for a pass that never comes. Each reader takes only its own part.
pub struct ScanMemory {
    pub config: config::ConfigMemo,
    pub sessions: sessions::SessionMemo,
    pub reports: reports::ReportMemo,
    pub logs: log_tail::LogMemo,
    /// How far each session file's tokens and cost are counted (each byte once).
    pub usage: sessions::usage::UsageMemo,
}

impl ScanMemory {
    pub fn new() -> ScanMemory {
        ScanMemory {
            config: config::ConfigMemo::new(config::CONFIGS_KEPT),
            sessions: sessions::SessionMemo::new(sessions::SESSIONS_KEPT),
            reports: reports::ReportMemo::new(reports::REPORTS_KEPT),
            logs: log_tail::LogMemo::default(),
            usage: sessions::usage::UsageMemo::default(),
        }
    }
}

impl Default for ScanMemory {
    fn default() -> Self {
        ScanMemory::new()
    }
}
