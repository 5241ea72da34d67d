//! Every git call of the program: an argv (never a shell), in a named folder, under a deadline,
//! with a cap on what it may print, and with git's own variables that could point it at another
//! repository removed. Callers put `--` (or `--end-of-options`) before any word that is data, so
//! a branch or file named `-x` is never read as a flag; outputs meant for programs are read in
//! their `-z` forms (`parse`), never text meant for people.

pub(crate) mod parse;

use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use crate::mux::spawn::{self, RunError};
use crate::text::sanitize;

/// What one git call may print unless its caller says otherwise.
pub(crate) const OUT_CAP: usize = 1 << 20;

/// Why a git call gave no usable answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum GitError {
    NotInstalled,
    Timeout,
    /// It printed more than its cap (it was stopped).
    Oversize,
    Spawn(String),
    /// It ran and exited with `code` (none: a signal), saying `said` (sanitized, clipped).
    Failed {
        code: Option<i32>,
        said: String,
    },
}

impl std::fmt::Display for GitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GitError::NotInstalled => f.write_str("git is not installed"),
            GitError::Timeout => f.write_str("git did not answer in time"),
            GitError::Oversize => f.write_str("git printed too much"),
            GitError::Spawn(d) => write!(f, "git could not be started: {d}"),
            GitError::Failed { said, .. } if said.is_empty() => f.write_str("git failed"),
            GitError::Failed { said, .. } => f.write_str(said),
        }
    }
}

impl std::error::Error for GitError {}

/// One finished call: its exit code and what it printed.
#[derive(Debug)]
pub(crate) struct Ran {
    pub code: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: String,
}

/// Run `git -C dir ARGS…` and return however it ended (a non-zero exit is not an error here:
/// `merge-tree` says "conflicts" with exit 1).
pub(crate) fn run_any<S: AsRef<OsStr>>(
    dir: &Path,
    args: &[S],
    deadline: Instant,
    cap: usize,
) -> Result<Ran, GitError> {
    let mut c = Command::new("git");
    // No pager, no optional locks (a read must not take the index lock a worker's git wants),
    // no fsmonitor hook program: only the call asked for.
    c.arg("--no-pager")
        .arg("-c")
        .arg("core.fsmonitor=false")
        .arg("-C")
        .arg(dir)
        .args(args);
    for v in [
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_OBJECT_DIRECTORY",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_COMMON_DIR",
        "GIT_CEILING_DIRECTORIES",
        "GIT_EXTERNAL_DIFF",
    ] {
        c.env_remove(v);
    }
    c.env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("LC_ALL", "C");
    let out = spawn::run(&mut c, None, deadline, cap).map_err(|e| match e {
        RunError::NotFound => GitError::NotInstalled,
        RunError::Timeout => GitError::Timeout,
        RunError::Oversize => GitError::Oversize,
        RunError::Spawn(d) => GitError::Spawn(d),
    })?;
    Ok(Ran {
        code: out.status.code(),
        stdout: out.stdout,
        stderr: crate::text::clip(&sanitize(String::from_utf8_lossy(&out.stderr).trim()), 300),
    })
}

/// Run it and return its output when it exited 0.
pub(crate) fn run<S: AsRef<OsStr>>(
    dir: &Path,
    args: &[S],
    deadline: Instant,
    cap: usize,
) -> Result<Vec<u8>, GitError> {
    let r = run_any(dir, args, deadline, cap)?;
    if r.code == Some(0) {
        Ok(r.stdout)
    } else {
        Err(GitError::Failed {
            code: r.code,
            said: r.stderr,
        })
    }
}

/// Its output as text, its last newline removed (for one-word answers: an id, a path).
pub(crate) fn line<S: AsRef<OsStr>>(
    dir: &Path,
    args: &[S],
    deadline: Instant,
) -> Result<String, GitError> {
    let out = run(dir, args, deadline, OUT_CAP)?;
    let s = String::from_utf8_lossy(&out);
    Ok(s.strip_suffix('\n').unwrap_or(&s).to_string())
}

/// Whether `rev` names a commit here; its full id when it does.
pub(crate) fn commit_id(dir: &Path, rev: &str, deadline: Instant) -> Option<String> {
    let spec = format!("{rev}^{{commit}}");
    line(
        dir,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            &spec,
        ],
        deadline,
    )
    .ok()
    .filter(|id| parse::is_object_id(id))
}

/// Whether `name` is a valid branch name (`refs/heads/NAME` passes `git check-ref-format`;
/// given whole, it can never be read as an option).
pub(crate) fn is_branch_name(dir: &Path, name: &str, deadline: Instant) -> bool {
    let full = format!("refs/heads/{name}");
    !name.is_empty() && run(dir, &["check-ref-format", full.as_str()], deadline, OUT_CAP).is_ok()
}

/// Whether `a` is an ancestor of (or is) `b`. `None`: git could not tell.
pub(crate) fn is_ancestor(dir: &Path, a: &str, b: &str, deadline: Instant) -> Option<bool> {
    let r = run_any(
        dir,
        &["merge-base", "--is-ancestor", "--end-of-options", a, b],
        deadline,
        OUT_CAP,
    )
    .ok()?;
    match r.code {
        Some(0) => Some(true),
        Some(1) => Some(false),
        _ => None,
    }
}

/// git's version as (major, minor), when it says one.
pub(crate) fn version(deadline: Instant) -> Option<(u32, u32)> {
    let v = line(Path::new("/"), &["version"], deadline).ok()?;
    parse::version(&v)
}
