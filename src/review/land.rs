//! `land`: bring one settled worker's branch into the branch it lands on, in the main checkout,
//! only when nothing can go wrong: the main checkout has that branch checked out, holds no
//! change outside `.pi-intercom/` and no merge, rebase, cherry-pick or revert in progress; the
//! worker's checkout holds no uncommitted change to a tracked file; `git merge-tree` finds no
//! conflict; and neither tip moved since those checks. Then a fast-forward, else a merge commit
//! of exactly the commit checked, or with `--rebase` the worker's commits replayed onto the
//! target (`git replay`, which touches no checkout and leaves the worker's branch as it is) and
//! the target fast-forwarded to them. Never a force, never a reset: every tip before is an
//! ancestor of a tip after.

use std::path::Path;
use std::time::Instant;

use serde::Serialize;

use super::locate::Checkout;
use super::{merge_check, MergeState};
use crate::git;
use crate::text::sanitize;

/// How one worker's landing ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Outcome {
    /// Fast-forwarded.
    FastForward,
    /// A merge commit was made.
    Merged,
    /// `--rebase`: its commits were replayed onto the target, which was fast-forwarded.
    Rebased,
    /// Every commit was there already.
    UpToDate,
    /// `--dry-run`: it would fast-forward.
    WouldFastForward,
    /// `--dry-run`: it would make a merge commit.
    WouldMerge,
    /// `--dry-run --rebase`: it would replay its commits onto the target.
    WouldRebase,
    /// Not done, nothing changed (`detail` says why; `conflicts` names files).
    Refused,
    /// git failed while merging; the merge was undone (`detail` says).
    Failed,
    /// An earlier worker in the queue stopped it.
    NotTried,
}

impl Outcome {
    pub(crate) fn stops_queue(self) -> bool {
        matches!(self, Outcome::Refused | Outcome::Failed)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Step {
    pub worker: String,
    pub outcome: Outcome,
    pub branch: Option<String>,
    pub into: Option<String>,
    /// The landed commit (the worker's tip as checked).
    pub commit: Option<String>,
    /// The target's tip before and after.
    pub before: Option<String>,
    pub after: Option<String>,
    pub conflicts: Vec<String>,
    pub detail: Option<String>,
}

impl Step {
    pub(crate) fn new(worker: &str, outcome: Outcome, detail: Option<String>) -> Step {
        Step {
            worker: worker.to_string(),
            outcome,
            branch: None,
            into: None,
            commit: None,
            before: None,
            after: None,
            conflicts: Vec::new(),
            detail,
        }
    }
}

fn changed_tracked(dir: &Path, deadline: Instant) -> Result<Vec<String>, git::GitError> {
    super::uncommitted(dir, false, deadline)
}

/// A merge, rebase, cherry-pick or revert in progress in the checkout `dir`.
fn operation_in_progress(dir: &Path, deadline: Instant) -> Option<&'static str> {
    for (head, what) in [
        ("MERGE_HEAD", "a merge"),
        ("CHERRY_PICK_HEAD", "a cherry-pick"),
        ("REVERT_HEAD", "a revert"),
    ] {
        if git::commit_id(dir, head, deadline).is_some() {
            return Some(what);
        }
    }
    for d in ["rebase-merge", "rebase-apply"] {
        let p = git::line(
            dir,
            &["rev-parse", "--path-format=absolute", "--git-path", d],
            deadline,
        );
        if p.is_ok_and(|p| crate::fsguard::kind(Path::new(&p)).is_ok()) {
            return Some("a rebase");
        }
    }
    None
}

fn list(files: &[String]) -> String {
    super::name_list(files)
}

/// Land the worker whose checkout is `co` into `into` (default: the main checkout's branch).
/// How to land.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct How {
    pub dry_run: bool,
    /// Replay the worker's commits onto the target instead of a merge commit.
    pub rebase: bool,
}

