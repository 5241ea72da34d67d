//! What a worker changed (docs/behaviour.md §11): its commits since its base, each file with
//! lines added and removed (committed, uncommitted, untracked), whether the branch it lands on
//! moved on, whether merging would conflict (`git merge-tree`, which touches no checkout), and
//! which files it shares with other live workers. Read-only: every git call here reads.

pub(crate) mod land;
pub(crate) mod locate;
pub(crate) mod worker;

use std::path::Path;
use std::time::Instant;

use serde::Serialize;

use crate::git::{self, parse, GitError};
use locate::Checkout;

/// Files listed per review (the totals count them all).
pub(crate) const MAX_FILES: usize = 1000;
/// Commits listed per review (`commitsTotal` counts them all).
pub(crate) const MAX_COMMITS: usize = 200;
/// What a numstat listing may print.
const NUMSTAT_CAP: usize = 16 << 20;
/// An untracked file larger than this is listed with its lines unknown.
const UNTRACKED_READ_CAP: u64 = 4 << 20;
/// Untracked files whose lines are counted.
const UNTRACKED_COUNTED: usize = 200;

/// Where a change is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum Where {
    Committed,
    Uncommitted,
    Untracked,
}

/// One changed file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FileChange {
    /// Relative to the checkout's top, as git names it (exact; sanitize before showing).
    pub path: String,
    #[serde(rename = "where")]
    pub place: Where,
    /// Lines added and removed; `null` for a binary file or one too large to count.
    pub added: Option<u64>,
    pub removed: Option<u64>,
    pub binary: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CommitView {
    pub id: String,
    pub time: String,
    pub subject: String,
}

/// How the commit the worker started from was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum BaseSource {
    /// Recorded by `spawn --worktree`.
    Spawn,
    /// The merge-base with the branch it lands on.
    MergeBase,
}

/// What merging the worker's branch into the branch it lands on would do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum MergeState {
    /// Nothing to land: every commit is on the target already.
    UpToDate,
    FastForward,
    /// A merge commit, without conflicts.
    Clean,
    Conflicts,
    /// Not checked (no branch, no target, git older than 2.38, git failed: `detail` says).
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Merge {
    pub state: MergeState,
    pub conflicts: Vec<String>,
    pub detail: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Totals {
    pub files: u64,
    pub added: u64,
    pub removed: u64,
    pub committed: u64,
    pub uncommitted: u64,
    pub untracked: u64,
}

/// Files two live workers both changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Overlap {
    pub workers: [String; 2],
    pub files: Vec<String>,
}

/// One worker's review (`review --json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Review {
    pub version: u32,
    pub worker: String,
    /// The board's state of the worker (`null`: no seat on the board).
    pub state: Option<String>,
    pub checkout: Option<String>,
    /// `spawn --worktree` made the checkout.
    pub worktree: bool,
    pub branch: Option<String>,
    pub head: Option<String>,
    pub base: Option<String>,
    pub base_source: Option<BaseSource>,
    /// The branch it lands on and its tip.
    pub target: Option<String>,
    pub target_tip: Option<String>,
    /// Commits on the target since the base (the base moved on when this is above 0).
    pub base_moved_by: Option<u64>,
    pub commits: Vec<CommitView>,
    pub commits_total: u64,
    pub files: Vec<FileChange>,
    /// More files changed than are listed.
    pub files_truncated: bool,
    pub totals: Totals,
    pub merge: Merge,
    pub overlaps: Vec<Overlap>,
    /// Why something is missing (no git checkout, a folder gone, git failed).
    pub note: Option<String>,
}

pub(crate) const VERSION: u32 = 1;

impl Review {
    /// A worker with no checkout to look at.
    pub(crate) fn empty(worker: &str, state: Option<String>, note: String) -> Review {
        Review {
            version: VERSION,
            worker: worker.to_string(),
            state,
            checkout: None,
            worktree: false,
            branch: None,
            head: None,
            base: None,
            base_source: None,
            target: None,
            target_tip: None,
            base_moved_by: None,
            commits: Vec::new(),
            commits_total: 0,
            files: Vec::new(),
            files_truncated: false,
            totals: Totals::default(),
            merge: Merge {
                state: MergeState::Unknown,
                conflicts: Vec::new(),
                detail: None,
            },
            overlaps: Vec::new(),
            note: Some(note),
        }
    }

