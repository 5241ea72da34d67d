//! Zero-setup seats: every listed pane whose process tree runs pi is a seat, even with no
//! roster, layout or extension. Its session is found from the pi process itself, the way pi
//! itself decides where to write (docs/interop.md §6): `--session` / `--session-dir` /
//! `--session-id` on its command line (when pi has not replaced it with its title), else
//! `PI_CODING_AGENT_SESSION_DIR` (flat), else `<PI_CODING_AGENT_DIR or ~/.pi/agent>/sessions/
//! --<cwd>--/` for its cwd, from the environment it started with. A pi already shown by a
//! roster, layout or registration seat is not listed again.
//!
//! Bounded: one `/proc` pass (pid → ppid) per scan, only when some pane was listed; ≤ 64
//! processes looked at per pane, ≤ 512 panes, ≤ 1024 "is this pi" checks in all.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::seats::SeatSource;
use crate::board::provenance::FoundBy;
use crate::board::reason::StateReason;
use crate::board::record::TmuxRef;
use crate::evidence::registrations::in_sessions_dir as in_seat_dir;
use crate::evidence::registrations::RegistrationSet;
use crate::evidence::sessions;
use crate::fsguard::FsError;
use crate::liveness;
use crate::mux::{MuxKind, PaneInfo};
use crate::snapshot::RowRole;

const MAX_PANES: usize = 512;
const MAX_TREE: usize = 64;
const MAX_PI_CHECKS: usize = 1024;
/// The variables of a pi's environment that decide where it writes its session: every name
/// `locate` reads (the only ones read from `/proc/<pid>/environ`).
const PI_ENV: [&str; 3] = ["HOME", "PI_CODING_AGENT_DIR", "PI_CODING_AGENT_SESSION_DIR"];

/// Where a pane's pi keeps its session.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct PiSession {
    pub(super) file: Option<PathBuf>,
    pub(super) dir: Option<PathBuf>,
    pub(super) found_by: FoundBy,
}

/// The value after `--flag` (or in `--flag=value`) in a command line.
fn flag<'a>(argv: &'a [String], name: &str) -> Option<&'a str> {
    let eq = format!("{name}=");
    argv.iter().enumerate().find_map(|(i, a)| {
        if a == name {
            argv.get(i + 1).map(String::as_str)
        } else {
            a.strip_prefix(&eq)
        }
    })
}

/// pi's folder name for a cwd: `--<cwd without its leading /, with / \ : turned into ->--`.
pub(super) fn cwd_folder(cwd: &Path) -> String {
    let s = cwd.to_string_lossy();
    let s = s.strip_prefix('/').unwrap_or(&s);
    format!("--{}--", s.replace(['/', '\\', ':'], "-"))
}

fn expand_home(p: &str, home: Option<&str>) -> PathBuf {
    match (p.strip_prefix("~/"), home) {
        (Some(rest), Some(h)) => Path::new(h).join(rest),
        _ if p == "~" => home.map(PathBuf::from).unwrap_or_else(|| PathBuf::from(p)),
        _ => PathBuf::from(p),
    }
}

/// What one pass learned about session folders: each distinct folder is listed at most once
/// for its newest file and once for its index, however many seats and pis look at it (64 pis
/// sharing one folder of 64 files took 8,000 file checks a pass; an agent folder's seat and the
/// pi in its pane each listed it).
#[derive(Default)]
pub(super) struct Folders {
    newest: HashMap<PathBuf, Result<Option<PathBuf>, FsError>>,
    index: HashMap<PathBuf, sessions::SessionIndex>,
}

impl Folders {
    /// The newest session file in `dir` (`sessions::newest_session_in`), listed once a pass.
    pub(super) fn newest_in(&mut self, dir: &Path) -> Result<Option<PathBuf>, FsError> {
        self.newest
            .entry(dir.to_path_buf())
            .or_insert_with(|| sessions::newest_session_in(dir))
            .clone()
    }

    fn newest(&mut self, dir: &Path) -> Option<PathBuf> {
        self.newest_in(dir).ok().flatten()
    }

    fn by_id(&mut self, dir: &Path, id: &str) -> Option<PathBuf> {
        self.index
            .entry(dir.to_path_buf())
            .or_insert_with(|| sessions::index_sessions(&[dir.to_path_buf()]))
            .find(id)
            .map(Path::to_path_buf)
    }
}

