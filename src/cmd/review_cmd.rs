//! `intercom-pane review NAME` and `intercom-pane land NAME…` (docs/behaviour.md §11): one scan
//! for the roster and the board's states, then `review` (read-only) or `land` per worker.

use std::time::{Duration, Instant};

use crate::cli::{LandArgs, ReviewArgs};
use crate::cmd::exit::{LandExit, ReviewExit};
use crate::cmd::{options, out, refuse};
use crate::evidence::config::{Agent, IntercomConfig};
use crate::review::land::{self, Outcome, Step};
use crate::review::worker::{self, state_of};
use crate::review::{self, locate, MergeState, Review, Where};
use crate::scan::Scan;
use crate::states::BoardState;
use crate::text::sanitize;

/// The longest a review (with its overlap checks) or one landing may take.
const DEADLINE: Duration = Duration::from_secs(60);
/// Largest diff `--patch` prints, per part (committed, uncommitted).
const PATCH_CAP: usize = 8 << 20;

/// The roster of the pass and the agent named, or how the command ends.
fn roster_agent<'a, X: crate::exit_code::Refusable>(
    pass: &'a Scan,
    name: &str,
    unknown: X,
) -> Result<(&'a IntercomConfig, &'a Agent), X> {
    let Some(cfg) = pass.config.as_ref() else {
        use crate::snapshot::{RosterCode, RosterStatus};
        return Err(match &pass.snapshot.roster {
            RosterStatus::Unavailable { code, reason } if *code != RosterCode::NoRoot => {
                refuse(format!(
                    "the Intercom roster cannot be used ({}): {}",
                    code.as_str(),
                    sanitize(reason)
                ))
            }
            _ => refuse("no Intercom roster here (run `intercom-pane init`, or give --root)"),
        });
    };
    match cfg.find_by_name(name) {
        Some(a) => Ok((cfg, a)),
        None => {
            eprintln!(
                "intercom-pane: no worker named {:?}",
                crate::text::clip(&sanitize(name), 80)
            );
            Err(unknown)
        }
    }
}

pub(crate) fn run_review(args: &ReviewArgs) -> ReviewExit {
    let (_, pass) = match options::resolve_and_scan(&args.src) {
        Ok(x) => x,
        Err(e) => return refuse(e),
    };
    let (cfg, agent) = match roster_agent(&pass, &args.name, ReviewExit::UnknownWorker) {
        Ok(x) => x,
        Err(e) => return e,
    };
    let deadline = Instant::now() + DEADLINE;
    let (rev, found) =
        worker::review_with_overlaps(&pass, cfg, agent, args.into.as_deref(), deadline);
    if args.json {
        out(format_args!(
            "{}",
            crate::views::json::to_string_pretty(&rev).unwrap_or_default()
        ));
        return ReviewExit::Printed;
    }
    for line in render(&rev) {
        out(format_args!("{line}"));
    }
    if args.patch {
        if let Some(co) = &found {
            print_patch(&review::patch(co, &rev, PATCH_CAP, deadline));
        }
    }
    ReviewExit::Printed
}

/// The diff: as it is into a pipe (for `git apply`), each line sanitized on a terminal.
fn print_patch(bytes: &[u8]) {
    use std::io::IsTerminal;
    if std::io::stdout().is_terminal() {
        for line in String::from_utf8_lossy(bytes).lines() {
            out(format_args!("{}", sanitize(line)));
        }
    } else {
        crate::cmd::out_bytes(bytes);
    }
}

fn short(id: &str) -> &str {
    id.get(..10).unwrap_or(id)
}

fn lines(added: Option<u64>, removed: Option<u64>, binary: bool) -> String {
    match (added, removed) {
        _ if binary => "binary".into(),
        (Some(a), Some(r)) => format!("+{a} −{r}"),
        _ => "lines unknown".into(),
    }
}

