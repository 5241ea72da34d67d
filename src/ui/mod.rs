//! The sidebar (`intercom-pane monitor`): a ratatui view of the latest snapshot.
//!
//! Shape: `app` is plain state updated by messages, `render` is a pure function of it, `keys` is
//! the binding table, `layout` the named width breakpoints, `run` the terminal loop. The UI never
//! reads files, runs tmux or probes: it talks through the traits in `ports`.

pub mod app;
pub mod demo;
mod details;
mod fit;
pub mod keys;
pub mod layout;
pub mod ports;
pub mod render;
mod reply_box;
pub mod run;
pub mod theme;

pub use app::{App, Effect, Msg, Options};
pub use ports::{
    CancelToken, DataRootSeen, NoReplyPath, NoSeenWriter, ReplyOutcome, ReplyRequest, ReplySender,
    SeenWriter, SnapshotSource,
};
pub use render::render;
pub use run::{run_monitor, run_monitor_with, MonitorOptions};
