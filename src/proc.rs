//! Process identity on Linux, read from `/proc` directly (docs/interop.md §9).
//!
//! Why: a pid alone is reused by the kernel; "is this still the same process" needs the start
//! time (stat field 22, clock ticks since boot) and the boot id as well. Everything in the product
//! that decides "same process" calls this module. Every read is capped (stat ≤ 4 KiB) and every
//! walk is bounded by a count.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::fsguard;

/// Largest `/proc/<pid>/stat` we accept (real ones are a few hundred bytes).
const STAT_CAP: u64 = 4096;
/// Largest boot id file we accept (a UUID plus newline is 37 bytes).
const BOOT_ID_CAP: u64 = 128;
/// Upper bound on `/proc` entries read by one `descendants` pass.
const PROC_SCAN_CAP: usize = 65_536;
/// Default bound on ancestry depth used by `is_ancestor`.
pub const MAX_DEPTH: usize = 256;

/// The fields of `/proc/<pid>/stat` the product needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcStat {
    pub pid: i32,
    /// Command name as the kernel keeps it (≤ 15 bytes, lossily decoded; may hold spaces and
    /// parentheses). Not sanitized: callers sanitize before showing it.
    pub comm: String,
    /// Field 3: `R S D Z T t X x I ...`.
    pub state: char,
    pub ppid: i32,
    /// Field 5: process group.
    pub pgrp: i32,
    /// Field 6: session id.
    pub session: i32,
    /// Field 22: start time in clock ticks since boot.
    pub start_ticks: u64,
}

impl ProcStat {
    /// True for states that mean "gone for our purposes": zombie or dead.
    pub fn is_gone_state(&self) -> bool {
        matches!(self.state, 'Z' | 'X' | 'x')
    }
}

/// Parse the text of a stat file. The command name sits between the first `(` and the LAST `)`,
/// since the name itself may contain `) (`; all other fields are read after that last `)`.
pub fn parse_stat(bytes: &[u8]) -> Option<ProcStat> {
    let open = bytes.iter().position(|&b| b == b'(')?;
    let close = bytes.iter().rposition(|&b| b == b')')?;
    if close < open {
        return None;
    }
    let pid: i32 = std::str::from_utf8(bytes.get(..open)?)
        .ok()?
        .trim()
        .parse()
        .ok()?;
    let comm = String::from_utf8_lossy(bytes.get(open + 1..close)?).into_owned();
    let rest = std::str::from_utf8(bytes.get(close + 1..)?).ok()?;
    let fields: Vec<&str> = rest.split_ascii_whitespace().collect();
    // After `)`: index 0 is field 3 (state), 1 is field 4 (ppid), 19 is field 22 (starttime).
    let mut state_chars = fields.first()?.chars();
    let state = state_chars.next()?;
    if state_chars.next().is_some() {
        return None;
    }
    let ppid: i32 = fields.get(1)?.parse().ok()?;
    let pgrp: i32 = fields.get(2)?.parse().ok()?;
    let session: i32 = fields.get(3)?.parse().ok()?;
    let start_ticks: u64 = fields.get(19)?.parse().ok()?;
    if pid <= 0 || ppid < 0 {
        return None;
    }
    Some(ProcStat {
        pid,
        comm,
        state,
        ppid,
        pgrp,
        session,
        start_ticks,
    })
}

/// Read and parse `/proc/<pid>/stat`. `None` when the process does not exist or the file is
/// unreadable or malformed.
pub fn read_stat(pid: i32) -> Option<ProcStat> {
    if pid <= 0 {
        return None;
    }
    let path = format!("/proc/{pid}/stat");
    let bytes = fsguard::read_capped(Path::new(&path), STAT_CAP).ok()?;
    let st = parse_stat(&bytes)?;
    // A stat file always names its own pid; anything else is not what we asked for.
    (st.pid == pid).then_some(st)
}

/// This boot's id (`/proc/sys/kernel/random/boot_id`), validated as a UUID-shaped string.
pub fn boot_id() -> Option<String> {
    let bytes =
        fsguard::read_capped(Path::new("/proc/sys/kernel/random/boot_id"), BOOT_ID_CAP).ok()?;
    let s = std::str::from_utf8(&bytes).ok()?.trim();
    let ok = s.len() == 36
        && s.chars().enumerate().all(|(i, c)| {
            if [8, 13, 18, 23].contains(&i) {
                c == '-'
            } else {
                c.is_ascii_hexdigit()
            }
        });
    ok.then(|| s.to_ascii_lowercase())
}

