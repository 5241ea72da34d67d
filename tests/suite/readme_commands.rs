//! The test commands the README and CI give still name tests that exist: every
//! `cargo test --test NAME [MODULE]` a test binary (`tests/NAME/main.rs`) and its module filter a
//! module of it, so a command cannot silently run nothing after tests move.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

#[test]
fn every_test_command_names_a_binary_and_module_that_exist() {
    let top = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut missing = Vec::new();
    let mut checked = 0;
    for doc in ["README.md", ".ci/run"] {
        let text = std::fs::read_to_string(top.join(doc)).unwrap();
        for (flag, dir) in [("--test ", "tests"), ("--bench ", "benches")] {
            for after in text.split(flag).skip(1) {
                let mut words = after
                    .split(|c: char| c.is_whitespace() || c == '`')
                    .filter(|w| !w.is_empty());
                let Some(name) = words.next() else { continue };
                checked += 1;
                let target = if dir == "tests" {
                    top.join(dir).join(name).join("main.rs")
                } else {
                    top.join(dir).join(format!("{name}.rs"))
                };
                if !target.exists() {
                    missing.push(format!("{doc}: {flag}{name}"));
                    continue;
                }
                let is_name = |w: &&str| w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                if let Some(module) = words.next().filter(is_name) {
                    if !top
                        .join(dir)
                        .join(name)
                        .join(format!("{module}.rs"))
                        .exists()
                    {
                        missing.push(format!("{doc}: {flag}{name} {module}"));
                    }
                }
            }
        }
    }
    assert!(
        checked >= 6,
        "only {checked} commands found: the check itself broke"
    );
    assert!(
        missing.is_empty(),
        "commands name missing tests: {missing:?}"
    );
}
