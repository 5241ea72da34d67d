//! Process identity over /proc, on real processes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::os::unix::fs::PermissionsExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use intercom_pane::seam::proc::{self, ProcStatus};

fn wait_for<T>(ms: u64, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let end = Instant::now() + Duration::from_millis(ms);
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if Instant::now() >= end {
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Kills and reaps the child when the test ends, whatever happens.
struct Reap(Child);

impl Drop for Reap {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Kills a grandchild (which we cannot reap) when the test ends.
struct KillPid(i32);

impl Drop for KillPid {
    fn drop(&mut self) {
        if self.0 > 1 {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(self.0),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

#[test]
fn a_command_name_with_parens_and_spaces_parses_after_the_last_paren() {
    let dir = tempfile::tempdir().unwrap();
    let odd = dir.path().join("a) (b");
    // A hard link, not a copy: a fresh copy can fail with "Text file busy" while a parallel
    // test's fork still holds its write descriptor.
    if std::fs::hard_link("/bin/sleep", &odd).is_err() {
        std::fs::copy("/bin/sleep", &odd).unwrap();
        std::fs::set_permissions(&odd, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let child = Reap(Command::new(&odd).arg("1000").spawn().unwrap());
    let pid = child.0.id() as i32;
    let st = wait_for(10_000, || {
        proc::read_stat(pid).filter(|s| s.comm == "a) (b")
    })
    .unwrap();
    assert_eq!(st.pid, pid);
    assert_eq!(st.ppid, std::process::id() as i32);
    assert!(matches!(st.state, 'S' | 'R'), "{st:?}");
    assert!(st.start_ticks > 0);
    let id = proc::identity(pid).unwrap();
    assert_eq!(id.start_ticks, st.start_ticks);
    assert_eq!(id.boot_id, proc::boot_id().unwrap());
    assert!(proc::is_alive(&id));
    drop(child);
    assert_eq!(proc::status(&id), ProcStatus::Gone);
    assert!(!proc::is_alive(&id));
}

#[test]
fn a_zombie_is_not_alive() {
    let mut child = Command::new("sleep").arg("1000").spawn().unwrap();
    let pid = child.id() as i32;
    let id = proc::identity(pid).unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    // Not reaped yet: the kernel keeps it as a zombie with the same start ticks.
    let st = wait_for(10_000, || proc::read_stat(pid).filter(|s| s.state == 'Z')).unwrap();
    assert_eq!(st.start_ticks, id.start_ticks);
    assert_eq!(proc::status(&id), ProcStatus::Zombie);
    assert!(!proc::is_alive(&id));
    assert_eq!(proc::identity(pid), None);
    child.wait().unwrap();
    assert_eq!(proc::status(&id), ProcStatus::Gone);
}

#[test]
fn ancestry_and_descendants_are_bounded() {
    let me = std::process::id() as i32;
    let child = Reap(
        Command::new("sh")
            .args(["-c", "sleep 1000 & wait"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let sh = child.0.id() as i32;
    let sleep = wait_for(10_000, || proc::descendants(sh, 8).first().copied()).unwrap();
    let _kill = KillPid(sleep);
    assert_eq!(proc::read_stat(sleep).unwrap().ppid, sh);

    let chain = proc::ancestors(sleep, 64);
    assert_eq!(&chain[..2], &[sh, me]);
    assert_eq!(chain.last(), Some(&1), "walk stops at pid 1: {chain:?}");
    assert_eq!(proc::ancestors(sleep, 1), vec![sh]);
    assert!(proc::ancestors(sleep, 0).is_empty());
    assert!(proc::ancestors(1, 10).is_empty());
    assert!(proc::ancestors(i32::MAX, 10).is_empty());

    assert!(proc::is_ancestor(me, sleep));
    assert!(proc::is_ancestor(sh, sleep));
    assert!(!proc::is_ancestor(sleep, me));
    assert!(!proc::is_ancestor(sleep, sleep));
    assert_eq!(proc::ancestry_depth(sleep, sleep), Some(0));
    assert_eq!(proc::ancestry_depth(sh, sleep), Some(1));
    assert_eq!(proc::ancestry_depth(me, sleep), Some(2));
    assert_eq!(proc::ancestry_depth(sleep, me), None);

    let mine = proc::descendants(me, 1000);
    assert!(mine.contains(&sh) && mine.contains(&sleep), "{mine:?}");
    assert!(mine.iter().position(|&p| p == sh) < mine.iter().position(|&p| p == sleep));
    assert_eq!(proc::descendants(me, 1).len(), 1);
    assert!(proc::descendants(sleep, 10).is_empty());
}

#[test]
fn boot_id_is_stable_and_uuid_shaped() {
    let a = proc::boot_id().unwrap();
    assert_eq!(a.len(), 36);
    assert_eq!(a, proc::boot_id().unwrap());
    assert!(proc::read_stat(0).is_none());
    assert!(proc::read_stat(-5).is_none());
    assert!(proc::identity(i32::MAX).is_none());
}
