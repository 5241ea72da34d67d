//! The store's error codes.

use crate::fsguard::FsError;

/// Why the store did not write: a fixed code, the first word of every message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreCode {
    /// The bounded gate refused the path (`not_owned`, `not_regular`, …).
    Fs(FsError),
    PathOutsideRoot,
    BadPath,
    MkdirFailed,
    CreateFailed,
    StatFailed,
    LinkFailed,
    RenameFailed,
    FsyncFailed,
    ChownFailed,
    ChmodFailed,
    WriteFailed,
    RemoveFailed,
    OpenFailed,
    RotateFailed,
    /// Another intercom-pane holds the lock.
    Locked,
    LockFailed,
    /// The record could not be encoded (nothing was written).
    EncodeFailed,
}

impl StoreCode {
    /// The code as messages and JSON say it.
    pub fn as_str(self) -> &'static str {
        match self {
            StoreCode::Fs(e) => e.code(),
            StoreCode::PathOutsideRoot => "path_outside_root",
            StoreCode::MkdirFailed => "mkdir_failed",
            StoreCode::StatFailed => "stat_failed",
            StoreCode::LinkFailed => "link_failed",
            StoreCode::RenameFailed => "rename_failed",
            StoreCode::FsyncFailed => "fsync_failed",
            StoreCode::BadPath => "bad_path",
            StoreCode::ChownFailed => "chown_failed",
            StoreCode::ChmodFailed => "chmod_failed",
            StoreCode::WriteFailed => "write_failed",
            StoreCode::RemoveFailed => "remove_failed",
            StoreCode::OpenFailed => "open_failed",
            StoreCode::RotateFailed => "rotate_failed",
            StoreCode::LockFailed => "lock_failed",
            StoreCode::CreateFailed => "create_failed",
            StoreCode::EncodeFailed => "encode_failed",
            StoreCode::Locked => "locked",
        }
    }
}

impl std::fmt::Display for StoreCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
