//! Which ptys a process holds the master side of (by number, `/dev/pts/N`): its fds that are
//! `/dev/ptmx` opens, and the `tty-index` the kernel gives each in `fdinfo` (Linux 4.15+). The
//! live engine asks this of a tmux server when a pty comes or goes, to tell its own panes' ptys
//! from every other program's (`live::panes`).

use std::collections::BTreeSet;

/// Most fds looked at (a tmux server holds one per pane and client, and a few more).
const MAX_FDS: usize = 16_384;

/// The numbers of the ptys whose master `pid` holds, when that can be told for sure: `None`
/// when the process is not asleep (it may be inside the `open` that makes a pty, whose node
/// exists before its fd does), or when its fds or a master's `tty-index` cannot be read.
pub(crate) fn masters(pid: i32) -> Option<BTreeSet<u32>> {
    use rustix::fs::{Mode, OFlags, CWD};
    // Asleep first, then the fds: a pty this process made before it slept has its fd by now.
    if super::read_stat(pid)?.state != 'S' {
        return None;
    }
    let mut path = [0u8; 48];
    let dir = super::proc_path(&mut path, pid, "fd")?;
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(CWD, dir, flags, Mode::empty()).ok()?;
    let mut buf = [std::mem::MaybeUninit::<u8>::uninit(); 8192];
    let mut names = rustix::fs::RawDir::new(&fd, &mut buf);
    let mut out = BTreeSet::new();
    let mut seen = 0;
    while let Some(item) = names.next() {
        let item = item.ok()?;
        let name = item.file_name();
        if name == c"." || name == c".." {
            continue;
        }
        seen += 1;
        if seen > MAX_FDS {
            return None;
        }
        let mut link = [0u8; 64];
        let Ok(n) = rustix::fs::readlinkat_raw(&fd, name, &mut link[..]) else {
            // Closed since it was listed.
            continue;
        };
        let target = &link[..n.min(link.len())];
        if !(target == b"/dev/ptmx" || target == b"/dev/pts/ptmx") {
            continue;
        }
        let leaf = format!("fdinfo/{}", name.to_str().ok()?);
        let mut info = [0u8; 1024];
        let Some((bytes, _)) = super::read_into(pid, &leaf, &mut info) else {
            continue;
        };
        out.insert(tty_index(bytes)?);
    }
    Some(out)
}

/// The `tty-index:` line of a master's `fdinfo`.
fn tty_index(fdinfo: &[u8]) -> Option<u32> {
    std::str::from_utf8(fdinfo)
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("tty-index:"))?
        .trim()
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tty_index_is_read_from_fdinfo() {
        assert_eq!(
            tty_index(b"pos:\t0\nflags:\t02100002\nmnt_id:\t24\nino:\t90\ntty-index:\t73\n"),
            Some(73)
        );
        assert_eq!(tty_index(b"pos:\t0\nflags:\t02\n"), None);
    }

    /// A sleeping process that opened `/dev/ptmx` holds that pty's master; another process
    /// does not.
    #[test]
    fn a_process_holding_a_pty_master_is_told_from_one_that_does_not() {
        let mut sh = std::process::Command::new("sh")
            .args(["-c", "exec 3<>/dev/ptmx; exec sleep 30"])
            .spawn()
            .unwrap();
        let pid = sh.id() as i32;
        let mut held = None;
        // Bounded: the shell opens it and sleeps within moments.
        for _ in 0..300 {
            held = masters(pid).filter(|m| !m.is_empty());
            if held.is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let held = held.expect("the sleeping shell's master was not found");
        assert_eq!(held.len(), 1, "{held:?}");
        let n = held.iter().next().copied().unwrap_or_default();
        let mine = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/ptmx")
            .unwrap();
        use std::os::fd::AsRawFd;
        let info = std::fs::read(format!("/proc/self/fdinfo/{}", mine.as_raw_fd())).unwrap();
        let my = tty_index(&info).unwrap();
        // This process's main thread sleeps while the tests run: it holds its own master, never
        // the shell's.
        let m = masters(std::process::id() as i32).expect("the test process is told");
        assert!(
            m.contains(&my) && !m.contains(&n),
            "{m:?} mine {my}, the shell's {n}"
        );
        drop(mine);
        let _ = sh.kill();
        let _ = sh.wait();
        assert_eq!(masters(-1), None);
    }
}
