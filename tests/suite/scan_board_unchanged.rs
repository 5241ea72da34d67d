//! Board files are rewritten only when their content changed: real files, the real binary.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::scan_support;

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use scan_support::*;

/// Every file under `board/sessions`: name → (inode, mtime in ns, bytes).
fn seat_files(dir: &Path) -> BTreeMap<String, (u64, i128, Vec<u8>)> {
    let mut out = BTreeMap::new();
    for project in std::fs::read_dir(dir).unwrap() {
        let project = project.unwrap().path();
        for f in std::fs::read_dir(&project).unwrap() {
            let f = f.unwrap().path();
            let m = std::fs::symlink_metadata(&f).unwrap();
            let mtime = m.mtime() as i128 * 1_000_000_000 + m.mtime_nsec() as i128;
            let name = f.strip_prefix(dir).unwrap().display().to_string();
            out.insert(name, (m.ino(), mtime, std::fs::read(&f).unwrap()));
        }
    }
    out
}

#[test]
fn unchanged_seats_keep_their_files_and_a_changed_seat_is_rewritten_alone() {
    let env = Env::new();
    pi_root(&env, &["idle", "waiting", "error", "tool"]);
    let later = "2026-11-29T23:25:00.000Z";
    let run = |now: &str| {
        let mut args = layout_args(&env, &["scan", "--json"], &["--now", now]);
        args.extend(["--liveness".to_string(), "assume-alive".to_string()]);
        stdout_json(&env.run(&args))
    };
    let first = run(NOW);
    let sessions = env.path("data/board/sessions");
    let before = seat_files(&sessions);
    assert_eq!(before.len(), 5, "{:?}", before.keys());
    std::thread::sleep(std::time::Duration::from_millis(20));

    // A later pass with nothing changed: no seat file is replaced; the index carries the pass's
    // own time, the seat files the time of the pass that last changed them.
    let second = run(later);
    assert_eq!(seat_files(&sessions), before, "no seat file rewritten");
    assert_eq!(second["scannedAt"], later);
    assert_eq!(record(&second, "W-idle")["scannedAt"], later);
    let on_disk: serde_json::Value = serde_json::from_slice(
        &std::fs::read(env.path("data/board/sessions/root/W-idle.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(on_disk["scannedAt"], first["scannedAt"]);
    assert_eq!(
        on_disk["ageSeconds"],
        record(&first, "W-idle")["ageSeconds"]
    );
    let index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(env.path("data/board/index.json")).unwrap()).unwrap();
    assert_eq!(index, second, "the index is rewritten every pass");

    // One seat's session changes: only its file is replaced.
    let dir = env.path("sessions/--work--");
    let idle = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            std::fs::read_to_string(p)
                .unwrap()
                .contains("SCENARIO:idle")
        })
        .unwrap();
    let mut text = std::fs::read(&idle).unwrap();
    text.extend_from_slice(b"not json\n");
    std::fs::write(&idle, text).unwrap();
    run(later);
    let after = seat_files(&sessions);
    for (name, (ino, mtime, bytes)) in &after {
        let (ino0, mtime0, bytes0) = &before[name];
        if name == "root/W-idle.json" {
            assert_ne!(bytes, bytes0, "the changed seat is rewritten");
        } else {
            assert_eq!(
                (ino, mtime, bytes),
                (ino0, mtime0, bytes0),
                "{name} untouched"
            );
        }
    }
}
