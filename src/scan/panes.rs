//! Zero-setup seats: every listed pane whose process tree runs pi is a seat, even with no
//! roster, layout or extension. Its session folder is found from the pi process itself, the
//! way pi itself decides where to write (docs/interop.md §6): `--session-dir` on its command
//! line (when pi has not replaced it with its title), else `PI_CODING_AGENT_SESSION_DIR`
//! (flat), else `<PI_CODING_AGENT_DIR or ~/.pi/agent>/sessions/--<cwd>--/` for its cwd, from
//! the environment it started with.
//!
//! Its session FILE is tied to it only by evidence that names the file (`SessionTie`): a live
//! registration of this very process (from this roster, the data root, or any roster above
//! its folder), `--session`/`--session-id` on its command line, the file it holds open, or —
//! alone in its folder — the one file written there since it started.
//! Never "the newest file in its folder": several pis share a folder (two rosters with
//! `projectDirectory "."`, a one-shot `pi -p`), and pi replaces its command line with its
//! title. When files could be its and nothing names one, the seat is `unknown`
//! (`session_undecided`) and `explain` lists the candidates (docs/behaviour.md §1).
//!
//! A pi registered by another roster on this machine is that roster's seat, not this board's
//! (docs/behaviour.md §1). A pi already shown by a roster, layout or registration seat is not
//! listed again.
//!
//! Bounded: one `/proc` pass (pid → ppid) per scan, only when some pane was listed; ≤ 64
//! processes looked at per pane, ≤ 512 panes, ≤ 1024 "is this pi" checks in all; ≤ 64 folders
//! above a pi looked at for rosters, each roster's seats folder read once a pass.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::seats::{file_named_by_registration, SeatSource};
use crate::board::provenance::{FoundBy, SessionTie};
use crate::board::reason::StateReason;
use crate::board::record::TmuxRef;
use crate::clock::Ms;
use crate::evidence::registrations::in_sessions_dir as in_seat_dir;
use crate::evidence::registrations::{self, Registration, RegistrationSet};
use crate::evidence::sessions::{self, SessionError};
use crate::fsguard::{self, FsError, Kind};
use crate::liveness;
use crate::mux::{MuxKind, PaneInfo};
use crate::snapshot::RowRole;

const MAX_PANES: usize = 512;
const MAX_TREE: usize = 64;
const MAX_PI_CHECKS: usize = 1024;
/// The variables of a pi's environment that decide where it writes its session: every name
/// `locate` reads (the only ones read from `/proc/<pid>/environ`).
const PI_ENV: [&str; 3] = ["HOME", "PI_CODING_AGENT_DIR", "PI_CODING_AGENT_SESSION_DIR"];
/// Most entries of a session folder listed for the candidates of an undecided pi.
const MAX_FOLDER_ENTRIES: usize = 4096;
/// Most candidates a seat carries for `explain` (the count is not capped).
pub(super) const MAX_CANDIDATES: usize = 8;
/// Most folders above a pi's folder looked at for another roster's seats folder.
const MAX_ROOT_LEVELS: usize = 64;

/// A session file of a folder, with when it was last written.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct SessionFile {
    pub(super) path: PathBuf,
    pub(super) mtime_ms: Ms,
}

/// What makes the only file written in a folder a pi's (`SessionTie::OnlyWritten`): the pi is
/// the one live pi whose session folder it is, and when it started.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Alone {
    pub(super) started_at: Ms,
}

/// How far a file's time may lie before the pi's start and still be "written since it
/// started" (file times and process start ticks come from different clocks).
const WRITTEN_SLACK_MS: Ms = 2_000;
/// How long after its start a pi may begin a new session (its start-up).
const BEGUN_SLACK_MS: Ms = 10_000;

/// When pi began the session of a file, from its name `<ISO start with : and . as ->_<id>`.
fn begun_at(path: &Path) -> Option<Ms> {
    let name = path.file_name()?.to_str()?;
    let stamp = name.split('_').next()?;
    let b = stamp.as_bytes();
    if b.len() != 24 || b[13] != b'-' || b[16] != b'-' || b[19] != b'-' {
        return None;
    }
    let iso = format!(
        "{}:{}:{}.{}",
        &stamp[..13],
        &stamp[14..16],
        &stamp[17..19],
        &stamp[20..]
    );
    crate::clock::parse_iso(&iso)
}

