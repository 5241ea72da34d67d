//! Hostile values for every tmux call site, and the proof that none of them ran: each `#(…)`
//! would touch its own file through `$M` (set in the server's global environment, which tmux's
//! format jobs see), and the server, started with `TmuxServer::start_logged`, logs every format
//! job it starts — even one it kills at once, as it does when the command client that expanded
//! it exits, which a marker file alone could miss. `assert_none_ran` first runs a job of its own
//! and finds it in the log, so an empty log cannot pass for "nothing ran".
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use crate::mux_support::{wait_for, TmuxServer};

pub struct Markers {
    pub dir: tempfile::TempDir,
}

impl Markers {
    /// Markers for `server`: sets `M` in its global environment.
    pub fn on(server: &TmuxServer) -> Markers {
        let m = Markers::new();
        m.arm(server);
        m
    }

    pub fn new() -> Markers {
        // No `.` or `:` in the path: it can also appear inside a session name.
        let dir = tempfile::Builder::new()
            .prefix("hostile")
            .rand_bytes(8)
            .tempdir_in("/tmp")
            .unwrap();
        Markers { dir }
    }

    /// Set `M` for the jobs of `server`.
    pub fn arm(&self, server: &TmuxServer) {
        let m = self.dir.path().join("m").display().to_string();
        server.tmux(&["set-environment", "-g", "M", &m]);
    }

    /// `#(…)` that would create the marker `m<tag>` (no `/` in it: it fits in a folder name).
    pub fn job(&self, tag: &str) -> String {
        format!("#(touch \"$M\"{tag})")
    }

    /// The marker a job of `tag` would create.
    pub fn marker(&self, tag: &str) -> PathBuf {
        self.dir.path().join(format!("m{tag}"))
    }

    /// `#(…)` that creates the marker `m<tag>` by its absolute path: no `$` (a session name
    /// refuses one before a letter), but a `/` (no folder name can hold it).
    pub fn job_abs(&self, tag: &str) -> String {
        format!("#(touch {})", self.marker(tag).display())
    }

    /// Values for a name, title, folder or target: a shell command, a variable, an alias, styles
    /// (which tmux keeps as they are), the `%0},#(…)` target injection, newline and TAB. None
    /// holds `/`, `.` or `:`.
    pub fn values(&self, tag: &str) -> Vec<String> {
        self.values_with(tag, |t| self.job(t))
    }

    /// `values` with jobs by absolute path (`job_abs`): for session names.
    pub fn name_values(&self, tag: &str) -> Vec<String> {
        self.values_with(tag, |t| self.job_abs(t))
    }

    fn values_with(&self, tag: &str, job: impl Fn(&str) -> String) -> Vec<String> {
        vec![
            format!("j{}x", job(&format!("{tag}j"))),
            "v#{session_name}-#{pane_id}#{?pane_active,A,B}".into(),
            "notes#S#W##S#".into(),
            "s#[fg=red]t##[u#".into(),
            format!("%0}},{}", job(&format!("{tag}t"))),
            format!("nl\nx\ty{}", job(&format!("{tag}c"))),
        ]
    }

    /// Every marker created so far.
    pub fn found(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(self.dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n != "msentinel")
            .collect();
        v.sort();
        v
    }

    /// No hostile value ran on `server` (started with `start_logged`): a job of our own shows in
    /// its log, no job of a hostile value does, and no marker file exists.
    pub fn assert_none_ran(&self, server: &TmuxServer) {
        server.tmux(&["display-message", "-p", &self.job("sentinel")]);
        let jobs = server.jobs_run();
        assert!(
            jobs.iter().any(|l| l.contains("sentinel")),
            "the server's log shows the format jobs it runs: {jobs:?}"
        );
        // Other jobs may run (run-shell's, a popup's): a hostile one names `$M` or our folder.
        let ours = self.dir.path().display().to_string();
        let ran: Vec<&String> = jobs
            .iter()
            .filter(|l| !l.contains("sentinel") && (l.contains("\"$M\"") || l.contains(&ours)))
            .collect();
        assert!(ran.is_empty(), "tmux ran a hostile #(…): {ran:?}");
        assert_eq!(self.found(), Vec::<String>::new(), "a hostile #(…) ran");
    }
}

/// One folder per hostile value under `base`, each created.
pub fn folders(base: &Path, values: &[String]) -> Vec<PathBuf> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let d = base.join(format!("d{i}{v}"));
            std::fs::create_dir_all(&d).unwrap();
            d
        })
        .collect()
}

/// What tmux reports for `format` (one variable) of `target`, byte for byte (a `.` after it keeps
/// trailing newlines apart from the one `display -p` adds).
pub fn reported(server: &TmuxServer, target: &str, variable: &str) -> String {
    let out = server.tmux(&[
        "display-message",
        "-p",
        "-t",
        target,
        &format!("#{{{variable}}}."),
    ]);
    out.strip_suffix(".\n")
        .unwrap_or_else(|| panic!("display-message printed {out:?}"))
        .to_string()
}

/// Wait until tmux reports `want` as the folder of `pane` (once its process started there).
pub fn wait_cwd(server: &TmuxServer, pane: &str, want: &Path) {
    let want = want.to_str().unwrap().to_string();
    wait_for(10_000, || {
        (reported(server, pane, "pane_current_path") == want).then_some(())
    })
    .unwrap_or_else(|| {
        panic!(
            "pane {pane} is in {:?}, not {want:?}",
            reported(server, pane, "pane_current_path")
        )
    });
}