    /// Every path this review names (for overlaps).
    pub(crate) fn paths(&self) -> std::collections::BTreeSet<&str> {
        self.files.iter().map(|f| f.path.as_str()).collect()
    }
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The files `git status -z` names as changed in the checkout `dir` (tracked files; untracked
/// ones too when `untracked`), relative to its top, at most `MAX_FILES`.
pub(crate) fn uncommitted(
    dir: &Path,
    untracked: bool,
    deadline: Instant,
) -> Result<Vec<String>, GitError> {
    let mode = if untracked {
        "--untracked-files=all"
    } else {
        "--untracked-files=no"
    };
    let out = git::run(
        dir,
        &["status", "--porcelain=v1", "-z", mode],
        deadline,
        NUMSTAT_CAP,
    )?;
    // `XY PATH\0`; a rename or copy has its old name as one more field.
    let mut files = Vec::new();
    let mut fields = out.split(|b| *b == 0);
    while let Some(f) = fields.next() {
        if f.len() < 4 || files.len() >= MAX_FILES {
            continue;
        }
        if matches!(f[0], b'R' | b'C') || matches!(f[1], b'R' | b'C') {
            let _from = fields.next();
        }
        files.push(lossy(&f[3..]));
    }
    Ok(files)
}

/// Up to ten names, sanitized, and how many more.
pub(crate) fn name_list(files: &[String]) -> String {
    let shown: Vec<String> = files
        .iter()
        .take(10)
        .map(|f| crate::text::sanitize(f))
        .collect();
    match files.len().saturating_sub(10) {
        0 => shown.join(", "),
        more => format!("{} and {more} more", shown.join(", ")),
    }
}

/// The commit to compare with: the recorded one while it is an ancestor of HEAD, else the
/// merge-base with the target's tip.
fn base_of(
    co: &Checkout,
    head: &str,
    target_tip: Option<&str>,
    deadline: Instant,
) -> Option<(String, BaseSource)> {
    if let Some(b) = co.recorded_base.as_deref() {
        if let Some(id) = git::commit_id(&co.dir, b, deadline) {
            if git::is_ancestor(&co.dir, &id, head, deadline) == Some(true) {
                return Some((id, BaseSource::Spawn));
            }
        }
    }
    let tip = target_tip?;
    let mb = git::line(
        &co.dir,
        &["merge-base", "--end-of-options", head, tip],
        deadline,
    )
    .ok()?;
    parse::is_object_id(&mb).then_some((mb, BaseSource::MergeBase))
}

fn count(dir: &Path, range: &str, deadline: Instant) -> Option<u64> {
    git::line(
        dir,
        &["rev-list", "--count", "--end-of-options", range],
        deadline,
    )
    .ok()?
    .parse()
    .ok()
}

/// The merge check of `head` into `tip`, touching no checkout.
pub(crate) fn merge_check(dir: &Path, head: &str, tip: &str, deadline: Instant) -> Merge {
    let m = |state, conflicts, detail: Option<String>| Merge {
        state,
        conflicts,
        detail,
    };
    match git::is_ancestor(dir, head, tip, deadline) {
        Some(true) => return m(MergeState::UpToDate, Vec::new(), None),
        None => {
            return m(
                MergeState::Unknown,
                Vec::new(),
                Some("git could not compare".into()),
            )
        }
        Some(false) => {}
    }
    if git::is_ancestor(dir, tip, head, deadline) == Some(true) {
        return m(MergeState::FastForward, Vec::new(), None);
    }
    if git::version(deadline).is_none_or(|v| v < (2, 38)) {
        return m(
            MergeState::Unknown,
            Vec::new(),
            Some("merge check needs git 2.38 or later".into()),
        );
    }
    let ran = git::run_any(
        dir,
        &[
            "merge-tree",
            "--write-tree",
            "-z",
            "--name-only",
            "--no-messages",
            "--end-of-options",
            tip,
            head,
        ],
        deadline,
        NUMSTAT_CAP,
    );
    match ran {
        Ok(r) if matches!(r.code, Some(0) | Some(1)) => match parse::merge_tree(&r.stdout) {
            Some((_, files)) if r.code == Some(1) => m(
                MergeState::Conflicts,
                files.iter().map(|f| lossy(f)).collect(),
                None,
            ),
            Some(_) => m(MergeState::Clean, Vec::new(), None),
            None => m(
                MergeState::Unknown,
                Vec::new(),
                Some("git merge-tree said something unexpected".into()),
            ),
        },
        Ok(r) => m(MergeState::Unknown, Vec::new(), Some(r.stderr)),
        Err(e) => m(MergeState::Unknown, Vec::new(), Some(e.to_string())),
    }
}

fn numstat(dir: &Path, args: &[&str], deadline: Instant) -> Result<Vec<parse::NumStat>, GitError> {
    let mut all = vec![
        "diff",
        "--numstat",
        "-z",
        "--no-renames",
        "--no-ext-diff",
        "--no-textconv",
        "--ignore-submodules=none",
    ];
    all.extend_from_slice(args);
    git::run(dir, &all, deadline, NUMSTAT_CAP).map(|o| parse::numstat(&o))
}

fn push_stats(files: &mut Vec<FileChange>, stats: Vec<parse::NumStat>, place: Where) {
    for s in stats {
        files.push(FileChange {
            path: lossy(&s.path),
            place,
            added: s.lines.map(|l| l.0),
            removed: s.lines.map(|l| l.1),
            binary: s.lines.is_none(),
        });
    }
}

/// The untracked files (not ignored), their lines counted for the first few.
fn untracked(dir: &Path, deadline: Instant) -> Result<Vec<FileChange>, GitError> {
    let out = git::run(
        dir,
        &["ls-files", "-z", "--others", "--exclude-standard"],
        deadline,
        NUMSTAT_CAP,
    )?;
    Ok(parse::names(&out)
        .into_iter()
        .enumerate()
        .map(|(i, name)| {
            let path = lossy(&name);
            let lines = (i < UNTRACKED_COUNTED)
                .then(|| {
                    use std::os::unix::ffi::OsStrExt;
                    let p = dir.join(std::ffi::OsStr::from_bytes(&name));
                    crate::fsguard::read_capped(&p, UNTRACKED_READ_CAP).ok()
                })
                .flatten()
                .map(|b| parse::text_lines(&b));
            FileChange {
                path,
                place: Where::Untracked,
                added: lines.flatten(),
                removed: lines.flatten().map(|_| 0),
                binary: matches!(lines, Some(None)),
            }
        })
        .collect())
}

/// Review the checkout `co` of `worker`; `into`: the branch it lands on (default: the main
/// checkout's). `check_merge`: also run the merge check (`git merge-tree` writes the merged
/// tree's objects into the repository, so a view that reviews every few seconds skips it).
pub(crate) fn review(
    worker: &str,
    state: Option<String>,
    co: &Checkout,
    into: Option<&str>,
    check_merge: bool,
    deadline: Instant,
) -> Review {
    let mut r = Review::empty(worker, state, String::new());
    r.note = None;
    r.checkout = Some(co.dir.display().to_string());
    r.worktree = co.from_spawn;
    r.branch = co.branch.clone();
    let dir = &co.dir;
    let Some(head) = git::commit_id(dir, "HEAD", deadline) else {
        r.note = Some("the checkout has no commit yet".into());
        return r;
    };
    r.head = Some(head.clone());
    r.target = into
        .filter(|i| git::is_branch_name(dir, i, deadline))
        .or(co.main_branch.as_deref().filter(|_| into.is_none()))
        .map(str::to_string);
    if r.target.is_none() {
        if let Some(i) = into {
            r.note = Some(format!(
                "{:?} is not a branch name",
                crate::text::sanitize(i)
            ));
        }
    }
    r.target_tip = r
        .target
        .as_deref()
        .and_then(|t| git::commit_id(dir, &format!("refs/heads/{t}"), deadline));
    if r.target.is_some() && r.target_tip.is_none() {
        r.note = Some(format!(
            "branch {} does not exist",
            crate::text::sanitize(r.target.as_deref().unwrap_or(""))
        ));
    }
    let mut notes = Vec::new();
    let base = base_of(co, &head, r.target_tip.as_deref(), deadline);
    if let Some((b, src)) = &base {
        r.base = Some(b.clone());
        r.base_source = Some(*src);
        let range = format!("{b}..{head}");
        r.commits_total = count(dir, &range, deadline).unwrap_or(0);
        let max = format!("--max-count={MAX_COMMITS}");
        match git::run(
            dir,
            &[
                "log",
                "-z",
                "--format=%H%x00%ct%x00%s",
                &max,
                "--end-of-options",
                &range,
            ],
            deadline,
            git::OUT_CAP,
        ) {
            Ok(out) => {
                r.commits = parse::commits(&out)
                    .into_iter()
                    .map(|c| CommitView {
                        id: c.id,
                        time: crate::clock::format_iso(c.time.saturating_mul(1000)),
                        subject: c.subject,
                    })
                    .collect();
            }
            Err(e) => notes.push(format!("commits: {e}")),
        }
        match numstat(dir, &[b.as_str(), head.as_str(), "--"], deadline) {
            Ok(s) => push_stats(&mut r.files, s, Where::Committed),
            Err(e) => notes.push(format!("committed files: {e}")),
        }
        if let Some(tip) = &r.target_tip {
            r.base_moved_by = count(dir, &format!("{b}..{tip}"), deadline);
        }
    } else {
        notes.push("no base: nothing recorded at spawn and no branch to compare with".into());
    }
    match numstat(dir, &["HEAD", "--"], deadline) {
        Ok(s) => push_stats(&mut r.files, s, Where::Uncommitted),
        Err(e) => notes.push(format!("uncommitted files: {e}")),
    }
    match untracked(dir, deadline) {
        Ok(u) => r.files.extend(u),
        Err(e) => notes.push(format!("untracked files: {e}")),
    }
    r.merge = match &r.target_tip {
        Some(tip) if check_merge => merge_check(dir, &head, tip, deadline),
        Some(_) => Merge {
            state: MergeState::Unknown,
            conflicts: Vec::new(),
            detail: Some("not checked".into()),
        },
        None => Merge {
            state: MergeState::Unknown,
            conflicts: Vec::new(),
            detail: Some("no branch to land on".into()),
        },
    };
    r.totals = totals(&r.files);
    r.files_truncated = r.files.len() > MAX_FILES;
    r.files.truncate(MAX_FILES);
    if !notes.is_empty() {
        let mut all: Vec<String> = r.note.take().into_iter().collect();
        all.extend(notes);
        r.note = Some(all.join("; "));
    }
    r
}

fn totals(files: &[FileChange]) -> Totals {
    let mut t = Totals::default();
    let mut names = std::collections::BTreeSet::new();
    for f in files {
        names.insert(f.path.as_str());
        t.added += f.added.unwrap_or(0);
        t.removed += f.removed.unwrap_or(0);
        match f.place {
            Where::Committed => t.committed += 1,
            Where::Uncommitted => t.uncommitted += 1,
            Where::Untracked => t.untracked += 1,
        }
    }
    t.files = names.len() as u64;
    t
}

/// The pairs of reviews (of one repository) that name a file both: (index, index, files).
pub(crate) fn overlaps(all: &[(&Review, &Path)]) -> Vec<Overlap> {
    let mut out = Vec::new();
    for (i, (a, repo_a)) in all.iter().enumerate() {
        for (b, repo_b) in &all[i + 1..] {
            if repo_a != repo_b {
                continue;
            }
            let (pa, pb) = (a.paths(), b.paths());
            let files: Vec<String> = pa.intersection(&pb).map(|s| s.to_string()).collect();
            if !files.is_empty() {
                out.push(Overlap {
                    workers: [a.worker.clone(), b.worker.clone()],
                    files,
                });
            }
        }
    }
    out
}

/// The patch: committed changes since the base, then the uncommitted ones (untracked files are
/// not in it). At most `cap` bytes of each.
pub(crate) fn patch(co: &Checkout, r: &Review, cap: usize, deadline: Instant) -> Vec<u8> {
    let mut out = Vec::new();
    let args = |extra: &[&str]| -> Vec<String> {
        let mut a: Vec<String> = [
            "diff",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "--no-renames",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let mut one = |a: Vec<String>| match git::run(&co.dir, &a, deadline, cap) {
        Ok(o) => out.extend(o),
        Err(GitError::Oversize) => {
            out.extend(format!("(the diff is larger than {cap} bytes: not shown)\n").as_bytes())
        }
        Err(e) => out.extend(format!("(git diff failed: {e})\n").as_bytes()),
    };
    if let (Some(b), Some(h)) = (&r.base, &r.head) {
        one(args(&[b, h, "--"]));
    }
    if r.head.is_some() {
        one(args(&["HEAD", "--"]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(path: &str, place: Where, lines: Option<(u64, u64)>) -> FileChange {
        FileChange {
            path: path.into(),
            place,
            added: lines.map(|l| l.0),
            removed: lines.map(|l| l.1),
            binary: lines.is_none(),
        }
    }

    #[test]
    fn totals_count_each_file_once_and_each_place() {
        let files = [
            f("a", Where::Committed, Some((3, 1))),
            f("a", Where::Uncommitted, Some((1, 0))),
            f("b.png", Where::Committed, None),
            f("c", Where::Untracked, Some((2, 0))),
        ];
        let t = totals(&files);
        assert_eq!(
            t,
            Totals {
                files: 3,
                added: 6,
                removed: 1,
                committed: 2,
                uncommitted: 1,
                untracked: 1
            }
        );
    }

    #[test]
    fn overlaps_pair_reviews_of_one_repository() {
        let mut a = Review::empty("A", None, String::new());
        a.files = vec![
            f("x", Where::Committed, Some((1, 0))),
            f("y", Where::Untracked, Some((1, 0))),
        ];
        let mut b = Review::empty("B", None, String::new());
        b.files = vec![f("y", Where::Uncommitted, Some((1, 0)))];
        let mut c = Review::empty("C", None, String::new());
        c.files = vec![f("x", Where::Committed, Some((1, 0)))];
        let (r1, r2) = (Path::new("/r/.git"), Path::new("/s/.git"));
        let got = overlaps(&[(&a, r1), (&b, r1), (&c, r2)]);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].workers, ["A".to_string(), "B".to_string()]);
        assert_eq!(got[0].files, ["y"]);
    }
}
