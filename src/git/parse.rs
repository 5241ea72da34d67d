//! Parsers of git's `-z` outputs (NUL-terminated fields: a file name may hold any byte but NUL),
//! pure functions with their tests here. Nothing here reads text meant for people.

/// A 40 (SHA-1) or 64 (SHA-256) hex digit object id.
pub(crate) fn is_object_id(s: &str) -> bool {
    matches!(s.len(), 40 | 64) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// `git version 2.47.3` → (2, 47).
pub(crate) fn version(s: &str) -> Option<(u32, u32)> {
    let rest = s.trim().strip_prefix("git version ")?;
    let mut parts = rest.split(|c: char| !c.is_ascii_digit());
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// One file of `git diff --numstat -z`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NumStat {
    pub path: Vec<u8>,
    /// Lines added and removed; `None` for a binary file (git prints `-`).
    pub lines: Option<(u64, u64)>,
}

/// `git diff --numstat -z` (with `--no-renames`: `A\tD\tPATH\0`; a rename, should one appear,
/// is `A\tD\t\0FROM\0TO\0` and counts as its new name). Entries that do not parse are skipped.
pub fn numstat(out: &[u8]) -> Vec<NumStat> {
    let mut files = Vec::new();
    let mut fields = out.split(|b| *b == 0);
    while let Some(f) = fields.next() {
        if f.is_empty() {
            continue;
        }
        let mut parts = f.splitn(3, |b| *b == b'\t');
        let (Some(a), Some(d), Some(path)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        let path = if path.is_empty() {
            let _from = fields.next();
            match fields.next() {
                Some(to) if !to.is_empty() => to,
                _ => continue,
            }
        } else {
            path
        };
        let count = |x: &[u8]| std::str::from_utf8(x).ok()?.parse::<u64>().ok();
        let lines = match (a, d) {
            (b"-", b"-") => None,
            _ => match (count(a), count(d)) {
                (Some(a), Some(d)) => Some((a, d)),
                _ => continue,
            },
        };
        files.push(NumStat {
            path: path.to_vec(),
            lines,
        });
    }
    files
}

/// The NUL-separated names of `git ls-files -z` (and of `merge-tree --name-only -z` after its
/// tree id).
pub fn names(out: &[u8]) -> Vec<Vec<u8>> {
    out.split(|b| *b == 0)
        .filter(|n| !n.is_empty())
        .map(<[u8]>::to_vec)
        .collect()
}

/// One commit of `git log -z --format=%H%x00%ct%x00%s`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Commit {
    pub id: String,
    /// Committer time, seconds since the epoch.
    pub time: i64,
    pub subject: String,
}

/// `git log -z --format=%H%x00%ct%x00%s`: three NUL-ended fields per commit (a subject holds no
/// NUL). A record that does not parse ends the list (what follows cannot be trusted).
pub fn commits(out: &[u8]) -> Vec<Commit> {
    let fields: Vec<&[u8]> = out.split(|b| *b == 0).collect();
    let mut list = Vec::new();
    for rec in fields.chunks(3) {
        let [id, time, subject] = rec else { break };
        let id = String::from_utf8_lossy(id).into_owned();
        let Some(time) = std::str::from_utf8(time).ok().and_then(|t| t.parse().ok()) else {
            break;
        };
        if !is_object_id(&id) {
            break;
        }
        list.push(Commit {
            id,
            time,
            subject: String::from_utf8_lossy(subject).into_owned(),
        });
    }
    list
}

/// What `git merge-tree --write-tree -z --name-only --no-messages` said: the merged tree and the
/// conflicted files (each once). `None` when the first field is no object id.
pub fn merge_tree(out: &[u8]) -> Option<(String, Vec<Vec<u8>>)> {
    let mut fields = out.split(|b| *b == 0);
    let tree = String::from_utf8_lossy(fields.next()?).into_owned();
    if !is_object_id(&tree) {
        return None;
    }
    let mut files: Vec<Vec<u8>> = Vec::new();
    for f in fields.filter(|f| !f.is_empty()) {
        if !files.iter().any(|x| x == f) {
            files.push(f.to_vec());
        }
    }
    Some((tree, files))
}

/// One entry of `git worktree list --porcelain -z`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WorktreeEntry {
    pub path: Vec<u8>,
    pub head: Option<String>,
    /// The branch checked out (`refs/heads/…`), none when detached.
    pub branch: Option<Vec<u8>>,
    pub bare: bool,
}

