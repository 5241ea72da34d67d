//! Whether a tmux server can be there at all, known without running tmux.

use std::path::{Path, PathBuf};

use super::Tmux;
use crate::mux::{ErrorCode, MuxError};

impl Tmux {
    /// No socket file means no server (tmux would say so): known with a stat, so a pass on a
    /// machine without a server spawns no tmux at all. tmux missing from PATH still comes first,
    /// as it would from the spawn.
    pub(super) fn server_may_listen(&self) -> Result<(), MuxError> {
        if !matches!(
            crate::fsguard::kind(&self.socket),
            Err(crate::fsguard::FsError::NotFound)
        ) {
            return Ok(());
        }
        if !self.program_on_path() {
            return Err(MuxError::new(ErrorCode::NotInstalled, "tmux not found"));
        }
        Err(MuxError::new(
            ErrorCode::NoServer,
            format!("no server running on {}", self.socket.display()),
        ))
    }

    /// Whether the program would be found to run (an executable file, looked up on PATH as the
    /// spawn does when it has no `/`).
    fn program_on_path(&self) -> bool {
        use std::os::unix::fs::PermissionsExt;
        let runnable = |p: &Path| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        };
        let prog = Path::new(&self.program);
        if self.program.as_encoded_bytes().contains(&b'/') {
            return runnable(prog);
        }
        let path = self
            .path_env
            .clone()
            .or_else(|| std::env::var_os("PATH"))
            .unwrap_or_default();
        std::env::split_paths(&path).take(256).any(|d| {
            let d = if d.as_os_str().is_empty() {
                PathBuf::from(".")
            } else {
                d
            };
            runnable(&d.join(prog))
        })
    }
}
