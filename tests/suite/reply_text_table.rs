//! The shared table of reply text cases against the Rust rules (`check_text`); the real-pi tier
//! holds the pi extension's copy of the rules to the same table (tests/real_pi/real_pi_channel.rs).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::text_cases::{cases, rust_verdict};

#[test]
fn check_text_gives_every_shared_case_its_verdict() {
    let all = cases();
    assert!(all.len() >= 20, "the table is there");
    for c in &all {
        assert_eq!(rust_verdict(&c.text), c.verdict, "{}", c.what);
    }
    // Every verdict is covered.
    for v in ["ok", "control", "blank", "too_long"] {
        assert!(all.iter().any(|c| c.verdict == v), "no {v} case");
    }
}