/// Where a pane's pi keeps its session, and what ties it to its file.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct PiSession {
    pub(super) file: Option<PathBuf>,
    pub(super) dir: Option<PathBuf>,
    pub(super) found_by: FoundBy,
    /// The session its registration names (the file's header must confirm it).
    pub(super) session_id: Option<String>,
    /// `None`: not decided yet (`locate` only decides for a command line that names it).
    pub(super) tie: Option<SessionTie>,
    /// With `Undecided`: the files that could be its (newest name first, capped).
    pub(super) candidates: Vec<PathBuf>,
    /// With `Undecided` and no candidates: why its folder could not be listed.
    pub(super) folder_error: Option<FsError>,
}

impl PiSession {
    fn unlocated(found_by: FoundBy) -> PiSession {
        PiSession {
            file: None,
            dir: None,
            found_by,
            session_id: None,
            tie: None,
            candidates: Vec::new(),
            folder_error: None,
        }
    }
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
/// for its newest file, once for its session files and once for its index, however many
/// seats and pis look at it (64 pis sharing one folder of 64 files took 8,000 file checks a
/// pass; an agent folder's seat and the pi in its pane each listed it).
#[derive(Default)]
pub(super) struct Folders {
    newest: HashMap<PathBuf, Result<Option<PathBuf>, FsError>>,
    files: HashMap<PathBuf, Result<Vec<SessionFile>, FsError>>,
    index: HashMap<PathBuf, sessions::SessionIndex>,
}

impl Folders {
    /// The newest session file in `dir` (`sessions::newest_session_in`), listed once a pass:
    /// for a layout's or connector's own folder (one agent writes there), never for a pane's pi.
    pub(super) fn newest_in(&mut self, dir: &Path) -> Result<Option<PathBuf>, FsError> {
        self.newest
            .entry(dir.to_path_buf())
            .or_insert_with(|| sessions::newest_session_in(dir))
            .clone()
    }

    /// Every `*.jsonl` regular file directly in `dir` with its modification time, newest name
    /// first (pi names files by their start time), listed once a pass.
    fn files_in(&mut self, dir: &Path) -> Result<Vec<SessionFile>, FsError> {
        self.files
            .entry(dir.to_path_buf())
            .or_insert_with(|| {
                let list = fsguard::list_dir(dir, MAX_FOLDER_ENTRIES)?;
                let mut files: Vec<SessionFile> = list
                    .entries
                    .iter()
                    .filter(|e| e.kind == Kind::File)
                    .filter_map(|e| Some((e.name_str()?, e.mtime_ms)))
                    .filter(|(n, _)| n.ends_with(".jsonl"))
                    .map(|(n, m)| SessionFile {
                        path: dir.join(n),
                        mtime_ms: m,
                    })
                    .collect();
                files.sort_unstable_by(|a, b| b.path.cmp(&a.path));
                Ok(files)
            })
            .clone()
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
/// looked at through this pass's `folders`. The file is named only when the command line
/// names it (`--session`, `--session-id`); everything else is `tie`'s.
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
                    None => return PiSession::unlocated(FoundBy::PiNoHome),
                },
            };
            (agent.join("sessions").join(cwd_folder(cwd)), by)
        }
    };
    // `--session <path|id>` and `--session-id <id>` name the file; an id is looked up in the
    // folder by pi's file name `<time>_<id>.jsonl` (none yet: pi has not written it).
    let named = flag(argv, "--session").or_else(|| flag(argv, "--session-id"));
    let file = match named {
        Some(s) if s.ends_with(".jsonl") || s.contains('/') => Some(at(s)),
        Some(id) => folders.by_id(&dir, id),
        None => None,
    };
    PiSession {
        file,
        dir: Some(dir),
        found_by: if named.is_some() {
            FoundBy::PiSessionFlag
        } else {
            found_by
        },
        session_id: None,
        tie: named.map(|_| SessionTie::CommandLine),
        candidates: Vec::new(),
        folder_error: None,
    }
}

/// A live, open registration of this very process (pid, start ticks and boot id checked), the
/// freshest when pi moved session and registered again.
fn live_registration(pid: i32, regs: &RegistrationSet) -> Option<&Registration> {
    regs.items
        .iter()
        .filter(|r| r.pid == Some(pid) && !r.session_closed())
        .filter(|r| r.alive() == Some(true))
        .max_by_key(|r| r.run_state.as_ref().map(|s| s.at))
}

