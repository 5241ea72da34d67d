//! Boundary check: the sidebar never reads files, runs tmux, inspects processes or probes by
//! itself; all of that comes in through the traits in `ui::ports`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

#[test]
fn ui_imports_no_fs_mux_proc_or_probe() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/ui");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for banned in [
            "std::fs",
            "crate::mux",
            "crate::proc",
            "crate::probe",
            "crate::evidence",
            "std::process",
            "std::net",
        ] {
            assert!(
                !text.contains(banned),
                "{} uses {banned}: the UI must go through ui::ports",
                path.display()
            );
        }
        checked += 1;
    }
    assert!(checked >= 8, "only {checked} files checked");
}
