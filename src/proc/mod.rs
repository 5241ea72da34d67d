//! Process identity on Linux, read from `/proc` directly (docs/interop.md §9).
//!
//! Why: a pid alone is reused by the kernel; "is this still the same process" needs the start
//! time (stat field 22, clock ticks since boot) and the boot id as well. Everything in the product
//! that decides "same process" calls this module. Every read is capped (stat ≤ 4 KiB) and every
//! walk is bounded by a count.

use std::path::Path;

use crate::fsguard;

pub(crate) mod pidfd;
mod program;
pub(crate) mod ptys;
mod tree;

pub use program::pi_verdict;
pub(crate) use program::{
    cmdline, cwd, environ, exe, is_pi, open_session_files, pi_command_line, NotPi,
};
pub use tree::{children_of, descendants};
pub(crate) use tree::{find_in_subtree, parent_map};

/// Largest `/proc/<pid>/stat` we accept (real ones are a few hundred bytes).
pub(crate) const STAT_CAP: u64 = 4096;
/// Largest boot id file we accept (a UUID plus newline is 37 bytes).
const BOOT_ID_CAP: u64 = 128;
/// Default bound on ancestry depth used by `is_ancestor`.
pub(crate) const MAX_DEPTH: usize = 256;

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
    /// Field 8: the foreground process group of the process's controlling terminal (-1: none).
    pub tpgid: i32,
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
    // After `)`: field 3 (state), 4 (ppid), 5 (pgrp), 6 (session), 7 (tty), 8 (tpgid), ...,
    // 22 (starttime). Taken in order, never collected.
    let mut fields = rest.split_ascii_whitespace();
    let mut state_chars = fields.next()?.chars();
    let state = state_chars.next()?;
    if state_chars.next().is_some() {
        return None;
    }
    let ppid: i32 = fields.next()?.parse().ok()?;
    let pgrp: i32 = fields.next()?.parse().ok()?;
    let session: i32 = fields.next()?.parse().ok()?;
    let _tty = fields.next()?;
    let tpgid: i32 = fields.next()?.parse().ok()?;
    // Fields 9 to 21 skipped.
    let start_ticks: u64 = fields.nth(13)?.parse().ok()?;
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
        tpgid,
        start_ticks,
    })
}

/// Read `/proc/<pid>/<leaf>` into `buf` without allocating: what was read, and whether that is
/// the whole file (`false`: `buf` filled up first). `None` when it cannot be opened or read (the
/// process is gone). A live view reads hundreds of these every pass; on an idle machine each
/// heap allocation touched memory that had gone cold (docs/benchmarks.md). Bounded: each
/// `read` takes at least one byte or ends the loop.
pub(crate) fn read_into<'a>(pid: i32, leaf: &str, buf: &'a mut [u8]) -> Option<(&'a [u8], bool)> {
    use rustix::fs::{Mode, OFlags};
    if pid <= 0 {
        return None;
    }
    let mut path = [0u8; 96];
    let path = proc_path(&mut path, pid, leaf)?;
    let flags = OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOFOLLOW;
    let fd = rustix::fs::open(path, flags, Mode::empty()).ok()?;
    let mut got = 0;
    while got < buf.len() {
        match rustix::io::read(&fd, &mut buf[got..]) {
            Ok(0) => return Some((&buf[..got], true)),
            Ok(n) => got += n,
            Err(rustix::io::Errno::INTR) => {}
            Err(_) => return None,
        }
    }
    Some((&buf[..got], false))
}

/// `/proc/<pid>/<leaf>` written into `buf`, without allocating (`None`: it does not fit).
pub(crate) fn proc_path<'a>(buf: &'a mut [u8], pid: i32, leaf: &str) -> Option<&'a str> {
    use std::io::Write;
    let room = buf.len();
    let mut w = &mut buf[..];
    write!(w, "/proc/{pid}/{leaf}").ok()?;
    let len = room - w.len();
    std::str::from_utf8(&buf[..len]).ok()
}

/// Read and parse `/proc/<pid>/stat`. `None` when the process does not exist or the file is
/// unreadable or malformed.
pub fn read_stat(pid: i32) -> Option<ProcStat> {
    if pid <= 0 {
        return None;
    }
    let mut buf = [0u8; 1024];
    let st = match read_into(pid, "stat", &mut buf)? {
        (bytes, true) => parse_stat(bytes)?,
        // Longer than a stat line ever is: read it capped.
        (_, false) => {
            let path = format!("/proc/{pid}/stat");
            parse_stat(&fsguard::read_capped(Path::new(&path), STAT_CAP).ok()?)?
        }
    };
    // A stat file always names its own pid; anything else is not what we asked for.
    (st.pid == pid).then_some(st)
}

/// This boot's id (`/proc/sys/kernel/random/boot_id`), validated as a UUID-shaped string. Read
/// once per process: it cannot change while the process runs (a live view checks hundreds of
/// identities a pass). A failed read is not remembered.
pub fn boot_id() -> Option<String> {
    static BOOT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    if let Some(b) = BOOT.get() {
        return Some(b.clone());
    }
    let b = read_boot_id()?;
    Some(BOOT.get_or_init(|| b).clone())
}

fn read_boot_id() -> Option<String> {
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
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
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

/// `/proc/stat` is one line per CPU; this covers very large machines.
const PROC_STAT_CAP: u64 = 1 << 20;

/// When a process with these start ticks started, in ms since the epoch (boot time + start
/// ticks); `None` when `/proc/stat` or the clock rate cannot be read.
pub(crate) fn started_at_ms(start_ticks: u64) -> Option<crate::clock::Ms> {
    let bytes = fsguard::read_capped(Path::new("/proc/stat"), PROC_STAT_CAP).ok()?;
    let text = std::str::from_utf8(&bytes).ok()?;
    let btime: i64 = text
        .lines()
        .find_map(|l| l.strip_prefix("btime "))?
        .trim()
        .parse()
        .ok()?;
    let hz = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .filter(|h| *h > 0)? as i64;
    Some(btime * 1000 + (start_ticks as i64) * 1000 / hz)
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

/// Largest `/proc/<pid>/status` read (real ones are about 1.5 KiB).
const STATUS_CAP: u64 = 16 * 1024;

/// The real and effective uid of a process (`Uid:` in `/proc/<pid>/status`); `None` when it is
/// gone or unreadable.
pub fn uids(pid: i32) -> Option<(u32, u32)> {
    if pid <= 0 {
        return None;
    }
    let bytes = fsguard::read_capped(Path::new(&format!("/proc/{pid}/status")), STATUS_CAP).ok()?;
    let text = std::str::from_utf8(&bytes).ok()?;
    let mut ids = text
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))?
        .split_ascii_whitespace()
        .map(|v| v.parse::<u32>().ok());
    Some((ids.next()??, ids.next()??))
}

/// The process runs as this process's user (real and effective uid both ours): the only
/// processes we type into, signal or trust a record of.
pub(crate) fn is_ours(pid: i32) -> bool {
    let me = fsguard::my_uid();
    uids(pid) == Some((me, me))
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

#[cfg(test)]
mod tests {
    use super::{identity, is_alive, parse_stat, status, ProcStatus};

    #[test]
    fn parses_after_the_last_paren() {
        let line = b"4242 (a) (b) R 17 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 100 0\n";
        let st = parse_stat(line).unwrap();
        assert_eq!(st.pid, 4242);
        assert_eq!(st.comm, "a) (b");
        assert_eq!(st.state, 'R');
        assert_eq!(st.ppid, 17);
        assert_eq!(st.tpgid, -1);
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
}