/// Tie `found` to a file by the evidence that names one (`decide`): the pi's live
/// registration, else the file it holds open in its folder; else the folder's files are only
/// candidates.
fn tie(
    found: PiSession,
    pid: i32,
    reg: Option<&Registration>,
    alone: Option<Alone>,
    folders: &mut Folders,
) -> PiSession {
    let registered = reg.and_then(|r| {
        let id = r.session_id.clone()?;
        let file = r.session_file.as_deref().map(PathBuf::from).filter(|f| {
            f.file_name()
                .and_then(|n| n.to_str())
                .and_then(sessions::session_id_from_name)
                == Some(id.as_str())
        })?;
        Some((file_named_by_registration(file)?, id))
    });
    let dir = found.dir.clone();
    decide(
        found,
        registered,
        || {
            dir.as_deref()
                .map(|d| crate::proc::open_session_files(pid, d))
                .unwrap_or_default()
        },
        |d| folders.files_in(d),
        alone,
    )
}

/// The one rule that ties a pane's pi to a session file, pure: a command line that names it
/// (already in `found`), else its live registration's file (`registered`: the file, `None`
/// when pi has not written it yet, and its session id), else the one session file of its
/// folder it holds open (`open`), else — only for a pi `alone` in its folder — the one file of
/// the folder written since it started that it could have begun (`OnlyWritten`); else nothing:
/// the folder's files (`folder`) are candidates (`Undecided`), or there are none
/// (`NoneInFolder`). Never a file for being the newest.
fn decide(
    mut found: PiSession,
    registered: Option<(Option<PathBuf>, String)>,
    open: impl FnOnce() -> Vec<PathBuf>,
    folder: impl FnOnce(&Path) -> Result<Vec<SessionFile>, FsError>,
    alone: Option<Alone>,
) -> PiSession {
    if found.tie.is_some() {
        return found;
    }
    if let Some((file, id)) = registered {
        found.file = file;
        found.session_id = Some(id);
        found.tie = Some(SessionTie::Registration);
        return found;
    }
    let Some(dir) = found.dir.clone() else {
        return found;
    };
    if let [one] = open().as_slice() {
        found.file = Some(one.clone());
        found.tie = Some(SessionTie::OpenFile);
        return found;
    }
    match folder(&dir) {
        Ok(files) if !files.is_empty() => {
            if let Some(a) = alone {
                let written: Vec<&SessionFile> = files
                    .iter()
                    .filter(|f| f.mtime_ms >= a.started_at - WRITTEN_SLACK_MS)
                    .filter(|f| {
                        begun_at(&f.path).is_some_and(|b| b <= a.started_at + BEGUN_SLACK_MS)
                    })
                    .collect();
                if let [one] = written.as_slice() {
                    found.file = Some(one.path.clone());
                    found.tie = Some(SessionTie::OnlyWritten);
                    return found;
                }
            }
            found.candidates = files
                .into_iter()
                .take(MAX_CANDIDATES)
                .map(|f| f.path)
                .collect();
            found.tie = Some(SessionTie::Undecided);
        }
        Ok(_) | Err(FsError::NotFound) => found.tie = Some(SessionTie::NoneInFolder),
        Err(e) => {
            found.folder_error = Some(e);
            found.tie = Some(SessionTie::Undecided);
        }
    }
    found
}

/// The rosters above a pi's folder, each roster's seats folder read once a pass: a pi one of
/// them registered is that roster's seat, not this board's; so is a pi nothing ties to a
/// session in the default server's tmux session named like one of that roster's agents (its
/// layout, as `conventional` takes it for this board's own roster).
#[derive(Default)]
pub(super) struct OtherRosters {
    seen: HashMap<PathBuf, Option<RegistrationSet>>,
    /// The roster found from each pi folder (`None`: none, or this board's own).
    configs: HashMap<PathBuf, Option<crate::evidence::config::IntercomConfig>>,
}

impl OtherRosters {
    /// Does a roster other than this board's (`own_dir`: its seats folder) hold a live record
    /// of process `pid`, found from the pi's folder `cwd` upward?
    fn registered(&mut self, pid: i32, cwd: &Path, own_dir: Option<&Path>) -> bool {
        for dir in cwd.ancestors().take(MAX_ROOT_LEVELS) {
            let seats = crate::paths::seats_dir(dir);
            if own_dir == Some(seats.as_path()) {
                continue;
            }
            let set = self.seen.entry(dir.to_path_buf()).or_insert_with(|| {
                (fsguard::kind(&seats) == Ok(Kind::Dir)).then(|| registrations::read_roster(dir))
            });
            let Some(set) = set else { continue };
            if set
                .items
                .iter()
                .any(|r| r.pid == Some(pid) && r.alive() == Some(true))
            {
                return true;
            }
        }
        false
    }

