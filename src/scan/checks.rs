//! What a pass's states rest on beyond the files it read and the panes it listed, kept so that a
//! live view's timer can ask "would a new pass find the same?" without making one
//! (docs/behaviour.md §3a): the processes whose liveness a state rests on, each folder's git
//! checkout, and each multiplexer server a seat named that nothing answered for.

use std::path::PathBuf;

use crate::proc::ProcIdentity;

/// The pass's other evidence, as it found it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Checks {
    /// Every process a seat's liveness rests on that a live view does not hold by a pidfd
    /// (connectors' owners; the pis are `Scan::pis`) and whether it was alive.
    pub procs: Vec<(ProcIdentity, bool)>,
    /// Each workspace folder's nearest git checkout, as the pass found it.
    pub git: Vec<(PathBuf, Option<String>)>,
    /// Each server a seat named that did not answer because nothing listens on its socket,
    /// with what was at that path (`None`: nothing; a server that starts makes its socket
    /// anew). `None` when some server failed otherwise: only a full pass asks it again.
    pub not_listening: Option<Vec<(PathBuf, Option<SocketMark>)>>,
}

/// What is at a socket's path: device, inode, type and ctime (s, ns).
pub(crate) type SocketMark = (u64, u64, u32, i64, i64);

/// What is at `path` now, never following a link (`None`: nothing, or it cannot be looked at).
fn socket_mark(path: &std::path::Path) -> Option<SocketMark> {
    let st = rustix::fs::lstat(path).ok()?;
    Some((
        st.st_dev,
        st.st_ino,
        st.st_mode,
        st.st_ctime,
        st.st_ctime_nsec as i64,
    ))
}

impl Checks {
    pub(super) fn of(found: &super::discover::Discovered, git: super::build::GitRoots) -> Checks {
        let mut procs = Vec::new();
        for owner in found
            .seats
            .iter()
            .filter_map(|s| s.binding.as_ref()?.owner.as_ref())
        {
            let id = ProcIdentity {
                pid: owner.pid,
                start_ticks: owner.start_tick,
                boot_id: owner.boot_id.clone(),
            };
            let alive = crate::proc::is_alive(&id);
            procs.push((id, alive));
        }
        let mut git = git.into_lookups();
        git.sort();
        Checks {
            procs,
            git,
            not_listening: found.panes.not_listening().map(|sockets| {
                sockets
                    .into_iter()
                    .map(|s| {
                        let mark = socket_mark(&s);
                        (s, mark)
                    })
                    .collect()
            }),
        }
    }

    /// Whether every socket kept in `not_listening` was made before `t` (ns since the epoch, on
    /// the clock file times come from): one made later, by a server starting while the pass
    /// asked, may answer now though the pass saw nothing listening. False when there is no
    /// such list.
    pub(crate) fn sockets_made_before(&self, t: i128) -> bool {
        self.not_listening.as_ref().is_some_and(|s| {
            s.iter().all(|(_, mark)| {
                mark.is_none_or(|(_, _, _, secs, ns)| crate::fsguard::latest_ns(secs, ns) < t)
            })
        })
    }

    /// Whether all of it still holds now: every server that did not answer has the same (or
    /// no) socket, every process is as alive as it was, every folder in the same git checkout.
    /// Reads `/proc` and `lstat`s; changes nothing.
    pub fn still_hold(&self) -> bool {
        self.not_listening
            .as_ref()
            .is_some_and(|s| s.iter().all(|(path, mark)| socket_mark(path) == *mark))
            && self
                .procs
                .iter()
                .all(|(id, alive)| crate::proc::is_alive(id) == *alive)
            && self
                .git
                .iter()
                .all(|(dir, project)| super::build::git_project(dir) == *project)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_that_ended_or_a_new_checkout_no_longer_holds() {
        let me = crate::proc::identity(std::process::id() as i32).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().join("work");
        std::fs::create_dir(&work).unwrap();
        let checks = Checks {
            procs: vec![(me.clone(), true)],
            git: vec![(work.clone(), super::super::build::git_project(&work))],
            not_listening: Some(vec![(dir.path().join("gone.sock"), None)]),
        };
        assert!(checks.still_hold());

        let mut gone = me.clone();
        gone.start_ticks += 1;
        let ended = Checks {
            procs: vec![(gone, true)],
            ..checks.clone()
        };
        assert!(!ended.still_hold());

        let unanswered = Checks {
            not_listening: None,
            ..checks.clone()
        };
        assert!(!unanswered.still_hold());

        // A server started where nothing listened makes its socket: no longer the same.
        let listener = std::os::unix::net::UnixListener::bind(dir.path().join("gone.sock"));
        assert!(listener.is_ok());
        assert!(!checks.still_hold(), "a socket made where none was");
        let now = Checks {
            not_listening: Some(vec![(
                dir.path().join("gone.sock"),
                socket_mark(&dir.path().join("gone.sock")),
            )]),
            ..checks.clone()
        };
        assert!(now.still_hold());
        // Made after a pass began: that pass is no baseline.
        assert!(!now.sockets_made_before(0), "made after the epoch");
        assert!(now.sockets_made_before(i128::MAX));
        assert!(checks.sockets_made_before(0), "nothing there: nothing made");
        drop(listener);
        std::fs::remove_file(dir.path().join("gone.sock")).unwrap();
        let _again = std::os::unix::net::UnixListener::bind(dir.path().join("gone.sock")).unwrap();
        assert!(!now.still_hold(), "made anew by another server");

        std::fs::create_dir(work.join(".git")).unwrap();
        assert!(!checks.still_hold(), "a checkout made in the folder");
    }
}
