//! Which sidebars and watchers keep the tmux status count (`@intercom_pane_status`) on a data
//! root: each holds a lock file `<data root>/alerts/boards/<pid>.lock` while it runs. A board
//! that ends clears the count only when no other board is left to keep it current; otherwise
//! the count stays (one of two watchers quitting used to blank it until the other's next
//! change). Leaving is done under the alert memory's lock, so two boards ending at once
//! cannot each see the other still there and both leave the count behind.

use std::path::{Path, PathBuf};

use crate::store::{self, StoreError};

/// Most board files looked at when one leaves.
const MAX_BOARDS: usize = 256;

fn dir(data_root: &Path) -> PathBuf {
    crate::alerts::memory_file::dir(data_root).join("boards")
}

/// A running board's presence (its lock, released and removed when dropped).
pub(crate) struct Presence(#[allow(dead_code)] store::Lock);

/// Say that this process keeps the count.
pub(crate) fn join(data_root: &Path) -> Result<Presence, StoreError> {
    let d = dir(data_root);
    store::ensure_dir(data_root, &d)?;
    let lock = store::Lock::acquire(&d.join(format!("{}.lock", std::process::id())))?;
    Ok(Presence(lock))
}

/// Leave; `clear` runs when no other board is left (the count would otherwise go stale).
/// Files of boards that died without leaving (their lock no longer held) are removed.
pub(crate) fn leave(data_root: &Path, presence: Option<Presence>, clear: impl FnOnce()) {
    // Best effort without the lock: a stale count is worse than a rare double check.
    let guard = crate::alerts::memory_file::lock(data_root).ok();
    drop(presence);
    let others = others_running(&dir(data_root));
    if !others {
        clear();
    }
    drop(guard);
}

/// Whether another board's lock is held now.
fn others_running(d: &Path) -> bool {
    let Ok(listing) = crate::fsguard::list_dir(d, MAX_BOARDS) else {
        return false;
    };
    let mut any = false;
    for e in listing.entries {
        let p = d.join(&e.name);
        let ours = e.name.to_str().is_some_and(|n| n.ends_with(".lock"));
        if !ours || e.kind != crate::fsguard::Kind::File {
            continue;
        }
        if store::is_held(&p) {
            any = true;
        } else {
            let _ = store::remove_file(&p);
        }
    }
    any || listing.truncated
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_last_board_to_leave_clears() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        let root = dir.path();
        let me = join(root).unwrap();
        // Another board: a lock on another file, held (as another process would).
        let other = store::Lock::acquire(&super::dir(root).join("1.lock")).unwrap();
        // A board that died: its file, not held.
        std::fs::write(super::dir(root).join("2.lock"), b"2\n").unwrap();
        let mut cleared = false;
        leave(root, Some(me), || cleared = true);
        assert!(!cleared, "another board still keeps the count");
        assert!(
            !super::dir(root).join("2.lock").exists(),
            "a dead board's file is removed"
        );
        let mut cleared = false;
        drop(other);
        leave(root, None, || cleared = true);
        assert!(cleared, "the last one clears it");
    }
}
