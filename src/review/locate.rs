//! Where a worker's work is: its checkout (the worktree `spawn --worktree` recorded, else the git
//! checkout of its folder), its branch, the base it started from, and the branch it lands on
//! (the main checkout's branch, or `--into`).

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::actions::launch_spec;
use crate::evidence::config::Agent;
use crate::git::{self, parse, GitError};

/// A worker's checkout as found.
#[derive(Debug, Clone)]
pub(crate) struct Checkout {
    /// The worker's working folder's checkout (its top).
    pub dir: PathBuf,
    /// The repository's common git folder (two checkouts of one repository share it).
    pub common: PathBuf,
    /// The main checkout of the repository (the first of `git worktree list`).
    pub main: Option<PathBuf>,
    /// The main checkout's branch (`refs/heads/…`), none when detached or bare.
    pub main_branch: Option<String>,
    /// The branch checked out in the worker's checkout (without `refs/heads/`).
    pub branch: Option<String>,
    /// The commit the worker started from as `spawn` recorded it.
    pub recorded_base: Option<String>,
    /// `spawn --worktree` made it.
    pub from_spawn: bool,
}

/// Why there is no checkout to look at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Missing {
    /// The folder is gone (a worktree deleted under the tool).
    Gone(PathBuf),
    /// The folder is not in a git checkout.
    NotGit(PathBuf),
    /// git itself failed.
    Git(GitError),
}

impl std::fmt::Display for Missing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let p = |p: &Path| crate::text::sanitize(&p.display().to_string());
        match self {
            Missing::Gone(d) => write!(f, "its folder {} is gone", p(d)),
            Missing::NotGit(d) => write!(f, "its folder {} is not in a git checkout", p(d)),
            Missing::Git(e) => write!(f, "git: {e}"),
        }
    }
}

/// The worker's folder and what spawn recorded of its worktree.
pub(crate) fn folder_of(root: &Path, a: &Agent) -> (PathBuf, Option<launch_spec::Worktree>) {
    match launch_spec::read_project(root, &a.session_id) {
        Ok(s) => match s.worktree {
            Some(w) => (w.path.clone(), Some(w)),
            None => (s.cwd, None),
        },
        Err(_) => (root.join(&a.project_directory), None),
    }
}

fn to_path(b: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(std::ffi::OsStr::from_bytes(b))
}

/// Find the checkout of `folder` (recorded as `tree` when spawn made it).
pub(crate) fn checkout(
    folder: &Path,
    tree: Option<&launch_spec::Worktree>,
    deadline: Instant,
) -> Result<Checkout, Missing> {
    if crate::fsguard::kind(folder).is_err() {
        return Err(Missing::Gone(folder.to_path_buf()));
    }
    let top =
        git::line(folder, &["rev-parse", "--show-toplevel"], deadline).map_err(|e| match e {
            GitError::Failed { .. } => Missing::NotGit(folder.to_path_buf()),
            other => Missing::Git(other),
        })?;
    let dir = PathBuf::from(top);
    let common = git::line(
        &dir,
        &["rev-parse", "--path-format=absolute", "--git-common-dir"],
        deadline,
    )
    .map_err(Missing::Git)?;
    let listed = git::run(
        &dir,
        &["worktree", "list", "--porcelain", "-z"],
        deadline,
        git::OUT_CAP,
    )
    .map_err(Missing::Git)?;
    let first = parse::worktrees(&listed).into_iter().next();
    let (main, main_branch) = match first {
        Some(e) if !e.bare => (
            Some(to_path(&e.path)),
            e.branch.map(|b| String::from_utf8_lossy(&b).into_owned()),
        ),
        _ => (None, None),
    };
    let branch = git::line(&dir, &["symbolic-ref", "--quiet", "HEAD"], deadline)
        .ok()
        .and_then(|r| r.strip_prefix("refs/heads/").map(str::to_string));
    Ok(Checkout {
        dir,
        common: PathBuf::from(common),
        main,
        main_branch: main_branch.and_then(|b| b.strip_prefix("refs/heads/").map(str::to_string)),
        branch,
        recorded_base: tree.map(|t| t.base.clone()),
        from_spawn: tree.is_some(),
    })
}
