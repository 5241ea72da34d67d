//! The README's shell blocks, for the tests that run them word for word.
#![allow(dead_code)]

use std::path::Path;

/// The README's fenced `sh` block that holds `marker`, as written (panics when there is none:
/// a test that ran no command would prove nothing).
pub fn sh_block(marker: &str) -> String {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    readme
        .split("```sh\n")
        .skip(1)
        .filter_map(|b| b.split("\n```").next())
        .find(|b| b.contains(marker))
        .unwrap_or_else(|| panic!("no ```sh block in README.md holds {marker:?}"))
        .to_string()
}

/// A fresh account: an empty HOME whose `~/.cargo/bin` holds this build as `intercom-pane` (what
/// `cargo install --locked --path .` puts there), and a PATH of that folder and the system's.
pub struct FreshHome {
    pub dir: tempfile::TempDir,
}

impl FreshHome {
    pub fn new() -> FreshHome {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("home/.cargo/bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::copy(
            env!("CARGO_BIN_EXE_intercom-pane"),
            bin.join("intercom-pane"),
        )
        .unwrap();
        FreshHome { dir }
    }

    pub fn home(&self) -> std::path::PathBuf {
        self.dir.path().join("home")
    }

    /// `~/.cargo/bin`, then `extra`, then the system's folders (no `~/.local/bin`).
    pub fn path_env(&self, extra: &[&Path]) -> String {
        let mut parts = vec![self.home().join(".cargo/bin").display().to_string()];
        parts.extend(extra.iter().map(|p| p.display().to_string()));
        parts.push("/usr/local/bin:/usr/bin:/bin".into());
        parts.join(":")
    }
}

/// `s` as one shell word (single quotes; a `'` inside closed, escaped and reopened).
pub fn shell_word(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}