/// `git worktree list --porcelain -z`: `key value` fields, each entry ended by an empty field;
/// the first entry is the main checkout.
pub fn worktrees(out: &[u8]) -> Vec<WorktreeEntry> {
    let mut list = Vec::new();
    let mut cur: Option<WorktreeEntry> = None;
    for f in out.split(|b| *b == 0) {
        if f.is_empty() {
            list.extend(cur.take());
            continue;
        }
        if let Some(p) = f.strip_prefix(b"worktree ") {
            list.extend(cur.take());
            cur = Some(WorktreeEntry {
                path: p.to_vec(),
                ..WorktreeEntry::default()
            });
        } else if let Some(e) = cur.as_mut() {
            if let Some(h) = f.strip_prefix(b"HEAD ") {
                e.head = Some(String::from_utf8_lossy(h).into_owned());
            } else if let Some(b) = f.strip_prefix(b"branch ") {
                e.branch = Some(b.to_vec());
            } else if f == b"bare" {
                e.bare = true;
            }
        }
    }
    list.extend(cur);
    list
}

/// Lines in a file's bytes as git counts added lines: newlines, plus one for a last line without
/// one. `None` for a binary file (a NUL in its first 8000 bytes, git's own rule).
pub fn text_lines(bytes: &[u8]) -> Option<u64> {
    if bytes.iter().take(8000).any(|b| *b == 0) {
        return None;
    }
    let n = bytes.iter().filter(|b| **b == b'\n').count() as u64;
    Some(n + u64::from(bytes.last().is_some_and(|b| *b != b'\n')))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "0123456789abcdef0123456789abcdef01234567";

    #[test]
    fn numstat_reads_names_with_tabs_newlines_and_binaries() {
        let out = b"3\t1\ta\tb\n-x\0-\t-\tpic.png\0\x30\t2\tplain\0";
        let got = numstat(out);
        assert_eq!(
            got,
            vec![
                NumStat {
                    path: b"a\tb\n-x".to_vec(),
                    lines: Some((3, 1))
                },
                NumStat {
                    path: b"pic.png".to_vec(),
                    lines: None
                },
                NumStat {
                    path: b"plain".to_vec(),
                    lines: Some((0, 2))
                },
            ]
        );
        // A rename form takes the new name; junk is skipped.
        let got = numstat(b"1\t0\t\0old\0new\0x\ty\0z\0");
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].path, b"new");
        assert!(numstat(b"").is_empty());
    }

    #[test]
    fn commits_are_read_three_fields_at_a_time() {
        let out = format!("{ID}\x001700000000\x00fix $(rm -rf) \x1b[31m\x00{ID}\x00x\x00bad");
        let got = commits(out.as_bytes());
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].time, 1_700_000_000);
        assert_eq!(got[0].subject, "fix $(rm -rf) \x1b[31m");
        assert!(commits(b"").is_empty());
        assert!(commits(b"nothex\x001\x00s").is_empty());
    }

    #[test]
    fn merge_tree_names_each_conflicted_file_once() {
        let out = format!("{ID}\0f\0-g\nh\0f\0");
        let (tree, files) = merge_tree(out.as_bytes()).unwrap();
        assert_eq!(tree, ID);
        assert_eq!(files, vec![b"f".to_vec(), b"-g\nh".to_vec()]);
        assert_eq!(merge_tree(format!("{ID}\0").as_bytes()).unwrap().1.len(), 0);
        assert!(merge_tree(b"error: x\0").is_none());
    }

    #[test]
    fn worktree_list_entries_and_the_main_first() {
        let out = format!(
            "worktree /r\0HEAD {ID}\0branch refs/heads/main\0\0worktree /r/w t\nx\0HEAD {ID}\0detached\0\0"
        );
        let got = worktrees(out.as_bytes());
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].branch.as_deref(), Some(&b"refs/heads/main"[..]));
        assert_eq!(got[1].path, b"/r/w t\nx");
        assert_eq!(got[1].branch, None);
    }

    #[test]
    fn versions_ids_and_line_counts() {
        assert_eq!(version("git version 2.47.3\n"), Some((2, 47)));
        assert_eq!(version("git version 2.38.0.windows.1"), Some((2, 38)));
        assert_eq!(version("hg 1"), None);
        assert!(is_object_id(ID));
        assert!(!is_object_id("HEAD"));
        assert_eq!(text_lines(b"a\nb"), Some(2));
        assert_eq!(text_lines(b"a\n"), Some(1));
        assert_eq!(text_lines(b""), Some(0));
        assert_eq!(text_lines(b"a\0b"), None);
    }
}
