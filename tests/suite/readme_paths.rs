//! The README names real places: every repository path it quotes (`src/…`, `tests/…`, `linux/…`,
//! `scripts/…`, `docs/…`, `benches/…`, `examples/…`) exists, so the architecture section cannot
//! drift from the tree unnoticed.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

#[test]
fn every_path_the_readme_quotes_exists() {
    let top = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(top.join("README.md")).unwrap();
    let roots = [
        "src/",
        "tests/",
        "linux/",
        "scripts/",
        "docs/",
        "benches/",
        "examples/",
    ];
    let mut missing = Vec::new();
    let mut checked = 0;
    for quoted in readme.split('`').skip(1).step_by(2) {
        let is_path = roots.iter().any(|r| quoted.starts_with(r))
            && !quoted.contains(['*', ' ', '<', '{'])
            && !quoted.contains("..");
        if !is_path {
            continue;
        }
        checked += 1;
        if !top.join(quoted.trim_end_matches('/')).exists() {
            missing.push(quoted.to_string());
        }
    }
    assert!(
        checked >= 20,
        "only {checked} paths found: the check itself broke"
    );
    assert!(
        missing.is_empty(),
        "README quotes paths that do not exist: {missing:?}"
    );
}
