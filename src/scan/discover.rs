//! Stage 1 of a pass: every seat, before any session file is read — Intercom agents, repo and
//! fleet agents, connectors, then (with the registrations and one pane listing per server) the
//! panes whose process tree runs pi.

use std::path::{Path, PathBuf};

use super::seats::{registered_session_file, seat_servers, SeatSource};
use super::{base_name, panes, ScanOptions};
use crate::board::reason::StateReason;
use crate::board::record::{SeatKey, TmuxRef};
use crate::evidence::config::IntercomConfig;
use crate::evidence::connectors;
use crate::evidence::registrations::{self, RegistrationSet};
use crate::evidence::sessions::{self, SessionError};
use crate::fsguard::{self, FsError, Kind};
use crate::liveness::PaneCache;
use crate::snapshot::{PassError, RowRole};

/// Most agent folders listed in a repo's or a fleet's folder.
const MAX_AGENT_DIRS: usize = 256;

/// The seats of one pass and what was read to find them.
pub(super) struct Discovered {
    pub(super) seats: Vec<SeatSource>,
    pub(super) regs: RegistrationSet,
    /// One pane listing per multiplexer server.
    pub(super) panes: PaneCache,
    /// The pid of each pi a listed pane runs.
    pub(super) pane_pis: Vec<i32>,
    /// Fixed codes for the snapshot (sessions folders that could not be read).
    pub(super) errors: Vec<PassError>,
    /// Agent folders and connector bindings that could not be read.
    pub(super) discovery_errors: Vec<PassError>,
    pub(super) truncated: bool,
    /// `Scan::pane_folders`.
    pub(super) pane_folders: Vec<(PathBuf, &'static str)>,
}

/// Find every seat of the pass.
pub(super) fn discover_seats(opts: &ScanOptions, config: Option<&IntercomConfig>) -> Discovered {
    let mut errors = Vec::new();
    let mut discovery_errors = Vec::new();
    let mut truncated = false;
    let mut folders = panes::Folders::default();
    let mut seats = match config {
        Some(cfg) => intercom_seats(cfg, &opts.session_dirs, &mut errors, &mut truncated),
        None => Vec::new(),
    };
    if let Some(repo) = &opts.repo {
        discover_agent_dirs(
            &repo.join(".pi").join("state"),
            &base_name(repo),
            None,
            |agent_dir| agent_dir.join("sessions"),
            &mut seats,
            &mut discovery_errors,
            &mut folders,
        );
    }
    if let Some(fleet) = &opts.fleet {
        discover_agent_dirs(
            fleet,
            "fleet",
            Some("mosaic-fleet"),
            |agent_dir| agent_dir.join(".pi").join("agent").join("sessions"),
            &mut seats,
            &mut discovery_errors,
            &mut folders,
        );
    }
    seats.extend(connector_seats(opts, &mut discovery_errors, &mut folders));

    let regs = registrations::read_all(config.map(|c| c.root.as_path()), &opts.data_root);
    truncated |= regs.truncated;
    follow_registered_files(&mut seats, &regs, config);
    // Multiplexer panes: one list per server, whatever the number of seats.
    let panes = PaneCache::collect(
        opts.liveness,
        &seat_servers(&seats, &regs),
        opts.tmux_socket.as_deref(),
        opts.kept_panes.as_deref(),
    );
    // Every other pane whose process tree runs pi is a seat too (no setup needed).
    let mut pane_pis = Vec::new();
    let mut pane_folders = Vec::new();
    let mut found = panes::pane_seats(
        &panes,
        &mut seats,
        &regs,
        &mut pane_pis,
        &mut folders,
        &mut pane_folders,
    );
    follow_registered_files(&mut found, &regs, config);
    seats.extend(found);
    Discovered {
        seats,
        regs,
        panes,
        pane_pis,
        errors,
        discovery_errors,
        truncated,
        pane_folders,
    }
}

/// A seat follows the session file its live registration names: a layout seat after
/// `/resume` or `/new`, a roster agent wherever pi wrote it.
fn follow_registered_files(
    seats: &mut [SeatSource],
    regs: &RegistrationSet,
    config: Option<&IntercomConfig>,
) {
    for seat in seats.iter_mut() {
        let folder = seat.agent_index.and_then(|i| {
            config.and_then(|c| Some(c.root.join(&c.agents.get(i)?.project_directory)))
        });
        if let Some(f) = registered_session_file(seat, regs, folder.as_deref()) {
            seat.session_file = f;
        }
    }
}

/// The roster's agents, each with the session file named for its configured id.
fn intercom_seats(
    cfg: &IntercomConfig,
    session_dirs: &[PathBuf],
    errors: &mut Vec<PassError>,
    truncated: &mut bool,
) -> Vec<SeatSource> {
    let index = sessions::index_sessions(session_dirs);
    *truncated |= index.truncated;
    // A missing default pi folder only means no sessions there; a missing folder that was
    // named explicitly is worth saying.
    let defaults = sessions::default_session_dirs();
    errors.extend(
        index
            .errors
            .iter()
            .filter(|e| !(e.error == FsError::NotFound && defaults.contains(&e.path)))
            .map(|e| PassError::SessionsFolder(e.error)),
    );
    let project = base_name(&cfg.root);
    let refused = |session_id: &str| {
        index
            .errors
            .iter()
            .find(|e| {
                e.path
                    .file_name()
                    .and_then(|n| n.to_str())
                    .and_then(sessions::session_id_from_name)
                    == Some(session_id)
            })
            .map(|e| StateReason::SessionUnreadable(SessionError::Fs(e.error)))
    };
    cfg.agents
        .iter()
        .enumerate()
        .map(|(i, a)| SeatSource {
            project: project.clone(),
            agent: a.name.clone(),
            role: if a.coordinator {
                RowRole::Coordinator
            } else {
                RowRole::Worker
            },
            session_file: index.find(&a.session_id).map(Path::to_path_buf),
            session_refused: refused(&a.session_id),
            sessions_dir: None,
            session_id: Some(a.session_id.clone()),
            tmux: TmuxRef::default(),
            agent_index: Some(i),
            binding: None,
            pane: None,
            found_by: None,
            tie: None,
            candidates: Vec::new(),
        })
        .collect()
}

/// One seat per Discord connector binding, its session in the fleet seat's connector folder.
fn connector_seats(
    opts: &ScanOptions,
    discovery_errors: &mut Vec<PassError>,
    folders: &mut panes::Folders,
) -> Vec<SeatSource> {
    let bindings = connectors::read_bindings(&opts.data_root);
    discovery_errors.extend(bindings.errors.iter().cloned().map(PassError::Binding));
    bindings
        .items
        .into_iter()
        .map(|b| {
            let sessions_dir = opts.fleet.as_ref().map(|f| {
                f.join(&b.seat)
                    .join(".pi/agent/sessions")
                    .join(format!("discord-{}", b.name))
            });
            SeatSource {
                project: "fleet".into(),
                agent: crate::names::visible(&format!("{} (discord: {})", b.seat, b.name)),
                role: RowRole::Connector,
                session_file: sessions_dir
                    .as_deref()
                    .and_then(|d| folders.newest_in(d).ok().flatten()),
                sessions_dir,
                session_id: None,
                session_refused: None,
                tmux: TmuxRef::default(),
                agent_index: None,
                binding: Some(b),
                pane: None,
                found_by: None,
                tie: None,
                candidates: Vec::new(),
            }
        })
        .collect()
}

/// The seats of a folder of agent folders (a repo's `.pi/state`, a fleet), newest session each.
fn discover_agent_dirs(
    parent: &Path,
    project: &str,
    socket_name: Option<&str>,
    sessions_of: impl Fn(&Path) -> PathBuf,
    seats: &mut Vec<SeatSource>,
    errors: &mut Vec<PassError>,
    folders: &mut panes::Folders,
) {
    let list = match fsguard::list_dir(parent, MAX_AGENT_DIRS) {
        Ok(l) => l,
        Err(fsguard::FsError::NotFound) => return,
        Err(e) => return errors.push(PassError::agent_folders(parent, Some(e))),
    };
    if list.truncated {
        errors.push(PassError::agent_folders(parent, None));
    }
    let mut entries: Vec<_> = list
        .entries
        .into_iter()
        .filter(|e| e.kind == Kind::Dir)
        .collect();
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    for e in entries {
        let Some(agent) = e.name_str().map(str::to_string) else {
            continue;
        };
        let dir = sessions_of(&parent.join(&agent));
        let file = match folders.newest_in(&dir) {
            Ok(f) => f,
            Err(fsguard::FsError::NotFound) => continue,
            Err(err) => {
                errors.push(PassError::SeatSessions {
                    seat: SeatKey::new(project, &agent),
                    error: err,
                });
                None
            }
        };
        seats.push(SeatSource {
            project: project.to_string(),
            tmux: TmuxRef {
                socket: socket_name.map(str::to_string),
                session: Some(agent.clone()),
            },
            agent: crate::names::visible(&agent),
            role: RowRole::Seat,
            session_file: file,
            sessions_dir: Some(dir),
            session_id: None,
            session_refused: None,
            agent_index: None,
            binding: None,
            pane: None,
            found_by: None,
            tie: None,
            candidates: Vec::new(),
        });
    }
}
