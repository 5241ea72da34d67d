//! Every fuzz seed and every reproducer, replayed through the same target bodies libFuzzer runs
//! (`fuzz/src/lib.rs`, included here as a module), without libFuzzer: an input that once
//! crashed a parser or the splice stays covered by an ordinary `cargo test`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

#[path = "../../fuzz/src/lib.rs"]
mod targets;

fn files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out: Vec<_> = match std::fs::read_dir(dir) {
        Ok(rd) => rd
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .collect(),
        Err(_) => Vec::new(),
    };
    out.sort();
    out
}

#[test]
fn every_seed_and_regression_passes_its_target() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    // Every target binary has a body here, and every folder of inputs names a target.
    let mut bins: Vec<String> = files(&fuzz.join("fuzz_targets"))
        .iter()
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    bins.sort();
    let mut names: Vec<String> = targets::TARGETS
        .iter()
        .map(|(n, _)| n.to_string())
        .collect();
    names.sort();
    assert_eq!(bins, names);
    for kind in ["seeds", "regressions"] {
        for d in std::fs::read_dir(fuzz.join(kind)).unwrap().flatten() {
            if d.path().is_dir() {
                let n = d.file_name().to_string_lossy().into_owned();
                assert!(names.contains(&n), "{kind}/{n} names no target");
            }
        }
    }
    let mut replayed = 0;
    for (name, body) in targets::TARGETS {
        let seeds = files(&fuzz.join("seeds").join(name));
        assert!(!seeds.is_empty(), "target {name} has no seeds");
        for p in seeds
            .iter()
            .chain(files(&fuzz.join("regressions").join(name)).iter())
        {
            let bytes = std::fs::read(p).unwrap();
            if let Err(e) = std::panic::catch_unwind(|| body(&bytes)) {
                panic!("{name}: {} fails again: {e:?}", p.display());
            }
            replayed += 1;
        }
    }
    eprintln!("replayed {replayed} fuzz inputs");
    let _ = std::fs::remove_dir_all(targets::scratch());
}
