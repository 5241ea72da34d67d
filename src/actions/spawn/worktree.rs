//! The git worktree `spawn --worktree` gives a worker, and what `retire --remove-worktree` checks
//! before it removes one. Every git call is an argv (never a shell), under a deadline, with git's
//! own variables that could point it elsewhere removed. The main checkout's files are never
//! touched: `git worktree add` writes only the new folder and the repository's own records.
//!
//! Where: `<root>/.pi-intercom/worktrees/<name>` (docs/behaviour.md §10): under the root, as the
//! roster's `projectDirectory` must be, and in the folder whose `.gitignore` keeps it out of the
//! main checkout's status.

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::actions::launch_spec::Worktree;
use crate::fsguard;
use crate::git::GitError;
use crate::text::sanitize;

/// Why a worktree was not planned, made, read or removed.
#[derive(Debug)]
pub(crate) enum WorktreeError {
    /// A git call failed (`doing`: what it was for, in the person's words; empty: said as is).
    Git {
        doing: &'static str,
        err: GitError,
    },
    BadBranch(String),
    PathExists(PathBuf),
    /// git still records a worktree at the path.
    StaleRecord(PathBuf),
    CheckedOut {
        branch: String,
        at: String,
    },
    /// The folder that holds the worktrees could not be made.
    Folder(crate::store::StoreError),
    Checkout(crate::review::locate::Missing),
    /// The branch this spawn created could not be removed again.
    BranchKept {
        branch: String,
        err: GitError,
    },
}

impl std::fmt::Display for WorktreeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WorktreeError::Git { doing: "", err } => write!(f, "{err}"),
            WorktreeError::Git { doing, err } => write!(f, "{doing}: {err}"),
            WorktreeError::BadBranch(b) => write!(
                f,
                "{:?} is not a valid git branch name (give --worktree BRANCH)",
                sanitize(b)
            ),
            WorktreeError::PathExists(p) => {
                write!(f, "{} exists: the worktree needs a new folder", p.display())
            }
            WorktreeError::StaleRecord(p) => write!(
                f,
                "git still records a worktree at {} (run `git worktree prune` if it is gone)",
                p.display()
            ),
            WorktreeError::CheckedOut { branch, at } => write!(
                f,
                "branch {} is checked out in {}",
                sanitize(branch),
                sanitize(at)
            ),
            WorktreeError::Folder(e) => write!(f, "{e}"),
            WorktreeError::Checkout(e) => write!(f, "{e}"),
            WorktreeError::BranchKept { branch, err } => {
                write!(f, "branch {} kept: {err}", sanitize(branch))
            }
        }
    }
}

/// One git call in `dir` (`crate::git`); its stdout when it exited 0, else what it said.
fn git(dir: &Path, args: &[&str], deadline: Instant) -> Result<String, GitError> {
    crate::git::run(dir, args, deadline, crate::git::OUT_CAP)
        .map(|out| String::from_utf8_lossy(&out).into_owned())
}

/// A git failure, said with what it was for.
fn failed(doing: &'static str) -> impl FnOnce(GitError) -> WorktreeError {
    move |err| WorktreeError::Git { doing, err }
}

/// A worktree about to be created (or taken over from a spawn that died after creating it).
#[derive(Debug, Clone)]
pub(crate) struct Planned {
    pub repo: PathBuf,
    pub path: PathBuf,
    pub branch: String,
    /// The branch exists already (it is checked out, not created).
    pub branch_exists: bool,
    /// The commit a new branch starts from: the root checkout's HEAD.
    pub base: String,
}

/// Check everything `--worktree` refuses, creating nothing: the root in a git checkout, a valid
/// branch name that no worktree has checked out, a path that does not exist and that git has no
/// stale record of.
pub(crate) fn plan(
    root: &Path,
    path: &Path,
    branch: &str,
    deadline: Instant,
) -> Result<Planned, WorktreeError> {
    let repo = git(root, &["rev-parse", "--show-toplevel"], deadline)
        .map_err(failed("--worktree needs the root in a git checkout"))?;
    let repo = PathBuf::from(repo.trim_end_matches('\n'));
    if branch.starts_with('-')
        || git(root, &["check-ref-format", "--branch", branch], deadline).is_err()
    {
        return Err(WorktreeError::BadBranch(branch.to_string()));
    }
    if !matches!(fsguard::kind(path), Err(fsguard::FsError::NotFound)) {
        return Err(WorktreeError::PathExists(path.to_path_buf()));
    }
    let listed =
        git(&repo, &["worktree", "list", "--porcelain", "-z"], deadline).map_err(failed(""))?;
    let want_ref = format!("refs/heads/{branch}");
    let mut current: Option<&str> = None;
    for field in listed.split('\0') {
        if let Some(p) = field.strip_prefix("worktree ") {
            current = Some(p);
            if Path::new(p) == path {
                return Err(WorktreeError::StaleRecord(path.to_path_buf()));
            }
        } else if field.strip_prefix("branch ") == Some(want_ref.as_str()) {
            return Err(WorktreeError::CheckedOut {
                branch: branch.to_string(),
                at: current.unwrap_or("another worktree").to_string(),
            });
        }
    }
    let branch_exists = git(
        &repo,
        &["show-ref", "--verify", "--quiet", &want_ref],
        deadline,
    )
    .is_ok();
    let base = git(root, &["rev-parse", "--verify", "HEAD^{commit}"], deadline)
        .map_err(failed("the root checkout has no commit to start from"))?;
    Ok(Planned {
        repo,
        path: path.to_path_buf(),
        branch: branch.to_string(),
        branch_exists,
        base: base.trim().to_string(),
    })
}