/// One process incarnation: (pid, start ticks, boot id).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ProcIdentity {
    pub pid: i32,
    pub start_ticks: u64,
    pub boot_id: String,
}

/// The identity of a running process now; `None` when it does not exist, is a zombie, or the
/// boot id cannot be read.
pub fn identity(pid: i32) -> Option<ProcIdentity> {
    let st = read_stat(pid)?;
    if st.is_gone_state() {
        return None;
    }
    Some(ProcIdentity {
        pid,
        start_ticks: st.start_ticks,
        boot_id: boot_id()?,
    })
}

/// What a recorded identity looks like now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProcStatus {
    /// Same pid, same start ticks, same boot, not a zombie.
    Alive,
    /// No such pid (or it was reused by another start, or belongs to another boot).
    Gone,
    /// The pid exists with the same start but is a zombie or dead.
    Zombie,
    /// `/proc` could not answer (boot id unreadable): never treated as alive.
    Unknown,
}

/// Compare a recorded identity with `/proc` now.
pub fn status(id: &ProcIdentity) -> ProcStatus {
    let Some(boot) = boot_id() else {
        return ProcStatus::Unknown;
    };
    if boot != id.boot_id {
        return ProcStatus::Gone;
    }
    match read_stat(id.pid) {
        None => ProcStatus::Gone,
        Some(st) if st.start_ticks != id.start_ticks => ProcStatus::Gone,
        Some(st) if st.is_gone_state() => ProcStatus::Zombie,
        Some(_) => ProcStatus::Alive,
    }
}

/// True only when the recorded incarnation is provably still running (same pid, same start
/// ticks, same boot id, state not Z/X/x).
pub fn is_alive(id: &ProcIdentity) -> bool {
    status(id) == ProcStatus::Alive
}

/// Parents of `pid`, nearest first, excluding `pid` itself, ending at pid 1 when reached.
/// At most `max` entries; stops early at an unreadable parent or a loop.
pub fn ancestors(pid: i32, max: usize) -> Vec<i32> {
    let mut out = Vec::new();
    let mut cur = pid;
    while out.len() < max {
        if cur <= 1 {
            break;
        }
        let Some(st) = read_stat(cur) else { break };
        let parent = st.ppid;
        // ppid 0 means "no parent" (pid 1 and kernel threads); a repeat would be a loop.
        if parent <= 0 || parent == pid || out.contains(&parent) {
            break;
        }
        out.push(parent);
        cur = parent;
    }
    out
}

/// True when `ancestor` is a strict ancestor of `pid` (bounded by `MAX_DEPTH`).
pub fn is_ancestor(ancestor: i32, pid: i32) -> bool {
    ancestor > 0 && ancestor != pid && ancestors(pid, MAX_DEPTH).contains(&ancestor)
}

/// Position of `candidate` in the chain `pid, parent, grandparent, ...`: 0 when it is `pid`
/// itself, 1 for the parent, and so on. `None` when it is not on the chain.
pub fn ancestry_depth(candidate: i32, pid: i32) -> Option<usize> {
    if candidate <= 0 {
        return None;
    }
    if candidate == pid {
        return Some(0);
    }
    ancestors(pid, MAX_DEPTH)
        .iter()
        .position(|&p| p == candidate)
        .map(|i| i + 1)
}

/// Largest command line read (`/proc/<pid>/cmdline`).
const CMDLINE_CAP: u64 = 64 * 1024;
/// Executables that run pi's JavaScript entry script.
const JS_RUNTIMES: [&str; 3] = ["node", "nodejs", "bun"];

/// The executable a process runs (`/proc/<pid>/exe`), as the kernel names it.
pub fn exe(pid: i32) -> Option<std::path::PathBuf> {
    if pid <= 0 {
        return None;
    }
    std::fs::read_link(format!("/proc/{pid}/exe")).ok()
}

