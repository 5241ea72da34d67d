//! The test seam: the items that tests, benches, examples and fuzz targets outside the crate
//! use, and nothing else. Every module of the crate is private; this mirrors the paths of the
//! items it re-exports (`seam::mux::tmux::Tmux` is `crate::mux::tmux::Tmux`), so a test reads
//! `use intercom_pane::seam::mux::tmux::Tmux;`.
//!
//! The rule: add an item here only when a test outside the crate needs it, and prefer a unit
//! test next to the code (`#[cfg(test)] mod tests`) that needs nothing here. Re-export items,
//! never a whole module (`pub use crate::mux;` would make all of it reachable again and switch
//! the dead-code lint off for it). An item nobody outside uses any more leaves this list.

pub mod actions {
    pub mod close {
        pub use crate::actions::close::CloseExit;
        pub mod record {
            pub use crate::actions::close::record::{path, read};
        }
    }
    pub mod config_write {
        pub use crate::actions::config_write::{splice_agent, NoRefusal};
    }
    pub mod init {
        pub use crate::actions::init::InitExit;
    }
    pub mod monitor_pane {
        pub use crate::actions::monitor_pane::{ensure, record_path, EnsureRequest};
    }
    pub mod monitor_place {
        pub use crate::actions::monitor_place::TEST_PAUSE_ENV;
    }
    pub mod monitor_run {
        pub use crate::actions::monitor_run::{EnsureExit, Outcome};
    }
    pub mod reply {
        pub use crate::actions::reply::{check_text, Refusal, ReplyExit};
    }
    pub mod restore {
        pub use crate::actions::restore::RestoreExit;
    }
    pub mod resume {
        pub use crate::actions::resume::ResumeExit;
    }
    pub mod retire {
        pub use crate::actions::retire::RetireExit;
    }
    pub mod seen {
        pub use crate::actions::seen::set_seen;
    }
    pub mod spawn {
        pub use crate::actions::spawn::SpawnExit;
    }
}
pub mod alerts {
    pub mod channels {
        pub use crate::alerts::channels::visible;
    }
    pub mod memory {
        pub use crate::alerts::memory::{LastAlert, Memory, PaneRef};
    }
    pub mod memory_file {
        pub use crate::alerts::memory_file::path;
    }
}
pub mod board {
    pub mod classify {
        pub use crate::board::classify::{
            board_state, classify, recovery_marked_at, Activity, Classification,
        };
    }
    pub mod intercom {
        pub use crate::board::intercom::{
            project_worker, worker_status_json, EventIndex, Evidence, ObservedStatus,
        };
    }
    pub mod provenance {
        pub use crate::board::provenance::TaskSource;
    }
    pub mod reason {
        pub use crate::board::reason::{StateReason, StateSource, Unanswered};
    }
}
pub mod cli {
    pub use crate::cli::{Cli, Command, SHARED_HEADING};
}
pub mod clock {
    pub use crate::clock::{
        format_iso, parse_iso, parse_strict, Clock, FixedClock, Ms, SystemClock,
    };
}
pub mod cmd {
    pub mod exit {
        pub use crate::cmd::exit::{
            BoardExit, BudgetExit, DocsExit, DoctorExit, ExplainExit, HandoffExit, JumpExit,
            LandExit, LogExit, MonitorExit, RegisterExit, ReviewExit, ScanExit, StatusExit,
            WaitExit, WatchExit,
        };
    }
    pub mod monitor_cmd {
        pub use crate::cmd::monitor_cmd::DataRootSeen;
    }
    pub mod monitor_hosts {
        pub use crate::cmd::monitor_hosts::HostPorts;
    }
    pub mod monitor_ports {
        pub use crate::cmd::monitor_ports::ScanNavigator;
    }
    pub mod options {
        pub use crate::cmd::options::resolve;
    }
    pub mod live_source {
        pub use crate::cmd::live_source::LiveSource;
    }
}
pub mod evidence {
    pub use crate::evidence::ScanMemory;
    pub mod config {
        pub use crate::evidence::config::{
            discover_root, load, parse, ConfigError, IntercomConfig, MAX_CONFIG_BYTES,
        };
    }
    pub mod connectors {
        pub use crate::evidence::connectors::{read_bindings, safe_name};
    }
    pub mod log_event {
        pub use crate::evidence::log_event::{is_lower_uuid, parse_tail};
    }
    pub mod log_line {
        pub use crate::evidence::log_line::{field, Fields};
    }
    pub mod observations {
        pub use crate::evidence::observations::{
            match_log_name, read_logs, MAX_EVENTS, MAX_FILES, MAX_TAIL_TOTAL,
        };
    }
    pub mod registrations {
        pub use crate::evidence::registrations::{parse, parse_record, Event, PiState, RunEvent};
    }
    pub mod reports {
        pub use crate::evidence::reports::{parse_report, read_reports, report_file_name};
    }
    pub mod seen {
        pub use crate::evidence::seen::parse_seen;
    }
    pub mod sessions {
        pub use crate::evidence::sessions::{
            index_sessions, newest_session_in, read_session, read_session_from_leaf,
            read_session_with, session_dirs_from, session_id_from_name, SessionError,
            SessionSummary, READ_BUDGET,
        };
        pub mod backward {
            pub use crate::evidence::sessions::backward::Limits;
        }
        pub mod timeline {
            pub use crate::evidence::sessions::timeline::{
                follow_timeline, read_timeline, LogEntry, Sender, Skipped, Timeline, ToolCall,
                ToolEnd, Turn, TurnEnd, What, READ_LIMITS,
            };
        }
        pub mod usage {
            pub use crate::evidence::sessions::usage::{
                advance, count, UsageTally, ONE_SHOT_BUDGET,
            };
        }
    }
}
pub mod fsguard {
    pub use crate::fsguard::{my_uid, FsError};
}
pub mod git {
    pub mod parse {
        pub use crate::git::parse::{commits, merge_tree, names, numstat, text_lines, worktrees};
    }
}
pub mod hosts {
    pub use crate::hosts::Host;
    pub mod board {
        pub use crate::hosts::board::HostsSource;
    }
    pub mod expect {
        pub use crate::hosts::expect::SeatExpect;
    }
    pub mod file {
        pub use crate::hosts::file::{parse, read};
    }
    pub mod hello {
        pub use crate::hosts::hello::{judge, version, PROTOCOL};
    }
    pub mod quote {
        pub use crate::hosts::quote::{word, PROBE_WORD};
    }
    pub mod ssh {
        pub use crate::hosts::ssh::control_dir;
    }
    pub mod wire {
        pub use crate::hosts::wire::{line, records, row_of, Line};
    }
}
pub mod live {
    pub use crate::live::{Engine, Settings, Wake};
    pub mod engine {
        pub use crate::live::engine::{Passes, Why};
    }
    pub mod board {
        pub use crate::live::board::{BoardPass, BoardPasses};
    }
    pub mod panes {
        pub use crate::live::panes::{Panes, ServerWatch};
    }
}
pub mod liveness {
    pub use crate::liveness::{
        seat_liveness, LivenessMode, PaneCache, SeatHint, SeatLiveness, ServerKey,
    };
}
pub mod mux {
    pub use crate::mux::{
        owning_multiplexer, server_is_ours, shell_line, CloseOutcome, ErrorCode, Liveness,
        Multiplexer, MuxEnv, MuxError, MuxKind, NewWindow, PaneIdentity, PaneInfo, PaneList,
        ServerIdentity, SplitAbove, DEADLINE_OVERRUN,
    };
    pub mod herdr {
        pub use crate::mux::herdr::{listing_from_replies, Herdr, MAX_PANES, MAX_PROMPT};
    }
    pub mod pi_channel {
        pub use crate::mux::pi_channel::{parse_answer, send, Outcome};
    }
    pub mod session {
        pub use crate::mux::session::{PrivateServer, SessionError};
    }
    pub mod tmux {
        pub use crate::mux::tmux::{
            escape_arg, format_literal, is_pane_id, parse_listing, parse_rows, Tmux,
        };
        pub mod control {
            pub use crate::mux::tmux::control::{ControlClient, Notice};
        }
        pub mod literal {
            pub use crate::mux::tmux::literal::session_name_like;
        }
    }
}
pub mod names {
    pub use crate::names::visible;
}
pub mod paths {
    pub use crate::paths::short_id;
}
pub mod probe {
    pub use crate::probe::{
        classify_response, probe_one, sort_disconnected_last, ProbeCache, ProbeLimits, ProbeTarget,
    };
}
pub mod proc {
    pub use crate::proc::{
        ancestors, ancestry_depth, boot_id, children_of, descendants, identity, is_alive,
        is_ancestor, parse_stat, pi_verdict, read_stat, status, uids, ProcIdentity, ProcStatus,
    };
}
pub mod reply_text {
    pub use crate::reply_text::{
        check_for_editor, check_text, is_invisible, is_refused_control, is_trimmed_by_pi,
        trim_like_pi, without_legacy_trailer, TextError, INVISIBLE, LEGACY_TRAILER,
        MAX_REPLY_CHARS,
    };
}
pub mod scan {
    pub use crate::scan::{run, ReplyUnavailable, RootChoice, Scan, ScanOptions};
}
pub mod budget {
    pub use crate::budget::BudgetView;
    pub mod eval {
        pub use crate::budget::eval::{Level, Measure, Standing};
    }
    pub mod spec {
        pub use crate::budget::spec::OnContext;
    }
}
pub mod snapshot {
    pub use crate::snapshot::{
        ActivityView, ConnectionView, HostState, HostView, ReplyPath, RosterCode, RosterStatus,
        Row, RowCloseJob, RowHost, RowRole, Snapshot,
    };
}
pub mod states {
    pub use crate::states::{BoardState, CloseState, ConnState, ReportStatus};
}
pub mod store {
    pub use crate::store::{append_line_capped, ensure_dir};
}
pub mod text {
    pub use crate::text::{clip, one_line, sanitize, shell_quote, width};
}
pub mod tools {
    pub use crate::tools::ToolExit;
}
pub mod ui {
    pub use crate::ui::{run_monitor_with, MonitorOptions};
    pub mod app {
        pub use crate::ui::app::{App, Effect, Item, Msg, Options, Selection};
    }
    pub mod changes {
        pub use crate::ui::changes::{ReviewState, ReviewText};
    }
    pub mod demo {
        pub use crate::ui::demo::{demo_row, demo_snapshot, DemoSource, EVIL_NAME};
    }
    pub mod keys {
        pub use crate::ui::keys::{Mode, BINDINGS};
    }
    pub mod layout {
        pub use crate::ui::layout::{fit, with_source, Col};
    }
    pub mod ports {
        pub use crate::ui::ports::{
            JumpOutcome, Navigator, NoLines, NoNavigator, NoReplyPath, NoSeenWriter,
            NoWorkerControl, ReplyOutcome, ReplyRequest, ReplySender, SeatRef, SeenWriter,
            SnapshotSource, SpawnAsk, WorkerAction, WorkerControl, WorkerOutcome,
            NO_REPLY_PATH_REASON,
        };
    }
    pub mod render {
        pub use crate::ui::render::{draw, render};
    }
}
pub mod views {
    pub mod print {
        pub use crate::views::print::print_table;
    }
}