/// The human page of a review (every string sanitized).
pub(crate) fn render(r: &Review) -> Vec<String> {
    let s = |x: &str| sanitize(x);
    let mut v = Vec::new();
    let state = r.state.as_deref().unwrap_or("not on the board");
    let Some(co) = &r.checkout else {
        v.push(format!("{} ({state}): nothing to review", s(&r.worker)));
        if let Some(n) = &r.note {
            v.push(format!("  {}", s(n)));
        }
        return v;
    };
    v.push(format!(
        "{} ({state}) · {} · {}{}",
        s(&r.worker),
        r.branch
            .as_deref()
            .map_or("detached HEAD".into(), |b| format!("branch {}", s(b))),
        if r.worktree { "worktree " } else { "checkout " },
        s(co)
    ));
    if let Some(b) = &r.base {
        let from = match r.base_source {
            Some(review::BaseSource::Spawn) => "recorded at spawn",
            _ => "merge-base",
        };
        let moved = match (r.target.as_deref(), r.base_moved_by) {
            (Some(t), Some(n)) if n > 0 => format!(" · {} moved on by {n} commit(s)", s(t)),
            (Some(t), Some(_)) => format!(" · {} has not moved", s(t)),
            _ => String::new(),
        };
        v.push(format!("  base {} ({from}){moved}", short(b)));
    }
    let into = r.target.as_deref().map(s).unwrap_or_else(|| "?".into());
    let merge = match r.merge.state {
        MergeState::UpToDate => "nothing to land (already in it)".to_string(),
        MergeState::FastForward => "fast-forward".into(),
        MergeState::Clean => "a merge commit, no conflicts".into(),
        MergeState::Conflicts => format!(
            "CONFLICTS in {}",
            r.merge
                .conflicts
                .iter()
                .map(|f| s(f))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        MergeState::Unknown => format!(
            "unknown ({})",
            s(r.merge.detail.as_deref().unwrap_or("not checked"))
        ),
    };
    v.push(format!("  merge into {into}: {merge}"));
    let t = &r.totals;
    v.push(format!(
        "  +{} −{} · {} file(s) · {} committed · {} uncommitted · {} untracked",
        t.added, t.removed, t.files, t.committed, t.uncommitted, t.untracked
    ));
    if r.commits_total > 0 {
        v.push(format!("  commits ({}):", r.commits_total));
        for c in &r.commits {
            v.push(format!(
                "    {}  {}  {}",
                short(&c.id),
                c.time,
                s(&c.subject)
            ));
        }
    }
    if !r.files.is_empty() {
        v.push("  files:".into());
        for f in &r.files {
            let place = match f.place {
                Where::Committed => "committed  ",
                Where::Uncommitted => "uncommitted",
                Where::Untracked => "untracked  ",
            };
            v.push(format!(
                "    {place}  {:>14}  {}",
                lines(f.added, f.removed, f.binary),
                s(&f.path)
            ));
        }
        if r.files_truncated {
            v.push(format!("    (only the first {} listed)", review::MAX_FILES));
        }
    }
    for o in &r.overlaps {
        v.push(format!(
            "  OVERLAP: {} and {} both changed {}",
            s(&o.workers[0]),
            s(&o.workers[1]),
            o.files.iter().map(|f| s(f)).collect::<Vec<_>>().join(", ")
        ));
    }
    if let Some(n) = &r.note {
        v.push(format!("  note: {}", s(n)));
    }
    v
}

/// Why the worker may not be landed now (by the board and the roster), if it may not.
fn not_settled(pass: &Scan, a: &Agent) -> Option<String> {
    if let Some(j) = &a.close_job {
        if j.state.is_pending() || j.state.is_fenced() {
            return Some(format!("its close job is {}", j.state.as_str()));
        }
    }
    match state_of(pass, a) {
        Some(BoardState::Working) => Some("it is working (land it once it settled)".into()),
        Some(BoardState::Unknown) => Some("the board cannot tell whether it settled".into()),
        _ => None,
    }
}

pub(crate) fn run_land(args: &LandArgs) -> LandExit {
    let (_, pass) = match options::resolve_and_scan(&args.src) {
        Ok(x) => x,
        Err(e) => return refuse(e),
    };
    let mut agents = Vec::new();
    for name in &args.names {
        match roster_agent(&pass, name, LandExit::UnknownWorker) {
            Ok((_, a)) if a.coordinator => return refuse("the coordinator is not landed"),
            Ok((cfg, a)) => agents.push((cfg, a)),
            Err(e) => return e,
        }
    }
    let mut steps: Vec<Step> = Vec::new();
    let mut stopped = false;
    let mut fresh: Option<Scan> = None;
    for (cfg, a) in agents {
        if stopped {
            steps.push(Step::new(&a.name, Outcome::NotTried, None));
            continue;
        }
        let deadline = Instant::now() + DEADLINE;
        // Right before each worker after the first, the board is read again: a worker that
        // started working (or a close job opened) while the ones before it landed is refused.
        if !steps.is_empty() {
            match options::resolve_and_scan(&args.src) {
                Ok((_, p)) => fresh = Some(p),
                Err(e) => {
                    let why = format!("cannot read the board again: {e}");
                    steps.push(Step::new(&a.name, Outcome::Refused, Some(why)));
                    stopped = true;
                    continue;
                }
            }
        }
        let board = fresh.as_ref().unwrap_or(&pass);
        let now = board
            .config
            .as_ref()
            .and_then(|c| c.find_by_session(&a.session_id));
        let settled = match now {
            Some(now) => not_settled(board, now),
            None => Some("it is no longer in the roster".into()),
        };
        let step = if let Some(why) = settled {
            Step::new(&a.name, Outcome::Refused, Some(why))
        } else {
            let (folder, tree) = locate::folder_of(&cfg.root, a);
            match locate::checkout(&folder, tree.as_ref(), deadline) {
                Ok(co) => {
                    let how = land::How {
                        dry_run: args.dry_run,
                        rebase: args.rebase,
                    };
                    land::land_one(&a.name, &co, args.into.as_deref(), how, deadline)
                }
                Err(m) => Step::new(&a.name, Outcome::Refused, Some(m.to_string())),
            }
        };
        stopped = step.outcome.stops_queue();
        steps.push(step);
    }
    let exit = if steps.iter().any(|s| s.outcome == Outcome::Failed) {
        LandExit::Failed
    } else if stopped {
        LandExit::NotLanded
    } else {
        LandExit::Landed
    };
    if args.json {
        let receipt = LandReceipt {
            version: 1,
            dry_run: args.dry_run,
            steps,
        };
        out(format_args!(
            "{}",
            crate::views::json::to_string_pretty(&receipt).unwrap_or_default()
        ));
    } else {
        for s in &steps {
            out(format_args!("{}", step_line(s)));
        }
    }
    exit
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct LandReceipt {
    version: u32,
    dry_run: bool,
    steps: Vec<Step>,
}

fn step_line(st: &Step) -> String {
    let s = |x: &str| sanitize(x);
    let what = match st.outcome {
        Outcome::FastForward => "landed (fast-forward)",
        Outcome::Merged => "landed (merge commit)",
        Outcome::Rebased => "landed (rebased onto it, then fast-forward)",
        Outcome::UpToDate => "already landed",
        Outcome::WouldFastForward => "would land (fast-forward)",
        Outcome::WouldMerge => "would land (merge commit)",
        Outcome::WouldRebase => "would land (rebased onto it, then fast-forward)",
        Outcome::Refused => "refused",
        Outcome::Failed => "FAILED",
        Outcome::NotTried => "not tried (the queue stopped)",
    };
    let mut line = format!("{}: {what}", s(&st.worker));
    if let (Some(b), Some(i)) = (&st.branch, &st.into) {
        line.push_str(&format!(" · {} → {}", s(b), s(i)));
    }
    if let (Some(b), Some(a)) = (&st.before, &st.after) {
        if b != a {
            line.push_str(&format!(" · {}..{}", short(b), short(a)));
        }
    }
    if let Some(d) = &st.detail {
        line.push_str(&format!(" · {}", s(d)));
    }
    line
}

/// One receipt line naming the uncommitted changes in the checkout of the worker `name` (none
/// when it has none, or no checkout, or no roster): what `close-worker` adds to its receipt.
pub(crate) fn uncommitted_note(opts: &crate::scan::ScanOptions, name: &str) -> Option<String> {
    use crate::scan::RootChoice;
    let root = match &opts.root {
        RootChoice::Exact(p) => p.clone(),
        RootChoice::Discover(start) => crate::evidence::config::discover_root(start).ok()??,
        RootChoice::Skip => return None,
    };
    let cfg = crate::evidence::config::load(&root).ok()?;
    let a = cfg.find_by_name(name)?;
    let deadline = Instant::now() + Duration::from_secs(10);
    let (folder, tree) = locate::folder_of(&cfg.root, a);
    let co = locate::checkout(&folder, tree.as_ref(), deadline).ok()?;
    let files = review::uncommitted(&co.dir, true, deadline).ok()?;
    (!files.is_empty()).then(|| {
        format!(
            "  note: its checkout {} has {} uncommitted file(s): {} (see `intercom-pane review {}`)\n",
            sanitize(&co.dir.display().to_string()),
            files.len(),
            review::name_list(&files),
            crate::text::shell_quote(&sanitize(&a.name))
        )
    })
}

/// The sidebar's Changes column: every roster worker's review (no merge check), by session id.
pub(crate) struct GitChanges {
    pub root: crate::scan::RootChoice,
}

/// Lines of the review view's diff at most (the rest is said, not shown).
const VIEW_DIFF_LINES: usize = 5000;
/// Largest diff the review view reads, per part.
const VIEW_DIFF_CAP: usize = 1 << 20;

impl GitChanges {
    fn roster(&self) -> Option<IntercomConfig> {
        use crate::scan::RootChoice;
        let root = match &self.root {
            RootChoice::Exact(p) => Some(p.clone()),
            RootChoice::Discover(start) => {
                crate::evidence::config::discover_root(start).ok().flatten()
            }
            RootChoice::Skip => None,
        };
        root.and_then(|r| crate::evidence::config::load(&r).ok())
    }
}

impl crate::ui::ports::ChangesSource for GitChanges {
    fn review(&self, row_id: &str) -> Option<crate::ui::changes::ReviewText> {
        let cfg = self.roster()?;
        let a = cfg.workers().find(|a| a.session_id == row_id)?;
        let deadline = Instant::now() + DEADLINE;
        let (folder, tree) = locate::folder_of(&cfg.root, a);
        let co = locate::checkout(&folder, tree.as_ref(), deadline).ok()?;
        let r = review::review(&a.name, None, &co, None, false, deadline);
        let mut lines = render(&r);
        // The row shows the board's state; the view reads git without the merge check.
        if let Some(first) = lines.first_mut() {
            *first = first.replacen(" (not on the board)", "", 1);
        }
        lines.retain(|l| !l.starts_with("  merge into "));
        // The page's own file list is the view's: the summary lines stay above it.
        let files_at = lines
            .iter()
            .position(|l| l == "  files:")
            .unwrap_or(lines.len());
        let files: Vec<String> = lines
            .drain(files_at..)
            .skip(1)
            .map(|l| l.trim_start().to_string())
            .collect();
        let patch = review::patch(&co, &r, VIEW_DIFF_CAP, deadline);
        let text = String::from_utf8_lossy(&patch);
        let total = text.lines().count();
        let mut diff: Vec<String> = text
            .lines()
            .take(VIEW_DIFF_LINES)
            .map(str::to_string)
            .collect();
        if total > VIEW_DIFF_LINES {
            diff.push(format!(
                "… {} more lines (`intercom-pane review --patch`)",
                total - VIEW_DIFF_LINES
            ));
        }
        Some(crate::ui::changes::ReviewText {
            summary: lines.iter().map(|l| l.trim_start().to_string()).collect(),
            files,
            diff,
        })
    }

    fn read(
        &self,
        only: Option<&std::collections::BTreeSet<String>>,
    ) -> std::collections::BTreeMap<String, crate::ui::changes::RowChanges> {
        let mut out = std::collections::BTreeMap::new();
        let Some(cfg) = self.roster() else {
            return out;
        };
        let deadline = Instant::now() + DEADLINE;
        let asked =
            |a: &&crate::evidence::config::Agent| only.is_none_or(|o| o.contains(&a.session_id));
        for a in cfg.workers().filter(asked) {
            let (folder, tree) = locate::folder_of(&cfg.root, a);
            let Ok(co) = locate::checkout(&folder, tree.as_ref(), deadline) else {
                continue;
            };
            let r = review::review(&a.name, None, &co, None, false, deadline);
            out.insert(
                a.session_id.clone(),
                crate::ui::changes::RowChanges {
                    added: r.totals.added,
                    removed: r.totals.removed,
                    files: r.totals.files,
                    uncommitted: r
                        .files
                        .iter()
                        .filter(|f| f.place != Where::Committed)
                        .map(|f| f.path.as_str())
                        .collect::<std::collections::BTreeSet<_>>()
                        .len() as u64,
                    repo: co.common.display().to_string(),
                    paths: r.files.into_iter().map(|f| f.path).collect(),
                },
            );
        }
        out
    }
}