/// Where a pi with this command line, environment and cwd writes its session; the folders are
/// looked at through this pass's `folders`.
pub(super) fn locate(
    argv: &[String],
    env: &HashMap<String, String>,
    cwd: &Path,
    folders: &mut Folders,
) -> PiSession {
    // Only names in `PI_ENV` are in `env`.
    let get = |k: &str| env.get(k).map(String::as_str).filter(|v| !v.is_empty());
    let home = get("HOME");
    let at = |p: &str| {
        let p = expand_home(p, home);
        if p.is_absolute() {
            p
        } else {
            cwd.join(p)
        }
    };
    let flat = flag(argv, "--session-dir")
        .map(|d| (at(d), FoundBy::PiSessionDirFlag))
        .or_else(|| get("PI_CODING_AGENT_SESSION_DIR").map(|d| (at(d), FoundBy::PiSessionDirEnv)));
    let (dir, found_by) = match flat {
        Some(f) => f,
        None => {
            let (agent, by) = match get("PI_CODING_AGENT_DIR") {
                Some(a) => (at(a), FoundBy::PiAgentDirEnv),
                None => match home {
                    Some(h) => (Path::new(h).join(".pi/agent"), FoundBy::PiDefaultAgentDir),
                    None => {
                        return PiSession {
                            file: None,
                            dir: None,
                            found_by: FoundBy::PiNoHome,
                        }
                    }
                },
            };
            (agent.join("sessions").join(cwd_folder(cwd)), by)
        }
    };
    // `--session <path|id>` and `--session-id <id>` name the file; an id is looked up in the
    // folder by pi's file name `<time>_<id>.jsonl`.
    let named = flag(argv, "--session").or_else(|| flag(argv, "--session-id"));
    let file = match named {
        Some(s) if s.ends_with(".jsonl") || s.contains('/') => Some(at(s)),
        Some(id) => folders
            .newest(&dir)
            .filter(|f| f.to_string_lossy().ends_with(&format!("_{id}.jsonl")))
            .or_else(|| folders.by_id(&dir, id)),
        None => folders.newest(&dir),
    };
    PiSession {
        file,
        dir: Some(dir),
        found_by: if named.is_some() {
            FoundBy::PiSessionFlag
        } else {
            found_by
        },
    }
}

/// The folder a running pi writes its session into, by `locate` from its command line, the
/// environment it started with and its cwd; `None` when those cannot be read (another user's pi).
pub(crate) fn pi_session_dir(pid: i32, argv: &[String]) -> Option<PathBuf> {
    let env = crate::proc::environ(pid, &PI_ENV)?;
    let cwd = crate::proc::cwd(pid)?;
    locate(argv, &env, &cwd, &mut Folders::default()).dir
}

/// The pi of each listed pane (the nearest in its process tree), with the command line it was
/// judged by.
fn pane_pis<'a>(
    panes: &[(&'a liveness::ServerKey, &'a PaneInfo)],
) -> Vec<(usize, i32, Vec<String>)> {
    let mut checks = 0;
    let mut out = Vec::new();
    for (i, (_, pane)) in panes.iter().enumerate() {
        let Some(root) = pane.pid else { continue };
        let mut over = false;
        let mut argv = Vec::new();
        let found = crate::proc::find_in_subtree(root, MAX_TREE, |pid| {
            over = checks >= MAX_PI_CHECKS;
            checks += 1;
            if over {
                return true;
            }
            match crate::proc::pi_command_line(pid) {
                Ok(a) => {
                    argv = a;
                    true
                }
                Err(_) => false,
            }
        });
        if over {
            return out;
        }
        out.extend(found.map(|pid| (i, pid, argv)));
    }
    out
}

/// The seat that already shows this pi (by its file, its folder, its session id, or a
/// registration of its process), if any.
fn known(
    found: &PiSession,
    pid: i32,
    seats: &[SeatSource],
    regs: &RegistrationSet,
) -> Option<usize> {
    let file_id = found
        .file
        .as_deref()
        .and_then(|f| f.file_name()?.to_str())
        .and_then(sessions::session_id_from_name)
        .map(str::to_string);
    let reg_ids: Vec<&str> = regs
        .items
        .iter()
        .filter(|r| r.pid == Some(pid))
        .filter_map(|r| r.session_id.as_deref())
        .collect();
    seats.iter().position(|s| {
        (found.file.is_some() && s.session_file == found.file)
            || s.sessions_dir
                .as_deref()
                .is_some_and(|d| found.dir.as_deref().is_some_and(|f| in_seat_dir(f, d)))
            || s.session_id
                .as_deref()
                .is_some_and(|id| file_id.as_deref() == Some(id) || reg_ids.contains(&id))
    })
}

