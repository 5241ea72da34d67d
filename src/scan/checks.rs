//! What a pass's states rest on beyond the files it read and the panes it listed, kept so that a
//! live view's timer can ask "would a new pass find the same?" without making one
//! (docs/behaviour.md §3a): the processes whose liveness a state rests on, each folder's git
//! checkout, and whether every multiplexer server a seat named answered.

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
    /// Every server a seat named was asked and answered.
    pub servers_answered: bool,
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
            servers_answered: found.panes.all_answered(),
        }
    }

    /// Whether all of it still holds now: every server answered, every process as alive as it
    /// was, every folder in the same git checkout. Reads `/proc` and `lstat`s; changes nothing.
    pub fn still_hold(&self) -> bool {
        self.servers_answered
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
            servers_answered: true,
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
            servers_answered: false,
            ..checks.clone()
        };
        assert!(!unanswered.still_hold());

        std::fs::create_dir(work.join(".git")).unwrap();
        assert!(!checks.still_hold(), "a checkout made in the folder");
    }
}
