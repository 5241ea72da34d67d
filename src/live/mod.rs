//! Live views: the event engine behind the sidebar, `status --watch` and `scan --watch`
//! (docs/behaviour.md §3a). Each event source is its own module: `files` (inotify on the folders
//! a pass reads), `pids` (each seat's pi held by a pidfd), `panes` (a listening tmux control-mode
//! client per server; `pts`, the pty folder, for a tmux too old for one), `coalesce` (when the next pass runs), `wake` (an eventfd other threads and
//! signals use); `engine` is the loop that ties them to a pass; `board` the scan as that pass,
//! `plan` what each pass says to watch next, `check` the long timer's look before a full pass;
//! `stream` the one board stream every live view reads.

pub(crate) mod board;
pub(crate) mod check;
pub(crate) mod coalesce;
pub(crate) mod engine;
pub(crate) mod files;
pub(crate) mod panes;
pub(crate) mod pids;
pub(crate) mod plan;
pub(crate) mod pts;
pub(crate) mod record;
pub(crate) mod stream;
pub(crate) mod wake;

pub use engine::{Engine, Settings, Wake};

/// Whether the bench switched off this idle-only mechanism (`INTERCOM_PANE_TEST_LIVE_OFF`, comma
/// separated: `check`, `kept`, `pts`, `pty-owner`, `ages`), to measure what it buys (`stream_bench`,
/// docs/decisions.md). Never set in use.
pub(crate) fn switched_off(name: &str) -> bool {
    static OFF: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    OFF.get_or_init(|| {
        std::env::var("INTERCOM_PANE_TEST_LIVE_OFF")
            .unwrap_or_default()
            .split(',')
            .map(str::to_string)
            .collect()
    })
    .iter()
    .any(|n| n == name)
}