/// Create the planned worktree.
pub(crate) fn create(p: &Planned, deadline: Instant) -> Result<Worktree, WorktreeError> {
    let path = p.path.to_string_lossy().into_owned();
    let args: Vec<&str> = if p.branch_exists {
        vec!["worktree", "add", "--", &path, &p.branch]
    } else {
        vec!["worktree", "add", "-b", &p.branch, "--", &path, &p.base]
    };
    git(&p.repo, &args, deadline).map_err(failed("git worktree add failed"))?;
    Ok(Worktree {
        path: p.path.clone(),
        branch: p.branch.clone(),
        created_branch: !p.branch_exists,
        base: p.base.clone(),
    })
}

/// The worktree at `w.path` is a checkout of `w.branch` (taking over one a dead spawn created).
pub(crate) fn is_checkout_of(w: &Worktree, deadline: Instant) -> bool {
    git(&w.path, &["symbolic-ref", "--quiet", "HEAD"], deadline)
        .is_ok_and(|r| r.trim() == format!("refs/heads/{}", w.branch))
}

/// Work a worktree holds that is not safe in its base.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Work {
    /// Changed, staged or untracked files (`git status`), exact names.
    pub uncommitted: Vec<String>,
    /// Commits of its HEAD not in the base, `id subject` (at most 20, newest first).
    pub commits: Vec<String>,
    /// How many commits of its HEAD are not in the base.
    pub unmerged_commits: u64,
    /// What "the base" is: the main checkout's branch, else every other branch and remote.
    pub base: String,
    /// The branch its HEAD is on (none: detached), which keeps those commits when it goes.
    pub on_branch: Option<String>,
}

impl Work {
    pub(crate) fn is_empty(&self) -> bool {
        self.uncommitted.is_empty() && self.unmerged_commits == 0
    }
}

/// What `w` holds that is not in its base: the branch the main checkout has checked out (where
/// `land` brings it), else any other branch or remote-tracking branch.
pub(crate) fn work_in(w: &Worktree, deadline: Instant) -> Result<Work, WorktreeError> {
    let uncommitted = crate::review::uncommitted(&w.path, true, deadline).map_err(failed(""))?;
    let co = crate::review::locate::checkout(&w.path, Some(w), deadline)
        .map_err(WorktreeError::Checkout)?;
    let mut range = vec!["HEAD".to_string(), "--not".to_string()];
    let base = match co.main_branch.as_deref() {
        Some(m) if co.branch.as_deref() != Some(m) => {
            range.push(format!("refs/heads/{m}"));
            m.to_string()
        }
        _ => {
            // `--exclude` before `--branches` takes the name without `refs/heads/` (git's
            // rule); a branch name holds no glob character (`git check-ref-format`).
            if let Some(b) = &co.branch {
                range.push(format!("--exclude={b}"));
            }
            range.extend(["--branches".to_string(), "--remotes".to_string()]);
            "any other branch or remote".to_string()
        }
    };
    let mut count_args = vec!["rev-list".to_string(), "--count".to_string()];
    count_args.extend(range.iter().cloned());
    let count = git(&w.path, &as_strs(&count_args), deadline).map_err(failed(""))?;
    let mut log_args: Vec<String> = ["log", "-z", "--format=%H%x00%ct%x00%s", "--max-count=20"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    log_args.extend(range);
    let commits = crate::git::run(&w.path, &as_strs(&log_args), deadline, crate::git::OUT_CAP)
        .map(|o| crate::git::parse::commits(&o))
        .map_err(failed(""))?
        .into_iter()
        .map(|c| format!("{} {}", c.id.get(..10).unwrap_or(&c.id), c.subject))
        .collect();
    Ok(Work {
        uncommitted,
        commits,
        unmerged_commits: count.trim().parse().unwrap_or(u64::MAX),
        base,
        on_branch: co.branch,
    })
}

fn as_strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// Remove the worktree even with changes (`retire --discard`: asked by name); the branch stays.
pub(crate) fn remove_discarding(
    repo: &Path,
    w: &Worktree,
    deadline: Instant,
) -> Result<(), WorktreeError> {
    let path = w.path.to_string_lossy().into_owned();
    git(
        repo,
        &["worktree", "remove", "--force", "--", &path],
        deadline,
    )
    .map(|_| ())
    .map_err(failed("git worktree remove failed"))
}

/// Remove the worktree (git itself refuses one with changes: no `--force`); the branch stays.
pub(crate) fn remove(repo: &Path, w: &Worktree, deadline: Instant) -> Result<(), WorktreeError> {
    let path = w.path.to_string_lossy().into_owned();
    git(repo, &["worktree", "remove", "--", &path], deadline)
        .map(|_| ())
        .map_err(failed("git worktree remove failed"))
}

/// Undo a worktree this spawn just created (the roster refused the worker): remove it, and the
/// branch when this spawn created it and it still points where it started.
pub(crate) fn undo(repo: &Path, w: &Worktree, deadline: Instant) -> Result<(), WorktreeError> {
    remove(repo, w, deadline)?;
    if w.created_branch {
        let r = format!("refs/heads/{}", w.branch);
        git(repo, &["update-ref", "-d", &r, &w.base], deadline).map_err(|err| {
            WorktreeError::BranchKept {
                branch: w.branch.clone(),
                err,
            }
        })?;
    }
    Ok(())
}

/// The repository a worktree belongs to (its common git folder's checkout).
pub(crate) fn repo_of(w: &Worktree, deadline: Instant) -> Result<PathBuf, WorktreeError> {
    let common = git(
        &w.path,
        &["rev-parse", "--path-format=absolute", "--git-common-dir"],
        deadline,
    )
    .map_err(failed(""))?;
    let common = PathBuf::from(common.trim_end_matches('\n'));
    Ok(common.parent().map_or(common.clone(), Path::to_path_buf))
}