pub(crate) fn land_one(
    worker: &str,
    co: &Checkout,
    into: Option<&str>,
    how: How,
    deadline: Instant,
) -> Step {
    let refuse = |d: String| Step::new(worker, Outcome::Refused, Some(d));
    let Some(branch) = co.branch.clone() else {
        return refuse("its checkout has no branch checked out (detached HEAD)".into());
    };
    let Some(main) = co.main.clone() else {
        return refuse("the repository has no main checkout to merge in".into());
    };
    if same_dir(&main, &co.dir) {
        return refuse("it works in the main checkout itself: nothing to land".into());
    }
    let Some(target) = into.map(str::to_string).or_else(|| co.main_branch.clone()) else {
        return refuse("the main checkout has no branch checked out (give --into)".into());
    };
    if !git::is_branch_name(&main, &target, deadline) {
        return refuse(format!("{:?} is not a branch name", sanitize(&target)));
    }
    let mut step = Step::new(worker, Outcome::Refused, None);
    step.branch = Some(branch.clone());
    step.into = Some(target.clone());
    let refused = |mut s: Step, d: String| {
        s.detail = Some(d);
        s
    };
    if target == branch {
        return refused(step, "it works on the branch it would land on".into());
    }
    if co.main_branch.as_deref() != Some(target.as_str()) {
        return refused(
            step,
            format!(
                "the main checkout has {} checked out, not {} (check it out there first)",
                sanitize(co.main_branch.as_deref().unwrap_or("no branch")),
                sanitize(&target)
            ),
        );
    }
    match changed_tracked(&co.dir, deadline) {
        Ok(f) if !f.is_empty() => {
            return refused(
                step,
                format!("its checkout has uncommitted changes: {}", list(&f)),
            )
        }
        Ok(_) => {}
        Err(e) => return refused(step, format!("cannot read its checkout: {e}")),
    }
    if let Some(op) = operation_in_progress(&main, deadline) {
        return refused(step, format!("the main checkout is in the middle of {op}"));
    }
    match changed_tracked(&main, deadline) {
        Ok(f) => {
            let f: Vec<String> = f
                .into_iter()
                .filter(|p| !p.starts_with(".pi-intercom/"))
                .collect();
            if !f.is_empty() {
                return refused(
                    step,
                    format!("the main checkout has uncommitted changes: {}", list(&f)),
                );
            }
        }
        Err(e) => return refused(step, format!("cannot read the main checkout: {e}")),
    }
    let tip_of = |b: &str| git::commit_id(&main, &format!("refs/heads/{b}"), deadline);
    let (Some(commit), Some(before)) = (tip_of(&branch), tip_of(&target)) else {
        return refused(step, "a branch is missing".into());
    };
    step.commit = Some(commit.clone());
    step.before = Some(before.clone());
    let m = merge_check(&main, &commit, &before, deadline);
    let ff = match m.state {
        MergeState::UpToDate => {
            step.outcome = Outcome::UpToDate;
            step.after = Some(before);
            return step;
        }
        MergeState::FastForward => true,
        MergeState::Clean => false,
        MergeState::Conflicts => {
            step.detail = Some(format!("merging would conflict in {}", list(&m.conflicts)));
            step.conflicts = m.conflicts;
            return step;
        }
        MergeState::Unknown => {
            let why = m.detail.unwrap_or_default();
            return refused(step, format!("cannot check the merge: {}", sanitize(&why)));
        }
    };
    let rebase = how.rebase && !ff;
    if rebase && git::version(deadline).is_none_or(|v| v < (2, 44)) {
        return refused(step, "--rebase needs git 2.44 or later (git replay)".into());
    }
    if how.dry_run {
        step.outcome = match (ff, rebase) {
            (true, _) => Outcome::WouldFastForward,
            (false, true) => Outcome::WouldRebase,
            (false, false) => Outcome::WouldMerge,
        };
        return step;
    }
    // Right before acting: both tips and the main checkout's branch are still what was checked.
    let main_now = git::line(&main, &["symbolic-ref", "--quiet", "HEAD"], deadline).ok();
    if tip_of(&branch).as_deref() != Some(commit.as_str())
        || tip_of(&target).as_deref() != Some(before.as_str())
        || main_now.as_deref() != Some(format!("refs/heads/{target}").as_str())
    {
        return refused(
            step,
            "a branch moved while it was checked: try again".into(),
        );
    }
    if rebase {
        return match replayed(&main, &target, &commit, &before, deadline) {
            Ok(new_tip) => {
                step.commit = Some(new_tip);
                let mut s = merge(step, &main, true, deadline);
                if s.outcome == Outcome::FastForward {
                    s.outcome = Outcome::Rebased;
                    s.detail = Some(format!(
                        "its commits were replayed onto {}; branch {} stays at {}",
                        sanitize(&target),
                        sanitize(&branch),
                        commit.get(..10).unwrap_or(&commit)
                    ));
                }
                untracked_note(&mut s, co, deadline);
                s
            }
            Err(why) => refused(step, why.to_string()),
        };
    }
    let mut s = merge(step, &main, ff, deadline);
    untracked_note(&mut s, co, deadline);
    s
}

/// A landing says what it left behind: untracked files of the worker's checkout (tracked
/// changes were refused before).
fn untracked_note(step: &mut Step, co: &Checkout, deadline: Instant) {
    if !matches!(
        step.outcome,
        Outcome::FastForward | Outcome::Merged | Outcome::Rebased
    ) {
        return;
    }
    if let Ok(left) = super::uncommitted(&co.dir, true, deadline) {
        if !left.is_empty() {
            let note = format!(
                "{} untracked file(s) in its checkout were not landed: {}",
                left.len(),
                list(&left)
            );
            step.detail = Some(match step.detail.take() {
                Some(d) => format!("{d}; {note}"),
                None => note,
            });
        }
    }
}

