//! `scan --print` with a roster it cannot use says so on stderr and exits 2; without any roster
//! it is a board of the other seats (exit 0).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::scan_support;

use scan_support::*;

#[test]
fn an_unusable_roster_is_an_error_of_scan_print() {
    let env = Env::new();
    let cfg = env.system_config();
    let root = env.path("root/.pi-intercom");
    std::fs::create_dir_all(&root).unwrap();
    let print = |root: &str| {
        env.run(&[
            "scan", "--print", "--config", &cfg, "--root", root, "--fleet", "none",
        ])
    };
    for (bytes, code) in [
        (
            &b"{\"version\":1,\"agents\":[{\"x\":1}]}"[..],
            "config_invalid",
        ),
        (&b"not json"[..], "config_not_json"),
    ] {
        std::fs::write(root.join("config.json"), bytes).unwrap();
        let o = print("root");
        assert_eq!(o.status.code(), Some(2), "{o:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(code), "{err}");
        assert!(String::from_utf8_lossy(&o.stdout).contains("0 sessions"));
    }
    // A named root without a roster: an error too.
    std::fs::create_dir_all(env.path("empty")).unwrap();
    let o = print("empty");
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(!o.stderr.is_empty());
    // A valid roster, and no roster at all (nothing found upward): fine.
    write_roster(&env.path("root"), &[]);
    assert_eq!(print("root").status.code(), Some(0));
    let o = env.run(&["scan", "--print", "--config", &cfg, "--fleet", "none"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(o.stderr.is_empty(), "{o:?}");
}
