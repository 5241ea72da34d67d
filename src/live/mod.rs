//! Live views: the event engine behind the sidebar, `status --watch` and `scan --watch`
//! (docs/behaviour.md §3a). Each event source is its own module: `files` (inotify on the folders
//! a pass reads), `pids` (each seat's pi held by a pidfd), `panes` (a listening tmux control-mode
//! client per server; `pts`, the pty folder, for a tmux too old for one), `coalesce` (when the next pass runs), `wake` (an eventfd other threads and
//! signals use); `engine` is the loop that ties them to a pass; `board` the scan as that pass,
//! `plan` what each pass says to watch next.

pub mod board;
pub mod coalesce;
pub mod engine;
pub mod files;
pub mod panes;
pub mod pids;
pub mod plan;
pub mod pts;
pub mod record;
pub mod wake;

pub use engine::{Engine, Settings, Wake};