/// The command line of a process (`/proc/<pid>/cmdline`), split at NULs, empty parts dropped
/// (a retitled process pads its title with NULs). Capped at 64 KiB.
pub fn cmdline(pid: i32) -> Option<Vec<String>> {
    if pid <= 0 {
        return None;
    }
    let bytes =
        fsguard::read_capped(Path::new(&format!("/proc/{pid}/cmdline")), CMDLINE_CAP).ok()?;
    Some(
        bytes
            .split(|&b| b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect(),
    )
}

/// Why a process is judged to be pi, or why not. Judged by what the kernel says it runs — its
/// executable (`/proc/<pid>/exe`) and command line — never by its name (`comm`, `argv[0]`,
/// `#{pane_current_command}`), which any program can take (`exec -a pi bash`).
///
/// pi is a JavaScript program: its executable is a JS runtime (`node`, `nodejs`, `bun`), and
/// either its command line still names pi's entry script (a path through a `pi-coding-agent`
/// folder, or a script named `pi`, as `#!/usr/bin/env node` runs it), or it is exactly `pi`:
/// pi 1.6.0 sets its process title, which replaces its whole command line with `pi`. A
/// standalone (compiled) pi binary is not recognized.
pub fn pi_verdict(exe: &Path, argv: &[String]) -> Result<(), NotPi> {
    let runtime = exe
        .file_name()
        .and_then(|n| n.to_str())
        .map(|n| n.trim_end_matches(" (deleted)"))
        .unwrap_or("");
    if !JS_RUNTIMES.contains(&runtime) {
        return Err(NotPi::Executable(exe.to_path_buf()));
    }
    if argv.len() == 1 && argv[0] == "pi" {
        return Ok(());
    }
    // The script is the first argument after the runtime's own options.
    let script = argv.iter().skip(1).find(|a| !a.starts_with('-'));
    let is_pi_script = script.is_some_and(|s| {
        let p = Path::new(s);
        p.components()
            .any(|c| c.as_os_str().to_str() == Some("pi-coding-agent"))
            || p.file_name().and_then(|n| n.to_str()) == Some("pi")
    });
    if is_pi_script {
        Ok(())
    } else {
        Err(NotPi::NoPiScript)
    }
}

/// Why a process is not judged to be pi.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotPi {
    /// Its executable is not a JavaScript runtime.
    Executable(PathBuf),
    /// Its command line runs no pi entry script.
    NoPiScript,
    ExeUnreadable,
    CmdlineUnreadable,
}

impl std::fmt::Display for NotPi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotPi::Executable(exe) => write!(
                f,
                "its executable is {}, not a JavaScript runtime running pi",
                crate::text::sanitize(&exe.display().to_string())
            ),
            NotPi::NoPiScript => f.write_str("its command line runs no pi entry script"),
            NotPi::ExeUnreadable => f.write_str("its executable cannot be read"),
            NotPi::CmdlineUnreadable => f.write_str("its command line cannot be read"),
        }
    }
}

impl std::error::Error for NotPi {}

/// `pi_verdict` for a running process.
pub fn is_pi(pid: i32) -> Result<(), NotPi> {
    let exe = exe(pid).ok_or(NotPi::ExeUnreadable)?;
    let argv = cmdline(pid).ok_or(NotPi::CmdlineUnreadable)?;
    pi_verdict(&exe, &argv)
}

