//! The temp-file sweep touches only files it can prove a dead writer of ours left (a regular file
//! of this user whose name carries its own inode and a writer that is gone): a person's file
//! named like an old temp, a name carrying another inode, and other programs' temps are kept.
//! Run through the real binary: `scan --json` writes `board/index.json` under the data root and
//! sweeps `board/` first.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::scan_support::*;

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

fn put(dir: &Path, name: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, b"a person's words\n").unwrap();
    p
}

#[test]
fn the_sweep_removes_only_what_a_dead_writer_of_ours_provably_left() {
    let env = Env::new();
    let cfg = env.system_config();
    let board = env.path("data").join("board");
    std::fs::create_dir_all(&board).unwrap();
    // The case: a person's file whose name fits the old pattern.
    let notes = put(&board, "notes.ip-999999-5-0123456789ab.tmp");
    // A name in today's pattern but carrying another file's inode.
    let other = put(&board, "draft");
    let wrong_ino = std::fs::metadata(&other).unwrap().ino() + 1;
    let wrong = board.join(format!(
        "index.json.ip-999999999-5-{wrong_ino}-0123456789ab.tmp"
    ));
    std::fs::rename(&other, &wrong).unwrap();
    // Another program's temp file.
    let foreign = put(&board, "index.json.5f0c9b2e-uuid.tmp");
    // What a writer of ours killed between naming and renaming leaves: its own inode in its
    // name, a writer (pid 999999999, start ticks 5) that is not running.
    let left = put(&board, "left");
    let ino = std::fs::metadata(&left).unwrap().ino();
    let ours = board.join(format!("index.json.ip-999999999-5-{ino}-0123456789ab.tmp"));
    std::fs::rename(&left, &ours).unwrap();

    let o = env.run(&[
        "scan", "--json", "--config", &cfg, "--fleet", "none", "--now", NOW,
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(board.join("index.json").is_file());
    assert!(!ours.exists(), "the dead writer's leftover is removed");
    for kept in [&notes, &wrong, &foreign] {
        assert_eq!(
            std::fs::read(kept).unwrap(),
            b"a person's words\n",
            "{} kept as it was",
            kept.display()
        );
    }
    // The write itself leaves no temp file of its own.
    let temps: Vec<String> = std::fs::read_dir(&board)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".ip-") && !n.starts_with("notes.") && !n.contains("-0123456789ab"))
        .collect();
    assert!(temps.is_empty(), "{temps:?}");
}