    /// The seats folders of the other rosters this pass looked at.
    fn seats_folders(&self) -> impl Iterator<Item = PathBuf> + '_ {
        self.seen
            .iter()
            .filter(|(_, set)| set.is_some())
            .map(|(root, _)| crate::paths::seats_dir(root))
    }

    /// Is `session` (a tmux session of the default server) named like an agent of the roster
    /// found from `cwd`, when that roster is not this board's?
    fn laid_out(&mut self, cwd: &Path, session: &str, own_dir: Option<&Path>) -> bool {
        let cfg = self.configs.entry(cwd.to_path_buf()).or_insert_with(|| {
            crate::evidence::config::discover(cwd)
                .ok()
                .flatten()
                .filter(|c| own_dir != Some(crate::paths::seats_dir(&c.root).as_path()))
        });
        cfg.as_ref()
            .is_some_and(|c| c.agents.iter().any(|a| a.name == session))
    }
}

/// Most processes looked at for another pi writing in a folder.
const MAX_PROCS: usize = 8192;

/// Whether a pi of ours other than `pid` — in a pane or not (a terminal, a script, a one-shot
/// still running) — writes its sessions in `dir`; `true` when that cannot be told (too many
/// processes): then no pi is alone there. Run only for a pi nothing else ties to a file.
fn another_pi_writes_in(dir: &Path, pid: i32) -> bool {
    let Ok(list) = fsguard::list_dir(Path::new("/proc"), MAX_PROCS) else {
        return true;
    };
    if list.truncated {
        return true;
    }
    list.entries
        .iter()
        .filter_map(|e| e.name_str()?.parse::<i32>().ok())
        .filter(|p| *p != pid && crate::proc::is_ours(*p))
        .any(|p| {
            crate::proc::pi_command_line(p)
                .ok()
                .and_then(|argv| pi_session_dir(p, &argv))
                .is_some_and(|d| d == dir)
        })
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

/// The seat that already shows this pi: by the file its evidence names, by a layout seat's own
/// folder (one agent writes there), or by the session its live registration names.
fn known(found: &PiSession, seats: &[SeatSource]) -> Option<usize> {
    let file_id = found
        .file
        .as_deref()
        .and_then(|f| f.file_name()?.to_str())
        .and_then(sessions::session_id_from_name);
    let ids = [file_id, found.session_id.as_deref()];
    seats.iter().position(|s| {
        (found.file.is_some() && s.session_file == found.file)
            // A pane seat's folder may be shared by any number of pis: only a layout's counts.
            || (s.found_by.is_none()
                && s.sessions_dir
                    .as_deref()
                    .is_some_and(|d| found.dir.as_deref().is_some_and(|f| in_seat_dir(f, d))))
            || s.session_id
                .as_deref()
                .is_some_and(|id| ids.contains(&Some(id)))
    })
}

/// Seats for the panes whose process tree runs a pi no other seat shows. A seat that already
/// shows a pane's pi (a layout or roster seat) learns that pane: its liveness then comes from
/// where its pi really runs, not from a tmux session named like it. A pi another roster on
/// this machine registered is left to that roster's board.
pub(super) fn pane_seats(
    cache: &liveness::PaneCache,
    seats: &mut [SeatSource],
    regs: &RegistrationSet,
    pis: &mut Vec<i32>,
    folders: &mut Folders,
    watch: &mut Vec<(PathBuf, &'static str)>,
) -> Vec<SeatSource> {
    let panes: Vec<_> = cache
        .panes()
        .filter(|(_, p)| !p.dead && p.pid.is_some())
        .take(MAX_PANES)
        .collect();
    let mut rosters = OtherRosters::default();
    let mut out: Vec<SeatSource> = Vec::new();
    // Where each pane's pi writes, first: a pi is alone in its folder only if no other listed
    // pi (of any roster) writes there.
    let located: Vec<_> = pane_pis(&panes)
        .into_iter()
        .map(|(i, pid, argv)| {
            let cwd = crate::proc::cwd(pid);
            // Without its environment and cwd (another user's pi) its folder is not known: the
            // seat is listed, unknown, rather than guessed idle.
            let found = match (crate::proc::environ(pid, &PI_ENV), cwd.as_deref()) {
                (Some(env), Some(cwd)) => locate(&argv, &env, cwd, folders),
                _ => PiSession::unlocated(FoundBy::PiProcessUnreadable),
            };
            (i, pid, cwd, found)
        })
        .collect();
    let mut per_dir: HashMap<PathBuf, usize> = HashMap::new();
    for (_, _, _, f) in &located {
        if let Some(d) = &f.dir {
            *per_dir.entry(d.clone()).or_default() += 1;
        }
    }
    for (i, pid, cwd, mut found) in located {
        let (key, pane) = panes[i];
        let reg = live_registration(pid, regs);
        let own = regs.own_dir.as_deref();
        if reg.is_none()
            && cwd
                .as_deref()
                .is_some_and(|c| rosters.registered(pid, c, own))
        {
            continue;
        }
        // Every pi a pane runs: a live view holds each by a pidfd.
        pis.push(pid);
        if let Some(r) = reg {
            found.session_id = r.session_id.clone();
        }
        // A layout seat's own folder or the registered session shows it already: no more to read.
        let shown = known(&found, seats);
        if shown.is_none() {
            let alone = found
                .dir
                .as_ref()
                .filter(|d| per_dir.get(*d) == Some(&1) && !another_pi_writes_in(d, pid))
                .and_then(|_| crate::proc::identity(pid))
                .and_then(|id| crate::proc::started_at_ms(id.start_ticks))
                .map(|started_at| Alone { started_at });
            found = tie(found, pid, reg, alone, folders);
            // A pi its evidence does not name a file for yet: its folder's files coming and
            // going may change that (a file it opens, a registration naming one).
            if let (Some(dir), None) = (&found.dir, &found.file) {
                watch.push((dir.clone(), ".jsonl"));
            }
        }
        // A pi that nothing ties to a session, in the pane named like a configured agent, is
        // taken to be that agent's (the README's layout), not listed as a second seat: the
        // agent's state stays its own file's, its liveness this pane's.
        let conventional = || {
            seats.iter().position(|s| {
                found.file.is_none()
                    && found.session_id.is_none()
                    && matches!(s.role, RowRole::Worker | RowRole::Coordinator)
                    && *key == (MuxKind::ROSTER, None)
                    && pane.session_name.as_deref() == Some(s.agent.as_str())
            })
        };
        if let Some(i) = shown.or_else(|| known(&found, seats)).or_else(conventional) {
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
        if known(&found, &out).is_some() {
            continue;
        }
        let untied = found.file.is_none() && found.session_id.is_none();
        if untied
            && *key == (MuxKind::ROSTER, None)
            && pane.session_name.as_deref().is_some_and(|name| {
                cwd.as_deref()
                    .is_some_and(|c| rosters.laid_out(c, name, own))
            })
        {
            continue;
        }
        out.push(pane_seat(key, pane, found));
    }
    watch.extend(rosters.seats_folders().map(|d| (d, ".json")));
    watch.sort();
    watch.dedup();
    out
}

/// The seat of a pane's pi no other seat shows.
fn pane_seat(key: &liveness::ServerKey, pane: &PaneInfo, found: PiSession) -> SeatSource {
    let session = pane.session_name.clone().unwrap_or_default();
    let session_refused = match (&found.dir, found.tie, found.folder_error) {
        (None, _, _) => Some(StateReason::SessionNotLocated),
        (Some(_), _, Some(e)) => Some(StateReason::SessionUnreadable(SessionError::Fs(e))),
        (Some(_), Some(SessionTie::Undecided), None) => Some(StateReason::SessionUndecided),
        _ => None,
    };
    SeatSource {
        project: "panes".into(),
        agent: crate::names::visible(&format!("{session} {}", pane.id)),
        role: RowRole::Seat,
        session_file: found.file,
        sessions_dir: found.dir,
        session_id: found.session_id,
        session_refused,
        tmux: TmuxRef {
            socket: key.1.clone(),
            session: pane.session_name.clone(),
        },
        agent_index: None,
        binding: None,
        pane: Some((key.clone(), pane.id.clone())),
        found_by: Some(found.found_by),
        tie: found.tie,
        candidates: found.candidates,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (no crate needed for a few thousand cases).
    struct Lcg(u64);

    impl Lcg {
        fn next(&mut self, n: u64) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (self.0 >> 33) % n.max(1)
        }
    }

    /// Over random pis (command line naming a file or not, a registration or not, open files,
    /// folder contents with their times, alone in the folder or not): the file a pi is tied to
    /// is always one its evidence names — the command line's, the registration's, the only file
    /// it holds open, or, alone in its folder, the only file written since it started that it
    /// could have begun — and never one that is merely in its folder, however new.
    #[test]
    fn no_pi_is_ever_tied_to_a_file_its_evidence_does_not_name() {
        let mut g = Lcg(7);
        let dir = PathBuf::from("/s/--work--");
        let started: Ms = 1_700_000_000_000;
        // File `i` began `i` minutes around the pi's start (some before, some after).
        let f = |i: u64| {
            let begun = crate::clock::format_iso(started + (i as i64 - 4) * 60_000);
            let name = begun.replace([':', '.'], "-");
            dir.join(format!("{name}_id{i}.jsonl"))
        };
        for _ in 0..5000 {
            let folder: Vec<SessionFile> = (0..g.next(5))
                .map(|i| SessionFile {
                    path: f(i + g.next(6)),
                    mtime_ms: started + (g.next(5) as i64 - 2) * 60_000,
                })
                .collect();
            let flag = (g.next(4) == 0).then(|| f(g.next(9)));
            let registered = match g.next(4) {
                0 => Some((Some(f(g.next(9))), "id".to_string())),
                1 => Some((None, "fresh".to_string())),
                _ => None,
            };
            let open: Vec<PathBuf> = (0..g.next(3)).map(|_| f(g.next(9))).collect();
            let unreadable = g.next(10) == 0;
            let alone = (g.next(2) == 0).then_some(Alone {
                started_at: started,
            });
            let found = PiSession {
                file: flag.clone(),
                dir: Some(dir.clone()),
                found_by: FoundBy::PiDefaultAgentDir,
                session_id: None,
                tie: flag.as_ref().map(|_| SessionTie::CommandLine),
                candidates: Vec::new(),
                folder_error: None,
            };
            let got = decide(
                found,
                registered.clone(),
                || open.clone(),
                |_| {
                    if unreadable {
                        Err(FsError::Unreadable)
                    } else {
                        Ok(folder.clone())
                    }
                },
                alone,
            );
            let eligible: Vec<&SessionFile> = folder
                .iter()
                .filter(|x| x.mtime_ms >= started - WRITTEN_SLACK_MS)
                .filter(|x| begun_at(&x.path).is_some_and(|b| b <= started + BEGUN_SLACK_MS))
                .collect();
            let proved = match got.tie {
                Some(SessionTie::CommandLine) => got.file == flag,
                Some(SessionTie::Registration) => {
                    flag.is_none() && Some(&got.file) == registered.as_ref().map(|r| &r.0)
                }
                Some(SessionTie::OpenFile) => {
                    flag.is_none()
                        && registered.is_none()
                        && open.len() == 1
                        && got.file.as_ref() == open.first()
                }
                Some(SessionTie::OnlyWritten) => {
                    alone.is_some()
                        && !unreadable
                        && open.len() != 1
                        && eligible.len() == 1
                        && got.file.as_ref() == Some(&eligible[0].path)
                }
                Some(SessionTie::NoneInFolder) => {
                    got.file.is_none() && folder.is_empty() && !unreadable
                }
                Some(SessionTie::Undecided) => {
                    got.file.is_none()
                        && (unreadable
                            || got.candidates
                                == folder.iter().map(|x| x.path.clone()).collect::<Vec<_>>())
                        && open.len() != 1
                        && (unreadable || alone.is_none() || eligible.len() != 1)
                }
                None => false,
            };
            assert!(
                proved,
                "flag {flag:?} reg {registered:?} open {open:?} folder {folder:?} alone {alone:?} → {got:?}"
            );
        }
    }

    #[test]
    fn a_file_name_says_when_its_session_began() {
        let p = Path::new("/s/2026-11-29T23-13-49-000Z_0193-ab.jsonl");
        assert_eq!(
            begun_at(p),
            crate::clock::parse_iso("2026-11-29T23:13:49.000Z")
        );
        assert_eq!(begun_at(Path::new("/s/odd_name.jsonl")), None);
        assert_eq!(
            begun_at(Path::new("/s/2026-11-29T23:13:49.000Z_x.jsonl")),
            None
        );
    }

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