/// Why the worker's commits were not replayed (nothing changed).
#[derive(Debug)]
enum ReplayError {
    NoMergeBase(git::GitError),
    Refused {
        target: String,
        err: git::GitError,
    },
    /// `git replay` printed something other than the one ref update asked for.
    Unexpected,
}

impl std::fmt::Display for ReplayError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReplayError::NoMergeBase(e) => write!(f, "no merge-base: {e}"),
            ReplayError::Refused { target, err } => write!(
                f,
                "its commits cannot be replayed onto {}: {err}",
                sanitize(target)
            ),
            ReplayError::Unexpected => {
                f.write_str("git replay answered something unexpected: nothing changed")
            }
        }
    }
}

/// The worker's commits since the merge-base replayed onto `target` (at `before`): the new tip.
/// Only new objects are written; no ref and no checkout changes.
fn replayed(
    main: &Path,
    target: &str,
    commit: &str,
    before: &str,
    deadline: Instant,
) -> Result<String, ReplayError> {
    let base = git::line(
        main,
        &["merge-base", "--end-of-options", before, commit],
        deadline,
    )
    .map_err(ReplayError::NoMergeBase)?;
    let refname = format!("refs/heads/{target}");
    let range = format!("{base}..{commit}");
    let out =
        git::line(main, &["replay", "--advance", &refname, &range], deadline).map_err(|err| {
            ReplayError::Refused {
                target: target.to_string(),
                err,
            }
        })?;
    // `update REF NEW OLD` (the input `git update-ref --stdin` takes; a ref name has no space).
    let fields: Vec<&str> = out.split_whitespace().collect();
    match fields.as_slice() {
        ["update", r, new, old]
            if *r == refname && *old == before && crate::git::parse::is_object_id(new) =>
        {
            Ok((*new).to_string())
        }
        _ => Err(ReplayError::Unexpected),
    }
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

/// The merge itself, in the main checkout, of exactly `step.commit`.
fn merge(mut step: Step, main: &Path, ff: bool, deadline: Instant) -> Step {
    let commit = step.commit.clone().unwrap_or_default();
    let before = step.before.clone().unwrap_or_default();
    let msg = format!(
        "Merge branch '{}' (landed by intercom-pane)",
        sanitize(step.branch.as_deref().unwrap_or(""))
    );
    let mut args = vec![
        "merge",
        "--quiet",
        "--no-stat",
        "--no-edit",
        "--no-verify",
        "--no-autostash",
        "--no-squash",
    ];
    if ff {
        args.push("--ff-only");
    } else {
        args.extend(["--no-ff", "-m", &msg]);
    }
    args.extend(["--end-of-options", &commit]);
    let ran = git::run(main, &args, deadline, git::OUT_CAP);
    let after = git::commit_id(main, "HEAD", deadline);
    if let Err(e) = ran {
        // Never leave a merge half done: a merge git started and stopped is taken back.
        let undone = if git::commit_id(main, "MERGE_HEAD", deadline).is_some() {
            match git::run(main, &["merge", "--abort"], deadline, git::OUT_CAP) {
                Ok(_) => "; the merge was undone (git merge --abort)".to_string(),
                Err(a) => {
                    format!("; git merge --abort failed too: {a} (finish or abort it by hand)")
                }
            }
        } else {
            String::new()
        };
        step.outcome = Outcome::Failed;
        step.after = after;
        step.detail = Some(format!("git merge failed: {e}{undone}"));
        return step;
    }
    let kept = after.as_deref().is_some_and(|a| {
        git::is_ancestor(main, &before, a, deadline) == Some(true)
            && git::is_ancestor(main, &commit, a, deadline) == Some(true)
    });
    step.after = after;
    if kept {
        step.outcome = if ff {
            Outcome::FastForward
        } else {
            Outcome::Merged
        };
    } else {
        step.outcome = Outcome::Failed;
        step.detail =
            Some("after the merge, a tip from before is not in the branch: look at it".into());
    }
    step
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_file_lists_are_cut_and_sanitized() {
        let files: Vec<String> = (0..12).map(|i| format!("f{i}\x1b[2J")).collect();
        let l = list(&files);
        assert!(l.starts_with("f0, f1, "), "{l}");
        assert!(l.ends_with("and 2 more"), "{l}");
        assert!(!l.contains('\x1b'));
        assert!(Outcome::Refused.stops_queue() && !Outcome::UpToDate.stops_queue());
    }
}
