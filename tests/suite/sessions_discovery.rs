//! Finding session files: by id across session folders (flat and per-cwd), and the newest file
//! in a control-board seat folder. Real folders, links and FIFOs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::sessions_common;

use intercom_pane::seam::evidence::sessions::{
    index_sessions, newest_session_in, read_session, session_dirs_from,
};
use intercom_pane::seam::fsguard::FsError;
use nix::sys::stat::{utimensat, Mode, UtimensatFlags};
use nix::sys::time::TimeSpec;
use sessions_common::Session;
use std::path::{Path, PathBuf};

fn set_mtime(p: &Path, secs: i64) {
    let t = TimeSpec::new(secs, 0);
    utimensat(None, p, &t, &t, UtimensatFlags::NoFollowSymlink).unwrap();
}

#[test]
fn default_dirs_follow_the_environment() {
    let env = |pairs: &'static [(&'static str, &'static str)]| {
        move |k: &str| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    };
    assert_eq!(
        session_dirs_from(env(&[("HOME", "/home/u")])),
        vec![PathBuf::from("/home/u/.pi/agent/sessions")]
    );
    assert_eq!(
        session_dirs_from(env(&[
            ("HOME", "/home/u"),
            ("PI_CODING_AGENT_DIR", "/opt/pi")
        ])),
        vec![PathBuf::from("/opt/pi/sessions")]
    );
    assert_eq!(
        session_dirs_from(env(&[
            ("HOME", "/home/u"),
            ("PI_CODING_AGENT_DIR", ""),
            ("PI_CODING_AGENT_SESSION_DIR", "/flat")
        ])),
        vec![
            PathBuf::from("/flat"),
            PathBuf::from("/home/u/.pi/agent/sessions")
        ]
    );
    assert!(session_dirs_from(env(&[])).is_empty());
}

#[test]
fn index_finds_flat_and_per_cwd_files_and_refuses_links_and_fifos() {
    let root = tempfile::tempdir().unwrap();
    let flat = tempfile::tempdir().unwrap();
    let cwd = root.path().join("--home-dev-proj--");
    std::fs::create_dir(&cwd).unwrap();
    let a = Session::new("0190dddd-0000-7000-8000-00000000000a");
    let b = Session::new("0190dddd-0000-7000-8000-00000000000b");
    let pa = a.write_in(&cwd);
    let pb = b.write_in(flat.path());
    // Two levels down is not where pi writes: not indexed.
    let deep = cwd.join("deeper");
    std::fs::create_dir(&deep).unwrap();
    Session::new("0190dddd-0000-7000-8000-00000000000c").write_in(&deep);
    // A link named like a session, and a FIFO: refused with codes, never followed or opened.
    std::os::unix::fs::symlink(
        &pa,
        cwd.join("z_0190dddd-0000-7000-8000-00000000000d.jsonl"),
    )
    .unwrap();
    nix::unistd::mkfifo(
        &cwd.join("x_0190dddd-0000-7000-8000-00000000000e.jsonl"),
        Mode::from_bits_truncate(0o600),
    )
    .unwrap();
    // A linked per-cwd folder is not entered.
    std::os::unix::fs::symlink(&deep, root.path().join("--linked--")).unwrap();
    // Names without the shape are ignored.
    std::fs::write(cwd.join("notes.txt"), "x").unwrap();
    std::fs::write(cwd.join("nounderscore.jsonl"), "x").unwrap();

    let missing = root.path().join("no-such-folder");
    let idx = index_sessions(&[
        root.path().to_path_buf(),
        flat.path().to_path_buf(),
        missing.clone(),
    ]);
    assert!(!idx.truncated);
    assert_eq!(idx.find(&a.id), Some(pa.as_path()));
    assert_eq!(idx.find(&b.id), Some(pb.as_path()));
    assert_eq!(idx.find("0190dddd-0000-7000-8000-00000000000c"), None);
    assert_eq!(idx.find("0190dddd-0000-7000-8000-00000000000d"), None);
    assert_eq!(idx.find("0190dddd-0000-7000-8000-00000000000e"), None);
    assert_eq!(idx.files.len(), 2);
    let mut codes: Vec<&str> = idx.errors.iter().map(|e| e.error.code()).collect();
    codes.sort();
    assert_eq!(codes, vec!["fifo_refused", "link_refused", "not_found"]);
    assert!(idx.errors.iter().any(|e| e.path == missing));
    // The caller confirms the header id.
    assert_eq!(
        read_session(idx.find(&a.id).unwrap()).unwrap().session_id,
        a.id
    );
}

#[test]
fn index_keeps_the_newest_file_per_id() {
    let root = tempfile::tempdir().unwrap();
    let s = Session::new("0190eeee-0000-7000-8000-000000000001");
    let d1 = root.path().join("--one--");
    let d2 = root.path().join("--two--");
    std::fs::create_dir(&d1).unwrap();
    std::fs::create_dir(&d2).unwrap();
    let old = s.write_in(&d1);
    let new = s.write_in(&d2);
    set_mtime(&old, 2_000_000_000);
    set_mtime(&new, 1_000_000_000);
    let idx = index_sessions(&[root.path().to_path_buf()]);
    assert_eq!(idx.find(&s.id), Some(old.as_path()));
}

#[test]
fn index_is_bounded_and_says_so() {
    let root = tempfile::tempdir().unwrap();
    for i in 0..4100 {
        std::fs::write(root.path().join(format!("t_{i:08}.jsonl")), "").unwrap();
    }
    let idx = index_sessions(&[root.path().to_path_buf()]);
    assert!(idx.truncated);
    assert_eq!(idx.files.len(), 4096);
}

#[test]
fn newest_session_in_a_seat_folder() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    assert_eq!(newest_session_in(d).unwrap(), None);
    std::fs::write(d.join("2026-09-11.jsonl"), "x").unwrap();
    std::fs::write(d.join("2026-09-12.jsonl"), "x").unwrap();
    std::fs::write(d.join("2026-09-13.txt"), "x").unwrap();
    std::fs::create_dir(d.join("2026-09-14.jsonl")).unwrap();
    std::os::unix::fs::symlink(d.join("2026-09-11.jsonl"), d.join("2026-09-15.jsonl")).unwrap();
    nix::unistd::mkfifo(&d.join("2026-09-16.jsonl"), Mode::from_bits_truncate(0o600)).unwrap();
    // Name decides even when an older-named file was touched later.
    set_mtime(&d.join("2026-09-11.jsonl"), 2_000_000_000);
    set_mtime(&d.join("2026-09-12.jsonl"), 1_000_000_000);
    assert_eq!(
        newest_session_in(d).unwrap(),
        Some(d.join("2026-09-12.jsonl"))
    );
    assert_eq!(
        newest_session_in(&d.join("missing")).unwrap_err(),
        FsError::NotFound
    );
    let link = dir.path().join("linked-folder");
    std::os::unix::fs::symlink(d, &link).unwrap();
    assert_eq!(newest_session_in(&link).unwrap_err(), FsError::Link);
}
