//! A process's live threads as the kernel counts them (`/proc/<pid>/task/*`): the one reading
//! behind every bench's per-thread idle figures.

use std::collections::BTreeMap;

/// One live thread.
pub(crate) struct Thread {
    /// Its name (`comm`).
    pub name: String,
    /// Time on a CPU in ns (`schedstat`: exact where ticks are sampled 10 ms steps).
    pub cpu_ns: u64,
    /// Voluntary context switches: how often it slept and was woken.
    pub voluntary: u64,
}

/// Each live thread of `pid`, by thread id (threads that ended are not in it).
pub(crate) fn threads(pid: i32) -> BTreeMap<String, Thread> {
    let mut out = BTreeMap::new();
    for t in std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let read = |f: &str| std::fs::read_to_string(t.path().join(f)).unwrap_or_default();
        let cpu_ns = read("schedstat")
            .split_whitespace()
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        let voluntary = read("status")
            .lines()
            .find(|l| l.starts_with("voluntary_ctxt_switches:"))
            .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
            .unwrap_or(0);
        let id = t.file_name().to_string_lossy().to_string();
        let name = read("comm").trim().to_string();
        out.insert(
            id,
            Thread {
                name,
                cpu_ns,
                voluntary,
            },
        );
    }
    out
}
