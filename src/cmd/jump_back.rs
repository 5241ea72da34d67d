//! The way back after the sidebar's ⏎: the sidebar records where it was when it moved the
//! person (`<dataRoot>/jump-back.json`: its multiplexer, server socket and pane, the pane it went
//! to), and `jump --back` takes the person there again — on tmux the plugin's key does the same
//! from the pane option the jump leaves; on Herdr a custom key (`[[keys.command]]`, type
//! `shell`) runs `intercom-pane jump --back`. The sidebar pane must still carry our marker,
//! else nothing moves.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::clock::Ms;
use crate::cmd::exit::JumpExit;
use crate::fsguard;
use crate::mux::{self, MuxKind};
use crate::store;
use crate::text::sanitize;

/// Cap on the record's size (a few hundred bytes in practice).
const CAP: u64 = 16 * 1024;
const STEP: Duration = Duration::from_secs(5);

/// Where the last ⏎ of a sidebar came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct JumpBack {
    pub multiplexer: MuxKind,
    pub socket: PathBuf,
    /// The sidebar's pane.
    pub sidebar: String,
    /// The pane the person was taken to.
    pub went_to: String,
    pub at: Ms,
}

fn path(data_root: &Path) -> PathBuf {
    data_root.join("jump-back.json")
}

/// Remember the sidebar's pane after a ⏎ moved the person (a failure costs only `--back`).
pub(crate) fn remember(data_root: &Path, back: &JumpBack) {
    if let Ok(bytes) = serde_json::to_vec(back) {
        let _ = store::write_atomic(&path(data_root), &bytes);
    }
}

/// `jump --back`: to the sidebar the last ⏎ came from, if it is still ours.
pub(crate) fn go_back(data_root: &Path) -> JumpExit {
    let say = |line: String| eprintln!("intercom-pane jump: {line}");
    let back: JumpBack = match fsguard::read_capped(&path(data_root), CAP) {
        Ok(b) => match serde_json::from_slice(&b) {
            Ok(r) => r,
            Err(e) => {
                say(format!(
                    "{} is not a record of a jump ({e}); a ⏎ on the sidebar writes a new one",
                    path(data_root).display()
                ));
                return JumpExit::NoTarget;
            }
        },
        Err(fsguard::FsError::NotFound) => {
            say("no way back recorded: ⏎ on the sidebar goes to a worker and records it".into());
            return JumpExit::NoTarget;
        }
        Err(e) => {
            say(format!("{}: {}", path(data_root).display(), e.code()));
            return JumpExit::Failed;
        }
    };
    let m = mux::open(back.multiplexer, &back.socket);
    let deadline = Instant::now() + STEP;
    match m.read_marker(&back.sidebar, deadline) {
        Ok(Some(marker)) if marker.starts_with("intercom-pane:") => {}
        _ => {
            say(format!(
                "the sidebar {} is gone (or no longer ours): nothing to go back to",
                sanitize(&back.sidebar)
            ));
            return JumpExit::NoTarget;
        }
    }
    match m.jump_to(&back.sidebar, None, deadline) {
        Ok(()) => {
            crate::cmd::out(format_args!(
                "back to the sidebar ({} {})",
                back.multiplexer.name(),
                sanitize(&back.sidebar)
            ));
            JumpExit::Moved
        }
        Err(e) => {
            say(format!("not moved back: {}", sanitize(&e.to_string())));
            JumpExit::Failed
        }
    }
}
