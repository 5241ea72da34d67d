//! The sidebar (`intercom-pane monitor`): a ratatui view of the latest snapshot.
//!
//! Shape: `app` is plain state updated by messages, `render` is a pure function of it, `keys` is
//! the binding table, `layout` the named width breakpoints, `run` the terminal loop. The UI never
//! reads files, runs tmux or probes: it talks through the traits in `ports`.

/// Sidebar state and its update by messages.
pub(crate) mod app;
/// "Since you looked": what changed while the person was not looking at the sidebar.
mod away;
/// The Changes column: what each worker changed in git, and overlaps between live workers.
pub(crate) mod changes;
/// The Changes column's reader: reads when the board asks, never on a timer.
mod changes_feed;
/// Jump, attention walk, preview, filter, help, mouse, focus, close/resume from the list.
pub(crate) mod cockpit;
/// The reply editor's data: the box bound to one seat, the draft, pastes, line layout.
pub(crate) mod compose;
/// A built-in changing fleet for the demo, tests and benchmark.
pub(crate) mod demo;
mod details;
mod fit;
mod frames;
mod help;
mod hosts_view;
/// The key binding table (dispatch and help line).
pub(crate) mod keys;
/// Named width breakpoints for the table columns.
pub(crate) mod layout;
mod list;
mod log_panel;
/// Traits the runner passes in: snapshot source, Seen writer, reply sender.
pub(crate) mod ports;
mod preview;
/// Pure drawing of the app onto a frame.
pub(crate) mod render;
mod reply_box;
mod reply_flow;
/// The terminal event loop (`run_monitor_with`).
pub(crate) mod run;
mod seen_flow;
mod spawn_flow;
/// The spawn form: name, first task, worktree (run through `ports::Spawner`).
pub(crate) mod spawn_form;
mod state;
/// Glyphs, words and colours per state.
pub(crate) mod theme;
/// When an age on screen changes next.
pub(crate) mod tick;

pub use run::{run_monitor_with, MonitorOptions};