/// Seats for the panes whose process tree runs a pi no other seat shows. A seat that already
/// shows a pane's pi (a layout or roster seat) learns that pane: its liveness then comes from
/// where its pi really runs, not from a tmux session named like it.
pub(super) fn pane_seats(
    cache: &liveness::PaneCache,
    seats: &mut [SeatSource],
    regs: &RegistrationSet,
    pis: &mut Vec<i32>,
    folders: &mut Folders,
) -> Vec<SeatSource> {
    let panes: Vec<_> = cache
        .panes()
        .filter(|(_, p)| !p.dead && p.pid.is_some())
        .take(MAX_PANES)
        .collect();
    let mut out: Vec<SeatSource> = Vec::new();
    for (i, pid, argv) in pane_pis(&panes) {
        let (key, pane) = panes[i];
        // Every pi a pane runs: a live view holds each by a pidfd.
        pis.push(pid);
        // Without its environment and cwd (another user's pi) its folder is not known: the seat
        // is listed, unknown, rather than guessed idle.
        let found = match (crate::proc::environ(pid, &PI_ENV), crate::proc::cwd(pid)) {
            (Some(env), Some(cwd)) => locate(&argv, &env, &cwd, folders),
            _ => PiSession {
                file: None,
                dir: None,
                found_by: FoundBy::PiProcessUnreadable,
            },
        };
        // A pi with no file yet cannot be told apart by its session: in the pane named like a
        // configured agent that has no file either, it is taken to be that agent's, not listed
        // as a second seat (pi writes nothing before its first prompt).
        let conventional = || {
            seats.iter().position(|s| {
                found.file.is_none()
                    && s.session_file.is_none()
                    && matches!(s.role, RowRole::Worker | RowRole::Coordinator)
                    && *key == (MuxKind::ROSTER, None)
                    && pane.session_name.as_deref() == Some(s.agent.as_str())
            })
        };
        if let Some(i) = known(&found, pid, seats, regs).or_else(conventional) {
            let seat = &mut seats[i];
            if seat.pane.is_none() && seat.binding.is_none() {
                seat.pane = Some((key.clone(), pane.id.clone()));
                if key.0 == MuxKind::ROSTER {
                    seat.tmux = TmuxRef {
                        socket: key.1.clone(),
                        session: pane.session_name.clone(),
                    };
                }
            }
            continue;
        }
        if known(&found, pid, &out, regs).is_some() {
            continue;
        }
        let session = pane.session_name.clone().unwrap_or_default();
        out.push(SeatSource {
            project: "panes".into(),
            agent: crate::names::visible(&format!("{session} {}", pane.id)),
            role: RowRole::Seat,
            session_file: found.file.clone(),
            sessions_dir: found.dir.clone(),
            session_id: None,
            session_refused: found
                .dir
                .is_none()
                .then_some(StateReason::SessionNotLocated),
            tmux: TmuxRef {
                socket: key.1.clone(),
                session: pane.session_name.clone(),
            },
            agent_index: None,
            binding: None,
            pane: Some((key.clone(), pane.id.clone())),
            found_by: Some(found.found_by),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_session_is_where_pi_writes_it() {
        let env: HashMap<String, String> = [("HOME".to_string(), "/home/u".to_string())].into();
        let cwd = Path::new("/home/u/my:proj");
        let s = locate(&argv(&["pi"]), &env, cwd, &mut Folders::default());
        assert_eq!(
            s.dir.as_deref(),
            Some(Path::new("/home/u/.pi/agent/sessions/--home-u-my-proj--"))
        );
        assert_eq!(s.found_by, FoundBy::PiDefaultAgentDir);
        let mut e2 = env.clone();
        e2.insert("PI_CODING_AGENT_DIR".into(), "~/agents/a".into());
        let s = locate(&argv(&["pi"]), &e2, cwd, &mut Folders::default());
        assert_eq!(
            s.dir.as_deref(),
            Some(Path::new("/home/u/agents/a/sessions/--home-u-my-proj--"))
        );
        assert_eq!(s.found_by, FoundBy::PiAgentDirEnv);
        e2.insert("PI_CODING_AGENT_SESSION_DIR".into(), "flat".into());
        let s = locate(&argv(&["pi"]), &e2, cwd, &mut Folders::default());
        assert_eq!(s.dir.as_deref(), Some(Path::new("/home/u/my:proj/flat")));
        assert_eq!(s.found_by, FoundBy::PiSessionDirEnv);
        let s = locate(
            &argv(&[
                "node",
                "/x/pi-coding-agent/dist/cli.js",
                "--session-dir=/d",
                "--session",
                "/s/a_b.jsonl",
            ]),
            &e2,
            cwd,
            &mut Folders::default(),
        );
        assert_eq!(s.dir.as_deref(), Some(Path::new("/d")));
        assert_eq!(s.file.as_deref(), Some(Path::new("/s/a_b.jsonl")));
        assert_eq!(s.found_by, FoundBy::PiSessionFlag);
        assert_eq!(
            locate(
                &argv(&["pi"]),
                &HashMap::new(),
                cwd,
                &mut Folders::default()
            )
            .found_by,
            FoundBy::PiNoHome
        );
    }
}
