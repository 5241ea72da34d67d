//! The process tree below a pid, read from `/proc` with bounded walks.

use std::collections::HashMap;
use std::path::Path;

use super::{read_stat, STAT_CAP};
use crate::fsguard;

/// Upper bound on `/proc` entries read by one `descendants` pass.
const PROC_SCAN_CAP: usize = 65_536;

/// One `/proc` pass: pid → ppid for every readable process (bounded by `PROC_SCAN_CAP`).
pub(crate) fn parent_map() -> HashMap<i32, i32> {
    let mut map = HashMap::new();
    let Ok(listing) = fsguard::list_dir(Path::new("/proc"), PROC_SCAN_CAP) else {
        return map;
    };
    for e in &listing.entries {
        if e.kind != fsguard::Kind::Dir {
            continue;
        }
        let Some(pid) = e.name_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        if let Some(st) = read_stat(pid) {
            map.insert(pid, st.ppid);
        }
    }
    map
}

/// Descendants of `pid` (children first, breadth-first), at most `max`, from one `/proc` pass.
pub fn descendants(pid: i32, max: usize) -> Vec<i32> {
    descendants_in(&parent_map(), pid, max)
}

/// Descendants of `pid` computed from an existing pid → ppid map (no `/proc` reads).
pub(super) fn descendants_in(map: &HashMap<i32, i32>, pid: i32, max: usize) -> Vec<i32> {
    let mut tree = subtree(&children_map(map), pid, max.saturating_add(1));
    tree.remove(0);
    tree
}

/// ppid → its children (sorted), from a pid → ppid map.
pub(super) fn children_map(map: &HashMap<i32, i32>) -> HashMap<i32, Vec<i32>> {
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    for (&child, &parent) in map {
        children.entry(parent).or_default().push(child);
    }
    for v in children.values_mut() {
        v.sort_unstable();
    }
    children
}

/// Most threads whose `children` file is read for one process.
const TASK_CAP: usize = 4096;

/// The child processes of `pid`, sorted, from its threads' `children` files; `None` when the
/// kernel offers no such files (then only a whole `/proc` pass can tell).
pub fn children_of(pid: i32) -> Option<Vec<i32>> {
    let mut kids = Vec::new();
    let mut any = false;
    let mut tasks = 0;
    let mut buf = [0u8; 4096];
    // Each task's children file, read into `buf` (read capped when it does not fit).
    let listed = fsguard::for_each_name(Path::new(&format!("/proc/{pid}/task")), TASK_CAP, |tid| {
        let Some(tid) = tid
            .to_str()
            .ok()
            .filter(|t| t.bytes().all(|b| b.is_ascii_digit()))
        else {
            return false;
        };
        tasks += 1;
        let mut leaf = [0u8; 48];
        let room = leaf.len();
        let mut w = &mut leaf[..];
        if std::io::Write::write_fmt(&mut w, format_args!("task/{tid}/children")).is_err() {
            return true;
        }
        let len = room - w.len();
        let Ok(leaf) = std::str::from_utf8(&leaf[..len]) else {
            return true;
        };
        let capped;
        let text = match super::read_into(pid, leaf, &mut buf) {
            Some((text, true)) => text,
            Some((_, false)) => {
                let path = format!("/proc/{pid}/{leaf}");
                let Ok(t) = fsguard::read_capped(Path::new(&path), STAT_CAP * 16) else {
                    return true;
                };
                capped = t;
                &capped[..]
            }
            None => return true,
        };
        any = true;
        kids.extend(
            text.split(|b| b.is_ascii_whitespace())
                .filter_map(|w| std::str::from_utf8(w).ok()?.parse::<i32>().ok()),
        );
        true
    });
    listed.ok()?;
    // A process that vanished has no task folder: no children, not "unsupported".
    if !any && tasks > 0 {
        return None;
    }
    kids.sort_unstable();
    kids.dedup();
    Some(kids)
}

