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
