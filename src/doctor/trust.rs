//! The doctor's checks of who may change what the tool trusts: the roster's `.pi-intercom/`
//! folder and its state folders (`seats/`, `jobs/`), and the opt-in log. Readers and writers
//! refuse anything not owned by this user or writable by group or others (`fsguard::trusted`);
//! these checks say so before a command runs into it.

use std::path::Path;

use super::Check;
use crate::fsguard::{self, FsError};
use crate::scan::Scan;

const FIX_MODE: &str = "chmod go-w the folder (and make sure it is yours: chown it to your user)";

/// `.pi-intercom/` of the roster's root may not be writable by group or others (anyone who can
/// write it can replace the roster, the state folders or the records in them); `seats/` and
/// `jobs/` must be ours and not writable by others, or every reader and writer refuses them.
pub(super) fn state_folders(pass: &Scan) -> Vec<Check> {
    let Some(cfg) = &pass.config else {
        return Vec::new();
    };
    let state = crate::paths::state_dir(&cfg.root);
    let mut out = vec![match fsguard::trusted_dir(&state) {
        Ok(()) => Check::ok(
            ".pi-intercom",
            format!("{} is yours and not writable by others", state.display()),
        ),
        Err(e) => Check::fail(
            ".pi-intercom",
            format!(
                "{} {}",
                state.display(),
                fsguard::trust_reason(e, fsguard::owner_of(&state))
            ),
            FIX_MODE,
        ),
    }];
    for dir in [
        crate::paths::seats_dir(&cfg.root),
        crate::paths::jobs_dir(&cfg.root),
    ] {
        match fsguard::trusted_dir(&dir) {
            Ok(()) | Err(FsError::NotFound) => {}
            Err(e) => out.push(Check::fail(
                "state folder",
                format!(
                    "{} {}: registrations and close jobs there are refused",
                    dir.display(),
                    fsguard::trust_reason(e, fsguard::owner_of(&dir))
                ),
                FIX_MODE,
            )),
        }
    }
    out
}

/// `INTERCOM_PANE_LOG`, when set and present, is a file of ours that others cannot write:
/// otherwise nothing is appended to it.
pub(super) fn log() -> Option<Check> {
    let path = std::env::var_os("INTERCOM_PANE_LOG").filter(|v| !v.is_empty())?;
    let path = Path::new(&path);
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(_) => {
            return Some(Check::ok(
                "log",
                format!("{} will be created (mode 0600)", path.display()),
            ))
        }
    };
    use std::os::unix::fs::MetadataExt;
    Some(match fsguard::trusted(meta.uid(), meta.mode()) {
        Ok(()) if meta.file_type().is_file() => {
            Check::ok("log", format!("{} is yours", path.display()))
        }
        Ok(()) => Check::fail(
            "log",
            format!(
                "{} is not a regular file: nothing is logged",
                path.display()
            ),
            "point INTERCOM_PANE_LOG at a file path",
        ),
        Err(e) => Check::fail(
            "log",
            format!(
                "{} {}: nothing is logged to it",
                path.display(),
                fsguard::trust_reason(e, Some(meta.uid()))
            ),
            "point INTERCOM_PANE_LOG at a file of yours that only you can write",
        ),
    })
}