/// One `/proc` pass: pid → ppid for every readable process (bounded by `PROC_SCAN_CAP`).
pub fn parent_map() -> HashMap<i32, i32> {
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
pub fn descendants_in(map: &HashMap<i32, i32>, pid: i32, max: usize) -> Vec<i32> {
    let mut tree = subtree(&children_map(map), pid, max.saturating_add(1));
    tree.remove(0);
    tree
}

/// ppid → its children (sorted), from a pid → ppid map.
pub fn children_map(map: &HashMap<i32, i32>) -> HashMap<i32, Vec<i32>> {
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
    let tasks: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .ok()?
        .take(TASK_CAP)
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .collect();
    let mut kids = Vec::new();
    let mut any = false;
    for tid in &tasks {
        let Ok(text) = fsguard::read_capped(
            Path::new(&format!("/proc/{pid}/task/{tid}/children")),
            STAT_CAP * 16,
        ) else {
            continue;
        };
        any = true;
        kids.extend(
            String::from_utf8_lossy(&text)
                .split_ascii_whitespace()
                .filter_map(|w| w.parse::<i32>().ok()),
        );
    }
    // A process that vanished has no task folder: no children, not "unsupported".
    if !any && !tasks.is_empty() {
        return None;
    }
    kids.sort_unstable();
    kids.dedup();
    Some(kids)
}

/// The first of `pid` and its descendants (in `subtree`'s order, at most `max` looked at) for
/// which `hit` holds. Children are read only for the processes the walk goes past, so a pane
/// that runs its program directly costs one check instead of a whole `/proc` pass.
pub fn find_in_subtree(pid: i32, max: usize, mut hit: impl FnMut(i32) -> bool) -> Option<i32> {
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
pub fn subtree(children: &HashMap<i32, Vec<i32>>, pid: i32, max: usize) -> Vec<i32> {
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

/// Largest environment read (`/proc/<pid>/environ`).
const ENVIRON_CAP: u64 = 256 * 1024;

/// The environment a process started with (`/proc/<pid>/environ`; later changes a program makes
/// to its own environment are not there). `None` when unreadable (another user's process).
pub fn environ(pid: i32) -> Option<HashMap<String, String>> {
    if pid <= 0 {
        return None;
    }
    let bytes =
        fsguard::read_capped(Path::new(&format!("/proc/{pid}/environ")), ENVIRON_CAP).ok()?;
    Some(
        bytes
            .split(|&b| b == 0)
            .filter_map(|kv| {
                let kv = std::str::from_utf8(kv).ok()?;
                let (k, v) = kv.split_once('=')?;
                Some((k.to_string(), v.to_string()))
            })
            .collect(),
    )
}

/// The current folder of a process (`/proc/<pid>/cwd`).
pub fn cwd(pid: i32) -> Option<std::path::PathBuf> {
    if pid <= 0 {
        return None;
    }
    std::fs::read_link(format!("/proc/{pid}/cwd")).ok()
}

#[cfg(test)]
mod tests {
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

    use super::*;

    #[test]
    fn parses_after_the_last_paren() {
        let line = b"4242 (a) (b) R 17 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 100 0\n";
        let st = parse_stat(line).unwrap();
        assert_eq!(st.pid, 4242);
        assert_eq!(st.comm, "a) (b");
        assert_eq!(st.state, 'R');
        assert_eq!(st.ppid, 17);
        assert_eq!(st.start_ticks, 987654);
    }

    #[test]
    fn rejects_malformed_stat() {
        assert!(parse_stat(b"").is_none());
        assert!(parse_stat(b"12 (x").is_none());
        assert!(parse_stat(b"12 x) S 1").is_none());
        assert!(parse_stat(b"12 (x) S 1 2 3").is_none());
        assert!(parse_stat(b"abc (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 0 0 1 0 5 0").is_none());
        assert!(
            parse_stat("12 (x) SS 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 0 0 1 0 5 0".as_bytes()).is_none()
        );
        // Non-UTF-8 in the name is fine; non-UTF-8 after it is not.
        let mut v = b"12 (\xff\xfe) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 0 0 1 0 5 0".to_vec();
        assert_eq!(parse_stat(&v).unwrap().start_ticks, 5);
        v.push(0xff);
        assert!(parse_stat(&v).is_none());
    }

    #[test]
    fn pi_is_judged_by_executable_and_command_line() {
        let v = |exe: &str, argv: &[&str]| {
            pi_verdict(
                Path::new(exe),
                &argv.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            )
        };
        // pi 1.6.0 after it set its title, and before (or an older pi).
        assert!(v("/usr/bin/node", &["pi"]).is_ok());
        assert!(v(
            "/opt/n/bin/node",
            &[
                "node",
                "/opt/lib/node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js",
                "--continue"
            ]
        )
        .is_ok());
        assert!(v(
            "/usr/bin/node",
            &["node", "--no-warnings", "/usr/local/bin/pi"]
        )
        .is_ok());
        assert!(v(
            "/usr/local/bin/bun",
            &["bun", "/x/pi-coding-agent/dist/bun/cli.js"]
        )
        .is_ok());
        // Names are not enough.
        assert!(v("/usr/bin/bash", &["pi"]).is_err());
        assert!(v("/tmp/x/pi", &["pi"]).is_err());
        assert!(v("/usr/bin/node", &["pi", "-e", "1"]).is_err());
        assert!(v("/usr/bin/node", &["node", "/tmp/other.js"]).is_err());
        assert!(v("/usr/bin/node", &[]).is_err());
    }

    #[test]
    fn own_environment_cwd_and_command_line_are_read() {
        let me = std::process::id() as i32;
        let env = environ(me).unwrap();
        assert_eq!(env.get("PATH").cloned(), std::env::var("PATH").ok());
        assert_eq!(cwd(me), std::env::current_dir().ok());
        assert!(!cmdline(me).unwrap().is_empty());
        assert!(exe(me).is_some());
    }

    #[test]
    fn own_identity_is_alive_and_a_changed_start_is_not() {
        let me = std::process::id() as i32;
        let id = identity(me).unwrap();
        assert!(is_alive(&id));
        let mut other = id.clone();
        other.start_ticks += 1;
        assert_eq!(status(&other), ProcStatus::Gone);
        let mut other_boot = id.clone();
        other_boot.boot_id = "00000000-0000-0000-0000-000000000000".into();
        assert_eq!(status(&other_boot), ProcStatus::Gone);
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
