//! What a pass read, as folders to watch (docs/behaviour.md §3a): worked out from the options and
//! the pass's result, never by watching every file. Bounded: a few folders per roster, one per
//! session folder and per-cwd subfolder (the 64 most recently changed of each session root, as
//! the session index reads them), one per registration folder.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::files::Spec;
use crate::board::reason::StateReason;
use crate::clock::Ms;
use crate::fsguard::{self, Kind};
use crate::scan::{Scan, ScanOptions};

/// Per-cwd subfolders watched per session root (the most recently changed).
const MAX_SUBDIRS: usize = 64;
/// Entries looked at when listing a folder for its subfolders.
const MAX_LIST: usize = 4096;
/// A state that depends on time (a retry's backoff window) is looked at again this often.
const TIME_BOUND_EVERY: Duration = Duration::from_secs(1);
/// While tokens and cost are not counted to the end (a long transcript, `SIDEBAR_PASS_BUDGET`
/// a pass), the next pass goes on with them this soon: a 1 GiB transcript in about half a
/// minute, instead of one budget per full pass (30 s) while nothing changes.
const USAGE_EVERY: Duration = Duration::from_millis(500);

/// The subfolders of `dir` (not links), the most recently changed first, at most `max`.
fn subfolders(dir: &Path, max: usize) -> Vec<PathBuf> {
    let Ok(list) = fsguard::list_dir(dir, MAX_LIST) else {
        return Vec::new();
    };
    let mut dirs: Vec<_> = list
        .entries
        .into_iter()
        .filter(|e| e.kind == Kind::Dir)
        .collect();
    dirs.sort_by_key(|e| std::cmp::Reverse(e.mtime_ms));
    dirs.into_iter()
        .take(max)
        .map(|e| dir.join(e.name))
        .collect()
}

/// A session root and its per-cwd subfolders, for `.jsonl` files (and subfolders coming).
fn session_root(dir: &Path, out: &mut Vec<Spec>) {
    out.push(Spec::suffix(dir, ".jsonl"));
    for sub in subfolders(dir, MAX_SUBDIRS) {
        out.push(Spec::suffix(sub, ".jsonl"));
    }
}

/// Every folder the pass read, with the names in it that matter: `roots` and `seat_folders`.
pub(crate) fn folders(opts: &ScanOptions, scan: &Scan) -> Vec<Spec> {
    let mut out = roots(opts, scan);
    out.extend(seat_folders(scan));
    out.sort_by(|a, b| a.dir.cmp(&b.dir));
    out.dedup();
    out
}

/// The folders the options and the roster name, with their subfolders (this lists folders:
/// worked out again on a pass for a folder that came or went, or the timer's).
pub(crate) fn roots(opts: &ScanOptions, scan: &Scan) -> Vec<Spec> {
    let mut out = Vec::new();
    let data = &opts.data_root;
    out.push(Spec::only(data.join("board"), &["seen.json"]));
    out.push(Spec::suffix(data.join("discord"), ".json"));
    // Registrations: seats/<layout>/<seat>/registration.json.
    let seats = data.join("seats");
    out.push(Spec::all(&seats));
    for layout in subfolders(&seats, MAX_LIST) {
        for seat in subfolders(&layout, MAX_LIST) {
            out.push(Spec::only(seat, &["registration.json"]));
        }
        out.push(Spec::all(layout));
    }
    if let Some(cfg) = &scan.config {
        let state = crate::paths::state_dir(&cfg.root);
        out.push(Spec::only(&state, &[crate::paths::CONFIG_FILE]));
        out.push(Spec::suffix(crate::paths::seats_dir(&cfg.root), ".json"));
        out.push(Spec::all(crate::paths::logs_dir(&cfg.root)));
        out.push(Spec::all(crate::paths::reports_dir(&cfg.root)));
        out.push(Spec::suffix(crate::paths::jobs_dir(&cfg.root), ".json"));
    } else if let crate::scan::RootChoice::Exact(root) = &opts.root {
        // A named root whose roster cannot be read yet: its config appearing wakes the engine.
        out.push(Spec::only(
            crate::paths::state_dir(root),
            &[crate::paths::CONFIG_FILE],
        ));
    }
    for dir in &opts.session_dirs {
        session_root(dir, &mut out);
    }
    if let Some(repo) = &opts.repo {
        agent_roots(
            &repo.join(".pi").join("state"),
            |a| a.join("sessions"),
            &mut out,
        );
    }
    if let Some(fleet) = &opts.fleet {
        agent_roots(
            fleet,
            |a| a.join(".pi").join("agent").join("sessions"),
            &mut out,
        );
    }
    out
}

/// The folder of every session file a seat reads (pane seats' `--<cwd>--` folders, files a
/// registration names), for `.jsonl` files coming and going there. Reads nothing: worked out
/// from every pass's records.
pub(crate) fn seat_folders(scan: &Scan) -> Vec<Spec> {
    scan.records
        .iter()
        .filter_map(|r| {
            r.session_file
                .as_deref()
                .and_then(|f| Path::new(f).parent())
        })
        .map(|parent| Spec::suffix(parent, ".jsonl"))
        // What pane pis were judged by (`Scan::pane_folders`).
        .chain(
            scan.pane_folders
                .iter()
                .map(|(dir, suffix)| Spec::suffix(dir, suffix)),
        )
        .collect()
}

/// A folder of agent folders (a repo's `.pi/state`, a fleet): the folder itself, and each
/// agent's session root.
fn agent_roots(parent: &Path, sessions_of: impl Fn(&Path) -> PathBuf, out: &mut Vec<Spec>) {
    out.push(Spec::all(parent));
    for agent in subfolders(parent, 256) {
        session_root(&sessions_of(&agent), out);
    }
}

/// How soon a state shown may change with time alone: a seat retrying or compacting inside its
/// backoff window (every `TIME_BOUND_EVERY`), an observation turning stale at 60 s, a time ahead
/// of the clock coming due; and tokens and cost not yet counted to the end (`USAGE_EVERY`).
pub(crate) fn recheck(scan: &Scan, now: Ms) -> Option<Duration> {
    let mut soonest: Option<Ms> = None;
    let mut at = |t: Ms| {
        if t > now {
            soonest = Some(soonest.map_or(t, |s| s.min(t)));
        }
    };
    if scan.records.iter().any(|r| {
        matches!(
            r.state_reason,
            StateReason::Retrying | StateReason::Compacting
        )
    }) {
        at(now + TIME_BOUND_EVERY.as_millis() as Ms);
    }
    if scan.snapshot.usage.at_least {
        at(now + USAGE_EVERY.as_millis() as Ms);
    }
    for w in &scan.workers {
        if let Some(t) = w.observed_at {
            at(t + crate::board::intercom::STALE_AFTER_MS + 1);
            at(t);
        }
    }
    soonest.map(|t| Duration::from_millis((t - now) as u64))
}