/// The first of `pid` and its descendants (in `subtree`'s order, at most `max` looked at) for
/// which `hit` holds. Children are read only for the processes the walk goes past, so a pane
/// that runs its program directly costs one check instead of a whole `/proc` pass.
pub(crate) fn find_in_subtree(
    pid: i32,
    max: usize,
    mut hit: impl FnMut(i32) -> bool,
) -> Option<i32> {
    let mut whole: Option<HashMap<i32, Vec<i32>>> = None;
    let mut order = vec![pid];
    let mut seen = std::collections::HashSet::from([pid]);
    let mut expanded = 0usize;
    let mut i = 0usize;
    // Bounded: at most `max` pids are looked at, each expanded at most once.
    while i < order.len().min(max) {
        let p = order[i];
        if hit(p) {
            return Some(p);
        }
        i += 1;
        // Grow the breadth-first order only when the next pid is not known yet.
        while i >= order.len() && expanded < order.len() && order.len() < max {
            let q = order[expanded];
            expanded += 1;
            let kids = match children_of(q) {
                Some(k) => k,
                None => whole
                    .get_or_insert_with(|| children_map(&parent_map()))
                    .get(&q)
                    .cloned()
                    .unwrap_or_default(),
            };
            for k in kids {
                if order.len() >= max {
                    break;
                }
                if seen.insert(k) {
                    order.push(k);
                }
            }
        }
    }
    None
}

/// `pid` and its descendants, breadth-first (nearest first), at most `max` in all.
pub(super) fn subtree(children: &HashMap<i32, Vec<i32>>, pid: i32, max: usize) -> Vec<i32> {
    let mut out = Vec::new();
    if max == 0 {
        return out;
    }
    out.push(pid);
    let mut seen = std::collections::HashSet::from([pid]);
    let mut queue = std::collections::VecDeque::from([pid]);
    // Bounded: each pid is queued at most once and the output is capped at `max`.
    while let Some(p) = queue.pop_front() {
        let Some(kids) = children.get(&p) else {
            continue;
        };
        for &k in kids {
            if out.len() >= max {
                return out;
            }
            if seen.insert(k) {
                out.push(k);
                queue.push_back(k);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::{children_map, descendants_in, find_in_subtree, parent_map, subtree};

    #[test]
    fn a_lazy_walk_visits_what_a_whole_proc_pass_gives_in_the_same_order() {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "sleep 5 & sleep 5 & (sleep 5 & sleep 5; :) ; wait"])
            .spawn()
            .unwrap();
        let root = child.id() as i32;
        std::thread::sleep(std::time::Duration::from_millis(300));
        for max in [1, 2, 4, 64] {
            let expect = subtree(&children_map(&parent_map()), root, max);
            let mut seen = Vec::new();
            assert_eq!(
                find_in_subtree(root, max, |p| {
                    seen.push(p);
                    false
                }),
                None
            );
            assert_eq!(seen, expect, "max {max}");
        }
        let all = subtree(&children_map(&parent_map()), root, 64);
        assert!(all.len() >= 4, "{all:?}");
        let last = *all.last().unwrap();
        assert_eq!(find_in_subtree(root, 64, |p| p == last), Some(last));
        let _ = child.kill();
        let _ = child.wait();
    }

    #[test]
    fn descendants_from_map_are_bounded_and_loop_safe() {
        let map: HashMap<i32, i32> = [(2, 1), (3, 2), (4, 2), (5, 3), (6, 6), (7, 8), (8, 7)]
            .into_iter()
            .collect();
        assert_eq!(descendants_in(&map, 2, 10), vec![3, 4, 5]);
        assert_eq!(descendants_in(&map, 2, 2), vec![3, 4]);
        assert_eq!(descendants_in(&map, 7, 10), vec![8]);
        assert!(descendants_in(&map, 6, 10).is_empty());
    }
}
